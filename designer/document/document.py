"""The open design as a Qt object: the model, its undo stack, and a signal for every change.

Every model change is a model `Edit` (see `designer.model.edits`) given to `Document.apply`: it is
applied to the design at once (so a change the model refuses is reported, with nothing changed,
before anything is pushed) and pushed as ONE undo command; undo applies the edit's inverse. After
each apply, undo or redo the document emits `changed(Change)` naming exactly the items and links
affected, so the canvas updates only those and the evaluation scheduler re-evaluates.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from designer.model import bulk, edits, elevation, layout, placement
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design, Item, Link
from designer.model.edits import Change, Edit
from designer.model.errors import DesignerError

# QUndoCommand ids: commands with the same id may merge into the one before them.
NO_MERGE = -1
NUDGE = 1

_QUOTED = re.compile(r"'([^'\s]+)'")  # an id quoted in a model message


class EditCommand(QUndoCommand):
    """One model edit on the undo stack. Commands made with the same `merge_id` merge into the
    one before them where the edits compose (`edits.merged`): a run of arrow-key nudges is one
    undo step."""

    def __init__(self, document: Document, edit: Edit, merge_id: int = NO_MERGE):
        super().__init__(edit.text)
        self.document, self.edit = document, edit
        self.merge_id = merge_id
        self._skip_first_redo = True

    def id(self) -> int:
        return self.merge_id

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, EditCommand) or other.merge_id != self.merge_id:
            return False
        combined = edits.merged(self.edit, other.edit)
        if combined is None:
            return False
        self.edit = combined
        return True

    def redo(self) -> None:
        if self._skip_first_redo:  # already applied by Document.apply
            self._skip_first_redo = False
            return
        self.document._run(self.edit)

    def undo(self) -> None:
        self.document._run(self.edit.inverse())


class Document(QObject):
    """The open design. Views read `design`; they change it only through the methods below."""

    changed = Signal(object)  # Change
    pathChanged = Signal(str)
    error = Signal(str)  # a refused edit, for the status bar

    def __init__(self, design: Design | None = None, catalog: Catalog | None = None, path: str | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.catalog = catalog or default_catalog()
        self.design = design or Design()
        self.path: str | None = str(path) if path else None
        self.undo_stack = QUndoStack(self)

    # --- whole-document -------------------------------------------------------------------
    def reset(self, design: Design, path: str | os.PathLike | None = None) -> None:
        self.design = design
        self.path = str(path) if path else None
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.pathChanged.emit(self.path or "")
        self.changed.emit(Change(reset=True))

    def set_path(self, path: str | os.PathLike | None) -> None:
        self.path = str(path) if path else None
        self.pathChanged.emit(self.path or "")

    @property
    def display_name(self) -> str:
        if self.path:
            name = Path(self.path).name
            return name[: -len(".cluster.json")] if name.endswith(".cluster.json") else name
        return self.design.name or "Untitled"

    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    # --- the one way to change the model ----------------------------------------------------
    def apply(self, edit: Edit, merge_id: int = NO_MERGE) -> bool:
        """Apply and push as one undo step (merged into the step before where `merge_id` says so).
        Returns False (and emits `error`) if refused, False for an edit that changes nothing."""
        if not edit.ops:
            return False
        try:
            change = edit.apply(self.design)
        except DesignerError as exc:
            self._refused(exc)
            return False
        self.undo_stack.push(EditCommand(self, edit, merge_id))
        self.changed.emit(change)
        return True

    def _refused(self, exc: DesignerError) -> None:
        """Tell why, naming items and links as the user sees them: the model's messages quote
        ids ('node-1'), the canvas shows labels."""
        design = self.design

        def label(match: re.Match) -> str:
            element_id = match.group(1)
            if element_id in design.items:
                return f"“{design.items[element_id].label}”"
            link = design.links.get(element_id)
            if link is not None and link.a in design.items and link.b in design.items:
                return f"“{design.items[link.a].label} — {design.items[link.b].label}”"
            return match.group(0)

        self.error.emit(_QUOTED.sub(label, str(exc)))

    def _run(self, edit: Edit) -> None:
        self.changed.emit(edit.apply(self.design))

    def _build(self, make: Callable[..., Edit], *args, **kwargs) -> Edit | None:
        """The edit `make` builds from the design, or None (and `error`) if the model refuses it."""
        try:
            return make(self.design, *args, **kwargs)
        except DesignerError as exc:
            self._refused(exc)
            return None

    def _build_and_apply(self, make: Callable[..., Edit], *args, **kwargs) -> bool:
        edit = self._build(make, *args, **kwargs)
        return edit is not None and self.apply(edit)

    # --- edits ------------------------------------------------------------------------------
    def add_items(self, items: Iterable[Item], links: Iterable[Link] = (), text: str = "Add") -> bool:
        return self._build_and_apply(edits.add, items, links, text)

    def remove(self, item_ids: Iterable[str], link_ids: Iterable[str] = (), text: str = "Delete") -> bool:
        """Remove items (with everything inside them and every link touching them) and links."""
        return self._build_and_apply(edits.remove, item_ids, link_ids, text)

    def place_items(self, items: Iterable[Item], links: Iterable[Link] = (), text: str = "Add") -> bool:
        """Add items and links as a drop from the palette does, as one step: the new top items go
        to the nearest place where they crowd no sibling, and the containers they make grow push
        their neighbours aside (`_clear_with_room`)."""
        items = list(items)
        new = {i.id for i in items}
        roots = [i.id for i in items if i.parent not in new]
        edit = self._build(edits.add, items, links, text)
        return edit is not None and self._apply_clear(edit, roots, roots)

    def move_items(self, positions: dict[str, tuple[float, float]], parents: dict[str, str | None] | None = None,
                   text: str | None = None) -> bool:
        """New positions and, for the items in `parents`, new containers, as one step. Items moved
        into another container land clear of what it holds; a container a move makes grow pushes
        its neighbours aside, in the same step."""
        edit = self._build(edits.move, positions, parents, text)
        if edit is None:
            return False
        design = self.design
        into = [i for i, p in (parents or {}).items() if i in design.items and p != design.items[i].parent]
        return self._apply_clear(edit, into, list(positions))

    def tidy_layout(self, item_ids: Iterable[str] = ()) -> bool:
        """Place the given items among their siblings (their insides as they are), or arrange the
        whole design if none are given (`model.layout.tidy`), as one step; False if all is tidy.
        A container that grows pushes its neighbours aside, in the same step."""
        item_ids = list(item_ids)
        positions = layout.tidy(self.design, item_ids)
        edit = self._build(edits.move, positions, None, "Tidy layout") if positions else None
        return edit is not None and self._apply_clear(edit, [], list(positions) if item_ids else [])

    def _apply_clear(self, edit: Edit, placed: list[str], changed: list[str]) -> bool:
        """Apply an edit with the items it places made clear and room made around them."""
        items = self.design.items
        if not placed and all(i in items and items[i].parent is None for i in changed):
            return self.apply(edit)  # only top-level items moved: no container grows (a drag of everything)
        edit = self._build(_clear_with_room, edit, placed, changed)
        return edit is not None and self.apply(edit)

    def nudge(self, item_ids: Iterable[str], dx: float, dy: float) -> bool:
        """Move the items by dx, dy; nudges in a row are one undo step."""
        edit = self._build(edits.nudge, item_ids, dx, dy)
        return edit is not None and self.apply(edit, NUDGE)

    def set_item(self, item_id: str, text: str = "Edit", **changes) -> bool:
        """Change an item's fields (a recount of a matched group recounts its partners too)."""
        return self._build_and_apply(edits.set_item, item_id, text, **changes)

    def set_link(self, link_id: str, text: str = "Edit link", **changes) -> bool:
        return self._build_and_apply(edits.set_link, link_id, text, **changes)

    def set_items(self, item_ids: Iterable[str], text: str, **changes) -> bool:
        """The same field values given to every item, as one undo step (`model.bulk`)."""
        return self._build_and_apply(bulk.set_items, item_ids, text, **changes)

    def set_links(self, link_ids: Iterable[str], text: str, **changes) -> bool:
        """The same field values given to every link, as one undo step."""
        return self._build_and_apply(bulk.set_links, link_ids, text, **changes)

    def set_setting(self, key: str, value, text: str) -> bool:
        """Change one of the design's saved settings (e.g. the workload) as one undo step."""
        return self._build_and_apply(edits.set_setting, key, value, text)

    def set_design_text(self, text: str = "Edit design properties", **values: str) -> bool:
        """Change the design's name, description and notes as one undo step."""
        return self._build_and_apply(edits.set_design_text, text, **values)

    def reorder_rack(self, rack_id: str, order: list[str]) -> bool:
        """Stack a rack's contents in this order (ids, bottom first) as one undo step."""
        return self._build_and_apply(elevation.reorder, self.catalog, rack_id, order)

    @property
    def title(self) -> str:
        """The design's own name where it has one, else what `display_name` says."""
        name = self.design.name.strip()
        return name if name and name != "Untitled" else self.display_name

    def add_link(self, a: str, b: str, medium: str, lanes: int = 1) -> str | None:
        edit = self._build(edits.add_link, a, b, medium, lanes)
        if edit is None or not self.apply(edit):
            return None
        return edit.ops[0].link.id

    def validate_item(self, item_id: str, **changes) -> str | None:
        """The model's reason for refusing a change, or None if it would be accepted. The design
        is left as it was."""
        try:
            edits.set_item(self.design, item_id, **changes)
        except (DesignerError, TypeError, ValueError) as exc:
            return str(exc)
        return None

    def validate_link(self, link_id: str, **changes) -> str | None:
        try:
            edits.set_link(self.design, link_id, **changes)
        except DesignerError as exc:
            return str(exc)
        old = self.design.links[link_id]
        return placement.medium_problem(self.design, self.catalog, old.a, old.b, changes.get("medium", old.medium))

    def group(self, item_ids: list[str], count: int = 1, name: str = "") -> str | None:
        """Wrap items that share a parent in a new group; returns its id."""
        try:
            edit, group_id = edits.group(self.design, item_ids, count, name)
        except DesignerError as exc:
            self._refused(exc)
            return None
        return group_id if self.apply(edit) else None

    def ungroup(self, group_ids: list[str], sizes: dict[str, tuple[float, float]] | None = None) -> list[str]:
        """Dissolve groups into as many drawn copies as they stand for (see `edits.ungroup`);
        returns the ids now standing where the groups were (empty if refused, with `error`). A
        container the copies make grow pushes its neighbours aside, in the same step."""
        try:
            edit, placed = edits.ungroup(self.design, group_ids, sizes)
        except DesignerError as exc:
            self._refused(exc)
            return []
        return placed if self._apply_clear(edit, [], placed) else []

    # --- clipboard ------------------------------------------------------------------------------
    def fragment(self, item_ids: Iterable[str]) -> dict:
        """The selected items with everything inside them and the links among them, as plain data."""
        return edits.fragment(self.design, item_ids)

    def paste(self, fragment: dict, offset: tuple[float, float] = (20.0, 20.0), text: str = "Paste") -> list[str]:
        """Add a copy of a fragment with fresh ids (see `edits.paste`). Returns the new root ids."""
        try:
            edit, roots = edits.paste(self.design, fragment, offset, text)
        except DesignerError as exc:
            self._refused(exc)
            return []
        return roots if self._apply_clear(edit, roots, roots) else []


