"""The evaluation scheduler: debounce, one worker thread, stale results dropped, failures reported.

A slow evaluation is one the test holds: the fake engine blocks on a gate until the test opens it,
and says when the worker has entered it, so no test waits on the clock."""

import gc
import threading

import pytest
from PySide6.QtCore import QCoreApplication

from designer.ui import evaluation
from designer.ui.evaluation import EvaluationScheduler

WAIT_S = 30  # a guard against a hang, never reached when the scheduler works


class Gate:
    """Holds the worker inside an evaluation until `open()`."""

    def __init__(self):
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.left = threading.Event()

    def wait_entered(self):
        assert self.entered.wait(WAIT_S), "the worker never entered the evaluation"

    def open(self):
        self.opened.set()


@pytest.fixture
def calls(monkeypatch):
    """Patch the engine entry point the scheduler calls; record (snapshot, workload, thread).
    Returns the record and the gates: `gates[name] = Gate()` makes the evaluation of `name` slow."""
    record = []
    gates: dict[str, Gate] = {}

    def fake_evaluate(design, catalog=None, workload=None):
        record.append((design, workload, threading.get_ident()))
        gate = gates.get(design)
        if gate is not None:
            gate.entered.set()
            assert gate.opened.wait(WAIT_S)
            gate.left.set()
        if design == "boom":
            raise ValueError("switch s1 has 80 links but 64 ports")
        return {"evaluated": design, "workload": workload}

    monkeypatch.setattr(evaluation, "evaluate", fake_evaluate)
    yield record, gates
    for gate in gates.values():  # never leave the worker blocked for the next test
        gate.open()


@pytest.fixture
def scheduler(qtbot):
    s = EvaluationScheduler(debounce_ms=60)
    yield s
    s.shutdown()


def _collect(s):
    got = {"started": [], "finished": [], "failed": []}
    s.started.connect(lambda g: got["started"].append(g))
    s.finished.connect(lambda g, r: got["finished"].append((g, r)))
    s.failed.connect(lambda g, m: got["failed"].append((g, m)))
    return got


def test_three_requests_within_the_debounce_window_make_one_evaluation(qtbot, scheduler, calls):
    record, _ = calls
    got = _collect(scheduler)
    scheduler.request("a", None)
    scheduler.request("b", None)
    with qtbot.waitSignal(scheduler.finished, timeout=5000) as blocker:
        scheduler.request("c", {"op": "allreduce"})
    assert scheduler.wait_idle(5000)
    assert [r[0] for r in record] == ["c"]
    assert got["started"] == [1]
    assert blocker.args[0] == 1
    assert blocker.args[1] == {"evaluated": "c", "workload": {"op": "allreduce"}}
    assert got["finished"] == [(1, {"evaluated": "c", "workload": {"op": "allreduce"}})]
    assert not scheduler.busy
    assert scheduler.last_duration_s is not None and scheduler.last_duration_s >= 0


def test_busy_while_debouncing_and_evaluating(qtbot, scheduler, calls):
    _, gates = calls
    slow = gates["slow"] = Gate()
    assert not scheduler.busy
    scheduler.request("slow", None)
    assert scheduler.busy  # waiting in the debounce timer
    with qtbot.waitSignal(scheduler.started, timeout=5000):
        pass
    slow.wait_entered()
    assert scheduler.busy  # on the worker
    slow.open()
    assert scheduler.wait_idle(5000)
    assert not scheduler.busy


def test_a_slow_evaluation_superseded_by_a_newer_one_is_never_emitted(qtbot, scheduler, calls):
    record, gates = calls
    old = gates["old"] = Gate()
    got = _collect(scheduler)
    scheduler.request("old", None)
    with qtbot.waitSignal(scheduler.started, timeout=5000):
        pass
    old.wait_entered()
    with qtbot.waitSignal(scheduler.started, timeout=5000):
        scheduler.request("new", None)  # submitted while "old" is still running
    old.open()
    assert scheduler.wait_idle(10_000)
    assert [r[0] for r in record] == ["old", "new"]  # both ran, one after the other
    assert got["started"] == [1, 2]
    assert got["finished"] == [(2, {"evaluated": "new", "workload": None})]
    assert got["failed"] == []


def test_a_result_is_dropped_while_a_newer_request_waits_in_the_debounce_timer(qtbot, calls):
    record, gates = calls
    old = gates["old"] = Gate()
    s = EvaluationScheduler(debounce_ms=3_600_000)  # "new" waits in the timer for as long as the test needs
    try:
        got = _collect(s)
        s.request_now("old", None)
        old.wait_entered()
        s.request("new", None)
        old.open()
        # The old result reaches the UI thread (no job left in flight) while "new" still waits.
        qtbot.waitUntil(lambda: s._in_flight == 0, timeout=5000)
        assert got["finished"] == [] and s.busy
        with qtbot.waitSignal(s.finished, timeout=5000):
            s.request_now("new", None)
        assert got["finished"] == [(2, {"evaluated": "new", "workload": None})]
    finally:
        s.shutdown()


