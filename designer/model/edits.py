"""Edits of a design as plain values, each one undoable.

An operation (`AddItem`, `UpdateItem`, `RemoveItem`, `AddLink`, `UpdateLink`, `RemoveLink`,
`SetSetting`; `RemoveItems` and `AddItems` for thousands of items at once) changes the design
through the model's own methods, so the model's rules decide, and knows its `inverse()`. An
`Edit` is an ordered list of operations applied all or nothing: if the model refuses one, those
already applied are undone and the design is exactly as before. Its `inverse()` undoes it;
`change()` names the items, links and settings it touches.

The functions below build the edits a user makes (move, delete, group, paste, recount...) from the
current design. They build on a scratch copy, so each operation is made from the state the ones
before it leave and a refused edit is refused (with the model's `DesignError`) before anything
changes.
"""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from designer.model import placement
from designer.model.catalog import Catalog, Part
from designer.model.design import MAX_NAME_CHARS, MAX_TEXT_CHARS, Design, Item, Link
from designer.model.errors import DesignError

_LINK_FIELDS = tuple(f.name for f in fields(Link) if f.name != "id")
# What a design's name (one line) and its description or notes (tabs, line breaks) may not hold.
_NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_TEXT_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass
class Change:
    """What one edit (or its undo) touched, by id; `reset`: the whole design was replaced."""

    items_added: list[str] = field(default_factory=list)
    items_removed: list[str] = field(default_factory=list)
    items_changed: list[str] = field(default_factory=list)
    links_added: list[str] = field(default_factory=list)
    links_removed: list[str] = field(default_factory=list)
    links_changed: list[str] = field(default_factory=list)
    settings_changed: list[str] = field(default_factory=list)
    reset: bool = False


def _stale(what: str) -> DesignError:
    return DesignError(f"{what} changed since this edit was made")


def _holds(values: dict, value: Item | Link) -> bool:
    """Whether the design holds this very value under its id (the same object, mostly: an edit
    records what it takes out of the design, so a big edit's checks rarely compare field by field)."""
    held = values.get(value.id)
    return held is value or held == value


def _same_values(expected: Iterable[Item | Link], found: Iterable[Item | Link]) -> bool:
    """The same items (or links) in any order. Ids are unique in a design, so comparing by id
    matches comparing sets of values, without hashing every field of every value."""
    expected, found = list(expected), list(found)
    if len(found) == len(expected) and all(map(operator.is_, expected, found)):
        return True  # as recorded, in the same order: the common case, checked without a look at any field
    by_id = {value.id: value for value in expected}
    return len(found) == len(by_id) and all(_holds(by_id, value) for value in found)


# --- operations ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AddItem:
    """Add an item, then the `contents` inside it (each after its parent) and `links` to them."""

    item: Item
    contents: tuple[Item, ...] = ()
    links: tuple[Link, ...] = ()

    def apply(self, design: Design) -> None:
        added_items: list[Item] = []
        added_links: list[Link] = []
        try:
            for item in (self.item, *self.contents):
                added_items.append(design.add_item(item))
            for link in self.links:
                added_links.append(design.add_link(link))
        except Exception:
            for link in reversed(added_links):
                design.remove_link(link.id)
            for item in reversed(added_items):  # children first: each removal takes that item alone
                design.remove_item(item.id)
            raise

    def inverse(self) -> RemoveItem:
        return RemoveItem(self.item, self.contents, self.links)

    def note(self, change: Change) -> None:
        change.items_added += [self.item.id, *(i.id for i in self.contents)]
        change.links_added += [l.id for l in self.links]


