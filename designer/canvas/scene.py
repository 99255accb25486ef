"""The scene mirrors the document: it creates, updates and removes only the graphics items a
change names, keeps the id → item maps, and shows the last result's overlay (link utilization,
the bottleneck). What gestures become is `interactions`; tooltips are `tooltips`; long work runs
in slices through `jobs`."""

from __future__ import annotations

import threading
from typing import Any
from collections.abc import Callable, Iterator

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsScene, QToolTip

from designer.canvas import colors, tooltips
from designer.canvas.interactions import Interactions
from designer.canvas.items import (LIFTED_LABEL_Z, LIFTED_Z, BoxIndex, LinkItem, NodeItem, common_ancestor,
                                   label_layer, link_line, runs_over_boxes)
from designer.canvas.jobs import SlicedJobs
from designer.document.document import Change, Document
from designer.engine import views
from designer.engine.failures import BLAST_CONNECTIVITY_MAX_ITEMS, BlastIndex, BlastRadius
from designer.model.design import Design, Item
from designer.model.edits import outermost

# A design with more drawn items than this is built over several turns of the event loop, each
# at most SLICE_S long, so opening a big design never freezes the window; the old design's items
# are removed the same way.
BUILD_IN_ONE_GO = 60
SLICE_S = 0.02
# Restyling more items than this (a result's utilization, text on or off) is done in slices of
# SLICE_S, one per turn.
RESTYLE_SLICE = 1500
# Below this zoom, a container smaller on screen than CARD_W × CARD_H pixels (too small for its
# contents to be read) is drawn as a summary card, its contents hidden.
CARD_SCALE = 0.6
CARD_W, CARD_H = 360, 160

# A change adding or removing more drawn items and links than this (Undo of a big Delete, a big
# Paste or Ungroup) is mirrored by building the scene again in slices, as opening a design is.
MIRROR_IN_ONE_GO = 400
# The jobs that restyle items already drawn (an export's picture shows them all done).
RESTYLE_JOBS = ("detail", "overlay", "look", "cards", "restack")


