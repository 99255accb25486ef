"""Every example opens from the gallery, evaluates and renders without stalling the UI thread."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication

from designer.io.examples import example_paths, example_summaries
from designer.ui.app import configure_process

EXAMPLES = example_paths()


class Heartbeat:
    """A 10 ms timer on the UI thread; the longest gap between its ticks is the longest stall."""

    def __init__(self):
        self.clock = QElapsedTimer()
        self.gaps: list[int] = []
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def _tick(self):
        self.gaps.append(self.clock.restart())

    def __enter__(self):
        self.clock.start()
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.stop()


@pytest.fixture(autouse=True, scope="module")
def app_process_settings():
    """These windows run with the settings the app makes at start-up (GIL switch interval, GC)."""
    configure_process()


@pytest.fixture(scope="module")
def gallery_window(qapp):
    """One window that opens the examples one after another, as a user browsing the gallery."""
    from conftest import gui_catalog
    from designer.ui.main_window import MainWindow

    window = MainWindow(gui_catalog())
    window.resize(1600, 1000)
    window.show()
    _spin(0.5)
    yield window
    window.document.undo_stack.setClean()
    window.scheduler.shutdown(timeout_s=10)
    window.close()


def _spin(seconds: float) -> None:
    clock = QElapsedTimer()
    clock.start()
    while clock.elapsed() < seconds * 1000:
        QApplication.processEvents()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name.split(".")[0] for p in EXAMPLES])
def test_example_opens_evaluates_and_renders_without_a_stall(gallery_window, path):
    """From the click that opens it to the last tab redrawn: reading the file (on a helper
    thread), building the canvas, evaluating, the results and the link overlay."""
    window = gallery_window
    evaluations = window.evaluations
    with Heartbeat() as beat:
        QTimer.singleShot(0, lambda: window.open_path(path))
        clock = QElapsedTimer()
        clock.start()
        while (window.evaluations == evaluations or window.scene.building) and clock.elapsed() < 60_000:
            QApplication.processEvents()
        _spin(0.3)  # the overlay and the hidden tabs are drawn in later turns
    design = window.document.design
    expected = next(r for r in example_summaries() if r["path"] == str(path))
    assert window.last_result.inventory.accelerators == expected["accelerators"]
    assert len(window.scene.nodes) == len(design.items)
    assert window.windowTitle().startswith(path.name[: -len(".cluster.json")])
    # The view shows the whole design.
    visible = window.view.mapToScene(window.view.viewport().rect()).boundingRect()
    assert visible.contains(window.scene.content_rect().adjusted(20, 20, -20, -20))
    assert max(beat.gaps) < 100, f"UI thread stalled {max(beat.gaps)} ms opening {path.name}"


def test_open_example_menu_shows_the_gallery_and_opens_the_choice(make_window, qtbot, monkeypatch):
    from designer.ui import dialogs

    window = make_window()
    chosen = EXAMPLES[0]

    def accept(dialog):
        assert dialog.table.rowCount() == len(EXAMPLES)
        names = [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())]
        sizes = [dialog.table.item(r, 1).text() for r in range(dialog.table.rowCount())]
        summaries = [dialog.table.item(r, 2).text() for r in range(dialog.table.rowCount())]
        assert all(names) and all(s.replace(",", "").isdigit() for s in sizes) and all(summaries)
        dialog.table.selectRow(0)
        dialog._choose(0)
        return dialog.result()

    monkeypatch.setattr(dialogs.ExampleGallery, "exec", accept)
    window.act_open_example.trigger()
    qtbot.waitUntil(lambda: window.document.path is not None and str(window.document.path) == str(chosen),
                    timeout=10_000)
