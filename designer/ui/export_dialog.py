"""File ▸ Export Canvas's options: a title drawn above the drawing (the design's name unless the
user types another), a legend below it, only the selection, and the PNG's scale. What the user
chose is remembered (QSettings) for the next export; a title typed for one design is offered again
for that design only."""

from __future__ import annotations

from PySide6.QtCore import QSettings, QSizeF
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QVBoxLayout, QWidget)

from designer.canvas.export import SCALES, ExportOptions

SETTINGS_GROUP = "canvasExport"


def _settings() -> QSettings:
    return QSettings("cluster-designer", "Cluster Designer")


def _flag(settings: QSettings, key: str, default: bool) -> bool:
    value = settings.value(f"{SETTINGS_GROUP}/{key}", default)
    return value in (True, "true", "1", 1)


class ExportOptionsDialog(QDialog):
    """The options of one canvas export (`kind`: png, svg or pdf); `options()` once accepted."""

    def __init__(self, kind: str, design_name: str, has_selection: bool, parent: QWidget | None = None,
                 drawing_size: QSizeF | None = None):
        super().__init__(parent)
        self.kind = kind
        self.drawing_size = drawing_size  # the whole canvas's drawing at 1×, for the PNG's size
        self.design_name = design_name
        self.setWindowTitle(f"Export Canvas as {kind.upper()}")
        settings = _settings()
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.title_shown = QCheckBox("Draw a title above the drawing")
        self.title_shown.setChecked(_flag(settings, "titleShown", True))
        form.addRow(self.title_shown)
        self.title = QLineEdit()
        remembered_for = settings.value(f"{SETTINGS_GROUP}/titleFor", "")
        remembered = settings.value(f"{SETTINGS_GROUP}/title", "")
        self.title.setText(remembered if remembered and remembered_for == design_name else design_name)
        self.title.setPlaceholderText(design_name or "Title")
        self.title.setMinimumWidth(320)
        self.title_shown.toggled.connect(self.title.setEnabled)
        self.title.setEnabled(self.title_shown.isChecked())
        form.addRow("Title:", self.title)
        self.legend = QCheckBox("Draw a legend: what the colours and line styles mean")
        self.legend.setChecked(_flag(settings, "legend", True))
        form.addRow(self.legend)
        self.selection_only = QCheckBox("Only the selection (with the links between its items)")
        self.selection_only.setChecked(has_selection and _flag(settings, "selectionOnly", False))
        self.selection_only.setEnabled(has_selection)
        if not has_selection:
            self.selection_only.setToolTip("Nothing is selected: the whole canvas is exported")
        form.addRow(self.selection_only)
        self.scale = QComboBox()
        for scale in SCALES:
            self.scale.addItem(f"{scale:g}×", scale)
        saved_scale = float(settings.value(f"{SETTINGS_GROUP}/scale", 2.0))
        self.scale.setCurrentIndex(SCALES.index(saved_scale) if saved_scale in SCALES else 1)
        self.scale.setEnabled(kind == "png")
        self.scale.setToolTip("Image pixels per canvas pixel at 100 % zoom" if kind == "png"
                              else "SVG and PDF are vector drawings: they scale without losing detail")
        self.pixels = QLabel()
        self.pixels.setEnabled(False)
        scale_row = QHBoxLayout()
        scale_row.addWidget(self.scale)
        scale_row.addWidget(self.pixels, 1)
        form.addRow("Scale:", scale_row)
        self.scale.currentIndexChanged.connect(self._show_pixels)
        self._show_pixels()
        layout.addLayout(form)
        note = QLabel("Every GPU, NIC and link is drawn, whatever the canvas's zoom.")
        note.setEnabled(False)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _show_pixels(self) -> None:
        """About how big the whole canvas's PNG will be (before its title and legend)."""
        size = self.drawing_size
        if self.kind != "png" or size is None:
            self.pixels.setText("")
            return
        scale = float(self.scale.currentData())
        self.pixels.setText(f"about {int(size.width() * scale):,} × {int(size.height() * scale):,} px")

    def options(self) -> ExportOptions:
        title = self.title.text().strip() if self.title_shown.isChecked() else ""
        return ExportOptions(title=title, legend=self.legend.isChecked(),
                             selection_only=self.selection_only.isEnabled() and self.selection_only.isChecked(),
                             scale=float(self.scale.currentData()) if self.kind == "png" else 1.0)

    def remember(self) -> None:
        settings = _settings()
        settings.setValue(f"{SETTINGS_GROUP}/titleShown", self.title_shown.isChecked())
        settings.setValue(f"{SETTINGS_GROUP}/title", self.title.text().strip())
        settings.setValue(f"{SETTINGS_GROUP}/titleFor", self.design_name)
        settings.setValue(f"{SETTINGS_GROUP}/legend", self.legend.isChecked())
        if self.selection_only.isEnabled():
            settings.setValue(f"{SETTINGS_GROUP}/selectionOnly", self.selection_only.isChecked())
        if self.kind == "png":
            settings.setValue(f"{SETTINGS_GROUP}/scale", float(self.scale.currentData()))

    @staticmethod
    def ask(parent: QWidget | None, kind: str, design_name: str, has_selection: bool,
            drawing_size: QSizeF | None = None) -> ExportOptions | None:
        """Show the dialog; the options chosen (remembered for next time), or None if cancelled."""
        dialog = ExportOptionsDialog(kind, design_name, has_selection, parent, drawing_size)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        dialog.remember()
        return dialog.options()
