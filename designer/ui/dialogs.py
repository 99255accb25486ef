"""Dialogs (the example gallery, About, how many copies a what-if fails) and the status bar's progress of
a long export."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDialog, QDialogButtonBox, QDoubleSpinBox,
                               QGridLayout, QHBoxLayout, QHeaderView, QLabel, QMessageBox, QProgressBar, QPushButton,
                               QRadioButton, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from designer.engine.failures import Failure


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


class FailCopiesDialog(QDialog):
    """What-if: how many of an item's copies (or a link's physical links) to take out of service,
    as a number or a share of them ("1 of 16 spines", "2 % of the optics"). The line under the
    choice says how many that is, by the engine's own rule; `failure(target)` is the answer."""

    def __init__(self, what: str, total: int, unit: str, parent: QWidget | None = None,
                 medium: tuple[str, str, list[int]] | None = None):
        """`medium` (a link's): its id, name and the physical links of each drawn link on it, so
        the share can be of every link on the medium."""
        super().__init__(parent)
        self.setWindowTitle("Fail Some Copies")
        self.total = total
        self.unit = unit
        self.medium = medium
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"<b>{html.escape(what)}</b> stands for {total:,} {unit}. Take out of service:"))
        grid = QGridLayout()
        self.by_count = QRadioButton("A number of them")
        self.count = QSpinBox()
        self.count.setObjectName("failCount")
        self.count.setRange(1, total)
        self.count.setSuffix(f" of {total:,}")
        self.by_percent = QRadioButton("A share of them")
        self.percent = QDoubleSpinBox()
        self.percent.setObjectName("failPercent")
        self.percent.setRange(0.1, 100.0)
        self.percent.setDecimals(1)
        self.percent.setValue(2.0)
        self.percent.setSuffix(" %")
        grid.addWidget(self.by_count, 0, 0)
        grid.addWidget(self.count, 0, 1)
        grid.addWidget(self.by_percent, 1, 0)
        grid.addWidget(self.percent, 1, 1)
        layout.addLayout(grid)
        self.every_link = QCheckBox()
        self.every_link.setObjectName("failEveryLink")
        if medium is not None:
            self.every_link.setText(f"Every {medium[1]} link in the design ({sum(medium[2]):,} physical links), "
                                    "not only this one")
            self.every_link.toggled.connect(self._every_link_toggled)
            layout.addWidget(self.every_link)
        else:
            self.every_link.hide()
        self.outcome = QLabel()
        self.outcome.setObjectName("failOutcome")
        layout.addWidget(self.outcome)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Fail")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.by_count.setChecked(True)
        # Typing a figure chooses its way of counting.
        self.count.valueChanged.connect(lambda _v: self.by_count.setChecked(True))
        self.percent.valueChanged.connect(lambda _v: self.by_percent.setChecked(True))
        for signal in (self.count.valueChanged, self.percent.valueChanged, self.by_count.toggled,
                       self.every_link.toggled):
            signal.connect(self._show_outcome)
        self._show_outcome()

    def failure(self, target: str) -> Failure:
        """The answer for `target`, or for the link's medium where every link on it is chosen."""
        if self.every_link.isChecked():
            return Failure(self.medium[0], percent=round(self.percent.value(), 1))
        if self.by_percent.isChecked():
            return Failure(target, percent=round(self.percent.value(), 1))
        return Failure(target, copies=self.count.value())

    def _every_link_toggled(self, on: bool) -> None:
        # Over a medium only a share means the same on every link (a count would fail that many of each).
        if on:
            self.by_percent.setChecked(True)
        self.by_count.setEnabled(not on)
        self.count.setEnabled(not on)

    def _show_outcome(self, *_args) -> None:
        failure = self.failure("")
        # A medium's physical links are one pool, its failed share spread evenly (the engine's rule).
        total = sum(self.medium[2]) if self.every_link.isChecked() else self.total
        failed = failure.failed_of(total)
        unit = "physical links" if self.every_link.isChecked() else self.unit
        self.outcome.setText(f"{failed:,} of {total:,} {unit} fail"
                             + ("; the others stay in service." if failed < total else ": all of them."))
