"""File ▸ New from Template: pick a topology generator, set its parameters, get a new design.

Each parameter shows its default and what the default follows from (the generator's own help
text, as `cluster-designer templates` prints it); a field left empty takes the default. A
parameter that names a part is a list of the catalogue's parts of its kind. A refusal
(a size past what the switches can join, a part of the wrong kind) is shown in the dialog, which
stays open with what was typed."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QScrollArea, QSizePolicy, QVBoxLayout, QWidget)

from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.model.errors import DesignerError
from designer.topologies import GENERATORS, generate


class TemplateDialog(QDialog):
    """Template list on the left, its parameters on the right; Create builds the design into
    `design` and accepts, or shows the generator's message in `error` and stays open."""

    def __init__(self, catalog: Catalog, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("New from Template")
        self.resize(980, 560)
        self.catalog = catalog
        self.design: Design | None = None
        self.fields: dict[str, QLineEdit | QComboBox] = {}
        layout = QVBoxLayout(self)
        body = QHBoxLayout()
        self.templates = QListWidget()
        for generator in GENERATORS.values():
            row = QListWidgetItem(generator.name)
            row.setToolTip(generator.summary)
            row.setData(Qt.ItemDataRole.UserRole, generator.name)
            self.templates.addItem(row)
        self.templates.setMaximumWidth(200)
        body.addWidget(self.templates)
        right = QVBoxLayout()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        right.addWidget(self.summary)
        self.form_holder = QWidget()
        self.form = QFormLayout(self.form_holder)
        # A template's parameters can outgrow the dialog: they scroll rather than squeeze.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form_holder)
        right.addWidget(scroll, 1)
        body.addLayout(right, 1)
        layout.addLayout(body, 1)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet("color: #b00020")
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create_button = buttons.addButton("Create", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setDefault(True)
        buttons.accepted.connect(self.create)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.templates.currentRowChanged.connect(self._show_template)
        self.templates.setCurrentRow(0)

    @property
    def template(self) -> str:
        return self.templates.currentItem().data(Qt.ItemDataRole.UserRole)

    def choose(self, name: str) -> None:
        """Show template `name` (as clicking it in the list does)."""
        row = next(r for r in range(self.templates.count())
                   if self.templates.item(r).data(Qt.ItemDataRole.UserRole) == name)
        self.templates.setCurrentRow(row)

    def _show_template(self, row: int) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields.clear()
        self.error.clear()
        generator = GENERATORS[self.templates.item(row).data(Qt.ItemDataRole.UserRole)]
        self.summary.setText(f"<b>{generator.name}</b>: {generator.summary}")
        for param in generator.params:
            if param.help == "unused":
                continue
            if param.choices:
                field = QComboBox()
                field.addItems([str(c) for c in param.choices])
                field.setCurrentText(str(param.default))
            elif param.part_kind:
                field = self._part_picker(param.part_kind, param.default)
            else:
                field = QLineEdit()
                field.setPlaceholderText("default: as said below" if param.default in (None, "")
                                         else f"default {param.default}")
            field.setToolTip(param.help)
            self.fields[param.name] = field
            help_text = QLabel(param.help)
            help_text.setWordWrap(True)
            help_text.setStyleSheet("color: palette(placeholder-text)")
            cell = QVBoxLayout()
            cell.setSpacing(0)
            cell.addWidget(field)
            cell.addWidget(help_text)
            self.form.addRow(param.name, cell)

    def _part_picker(self, kind: str, default: str | None) -> QComboBox:
        """The catalogue's parts of `kind` by name, the template's default chosen; where the
        default follows from other parts (None), a first entry leaves it to them."""
        field = QComboBox()
        # As wide as the text fields beside it; a long part name is cut in the closed box, whole in the list.
        field.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        field.setMinimumContentsLength(20)
        field.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        if default in (None, ""):
            field.addItem("Default: as said below", "")
        for part in self.catalog.of_kind(kind):
            field.addItem(f"{part.name} ({part.id})", part.id)
        if default and field.findData(default) < 0:  # a user's catalogue without the template's default part
            field.addItem(f"{default} (not in the catalogue)", default)
        field.setCurrentIndex(max(field.findData(default or ""), 0))
        return field

    def values(self) -> dict[str, str]:
        """The parameters typed or chosen; empty fields are left to their defaults."""
        out = {}
        for name, field in self.fields.items():
            part = field.currentData() if isinstance(field, QComboBox) else None  # a part picker's id
            text = part if part is not None else (field.currentText() if isinstance(field, QComboBox)
                                                  else field.text().strip())
            if text:
                out[name] = text
        return out

    def create(self) -> None:
        try:
            self.design = generate(self.template, self.catalog, **self.values())
        except DesignerError as exc:  # a generator's refusal, or a design past the file limits
            self.error.setText(str(exc))
            return
        self.accept()
