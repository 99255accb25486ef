"""The selection a summary card hides. Qt selects only what is shown, so the items and links inside
a selected card are remembered here, by id: they count as selected while a selected card holds
them, and are shown selected when the card opens."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from designer.canvas.items import LinkItem, NodeItem
from designer.model.design import Item

if TYPE_CHECKING:  # the scene owns this; it names its type, not a run-time dependency
    from designer.canvas.scene import DesignScene


class HiddenSelection:
    """The items and links of one scene selected though a summary card hides them."""

    def __init__(self, scene: DesignScene):
        self.scene = scene
        self._items: set[str] = set()
        self._links: set[str] = set()

    def clear(self) -> None:
        self._items, self._links = set(), set()

    def hide(self, elements) -> None:
        """These selected items and links are hidden by a card from now on."""
        for element in elements:
            if isinstance(element, NodeItem):
                self._items.add(element.item_id)
            else:
                self._links.add(element.link_id)

    def selected_inside(self, node: NodeItem) -> list:
        """The selected items and links inside a container (about to be hidden by its card)."""
        out, stack = [], list(node.childItems())
        while stack:
            child = stack.pop()
            if isinstance(child, (NodeItem, LinkItem)):
                if child.isSelected() or (child.item_id in self._items if isinstance(child, NodeItem)
                                          else child.link_id in self._links):
                    out.append(child)
                stack.extend(child.childItems())
        return out

    def still_selected(self) -> tuple[list[str], list[str]]:
        """The hidden selection that still counts (item and link ids): what a selected card (any
        container around it that is selected) hides. The rest is dropped: the user has chosen
        something else."""
        if not (self._items or self._links):
            return [], []
        design = self.scene.design
        items, links = design.items, design.links
        state_of = self._containment()
        kept_items = [i for i in self._items if i in items and all(state_of(items[i].parent))]
        kept_links = [i for i in self._links if i in links and all(state_of(holder_id(items, links[i])))]
        self._items, self._links = set(kept_items), set(kept_links)
        return kept_items, kept_links

    def show_opened(self) -> None:
        """Contents of a selected card that opened are shown selected."""
        if not (self._items or self._links):
            return
        scene = self.scene
        items, links = scene.design.items, scene.design.links
        state_of = self._containment()
        shown = []
        for hidden, elements, container_of, holder in (
                (self._items, scene.nodes, lambda i: items[i].parent, items),
                (self._links, scene.link_items, lambda i: holder_id(items, links[i]), links)):
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
        scene.blockSignals(True)
        try:
            for element in shown:
                element.setSelected(True)
        finally:
            scene.blockSignals(False)
        scene.selectionChanged.emit()

    def _containment(self) -> Callable[[str | None], tuple[bool, bool]]:
        """For a container id (None: the top level): whether a card hides its contents (it or one
        around it is a card) and whether it or one around it is selected. Read from the model's
        containment, asking Qt about each container once: Select All on a big design hides tens
        of thousands of items in cards, and asking about each of those took longer than a frame."""
        items, nodes = self.scene.design.items, self.scene.nodes
        state: dict[str | None, tuple[bool, bool]] = {None: (False, False)}

        def state_of(container_id: str | None) -> tuple[bool, bool]:
            walked: list[str] = []
            while container_id is not None and container_id not in state:  # None (the top level) is in state
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


def holder_id(items: dict[str, Item], link) -> str | None:
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
