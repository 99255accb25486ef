"""Starting the desktop app, and the offscreen `--screenshot` mode."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path


def configure_process() -> None:
    """Process-wide settings the app needs, made once at start-up (they affect every thread)."""
    import pyqtgraph as pg

    # The engine is Python on a worker thread; every call the UI thread makes into C++ (each
    # painter call) gives up the GIL, and getting it back waits up to the switch interval. The
    # default 5 ms makes a canvas repaint crawl while an evaluation runs.
    sys.setswitchinterval(0.001)
    # Full garbage collections of a heap with 20,000 canvas items pause every thread for tens of
    # milliseconds; collect young objects less often (the main window also freezes the
    # long-lived objects after each load).
    gc.set_threshold(20_000, 20, 50)
    # The plots sit on the white results panel: black text and axes, smooth lines.
    pg.setConfigOptions(background="w", foreground="k", antialias=True)


def _parse_size(size: str | None) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in (size or "1600x1000").lower().split("x"))
        if w < 200 or h < 150 or w > 10000 or h > 10000:
            raise ValueError
        return w, h
    except ValueError:
        from designer.model.errors import InputError

        raise InputError("command line", "--size", f"expected WIDTHxHEIGHT from 200x150 to 10000x10000, "
                                                   f"e.g. 1600x1000, got '{size[:40]}'") from None


def run_app(path: str | os.PathLike | None = None, screenshot: str | None = None, size: str = "1600x1000") -> int:
    """Open the main window on `path`. With `screenshot`, render offscreen after the first
    evaluation, write the window to that PNG and return 0 (1 if the evaluation failed)."""
    if screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    width, height = _parse_size(size)
    configure_process()
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from designer.model.catalog import default_catalog
    from designer.model.errors import DesignerError

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Cluster Designer")
    app.setOrganizationName("cluster-designer")
    app.setApplicationDisplayName("Cluster Designer")
    try:
        catalog = default_catalog()
    except DesignerError as exc:
        if screenshot:
            print(f"cluster-designer: error: {exc}", file=sys.stderr)
            return 2
        # A broken user catalogue must not lock the user out of the app: say so, use the shipped parts.
        from PySide6.QtWidgets import QMessageBox

        from designer.model.catalog import load_catalog, set_default_catalog

        QMessageBox.warning(None, "Catalogue not used", f"{exc}\n\nThe shipped parts are used until the file is fixed.")
        catalog = load_catalog(include_user=False)
        set_default_catalog(catalog)

    from designer.ui.main_window import MainWindow

    window = MainWindow(catalog)
    if screenshot:
        window.resize(width, height)  # the size asked for, whatever the screen
    else:
        window.place_on_screen(width, height)
    if path is not None and not Path(path).exists():
        print(f"cluster-designer: error: {path}: no such file", file=sys.stderr)
        if screenshot:
            return 2
        path = None
    if screenshot:
        from designer.canvas.export import save_image
        from designer.document import turns
        from designer.io.files import load_design
        from designer.io.outputs import check_outputs

        try:
            check_outputs([("--screenshot", screenshot)], [path] if path else [])
            design = load_design(path, catalog) if path else None
        except DesignerError as exc:
            print(f"cluster-designer: error: {exc}", file=sys.stderr)
            return 2
        outcome: dict = {}
        # Nobody is there to answer a dialog: an engine bug's traceback goes to stderr, the failure
        # to the exit status.
        window.scheduler.crashed.disconnect()
        window.scheduler.crashed.connect(lambda _message, details: print(details, file=sys.stderr, end=""))
        window.evaluated.connect(lambda r: outcome.setdefault("ok", r))
        window.evaluationFailed.connect(lambda m: outcome.setdefault("failed", m))
        window.show()
        if design is not None:
            window.document.reset(design, path)
            window.results.set_workload(window.workload)
        else:
            window.document.reset(window.document.design, None)
        clock = QElapsedTimer()
        clock.start()
        while (not outcome or window.scene.building) and clock.elapsed() < 600_000:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if "failed" in outcome:
            print(f"cluster-designer: error: evaluation failed: {outcome['failed']}", file=sys.stderr)
            window.scheduler.shutdown(timeout_s=5)
            return 1
        if not outcome:
            print("cluster-designer: error: evaluation did not finish within 10 minutes", file=sys.stderr)
            return 1
        window.view.zoom_to_fit()
        # The overlay, the text switch and the hidden tabs finish in later turns: let them.
        while turns.pending() and clock.elapsed() < 600_000:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        for _ in range(5):
            app.processEvents()
        image = window.grab()
        window.document.undo_stack.setClean()
        try:
            save_image(image, screenshot)
            problem = None
        except OSError as exc:
            problem = exc.strerror or str(exc)
        window.scheduler.shutdown(timeout_s=5)
        window.close()
        if problem is not None:
            print(f"cluster-designer: error: {screenshot}: cannot be written ({problem})", file=sys.stderr)
            return 1
        print(f"wrote {screenshot}")
        return 0

    from designer.ui.errors import ExceptionHooks

    hooks = ExceptionHooks(app)
    hooks.install()
    window.show()
    if path is None:
        window.document.reset(window.document.design, None)

    def start() -> None:
        window.offer_recovery(use_this_window=path is None)
        if path is not None:
            window.open_path(path)

    QTimer.singleShot(0, start)
    try:
        return app.exec()
    finally:
        hooks.uninstall()
