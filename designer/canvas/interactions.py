"""What the user's gestures on the canvas become: parts dropped from the palette, items dragged
(snapped to the grid, moved into the container they are released over: `DragItems`, the scene's
gesture), links drawn between two items. Each finished gesture is one document edit; the scene
then mirrors it. The view's gestures (pan, rubber band, drawing a link, rename) are `gestures`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt

from designer.canvas.items import NodeItem
from designer.model import layout, placement
from designer.model.design import Design, Item
from designer.model.errors import DesignerError
from designer.model.layout import GRID, LEAF_H, LEAF_W
from designer.topologies.base import Builder

if TYPE_CHECKING:  # the scene owns these; they name its type, not a run-time dependency
    from designer.canvas.scene import DesignScene

PART_MIME = "application/x-cluster-designer-part"  # a catalogue part dragged from the palette
# A drag of at most this many boxes and links between them lifts them above everything else
# (`DesignScene.lift`): each costs a few microseconds to lift and to land, once per drag. A bigger
# drag (thousands after Select All) moves them one by one on every mouse move instead, where they
# lie in the stacking order: lifting and landing tens of thousands would hold the press and the
# release for longer than a frame.
LIFT_AT_MOST = 2000


class DragItems:
    """The gesture of dragging the selection, from the scene's mouse events (Qt delivers a press on
    an item to the scene, which makes the item its mouse grabber): the press works out what moves,
    each move shifts it, the release turns where it went into one edit, a cancel puts it back."""

    def __init__(self, interactions: Interactions):
        self.interactions = interactions
        self.scene = interactions.scene
        self._dragged: list[NodeItem] | None = None  # the items the drag under way moves
        self._dragged_links: list = []  # and the links it re-routes (LinkItems)
        self._carried_links: list = []  # and those it carries along (both ends dragged)
        self._origins: dict[NodeItem, QPointF] = {}  # where the dragged items were on the press
        self._shift = QPointF(0, 0)  # how far the drag has moved them
        self._lifted = False  # whether the dragged items are lifted (scene.lift) for the drag

    def press(self, event) -> None:
        """After Qt handled a press: one on an item may start a drag of the selection, so what it
        would move is worked out now rather than in the first mouse move, which also repaints."""
        self.interactions.track_modifiers(event)
        self._land()
        self._forget()
        if event.button() == Qt.MouseButton.LeftButton and isinstance(self.scene.mouseGrabberItem(), NodeItem):
            self._prepare()

    def _forget(self) -> None:
        self._dragged, self._dragged_links, self._carried_links = None, [], []
        self._origins, self._shift = {}, QPointF(0, 0)

    def _prepare(self) -> None:
        """The items a drag moves, the links it re-routes (one end left behind), and those it
        carries (both ends moving, each with another dragged item: their lines just shift)."""
        self._dragged = self.interactions.dragged_nodes()
        self._origins, self._shift = {node: node.pos() for node in self._dragged}, QPointF(0, 0)
        ids = {n.item_id for n in self._dragged}
        moving = self.scene.subtrees(ids)
        self._dragged_links, self._carried_links = [], []
        for link in self.scene.links_around(ids, subtree_of=moving):
            (self._carried_links if link.a in moving and link.b in moving else self._dragged_links).append(link)

    def move(self, event) -> bool:
        """A mouse move while items are dragged: move them, in one pass, to where the press point
        went (the item under the mouse on the grid, the others keeping their offsets from it), and
        their links along. Returns False when the mouse is not dragging items (Qt handles it).

        Qt's own item drag reads every selected item on every move (thousands after Select All)
        and the snap moved each a second time; here the first move lifts the dragged items above
        the rest (`DesignScene.lift`), and each move shifts what is lifted as a whole (a drag of
        more than LIFT_AT_MOST moves each item once per move, from where it was on the press).
        Containers keep their size while a child is dragged (over or out of them): the drop
        decides where it ends up."""
        self.interactions.track_modifiers(event)
        grabber = self.scene.mouseGrabberItem()
        if not (event.buttons() & Qt.MouseButton.LeftButton) or not isinstance(grabber, NodeItem):
            return False
        if self._dragged is None:
            self._prepare()
        if not self._origins:
            return True
        anchor = grabber if grabber in self._origins else next(iter(self._origins))
        start = self._origins[anchor]
        moved = event.scenePos() - event.buttonDownScenePos(Qt.MouseButton.LeftButton)
        shift = self.interactions.snap(start + moved) - start
        step = shift - self._shift
        if step == QPointF(0, 0):
            return True
        self._shift = shift
        if not self._lifted and len(self._origins) + len(self._carried_links) <= LIFT_AT_MOST:
            self.scene.lift(list(self._origins), self._carried_links)
            self._lifted = True
        if self._lifted:
            self.scene.move_lifted(shift)
        else:
            for node, origin in self._origins.items():
                node.setPos(origin + shift)
            for link in self._carried_links:
                link.setLine(link.line().translated(step))
        self.scene.reroute(self._dragged_links, rehome=False)
        return True

    def _land(self) -> None:
        """The drag is over: the dragged items go back into their containers, where it left them."""
        if self._lifted:
            self.scene.land()
            self._lifted = False

    def release(self, event) -> None:
        """After Qt handled the release: a left button's release drops the items where it is."""
        self.interactions.commit_moves(event.scenePos() if event.button() == Qt.MouseButton.LeftButton else None,
                                       self._end())

    def _end(self) -> list[NodeItem]:
        """Land what the drag moves and return it; the gesture is over."""
        self._land()
        dragged = self._dragged if self._dragged is not None else self.interactions.dragged_nodes()
        self._forget()
        return dragged

    def cancel(self) -> None:
        """Put what the drag moved back where the design has it, as if it had not begun."""
        dragged = self._end()
        self.interactions.restore_positions([node.item_id for node in dragged])