def _clear_with_room(design: Design, edit: Edit, placed: list[str], changed: list[str]) -> Edit:
    """The edit with the `placed` items it adds or moves into a container moved on to the nearest
    place where they crowd no sibling (`layout.clear_spots`), followed, in the same step, by the
    moves of the neighbours the containers it makes grow would cover (`layout.make_room`), so one
    Undo takes back both."""
    after = design.snapshot()
    edit.apply(after)
    spots = layout.clear_spots(after, placed) if placed else {}
    if spots:
        edit = Edit(tuple(_moved_to(op, spots) for op in edit.ops), edit.text)
        after = design.snapshot()
        edit.apply(after)
    room = layout.make_room(design, after, changed)
    if not room:
        return edit
    return Edit(edit.ops + edits.move(after, room).ops, edit.text)


def _moved_to(op, spots: dict[str, tuple[float, float]]):
    """The operation adding or updating an item, with the item at its spot if it has one."""
    if isinstance(op, edits.AddItem) and op.item.id in spots:
        x, y = spots[op.item.id]
        return replace(op, item=replace(op.item, x=float(x), y=float(y)))
    if isinstance(op, edits.UpdateItem) and op.new.id in spots:
        x, y = spots[op.new.id]
        return replace(op, new=replace(op.new, x=float(x), y=float(y)))
    return op
