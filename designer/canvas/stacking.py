"""Restacking: each link that would run over a box it does not join is put beneath the boxes
beside it (`items.runs_over_boxes`), once a design is built, after each change, and when summary
cards open or close (links then end elsewhere)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from designer.canvas.items import BoxIndex, runs_over_boxes
from designer.canvas.jobs import RESTYLE_SLICE, SLICE_S

if TYPE_CHECKING:  # the scene owns this; it names its type, not a run-time dependency
    from designer.canvas.scene import DesignScene


class LinkStacking:
    """Whether one scene's links are stacked for where its boxes are now, and the job that
    restacks them."""

    def __init__(self, scene: DesignScene):
        self.scene = scene
        self.stale = True  # a box moved, appeared or went since the links were last restacked

    def mark_stale(self) -> None:
        self.stale = True

    def restack(self) -> None:
        """A job of its own, in slices for a big design and painting as it goes: a link left on
        top for a few frames does no harm, a canvas that stops painting for the whole pass would."""
        self.stale = False
        scene = self.scene
        steps = self._steps()
        if len(scene.nodes) + len(scene.link_items) > RESTYLE_SLICE:
            scene.jobs.start("restack", steps, slice_s=SLICE_S)
        else:
            scene.jobs.start("restack", steps)

    def _steps(self) -> Iterator[None]:
        scene = self.scene
        boxes = BoxIndex()
        for node in list(scene.nodes.values()):
            boxes.add(node)
            yield
        nodes, shown = scene.nodes, scene.shown_node
        for link in list(scene.link_items.values()):
            a, b = nodes.get(link.a), nodes.get(link.b)
            if a is not None and b is not None and link.isVisible():
                ends = (shown(a), shown(b))
                link.set_over_boxes(runs_over_boxes(link, *ends, boxes), ends)
            yield
