"""UI responsiveness: the longest time the UI thread is held, per example and per user action.

For each example in `resources/examples/` (or those named on the command line) the main window
opens it as the gallery does and then, in turn: re-evaluates after an edit (a rename), Select All,
Delete then Undo, drags everything by 60 pixels with mouse events on the view (at Zoom to Fit,
then zoomed in to 100 %, where every item is drawn and selected), and exports the canvas PNG. Each
phase runs from the action to the window having caught up (canvas built, evaluation shown,
deferred jobs done). Without example names, a 20,480-item flat torus (16,384 chips in 4,096 TPU
v4 hosts, every chip drawn, no replicated groups) is measured too.

The measure is a 5 ms heartbeat timer on the UI thread: a phase's figure is the largest interval
between its ticks minus the period, i.e. the longest the user would have waited for a repaint or a
key press. On a loaded machine much of a gap is time the thread waits for a core, so `--json` also
gives the UI thread's own CPU time within each phase's worst gap (`worst_gap_cpu_ms`). `--tiny`
runs the smallest example only and checks every phase completes (part of `make test`);
`--export-only` measures opening and the PNG export only; `--json` prints the figures as JSON
instead of a table. Runs offscreen unless QT_QPA_PLATFORM says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Opening files adds them to the recent-files list: keep the user's settings out of it.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="cluster-designer-bench-config-")

from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QPoint, QPointF, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from designer.io.examples import example_paths  # noqa: E402
from designer.model.catalog import default_catalog  # noqa: E402
from tests.helpers import window_settled, write_big_design  # noqa: E402

PHASES = ["open", "re-evaluate", "select all", "delete + undo", "drag", "drag zoomed in", "export png"]
PERIOD_MS = 5
# A phase that has not finished by then is reported as hung.
PHASE_LIMIT_S = int(os.environ.get("BENCH_GUI_PHASE_LIMIT_S", 600))
DRAG_PIXELS = 60
DRAG_STEPS = 8
FRAME_MS = 16  # the pace of mouse moves during a drag


class Heartbeat:
    """A PERIOD_MS timer on the UI thread; `worst_ms` is the longest it was kept from ticking."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(PERIOD_MS)
        self.timer.timeout.connect(self._tick)
        self.worst_ms = 0.0
        self.worst_cpu_ms = 0.0  # the UI thread's CPU time within the worst gap
        self._cpu = 0.0

    def _tick(self) -> None:
        gap, cpu = self.clock.nsecsElapsed() / 1e6 - PERIOD_MS, time.thread_time()
        if gap > self.worst_ms:
            self.worst_ms, self.worst_cpu_ms = gap, (cpu - self._cpu) * 1000
        self._cpu = cpu
        self.clock.restart()

    def __enter__(self) -> Heartbeat:
        self.worst_ms = self.worst_cpu_ms = 0.0
        self._cpu = time.thread_time()
        self.clock.start()
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._tick()  # a phase that ends in a long block has no tick after it
        self.timer.stop()


def run_until(done, what: str) -> None:
    """Run the event loop until `done()` is true (checked every PERIOD_MS)."""
    if done():
        return
    loop = QEventLoop()
    poll = QTimer()
    poll.setInterval(PERIOD_MS)
    poll.timeout.connect(lambda: done() and loop.quit())
    limit = QTimer()
    limit.setSingleShot(True)
    limit.timeout.connect(loop.quit)
    poll.start()
    limit.start(PHASE_LIMIT_S * 1000)
    loop.exec()
    poll.stop()
    limit.stop()
    if not done():
        raise SystemExit(f"bench_gui: {what} did not finish within {PHASE_LIMIT_S} s")


def evaluated_and_settled(window):
    """A predicate: an evaluation asked for from now on has ended (shown or failed) and the window
    has caught up."""
    generation = window.scheduler.generation
    return lambda: window.scheduler.generation > generation and window_settled(window)


CPU_IN_GAP: dict[str, float] = {}  # phase → the UI thread's CPU time in its worst gap, for the last design


def phase(window, name: str, action, done=None) -> float:
    """Run `action`, wait for the window to catch up; the worst gap in ms."""
    done = done or evaluated_and_settled(window)
    with Heartbeat() as beat:
        action()
        run_until(done, name)
    CPU_IN_GAP[name] = beat.worst_cpu_ms
    return beat.worst_ms


