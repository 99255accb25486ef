"""The scene mirrors the document: it creates, updates and removes only the graphics items a
change names, and turns finished gestures (a drag, a drop, a link drawn) into document edits."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsScene

from designer.canvas.items import GRID, LEAF_H, LEAF_W, LinkItem, NodeItem, common_ancestor, link_line
from designer.document.document import Change, Document
from designer.model.design import ALLOWED_PARENTS, Design, Item
from designer.model.errors import DesignerError
from designer.topologies.base import Builder
from designer.document.turns import later

PART_MIME = "application/x-cluster-designer-part"
# A design with more drawn items than this is built over several turns of the event loop, each
# at most BUILD_SLICE_S long, so opening a big design never freezes the window.
BUILD_IN_ONE_GO = 60
BUILD_SLICE_S = 0.02


class DesignScene(QGraphicsScene):
    message = Signal(str)  # for the status bar
    built = Signal()  # the scene mirrors the whole design (after a reset)

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.syncing = True
        self.document = document
        self.nodes: dict[str, NodeItem] = {}
        self.link_items: dict[str, LinkItem] = {}
        self.links_by_item: dict[str, set[str]] = {}
        self.snap_enabled = True
        self.detail = True  # text shown (off when zoomed out too far to read it)
        self._detail_generation = 0
        self._restyle_generation = 0
        self._painting_held_for: set[str] = set()  # the long jobs that paint once when done
        self._looks: set = set()  # items drawn with the selection look
        self._alt_held = False
        self.utilization: dict[str, float] = {}
        self.bottleneck: str | None = None
        # Asked when a link could use several media; tests replace it. (options) -> choice or None
        self.choose_medium: Callable[[list[tuple[str, str]], str], str | None] | None = None
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.setBackgroundBrush(Qt.GlobalColor.white)
        self.building = False
        self._build_generation = 0
        # New items are painted once on a stage of their own before they join the canvas (see
        # _join_staged); each waits there with the parent it will join (None: the top level).
        self._stage = QGraphicsScene(self)
        self._stage.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self._staged: list[tuple[Any, Any]] = []
        document.changed.connect(self.on_changed)
        self.selectionChanged.connect(self._on_selection_look)
        self.rebuild()
        self.syncing = False

    # --- building -------------------------------------------------------------------------
    @property
    def design(self) -> Design:
        return self.document.design

    def rebuild(self) -> None:
        """Mirror the whole design again: at once for small designs, in slices for big ones."""
        self._build_generation += 1
        # Restyles under way stop: the new items are created in the current style.
        self._detail_generation += 1
        self._restyle_generation += 1
        self._painting_held_for -= {"detail", "overlay"}
        was, self.syncing = self.syncing, True
        try:
            self.clearSelection()
            self._looks = set()
            self._discard_in_slices([i for i in self.items() if i.parentItem() is None])
            self.nodes.clear()
            self.link_items.clear()
            self.links_by_item.clear()
            self._stage.clear()
            self._staged = []
        finally:
            self.syncing = was
        self._steps = self._build_steps()
        self.building = True
        big = len(self.design.items) > BUILD_IN_ONE_GO
        if big:
            # Painting a half-built scene after every slice would cost more than the slice itself.
            self._hold_painting("build", True)
        self._run_build(self._build_generation, deadline=BUILD_SLICE_S if big else None)

    def _discard_in_slices(self, top_level: list) -> None:
        """Take the old design's items off the canvas a few hundred at a time: deleting thousands
        of items in one go holds the UI thread for longer than a frame should take."""
        for item in top_level:
            item.setVisible(False)
        self._doomed = getattr(self, "_doomed", []) + top_level
        if len(self._doomed) == len(top_level):
            later(self._discard_next, self)

    def _discard_next(self) -> None:
        started = time.perf_counter()
        while self._doomed and time.perf_counter() - started < BUILD_SLICE_S:
            item = self._doomed.pop()
            self.removeItem(item)
            del item  # the last reference: Qt deletes the item and its children
        if self._doomed:
            later(self._discard_next, self)

    def _build_steps(self) -> Iterator[None]:
        for item in self.design.ordered_items():
            self._create_node(item)
            yield
        self._join_staged()
        for node in sorted(self.nodes.values(), key=self._depth, reverse=True):
            node.fit_to_children()
            yield
        for link in list(self.design.links.values()):
            self._create_link(link)
            yield

    def _run_build(self, generation: int, deadline: float | None) -> None:
        if generation != self._build_generation or not self.building:
            return  # a newer rebuild took over
        started = time.perf_counter()
        was, self.syncing = self.syncing, True
        try:
            for _ in self._steps:
                if deadline is not None and time.perf_counter() - started > deadline:
                    self._join_staged()
                    later(lambda: self._run_build(generation, deadline), self)
                    return
        finally:
            self.syncing = was
        self._join_staged()
        rect = self.content_rect()
        self.setSceneRect(rect.adjusted(-2000, -2000, 2000, 2000))
        self.building = False
        self.built.emit()
        if deadline is None:
            self._hold_painting("build", False)
        else:
            # The first paint of a big scene is a long step of its own: give it its own turn.
            later(lambda: generation == self._build_generation and self._hold_painting("build", False), self)

    def _depth(self, node: NodeItem) -> int:
        depth, parent = 0, node.parentItem()
        while parent is not None:
            depth, parent = depth + 1, parent.parentItem()
        return depth

    def _part_name(self, item: Item) -> str:
        part = self.document.catalog.get(item.part)
        return part.name if part is not None else (item.part or "")

    def _create_node(self, item: Item) -> NodeItem:
        node = NodeItem(item.id, item.kind, item.label, self._short_part(item), item.count)
        node.setPos(item.x, item.y)
        if not self.detail:
            node.set_text_visible(False)
        self.nodes[item.id] = node
        self._stage_item(node, self.nodes.get(item.parent) if item.parent else None)
        return node

    def _stage_item(self, item, parent) -> None:
        self._stage.addItem(item)
        self._staged.append((item, parent))

    def _join_staged(self) -> None:
        """Paint the staged items once, into a tiny image, then move them onto the canvas.

        The first time Qt calls paint() on an item made from Python, PySide takes Python's GIL to
        look for an override (and then remembers there is none). If the view did that first paint,
        every new item would wait for the GIL while the evaluation thread holds it: thousands of
        new items would stall the UI for as long as the evaluation runs. Here the UI thread holds
        the GIL already, so each costs microseconds, and the stage holds only the new items."""
        if not self._staged:
            return
        image = QImage(2, 2, QImage.Format.Format_ARGB32_Premultiplied)
        painter = QPainter(image)
        try:
            self._stage.render(painter, QRectF(image.rect()), self._stage.itemsBoundingRect())
        finally:
            painter.end()
        for item, parent in self._staged:  # in creation order: parents join before their children
            # Off the stage first: setParentItem() straight across two scenes segfaults (PySide6 6.11).
            self._stage.removeItem(item)
            if parent is not None:
                item.setParentItem(parent)
            else:
                self.addItem(item)
        self._staged = []

    def _short_part(self, item: Item) -> str:
        if item.kind == "group":
            return ""
        name = self._part_name(item)
        for prefix in ("NVIDIA ", "AMD ", "Intel ", "Google "):
            if name.startswith(prefix):
                name = name[len(prefix):]
        return name

    def _node_tooltip(self, item: Item) -> str:
        lines = [f"<b>{_esc(item.label)}</b> ({item.kind}, id {_esc(item.id)})"]
        if item.kind == "group":
            lines.append(f"stands for ×{item.count:,} copies of its contents")
        part = self.document.catalog.get(item.part)
        if part is not None:
            lines.append(_esc(part.name))
            peaks = part.peak_tflops
            if "bf16" in peaks:
                lines.append(f"BF16 dense: {peaks['bf16']:,.0f} TFLOPS")
            for key, label, unit in (("memory_gb", "Memory", "GB"), ("memory_bw_tb_per_s", "Memory bandwidth", "TB/s"),
                                     ("ports", "Ports", ""), ("port_gbps", "Port speed", "Gb/s"),
                                     ("power_w", "Power", "W"), ("system_power_w", "System power", "W"),
                                     ("height_u", "Height", "U"), ("power_budget_kw", "Power budget", "kW")):
                if part.get(key) is not None:
                    lines.append(f"{label}: {part.number(key):,g} {unit}".rstrip())
            if part.media:
                lines.append("Media: " + ", ".join(part.media))
        return "<br>".join(lines)

    def _create_link(self, link) -> LinkItem | None:
        a, b = self.nodes.get(link.a), self.nodes.get(link.b)
        if a is None or b is None:
            return None
        item = LinkItem(link.id, link.a, link.b)
        item.detail = self.detail
        self._style_link(item, link)
        # A link lives inside the innermost container holding both ends, so moving that container
        # carries the link along with no work.
        lca = common_ancestor(a, b)
        item.set_line(link_line(a, b, lca))
        self._stage_item(item, lca)
        self.link_items[link.id] = item
        self.links_by_item.setdefault(link.a, set()).add(link.id)
        self.links_by_item.setdefault(link.b, set()).add(link.id)
        return item

    def _style_link(self, item: LinkItem, link) -> None:
        catalog = self.document.catalog
        medium = catalog.get(link.medium)
        item.tier = medium.get("tier") if medium is not None else None
        item.lanes = link.lanes
        item.utilization = self.utilization.get(link.id)
        item.bottleneck = link.id == self.bottleneck
        item.restyle()

    def _link_tooltip(self, link) -> str:
        design, catalog = self.design, self.document.catalog
        medium = catalog.get(link.medium)
        a, b = design.items.get(link.a), design.items.get(link.b)
        lines = [f"<b>{_esc(a.label if a else link.a)} — {_esc(b.label if b else link.b)}</b>",
                 f"{_esc(medium.name if medium else link.medium)} × {link.lanes} lane{'s' if link.lanes != 1 else ''}"]
        if medium is not None:
            bw = medium.number("lane_gb_per_s") * link.lanes
            lines.append(f"{bw:,.0f} GB/s per direction, {medium.number('latency_ns'):,.0f} ns")
        copies = design.link_copies(link).instances
        if copies > 1:
            lines.append(f"stands for {copies:,} physical links")
        if link.match is not None:
            ga, gb = (design.items.get(g) for g in link.match)
            problem = design.match_problem(link)
            if problem:
                lines.append(f"<span style='color:#d50000'>{_esc(problem)}</span>")
            elif ga is not None and gb is not None:
                lines.append(f"copy i of {_esc(ga.label)} ↔ copy i of {_esc(gb.label)} only")
        if link.id in self.utilization:
            lines.append(f"Utilization: {self.utilization[link.id] * 100:.0f}%")
        if link.id == self.bottleneck:
            lines.append("<b style='color:#d50000'>Bottleneck link</b>")
        return "<br>".join(lines)

    # --- mirroring document changes ------------------------------------------------------------
    def on_changed(self, change: Change) -> None:
        if change.reset or self.building:
            # An edit during a sliced build simply starts the build again from the new design.
            if change.reset:
                self.utilization, self.bottleneck = {}, None
            self.rebuild()
            return
        was, self.syncing = self.syncing, True
        design = self.design
        refit: set[str] = set()
        touched: set[str] = set()
        try:
            for link_id in change.links_removed:
                self._remove_link(link_id)
            added = [design.items[i] for i in change.items_added if i in design.items]
            depth = {i.id: len(design.ancestors(i.id)) for i in added}
            for item in sorted(added, key=lambda i: depth[i.id]):
                self._create_node(item)
                touched.add(item.id)
                if item.parent:
                    refit.add(item.parent)
            self._join_staged()
            for item_id in change.items_changed:
                item, node = design.items.get(item_id), self.nodes.get(item_id)
                if item is None or node is None:
                    continue
                old_parent = node.parentItem()
                new_parent = self.nodes.get(item.parent) if item.parent else None
                geometry = False
                if old_parent is not new_parent:
                    if isinstance(old_parent, NodeItem):
                        refit.add(old_parent.item_id)
                    node.setParentItem(new_parent)
                    if new_parent is None and node.scene() is not self:
                        self.addItem(node)
                    geometry = True
                if node.pos() != QPointF(item.x, item.y):
                    node.setPos(item.x, item.y)
                    geometry = True
                node.set_values(item.label, self._short_part(item), item.count)
                if geometry:  # a rename or a new count leaves every line where it was
                    touched.add(item_id)
                    if item.parent:
                        refit.add(item.parent)
            for item_id in change.items_removed:
                node = self.nodes.pop(item_id, None)
                if node is None:
                    continue
                parent = node.parentItem()
                if isinstance(parent, NodeItem):
                    refit.add(parent.item_id)
                for child in node.childItems():
                    if isinstance(child, LinkItem) and child.link_id in self.link_items:
                        child.setParentItem(None)  # re-homed below by _update_links_around
                        touched.update((child.a, child.b))
                if node.scene() is self:
                    if parent is not None and parent.scene() is self and parent.item_id not in change.items_removed:
                        node.setParentItem(None)
                    if parent is None or parent.item_id not in change.items_removed:
                        self.removeItem(node)
                self.links_by_item.pop(item_id, None)
            for link_id in change.links_added:
                link = design.links.get(link_id)
                if link is not None and link_id not in self.link_items:
                    self._create_link(link)
            for link_id in change.links_changed:
                link, item = design.links.get(link_id), self.link_items.get(link_id)
                if link is None or item is None:
                    continue
                if (item.a, item.b) != (link.a, link.b):
                    self._remove_link(link_id)
                    self._create_link(link)
                else:
                    self._style_link(item, link)
            self._join_staged()
            self._update_links_around(touched, self._refit(refit))
            self._grow_scene_rect(touched)
        finally:
            self.syncing = was

    def _remove_link(self, link_id: str) -> None:
        item = self.link_items.pop(link_id, None)
        if item is None:
            return
        for end in (item.a, item.b):
            s = self.links_by_item.get(end)
            if s is not None:
                s.discard(link_id)
        if item.scene() is self:
            self.removeItem(item)

    def _refit(self, ids: set[str]) -> set[str]:
        """Fit containers to their contents, deepest first, and their ancestors while they change."""
        changed: set[str] = set()
        nodes = [self.nodes[i] for i in ids if i in self.nodes]
        for node in sorted(nodes, key=self._depth, reverse=True):
            current = node
            while isinstance(current, NodeItem):
                if not current.fit_to_children() and current.item_id in changed:
                    break
                changed.add(current.item_id)
                current = current.parentItem()
        return changed

    def _update_links_around(self, ids: set[str], direct: set[str] = frozenset()) -> None:
        """Re-route the links that cross the boundary of these items' subtrees (links inside a
        moved container move with it), and the links attached to the `direct` items themselves
        (containers whose outline changed)."""
        if not ids and not direct:
            return
        subtree: set[int] = set()
        link_ids: set[str] = set()
        for i in direct:
            link_ids |= self.links_by_item.get(i, set())
        stack = [self.nodes[i] for i in ids if i in self.nodes]
        while stack:
            node = stack.pop()
            subtree.add(id(node))
            link_ids |= self.links_by_item.get(node.item_id, set())
            stack.extend(c for c in node.childItems() if isinstance(c, NodeItem))
        nodes = self.nodes
        for link_id in link_ids:
            item = self.link_items.get(link_id)
            if item is None:
                continue
            a, b = nodes.get(item.a), nodes.get(item.b)
            if a is None or b is None:
                continue
            holder = item.parentItem()
            if holder is not None and id(holder) in subtree and holder is not a and holder is not b:
                continue  # both ends inside a container that moved as a whole
            lca = common_ancestor(a, b)
            if lca is not holder:
                item.setParentItem(lca)
                if lca is None and item.scene() is not self:
                    self.addItem(item)
            item.set_line(link_line(a, b, lca))

    def _grow_scene_rect(self, ids) -> None:
        """Make room around items that moved or appeared (their outermost containers)."""
        rect = QRectF()
        for i in ids:
            node = self.nodes.get(i)
            if node is None:
                continue
            while node.parentItem() is not None:
                node = node.parentItem()
            rect = rect.united(node.sceneBoundingRect())
        if rect.isNull():
            return
        rect = rect.adjusted(-2000, -2000, 2000, 2000)
        if not self.sceneRect().contains(rect):
            self.setSceneRect(self.sceneRect().united(rect))

    def _on_selection_look(self) -> None:
        """Selected items get an orange outline (links: an orange line)."""
        try:
            selected = set(self.selectedItems())
        except RuntimeError:  # scene being destroyed
            return
        for item in self._looks - selected:
            self._set_look(item, False)
        for item in selected - self._looks:
            self._set_look(item, True)
        self._looks = selected

    @staticmethod
    def _set_look(item, on: bool) -> None:
        try:
            if isinstance(item, NodeItem):
                item.set_selected_look(on)
            elif isinstance(item, LinkItem):
                item.selected_look = on
                item.restyle()
        except RuntimeError:  # already deleted
            pass

    def set_detail(self, on: bool) -> None:
        """Show or hide text (and thin links to hairlines); a big canvas changes over several
        turns of the event loop and is painted once, when all of it has changed."""
        if on == self.detail:
            return
        self.detail = on
        self._detail_generation += 1
        items = [*self.nodes.values(), *self.link_items.values()]
        if len(items) <= self.RESTYLE_SLICE:
            self._detail_slice(items, 0, self._detail_generation)
        else:
            self._hold_painting("detail", True)
            generation = self._detail_generation
            later(lambda: self._detail_slice(items, 0, generation), self)

    def settle_styles(self) -> None:
        """Finish at once any restyle still running in slices (before rendering an export)."""
        if "detail" in self._painting_held_for:
            self._detail_generation += 1
            self._detail_slice([*self.nodes.values(), *self.link_items.values()], 0, self._detail_generation,
                               whole=True)
        if "overlay" in self._painting_held_for:
            self._restyle_generation += 1
            self._restyle_slice(list(self.link_items), 0, self._restyle_generation, whole=True)

    def _detail_slice(self, items: list, start: int, generation: int, whole: bool = False) -> None:
        if generation != self._detail_generation:
            return  # the detail changed again; that change covers every item
        on = self.detail
        for item in items[start:None if whole else start + self.RESTYLE_SLICE]:
            if isinstance(item, NodeItem):
                item.set_text_visible(on)
            else:
                item.detail = on
                item.restyle()
        if not whole and start + self.RESTYLE_SLICE < len(items):
            later(lambda: self._detail_slice(items, start + self.RESTYLE_SLICE, generation), self)
        else:
            self._hold_painting("detail", False)

    def content_rect(self) -> QRectF:
        """The drawn design's extent (containers enclose their contents; links join items)."""
        rect = QRectF()
        for node in self.nodes.values():
            if node.parentItem() is None:
                rect = rect.united(node.sceneBoundingRect())
        return rect

    def helpEvent(self, event) -> None:  # noqa: N802 - Qt override
        """Tooltips are computed when asked for, not stored on 20,000 items."""
        from PySide6.QtWidgets import QToolTip

        text = ""
        for item in self.items(event.scenePos()):
            if isinstance(item, LinkItem) and item.link_id in self.design.links:
                text = self._link_tooltip(self.design.links[item.link_id])
                break
            if isinstance(item, NodeItem) and item.item_id in self.design.items:
                text = self._node_tooltip(self.design.items[item.item_id])
                break
        if text:
            QToolTip.showText(event.screenPos(), text, event.widget())
            event.setAccepted(True)
        else:
            QToolTip.hideText()
            event.setAccepted(False)

    def tooltip_for(self, element_id: str) -> str:
        if element_id in self.design.links:
            return self._link_tooltip(self.design.links[element_id])
        return self._node_tooltip(self.design.items[element_id])

    # --- interactive moves ------------------------------------------------------------------------
    def snap(self, value: QPointF) -> QPointF:
        if not self.snap_enabled or self._alt_held:
            return value
        return QPointF(round(value.x() / GRID) * GRID, round(value.y() / GRID) * GRID)

    def node_moved(self, node: NodeItem) -> None:
        """While dragging: keep links attached and the containers around the moved item fitted."""
        parent = node.parentItem()
        refit = self._refit({parent.item_id}) if isinstance(parent, NodeItem) else set()
        self._update_links_around({node.item_id}, refit)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._alt_held = bool(event.modifiers() & Qt.KeyboardModifier.AltModifier)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._alt_held = bool(event.modifiers() & Qt.KeyboardModifier.AltModifier)
        grabber = self.mouseGrabberItem()
        if not (event.buttons() & Qt.MouseButton.LeftButton) or not isinstance(grabber, NodeItem):
            super().mouseMoveEvent(event)
            return
        before = {n: n.pos() for n in self.selectedItems() if isinstance(n, NodeItem)}
        super().mouseMoveEvent(event)  # Qt moves the selected items from where the drag began
        moved = [n for n, p in before.items() if n.pos() != p]
        # The item under the mouse lands on the grid; the others keep their offsets from it.
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

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().mouseReleaseEvent(event)
        self.commit_moves(event.scenePos() if event.button() == Qt.MouseButton.LeftButton else None)

    def commit_moves(self, release_at: QPointF | None = None) -> None:
        """Turn the positions the user dragged items to into one undo step. Items released over
        another container that accepts them (a server dragged onto a rack) move inside it."""
        from dataclasses import replace as _replace

        design = self.design
        ops = []
        moved_ids = []
        for node in self.selectedItems():
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
                old_copies = design.multiplicity(item.parent) if item.parent else 1
                new_copies = design.multiplicity(new_parent) if new_parent else 1
                if new_parent != item.parent and new_copies != old_copies:
                    # Moving in or out of a replicated group would silently change the hardware.
                    where = design.items[new_parent].label if new_parent else "the top level"
                    self.message.emit(f"Not moved into {where}: that would change how many copies of "
                                      f"{item.label} there are (×{old_copies:,} → ×{new_copies:,}); "
                                      "use Cut and Paste")
                elif new_parent != item.parent:
                    local = self.snap(target.mapFromScene(node.scenePos()) if target is not None else node.scenePos())
                    parent_id, x, y = new_parent, local.x(), local.y()
            ops.append(("update_item", item, _replace(item, parent=parent_id, x=float(x), y=float(y))))
        if not ops:
            return
        reparented = sum(1 for op in ops if op[1].parent != op[2].parent)
        count = len(ops)
        text = f"Move {count} items" if count > 1 else "Move item"
        if reparented:
            where = self.design.items[ops[0][2].parent].label if ops[0][2].parent else "the top level"
            text = f"Move into {where}"
        if not self.document.apply(ops, text):
            self._restore_positions(moved_ids)
        elif reparented:
            self.message.emit(f"Moved {reparented} item{'s' if reparented > 1 else ''} into {where}")

    def _drop_target(self, node: NodeItem, scene_pos: QPointF):
        """The container under the release point that accepts this node (None: the top level), or
        False to keep the current parent (nothing accepting there, or it is its own container)."""
        allowed = ALLOWED_PARENTS.get(node.kind, ())
        for candidate in self.items(scene_pos):
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
        was, self.syncing = self.syncing, True
        for item_id in ids:
            node, item = self.nodes.get(item_id), self.design.items.get(item_id)
            if node is not None and item is not None:
                node.setPos(item.x, item.y)
        self._update_links_around(set(ids))
        self.syncing = was

    # --- selection helpers --------------------------------------------------------------------------
    def selected_ids(self) -> list[str]:
        return [n.item_id for n in self.selectedItems() if isinstance(n, NodeItem)]

    def selected_link_ids(self) -> list[str]:
        return [l.link_id for l in self.selectedItems() if isinstance(l, LinkItem)]

    def select_ids(self, ids) -> None:
        self.clearSelection()
        for i in ids:
            item = self.nodes.get(i) or self.link_items.get(i)
            if item is not None:
                item.setSelected(True)

    def node_at(self, scene_pos: QPointF, exclude=()) -> NodeItem | None:
        for item in self.items(scene_pos):
            if isinstance(item, NodeItem) and item not in exclude:
                return item
        return None

    # --- drops --------------------------------------------------------------------------------------
    def container_for(self, kind: str, scene_pos: QPointF) -> NodeItem | None:
        allowed = ALLOWED_PARENTS.get(kind, ())
        for item in self.items(scene_pos):
            if isinstance(item, NodeItem) and item.container and item.kind in allowed:
                return item
        return None

    def drop_part(self, part_id: str, scene_pos: QPointF, count: int | None = None) -> list[str]:
        """Create a catalogue part where it was dropped (inside the rack or server under it);
        with a count, inside a new replicated group. Returns the created top item ids."""
        catalog, design = self.document.catalog, self.design
        part = catalog.get(part_id)
        if part is None or part.kind == "medium":
            self.message.emit(f"'{part_id}' is not a part that can be placed")
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
                self.message.emit(f"A {kind} cannot be replicated in a group; place it inside a server")
                return []
            group_id = scratch.new_id("group")
            scratch.add_item(Item(group_id, "group", name=f"{count:,} × {part.name}", parent=parent_id, x=x, y=y,
                                  count=count))
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
            self.message.emit(f"Cannot place {part.name}: {exc}")
            return []
        new_items = [i for i_id, i in scratch.items.items() if i_id not in design.items]
        new_links = [l for l_id, l in scratch.links.items() if l_id not in design.links]
        text = f"Add {count} × {part.name}" if count else f"Add {part.name}"
        if not self.document.add_items(new_items, new_links, text):
            return []
        created = group_id or top
        self.select_ids([created])
        where = f" inside {design.items[container.item_id].label}" if container is not None else ""
        self.message.emit(f"Added {part.name}{where}")
        return [created]

    def _default_name(self, kind: str, design: Design, part) -> str:
        n = sum(1 for i in design.items.values() if i.kind == kind)
        short = {"accelerator": "GPU", "nic": "NIC", "cpu": "CPU", "switch": "Switch", "rack": "Rack"}[kind]
        return f"{short} {n}"

    # --- links -----------------------------------------------------------------------------------------
    def link_options(self, a_id: str, b_id: str) -> tuple[list[str], str | None]:
        """The media both ends support, or a reason why they cannot be linked."""
        design, catalog = self.design, self.document.catalog
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
            self.message.emit(reason)
            return None
        catalog = self.document.catalog
        if len(shared) == 1:
            medium = shared[0]
        else:
            options = [(m, catalog[m].name) for m in shared]
            chooser = self.choose_medium
            if chooser is None:
                return None
            medium = chooser(options, f"{self.design.items[a_id].label} — {self.design.items[b_id].label}")
            if medium is None:
                self.message.emit("Link cancelled")
                return None
        lanes = 1
        medium_part = catalog.get(medium)
        if medium_part is not None and medium_part.get("family") in ("pcie", "fabrex"):
            lanes = 16
        link_id = self.document.add_link(a_id, b_id, medium, lanes)
        if link_id:
            self.message.emit(f"Linked {self.design.items[a_id].label} — {self.design.items[b_id].label} over "
                              f"{catalog[medium].name}")
        return link_id

    # --- results overlay --------------------------------------------------------------------------------
    def apply_result(self, result: Any) -> None:
        """Colour links by utilization and emphasise the bottleneck (when the result has them).
        Large designs are restyled in slices so the UI keeps breathing."""
        util, bottleneck = utilization_of(result)
        if util == self.utilization and bottleneck == self.bottleneck:
            return
        stale = list(set(self.utilization) | set(util) | ({self.bottleneck, bottleneck} - {None}))
        self.utilization, self.bottleneck = util, bottleneck
        self._restyle_generation += 1
        if len(stale) > self.RESTYLE_SLICE:
            # Repainting after every slice would redraw the whole canvas each time; paint once.
            self._hold_painting("overlay", True)
            generation = self._restyle_generation
            later(lambda: self._restyle_slice(stale, 0, generation), self)
        else:
            self._restyle_slice(stale, 0, self._restyle_generation)

    def _hold_painting(self, job: str, hold: bool) -> None:
        """Painting a canvas half-way through a long sliced job (a build, a restyle) would cost
        more than the job; the views paint again once no job holds them."""
        if hold:
            self._painting_held_for.add(job)
        else:
            self._painting_held_for.discard(job)
        for view in self.views():
            view.viewport().setUpdatesEnabled(not self._painting_held_for)

    RESTYLE_SLICE = 1500

    def _restyle_slice(self, ids: list, start: int, generation: int, whole: bool = False) -> None:
        if generation != self._restyle_generation:
            return  # a newer result is being applied
        util, bottleneck, items = self.utilization, self.bottleneck, self.link_items
        for link_id in ids[start:None if whole else start + self.RESTYLE_SLICE]:
            item = items.get(link_id)
            if item is not None:
                item.utilization = util.get(link_id)
                item.bottleneck = link_id == bottleneck
                item.restyle()
        if not whole and start + self.RESTYLE_SLICE < len(ids):
            later(lambda: self._restyle_slice(ids, start + self.RESTYLE_SLICE, generation), self)
        else:
            self._hold_painting("overlay", False)


