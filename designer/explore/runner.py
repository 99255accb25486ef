"""Running a sweep on Dask distributed: a local cluster of worker processes sized to the machine,
or an existing cluster by its scheduler's address, with the same code.

Points are sent in small batches, a bounded number in flight (`as_completed`, a new batch
submitted as one finishes), so memory stays flat however many points a sweep has; each finished
row goes to the caller at once (a file writer, the app's table) and is not kept here. A stop (Ctrl+C,
the app's Stop button, `stop` set) sends nothing more and lets the few batches in flight finish, so
the workers close cleanly; every finished row is kept."""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from designer.explore.points import evaluate_points
from designer.explore.spec import Constraint, Sweep
from designer.model.catalog import default_catalog
from designer.model.errors import DesignerError

BATCH = 8  # points per Dask task: a task's scheduling costs about as much as one small point
IN_FLIGHT_PER_WORKER = 4  # batches queued per worker thread: enough that none waits, few enough to stay small


class SweepRunError(DesignerError):
    pass


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None, processes: bool = True):
    """A Dask client: on the cluster at `scheduler` (an address like tcp://host:8786), else on a
    local cluster of `workers` processes (default: one per core), one thread each (the engine is
    Python and holds the GIL)."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepRunError(f"Dask scheduler {scheduler}: cannot reach it ({exc})") from None
        try:
            yield client
        finally:
            client.close()
        return
    workers = workers or os.cpu_count() or 1
    with _workers_ignore_ctrl_c():
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=":0")
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@contextlib.contextmanager
def _workers_ignore_ctrl_c():
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


def run_sweep(sweep: Sweep, client, on_row: Callable[[dict], None], *, prune: bool = False,
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

    def submit(points: list[dict]):
        return client.submit(evaluate_points, points, keep, constraints, prune, catalog,
                             beyond() if beyond is not None else (), pure=False)

    queue = as_completed([submit(b) for b in itertools.islice(batches, threads * IN_FLIGHT_PER_WORKER)])
    try:
        for future in queue:
            rows = future.result()
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
                queue.add(submit(following))
    finally:
        # An exception (a second Ctrl+C) drops what is still queued; the rows handed out so far stay.
        pending = list(queue.futures)
        if pending:
            client.cancel(pending)
        queue.clear()
        catalog.release()
    return progress


# -- where rows go ----------------------------------------------------------------------------------

def columns(sweep: Sweep) -> list[str]:
    return ["point", *sweep.axes, *sweep.figures, "meets", "unpriced", "pruned", "error", "design"]


class CsvRows:
    """Rows appended to a CSV file as they arrive, flushed each time so a stopped sweep leaves
    every finished row on disk. Figures that are lists or objects are written as JSON."""

    def __init__(self, path: str | os.PathLike, header: list[str]):
        try:
            self._file = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise SweepRunError(f"{path}: cannot be written ({exc.strerror or exc})") from None
        self._header = header
        self._writer = csv.writer(self._file, lineterminator="\n")
        self._writer.writerow(header)
        self._file.flush()

    def write(self, row: dict) -> None:
        self._writer.writerow([_cell(row.get(name)) for name in self._header])
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


class ParquetRows:
    """Rows written to a Parquet file in row groups of `group` rows (and the rest on close).
    Column types are taken from the first group: numbers as float64, true/false as bool, the rest
    as text."""

    def __init__(self, path: str | os.PathLike, header: list[str], group: int = 256):
        try:
            import pyarrow  # noqa: F401 - only to say clearly that it is missing
        except ImportError:
            raise SweepRunError("--parquet needs pyarrow: pip install pyarrow (or write CSV)") from None
        self._path, self._header, self._group = Path(path), header, group
        self._rows: list[dict] = []
        self._writer = None
        self._schema = None

    def write(self, row: dict) -> None:
        self._rows.append(row)
        if len(self._rows) >= self._group:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._rows:
            return
        if self._schema is None:
            self._schema = pa.schema([(name, _arrow_type([r.get(name) for r in self._rows])) for name in self._header])
            try:
                self._writer = pq.ParquetWriter(self._path, self._schema)
            except OSError as exc:
                raise SweepRunError(f"{self._path}: cannot be written ({exc})") from None
        data = {field.name: [_typed(r.get(field.name), field.type) for r in self._rows] for field in self._schema}
        self._writer.write_table(pa.table(data, schema=self._schema))
        self._rows.clear()

    def close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()


def _arrow_type(values: list):
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64()
    return pa.string()


def _typed(value: Any, kind) -> Any:
    import pyarrow as pa

    if value is None:
        return None
    if kind == pa.float64():
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == pa.bool_():
        return bool(value)
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)


def progress_line(progress: Progress, width: int = 30) -> str:
    """`[#########.........] 120/480 points  35.2/s  0:10 left  2 failed`"""
    share = progress.done / progress.total if progress.total else 1.0
    filled = int(share * width)
    left = progress.seconds_left
    eta = "" if left is None else f"  {int(left) // 60}:{int(left) % 60:02d} left"
    failed = f"  {progress.failed:,} failed" if progress.failed else ""
    return (f"[{'#' * filled}{'.' * (width - filled)}] {progress.done:,}/{progress.total:,} points  "
            f"{progress.rate:,.1f}/s{eta}{failed}")