@dataclass(frozen=True)
class RemoveItem:
    """Remove an item through `Design.remove_item`, which takes along everything inside it and
    every link touching them: `contents` (parent first) and `links` are what it takes, recorded
    when the edit was built so the inverse can put them back."""

    item: Item
    contents: tuple[Item, ...] = ()
    links: tuple[Link, ...] = ()

    def apply(self, design: Design) -> None:
        if not _holds(design.items, self.item):
            raise _stale(f"item '{self.item.id}'")
        items, links = design.remove_item(self.item.id)
        if not self.took(items, links):
            AddItem(items[0], tuple(items[1:]), tuple(links)).apply(design)
            raise _stale(f"the contents of item '{self.item.id}'")

    def took(self, items: list[Item], links: list[Link]) -> bool:
        """Whether the model removed exactly what this removal recorded (in any order)."""
        return _same_values([self.item, *self.contents], items) and _same_values(self.links, links)

    def inverse(self) -> AddItem:
        return AddItem(self.item, self.contents, self.links)

    def note(self, change: Change) -> None:
        change.links_removed += [l.id for l in self.links]
        change.items_removed += [*(i.id for i in reversed(self.contents)), self.item.id]


@dataclass(frozen=True)
class RemoveItems:
    """Several `RemoveItem`s (none inside another) applied in one pass over the design
    (`Design.remove_items`): a Delete of thousands of top-level items."""

    removals: tuple[RemoveItem, ...]

    def apply(self, design: Design) -> None:
        for removal in self.removals:
            if not _holds(design.items, removal.item):
                raise _stale(f"item '{removal.item.id}'")
        removed = design.remove_items([removal.item.id for removal in self.removals])
        for removal, (items, links) in zip(self.removals, removed):
            if not removal.took(items, links):
                AddItems(tuple(AddItem(items[0], tuple(items[1:]), tuple(links))
                               for items, links in removed)).apply(design)
                raise _stale(f"the contents of item '{removal.item.id}'")

    def inverse(self) -> AddItems:
        return AddItems(tuple(removal.inverse() for removal in reversed(self.removals)))

    def note(self, change: Change) -> None:
        for removal in self.removals:
            removal.note(change)


@dataclass(frozen=True)
class AddItems:
    """Several `AddItem`s, all or none (the undo of a `RemoveItems`)."""

    additions: tuple[AddItem, ...]

    def apply(self, design: Design) -> None:
        done: list[AddItem] = []
        try:
            for addition in self.additions:
                addition.apply(design)
                done.append(addition)
        except Exception:
            if done:
                design.remove_items([addition.item.id for addition in done])
            raise

    def inverse(self) -> RemoveItems:
        return RemoveItems(tuple(addition.inverse() for addition in reversed(self.additions)))

    def note(self, change: Change) -> None:
        for addition in self.additions:
            addition.note(change)


@dataclass(frozen=True)
class UpdateItem:
    old: Item
    new: Item

    def apply(self, design: Design) -> None:
        if self.old.id != self.new.id:
            raise DesignError(f"item '{self.old.id}' cannot change its id")
        if not _holds(design.items, self.old):
            raise _stale(f"item '{self.old.id}'")
        design.replace_item(self.new)

    def inverse(self) -> UpdateItem:
        return UpdateItem(self.new, self.old)

    def note(self, change: Change) -> None:
        change.items_changed.append(self.new.id)


@dataclass(frozen=True)
class AddLink:
    link: Link

    def apply(self, design: Design) -> None:
        design.add_link(self.link)

    def inverse(self) -> RemoveLink:
        return RemoveLink(self.link)

    def note(self, change: Change) -> None:
        change.links_added.append(self.link.id)


@dataclass(frozen=True)
class RemoveLink:
    link: Link

    def apply(self, design: Design) -> None:
        if design.links.get(self.link.id) != self.link:
            raise _stale(f"link '{self.link.id}'")
        design.remove_link(self.link.id)

    def inverse(self) -> AddLink:
        return AddLink(self.link)

    def note(self, change: Change) -> None:
        change.links_removed.append(self.link.id)


@dataclass(frozen=True)
class UpdateLink:
    old: Link
    new: Link

    def apply(self, design: Design) -> None:
        if self.old.id != self.new.id:
            raise DesignError(f"link '{self.old.id}' cannot change its id")
        if design.links.get(self.old.id) != self.old:
            raise _stale(f"link '{self.old.id}'")
        design.update_link(self.new.id, **{name: getattr(self.new, name) for name in _LINK_FIELDS})

    def inverse(self) -> UpdateLink:
        return UpdateLink(self.new, self.old)

    def note(self, change: Change) -> None:
        change.links_changed.append(self.new.id)