def drag_everything(window) -> None:
    """Press on a selected item in view (a leaf or a summary card), move the mouse DRAG_PIXELS in
    DRAG_STEPS frames, release: everything selected moves along."""
    view, scene, doc = window.view, window.scene, window.document
    design = doc.design
    viewport = view.viewport()
    QApplication.processEvents()  # the view scrolls to a changed scene rect in a later turn
    shown = view.mapToScene(viewport.rect()).boundingRect()
    transform = view.transform()
    for item_id in design.items:
        node = scene.nodes[item_id]
        if not (node.isVisible() and node.isSelected()):
            continue
        # A point of a leaf or a summary card (its contents hidden) where it is the topmost item:
        # its centre, or a corner of its header where links pass over the centre.
        box = node.sceneBoundingRect()
        points = [box.center(), box.topLeft() + QPointF(6, 6), box.topRight() + QPointF(-6, 6)]
        centre = next((p for p in points if shown.contains(p) and scene.itemAt(p, transform) is node), None)
        if centre is not None:
            break
    else:
        raise SystemExit("bench_gui: no selected item in view to drag")
    start = view.mapFromScene(centre)
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QTest.mouseMove(viewport, start)  # the pointer comes to the item before the button goes down
    QTest.mousePress(viewport, left, none, start)
    if scene.mouseGrabberItem() is not node:
        raise SystemExit(f"bench_gui: pressed {scene.mouseGrabberItem()}, not the item to drag")
    steps = doc.undo_stack.index()
    for step in range(1, DRAG_STEPS + 1):
        at = start + QPoint(DRAG_PIXELS * step // DRAG_STEPS, DRAG_PIXELS * step // (2 * DRAG_STEPS))
        move = QMouseEvent(QEvent.Type.MouseMove, QPointF(at), QPointF(viewport.mapToGlobal(at)),
                           Qt.MouseButton.NoButton, left, none)
        QApplication.sendEvent(viewport, move)
        QTest.qWait(FRAME_MS)
    QTest.mouseRelease(viewport, left, none, at)
    if doc.undo_stack.index() != steps + 1 or not doc.undo_stack.undoText().startswith("Move"):
        raise SystemExit("bench_gui: the drag moved nothing")


def measure(window, path: Path, png: Path, export_only: bool = False) -> dict[str, float]:
    doc = window.document
    gaps: dict[str, float] = {}
    doc.undo_stack.setClean()  # nothing to save: the gallery opens without asking
    opened: list[bool] = []
    evaluated = evaluated_and_settled(window)
    gaps["open"] = phase(window, "open", lambda: opened.append(window.open_path_interactive(str(path))),
                         lambda: opened and evaluated())
    if opened != [True] or window.document.path != str(path):
        raise SystemExit(f"bench_gui: {path} did not open")
    items = len(doc.design.items)
    if export_only:
        return {"open": gaps["open"], "export png": export_png(window, path, png)}

    first = next(iter(doc.design.items.values()))
    gaps["re-evaluate"] = phase(window, "re-evaluate", lambda: doc.set_item(first.id, name=f"{first.label} (edited)"))
    if window.last_result.design.items != items:
        raise SystemExit(f"bench_gui: {path.name}: the edit was not re-evaluated")

    gaps["select all"] = phase(window, "select all", window.act_select_all.trigger, lambda: window_settled(window))
    # Every item and link of the design, those summary cards hide too; every item shown looks selected.
    selected, selected_links = window.scene.selection()
    unselected = sum(1 for node in window.scene.nodes.values() if node.isVisible() and not node.isSelected())
    if len(selected) != items or len(selected_links) != len(doc.design.links) or unselected:
        raise SystemExit(f"bench_gui: {path.name}: Select All selected {len(selected)} of {items} items and "
                         f"{len(selected_links)} of {len(doc.design.links)} links ({unselected} shown unselected)")

    with Heartbeat() as beat:
        evaluated = evaluated_and_settled(window)
        window.act_delete.trigger()
        run_until(lambda: not doc.design.items and evaluated(), "delete")
        evaluated = evaluated_and_settled(window)
        window.act_undo.trigger()
        run_until(lambda: len(doc.design.items) == items and evaluated(), "undo")
    gaps["delete + undo"] = beat.worst_ms
    CPU_IN_GAP["delete + undo"] = beat.worst_cpu_ms

    window.act_select_all.trigger()
    run_until(lambda: window_settled(window), "select all before the drag")
    gaps["drag"] = phase(window, "drag", lambda: drag_everything(window))

    # Zoomed in to 100 %, no card stands for its contents: every item is drawn and selected.
    window.view.resetTransform()
    window.view.centerOn(window.scene.nodes[next(iter(doc.design.items))])
    run_until(lambda: window_settled(window) and not window.scene.jobs.running("cards"), "zoom in")
    gaps["drag zoomed in"] = phase(window, "drag zoomed in", lambda: drag_everything(window))
    window.act_zoom_fit.trigger()
    run_until(lambda: window_settled(window) and not window.scene.jobs.running("cards"), "zoom to fit")

    gaps["export png"] = export_png(window, path, png)
    return gaps


def export_png(window, path: Path, png: Path) -> float:
    """Export Canvas PNG to `png`, from the action to the file written; the worst gap in ms."""
    ended: list[str] = []

    def start() -> None:
        export = window.export_canvas_png(str(png))
        if export is None:
            raise SystemExit(f"bench_gui: {path.name}: the canvas export did not start")
        export.finished.connect(lambda _path: ended.append("finished"))
        export.failed.connect(lambda error: ended.append(f"failed: {error}"))

    gap = phase(window, "export png", start, lambda: ended and window_settled(window))
    if ended != ["finished"] or not png.stat().st_size:
        raise SystemExit(f"bench_gui: {path.name}: the canvas PNG was not written ({ended})")
    return gap


def example_path(name: str) -> Path:
    path = Path(name)
    if path.exists():
        return path
    matches = [p for p in example_paths() if p.name == f"{name}.cluster.json"]
    if not matches:
        raise SystemExit(f"bench_gui: no example named {name!r}")
    return matches[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("examples", nargs="*", help="example names or design files (default: every example)")
    parser.add_argument("--tiny", action="store_true", help="the smallest example only; checks every phase completes")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--export-only", action="store_true", help="measure opening and the PNG export only")
    args = parser.parse_args(argv)

    _app = QApplication.instance() or QApplication(sys.argv[:1])
    from designer.ui.app import configure_process
    from designer.ui.main_window import MainWindow

    configure_process()  # the GIL switch interval and garbage collection the app runs with

    work = Path(tempfile.mkdtemp(prefix="cluster-designer-bench-"))
    if args.tiny:
        paths = [min(example_paths(), key=lambda p: p.stat().st_size)]
    elif args.examples:
        paths = [example_path(name) for name in args.examples]
    else:
        big = work / "flat-torus-20k.cluster.json"
        write_big_design(big)
        paths = example_paths() + [big]

    window = MainWindow(default_catalog())
    window.resize(1600, 1000)
    window.show()
    QTest.qWaitForWindowExposed(window)
    rows: dict[str, dict[str, float]] = {}
    cpu: dict[str, dict[str, float]] = {}
    try:
        for path in paths:
            name = path.name.removesuffix(".cluster.json")
            CPU_IN_GAP.clear()
            rows[name] = measure(window, path, work / f"{name}.png", args.export_only)
            cpu[name] = {p: round(CPU_IN_GAP[p], 1) for p in rows[name] if p in CPU_IN_GAP}
            if not args.json:
                measured = ", ".join(f"{p} {rows[name][p]:.0f} ms" for p in rows[name])
                print(f"{name}: {measured}", file=sys.stderr, flush=True)
    finally:
        window.document.undo_stack.setClean()
        window.scheduler.shutdown(timeout_s=30)
        window.close()
    phases = [p for p in PHASES if p in rows[next(iter(rows))]]
    worst = {p: max(row[p] for row in rows.values()) for p in phases}

    if args.json:
        print(json.dumps({"heartbeat_ms": PERIOD_MS, "worst_gap_ms": rows, "worst_gap_cpu_ms": cpu, "worst": worst},
                         indent=2))
        return 0
    width = max(len(n) for n in [*rows, "worst"])
    print(f"Longest UI-thread gap (ms), {PERIOD_MS} ms heartbeat")
    print(f"{'':<{width}}  " + "  ".join(f"{p:>13}" for p in phases))
    for name, row in [*rows.items(), ("worst", worst)]:
        print(f"{name:<{width}}  " + "  ".join(f"{row[p]:>13.0f}" for p in phases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
