"""The canvas legend while panning, and opening a design: what a user sees on screen.

The legend is drawn over the viewport, not the scene; Qt scrolls a view by moving its painted
pixels, so these tests compare what is on screen (the window's backing store, as a screen grab
reads it) with a fresh paint of the viewport after a real middle-button drag and a Space+drag."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage

from tests.helpers import two_servers_on_a_leaf, window_settled
from tests.helpers.gui import choose_example

OUT = Path("/tmp/w/workflow")


def _on_screen(view) -> QImage:
    """The viewport's pixels as the window system holds them (not a fresh paint)."""
    viewport = view.viewport()
    window = viewport.window()
    corner = viewport.mapTo(window, QPoint(0, 0))
    shot = window.screen().grabWindow(window.winId(), corner.x(), corner.y(), viewport.width(), viewport.height())
    return shot.toImage().convertToFormat(QImage.Format.Format_RGB32)


def _fresh(view) -> QImage:
    return view.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _pixels(image: QImage) -> np.ndarray:
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())[
        :, :image.width() * 4].reshape(image.height(), image.width(), 4)[..., :3].astype(int)


def _differing(a: QImage, b: QImage) -> int:
    """Pixels that differ by more than antialiasing does (a line's edge painted in a part update
    may round one shade off the same line painted whole)."""
    assert a.size() == b.size()
    return int((np.abs(_pixels(a) - _pixels(b)).max(axis=2) > 24).sum())


def _as_painted_fresh(view) -> bool:
    return _differing(_on_screen(view), _fresh(view)) == 0


def _legend(image: QImage, view) -> QImage:
    return image.copy(view.legend_rect().toAlignedRect().adjusted(-2, -2, 2, 2))


PAN_STEP = QPoint(-23, -17)  # px per mouse move: a drag of 8 moves pans 184 × 136 px


def _drag(qtbot, view, button, start: QPoint, steps: int = 8, step: QPoint = PAN_STEP) -> None:
    viewport = view.viewport()
    qtbot.mousePress(viewport, button, pos=start)
    pos = start
    for _ in range(steps):
        pos = pos + step
        qtbot.mouseMove(viewport, pos)
    qtbot.mouseRelease(viewport, button, pos=pos)


@pytest.fixture
def linked_window(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    window.view.zoom(1.6)  # zoomed in, so there is room to pan
    qtbot.waitUntil(lambda: window_settled(window) and window.last_result is not None, timeout=60_000)
    return window


def test_middle_drag_leaves_no_legend_trail(linked_window, qtbot):
    view = linked_window.view
    qtbot.waitUntil(lambda: _as_painted_fresh(view), timeout=10_000)
    before = _legend(_on_screen(view), view)
    bars = (view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    _drag(qtbot, view, Qt.MouseButton.MiddleButton, QPoint(400, 300))
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) != bars, "the drag did not pan"
    # Once the window has painted, the screen shows what a fresh paint shows: no trail anywhere.
    qtbot.waitUntil(lambda: _as_painted_fresh(view), timeout=10_000)
    shown = _on_screen(view)
    shown.save(str(OUT / "legend-after-middle-drag.png"))
    assert _differing(_legend(shown, view), before) == 0, "the legend changed while the canvas panned under it"


def test_space_drag_pans_over_an_item_and_keeps_the_legend(linked_window, qtbot):
    window, view = linked_window, linked_window.view
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    qtbot.waitUntil(lambda: _as_painted_fresh(view), timeout=10_000)
    before = _legend(_on_screen(view), view)
    leaf = window.scene.nodes["leaf"]
    on_leaf = view.mapFromScene(leaf.sceneBoundingRect().center())
    assert view.itemAt(on_leaf) is not None
    x, y = window.document.design.items["leaf"].x, window.document.design.items["leaf"].y
    bars = (view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    qtbot.keyPress(view, Qt.Key.Key_Space)
    assert view.viewport().cursor().shape() == Qt.CursorShape.OpenHandCursor
    _drag(qtbot, view, Qt.MouseButton.LeftButton, on_leaf)
    qtbot.keyRelease(view, Qt.Key.Key_Space)
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) != bars, "Space+drag did not pan"
    leaf_item = window.document.design.items["leaf"]
    assert (leaf_item.x, leaf_item.y) == (x, y), "Space+drag moved the switch instead of panning"
    assert window.document.undo_stack.count() == 0
    assert view.viewport().cursor().shape() != Qt.CursorShape.OpenHandCursor
    qtbot.waitUntil(lambda: _as_painted_fresh(view), timeout=10_000)
    shown = _on_screen(view)
    shown.save(str(OUT / "legend-after-space-drag.png"))
    assert _differing(_legend(shown, view), before) == 0


def test_opening_an_example_switches_title_and_canvas_together(make_window, qtbot, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from designer.ui import dialogs

    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    old_title = window.windowTitle()
    seen_at_title: list[tuple[str, bool, bool, int]] = []
    window.windowTitleChanged.connect(lambda title: seen_at_title.append((
        title, window.scene.building, set(window.scene.nodes) == set(window.document.design.items),
        len(window.scene.nodes))))
    status: list[tuple[str, bool]] = []
    window.statusBar().messageChanged.connect(lambda text: status.append((
        text, QApplication.overrideCursor() is not None
        and QApplication.overrideCursor().shape() == Qt.CursorShape.WaitCursor)))

    def choose_frontier(dialog):
        row = next(r for r, entry in enumerate(dialog.rows) if "frontier-mi250x" in str(entry["path"]))
        choose_example(dialog, row)
        return dialog.result()

    monkeypatch.setattr(dialogs.ExampleGallery, "exec", choose_frontier)
    window.act_open_example.trigger()
    qtbot.waitUntil(lambda: "frontier-mi250x" in window.windowTitle(), timeout=60_000)
    assert window.windowTitle() != old_title
    title, building, mirrored, shown = seen_at_title[-1]
    assert "frontier-mi250x" in title
    assert len(seen_at_title) == 1, f"the title changed more than once: {seen_at_title}"
    assert not building and mirrored and shown == len(window.document.design.items) > 700, \
        "the title changed before the canvas showed the opened design"
    assert ("Opening frontier-mi250x…", True) in status, status
    assert status[-1][0].startswith("Opened ") and QApplication.overrideCursor() is None
