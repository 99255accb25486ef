"""The evaluation scheduler: debounced, on one worker thread, newest edit wins.

Data flow (see docs/architecture.md): the document changes → `request(snapshot, workload)` restarts a
single-shot debounce timer → on timeout the generation counter is bumped and the job is handed to
ONE worker thread → the worker calls the engine's `evaluate` and hands the outcome back to the UI
thread by a queued signal → results older than the latest submitted generation, or superseded by a
request still waiting in the debounce timer, are dropped and never emitted.

The engine is never called on the UI thread. A job that is already stale when the worker picks it
up is skipped without evaluating (cheap cancellation: the engine itself is not interruptible).
"""

from __future__ import annotations

import gc
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop, QObject, Qt, QTimer, Signal

from designer.engine.evaluate import evaluate  # looked up at call time, so tests may patch it
from designer.model.errors import DesignerError

__all__ = ["EvaluationScheduler", "evaluate"]


class _Relay(QObject):
    """Lives on the UI thread; the worker emits on it and Qt queues the call to the UI thread."""

    done = Signal(int, object, float)
    error = Signal(int, str, str, float)
    skipped = Signal(int)


class EvaluationScheduler(QObject):
    """Debounces evaluation requests and runs them, one at a time, off the UI thread.

    Signals (always emitted on the thread that owns the scheduler, i.e. the UI thread):
      - `started(generation)` when a job is handed to the worker,
      - `finished(generation, result)` with the engine's Result, only for the latest generation,
      - `failed(generation, message)` if the engine raised, only for the latest generation,
      - `crashed(message, traceback)` if the engine raised anything but a DesignerError (a bug,
        not a refusal), whatever the generation.
    """

    started = Signal(int)
    finished = Signal(int, object)
    failed = Signal(int, str)
    crashed = Signal(str, str)

    def __init__(self, catalog: Any = None, debounce_ms: int = 150, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._catalog = catalog
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(0, int(debounce_ms)))
        self._timer.timeout.connect(self._submit)
        self._pending: tuple[Any, dict | None] | None = None
        self._generation = 0  # bumped on each submission; read by the worker to skip stale jobs
        self._in_flight = 0  # jobs submitted and not yet reported back
        self._last_duration_s: float | None = None
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cluster-designer-eval")
        self._relay = _Relay()  # no parent: outlives the scheduler's children teardown safely
        self._relay.done.connect(self._on_done, Qt.ConnectionType.QueuedConnection)
        self._relay.error.connect(self._on_error, Qt.ConnectionType.QueuedConnection)
        self._relay.skipped.connect(self._on_skipped, Qt.ConnectionType.QueuedConnection)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # -- public API --------------------------------------------------------------------------

    @property
    def debounce_ms(self) -> int:
        return self._timer.interval()

    @property
    def catalog(self) -> Any:
        return self._catalog

    @property
    def generation(self) -> int:
        """The generation of the newest submitted job (0 before the first)."""
        return self._generation

    @property
    def last_duration_s(self) -> float | None:
        """Wall time of the last evaluation whose result (or failure) was emitted, in seconds."""
        return self._last_duration_s

    @property
    def busy(self) -> bool:
        """True while a request waits in the debounce timer or a job is on the worker."""
        return self._timer.isActive() or self._in_flight > 0

    def request(self, design_snapshot: Any, workload: dict | None = None) -> None:
        """Ask for an evaluation of this snapshot; restarts the debounce timer. The newest request
        supersedes every older one, queued or running."""
        if self._closed:
            return
        self._pending = (design_snapshot, dict(workload) if workload is not None else None)
        self._timer.start()

    def request_now(self, design_snapshot: Any, workload: dict | None = None) -> None:
        """As `request`, without waiting for the debounce interval (e.g. after opening a file)."""
        if self._closed:
            return
        self._pending = (design_snapshot, dict(workload) if workload is not None else None)
        self._timer.stop()
        self._submit()

    def wait_idle(self, timeout_ms: int = 30_000) -> bool:
        """Process events until no request is pending and no job is running (tests, screenshot
        mode). Returns False on timeout."""
        clock = QElapsedTimer()
        clock.start()
        while self.busy:
            remaining = timeout_ms - clock.elapsed()
            if remaining <= 0:
                return False
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, min(50, int(remaining)))
            if self.busy:
                time.sleep(0.002)
        # Deliver anything the last slot queued (e.g. widgets updating from `finished`).
        QCoreApplication.processEvents()
        return True

    def shutdown(self, timeout_s: float | None = None) -> None:
        """Stop scheduling, drop pending results and join the worker thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        self._pending = None
        self._generation += 1
        self._executor.shutdown(wait=timeout_s is None, cancel_futures=True)
        if timeout_s is not None:
            deadline = time.monotonic() + timeout_s
            for thread in list(getattr(self._executor, "_threads", ())):
                thread.join(max(0.0, deadline - time.monotonic()))
        self._in_flight = 0

    # -- internals ---------------------------------------------------------------------------

    def _submit(self) -> None:
        if self._closed or self._pending is None:
            return
        snapshot, workload = self._pending
        self._pending = None
        self._generation += 1
        generation = self._generation
        self._in_flight += 1
        try:
            self._executor.submit(self._run, snapshot, workload, generation, self._catalog)
        except RuntimeError:  # executor already shut down
            self._in_flight -= 1
            return
        self.started.emit(generation)

    def _run(self, snapshot: Any, workload: dict | None, generation: int, catalog: Any) -> None:
        """On the worker thread. Never touches widgets; reports back through the relay."""
        relay = self._relay
        try:
            if generation != self._generation:  # superseded while queued: skip the work
                relay.skipped.emit(generation)
                return
            t0 = time.perf_counter()
            # A collection holds the GIL, so one the engine sets off pauses the UI thread as well:
            # on a 20,000-item design a young-generation pass over what the engine has built so far
            # took 50-250 ms. So the collector waits while the engine runs, and what is alive at
            # the end (the result, mostly) is frozen out of its sight. An evaluation leaves about
            # ten objects of cyclic garbage, which stay in the frozen set.
            gc.disable()
            try:
                result = evaluate(snapshot, catalog, workload)
            except Exception as exc:  # noqa: BLE001 - every engine failure is reported, not raised
                # A refusal is the user's to read as it is; a bug keeps its class, for the report.
                message = str(exc) if isinstance(exc, DesignerError) and str(exc) else \
                    f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                details = "" if isinstance(exc, DesignerError) else traceback.format_exc()
                relay.error.emit(generation, message, details, time.perf_counter() - t0)
                return
            finally:
                gc.freeze()
                gc.enable()
            relay.done.emit(generation, result, time.perf_counter() - t0)
        except RuntimeError:
            pass  # the relay was deleted (application exit): nobody is listening any more

    def _settle(self) -> None:
        self._in_flight = max(0, self._in_flight - 1)

    def _is_current(self, generation: int) -> bool:
        return not self._closed and generation == self._generation and not self._timer.isActive()

    def _on_done(self, generation: int, result: object, seconds: float) -> None:
        self._settle()
        if not self._is_current(generation):
            return
        self._last_duration_s = seconds
        self.finished.emit(generation, result)

    def _on_error(self, generation: int, message: str, details: str, seconds: float) -> None:
        self._settle()
        if details and not self._closed:
            self.crashed.emit(message, details)
        if not self._is_current(generation):
            return
        self._last_duration_s = seconds
        self.failed.emit(generation, message)

    def _on_skipped(self, generation: int) -> None:
        self._settle()