def test_queued_stale_jobs_are_skipped_without_evaluating(qtbot, scheduler, calls):
    record, gates = calls
    first = gates["first"] = Gate()
    got = _collect(scheduler)
    scheduler.request_now("first", None)
    first.wait_entered()
    scheduler.request_now("second", None)  # queued behind "first", superseded before it starts
    scheduler.request_now("third", None)
    first.open()
    assert scheduler.wait_idle(10_000)
    assert [r[0] for r in record] == ["first", "third"]
    assert got["finished"] == [(3, {"evaluated": "third", "workload": None})]


def test_evaluation_runs_on_one_worker_thread_never_the_ui_thread(qtbot, scheduler, calls):
    record, _ = calls
    ui_thread = threading.get_ident()
    for name in ("x", "y", "z"):
        with qtbot.waitSignal(scheduler.finished, timeout=5000):
            scheduler.request(name, None)
    threads = {r[2] for r in record}
    assert len(record) == 3
    assert ui_thread not in threads
    assert len(threads) == 1  # one worker thread, reused


def test_signals_arrive_on_the_ui_thread(qtbot, scheduler, calls):
    seen = []
    scheduler.finished.connect(lambda g, r: seen.append(threading.get_ident()))
    with qtbot.waitSignal(scheduler.finished, timeout=5000):
        scheduler.request("x", None)
    assert seen == [threading.get_ident()]


def test_failure_emits_failed_with_the_message(qtbot, scheduler, calls):
    got = _collect(scheduler)
    with qtbot.waitSignal(scheduler.failed, timeout=5000) as blocker:
        scheduler.request("boom", None)
    generation, message = blocker.args
    assert generation == 1
    assert "switch s1 has 80 links but 64 ports" in message
    assert "ValueError" in message
    assert got["finished"] == []
    # The scheduler keeps working after a failure.
    with qtbot.waitSignal(scheduler.finished, timeout=5000) as blocker:
        scheduler.request("ok", None)
    assert blocker.args == [2, {"evaluated": "ok", "workload": None}]


def test_the_collector_waits_while_the_engine_runs_and_what_it_built_is_frozen(qtbot, scheduler, calls):
    _, gates = calls
    gc.unfreeze()
    for name in ("slow", "boom"):
        gates[name] = Gate()
        scheduler.request_now(name, None)
        gates[name].wait_entered()
        assert not gc.isenabled()  # no collection the engine sets off holds the GIL against the UI thread
        frozen = gc.get_freeze_count()
        gates[name].open()
        assert scheduler.wait_idle(5000)
        assert gc.isenabled() and gc.get_freeze_count() > frozen  # after a failure too


def test_workload_is_copied_at_request_time(qtbot, scheduler, calls):
    record, _ = calls
    workload = {"model": "gpt3-175b"}
    scheduler.request("d", workload)
    workload["model"] = "changed after the request"
    assert scheduler.wait_idle(5000)
    assert record[0][1] == {"model": "gpt3-175b"}


def test_shutdown_joins_the_worker_and_emits_nothing_more(qtbot, calls):
    record, gates = calls
    slow = gates["slow"] = Gate()
    s = EvaluationScheduler(debounce_ms=0)
    got = _collect(s)
    s.request_now("slow", None)
    slow.wait_entered()
    # Opened from another thread while (or just before) shutdown waits for the evaluation to end.
    threading.Thread(target=slow.open).start()
    s.shutdown()
    assert slow.left.is_set()  # shutdown returned only after the running evaluation ended
    assert all(not t.name.startswith("cluster-designer-eval") or not t.is_alive() for t in threading.enumerate())
    QCoreApplication.processEvents()  # deliver anything the worker posted before it stopped
    assert got["finished"] == []
    s.request("after", None)  # ignored after shutdown
    assert not s.busy
    s.shutdown()  # idempotent


def test_real_engine_on_the_worker_thread(qtbot):
    """The scheduler with the real engine: a tiny design built in code evaluates off the UI thread."""
    from designer.model.catalog import default_catalog
    from designer.topologies import generate

    catalog = default_catalog()
    design = generate("rail-fat-tree", nodes=4)
    s = EvaluationScheduler(catalog=catalog, debounce_ms=10)
    try:
        with qtbot.waitSignal(s.finished, timeout=30_000) as blocker:
            s.request(design.snapshot(), None)
        result = blocker.args[1]
        assert result.inventory.accelerators == 32
    finally:
        s.shutdown()