class DesignScene(QGraphicsScene):
    message = Signal(str)  # for the status bar
    built = Signal()  # the scene mirrors the whole design (after a reset)
    blastReady = Signal()  # a big design's blast-radius index was built off the UI thread
    _blastBuilt = Signal(int, object)  # (generation, BlastIndex), from the helper thread

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.document = document
        self.nodes: dict[str, NodeItem] = {}
        self.link_items: dict[str, LinkItem] = {}
        self.links_by_item: dict[str, set[str]] = {}
        self.detail = True  # text shown (off when zoomed out too far to read it)
        self.scale = 1.0  # the view's zoom, which decides which containers are summary cards
        # While an export forces full detail: the view's own (text on, zoom), to go back to.
        self._full_detail_for: tuple[bool, float] | None = None
        self._full_detail_holds = 0  # the exports under way that asked for full detail
        self._summaries: dict[str, tuple[str, list[str]]] = {}  # card texts, until the design or result changes
        self._looks: set = set()  # items drawn with the selection look
        self.utilization: dict[str, float] = {}
        self.overlay_phase: str | None = None  # the phase the overlay shows; None: each link's busiest
        self.bottleneck: str | None = None
        self.interactions = Interactions(self)
        self.jobs = SlicedJobs(self)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.setBackgroundBrush(QColor(colors.CANVAS_BACKGROUND))
        self.building = False
        self._doomed: list = []  # the old design's items, waiting to be removed
        # New items are painted once on a stage of their own before they join the canvas (see
        # _join_staged); each waits there with the parent it will join (None: the top level).
        self._stage = QGraphicsScene(self)
        self._stage.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self._staged: list[tuple[Any, Any]] = []
        self._pending_selection: list[str] = []  # chosen while a sliced build runs; selected when it ends
        # Items and links marked failed (settings["failures"]; a medium's mark marks its links), drawn struck through.
        self.failed: set[str] = set()
        self.partly_failed: set[str] = set()  # those of them marked failed in only some of their copies
        self._blast: dict[str, BlastRadius] = {}  # blast radius by item, until the design changes
        self._blast_index: BlastIndex | None = None
        self._blast_generation = 0  # a change makes an index being built off the UI thread stale
        self._blast_building: int | None = None  # the generation whose index the helper thread builds
        self._blastBuilt.connect(self._blast_built, Qt.ConnectionType.QueuedConnection)
        # Items and links selected though a summary card hides them (Qt selects only what is shown),
        # by id: they stay selected while a card holding them is.
        self._hidden_items: set[str] = set()
        self._hidden_links: set[str] = set()
        self.labels = label_layer()  # every box's label plate, above the links (items.LABEL_Z)
        self.addItem(self.labels)
        # What a drag moves, lifted above everything else while it lasts (`lift`, `land`).
        self._lifted_boxes, self._lifted_labels = label_layer(LIFTED_Z), label_layer(LIFTED_LABEL_Z)
        self.addItem(self._lifted_boxes)
        self.addItem(self._lifted_labels)
        self._lifted: list[tuple[NodeItem, NodeItem | None]] = []  # (box, the container it came from)
        self._lifted_links: list[tuple[LinkItem, NodeItem | None, QLineF]] = []  # (link, holder, line there)
        document.changed.connect(self.on_changed)
        self.selectionChanged.connect(self._on_selection_look)
        self.rebuild()

    # --- building -------------------------------------------------------------------------
    @property
    def design(self) -> Design:
        return self.document.design

    def rebuild(self) -> None:
        """Mirror the whole design again: at once for small designs, in slices for big ones."""
        # Restyles under way stop: the new items are created in the current style.
        self.jobs.stop("detail")
        self.jobs.stop("overlay")
        self.jobs.stop("cards")
        self.jobs.stop("restack")
        self._summaries = {}
        self.jobs.stop("look")
        self.land()
        self._looks = set()  # the old items go, selected look and all
        self._hidden_items, self._hidden_links = set(), set()
        self.clearSelection()
        top_level = [i for i in (*self.nodes.values(), *self.link_items.values()) if i.parentItem() is None]
        self._discard(top_level + [i.plate for i in top_level if isinstance(i, NodeItem)])
        self.nodes.clear()
        self.link_items.clear()
        self.links_by_item.clear()
        self._stage.clear()
        self._staged = []
        self.building = True
        self._links_restacked = False
        if len(self.design.items) > BUILD_IN_ONE_GO:
            # Painting a half-built scene after every slice would cost more than the slice itself.
            self.jobs.start("build", self._build_steps(), slice_s=SLICE_S, hold=True, after_slice=self._join_staged)
        else:
            self.jobs.start("build", self._build_steps())

    def _discard(self, top_level: list) -> None:
        """Take the old design's items off the canvas a few hundred at a time: deleting thousands
        of items in one go holds the UI thread for longer than a frame should take."""
        for item in top_level:
            item.setVisible(False)
        self._doomed += top_level
        if self._doomed and not self.jobs.running("discard"):
            self.jobs.start("discard", self._discard_steps(), slice_s=SLICE_S)

    def _discard_steps(self) -> Iterator[None]:
        while self._doomed:
            item = self._doomed.pop()
            self.removeItem(item)
            del item  # the last reference: Qt deletes the item and its children
            yield

    def _build_steps(self) -> Iterator[None]:
        for item in self.design.walk_ordered_items():
            self._create_node(item)
            yield
        self._join_staged()
        yield
        # Created parents first: backwards, every container's contents are fitted before it is.
        for node in reversed(list(self.nodes.values())):
            node.fit_to_children()
            yield
        for link in list(self.design.links.values()):
            self._create_link(link)
            yield
        self._join_staged()
        yield
        self.setSceneRect(self.content_rect().adjusted(-2000, -2000, 2000, 2000))
        yield
        self.building = False
        if self._pending_selection:
            pending, self._pending_selection = self._pending_selection, []
            self.select_ids(pending)
        self.refresh_cards()
        self.built.emit()

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
        if item.id in self.failed:
            node.set_failed(True, item.id in self.partly_failed)
        if not self.detail:
            node.set_text_visible(False)
        self.nodes[item.id] = node
        parent = self.nodes.get(item.parent) if item.parent else None
        self._stage_item(node, parent)
        self._stage_item(node.plate, parent.plate if parent is not None else self.labels)
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
        item.set_line(link_line(self.shown_node(a), self.shown_node(b), lca))
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
        item.failed = link.id in self.failed
        item.failed_partly = link.id in self.partly_failed
        item.restyle()

    # --- mirroring document changes ------------------------------------------------------------
    def on_changed(self, change: Change) -> None:
        self._blast, self._blast_index = {}, None
        self._blast_generation += 1
        if change.reset or "failures" in change.settings_changed:
            self.show_failures()
            self._summaries = {}  # a card says how many failed parts it hides
        big = (len(change.items_added) + len(change.links_added) > MIRROR_IN_ONE_GO
               or len(change.items_removed) + len(change.links_removed) > MIRROR_IN_ONE_GO)
        if change.reset or self.building or big:
            # An edit during a sliced build simply starts the build again from the new design.
            if change.reset:
                self.utilization, self.bottleneck = {}, None
                self._pending_selection = []
            self.rebuild()
            return
        # Qt announces a removed selected item, one signal each; the handlers hear it once, after.
        self.blockSignals(True)
        try:
            self._mirror(change)
        finally:
            self.blockSignals(False)
        if change.items_removed or change.links_removed:
            self.selectionChanged.emit()

    def _mirror(self, change: Change) -> None:
        design = self.design
        refit: set[str] = set()
        touched: set[str] = set()
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
        # Only moves within their containers (a drag, a nudge): what each card holds and says stays.
        moves_only = not (change.items_added or change.items_removed or change.links_added
                          or change.links_removed or change.links_changed)
        for item_id in change.items_changed:
            item, node = design.items.get(item_id), self.nodes.get(item_id)
            if item is None or node is None:
                continue
            old_parent = node.parentItem()
            new_parent = self.nodes.get(item.parent) if item.parent else None
            geometry = False
            if old_parent is not new_parent:
                moves_only = False
                if isinstance(old_parent, NodeItem):
                    refit.add(old_parent.item_id)
                node.setParentItem(new_parent)
                node.join_labels(new_parent.plate if new_parent is not None else self.labels)
                if new_parent is None and node.scene() is not self:
                    self.addItem(node)
                geometry = True
            if node.pos() != QPointF(item.x, item.y):
                node.setPos(item.x, item.y)
                geometry = True
            values = (item.label, self._short_part(item), item.count)
            if values != (node.label, node.part_name, node.count):
                moves_only = False
                node.set_values(*values)
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
                    child.setParentItem(None)  # re-homed below by update_links_around
                    touched.update((child.a, child.b))
            if node.scene() is self:
                if parent is not None and parent.scene() is self and parent.item_id not in change.items_removed:
                    node.setParentItem(None)
                if parent is None or parent.item_id not in change.items_removed:
                    self.removeItem(node)
                    node.join_labels(None)
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
        self.update_links_around(touched, self.refit(refit))
        self._grow_scene_rect(touched)
        if not moves_only:
            self._summaries = {}
        if touched or change.items_changed:
            # A box that moved may now be in a link's way, or out of it; a drag's release finds
            # the boxes already where the model puts them, so a move counts even untouched here.
            self._links_restacked = False
        self.refresh_cards(contents_changed=not moves_only)

    def _remove_link(self, link_id: str) -> None:
        item = self.link_items.pop(link_id, None)
        if item is None:
            return
        for end in (item.a, item.b):
            s = self.links_by_item.get(end)
            if s is not None:
                s.discard(link_id)
        item.drop_tails()
        if item.scene() is self:
            self.removeItem(item)

    def refit(self, ids: set[str]) -> set[str]:
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

    def update_links_around(self, ids: set[str], direct: set[str] = frozenset()) -> None:
        """Re-route the links that cross the boundary of these items' subtrees (links inside a
        moved container move with it), and the links attached to the `direct` items themselves
        (containers whose outline changed)."""
        self.reroute(self.links_around(ids, direct))

    def links_around(self, ids: set[str], direct: set[str] = frozenset(),
                     subtree_of: dict[str, str] | None = None) -> list[LinkItem]:
        """The links `update_links_around` re-routes: those with an end inside the subtree of one
        of `ids` and the other end outside it (a link with both ends inside one subtree is drawn
        inside it and moves along), and those attached to a `direct` item. Read from the model,
        which holds the same containment as the scene, in one pass: a drag of everything asks
        once, then moves these on every mouse move. `subtree_of`: `subtrees(ids)` if known."""
        link_ids: set[str] = set()
        for i in direct:
            link_ids |= self.links_by_item.get(i, set())
        subtree_of = subtree_of if subtree_of is not None else self.subtrees(ids)
        if 2 * len(subtree_of) > len(self.nodes):  # most of the design (a drag of everything): each link once
            get = subtree_of.get
            crossing = [item for item in self.link_items.values() if get(item.a) != get(item.b)]
            return crossing + [self.link_items[i] for i in link_ids - {item.link_id for item in crossing}
                               if i in self.link_items]
        for item_id in subtree_of:
            for link_id in self.links_by_item.get(item_id, ()):
                if link_id not in link_ids:
                    item = self.link_items.get(link_id)
                    if item is not None and subtree_of.get(item.a) != subtree_of.get(item.b):
                        link_ids.add(link_id)
        return [self.link_items[i] for i in link_ids if i in self.link_items]

    def subtrees(self, ids) -> dict[str, str]:
        """Every item inside one of `ids` (or one of them), mapped to the outermost of `ids`
        holding it."""
        design = self.design
        subtree_of: dict[str, str] = {}
        if ids:
            index = design.children_index()
            for root in outermost(design, ids):
                subtree_of[root] = root
                for inner in design.descendants(root, index):
                    subtree_of[inner.id] = root
        return subtree_of

    def reroute(self, links: list[LinkItem], rehome: bool = True) -> None:
        """Draw these links between their ends again, in the innermost container holding both
        (`rehome=False`: in the one holding them now, while a drag leaves containment as it is)."""
        nodes = self.nodes
        for item in links:
            a, b = nodes.get(item.a), nodes.get(item.b)
            if a is None or b is None:
                continue
            holder = item.parentItem()
            if not rehome:
                item.set_line(link_line(self.shown_node(a), self.shown_node(b), holder))
                continue
            lca = common_ancestor(a, b)
            if lca is not holder:
                item.setParentItem(lca)
                if lca is None and item.scene() is not self:
                    self.addItem(item)
            item.set_line(link_line(self.shown_node(a), self.shown_node(b), lca))

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
        """Selected items get an orange outline (links: an orange line); thousands at once (Select
        All on a big design) change a slice per turn, painted once when all have."""
        try:
            selected = set(self.selectedItems())
        except RuntimeError:  # scene being destroyed
            return
        self.jobs.finish("look")  # the look the last change asked for is complete before this one
        changes = [(item, False) for item in self._looks - selected] + [(item, True) for item in selected - self._looks]
        self._looks = selected
        self._restyle("look", changes, lambda change: self._set_look(*change))

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

    # --- text on or off, and the results overlay --------------------------------------------------
    def set_detail(self, on: bool) -> None:
        """Show or hide text (and thin links to hairlines); a big canvas changes over several
        turns of the event loop and is painted once, when all of it has changed."""
        if self._full_detail_for is not None:  # an export draws everything: the view's wish waits
            self._full_detail_for = (on, self._full_detail_for[1])
            return
        if on == self.detail:
            return
        self.detail = on
        self._restyle("detail", [*self.nodes.values(), *self.link_items.values()], self._show_detail)

    def _show_detail(self, item: NodeItem | LinkItem) -> None:
        if isinstance(item, NodeItem):
            item.set_text_visible(self.detail)
        else:
            item.detail = self.detail
            item.restyle()

    def apply_result(self, result: Any, phase: str | None = None) -> None:
        """Colour links by their utilization in `phase` (None: each link at its busiest phase) and
        emphasise the bottleneck of the largest collective the engine chose an algorithm for."""
        self._show_utilization(views.link_utilization(result, phase), views.bottleneck_link(result), phase)

    def clear_result(self) -> None:
        """No result (the evaluation failed): links lose their utilization colours and the bottleneck."""
        self._show_utilization({}, None, self.overlay_phase)

    def _show_utilization(self, util: dict, bottleneck: str | None, phase: str | None) -> None:
        self.overlay_phase = phase
        if util == self.utilization and bottleneck == self.bottleneck:
            return
        stale = list(set(self.utilization) | set(util) | ({self.bottleneck, bottleneck} - {None}))
        self.utilization, self.bottleneck = util, bottleneck
        self._restyle("overlay", stale, self._show_overlay)
        self._summaries = {}
        self.refresh_cards()

    def _show_overlay(self, link_id: str) -> None:
        item = self.link_items.get(link_id)
        if item is not None:
            item.utilization = self.utilization.get(link_id)
            item.bottleneck = link_id == self.bottleneck
            item.restyle()

    def _restyle(self, job: str, targets: list, restyle: Callable[[Any], None]) -> None:
        """Small restyles happen at once; big ones a slice per turn, painted once when done. A
        newer restyle of the same kind replaces the one under way (it covers every item)."""
        steps = (restyle(target) for target in targets)
        if len(targets) > RESTYLE_SLICE:
            self.jobs.start(job, steps, slice_s=SLICE_S, hold=True)
        else:
            self.jobs.start(job, steps)

    def settle_styles(self) -> None:
        """Finish at once any restyle still running in slices (before rendering an export)."""
        for job in RESTYLE_JOBS:
            self.jobs.finish(job)

    def restyling(self) -> bool:
        """Whether a restyle is still running in slices (an export waits for it to end)."""
        return any(self.jobs.running(job) for job in RESTYLE_JOBS)

    def show_selected_quietly(self, elements, selected: bool) -> None:
        """Select or deselect these shown items and links, look included, without telling the
        selection's handlers: an export takes the selection out of its picture a slice at a time
        and puts it back the same way, and for everything else the selection never changed."""
        looks = self._looks
        self.blockSignals(True)
        try:
            for element in elements:
                try:
                    element.setSelected(selected)
                    shown_selected = element.isSelected()  # Qt selects nothing hidden
                except RuntimeError:  # deleted since
                    continue
                self._set_look(element, shown_selected)
                if shown_selected:
                    looks.add(element)
                else:
                    looks.discard(element)
        finally:
            self.blockSignals(False)

    # --- level of detail: containers too small on screen draw as summary cards -------------------------
    def set_scale(self, scale: float) -> None:
        """The view's zoom changed: decide again which containers are cards (and size their text)."""
        if self._full_detail_for is not None:
            self._full_detail_for = (self._full_detail_for[0], scale)
            return
        if scale != self.scale:
            self.scale = scale
            self.refresh_cards()

    def force_full_detail(self, on: bool) -> None:
        """An export shows every GPU, NIC, link and label whatever the canvas's zoom: text on, full
        link widths, no summary card. Off, the view's level of detail (its latest zoom) comes back
        once every export that asked for full detail (an SVG made while a PNG is drawn) has let go.
        Both switches run as restyles do (in slices on a big design: wait for `restyling()`)."""
        self._full_detail_holds = max(0, self._full_detail_holds + (1 if on else -1))
        if (self._full_detail_holds > 0) == (self._full_detail_for is not None):
            return
        if on:
            wanted = (self.detail, self.scale)
            self.set_detail(True)
            self.set_scale(max(self.scale, 1.0))
            self._full_detail_for = wanted
        else:
            (detail, scale), self._full_detail_for = self._full_detail_for, None
            self.set_detail(detail)
            self.set_scale(scale)

    def is_card(self, node: NodeItem) -> bool:
        rect = node.rect()
        return (node.container and self.scale < CARD_SCALE
                and (rect.width() * self.scale < CARD_W or rect.height() * self.scale < CARD_H))

    def shown_node(self, node: NodeItem) -> NodeItem:
        """The node, or the outermost summary card holding it (where its links are drawn to)."""
        shown, parent = node, node.parentItem()
        while parent is not None:
            if isinstance(parent, NodeItem) and parent.card:
                shown = parent
            parent = parent.parentItem()
        return shown

    def refresh_cards(self, contents_changed: bool = False) -> None:
        """Turn containers into cards or back, a slice per turn for a big design (painted once,
        when done), then route the links that end inside a card to the card."""
        if self.building:
            return  # the build refreshes them when it ends
        containers = sorted((n for n in self.nodes.values() if n.container), key=self._depth)
        if not containers:
            return
        steps = self._card_steps(containers, contents_changed)
        if len(containers) + len(self.link_items) > RESTYLE_SLICE:
            # By time, not steps: a card's step (its summary written) costs tens of a link's.
            self.jobs.start("cards", steps, slice_s=SLICE_S, hold=True)
        else:
            self.jobs.start("cards", steps)

    def _card_steps(self, containers: list[NodeItem], contents_changed: bool) -> Iterator[None]:
        """Outer containers first, so that a card's text is written only when no outer card hides it."""
        flipped: set[str] = set()
        hidden = False
        index = None
        for node in containers:
            card = self.is_card(node)
            if card != node.card:
                flipped.add(node.item_id)
                hidden = hidden or card
                if card and node.isSelected():
                    self._hide_selection(self._selected_inside(node))
            # Qt deselects each selected item a card hides, one signal each (and every handler
            # reads the whole selection): the handlers hear it once, when the cards are done.
            self.blockSignals(True)
            try:
                node.set_card(card, contents_changed)
            finally:
                self.blockSignals(False)
            if card and node.isVisible():
                if node.item_id not in self._summaries:
                    index = index if index is not None else self.design.children_index()
                    self._summaries[node.item_id] = self._summary(node.item_id, index)
                title, lines = self._summaries[node.item_id]
                node.set_card_text(title, lines, self.scale)
            yield
        if flipped:
            # Every link with an end inside a container that became a card (or stopped being one)
            # now ends somewhere else, the links inside it too.
            index = index if index is not None else self.design.children_index()
            yield
            link_ids: set[str] = set()
            for item_id in flipped:
                link_ids |= self.links_by_item.get(item_id, set())
                for inner in self.design.descendants(item_id, index):
                    link_ids |= self.links_by_item.get(inner.id, set())
                yield
            for link_id in link_ids:
                if link_id in self.link_items:
                    self.reroute([self.link_items[link_id]])
                    yield
            self._show_hidden_selection()
        if flipped or contents_changed or not self._links_restacked:
            self._restack_links()
        if hidden:
            self.selectionChanged.emit()

    def _restack_links(self) -> None:
        """Put beneath the boxes beside it each link that would run over a box it does not join
        (`items.runs_over_boxes`): once a design is built, after each change, and when summary
        cards open or close (links then end elsewhere). A job of its own, in slices for a big
        design and painting as it goes: a link left on top for a few frames does no harm, a
        canvas that stops painting for the whole pass would."""
        self._links_restacked = True
        steps = self._restack_link_steps()
        if len(self.nodes) + len(self.link_items) > RESTYLE_SLICE:
            self.jobs.start("restack", steps, slice_s=SLICE_S)
        else:
            self.jobs.start("restack", steps)

    def _restack_link_steps(self) -> Iterator[None]:
        boxes = BoxIndex()
        for node in list(self.nodes.values()):
            boxes.add(node)
            yield
        nodes, shown = self.nodes, self.shown_node
        for link in list(self.link_items.values()):
            a, b = nodes.get(link.a), nodes.get(link.b)
            if a is not None and b is not None and link.isVisible():
                ends = (shown(a), shown(b))
                link.set_over_boxes(runs_over_boxes(link, *ends, boxes), ends)
            yield

    def _summary(self, item_id: str, index: dict) -> tuple[str, list[str]]:
        busiest = None
        if self.utilization:
            link_ids = set(self.links_by_item.get(item_id, ()))
            for child in self.design.descendants(item_id, index):
                link_ids |= self.links_by_item.get(child.id, set())
            loads = [self.utilization[i] for i in link_ids if i in self.utilization]
            busiest = max(loads) if loads else None
        return tooltips.card_summary(self.design.items[item_id], self.design, self.document.catalog, index, busiest,
                                     self._failed_inside(item_id, index))

    def _failed_inside(self, item_id: str, index: dict) -> int:
        """How many items and links a card hides that a what-if marks failed (their strikes are
        hidden). A walk of the card's contents, as its other lines take: Select All ▸ Fail on a big
        flat design marks tens of thousands, and thousands of its servers are cards."""
        failed = self.failed
        if not failed:
            return 0
        inside = {child.id for child in self.design.descendants(item_id, index)}
        links = self.design.links
        hidden_links = {link_id for i in inside for link_id in self.links_by_item.get(i, ())
                        if link_id in failed and links[link_id].a in inside and links[link_id].b in inside}
        return sum(1 for i in inside if i in failed) + len(hidden_links)

    def content_rect(self) -> QRectF:
        """The drawn design's extent (containers enclose their contents; links join items)."""
        rect = QRectF()
        nodes = self.nodes
        # The top-level items, found in the model: asking 20,000 canvas items for their parent
        # takes several times longer.
        for item_id, item in self.design.items.items():
            if item.parent is None and item_id in nodes:
                rect = rect.united(nodes[item_id].sceneBoundingRect())
        return rect

    # --- failure what-if -------------------------------------------------------------------------
    def show_failures(self) -> None:
        """Strike through what the design marks failed (dashed where only some copies are; a
        link medium's mark marks its links), and restore what it no longer does."""
        failed, partly = tooltips.drawn_failures(self.design)
        for target in (failed ^ self.failed) | (partly ^ self.partly_failed):
            on = target in failed
            node = self.nodes.get(target)
            if node is not None:
                node.set_failed(on, target in partly)
            link = self.link_items.get(target)
            if link is not None:
                link.failed, link.failed_partly = on, target in partly
                link.restyle()
        self.failed, self.partly_failed = failed, partly

    def blast_radius(self, item_id: str) -> BlastRadius | None:
        """What failing one copy of an item would do, cached until the design changes; None while
        a big design's index is built on a helper thread (`blastReady` says when to ask again)."""
        hit = self._blast.get(item_id)
        if hit is None:
            index = self._blast_index
            if index is None:
                if len(self.design.items) > BLAST_CONNECTIVITY_MAX_ITEMS:
                    self._build_blast_index()
                    return None
                index = self._blast_index = BlastIndex(self.design)
            hit = self._blast[item_id] = index.radius(item_id)
        return hit

    def _build_blast_index(self) -> None:
        if self._blast_building == self._blast_generation:
            return
        generation = self._blast_building = self._blast_generation
        snapshot = self.design.snapshot()

        threading.Thread(target=lambda: self._blastBuilt.emit(generation, BlastIndex(snapshot)),
                         name="blast-radius", daemon=True).start()

    def _blast_built(self, generation: int, index: BlastIndex) -> None:
        if generation == self._blast_generation:
            self._blast_index = index
            self.blastReady.emit()

    # --- tooltips ---------------------------------------------------------------------------------
    def helpEvent(self, event) -> None:
        """Tooltips are computed when asked for, not stored on 20,000 items."""
        text = ""
        for item in self.items(event.scenePos()):
            if isinstance(item, LinkItem) and item.link_id in self.design.links:
                text = self._link_tooltip(item.link_id)
                break
            if isinstance(item, NodeItem) and item.item_id in self.design.items:
                text = self._node_tooltip(item.item_id)
                break
        if text:
            QToolTip.showText(event.screenPos(), text, event.widget())
            event.setAccepted(True)
        else:
            QToolTip.hideText()
            event.setAccepted(False)

    def tooltip_for(self, element_id: str) -> str:
        if element_id in self.design.links:
            return self._link_tooltip(element_id)
        return self._node_tooltip(element_id)

    def _node_tooltip(self, item_id: str) -> str:
        return tooltips.node_tooltip(self.design.items[item_id], self.document.catalog,
                                     self.blast_radius(item_id),
                                     tooltips.failure_text(self.design, item_id) if item_id in self.failed else None)

    def _link_tooltip(self, link_id: str) -> str:
        return tooltips.link_tooltip(self.design.links[link_id], self.design, self.document.catalog,
                                     self.utilization.get(link_id), link_id == self.bottleneck)

    # --- the mouse: Qt's handling, then what the gesture means ----------------------------------------
    def mousePressEvent(self, event) -> None:
        self.interactions.track_modifiers(event)
        super().mousePressEvent(event)
        self.interactions.pressed(event)

    def mouseMoveEvent(self, event) -> None:
        if not self.interactions.drag_to(event):  # dragged items move in one pass, not by Qt
            super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        self.interactions.commit_moves(event.scenePos() if event.button() == Qt.MouseButton.LeftButton else None)

    # --- a drag lifts what it moves above every other box and label --------------------------------
    def lift(self, nodes: list[NodeItem], links: list[LinkItem]) -> None:
        """Draw dragged boxes, their labels and the links between them above everything else until
        `land`: they move, where they are on screen, into two top-level layers (boxes, then their
        labels), which the drag moves as a whole: two moves per mouse move, however many items."""
        self.land()
        for node in nodes:
            parent = node.parentItem()
            self._lifted.append((node, parent))
            at = node.scenePos() if parent is not None else None  # a top-level box is there already
            node.plate.setParentItem(self._lifted_labels)
            node.setParentItem(self._lifted_boxes)
            if at is not None:
                node.setPos(at)
        for link in links:
            holder, line = link.parentItem(), link.line()
            self._lifted_links.append((link, holder, line))
            link.setParentItem(self._lifted_boxes)
            if holder is not None:  # a top-level link's line is in scene coordinates already
                link.setLine(line.translated(holder.scenePos()))

    def move_lifted(self, shift: QPointF) -> None:
        """Move what is lifted by `shift` from where it was lifted."""
        self._lifted_boxes.setPos(shift)
        self._lifted_labels.setPos(shift)

    def land(self) -> None:
        """Put the lifted items back in their containers, where the drag left them."""
        shift = self._lifted_boxes.pos()
        for node, parent in self._lifted:
            at = node.pos() + shift
            node.setParentItem(parent)
            node.plate.setParentItem(parent.plate if parent is not None else self.labels)
            node.setPos(parent.mapFromScene(at) if parent is not None else at)
        for link, holder, line in self._lifted_links:
            link.setParentItem(holder)
            link.setLine(line.translated(shift))
        self._lifted, self._lifted_links = [], []
        self.move_lifted(QPointF(0, 0))

    # --- selection helpers --------------------------------------------------------------------------
    def selection(self) -> tuple[list[str], list[str]]:
        """The selected items' and links' ids (one pass over the selection), with those a selected
        summary card hides."""
        items, links = [], []
        for element in self.selectedItems():
            if isinstance(element, NodeItem):
                items.append(element.item_id)
            elif isinstance(element, LinkItem):
                links.append(element.link_id)
        hidden_items, hidden_links = self._hidden_selected()
        return items + hidden_items, links + hidden_links

    def selected_ids(self) -> list[str]:
        return self.selection()[0]

    def selected_link_ids(self) -> list[str]:
        return self.selection()[1]

    def select_ids(self, ids) -> None:
        """Select exactly these items and links; the selection handlers run once, not once per
        item (Qt signals every single change, and each handler reads the whole selection).
        During a sliced build they are selected once the build ends."""
        if self.building:
            self._pending_selection = list(ids)
            return
        self._select([item for i in ids if (item := self.nodes.get(i) or self.link_items.get(i)) is not None])

    def select_all(self) -> None:
        """Every item and every link, in one selection change; those inside summary cards too (the
        cards show as selected, and their contents are shown selected when the cards open)."""
        self._select([*self.nodes.values(), *self.link_items.values()])

    def _select(self, items: list) -> None:
        self.blockSignals(True)
        try:
            self.clearSelection()
            hidden = []
            for item in items:
                item.setSelected(True)
                if not item.isSelected():  # Qt selects nothing hidden
                    hidden.append(item)
            self._hidden_items, self._hidden_links = set(), set()
            self._hide_selection(hidden)
        finally:
            self.blockSignals(False)
        self.selectionChanged.emit()

    def outermost_selected(self) -> list[NodeItem]:
        """The selected items not inside another selected one, found from the top down: a drag of
        everything asks only the top-level items (and reads no list of thousands from Qt)."""
        index = self.design.children_index()
        out, stack = [], [child.id for child in index.get(None, ())]
        nodes = self.nodes
        while stack:
            item_id = stack.pop()
            node = nodes.get(item_id)
            if node is None:
                continue
            if node.isSelected():
                out.append(node)
            else:
                stack.extend(child.id for child in index.get(item_id, ()))
        return out

    def _selected_inside(self, node: NodeItem) -> list:
        """The selected items and links inside a container (about to be hidden by its card)."""
        out, stack = [], list(node.childItems())
        while stack:
            child = stack.pop()
            if isinstance(child, (NodeItem, LinkItem)):
                if child.isSelected() or (child.item_id in self._hidden_items if isinstance(child, NodeItem)
                                          else child.link_id in self._hidden_links):
                    out.append(child)
                stack.extend(child.childItems())
        return out

    def _hide_selection(self, elements) -> None:
        """These selected items and links are hidden by a card from now on."""
        for element in elements:
            if isinstance(element, NodeItem):
                self._hidden_items.add(element.item_id)
            else:
                self._hidden_links.add(element.link_id)

    def _hidden_selected(self) -> tuple[list[str], list[str]]:
        """The hidden selection that still counts (item and link ids): what a selected card (any
        container around it that is selected) hides. The rest is dropped: the user has chosen
        something else."""
        if not (self._hidden_items or self._hidden_links):
            return [], []
        items, links = self.design.items, self.design.links
        state_of = self._containment()
        kept_items = [i for i in self._hidden_items if i in items and all(state_of(items[i].parent))]
        kept_links = [i for i in self._hidden_links if i in links and all(state_of(_holder_id(items, links[i])))]
        self._hidden_items, self._hidden_links = set(kept_items), set(kept_links)
        return kept_items, kept_links

    def _show_hidden_selection(self) -> None:
        """Contents of a selected card that opened are shown selected."""
        if not (self._hidden_items or self._hidden_links):
            return
        items, links = self.design.items, self.design.links
        state_of = self._containment()
        shown = []
        for hidden, elements, container_of, holder in (
                (self._hidden_items, self.nodes, lambda i: items[i].parent, items),
                (self._hidden_links, self.link_items, lambda i: _holder_id(items, links[i]), links)):
            for element_id in list(hidden):
                if element_id not in holder:
                    hidden.discard(element_id)
                    continue
                covered, held = state_of(container_of(element_id))
                if covered:
                    continue
                hidden.discard(element_id)
                element = elements.get(element_id)
                if held and element is not None:
                    shown.append(element)
        if not shown:
            return
        self.blockSignals(True)
        try:
            for element in shown:
                element.setSelected(True)
        finally:
            self.blockSignals(False)
        self.selectionChanged.emit()

    def _containment(self) -> Callable[[str | None], tuple[bool, bool]]:
        """For a container id (None: the top level): whether a card hides its contents (it or one
        around it is a card) and whether it or one around it is selected. Read from the model's
        containment, asking Qt about each container once: Select All on a big design hides tens
        of thousands of items in cards, and asking about each of those took longer than a frame."""
        items, nodes = self.design.items, self.nodes
        state: dict[str | None, tuple[bool, bool]] = {None: (False, False)}

        def state_of(container_id: str | None) -> tuple[bool, bool]:
            walked = []
            while container_id not in state:
                walked.append(container_id)
                container_id = items[container_id].parent
            covered, held = state[container_id]
            for outer_first in reversed(walked):
                node = nodes.get(outer_first)
                covered = covered or (node is not None and node.card)
                held = held or (node is not None and node.isSelected())
                state[outer_first] = (covered, held)
            return covered, held

        return state_of

    def node_at(self, scene_pos: QPointF, exclude=()) -> NodeItem | None:
        for item in self.items(scene_pos):
            if isinstance(item, NodeItem) and item not in exclude:
                return item
        return None


def _holder_id(items: dict[str, Item], link) -> str | None:
    """The container a link is drawn in: the innermost holding both ends (`common_ancestor`), read
    from the model."""
    a, b = items[link.a], items[link.b]
    if a.parent == b.parent and link.a != b.parent and link.b != a.parent:
        return a.parent
    around_a, parent = {link.a}, a.parent
    while parent is not None:
        around_a.add(parent)
        parent = items[parent].parent
    holder = link.b
    while holder is not None and holder not in around_a:
        holder = items[holder].parent
    return holder
