"""The scene mirrors the document: it creates, updates and removes only the graphics items a
change names, keeps the id → item maps, and shows the last result's overlay (link utilization,
the bottleneck). What gestures become is `interactions`; tooltips are `tooltips`; long work runs
in slices through `jobs`; summary cards are `cards`, the selection they hide `hidden_selection`,
which links go beneath the boxes `stacking`, and the blast radii (a helper thread) `blast`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterator

from PySide6.QtCore import QLineF, QPointF, QRectF, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsScene, QToolTip

from designer.canvas import tooltips
from designer.canvas.blast import BlastRadii
from designer.canvas.cards import CARD_SCALE, SummaryCards, shown_node
from designer.canvas.hidden_selection import HiddenSelection
from designer.canvas.interactions import Interactions
from designer.canvas.items import (LIFTED_LABEL_Z, LIFTED_Z, LinkItem, NodeItem, common_ancestor, depth, label_layer,
                                   link_line)
from designer.canvas.jobs import RESTYLE_SLICE, SLICE_S, SlicedJobs
from designer.canvas.stacking import LinkStacking
from designer.document.document import Change, Document
from designer.engine import views
from designer.engine.failures import BLAST_CONNECTIVITY_MAX_ITEMS, BlastRadius
from designer.model.design import Design, Item
from designer.model.edits import outermost
from designer.style import colors

__all__ = ["CARD_SCALE", "DesignScene"]  # CARD_SCALE: read here before the cards had a module of their own

# A design with more drawn items than this is built over several turns of the event loop, each
# at most SLICE_S long, so opening a big design never freezes the window; the old design's items
# are removed the same way.
BUILD_IN_ONE_GO = 60

# A change adding or removing more drawn items and links than this (Undo of a big Delete, a big
# Paste or Ungroup) is mirrored by building the scene again in slices, as opening a design is.
MIRROR_IN_ONE_GO = 400
# The jobs that restyle items already drawn (an export's picture shows them all done).
RESTYLE_JOBS = ("detail", "overlay", "look", "cards", "restack")


@dataclass
class _Mirroring:
    """What mirroring one change leaves to do once every kind of change in it is drawn."""
    moves_only: bool  # only moves within containers: what each summary card holds and says stays
    refit: set[str] = field(default_factory=set)  # containers to fit to their contents again
    touched: set[str] = field(default_factory=set)  # items whose links may need re-routing


class DesignScene(QGraphicsScene):
    message = Signal(str)  # for the status bar
    built = Signal()  # the scene mirrors the whole design (after a reset)
    blastReady = Signal()  # a big design's blast-radius index was built off the UI thread

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
        self._looks: set = set()  # items drawn with the selection look
        self.utilization: dict[str, float] = {}
        self.overlay_phase: str | None = None  # the phase the overlay shows; None: each link's busiest
        self.bottleneck: str | None = None
        self.interactions = Interactions(self)
        self.jobs = SlicedJobs(self)
        self.cards = SummaryCards(self)
        self.stacking = LinkStacking(self)
        # Items and links selected though a summary card hides them (Qt selects only what is shown):
        # they stay selected while a card holding them is.
        self.hidden_selection = HiddenSelection(self)
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
        self._blast = BlastRadii(lambda: self.design, self)
        self._blast.ready.connect(self.blastReady)
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
        self.cards.forget_summaries()
        self.jobs.stop("look")
        self.land()
        self._looks = set()  # the old items go, selected look and all
        self.hidden_selection.clear()
        self.clearSelection()
        top_level = [i for i in (*self.nodes.values(), *self.link_items.values()) if i.parentItem() is None]
        self._discard(top_level + [i.plate for i in top_level if isinstance(i, NodeItem)])
        self.nodes.clear()
        self.link_items.clear()
        self.links_by_item.clear()
        self._stage.clear()
        self._staged = []
        self.building = True
        self.stacking.mark_stale()
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
        self._blast.forget()
        if change.reset or "failures" in change.settings_changed:
            self.show_failures()
            self.cards.forget_summaries()  # a card says how many failed parts it hides
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
        """One method per kind of change, in an order that draws every container before what it
        holds and both ends of a link before the link."""
        # Only moves within their containers (a drag, a nudge): what each card holds and says stays.
        work = _Mirroring(moves_only=not (change.items_added or change.items_removed or change.links_added
                                          or change.links_removed or change.links_changed))
        self._links_removed(change.links_removed)
        self._items_added(change.items_added, work)
        self._items_changed(change.items_changed, work)
        self._items_removed(change.items_removed, work)
        self._links_added(change.links_added)
        self._links_changed(change.links_changed)
        self._join_staged()
        self.update_links_around(work.touched, self.refit(work.refit))
        self._grow_scene_rect(work.touched)
        if not work.moves_only:
            self.cards.forget_summaries()
        if work.touched or change.items_changed:
            # A box that moved may now be in a link's way, or out of it; a drag's release finds
            # the boxes already where the model puts them, so a move counts even untouched here.
            self.stacking.mark_stale()
        self.refresh_cards(contents_changed=not work.moves_only)

    def _items_added(self, item_ids: list[str], work: _Mirroring) -> None:
        design = self.design
        added = [design.items[i] for i in item_ids if i in design.items]
        levels = {i.id: len(design.ancestors(i.id)) for i in added}
        for item in sorted(added, key=lambda i: levels[i.id]):  # containers before their contents
            self._create_node(item)
            work.touched.add(item.id)
            if item.parent:
                work.refit.add(item.parent)
        self._join_staged()

    def _items_changed(self, item_ids: list[str], work: _Mirroring) -> None:
        design = self.design
        for item_id in item_ids:
            item, node = design.items.get(item_id), self.nodes.get(item_id)
            if item is None or node is None:
                continue
            old_parent = node.parentItem()
            new_parent = self.nodes.get(item.parent) if item.parent else None
            geometry = False
            if old_parent is not new_parent:
                work.moves_only = False
                if isinstance(old_parent, NodeItem):
                    work.refit.add(old_parent.item_id)
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
                work.moves_only = False
                node.set_values(*values)
            if geometry:  # a rename or a new count leaves every line where it was
                work.touched.add(item_id)
                if item.parent:
                    work.refit.add(item.parent)

    def _items_removed(self, item_ids: list[str], work: _Mirroring) -> None:
        for item_id in item_ids:
            node = self.nodes.pop(item_id, None)
            if node is None:
                continue
            parent = node.parentItem()
            if isinstance(parent, NodeItem):
                work.refit.add(parent.item_id)
            for child in node.childItems():
                if isinstance(child, LinkItem) and child.link_id in self.link_items:
                    child.setParentItem(None)  # re-homed by update_links_around, once all is mirrored
                    work.touched.update((child.a, child.b))
            if node.scene() is self:
                if parent is not None and parent.scene() is self and parent.item_id not in item_ids:
                    node.setParentItem(None)
                if parent is None or parent.item_id not in item_ids:
                    self.removeItem(node)
                    node.join_labels(None)
            self.links_by_item.pop(item_id, None)

    def _links_added(self, link_ids: list[str]) -> None:
        for link_id in link_ids:
            link = self.design.links.get(link_id)
            if link is not None and link_id not in self.link_items:
                self._create_link(link)

    def _links_changed(self, link_ids: list[str]) -> None:
        for link_id in link_ids:
            link, item = self.design.links.get(link_id), self.link_items.get(link_id)
            if link is None or item is None:
                continue
            if (item.a, item.b) != (link.a, link.b):
                self._remove_link(link_id)
                self._create_link(link)
            else:
                self._style_link(item, link)

    def _links_removed(self, link_ids: list[str]) -> None:
        for link_id in link_ids:
            self._remove_link(link_id)

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
        for node in sorted(nodes, key=depth, reverse=True):
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
        self.cards.forget_summaries()
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
        return self.cards.is_card(node)

    @staticmethod
    def shown_node(node: NodeItem) -> NodeItem:
        """The node, or the outermost summary card holding it (where its links are drawn to)."""
        return shown_node(node)

    def refresh_cards(self, contents_changed: bool = False) -> None:
        """Turn containers into cards or back (`cards.SummaryCards.refresh`)."""
        self.cards.refresh(contents_changed)

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
        return self._blast.radius(item_id, off_thread_above=BLAST_CONNECTIVITY_MAX_ITEMS)

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
        self.interactions.drag.press(event)

    def mouseMoveEvent(self, event) -> None:
        if not self.interactions.drag.move(event):  # dragged items move in one pass, not by Qt
            super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        self.interactions.drag.release(event)

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
        hidden_items, hidden_links = self.hidden_selection.still_selected()
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
            self.hidden_selection.clear()
            self.hidden_selection.hide(hidden)
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

    def node_at(self, scene_pos: QPointF, exclude=()) -> NodeItem | None:
        for item in self.items(scene_pos):
            if isinstance(item, NodeItem) and item not in exclude:
                return item
        return None

