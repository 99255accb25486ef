"""Dask faults end a sweep in one line within a stated time, with the rows finished so far kept:
a port that is no scheduler, a listener that never answers, schemes not offered, a scheduler with
no worker, and a scheduler or all its workers killed midway. Real `dask scheduler` and
`dask worker` processes on localhost; every process is killed and waited for, even on failure."""

from __future__ import annotations

import collections
import contextlib
import csv
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from designer.cli import main
from designer.explore import runner
from designer.explore.runner import SweepRunError, dask_client

pytestmark = pytest.mark.cluster

# 40 points of a template sweep, a few seconds of work on one worker.
SWEEP = {"format": "cluster-designer-sweep", "version": 1, "template": "rail-fat-tree",
         "params": {"nodes": {"from": 2, "to": 40, "step": 2}, "oversubscription": [1, 2]},
         "workloads": [{"model": "megatron-1.7b", "tokens": 1e11}], "plans": ["auto"],
         "keep": ["summary.power_kw", "training.days"], "constraints": ["summary.power_kw <= 100"]}
POINTS = 40
START_S = 120  # a generous deadline for a scheduler or worker process to come up on a loaded machine
# A watchdog, not a speed check: a fault that hangs fails its test after this long instead of
# stalling the suite; how soon each is told is what its message states ("within 2 s").
HANG_S = 120


