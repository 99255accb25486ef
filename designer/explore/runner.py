"""Running a sweep on Dask distributed: a local cluster of worker processes sized to the machine,
or an existing cluster by its scheduler's address, with the same code.

Points are sent in small batches, a bounded number in flight (`as_completed`, a new batch
submitted as one finishes), so memory stays flat however many points a sweep has; each finished
row goes to the caller at once (a file writer, the app's table) and is not kept here. A stop (Ctrl+C,
the app's Stop button, `stop` set) sends nothing more and lets the few batches in flight finish, so
the workers close cleanly; every finished row is kept."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from designer.explore.points import evaluate_points
from designer.explore.spec import Constraint, Sweep
from designer.model.catalog import default_catalog
from designer.model.errors import DesignerError

if TYPE_CHECKING:  # Dask is imported where a sweep runs, not when the module loads
    from distributed import Client, Future, as_completed

BATCH = 8  # points per Dask task: a task's scheduling costs about as much as one small point
IN_FLIGHT_PER_WORKER = 4  # batches queued per worker thread: enough that none waits, few enough to stay small

# A local cluster: each worker process takes about 100 MB and the engine one core, so more than a
# few per core only costs memory (99,999,999,999,999,999,999 of them grew to 21 GB before).
MAX_WORKERS_PER_CORE = 4
MAX_WORKERS = 256
# How long a Dask fault may take to become one line (docs/limits.md). Tests lower them.
CONNECT_TIMEOUT_S = 10.0  # reaching the scheduler and its answer: also Dask's own connect timeout
WORKERS_TIMEOUT_S = 30.0  # a scheduler with no worker (none joined, or every one lost) for this long
CHECK_EVERY_S = 2.0  # while no batch finishes, the scheduler is asked this often if it and its workers are there
# tls:// needs certificates, ucx:// and ws:// other set-ups: none is offered. inproc:// is a scheduler
# in this process (a LocalCluster without processes, as the app's tests use), reached by no network.
SCHEMES = ("tcp", "inproc")


class SweepRunError(DesignerError):
    pass


def max_workers() -> int:
    return min(MAX_WORKERS, MAX_WORKERS_PER_CORE * (os.cpu_count() or 1))


def check_workers(workers: int) -> int:
    """`workers` if a local cluster may have that many processes, else a SweepRunError."""
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= max_workers():
        raise SweepRunError(f"{workers} worker processes: a local cluster has 1 to {max_workers()} "
                            f"({MAX_WORKERS_PER_CORE} per core of this machine, at most {MAX_WORKERS})")
    return workers


def scheduler_address(text: str) -> str:
    """`tcp://HOST:PORT` or `HOST:PORT` as Dask's `tcp://HOST:PORT` (or an `inproc://` address as it
    is); another scheme, or no port, is refused before anything connects."""
    from distributed.comm.addressing import parse_host_port, unparse_host_port

    address = text.strip()
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = "tcp", address
    if scheme.lower() not in SCHEMES:
        why = " (it needs certificates, which are not taken here)" if scheme.lower() == "tls" else ""
        raise SweepRunError(f"Dask scheduler {address}: the scheme {scheme}:// is not supported{why}; give "
                            "tcp://HOST:PORT or HOST:PORT")
    if scheme.lower() == "inproc":
        return address
    try:
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        host, port = "", 0
    if not host or not isinstance(port, int) or not 1 <= port <= 65535:
        raise SweepRunError(f"Dask scheduler {address}: expected tcp://HOST:PORT or HOST:PORT, with a port "
                            "from 1 to 65535")
    return f"tcp://{unparse_host_port(host, port)}"


def _ask_scheduler(address: str) -> None:
    """Dask's connect waits for the other end's handshake with no time limit, so a port that is no
    Dask scheduler (an HTTP server, a listener that never answers) would hang the Client for ever:
    ask the address what it is, within CONNECT_TIMEOUT_S, before the Client connects."""
    import asyncio
    import socket

    from distributed.comm import connect
    from distributed.comm.addressing import parse_host_port

    # A plain connection first: Dask's own retries a refused one until its timeout, and what it
    # then says (a refusal or a time-out) depends on how busy the machine is.
    if address.startswith("tcp://"):
        try:
            socket.create_connection(parse_host_port(address.removeprefix("tcp://")), timeout=CONNECT_TIMEOUT_S).close()
        except TimeoutError:
            raise SweepRunError(f"Dask scheduler {address}: cannot reach it (no answer to a connection within "
                                f"{CONNECT_TIMEOUT_S:g} s)") from None
        except OSError as exc:
            raise SweepRunError(f"Dask scheduler {address}: cannot reach it ({exc.strerror or exc})") from None

    async def identity() -> Any:
        # Dask retries a refused connection until its timeout: half the time, so that the refusal is
        # what is told, not the outer limit.
        comm = await connect(address, timeout=CONNECT_TIMEOUT_S / 2)
        try:
            await comm.write({"op": "identity", "reply": True})  # a worker takes no n_workers
            return await comm.read()
        finally:
            comm.abort()

    loop = asyncio.new_event_loop()  # not asyncio.run, which leaves the thread with no current loop
    try:
        answer = loop.run_until_complete(asyncio.wait_for(identity(), CONNECT_TIMEOUT_S))
    except TimeoutError:
        raise SweepRunError(f"Dask scheduler {address}: no Dask answer within {CONNECT_TIMEOUT_S:g} s; "
                            "is a Dask scheduler listening there?") from None
    except OSError as exc:
        raise SweepRunError(f"Dask scheduler {address}: cannot reach it ({_reason(exc)})") from None
    except Exception:  # noqa: BLE001 - bytes from what is no Dask peer fail any way in decoding (MemoryError...)
        raise SweepRunError(f"Dask scheduler {address}: the answer is not Dask's; is a Dask scheduler "
                            "listening there?") from None
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind != "Scheduler":
        raise SweepRunError(f"Dask scheduler {address}: it answers as {kind or 'something else'}, "
                            "not as a Dask scheduler")


def _reason(exc: BaseException) -> str:
    """What an OSError from Dask comes to: the system's words for the first cause it wraps that has
    them (`Connection refused`), else its own."""
    cause: BaseException | None = exc
    for _ in range(8):
        if cause is None:
            break
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__


def _fault_of(client: Client, address: str, exc: BaseException) -> SweepRunError | None:
    """The one line for an error from Dask if the scheduler at `address` is gone or has no worker
    left, else None (the error is not the cluster's)."""
    if client.status != "running":
        return SweepRunError(f"Dask scheduler {address}: lost the connection to it ({_reason(exc)})")
    try:
        workers = client.nthreads(callback_timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        return SweepRunError(f"Dask scheduler {address}: did not answer within {CONNECT_TIMEOUT_S:g} s")
    except OSError as again:
        return SweepRunError(f"Dask scheduler {address}: lost the connection to it ({_reason(again)})")
    if not workers:
        return SweepRunError(f"Dask scheduler {address}: every worker was lost ({_reason(exc)})")
    return None


def _close(client: Client) -> None:
    """Closing a client whose scheduler is gone raises nothing, waits at most CONNECT_TIMEOUT_S and
    logs nothing (Dask's "Failed to reconnect to scheduler after 10.00 seconds" comes at once when
    the client is closed while reconnecting): the fault that ended the run is the one to tell."""
    import logging

    def quiet(_record: logging.LogRecord) -> bool:
        return False

    log = logging.getLogger("distributed.client")
    log.addFilter(quiet)
    try:
        with contextlib.suppress(OSError, RuntimeError):
            client.close(timeout=CONNECT_TIMEOUT_S)
    finally:
        log.removeFilter(quiet)


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None,
                processes: bool = True) -> Iterator[Client]:
    """A Dask client: on the cluster at `scheduler` (an address like tcp://host:8786), else on a
    local cluster of `workers` processes (default: one per core, at most `max_workers()`), one
    thread each (the engine is Python and holds the GIL). A scheduler that does not answer within
    CONNECT_TIMEOUT_S, or has no worker within WORKERS_TIMEOUT_S, is a SweepRunError."""
    from dask.distributed import Client, LocalCluster
    from distributed.client import ClosedClientError

    if scheduler:
        address = scheduler_address(scheduler)
        _ask_scheduler(address)
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, ValueError) as exc:
            raise SweepRunError(f"Dask scheduler {address}: cannot reach it ({_reason(exc)})") from None
        try:
            try:
                client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
            except TimeoutError:
                raise SweepRunError(f"no workers joined the scheduler at {address} within "
                                    f"{WORKERS_TIMEOUT_S:g} s") from None
            except OSError as exc:
                raise SweepRunError(f"Dask scheduler {address}: lost while waiting for workers "
                                    f"({_reason(exc)})") from None
            yield client
        except (OSError, ClosedClientError) as exc:
            # Dask's own error from outside run_sweep's wait (its start: the catalogue sent to no
            # worker), told in one line if the scheduler or its workers are indeed gone.
            fault = _fault_of(client, address, exc)
            if fault is None:
                raise
            raise fault from None
        finally:
            _close(client)
        return
    workers = min(os.cpu_count() or 1, max_workers()) if workers is None else check_workers(workers)
    with _workers_ignore_ctrl_c():
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=":0")
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Ctrl+C reaches every process of the terminal's group; worker processes started meanwhile
    inherit an ignored SIGINT (it survives exec), so only this process stops the sweep, and it
    closes the workers itself instead of each dying with a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield  # the app's sweep thread: no terminal, and only the main thread may set handlers
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _batches(points: Iterator[dict], size: int) -> Iterator[list[dict]]:
    while batch := list(itertools.islice(points, size)):
        yield batch