@dataclass(frozen=True)
class SetSetting:
    """Set one of the design's saved settings; None stands for "not set"."""

    key: str
    old: Any
    new: Any

    def apply(self, design: Design) -> None:
        if design.settings.get(self.key) != self.old:
            raise _stale(f"setting '{self.key}'")
        if self.new is None:
            design.settings.pop(self.key, None)
        else:
            design.settings[self.key] = copy.deepcopy(self.new)

    def inverse(self) -> SetSetting:
        return SetSetting(self.key, self.new, self.old)

    def note(self, change: Change) -> None:
        change.settings_changed.append(self.key)


@dataclass(frozen=True)
class SetDesignText:
    """Set the design's `name`, `description` or `notes` (`field`)."""

    field: str
    old: str
    new: str

    def apply(self, design: Design) -> None:
        if getattr(design, self.field) != self.old:
            raise _stale(f"the design's {self.field}")
        setattr(design, self.field, self.new)

    def inverse(self) -> SetDesignText:
        return SetDesignText(self.field, self.new, self.old)

    def note(self, change: Change) -> None:
        change.settings_changed.append(self.field)


Op = (AddItem | RemoveItem | AddItems | RemoveItems | UpdateItem | AddLink | RemoveLink | UpdateLink | SetSetting
      | SetDesignText)


@dataclass(frozen=True)
class Edit:
    """Operations applied in order, all or nothing, as one undo step named `text`."""

    ops: tuple[Op, ...] = ()
    text: str = ""

    def apply(self, design: Design) -> Change:
        """Apply every operation, or none: if one fails (the model refuses it), those already
        applied are undone and the error propagates."""
        done: list[Op] = []
        try:
            for op in self.ops:
                op.apply(design)
                done.append(op)
        except Exception:
            for op in reversed(done):
                op.inverse().apply(design)
            raise
        return self.change()

    def inverse(self) -> Edit:
        return Edit(tuple(op.inverse() for op in reversed(self.ops)), self.text)

    def change(self) -> Change:
        change = Change()
        for op in self.ops:
            op.note(change)
        return change


class _Draft:
    """An edit being built, applied as it grows to a scratch copy of the design (items and links
    are immutable values, so copying the dicts is enough)."""

    def __init__(self, design: Design):
        self.original = design
        self.design = Design(design.name, design.description, dict(design.items), dict(design.links),
                             dict(design.settings), design.notes)
        self.ops: list[Op] = []

    def add(self, op: Op) -> None:
        op.apply(self.design)
        self.ops.append(op)

    def remove_item(self, item_id: str) -> None:
        """Removal as the model cascades it."""
        self.remove_items([item_id])

    def remove_items(self, item_ids: list[str]) -> None:
        """Removal of several items (none inside another) as the model cascades it, in one pass."""
        removal = self.removal(item_ids)
        if removal is not None:
            self.ops.append(removal)

    def removal(self, item_ids: list[str]) -> RemoveItem | RemoveItems | None:
        """The operation removing these items (none inside another) as the model cascades it, made
        by removing them from the scratch copy in one pass; the caller adds it to the edit."""
        removals = tuple(RemoveItem(items[0], tuple(items[1:]), tuple(links))
                         for items, links in self.design.remove_items(item_ids))
        if len(removals) > 1:
            return RemoveItems(removals)
        return removals[0] if removals else None

    def edit(self, text: str) -> Edit:
        self._drop_failure_marks_of_removed()
        return Edit(tuple(self.ops), text)

    def _drop_failure_marks_of_removed(self) -> None:
        """A failure mark (`settings["failures"]`) on an item or link the edit removes goes with
        it, in the same undo step: a mark naming nothing would make the saved file unreadable. A
        mark on a link medium names a catalogue part, not a drawn one, and stays."""
        marks = self.design.settings.get("failures")
        if not marks:
            return
        before, after = self.original, self.design
        kept = [mark for mark in marks if mark["target"] in after.items or mark["target"] in after.links
                or not (mark["target"] in before.items or mark["target"] in before.links)]
        if len(kept) < len(marks):
            self.add(SetSetting("failures", copy.deepcopy(marks), kept or None))


