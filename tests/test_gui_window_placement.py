"""The first window fits the screen it opens on, and the next start opens the window as the user
left it (size, position, docks), through QSettings. Run offscreen and, in the X11 tier, in a real
window on Xvfb's screen."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from designer.model.catalog import default_catalog


def _new_window(qtbot):
    from designer.ui.main_window import MainWindow

    window = MainWindow(default_catalog(), debounce_ms=10)
    qtbot.addWidget(window)
    return window


def test_the_first_window_fits_the_available_screen(qtbot, app_process):
    QSettings("cluster-designer", "Cluster Designer").remove("window")
    window = _new_window(qtbot)
    window.place_on_screen(4000, 3000)  # asked for more than any screen here has
    with qtbot.waitExposed(window):
        window.show()
    screen = window.screen().availableGeometry()
    assert window.width() <= screen.width() * 0.9 + 1 and window.height() <= screen.height() * 0.9 + 1
    assert screen.contains(window.frameGeometry().center())
    window.scheduler.shutdown(timeout_s=10)
    window.close()


def test_size_position_and_docks_are_remembered_for_the_next_window(qtbot, app_process):
    QSettings("cluster-designer", "Cluster Designer").remove("window")
    first = _new_window(qtbot)
    first.place_on_screen()
    with qtbot.waitExposed(first):
        first.show()
    screen = first.screen().availableGeometry()
    wanted = (min(700, screen.width() - 40), min(500, screen.height() - 60))
    first.resize(*wanted)
    first.results_dock.hide()
    qtbot.waitUntil(lambda: (first.width(), first.height()) == wanted, timeout=5_000)
    first.scheduler.shutdown(timeout_s=10)
    assert first.close()  # a real close event: nothing unsaved, so it closes and saves its place

    second = _new_window(qtbot)
    second.place_on_screen()
    with qtbot.waitExposed(second):
        second.show()
    assert (second.width(), second.height()) == wanted
    assert not second.results_dock.isVisible() and second.left_dock.isVisible()
    second.scheduler.shutdown(timeout_s=10)
    second.close()
    QSettings("cluster-designer", "Cluster Designer").remove("window")
