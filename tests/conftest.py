"""Test environment and shared fixtures. Tests run without a display (Qt's offscreen platform
renders text and grabs windows) unless QT_QPA_PLATFORM says otherwise (`make test-x11`: xcb,
real windows under xvfb-run), and with private configuration and state directories,
so the user's settings, recent files, own catalogue and autosaves never reach a test (nor a test's
autosaves the user): the default catalogue is the shipped one."""

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the X11 tier sets xcb under xvfb-run
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="cluster-designer-test-config-")
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="cluster-designer-test-state-")  # autosaves

import pytest  # noqa: E402

# The autosave fixtures (`state`, `design_file`) two recovery test files share.
pytest_plugins = ("tests.helpers.autosave",)


@pytest.fixture(scope="session")
def app_process(qapp):
    """The process-wide settings the app makes at start-up (GIL switch interval, GC thresholds,
    plot defaults), so windows under test run as they do for a user."""
    from designer.ui.app import configure_process

    configure_process()
    return qapp


@pytest.fixture
def make_window(qtbot, monkeypatch, app_process):
    """A shown main window (1400×900) on a design; closing never blocks on a question."""
    from PySide6.QtWidgets import QMessageBox

    from PySide6.QtCore import QSettings

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard))
    # Each test starts with no recent files: an earlier test's saves would otherwise be listed.
    QSettings("cluster-designer", "Cluster Designer").remove("recentFiles")
    windows = []

    def make(design=None, debounce_ms: int = 10, **options):
        from designer.model.catalog import default_catalog
        from designer.ui.main_window import MainWindow

        window = MainWindow(default_catalog(), debounce_ms=debounce_ms, **options)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        with qtbot.waitExposed(window):  # a context manager: it waits on leaving the block
            window.show()
        # Shortcuts reach only the active window; on X11 a shown window is not active until asked.
        with qtbot.waitActive(window):
            window.activateWindow()
        if design is not None:
            window.document.reset(design, None)
            qtbot.waitUntil(lambda: not window.scene.building, timeout=60_000)
            window.view.zoom_to_fit()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.document.undo_stack.setClean()
        window.scheduler.shutdown(timeout_s=10)
