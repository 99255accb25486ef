"""The canvas paints while another Python thread (the evaluation) is busy, and its long jobs
(building, restyling, switching text on and off) run a slice per turn of the event loop. (How long
each holds the UI thread is measured by `benchmarks/bench_gui.py`.)"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QGraphicsScene

from designer.canvas.items import NodeItem
from designer.document import turns
from tests.helpers import flat_grid


class BusyPythonThread:
    """Holds Python's GIL in turns with the UI thread, as the evaluation does."""

    def __enter__(self):
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()
        return self

    def _spin(self):
        total = 0
        while self.running:
            for i in range(1000):
                total += i * i

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()


def test_a_canvas_built_while_painting_is_held_paints_every_item_beside_a_busy_python_thread(make_window, qtbot):
    """The items are painted once while built (on a stage, so PySide's first-paint look-up for a
    Python override happens while the UI thread holds the GIL); the view's first paint, with the
    evaluation thread busy, then draws them all from the canvas."""
    window = make_window()
    window.scheduler.shutdown(timeout_s=10)  # only the busy thread below competes for the GIL
    window.scene.jobs.hold_painting("test", True)
    window.document.reset(flat_grid(50, wrap=False), None)
    qtbot.waitUntil(lambda: not window.scene.building, timeout=60_000)
    window.view.zoom_to_fit()
    qtbot.waitUntil(lambda: window.scene.jobs.holding == {"test"}, timeout=10_000)
    assert len(window.scene.nodes) == 2500 and len(window.scene.link_items) == 4900
    # Every item reached the canvas; none was left on the stage.
    assert all(n.scene() is window.scene for n in window.scene.nodes.values())
    assert all(link.scene() is window.scene for link in window.scene.link_items.values())
    viewport = window.view.viewport()
    with BusyPythonThread():
        window.scene.jobs.hold_painting("test", False)
        assert viewport.updatesEnabled()
        image = viewport.grab().toImage()
    background = image.pixelColor(0, 0).name()
    samples = [image.pixelColor(x, y) for x in range(0, image.width(), 4) for y in range(0, image.height(), 4)]
    assert sum(1 for c in samples if c.name() != background) > len(samples) // 10, "the mesh was not drawn"


def test_text_added_to_an_item_already_on_the_canvas(make_window):
    """Child text is made by Qt and then moved under its node's label plate (the case that crashed
    when the child moved straight from Qt's scene to the canvas)."""
    window = make_window()
    scene = window.scene
    node = NodeItem("x", "accelerator", "GPU 7")
    scene.addItem(node)
    node.join_labels(scene.labels)
    node.set_values("GPU 7", "H100 SXM", 1)
    texts = [c for c in node.plate.childItems() if hasattr(c, "text")]
    assert sorted(t.text() for t in texts) == ["GPU 7", "H100 SXM"]
    assert all(t.scene() is scene for t in texts)
    scene.removeItem(node)


def test_switching_text_off_on_a_big_canvas_runs_in_slices_and_paints_once(make_window, qtbot):
    window = make_window(flat_grid(50, wrap=False))
    scene = window.scene
    scene.set_detail(True)
    qtbot.waitUntil(lambda: not scene.jobs.holding, timeout=10_000)
    painting_while_switching = []
    beats = []
    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(lambda: (beats.append(1), painting_while_switching.append(
        window.view.viewport().updatesEnabled())))
    timer.start()
    scene.set_detail(False)
    assert not window.view.viewport().updatesEnabled()  # held until every item has switched
    qtbot.waitUntil(lambda: not scene.jobs.holding, timeout=10_000)
    timer.stop()
    assert window.view.viewport().updatesEnabled()
    assert False in painting_while_switching  # the timer ran between slices, while held
    links = list(scene.link_items.values())
    assert all(not link.detail for link in links)
    assert all(not c.isVisible() for n in scene.nodes.values() for c in n.plate.childItems() if hasattr(c, "text"))


class _Poster(QObject):
    """Stands in for input and paint requests: events posted to the queue of the UI thread."""
    posted = Signal(str)


def test_deferred_jobs_run_one_per_turn_in_order_and_skip_deleted_owners(qtbot):
    log: list[str] = []
    poster = _Poster()
    poster.posted.connect(log.append, Qt.ConnectionType.QueuedConnection)

    def job(name):
        def run():
            log.append(name)
            poster.posted.emit(f"event posted by {name}")
        return run

    doomed = QGraphicsScene()
    turns.later(job("a"))
    turns.later(job("never"), doomed)
    turns.later(job("b"))
    turns.later(job("c"))
    doomed.deleteLater()
    qtbot.waitUntil(lambda: len(log) == 6, timeout=5_000)
    # Each job runs in a turn of its own: what it posted is handled before the next job starts.
    assert log == ["a", "event posted by a", "b", "event posted by b", "c", "event posted by c"]


def test_an_export_right_after_a_zoom_shows_every_item_in_the_new_style(make_window, qtbot, tmp_path):
    window = make_window(flat_grid(50, wrap=False))
    scene = window.scene
    qtbot.waitUntil(lambda: not scene.jobs.holding, timeout=10_000)
    window.view.resetTransform()  # 100 %: text on, switched in slices
    assert "detail" in scene.jobs.holding
    export = window.export_canvas_png(str(tmp_path / "canvas.png"))
    # The text comes on in its own slices, done before the first band is drawn.
    restyling_at_bands: list[bool] = []
    export.progress.connect(lambda *_rows: restyling_at_bands.append(scene.restyling()))
    with qtbot.waitSignal(export.finished, timeout=60_000):
        pass
    assert restyling_at_bands and not any(restyling_at_bands)
    assert not scene.jobs.holding
    assert all(link.detail for link in scene.link_items.values())
    assert all(c.isVisible() for n in scene.nodes.values() for c in n.plate.childItems() if hasattr(c, "text"))