# --- the edits a user makes ------------------------------------------------------------------------
def add(design: Design, items: Iterable[Item], links: Iterable[Link] = (), text: str = "Add") -> Edit:
    draft = _Draft(design)
    for item in items:
        draft.add(AddItem(item))
    for link in links:
        draft.add(AddLink(link))
    return draft.edit(text)


def add_link(design: Design, a: str, b: str, medium: str, lanes: int = 1, text: str = "Add link") -> Edit:
    """A new link, with the id `a--b` (numbered if that is taken)."""
    link_id = f"{a}--{b}"
    if link_id in design.links or link_id in design.items:
        link_id = design.new_id(link_id)
    draft = _Draft(design)
    draft.add(AddLink(Link(link_id, a, b, medium, lanes)))
    return draft.edit(text)


def remove(design: Design, item_ids: Iterable[str], link_ids: Iterable[str] = (), text: str = "Delete") -> Edit:
    """Remove links, and items with everything inside them and every link touching them, in one
    edit whatever the order of the ids: only the outermost chosen items are removed (each takes its
    contents along). Unknown ids are passed over."""
    draft = _Draft(design)
    removal = draft.removal(outermost(design, item_ids))  # one pass; the links go first in the edit
    for link_id in dict.fromkeys(link_ids):
        link = draft.design.links.get(link_id)
        if link is not None:  # else it went with an end
            draft.add(RemoveLink(link))
    if removal is not None:
        draft.ops.append(removal)
    return draft.edit(text)


def outermost(design: Design, item_ids: Iterable[str]) -> list[str]:
    """The chosen items that are not inside another chosen item, in the order given (unknown ids
    left out); one walk up from each, so choosing every item of a big design stays linear."""
    chosen = dict.fromkeys(i for i in item_ids if i in design.items)
    items = design.items
    roots = []
    for item_id in chosen:
        parent = items[item_id].parent
        while parent is not None and parent not in chosen:
            parent = items[parent].parent
        if parent is None:
            roots.append(item_id)
    return roots


def move(design: Design, positions: dict[str, tuple[float, float]],
         parents: dict[str, str | None] | None = None, text: str | None = None) -> Edit:
    """New positions for items (in their parent's coordinates) and, for those in `parents`, a new
    parent. Named "Move item", "Move N items" or "Move into <container>" unless `text` is given."""
    parents = parents or {}
    draft = _Draft(design)
    into: list[str | None] = []
    for item_id, (x, y) in positions.items():
        old = draft.design.item(item_id)
        new = replace(old, parent=parents.get(item_id, old.parent), x=float(x), y=float(y))
        if new != old:
            draft.add(UpdateItem(old, new))
            if new.parent != old.parent:
                into.append(new.parent)
    if text is None:
        if into:
            text = f"Move into {design.items[into[0]].label if into[0] is not None else 'the top level'}"
        else:
            text = f"Move {len(draft.ops)} items" if len(draft.ops) > 1 else "Move item"
    return draft.edit(text)


def nudge(design: Design, item_ids: Iterable[str], dx: float, dy: float, text: str = "Nudge") -> Edit:
    """Move the chosen items (those inside another chosen one ride along) by dx, dy."""
    positions = {i: (design.items[i].x + dx, design.items[i].y + dy) for i in outermost(design, item_ids)}
    return move(design, positions, text=text)


def merged(first: Edit, second: Edit) -> Edit | None:
    """Two consecutive edits as one, where both only update the same items (nudges in a row):
    each item goes from its state before the first to its state after the second. None when
    they are not of that shape."""
    firsts = [op for op in first.ops if isinstance(op, UpdateItem)]
    seconds = [op for op in second.ops if isinstance(op, UpdateItem)]
    if len(firsts) != len(first.ops) or len(seconds) != len(second.ops):
        return None
    before = {op.old.id: op.old for op in firsts}
    after = {op.new.id: op.new for op in firsts}
    if set(before) != {op.old.id for op in seconds}:
        return None
    for op in seconds:
        if after[op.old.id] != op.old:
            return None
        after[op.new.id] = op.new
    return Edit(tuple(UpdateItem(before[i], after[i]) for i in before), first.text)


