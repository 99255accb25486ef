"""Level of detail: below a zoom, a container too small on screen for its contents to be read is
drawn as a summary card (its contents hidden, a few lines saying what it holds), and the links
that end inside it are drawn to the card."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from designer.canvas import tooltips
from designer.canvas.items import NodeItem, depth
from designer.canvas.jobs import RESTYLE_SLICE, SLICE_S

if TYPE_CHECKING:  # the scene owns this; it names its type, not a run-time dependency
    from designer.canvas.scene import DesignScene

# Below this zoom, a container smaller on screen than CARD_W × CARD_H pixels (too small for its
# contents to be read) is drawn as a summary card, its contents hidden.
CARD_SCALE = 0.6
CARD_W, CARD_H = 360, 160


def shown_node(node: NodeItem) -> NodeItem:
    """The node, or the outermost summary card holding it (where its links are drawn to)."""
    shown, parent = node, node.parentItem()
    while parent is not None:
        if isinstance(parent, NodeItem) and parent.card:
            shown = parent
        parent = parent.parentItem()
    return shown


class SummaryCards:
    """Which of one scene's containers are cards at its zoom, and the texts the cards show."""

    def __init__(self, scene: DesignScene):
        self.scene = scene
        self._summaries: dict[str, tuple[str, list[str]]] = {}  # card texts, until the design or result changes

    def forget_summaries(self) -> None:
        """What the cards say is out of date (the design, the result or the failure marks changed)."""
        self._summaries = {}

    def is_card(self, node: NodeItem) -> bool:
        rect, scale = node.rect(), self.scene.scale
        return (node.container and scale < CARD_SCALE
                and (rect.width() * scale < CARD_W or rect.height() * scale < CARD_H))

    def refresh(self, contents_changed: bool = False) -> None:
        """Turn containers into cards or back, a slice per turn for a big design (painted once,
        when done), then route the links that end inside a card to the card."""
        scene = self.scene
        if scene.building:
            return  # the build refreshes them when it ends
        containers = sorted((n for n in scene.nodes.values() if n.container), key=depth)
        if not containers:
            return
        steps = self._steps(containers, contents_changed)
        if len(containers) + len(scene.link_items) > RESTYLE_SLICE:
            # By time, not steps: a card's step (its summary written) costs tens of a link's.
            scene.jobs.start("cards", steps, slice_s=SLICE_S, hold=True)
        else:
            scene.jobs.start("cards", steps)

    def _steps(self, containers: list[NodeItem], contents_changed: bool) -> Iterator[None]:
        """Outer containers first, so that a card's text is written only when no outer card hides it."""
        scene = self.scene
        hidden_selection = scene.hidden_selection
        flipped: set[str] = set()
        hidden = False
        index = None
        for node in containers:
            card = self.is_card(node)
            if card != node.card:
                flipped.add(node.item_id)
                hidden = hidden or card
                if card and node.isSelected():
                    hidden_selection.hide(hidden_selection.selected_inside(node))
            # Qt deselects each selected item a card hides, one signal each (and every handler
            # reads the whole selection): the handlers hear it once, when the cards are done.
            scene.blockSignals(True)
            try:
                node.set_card(card, contents_changed)
            finally:
                scene.blockSignals(False)
            if card and node.isVisible():
                if node.item_id not in self._summaries:
                    index = index if index is not None else scene.design.children_index()
                    self._summaries[node.item_id] = self._summary(node.item_id, index)
                title, lines = self._summaries[node.item_id]
                node.set_card_text(title, lines, scene.scale)
            yield
        if flipped:
            # Every link with an end inside a container that became a card (or stopped being one)
            # now ends somewhere else, the links inside it too.
            index = index if index is not None else scene.design.children_index()
            yield
            link_ids: set[str] = set()
            for item_id in flipped:
                link_ids |= scene.links_by_item.get(item_id, set())
                for inner in scene.design.descendants(item_id, index):
                    link_ids |= scene.links_by_item.get(inner.id, set())
                yield
            for link_id in link_ids:
                if link_id in scene.link_items:
                    scene.reroute([scene.link_items[link_id]])
                    yield
            hidden_selection.show_opened()
        if flipped or contents_changed or scene.stacking.stale:
            scene.stacking.restack()
        if hidden:
            scene.selectionChanged.emit()

    def _summary(self, item_id: str, index: dict) -> tuple[str, list[str]]:
        scene = self.scene
        busiest = None
        if scene.utilization:
            link_ids = set(scene.links_by_item.get(item_id, ()))
            for child in scene.design.descendants(item_id, index):
                link_ids |= scene.links_by_item.get(child.id, set())
            loads = [scene.utilization[i] for i in link_ids if i in scene.utilization]
            busiest = max(loads) if loads else None
        return tooltips.card_summary(scene.design.items[item_id], scene.design, scene.document.catalog, index,
                                     busiest, self._failed_inside(item_id, index))

    def _failed_inside(self, item_id: str, index: dict) -> int:
        """How many items and links a card hides that a what-if marks failed (their strikes are
        hidden). A walk of the card's contents, as its other lines take: Select All ▸ Fail on a big
        flat design marks tens of thousands, and thousands of its servers are cards."""
        scene = self.scene
        failed = scene.failed
        if not failed:
            return 0
        inside = {child.id for child in scene.design.descendants(item_id, index)}
        links = scene.design.links
        hidden_links = {link_id for i in inside for link_id in scene.links_by_item.get(i, ())
                        if link_id in failed and links[link_id].a in inside and links[link_id].b in inside}
        return sum(1 for i in inside if i in failed) + len(hidden_links)
