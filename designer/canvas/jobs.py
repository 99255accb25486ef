"""Long canvas work run in slices, one slice per turn of the event loop (`turns.later`), so the
window keeps answering while a big design is built, the old one discarded, every link restyled or
all text switched on or off.

A job is a name and an iterator whose every step does a bit of the work. Starting a job again
drops the run under way (its remaining slices are skipped: the new run covers the same ground).
A job may hold the views' painting until it ends: painting a half-changed canvas after every
slice would cost more than the slices themselves."""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable, Iterator

from PySide6.QtWidgets import QGraphicsScene

from designer.document.turns import later

# A slice of a job sliced by time lasts at most this long, so the window keeps answering.
SLICE_S = 0.02
# Restyling more items than this (a result's utilization, text on or off, summary cards,
# restacking) is done in slices of SLICE_S, one per turn.
RESTYLE_SLICE = 1500


@dataclass(eq=False)
class _Run:
    name: str
    steps: Iterator[object]
    slice_s: float | None
    slice_steps: int | None
    after_slice: Callable[[], None] | None


class SlicedJobs:
    """The jobs of one scene, and which of them hold its views' painting."""

    def __init__(self, scene: QGraphicsScene):
        self._scene = scene
        self._runs: dict[str, _Run] = {}
        self._holding: set[str] = set()

    def start(self, name: str, steps: Iterator[object], *, slice_s: float | None = None,
              slice_steps: int | None = None, hold: bool = False,
              after_slice: Callable[[], None] | None = None) -> None:
        """Run `steps` as the job `name`, replacing its run under way. With no slice limit, all of
        it runs now. Otherwise each slice runs in a later turn and ends after `slice_s` seconds or
        `slice_steps` steps; `after_slice` runs after every slice but the last. With `hold`, the
        views paint again in a turn after the last slice, so that long paint has a turn to itself."""
        run = _Run(name, steps, slice_s, slice_steps, after_slice)
        self._runs[name] = run
        self.hold_painting(name, hold)
        if slice_s is None and slice_steps is None:
            self._slice(run)
        else:
            later(lambda: self._slice(run), self._scene)

    def running(self, name: str) -> bool:
        return name in self._runs

    def stop(self, name: str) -> None:
        """Drop the job's remaining slices."""
        self._runs.pop(name, None)
        self.hold_painting(name, False)

    def finish(self, name: str) -> None:
        """Run the rest of the job now (before rendering an export, say)."""
        run = self._runs.get(name)
        if run is not None:
            run.slice_s = run.slice_steps = None
            self._advance(run)
            if self._runs.get(name) is run:
                self.stop(name)

    def hold_painting(self, name: str, hold: bool) -> None:
        if hold:
            self._holding.add(name)
        else:
            self._holding.discard(name)
        for view in self._scene.views():
            view.viewport().setUpdatesEnabled(not self._holding)

    @property
    def holding(self) -> frozenset[str]:
        """The names of the jobs that hold painting now."""
        return frozenset(self._holding)

    def _slice(self, run: _Run) -> None:
        if self._runs.get(run.name) is not run:
            return  # stopped, or started again
        if not self._advance(run):
            if run.after_slice is not None:
                run.after_slice()
            later(lambda: self._slice(run), self._scene)
        elif self._runs.get(run.name) is not run:
            return  # a step started the job again, or stopped it
        elif run.name in self._holding:
            later(lambda: self._runs.get(run.name) is run and self.stop(run.name), self._scene)
        else:
            self.stop(run.name)

    def _advance(self, run: _Run) -> bool:
        """One slice of the run's steps; True when no steps are left for it (all done, or a step
        started the job again or stopped it)."""
        started, done = time.perf_counter(), 0
        for _ in run.steps:
            if self._runs.get(run.name) is not run:
                return True
            done += 1
            if run.slice_steps is not None and done >= run.slice_steps:
                return False
            if run.slice_s is not None and time.perf_counter() - started > run.slice_s:
                return False
        return True
