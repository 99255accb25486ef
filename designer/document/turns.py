"""Deferring UI-thread work to a later turn of the event loop."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QObject, QTimer

# A 1 ms timer rather than a zero timer: Qt delivers every queued zero-timer call in one pass, so
# a chain of 0 ms slices would run back to back; timers let input and paint events in between.
NEXT_TURN_MS = 1


class _TurnQueue(QObject):
    """Runs deferred jobs one per turn of the event loop, in the order they were asked for.

    Separate timers that fall due together are all fired in one pass of the event loop, so two
    30 ms jobs queued by different parts of the window (the results tabs and the canvas overlay,
    say) would hold the UI thread for 60 ms. Through this queue they never run back to back: the
    timer is re-armed after each job, and input, paint and other timers get their turn between."""

    def __init__(self) -> None:
        super().__init__()
        self._jobs: deque[tuple[Callable[[], object], QObject | None]] = deque()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(NEXT_TURN_MS)
        self._timer.timeout.connect(self._run_one)

    def add(self, job: Callable[[], object], owner: QObject | None) -> None:
        self._jobs.append((job, owner))
        if not self._timer.isActive():
            self._timer.start()

    def _run_one(self) -> None:
        while self._jobs:
            job, owner = self._jobs.popleft()
            if owner is None or shiboken6.isValid(owner):
                try:
                    job()
                finally:
                    if self._jobs:
                        self._timer.start()
                return


_queue: _TurnQueue | None = None


def pending() -> int:
    """How many deferred jobs are waiting (0 when the window has caught up)."""
    return len(_queue._jobs) if _queue is not None and shiboken6.isValid(_queue) else 0


def later(job: Callable[[], object], owner: QObject | None = None) -> None:
    """Run `job` in a later turn of the event loop, after the jobs already waiting, one job per
    turn. A job whose `owner` has been deleted by then is dropped."""
    global _queue
    if _queue is None or not shiboken6.isValid(_queue):
        _queue = _TurnQueue()
    _queue.add(job, owner)
