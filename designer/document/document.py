"""The open design as a Qt object: the model, its undo stack, and a signal for every change.

Every model change goes through `Document.apply(ops, text)`: the operations are applied to the
design at once (so a rule the model refuses is reported before anything is pushed) and then pushed
as ONE undo command. Undo applies the inverse operations in reverse order. After each apply, undo
or redo the document emits `changed(Change)` naming exactly the items and links affected, so the
canvas updates only those and the evaluation scheduler re-evaluates.
"""

from __future__ import annotations

import copy

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design, Item, Link
from designer.model.errors import DesignError, DesignerError


# --- primitive operations ----------------------------------------------------------------------
# ("add_item", Item) ("remove_item", Item) ("update_item", old Item, new Item)
# ("add_link", Link) ("remove_link", Link) ("update_link", old Link, new Link)
# ("update_setting", key, old value or None, new value or None)

def _inverse(op: tuple) -> tuple:
    kind = op[0]
    if kind == "update_setting":
        return (kind, op[1], op[3], op[2])
    if kind == "add_item":
        return ("remove_item", op[1])
    if kind == "remove_item":
        return ("add_item", op[1])
    if kind == "add_link":
        return ("remove_link", op[1])
    if kind == "remove_link":
        return ("add_link", op[1])
    return (kind, op[2], op[1])


@dataclass
class Change:
    """What one apply/undo/redo touched, by id."""

    items_added: list[str] = field(default_factory=list)
    items_removed: list[str] = field(default_factory=list)
    items_changed: list[str] = field(default_factory=list)
    links_added: list[str] = field(default_factory=list)
    links_removed: list[str] = field(default_factory=list)
    links_changed: list[str] = field(default_factory=list)
    settings_changed: list[str] = field(default_factory=list)
    reset: bool = False

    def record(self, op: tuple) -> None:
        kind, obj = op[0], op[1]
        if kind == "update_setting":
            self.settings_changed.append(obj)
            return
        {"add_item": self.items_added, "remove_item": self.items_removed, "update_item": self.items_changed,
         "add_link": self.links_added, "remove_link": self.links_removed,
         "update_link": self.links_changed}[kind].append(obj.id)


def _apply_op(design: Design, op: tuple) -> None:
    kind = op[0]
    if kind == "add_item":
        design.add_item(op[1])
    elif kind == "remove_item":
        item = op[1]
        if any(i.parent == item.id for i in design.items.values()):
            raise DesignError(f"item '{item.id}' still has contents")
        if design.links_of(item.id):
            raise DesignError(f"item '{item.id}' still has links")
        del design.items[item.id]
    elif kind == "update_item":
        new = op[2]
        changes = {k: getattr(new, k) for k in ("name", "part", "parent", "x", "y", "count")}
        design.update_item(new.id, **changes)
    elif kind == "add_link":
        design.add_link(op[1])
    elif kind == "remove_link":
        design.remove_link(op[1].id)
    elif kind == "update_link":
        new = op[2]
        design.update_link(new.id, a=new.a, b=new.b, medium=new.medium, lanes=new.lanes, match=new.match)
    elif kind == "update_setting":
        key, new = op[1], op[3]
        if new is None:
            design.settings.pop(key, None)
        else:
            design.settings[key] = copy.deepcopy(new)
    else:  # pragma: no cover
        raise ValueError(kind)


def apply_ops(design: Design, ops: list[tuple]) -> Change:
    """Apply all or nothing: on a refused operation the applied ones are rolled back and the
    model's error is raised."""
    done: list[tuple] = []
    try:
        for op in ops:
            _apply_op(design, op)
            done.append(op)
    except DesignerError:
        for op in reversed(done):
            _apply_op(design, _inverse(op))
        raise
    change = Change()
    for op in ops:
        change.record(op)
    return change