class Processes:
    """Dask processes started for one test, each in a process group of its own (a nanny and its
    worker die together), killed and waited for at the end whatever happened."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.started: list[subprocess.Popen] = []
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.address = ""
        self.scheduler_file = folder / "scheduler.json"

    def _start(self, name: str, module: str, *args: str) -> subprocess.Popen:
        env = {**os.environ, "DASK_LOGGING__DISTRIBUTED": "error"}
        with open(self.folder / f"{name}.log", "wb") as log:
            process = subprocess.Popen([sys.executable, "-m", module, *args], stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.started.append(process)
        return process

    def start_scheduler(self) -> str:
        self.scheduler = self._start("scheduler", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                     "--port", "0", "--dashboard-address", ":0",
                                     "--scheduler-file", str(self.scheduler_file))
        deadline = time.monotonic() + START_S
        while not self.address:  # the file is written once the scheduler listens
            assert time.monotonic() < deadline, "the scheduler did not start"
            with contextlib.suppress(OSError, ValueError, KeyError):
                self.address = json.loads(self.scheduler_file.read_text())["address"]
            if not self.address:
                try:  # wait on the process itself: its exit is the one thing that ends the wait early
                    self.scheduler.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    continue
                raise AssertionError((self.folder / "scheduler.log").read_text())
        return self.address

    def start_workers(self, count: int) -> None:
        from dask.distributed import Client

        for _ in range(count):
            self.workers.append(self._start(f"worker{len(self.workers)}", "distributed.cli.dask_worker",
                                            "--scheduler-file", str(self.scheduler_file), "--nworkers", "1",
                                            "--nthreads", "1", "--no-dashboard", "--death-timeout", "60"))
        with Client(self.address, timeout=START_S, set_as_default=False) as client:
            client.wait_for_workers(len(self.workers), timeout=START_S)

    @staticmethod
    def kill(process: subprocess.Popen) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def kill_all(self) -> None:
        for process in self.started:
            self.kill(process)


class Hung(BaseException):
    """Not an Exception: no handler in the runner or Dask may take it for a fault it tells."""


@pytest.fixture(autouse=True)
def watchdog():
    """A test still running after HANG_S fails (SIGALRM in the main thread, where the sweep waits
    on Dask) instead of holding the suite for ever."""
    def hung(_signum, _frame):
        raise Hung(f"still running after {HANG_S} s: a Dask fault hangs")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def dask_processes(tmp_path):
    processes = Processes(tmp_path)
    try:
        yield processes
    finally:
        processes.kill_all()


@pytest.fixture
def spec(tmp_path) -> Path:
    path = tmp_path / "faults.sweep.json"
    path.write_text(json.dumps(SWEEP))
    return path


def _error_line(err: str) -> str:
    """The refusal: exactly one line `cluster-designer: error: ...`, and no traceback anywhere."""
    assert "Traceback" not in err, err
    lines = [line for line in err.replace("\r", "\n").splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def _sweep_killing(monkeypatch, capfd, spec: Path, out: Path, address: str, victims: list[subprocess.Popen],
                   kill=Processes.kill):
    """Run `sweep` on `address`, killing `victims` as the first row arrives: (exit code, the error
    line, points handed out)."""
    real = runner.run_sweep
    seen: list[int] = []
    killed: list[bool] = []

    def run_sweep(sweep, client, on_row, **options):
        def row(r: dict) -> None:
            on_row(r)
            seen.append(r["point"])
            if not killed:
                for victim in victims:
                    kill(victim)
                killed.append(True)

        return real(sweep, client, row, **options)

    monkeypatch.setattr(runner, "run_sweep", run_sweep)
    code = main(["sweep", str(spec), "-o", str(out), "--scheduler", address])
    assert killed, "no row arrived before the end"
    return code, _error_line(capfd.readouterr().err), seen


def _kept(out: Path, seen: list[int]) -> list[int]:
    with open(out, newline="", encoding="utf-8") as handle:
        points = [int(row["point"]) for row in csv.DictReader(handle)]
    assert not [p for p, n in collections.Counter(points).items() if n > 1], "a row written twice"
    assert sorted(points) == sorted(seen)
    assert 0 < len(points) < POINTS
    return points


def test_a_sweep_on_a_running_scheduler_writes_every_point(dask_processes, spec, tmp_path, capfd):
    address = dask_processes.start_scheduler()
    dask_processes.start_workers(1)
    out = tmp_path / "rows.csv"
    assert main(["sweep", str(spec), "-o", str(out), "--scheduler", address.removeprefix("tcp://")]) == 0
    assert "error" not in capfd.readouterr().err
    with open(out, newline="", encoding="utf-8") as handle:
        assert sorted(int(row["point"]) for row in csv.DictReader(handle)) == list(range(POINTS))
    # A worker's address is no scheduler's.
    from dask.distributed import Client

    with Client(address, timeout=START_S, set_as_default=False) as client:
        worker, = client.scheduler_info()["workers"]
    assert main(["sweep", str(spec), "-o", str(tmp_path / "again.csv"), "--scheduler", worker]) == 2
    assert _error_line(capfd.readouterr().err) == \
        f"cluster-designer: error: Dask scheduler {worker}: it answers as Worker, not as a Dask scheduler"


def test_a_scheduler_killed_midway_ends_the_run_in_one_line_keeping_the_rows(dask_processes, spec, tmp_path,
                                                                              monkeypatch, capfd):
    address = dask_processes.start_scheduler()
    dask_processes.start_workers(1)
    out = tmp_path / "rows.csv"
    code, line, seen = _sweep_killing(monkeypatch, capfd, spec, out, address, [dask_processes.scheduler])
    assert code == 2
    assert line.startswith(f"cluster-designer: error: Dask scheduler {address}: lost the connection to it"), line
    _kept(out, seen)


def test_every_worker_killed_midway_ends_the_run_in_one_line_keeping_the_rows(dask_processes, spec, tmp_path,
                                                                               monkeypatch, capfd):
    address = dask_processes.start_scheduler()
    dask_processes.start_workers(2)
    out = tmp_path / "rows.csv"
    code, line, seen = _sweep_killing(monkeypatch, capfd, spec, out, address, dask_processes.workers)
    assert code == 2
    assert line.startswith(f"cluster-designer: error: Dask scheduler {address}: every worker was lost"), line
    _kept(out, seen)


def test_a_scheduler_frozen_midway_ends_the_run_once_it_does_not_answer(dask_processes, spec, tmp_path,
                                                                         monkeypatch, capfd):
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 3.0)
    monkeypatch.setattr(runner, "CHECK_EVERY_S", 0.5)
    address = dask_processes.start_scheduler()
    dask_processes.start_workers(1)
    out = tmp_path / "rows.csv"
    code, line, seen = _sweep_killing(monkeypatch, capfd, spec, out, address, [dask_processes.scheduler],
                                               kill=lambda process: os.killpg(process.pid, signal.SIGSTOP))
    assert code == 2
    assert line.startswith(f"cluster-designer: error: Dask scheduler {address}: did not answer within 3 s"), line
    _kept(out, seen)


def test_workers_gone_without_a_lost_batch_are_told_after_the_workers_timeout(monkeypatch):
    # Every worker lost usually loses the catalogue sent to each, and the batches are cancelled at
    # once (above); a scheduler that just has no worker left is told after WORKERS_TIMEOUT_S.
    monkeypatch.setattr(runner, "WORKERS_TIMEOUT_S", 0.0)
    client = SimpleNamespace(scheduler=SimpleNamespace(address="tcp://10.0.0.5:8786"), status="running",
                             nthreads=lambda **_: {})
    watch = runner._Watch(client, runner.Progress(total=40, done=8))
    watch.check()  # no worker: the clock starts
    with pytest.raises(SweepRunError) as refusal:
        watch.check()
    assert str(refusal.value) == ("Dask scheduler tcp://10.0.0.5:8786: every worker was lost and none joined "
                                  "within 0 s, after 8 of 40 points")
    client.status = "connecting"
    with pytest.raises(SweepRunError, match="^Dask scheduler tcp://10.0.0.5:8786: lost the connection to it, "):
        watch.check()


def test_a_scheduler_no_worker_joins_is_refused_naming_it(dask_processes, spec, tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(runner, "WORKERS_TIMEOUT_S", 2.0)
    address = dask_processes.start_scheduler()
    assert main(["sweep", str(spec), "-o", str(tmp_path / "rows.csv"), "--scheduler", address]) == 2
    line = _error_line(capfd.readouterr().err)
    assert line == f"cluster-designer: error: no workers joined the scheduler at {address} within 2 s"


@contextlib.contextmanager
def _http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def _silent_listener():
    """A port that accepts every connection and never sends a byte."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    accepted: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(timeout=10)
        for conn in accepted:
            conn.close()
        listener.close()