@dataclass
class Progress:
    total: int
    done: int = 0
    failed: int = 0
    started: float = 0.0

    @property
    def rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        rate = self.rate
        return (self.total - self.done) / rate if rate > 0 else None


class _Watch:
    """Whether the scheduler of a run, and any worker of it, is still there, asked while no batch
    finishes: a scheduler lost midway leaves futures that never finish, and tasks wait for ever on
    a scheduler whose workers are all gone. Each ends the run in one line within a stated time."""

    def __init__(self, client: Client, progress: Progress) -> None:
        self.client, self.progress = client, progress
        self.address = getattr(client.scheduler, "address", None) or "?"
        self.no_workers_since: float | None = None

    def fault(self, what: str) -> SweepRunError:
        return SweepRunError(f"Dask scheduler {self.address}: {what}, after {self.progress.done:,} of "
                             f"{self.progress.total:,} points")

    def check(self, cancelled: bool = False) -> None:
        """Within CONNECT_TIMEOUT_S: raise if the scheduler is gone or has had no worker for
        WORKERS_TIMEOUT_S (or has none now, for a batch that was `cancelled`)."""
        if self.client.status != "running":
            raise self.fault("lost the connection to it")
        try:
            nthreads = self.client.nthreads(callback_timeout=CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise self.fault(f"did not answer within {CONNECT_TIMEOUT_S:g} s") from None
        except OSError as exc:  # CommClosedError is one
            raise self.fault(f"lost the connection to it ({_reason(exc)})") from None
        now = time.monotonic()
        if nthreads:
            self.no_workers_since = None
        elif cancelled:
            raise self.fault("every worker was lost, and with them the data sent to them")
        elif self.no_workers_since is None:
            self.no_workers_since = now
        elif now - self.no_workers_since >= WORKERS_TIMEOUT_S:
            raise self.fault(f"every worker was lost and none joined within {WORKERS_TIMEOUT_S:g} s")

    def result(self, future: Future) -> list[dict]:
        """The rows of a finished batch. Its result can still wait (the worker holding it died and the
        batch runs again), so the wait is checked on as the wait for it to finish is."""
        from distributed import CancelledError, KilledWorker

        while True:
            try:
                return future.result(timeout=CHECK_EVERY_S)
            except TimeoutError:
                if future.done():
                    raise  # the batch itself raised it
                self.check()
            except CancelledError as exc:
                if self.client.status != "running":
                    raise self.fault("lost the connection to it") from None
                self.check(cancelled=True)  # the workers all lost, and with them the catalogue sent to each: said so
                raise self.fault(f"a batch of points was cancelled ({getattr(exc, 'reason', None) or exc})") from None
            except KilledWorker:
                raise self.fault("every worker that ran one batch of points died running it (KilledWorker)") from None
            except OSError as exc:
                if self.client.status != "running":
                    raise self.fault(f"lost the connection to it ({_reason(exc)})") from None
                raise


def _finished(queue: as_completed, running: set[Future], watch: _Watch) -> Iterator[Future]:
    """The futures of `queue` as they finish, as iterating on it gives them, but never waiting more
    than CHECK_EVERY_S without asking `watch` whether the scheduler and its workers are there."""
    from distributed import CancelledError, wait

    while not queue.is_empty():
        if not queue.has_ready():
            try:
                wait(list(running), timeout=CHECK_EVERY_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                watch.check()
                continue
            except CancelledError:
                pass  # the cancelled batch comes next, and its result says why
        future = next(queue)
        running.discard(future)
        yield future


def run_sweep(sweep: Sweep, client: Client, on_row: Callable[[dict], None], *, prune: bool = False,
              stop: threading.Event | None = None, on_progress: Callable[[Progress], None] | None = None,
              batch: int = BATCH, beyond: Callable[[], tuple[Constraint, ...]] | None = None) -> Progress:
    """Evaluate every point of `sweep` on `client`, handing each row to `on_row` as it arrives
    (in the order points finish). Returns the progress at the end; `stop` ends it early.
    `beyond`, asked as each batch is sent, gives bounds that prune the batch's points (an
    optimization's best so far). The sweep's catalogue goes to every worker once, so a part
    from the user's `--catalog` file means the same there as here."""
    from dask.distributed import as_completed

    progress = Progress(total=sweep.count(), started=time.monotonic())
    threads = sum(client.nthreads().values()) or 1
    batches = _batches(sweep.points(), batch)
    keep, constraints = sweep.figures, sweep.constraints
    catalog = client.scatter(sweep.catalog or default_catalog(), broadcast=True, hash=False)
    # The base design goes by content, as the catalogue does: a worker never reads the file. In a
    # list, since scatter sends a dict's entries one by one.
    bases, = client.scatter([sweep.bases], broadcast=True, hash=False)

    def submit(points: list[dict]) -> Future:
        return client.submit(evaluate_points, points, keep, constraints, prune, catalog,
                             beyond() if beyond is not None else (), bases, pure=False)

    watch = _Watch(client, progress)
    first = [submit(b) for b in itertools.islice(batches, threads * IN_FLIGHT_PER_WORKER)]
    running = set(first)  # sent and not yet handed out
    queue = as_completed(first)
    try:
        for future in _finished(queue, running, watch):
            rows = watch.result(future)
            future.release()
            for row in rows:
                progress.done += 1
                progress.failed += row["error"] is not None
                on_row(row)
            if on_progress is not None:
                on_progress(progress)
            if stop is not None and stop.is_set():
                continue  # stopping: nothing new is sent, the batches under way finish and are kept
            following = next(batches, None)
            if following is not None:
                sent = submit(following)
                running.add(sent)
                queue.add(sent)
    finally:
        # An exception (a second Ctrl+C, a fault) drops what is still queued; the rows handed out so far
        # stay. A scheduler that is gone has nothing to cancel.
        if running and client.status == "running":
            with contextlib.suppress(OSError):
                client.cancel(list(running))
        queue.clear()
        catalog.release()
        bases.release()
    return progress


def progress_line(progress: Progress, width: int = 30) -> str:
    """`[#########.........] 120/480 points  35.2/s  0:10 left  2 failed`"""
    share = progress.done / progress.total if progress.total else 1.0
    filled = int(share * width)
    left = progress.seconds_left
    eta = "" if left is None else f"  {int(left) // 60}:{int(left) % 60:02d} left"
    failed = f"  {progress.failed:,} failed" if progress.failed else ""
    return (f"[{'#' * filled}{'.' * (width - filled)}] {progress.done:,}/{progress.total:,} points  "
            f"{progress.rate:,.1f}/s{eta}{failed}")
