"""Blast radii for the canvas's tooltips and the inspector: what failing one copy of an item
would do, worked out when first asked and kept until the design changes. A big design's index
(every item's connectivity) is built on a helper thread from a snapshot, so hovering never
freezes the window; `ready` says when to ask again."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal

from designer.engine.failures import BlastIndex, BlastRadius
from designer.model.design import Design


class BlastRadii(QObject):
    """The blast radii of one scene's design, until it changes."""

    ready = Signal()  # a big design's index was built off the UI thread: ask again
    _built = Signal(int, object)  # (generation, BlastIndex), from the helper thread

    def __init__(self, design_of: Callable[[], Design], parent: QObject | None = None):
        super().__init__(parent)
        self._design_of = design_of
        self._radii: dict[str, BlastRadius] = {}  # by item
        self._index: BlastIndex | None = None
        self._generation = 0  # a change makes an index being built off the UI thread stale
        self._building: int | None = None  # the generation whose index the helper thread builds
        self._built.connect(self._on_built, Qt.ConnectionType.QueuedConnection)

    def forget(self) -> None:
        """The design changed: every radius, and any index under way, is out of date."""
        self._radii, self._index = {}, None
        self._generation += 1

    def radius(self, item_id: str, off_thread_above: int) -> BlastRadius | None:
        """What failing one copy of the item would do; None while the index of a design with more
        than `off_thread_above` items is built on the helper thread."""
        hit = self._radii.get(item_id)
        if hit is None:
            index = self._index
            if index is None:
                design = self._design_of()
                if len(design.items) > off_thread_above:
                    self._build_index(design)
                    return None
                index = self._index = BlastIndex(design)
            hit = self._radii[item_id] = index.radius(item_id)
        return hit

    def _build_index(self, design: Design) -> None:
        if self._building == self._generation:
            return
        generation = self._building = self._generation
        snapshot = design.snapshot()

        threading.Thread(target=lambda: self._built.emit(generation, BlastIndex(snapshot)),
                         name="blast-radius", daemon=True).start()

    def _on_built(self, generation: int, index: BlastIndex) -> None:
        if generation == self._generation:
            self._index = index
            self.ready.emit()