class EditCommand(QUndoCommand):
    def __init__(self, document: "Document", ops: list[tuple], text: str):
        super().__init__(text)
        self.document, self.ops = document, ops
        self._skip_first_redo = True

    def redo(self) -> None:
        if self._skip_first_redo:  # already applied by Document.apply
            self._skip_first_redo = False
            return
        self.document._run(self.ops)

    def undo(self) -> None:
        self.document._run([_inverse(op) for op in reversed(self.ops)])


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
    def apply(self, ops: list[tuple], text: str) -> bool:
        """Apply and push as one undo step. Returns False (and emits `error`) if refused."""
        if not ops:
            return False
        try:
            change = apply_ops(self.design, ops)
        except DesignerError as exc:
            self.error.emit(str(exc))
            return False
        self.undo_stack.push(EditCommand(self, ops, text))
        self.changed.emit(change)
        return True

    def _run(self, ops: list[tuple]) -> None:
        self.changed.emit(apply_ops(self.design, ops))

    # --- edits ------------------------------------------------------------------------------
    def add_items(self, items: Iterable[Item], links: Iterable[Link] = (), text: str = "Add") -> bool:
        ops = [("add_item", i) for i in items] + [("add_link", l) for l in links]
        return self.apply(ops, text)

    def removal_ops(self, item_ids: Iterable[str], link_ids: Iterable[str] = ()) -> list[tuple]:
        design = self.design
        index = design.children_index()
        doomed: list[Item] = []
        seen: set[str] = set()
        chosen = [i for i in item_ids if i in design.items]
        for item_id in self._outermost(chosen):
            stack = [design.items[item_id]]
            while stack:  # parent first
                item = stack.pop()
                if item.id in seen:
                    continue
                seen.add(item.id)
                doomed.append(item)
                stack.extend(index.get(item.id, []))
        links = [l for l in design.links.values() if l.a in seen or l.b in seen or l.id in set(link_ids)]
        # Children must go before their parents: reverse the parent-first order.
        return [("remove_link", l) for l in links] + [("remove_item", i) for i in reversed(doomed)]

    def _outermost(self, item_ids: list[str]) -> list[str]:
        """The ids not inside another of them: a selection may list an item before its container,
        and walking from the item first would order the container's removal before its contents'."""
        chosen = set(item_ids)

        def inside_another(item_id: str) -> bool:
            parent = self.design.items[item_id].parent
            while parent is not None:
                if parent in chosen:
                    return True
                parent = self.design.items[parent].parent
            return False

        return [i for i in item_ids if not inside_another(i)]

    def remove(self, item_ids: Iterable[str], link_ids: Iterable[str] = (), text: str = "Delete") -> bool:
        return self.apply(self.removal_ops(item_ids, link_ids), text)

    def move_items(self, positions: dict[str, tuple[float, float]], text: str = "Move") -> bool:
        ops = []
        for item_id, (x, y) in positions.items():
            old = self.design.items[item_id]
            if (old.x, old.y) != (x, y):
                ops.append(("update_item", old, replace(old, x=float(x), y=float(y))))
        return self.apply(ops, text if len(ops) > 1 else "Move item")

    def set_item(self, item_id: str, text: str = "Edit", **changes) -> bool:
        """A new count for a group whose copies links match one to one with other groups' is
        given to those groups too, in the same step (one spine per pod fewer is one core group
        fewer), so the match keeps holding."""
        old = self.design.items[item_id]
        new = replace(old, **changes)
        if new == old:
            return False
        ops = [("update_item", old, new)]
        if new.count != old.count:
            for other_id in self.design.matched_groups(item_id):
                other = self.design.items[other_id]
                if other.count != new.count:
                    ops.append(("update_item", other, replace(other, count=new.count)))
            if len(ops) > 1:
                text = f"{text} (and {len(ops) - 1} matched group{'s' if len(ops) > 2 else ''})"
        return self.apply(ops, text)

    def set_link(self, link_id: str, text: str = "Edit link", **changes) -> bool:
        old = self.design.links[link_id]
        new = replace(old, **changes)
        if new == old:
            return False
        return self.apply([("update_link", old, new)], text)

    def set_setting(self, key: str, value, text: str) -> bool:
        """Change one of the design's saved settings (e.g. the workload) as one undo step."""
        old = self.design.settings.get(key)
        if old == value:
            return False
        return self.apply([("update_setting", key, copy.deepcopy(old), copy.deepcopy(value))], text)

    def add_link(self, a: str, b: str, medium: str, lanes: int = 1) -> str | None:
        link_id = self.design.new_id(f"{a}--{b}") if f"{a}--{b}" in self.design.links else f"{a}--{b}"
        if not self.apply([("add_link", Link(link_id, a, b, medium, lanes))], "Add link"):
            return None
        return link_id

    def validate_item(self, item_id: str, **changes) -> str | None:
        """The model's reason for refusing a change, or None if it would be accepted. The design
        is left as it was (the change is tried and rolled back, without signals)."""
        old = self.design.items[item_id]
        try:
            new = replace(old, **changes)
            apply_ops(self.design, [("update_item", old, new)])
        except (DesignerError, TypeError, ValueError) as exc:
            return str(exc)
        apply_ops(self.design, [("update_item", new, old)])
        return None

    def validate_link(self, link_id: str, **changes) -> str | None:
        old = self.design.links[link_id]
        trial = Design(items=self.design.items, links={})
        try:
            trial._check_link(replace(old, **changes), previous=old)
        except DesignerError as exc:
            return str(exc)
        medium = changes.get("medium", old.medium)
        for end in (old.a, old.b):
            part = self.catalog.get(self.design.items[end].part)
            if part is not None and medium not in part.media:
                return f"{part.name} does not support {medium} (it supports {', '.join(part.media) or 'none'})"
        return None

    def group(self, item_ids: list[str], count: int = 1, name: str = "") -> str | None:
        """Wrap items that share a parent in a new group."""
        design = self.design
        items = [design.items[i] for i in item_ids if i in design.items]
        # Only the outermost selected items: drop those inside another selected item.
        chosen = {i.id for i in items}
        items = [i for i in items if not any(a.id in chosen for a in design.ancestors(i.id))]
        if not items:
            return None
        parents = {i.parent for i in items}
        if len(parents) != 1:
            self.error.emit("Group: the selected items must sit in the same container")
            return None
        parent = parents.pop()
        x0 = min(i.x for i in items) - 20
        y0 = min(i.y for i in items) - 40
        group_id = design.new_id("group")
        group = Item(group_id, "group", name=name or f"Group {group_id.rsplit('-', 1)[-1]}", parent=parent,
                     x=x0, y=y0, count=count)
        ops = [("add_item", group)]
        ops += [("update_item", i, replace(i, parent=group_id, x=i.x - x0, y=i.y - y0)) for i in items]
        return group_id if self.apply(ops, "Group") else None

    def ungroup(self, group_ids: list[str]) -> bool:
        design = self.design
        ops = []
        for gid in group_ids:
            group = design.items.get(gid)
            if group is None or group.kind != "group":
                continue
            for child in design.children(gid):
                ops.append(("update_item", child, replace(child, parent=group.parent, x=child.x + group.x, y=child.y + group.y)))
            ops.append(("remove_item", group))
        if not ops:
            self.error.emit("Ungroup: select a group")
            return False
        return self.apply(ops, "Ungroup")

    # --- clipboard ------------------------------------------------------------------------------
    def fragment(self, item_ids: Iterable[str]) -> dict:
        """The selected items with everything inside them and the links among them, as plain data."""
        design = self.design
        chosen = [i for i in item_ids if i in design.items]
        roots = [i for i in chosen if not any(a.id in chosen for a in design.ancestors(i))]
        ids: list[str] = []
        for root in roots:
            ids.append(root)
            ids.extend(d.id for d in design.descendants(root))
        idset = set(ids)
        items = [design.items[i] for i in ids]
        links = [l for l in design.links.values() if l.a in idset and l.b in idset]
        return {"items": [vars_item(i) for i in items], "links": [vars_link(l) for l in links],
                "roots": roots}

    def paste(self, fragment: dict, offset: tuple[float, float] = (20.0, 20.0), text: str = "Paste") -> list[str]:
        """Add a copy of a fragment with fresh ids; roots keep their container if it still exists
        and accepts them, else go to the top level. Returns the new root ids."""
        design = self.design
        mapping: dict[str, str] = {}
        taken: set[str] = set()

        def fresh(old_id: str) -> str:
            base = old_id.rsplit("-", 1)[0] if old_id.rsplit("-", 1)[-1].isdigit() else old_id
            n = 1
            while True:
                candidate = f"{base}-{n}"
                if candidate not in design.items and candidate not in design.links and candidate not in taken:
                    taken.add(candidate)
                    return candidate
                n += 1

        items = [Item(**d) for d in fragment["items"]]
        roots = set(fragment["roots"])
        for item in items:
            mapping[item.id] = fresh(item.id)
        new_items = []
        for item in items:
            if item.id in roots:
                parent = item.parent if item.parent in design.items else None
                new_items.append(replace(item, id=mapping[item.id], parent=parent, x=item.x + offset[0], y=item.y + offset[1]))
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
        for d in fragment["links"]:
            link = Link(**dict(d, match=tuple(d["match"]) if d.get("match") else None))
            a, b = mapping[link.a], mapping[link.b]
            match = None
            if link.match is not None:
                # The copy stays matched where both groups came along or still hold its ends.
                match = tuple(mapping.get(g, g) for g in link.match)
                if match[0] not in chain(a) or match[1] not in chain(b):
                    match = None
            new_links.append(replace(link, id=fresh(link.id), a=a, b=b, match=match))
        ok = self.add_items(new_items, new_links, text)
        return [mapping[r] for r in fragment["roots"]] if ok else []


def vars_item(item: Item) -> dict:
    return {"id": item.id, "kind": item.kind, "name": item.name, "part": item.part, "parent": item.parent,
            "x": item.x, "y": item.y, "count": item.count}


def vars_link(link: Link) -> dict:
    return {"id": link.id, "a": link.a, "b": link.b, "medium": link.medium, "lanes": link.lanes,
            "match": list(link.match) if link.match else None}
