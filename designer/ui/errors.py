"""No silent death: an exception anywhere in the app (a slot, a worker thread, the evaluation
worker) is shown in a dialog with its traceback and a way to save a copy of the design, and the
app keeps running.

`ExceptionHooks` replaces `sys.excepthook` (PySide hands it every exception a slot or a virtual
method raises) and `threading.excepthook`; both hand the error to the UI thread through a queued
signal, so the dialog opens in a turn of its own, never inside the code that failed. The
evaluation scheduler's `crashed` signal comes to `report_error` directly.
"""

from __future__ import annotations

import sys
import threading
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QFileDialog, QLabel, QPlainTextEdit,
                               QPushButton, QToolButton, QVBoxLayout, QWidget)

from designer.document.document import Document
from designer.io.files import SUFFIX, save_design
from designer.model.errors import DesignerError

FILE_FILTER = "Cluster designs (*.cluster.json);;All files (*)"


class ErrorDialog(QDialog):
    """An unexpected error: what happened, the traceback under Details, Save a Copy… and Continue."""

    def __init__(self, summary: str, details: str, document: Document | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Unexpected Error")
        self.resize(640, 220)
        self.document = document
        self.errors = 0
        layout = QVBoxLayout(self)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)
        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.toggled.connect(self._show_details)
        layout.addWidget(self.details_button)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setVisible(False)
        layout.addWidget(self.details, 1)
        self.saved = QLabel()
        self.saved.setWordWrap(True)
        self.saved.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.saved)
        buttons = QDialogButtonBox()
        self.save_copy_button = QPushButton("Save a Copy…")
        self.save_copy_button.setToolTip("Write the open design to a new file; the open file is left as it is")
        self.save_copy_button.setEnabled(document is not None)
        self.save_copy_button.clicked.connect(lambda: self.save_copy())
        buttons.addButton(self.save_copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.continue_button = buttons.addButton("Continue", QDialogButtonBox.ButtonRole.AcceptRole)
        self.continue_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
        self.add(summary, details)

    def add(self, summary: str, details: str) -> None:
        """Another error while this one is shown: counted, its traceback appended."""
        self.errors += 1
        again = f" ({self.errors} errors so far)" if self.errors > 1 else ""
        self.message.setText(f"Something went wrong{again}: {summary}\n\nCluster Designer keeps running and the "
                             "design is still open, but what you just did may not have finished. If anything "
                             "looks wrong, save a copy of the design under a new name.")
        self.details.appendPlainText(details.rstrip() + "\n")

    def _show_details(self, shown: bool) -> None:
        self.details.setVisible(shown)
        self.details_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.resize(self.width(), 520 if shown else 220)

    def save_copy(self, path: str | None = None) -> str | None:
        """Write the design to a file the user picks (never the open file). Returns the path written."""
        document = self.document
        if document is None:
            return None
        if path is None:
            folder = Path(document.path).parent if document.path else Path.home()
            suggested = folder / f"{document.display_name} (copy){SUFFIX}"
            path, _ = QFileDialog.getSaveFileName(self, "Save a copy of the design", str(suggested), FILE_FILTER)
            if not path:
                return None
            if not path.endswith(".json"):
                path += SUFFIX
        if document.path and Path(path).resolve() == Path(document.path).resolve():
            self.saved.setText("That is the open file: a copy never replaces it. Choose another name.")
            return None
        try:
            save_design(document.design, path, backup=False)
        except DesignerError as exc:
            self.saved.setText(str(exc))
            return None
        self.saved.setText(f"Saved a copy to {path}")
        return path


_shown: ErrorDialog | None = None


def report_error(summary: str, details: str, window: QWidget | None = None) -> None:
    """Show an unexpected error (on the UI thread). While a dialog is open, later errors join it."""
    global _shown
    if _shown is not None:
        _shown.add(summary, details)
        return
    window = window or _window_with_document()
    document = getattr(window, "document", None)
    _shown = ErrorDialog(summary, details, document if isinstance(document, Document) else None, window)
    try:
        _shown.exec()
    finally:
        _shown.deleteLater()
        _shown = None


def _window_with_document() -> QWidget | None:
    candidates = [QApplication.activeWindow(), *QApplication.topLevelWidgets()]
    return next((w for w in candidates if w is not None and w.isVisible()
                 and isinstance(getattr(w, "document", None), Document)), None)


class ExceptionHooks(QObject):
    """Installs `sys.excepthook` and `threading.excepthook` for the app's lifetime; each error is
    also printed to stderr as Python would."""

    caught = Signal(str, str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.caught.connect(report_error, Qt.ConnectionType.QueuedConnection)
        self._previous = (sys.excepthook, threading.excepthook)

    def install(self) -> None:
        sys.excepthook = self.excepthook
        threading.excepthook = self.thread_excepthook

    def uninstall(self) -> None:
        sys.excepthook, threading.excepthook = self._previous

    def excepthook(self, exc_type, exc, tb) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            self._previous[0](exc_type, exc, tb)
            return
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(details)
        summary = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
        try:
            self.caught.emit(summary, details)
        except RuntimeError:  # the hooks' object is gone (the app is shutting down): printed above
            pass

    def thread_excepthook(self, args) -> None:
        if args.exc_type is SystemExit:
            return
        self.excepthook(args.exc_type, args.exc_value, args.exc_traceback)
