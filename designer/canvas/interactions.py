"""What the user's gestures on the canvas become: parts dropped from the palette, items dragged
(snapped to the grid, moved into the container they are released over), links drawn between two
items. Each finished gesture is one document edit; the scene then mirrors it."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QGraphicsScene

from designer.canvas.items import GRID, LEAF_H, LEAF_W, NodeItem
from designer.model.design import ALLOWED_PARENTS, Design, Item
from designer.model.errors import DesignerError
from designer.topologies.base import Builder

PART_MIME = "application/x-cluster-designer-part"  # a catalogue part dragged from the palette


class Interactions:
    """The scene's gestures. Items never edit the model; these turn what they did into edits."""

    def __init__(self, scene: QGraphicsScene):  # the DesignScene (not imported: it owns this)
        self.scene = scene
        self.snap_enabled = True
        self._alt_held = False  # Alt places freely, off the grid
        # Asked when a link could use several media; tests replace it. (options) -> choice or None
        self.choose_medium: Callable[[list[tuple[str, str]], str], str | None] | None = None

    # --- moves ------------------------------------------------------------------------------------
    def snap(self, value: QPointF) -> QPointF:
        if not self.snap_enabled or self._alt_held:
            return value
        return QPointF(round(value.x() / GRID) * GRID, round(value.y() / GRID) * GRID)

    def node_moved(self, node: NodeItem) -> None:
        """While dragging: keep links attached and the containers around the moved item fitted."""
        parent = node.parentItem()
        refit = self.scene.refit({parent.item_id}) if isinstance(parent, NodeItem) else set()
        self.scene.update_links_around({node.item_id}, refit)

    def track_modifiers(self, event) -> None:
        self._alt_held = bool(event.modifiers() & Qt.KeyboardModifier.AltModifier)

    def positions_before_drag(self, event) -> dict[NodeItem, QPointF] | None:
        """Where the selected items are before Qt moves them for this mouse move (None: the mouse
        is not dragging items)."""
        self.track_modifiers(event)
        grabber = self.scene.mouseGrabberItem()
        if not (event.buttons() & Qt.MouseButton.LeftButton) or not isinstance(grabber, NodeItem):
            return None
        return {n: n.pos() for n in self.scene.selectedItems() if isinstance(n, NodeItem)}

    def snap_dragged(self, before: dict[NodeItem, QPointF]) -> None:
        """After Qt moved the dragged items: the item under the mouse lands on the grid, the
        others keep their offsets from it, and their links and containers follow."""
        grabber = self.scene.mouseGrabberItem()
        moved = [n for n, p in before.items() if n.pos() != p]
        anchor = grabber if grabber in before else (moved[0] if moved else None)
        if anchor is not None and moved:
            target = self.snap(anchor.pos())
            delta = target - anchor.pos()
            if delta != QPointF(0, 0):
                for node in moved:
                    node.setPos(node.pos() + delta)
        for node in moved:
            if node.pos() != before[node]:
                self.node_moved(node)

    def commit_moves(self, release_at: QPointF | None = None) -> None:
        """Turn the positions the user dragged items to into one undo step. Items released over
        another container that accepts them (a server dragged onto a rack) move inside it."""
        design = self.scene.design
        ops = []
        moved_ids = []
        for node in self.scene.selectedItems():
            if not isinstance(node, NodeItem):
                continue
            item = design.items.get(node.item_id)
            if item is None or (node.pos().x(), node.pos().y()) == (item.x, item.y):
                continue
            moved_ids.append(item.id)
            parent_id, x, y = item.parent, node.pos().x(), node.pos().y()
            target = self._drop_target(node, release_at) if release_at is not None else False
            if target is not False:
                new_parent = target.item_id if target is not None else None
                copies = lambda pid: design.multiplicity(pid) if pid else 1  # noqa: E731
                if new_parent != item.parent and copies(new_parent) != copies(item.parent):
                    # Moving in or out of a replicated group would silently change the hardware.
                    where = design.items[new_parent].label if new_parent else "the top level"
                    self.scene.message.emit(f"Not moved into {where}: that would change how many copies of "
                                            f"{item.label} there are (×{copies(item.parent):,} → ×{copies(new_parent):,}); "
                                            "use Cut and Paste")
                elif new_parent != item.parent:
                    local = self.snap(target.mapFromScene(node.scenePos()) if target is not None else node.scenePos())
                    parent_id, x, y = new_parent, local.x(), local.y()
            ops.append(("update_item", item, replace(item, parent=parent_id, x=float(x), y=float(y))))
        if not ops:
            return
        reparented = sum(1 for op in ops if op[1].parent != op[2].parent)
        count = len(ops)
        text = f"Move {count} items" if count > 1 else "Move item"
        if reparented:
            where = self.scene.design.items[ops[0][2].parent].label if ops[0][2].parent else "the top level"
            text = f"Move into {where}"
        if not self.scene.document.apply(ops, text):
            self._restore_positions(moved_ids)
        elif reparented:
            self.scene.message.emit(f"Moved {reparented} item{'s' if reparented > 1 else ''} into {where}")

    def _drop_target(self, node: NodeItem, scene_pos: QPointF):
        """The container under the release point that accepts this node (None: the top level), or
        False to keep the current parent (nothing accepting there, or it is its own container)."""
        allowed = ALLOWED_PARENTS.get(node.kind, ())
        for candidate in self.scene.items(scene_pos):
            if not isinstance(candidate, NodeItem) or candidate is node or node.isAncestorOf(candidate):
                continue
            if candidate.isSelected():
                continue  # moving along with it
            if candidate.container and candidate.kind in allowed and candidate.kind != "group":
                return candidate
        return None if node.parentItem() is not None and not self._inside_parent(node, scene_pos) else False

    @staticmethod
    def _inside_parent(node: NodeItem, scene_pos: QPointF) -> bool:
        parent = node.parentItem()
        return parent is None or parent.mapRectToScene(parent.rect()).contains(scene_pos)

    def _restore_positions(self, ids) -> None:
        for item_id in ids:
            node, item = self.scene.nodes.get(item_id), self.scene.design.items.get(item_id)
            if node is not None and item is not None:
                node.setPos(item.x, item.y)
        self.scene.update_links_around(set(ids))

    # --- drops ------------------------------------------------------------------------------------
    def container_for(self, kind: str, scene_pos: QPointF) -> NodeItem | None:
        allowed = ALLOWED_PARENTS.get(kind, ())
        for item in self.scene.items(scene_pos):
            if isinstance(item, NodeItem) and item.container and item.kind in allowed:
                return item
        return None

    def drop_part(self, part_id: str, scene_pos: QPointF, count: int | None = None) -> list[str]:
        """Create a catalogue part where it was dropped (inside the rack or server under it);
        with a count, inside a new replicated group. Returns the created top item ids."""
        catalog, design = self.scene.document.catalog, self.scene.design
        part = catalog.get(part_id)
        if part is None or part.kind == "medium":
            self.scene.message.emit(f"'{part_id}' is not a part that can be placed")
            return []
        kind = part.kind
        container = self.container_for("group" if count else kind, scene_pos)
        parent_id = container.item_id if container is not None else None
        local = container.mapFromScene(scene_pos) if container is not None else scene_pos
        x = round((local.x() - LEAF_W / 2) / GRID) * GRID
        y = round((local.y() - LEAF_H / 2) / GRID) * GRID
        scratch = Design(items=dict(design.items), links=dict(design.links))
        group_id = None
        if count:
            if "group" not in ALLOWED_PARENTS[kind]:
                self.scene.message.emit(f"A {kind} cannot be replicated in a group; place it inside a server")
                return []
            group_id = scratch.new_id("group")
            scratch.add_item(Item(group_id, "group", name=f"{count:,} × {part.name}", parent=parent_id, x=x, y=y, count=count))
            parent_id, x, y = group_id, 20, 40
        try:
            if kind == "server":
                prefix = scratch.new_id("node")
                Builder(scratch, catalog).server(prefix, part.id, parent_id, x=x, y=y + 100)
                top = prefix
            else:
                prefix = {"accelerator": "gpu", "cpu": "cpu", "nic": "nic", "switch": "switch", "rack": "rack"}[kind]
                top = scratch.new_id(prefix)
                scratch.add_item(Item(top, kind, name=self._default_name(kind, scratch, part), part=part.id,
                                      parent=parent_id, x=x, y=y))
        except DesignerError as exc:  # refused with the model's or the generator's reason
            self.scene.message.emit(f"Cannot place {part.name}: {exc}")
            return []
        new_items = [i for i_id, i in scratch.items.items() if i_id not in design.items]
        new_links = [l for l_id, l in scratch.links.items() if l_id not in design.links]
        text = f"Add {count} × {part.name}" if count else f"Add {part.name}"
        if not self.scene.document.add_items(new_items, new_links, text):
            return []
        created = group_id or top
        self.scene.select_ids([created])
        where = f" inside {design.items[container.item_id].label}" if container is not None else ""
        self.scene.message.emit(f"Added {part.name}{where}")
        return [created]

    def _default_name(self, kind: str, design: Design, part) -> str:
        n = sum(1 for i in design.items.values() if i.kind == kind)
        short = {"accelerator": "GPU", "nic": "NIC", "cpu": "CPU", "switch": "Switch", "rack": "Rack"}[kind]
        return f"{short} {n}"

    # --- links ------------------------------------------------------------------------------------
    def link_options(self, a_id: str, b_id: str) -> tuple[list[str], str | None]:
        """The media both ends support, or a reason why they cannot be linked."""
        design, catalog = self.scene.design, self.scene.document.catalog
        a, b = design.items.get(a_id), design.items.get(b_id)
        if a is None or b is None or a_id == b_id:
            return [], "Link: drag from one item to another"
        for end in (a, b):
            if end.kind == "group":
                return [], f"Cannot link to the group '{end.label}': links join hardware (a switch, NIC, GPU...)"
        pa, pb = catalog.get(a.part), catalog.get(b.part)
        if pa is None or pb is None:
            return [], "Cannot link: a part is not in the catalogue"
        shared = [m for m in pa.media if m in pb.media]
        if not shared:
            return [], (f"Cannot link {a.label} and {b.label}: no common medium "
                        f"({pa.name}: {', '.join(pa.media) or 'none'}; {pb.name}: {', '.join(pb.media) or 'none'})")
        return shared, None

    def request_link(self, a_id: str, b_id: str) -> str | None:
        shared, reason = self.link_options(a_id, b_id)
        if reason:
            self.scene.message.emit(reason)
            return None
        catalog = self.scene.document.catalog
        if len(shared) == 1:
            medium = shared[0]
        else:
            options = [(m, catalog[m].name) for m in shared]
            chooser = self.choose_medium
            if chooser is None:
                return None
            medium = chooser(options, f"{self.scene.design.items[a_id].label} — {self.scene.design.items[b_id].label}")
            if medium is None:
                self.scene.message.emit("Link cancelled")
                return None
        lanes = 1
        medium_part = catalog.get(medium)
        if medium_part is not None and medium_part.get("family") in ("pcie", "fabrex"):
            lanes = 16
        link_id = self.scene.document.add_link(a_id, b_id, medium, lanes)
        if link_id:
            self.scene.message.emit(f"Linked {self.scene.design.items[a_id].label} — {self.scene.design.items[b_id].label} over {catalog[medium].name}")
        return link_id

