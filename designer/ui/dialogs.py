"""Dialogs (the example gallery, About) and the status bar's progress of a long export."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHBoxLayout, QHeaderView, QLabel,
                               QMessageBox, QProgressBar, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)


class ExampleGallery(QDialog):
    """Lists resources/examples; Open (or double-click) returns the chosen path in `chosen`."""

    def __init__(self, rows: list[dict], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Open Example")
        self.resize(900, 420)
        self.rows = rows
        self.chosen: str | None = None
        layout = QVBoxLayout(self)
        if not rows:
            layout.addWidget(QLabel("No examples were found in the resources folder."))
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Example", "Accelerators", "Description"])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        for r, row in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(row.get("name") or row.get("id")))
            acc = row.get("accelerators")
            cell = QTableWidgetItem(f"{acc:,}" if isinstance(acc, int) else "")
            cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(r, 1, cell)
            d = QTableWidgetItem(row.get("summary") or "")
            d.setToolTip(row.get("description") or "")
            self.table.setItem(r, 2, d)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.cellDoubleClicked.connect(lambda r, _c: self._choose(r))
        if rows:
            self.table.selectRow(0)
        layout.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(lambda: self._choose(self.table.currentRow()))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _choose(self, row: int) -> None:
        if 0 <= row < len(self.rows):
            self.chosen = self.rows[row]["path"]
            self.accept()


def about_text(catalog=None) -> str:
    from designer import __version__

    sources = sorted({p.source.split(";")[0].strip() for p in catalog}) if catalog is not None else []
    shown = sources[:12]
    more = f"<br>… and {len(sources) - len(shown)} more (see docs/catalog.md)" if len(sources) > len(shown) else ""
    return (f"<h3>Cluster Designer {__version__}</h3>"
            "<p>Plan GPU clusters and see what they can do: compute, memory, power, cost, "
            "collectives and training time.</p>"
            "<p>Licence: MIT.</p>"
            "<p><b>Catalogue sources</b> (vendor datasheets and papers):<br>"
            + "<br>".join(_esc(s) for s in shown) + more + "</p>")


def show_about(parent, catalog=None) -> None:
    box = QMessageBox(parent)
    box.setWindowTitle("About Cluster Designer")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_text(catalog))
    box.exec()


def _esc(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ExportProgress(QWidget):
    """A progress bar with Cancel for the status bar, shown while an export runs. A dialog would
    take the focus from the main window, which then repaints all of it (seconds on a big canvas)."""

    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        layout.addWidget(self.label)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setFixedWidth(160)
        layout.addWidget(self.bar)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the export; nothing is written")
        self.cancel_button.clicked.connect(self.cancelled)
        layout.addWidget(self.cancel_button)
        self.hide()

    def begin(self, text: str) -> None:
        self.label.setText(text)
        self.bar.setValue(0)
        self.show()

    def show_progress(self, done: int, total: int) -> None:
        self.bar.setValue(int(1000 * done / max(1, total)))