@pytest.mark.parametrize("server", [_http_server, _silent_listener], ids=["http-server", "silent-listener"])
def test_a_port_that_is_no_dask_scheduler_is_refused_within_the_connect_timeout(server, spec, tmp_path,
                                                                                 monkeypatch, capfd):
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 2.0)
    with server() as port:
        assert main(["sweep", str(spec), "-o", str(tmp_path / "rows.csv"), "--scheduler", f"127.0.0.1:{port}"]) == 2
    line = _error_line(capfd.readouterr().err)
    assert line.startswith(f"cluster-designer: error: Dask scheduler tcp://127.0.0.1:{port}: no Dask answer "
                           "within 2 s"), line


def test_a_closed_port_is_refused_naming_the_refusal(spec, tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 2.0)
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # free once closed
    assert main(["sweep", str(spec), "-o", str(tmp_path / "rows.csv"), "--scheduler", f"127.0.0.1:{port}"]) == 2
    assert _error_line(capfd.readouterr().err) == \
        f"cluster-designer: error: Dask scheduler tcp://127.0.0.1:{port}: cannot reach it (Connection refused)"


@pytest.mark.parametrize("scheme", ["ucx", "tls", "ws", "tcp+tls"])
def test_a_scheme_other_than_tcp_is_refused_before_connecting(scheme, spec, tmp_path, capfd):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert main(["sweep", str(spec), "-o", str(tmp_path / "rows.csv"),
                     "--scheduler", f"{scheme}://127.0.0.1:{port}"]) == 2
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing connected
    line = _error_line(capfd.readouterr().err)
    assert line.startswith(f"cluster-designer: error: Dask scheduler {scheme}://127.0.0.1:{port}: the scheme "
                           f"{scheme}:// is not supported"), line


@pytest.mark.parametrize("address", ["127.0.0.1", "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536", "tcp://:8786"])
def test_an_address_without_a_usable_port_is_refused(address, spec, tmp_path, capfd):
    assert main(["sweep", str(spec), "-o", str(tmp_path / "rows.csv"), "--scheduler", address]) == 2
    assert "expected tcp://HOST:PORT or HOST:PORT" in _error_line(capfd.readouterr().err)


@pytest.mark.parametrize("count", ["0", "-1", str(10**20), "1e3", "many"])
def test_a_worker_count_out_of_bounds_is_refused_before_anything_starts(count, spec, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(spec), "-o", str(tmp_path / "rows.csv"), "--workers", count])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (f"cluster-designer sweep: error: argument --workers: {count}: expected a whole "
                                    f"number from 1 to {runner.max_workers()}")
    assert not (tmp_path / "rows.csv").exists()


@pytest.mark.parametrize("count", [0, -1, 10**20, runner.MAX_WORKERS + 1, True])
def test_the_app_and_the_api_get_the_same_worker_bound(count):
    with pytest.raises(SweepRunError, match=f"a local cluster has 1 to {runner.max_workers()} "), \
            dask_client(workers=count):
        pass
    assert runner.max_workers() <= runner.MAX_WORKERS