class Interactions:
    """The scene's gestures. Items never edit the model; these turn what they did into edits."""

    def __init__(self, scene: DesignScene):
        self.scene = scene
        self.snap_enabled = True
        self._alt_held = False  # Alt places freely, off the grid
        self.drag = DragItems(self)
        # Asked when a link could use several media; tests replace it. (options) -> choice or None
        self.choose_medium: Callable[[list[tuple[str, str]], str], str | None] | None = None

    # --- moves ------------------------------------------------------------------------------------
    def snap(self, value: QPointF) -> QPointF:
        if not self.snap_enabled or self._alt_held:
            return value
        return QPointF(round(value.x() / GRID) * GRID, round(value.y() / GRID) * GRID)

    def track_modifiers(self, event) -> None:
        self._alt_held = bool(event.modifiers() & Qt.KeyboardModifier.AltModifier)

    def dragged_nodes(self) -> list[NodeItem]:
        """What a drag of the selection moves: the selected items not inside another selected one
        (their contents ride along)."""
        return self.scene.outermost_selected()

    def commit_moves(self, release_at: QPointF | None, dragged: list[NodeItem]) -> None:
        """Turn the positions the user dragged items to into one undo step. An item released over
        a container that may hold it moves inside it (a GPU dragged from one server onto
        another), one released over nothing that holds it goes to the top level; the model
        decides (`placement.reparent_problem`), and an item it refuses goes back where it was
        while the status bar says why."""
        design = self.scene.design
        under = self._containers_under(release_at) if release_at is not None else None
        positions: dict[str, tuple[float, float]] = {}
        parents: dict[str, str | None] = {}
        refused: list[str] = []
        for node in dragged:
            item = design.items.get(node.item_id)
            if item is None or (node.pos().x(), node.pos().y()) == (item.x, item.y):
                continue
            x, y = node.pos().x(), node.pos().y()
            if under is not None:
                target = next((c for c in under if not node.isAncestorOf(c) and placement.can_hold(c.kind, node.kind)),
                              None)
                new_parent = target.item_id if target is not None else None
                problem = placement.reparent_problem(design, item.id, new_parent)
                if problem:
                    self.scene.message.emit(problem)
                    refused.append(item.id)
                    continue
                if new_parent != item.parent:
                    local = self.snap(target.mapFromScene(node.scenePos()) if target is not None else node.scenePos())
                    parents[item.id] = new_parent
                    x, y = local.x(), local.y()
            positions[item.id] = (float(x), float(y))
        if refused:
            self.restore_positions(refused)
        if not positions:
            return
        if not self.scene.document.move_items(positions, parents):
            self.restore_positions(list(positions))
        elif parents:
            first = next(iter(parents.values()))
            where = design.items[first].label if first is not None else "the top level"
            self.scene.message.emit(f"Moved {len(parents)} item{'s' if len(parents) > 1 else ''} into {where}")

    def free_offset_beside(self, ids: list[str], tries: int = 20) -> tuple[float, float]:
        """How far to the right a copy of these items lands beside them: their drawn width plus
        a grid step, or further by the same amount until the copy overlaps nothing else."""
        nodes = [self.scene.nodes[i] for i in ids if i in self.scene.nodes]
        if not nodes:
            return (GRID * 2.0, GRID * 2.0)
        box = QRectF()
        for node in nodes:
            box = box.united(node.sceneBoundingRect())
        holders: set[int] = set()  # the containers around the originals (a copy lands inside them)
        for node in nodes:
            parent = node.parentItem()
            while parent is not None:
                holders.add(id(parent))
                parent = parent.parentItem()
        step = math.ceil((box.width() + GRID) / GRID) * GRID
        for k in range(1, tries + 1):
            spot = box.translated(k * step, 0)
            if not any(isinstance(c, NodeItem) and id(c) not in holders for c in self.scene.items(spot)):
                return (float(k * step), 0.0)
        return (float(step), 0.0)

    def nudge_selection(self, dx: float, dy: float) -> None:
        """Arrow keys: move the selected items by dx, dy (nudges in a row are one undo step)."""
        ids = [n.item_id for n in self.dragged_nodes()]
        if ids:
            self.scene.document.nudge(ids, dx, dy)

    def _containers_under(self, scene_pos: QPointF) -> list[NodeItem]:
        """The items under a release point that are not being dragged along, topmost first."""
        return [c for c in self.scene.items(scene_pos) if isinstance(c, NodeItem) and not c.isSelected()]

    def restore_positions(self, ids) -> None:
        """Draw these items where the design has them again (a refused or cancelled move)."""
        for item_id in ids:
            node, item = self.scene.nodes.get(item_id), self.scene.design.items.get(item_id)
            if node is not None and item is not None:
                node.setPos(item.x, item.y)
        self.scene.update_links_around(set(ids))

    # --- drops ------------------------------------------------------------------------------------
    def container_for(self, kind: str, scene_pos: QPointF) -> NodeItem | None:
        under = [item.item_id for item in self.scene.items(scene_pos) if isinstance(item, NodeItem)]
        container_id = placement.container_under(self.scene.design, kind, under)
        return self.scene.nodes[container_id] if container_id is not None else None

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
            if not placement.can_hold("group", kind):
                self.scene.message.emit(f"A {kind} cannot be replicated in a group; place it inside a server")
                return []
            group_id = scratch.new_id("group")
            scratch.add_item(Item(group_id, "group", name=f"{count:,} × {part.name}", parent=parent_id, x=x, y=y,
                                  count=count))
            parent_id, x, y = group_id, 20, 40
        try:
            if kind == "server":
                prefix = scratch.new_id("node")
                Builder(scratch, catalog).server(prefix, part.id, parent_id, x=x, y=y)
                top = prefix
            else:
                prefix = {"accelerator": "gpu", "cpu": "cpu", "nic": "nic", "switch": "switch", "rack": "rack"}[kind]
                top = scratch.new_id(prefix)
                scratch.add_item(Item(top, kind, name=placement.next_name(scratch, kind), part=part.id,
                                      parent=parent_id, x=x, y=y))
        except DesignerError as exc:  # refused with the model's or the generator's reason
            self.scene.message.emit(f"Cannot place {part.name}: {exc}")
            return []
        created = group_id or top
        # Its insides are laid out as a tidy lays out a server (NICs above the GPUs, NVSwitches
        # below), its box centred on the drop point; the document then moves it on to the
        # nearest place clear of its siblings.
        for item_id, (x, y) in layout.tidy(scratch, inside=created).items():
            scratch.replace_item(replace(scratch.items[item_id], x=x, y=y))
        box = layout.own_rect(scratch, created)
        centred = QPointF(local.x() - box.left - box.width / 2, local.y() - box.top - box.height / 2)
        spot = self.snap(centred)
        scratch.replace_item(replace(scratch.items[created], x=spot.x(), y=spot.y()))
        new_items = [i for i_id, i in scratch.items.items() if i_id not in design.items]
        new_links = [l for l_id, l in scratch.links.items() if l_id not in design.links]
        text = f"Add {count} × {part.name}" if count else f"Add {part.name}"
        if not self.scene.document.place_items(new_items, new_links, text):
            return []
        self.scene.select_ids([created])
        where = f" inside {design.items[container.item_id].label}" if container is not None else ""
        self.scene.message.emit(f"Added {part.name}{where}")
        return [created]

    # --- links ------------------------------------------------------------------------------------
    def request_link(self, a_id: str, b_id: str) -> str | None:
        catalog = self.scene.document.catalog
        media = placement.link_media(self.scene.design, catalog, a_id, b_id)
        if media.reason:
            self.scene.message.emit(media.reason)
            return None
        if len(media.media) == 1:
            medium = media.default
        else:
            options = [(m, catalog[m].name) for m in media.media]
            chooser = self.choose_medium
            if chooser is None:
                return None
            medium = chooser(options, f"{self.scene.design.items[a_id].label} — {self.scene.design.items[b_id].label}")
            if medium is None:
                self.scene.message.emit("Link cancelled")
                return None
        link_id = self.scene.document.add_link(a_id, b_id, medium, placement.default_lanes(catalog, medium))
        if link_id:
            items = self.scene.design.items
            self.scene.message.emit(f"Linked {items[a_id].label} — {items[b_id].label} over {catalog[medium].name}")
        return link_id