def set_item(design: Design, item_id: str, text: str = "Edit", **changes: Any) -> Edit:
    """Change an item's fields. A new count for a group whose copies links match one to one with
    other groups' is given to those groups too, in the same edit (one spine per pod fewer is one
    core group fewer), so the match keeps holding."""
    draft = _Draft(design)
    old = draft.design.item(item_id)
    new = replace(old, **changes)
    if new == old:
        return draft.edit(text)
    draft.add(UpdateItem(old, new))
    if new.count != old.count:
        for other_id in design.matched_groups(item_id):
            other = draft.design.items[other_id]
            if other.count != new.count:
                draft.add(UpdateItem(other, replace(other, count=new.count)))
        partners = len(draft.ops) - 1
        if partners:
            text = f"{text} (and {partners} matched group{'s' if partners > 1 else ''})"
    return draft.edit(text)


def change_platform(design: Design, catalog: Catalog, server_id: str, platform_id: str) -> Edit:
    """A server becomes another platform, consistently: its accelerators that do not fit the new
    platform become its default accelerator, the old scale-up fabric's switches and links the
    accelerators can no longer use go, and if the accelerators are left without a scale-up
    fabric the new platform's is wired as a generated server's is (its switches, or a mesh)."""
    draft = _Draft(design)
    current, platform = draft.design, catalog[platform_id]
    server = current.item(server_id)
    draft.add(UpdateItem(server, replace(server, part=platform_id)))
    own = [i.id for i in current.descendants(server_id)
           if (enclosing := current.enclosing(i.id, "server")) is not None and enclosing.id == server_id]
    default = catalog.get(platform.get("default_accelerator"))
    for gpu_id in own:
        gpu = current.items[gpu_id]
        part = catalog.get(gpu.part)
        if gpu.kind == "accelerator" and part is not None and default is not None \
                and not placement.fits_platform(catalog, part, platform):
            draft.add(UpdateItem(gpu, replace(gpu, part=default.id)))
    fabric = placement.scale_up_media(catalog, platform) or frozenset()
    places: list[tuple[float, float]] = []
    for switch_id in own:
        switch = current.items[switch_id]
        part = catalog.get(switch.part)
        if switch.kind == "switch" and part is not None and not fabric & set(part.media):
            places.append((switch.x, switch.y))
            draft.remove_item(switch_id)
    own = [i for i in own if i in current.items]
    inside = set(own)
    for link in list(current.links.values()):
        if link.a in inside and link.b in inside and any(
                (part := catalog.get(current.items[end].part)) is not None and link.medium not in part.media
                for end in (link.a, link.b)):
            draft.add(RemoveLink(link))
    gpus = [current.items[i] for i in own if current.items[i].kind == "accelerator"]
    if len(gpus) > 1 and not any(link.medium in fabric for gpu in gpus for link in current.links_of(gpu.id)):
        _wire_scale_up(draft, catalog, server_id, platform, gpus, places)
    return draft.edit(f"Change {server.label} to {platform.name}")