def utilization_of(result: Any) -> tuple[dict[str, float], str | None]:
    """Per-link utilization (0..1, the peak over the result's phases) and the bottleneck link id
    (of the largest collective the engine chose an algorithm for), from whatever the result has."""
    def get(mapping, key, default=None):
        try:
            return mapping.get(key, default)
        except AttributeError:
            return default

    util = get(result, "utilization")
    out: dict[str, float] = {}

    def take(rows) -> None:
        if hasattr(rows, "items"):
            rows = ({"link": k, "utilization": v} for k, v in rows.items())
        for row in rows or ():
            value = row if isinstance(row, (int, float)) else next(
                (get(row, k) for k in ("utilization", "max", "value") if get(row, k) is not None), None)
            link_id = get(row, "link") or get(row, "id")
            if link_id is not None and isinstance(value, (int, float)):
                out[str(link_id)] = max(out.get(str(link_id), 0.0), float(value))

    if util:
        for phase in get(util, "phases", ()) or ():
            take(get(phase, "links"))
        for key in ("links", "per_link"):
            take(get(util, key))
    bottleneck = None
    for key in ("bottleneck", "bottleneck_link"):
        if util and get(util, key):
            bottleneck = get(util, key)
    if bottleneck is None:
        rows = [r for r in (get(result, "collectives") or ()) if hasattr(r, "get") and r.get("algorithm") == "auto"]
        if rows:
            biggest = max(rows, key=lambda r: r.get("bytes") or 0)
            bottleneck = biggest.get("bottleneck")
    if hasattr(bottleneck, "get"):
        bottleneck = bottleneck.get("link")
    if bottleneck is None and out:
        bottleneck = max(out, key=out.get)
    return out, (str(bottleneck) if bottleneck else None)


def _esc(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