def _wire_scale_up(draft: _Draft, catalog: Catalog, server_id: str, platform: Part, gpus: list[Item],
                   places: list[tuple[float, float]]) -> None:
    """The platform's own scale-up fabric for `gpus`: NVSwitch-like switches or a mesh (a PCIe
    fabric is not rewired: its switch ports are laid out per system)."""
    scale_up = platform.get("scale_up") or {}
    gpu_part = catalog[gpus[0].part]
    medium, lanes = gpu_part.get("scale_up_medium"), int(gpu_part.number("scale_up_lanes", 1))
    switch = catalog.get(scale_up.get("switch"))
    if switch is not None and medium in switch.media:
        count = int(scale_up.get("switches", 1))
        switch_ids = []
        for s in range(count):
            x, y = places[s] if s < len(places) else (20.0 + 140 * s, -80.0)
            switch_id = draft.design.new_id(f"{server_id}.sw")
            draft.add(AddItem(Item(switch_id, "switch", name=f"{switch.name} {s}", part=switch.id, parent=server_id,
                                   x=x, y=y)))
            switch_ids.append(switch_id)
        for g, gpu in enumerate(gpus):
            for s, switch_id in enumerate(switch_ids):
                share = placement.switch_lanes(lanes, count, g, s)
                if share:
                    draft.add(AddLink(Link(draft.design.new_id(f"{gpu.id}--{switch_id}"), gpu.id, switch_id, medium,
                                           share)))
    elif scale_up.get("mesh") and medium:
        per_pair = placement.mesh_lanes(lanes, len(gpus))
        for i, a in enumerate(gpus):
            for b in gpus[i + 1:]:
                draft.add(AddLink(Link(draft.design.new_id(f"{a.id}--{b.id}"), a.id, b.id, medium, per_pair)))


def set_link(design: Design, link_id: str, text: str = "Edit link", **changes: Any) -> Edit:
    draft = _Draft(design)
    old = draft.design.links.get(link_id)
    if old is None:
        raise DesignError(f"no link with id '{link_id}'")
    new = replace(old, **changes)
    if new != old:
        draft.add(UpdateLink(old, new))
    return draft.edit(text)


def set_design_text(design: Design, text: str = "Edit design properties", **values: str) -> Edit:
    """Change the design's name, description and notes (keyword arguments) as one edit; a name
    is printable text of at most MAX_NAME_CHARS, a description or notes at most MAX_TEXT_CHARS."""
    limits = {"name": MAX_NAME_CHARS, "description": MAX_TEXT_CHARS, "notes": MAX_TEXT_CHARS}
    draft = _Draft(design)
    for key, value in values.items():
        if key not in limits:
            raise DesignError(f"a design has no text field '{key}'")
        if not isinstance(value, str) or len(value) > limits[key]:
            raise DesignError(f"the design's {key} is text of at most {limits[key]:,} characters")
        control = _NAME_CONTROL if key == "name" else _TEXT_CONTROL
        if control.search(value):
            raise DesignError(f"the design's {key} holds a control character")
        if value != getattr(design, key):
            draft.add(SetDesignText(key, getattr(design, key), value))
    return draft.edit(text)


def set_setting(design: Design, key: str, value: Any, text: str) -> Edit:
    """Change one of the design's saved settings (the workload, say); None removes it."""
    draft = _Draft(design)
    old = design.settings.get(key)
    if old != value:
        draft.add(SetSetting(key, copy.deepcopy(old), copy.deepcopy(value)))
    return draft.edit(text)


def group(design: Design, item_ids: Iterable[str], count: int = 1, name: str = "") -> tuple[Edit, str | None]:
    """Wrap items that share a parent in a new group; returns the edit and the group's id (None
    when nothing was chosen). Items inside another chosen item go along with it."""
    items = [design.items[i] for i in outermost(design, item_ids)]
    if not items:
        return Edit(text="Group"), None
    parents = {i.parent for i in items}
    if len(parents) != 1:
        raise DesignError("Group: the selected items must sit in the same container")
    parent = parents.pop()
    x0 = min(i.x for i in items) - 20
    y0 = min(i.y for i in items) - 40
    group_id = design.new_id("group")
    draft = _Draft(design)
    draft.add(AddItem(Item(group_id, "group", name=name or f"Group {group_id.rsplit('-', 1)[-1]}", parent=parent,
                           x=x0, y=y0, count=count)))
    for item in items:
        draft.add(UpdateItem(item, replace(item, parent=group_id, x=item.x - x0, y=item.y - y0)))
    return draft.edit("Group"), group_id


# Ungrouping draws every copy a group stands for; beyond this many new drawn items (contents of
# the copies) it is refused: a canvas of tens of thousands of boxes helps nobody, the group does.
UNGROUP_MAX_NEW_ITEMS = 2_000
UNGROUP_COLUMNS = 8  # copies side by side per row
UNGROUP_GAP = 40.0


def ungroup(design: Design, group_ids: Iterable[str],
            sizes: dict[str, tuple[float, float]] | None = None) -> tuple[Edit, list[str]]:
    """Dissolve groups without losing hardware: a group of N copies becomes N drawn copies of its
    contents in the group's container. The first copy is the contents themselves, where they were
    drawn; the others get fresh ids and sit beside it, UNGROUP_COLUMNS to a row, one group's size
    (`sizes`, as drawn; estimated from the contents' positions without it) plus UNGROUP_GAP apart.
    Links inside the group are copied into every copy; a link from inside to outside, which the
    model counted once per copy, is drawn once per copy. Inner groups go first, so ungrouping a
    group and a group inside it draws every copy of both.

    Returns the edit and the ids of what now stands where the groups were (their former children
    and the copies). Refused (DesignError) when none of the ids is a group, when a link matches the
    group's copies one to one with another group's (ungroup or unmatch that link first), or when
    the copies would add more than UNGROUP_MAX_NEW_ITEMS drawn items."""
    draft = _Draft(design)
    chains = design.chains()
    groups = sorted({g for g in group_ids if g in design.items and design.items[g].kind == "group"},
                    key=lambda g: -len(chains[g]))
    if not groups:
        raise DesignError("Ungroup: select a group")
    sizes = sizes or {}
    new_items = 0
    placed: list[str] = []
    fresh = _fresh_ids(design)
    for group_id in groups:
        current = draft.design
        group_item = current.items[group_id]
        matched = [l for l in current.links.values() if l.match is not None and group_id in l.match]
        if matched:
            raise DesignError(f"Ungroup: link '{matched[0].id}' joins copy i of {group_item.label} only to copy i of "
                              f"another group; set its 'Copies joined' to every copy, or ungroup both groups")
        index = current.children_index()
        children = index.get(group_id, [])
        inside = [d for c in children for d in (c, *current.descendants(c.id, index))]
        new_items += len(inside) * (group_item.count - 1)
        if new_items > UNGROUP_MAX_NEW_ITEMS:
            raise DesignError(f"Ungroup: drawing the {group_item.count:,} copies of {group_item.label} would add "
                              f"{len(inside) * (group_item.count - 1):,} items (the limit is "
                              f"{UNGROUP_MAX_NEW_ITEMS:,}); keep the group, or lower its count first")
        inside_ids = {i.id for i in inside}
        touching = [l for l in current.links.values() if l.a in inside_ids or l.b in inside_ids]
        width, height = sizes.get(group_id) or _estimated_size(children)
        for child in children:
            draft.add(UpdateItem(child, replace(child, parent=group_item.parent, x=child.x + group_item.x,
                                                y=child.y + group_item.y)))
            placed.append(child.id)
        moved = {c.id: draft.design.items[c.id] for c in children}
        for k in range(1, group_item.count):
            dx = (k % UNGROUP_COLUMNS) * (width + UNGROUP_GAP)
            dy = (k // UNGROUP_COLUMNS) * (height + UNGROUP_GAP)
            mapping: dict[str | None, str] = {i.id: fresh(i.id) for i in inside}
            for child in children:
                top = moved[child.id]
                copies = tuple(replace(d, id=mapping[d.id], parent=mapping[d.parent])
                               for d in current.descendants(child.id, index))
                draft.add(AddItem(replace(top, id=mapping[child.id], name=f"{child.label} ({k + 1})",
                                          x=top.x + dx, y=top.y + dy), copies))
                placed.append(mapping[child.id])
            for link in touching:
                match = _renamed_match(link.match, mapping) if link.match else None
                draft.add(AddLink(replace(link, id=fresh(link.id), a=mapping.get(link.a, link.a),
                                          b=mapping.get(link.b, link.b), match=match)))
        draft.remove_item(group_id)
    return draft.edit("Ungroup"), [i for i in dict.fromkeys(placed) if i in draft.design.items]


def _estimated_size(children: list[Item]) -> tuple[float, float]:
    """A group's drawn size from its children's positions, for a caller that has no drawing."""
    if not children:
        return 160.0, 70.0
    xs, ys = [c.x for c in children], [c.y for c in children]
    return max(xs) - min(xs) + 200.0, max(ys) - min(ys) + 120.0


# --- clipboard -----------------------------------------------------------------------------------------
def fragment(design: Design, item_ids: Iterable[str]) -> dict:
    """The chosen items with everything inside them and the links among them, as plain data
    (`roots`: the chosen items not inside another chosen one)."""
    roots = outermost(design, item_ids)
    index = design.children_index()
    ids: list[str] = []
    for root in roots:
        ids.append(root)
        ids.extend(d.id for d in design.descendants(root, index))
    idset = set(ids)
    links = [l for l in design.links.values() if l.a in idset and l.b in idset]
    return {"items": [_item_data(design.items[i]) for i in ids], "links": [_link_data(l) for l in links],
            "roots": roots}


def paste(design: Design, data: dict, offset: tuple[float, float] = (20.0, 20.0),
          text: str = "Paste") -> tuple[Edit, list[str]]:
    """A copy of a fragment with fresh ids, moved by `offset`; returns the edit and the new root
    ids. Roots keep their container if it still exists, else go to the top level. Links among the
    copied items come along; a matched link stays matched where both matched groups came along or
    still hold its ends, and becomes every-to-every otherwise."""
    fresh = _fresh_ids(design)
    items = [Item(**d) for d in data["items"]]
    roots = set(data["roots"])
    mapping: dict[str | None, str] = {item.id: fresh(item.id) for item in items}
    new_items = []
    for item in items:
        if item.id in roots:
            parent = item.parent if item.parent in design.items else None
            new_items.append(replace(item, id=mapping[item.id], parent=parent, x=item.x + offset[0],
                                     y=item.y + offset[1]))
        else:
            new_items.append(replace(item, id=mapping[item.id], parent=mapping[item.parent]))
    parents = {i.id: i.parent for i in new_items}

    def chain(item_id: str) -> list[str]:
        out, cur = [], parents.get(item_id)
        while cur is not None:
            out.append(cur)
            cur = parents[cur] if cur in parents else design.items[cur].parent
        return out

    new_links = []
    for d in data["links"]:
        link = Link(**dict(d, match=tuple(d["match"]) if d.get("match") else None))
        a, b = mapping[link.a], mapping[link.b]
        match = None
        if link.match is not None:
            match = _renamed_match(link.match, mapping)
            if match[0] not in chain(a) or match[1] not in chain(b):
                match = None
        new_links.append(replace(link, id=fresh(link.id), a=a, b=b, match=match))
    return add(design, new_items, new_links, text), [mapping[r] for r in data["roots"]]


def _renamed_match(match: tuple[str, str], mapping: Mapping[str | None, str]) -> tuple[str, str]:
    """A link's matched pair of groups, each under its new id where it was copied."""
    first, second = match
    return mapping.get(first, first), mapping.get(second, second)


def _fresh_ids(design: Design) -> Callable[[str], str]:
    """A function giving each old id a new one not used in the design nor given before ("srv-3")."""
    taken: set[str] = set()
    counters: dict[str, int] = {}

    def fresh(old_id: str) -> str:
        base = old_id.rsplit("-", 1)[0] if old_id.rsplit("-", 1)[-1].isdigit() else old_id
        n = counters.get(base, 1)
        while True:
            candidate = f"{base}-{n}"
            if candidate not in design.items and candidate not in design.links and candidate not in taken:
                taken.add(candidate)
                counters[base] = n + 1
                return candidate
            n += 1

    return fresh


def _item_data(item: Item) -> dict:
    return {"id": item.id, "kind": item.kind, "name": item.name, "part": item.part, "parent": item.parent,
            "x": item.x, "y": item.y, "count": item.count}


def _link_data(link: Link) -> dict:
    return {"id": link.id, "a": link.a, "b": link.b, "medium": link.medium, "lanes": link.lanes,
            "match": list(link.match) if link.match else None}
