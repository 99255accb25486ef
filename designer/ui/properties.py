"""Design ▸ Properties…: the design's name, description and notes, changed as one undo step."""

from __future__ import annotations

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QPlainTextEdit, QVBoxLayout,
                               QWidget)

from designer.document.document import Document
from designer.model.design import MAX_NAME_CHARS
from designer.style import colors

UNNAMED = "Untitled"  # the name a design has until it is given one


class PropertiesDialog(QDialog):
    """OK applies what changed through `Document.set_design_text`; a refusal is shown here, with the
    dialog left open and nothing typed lost."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        design = document.design
        self.setWindowTitle("Design Properties")
        self.resize(560, 460)
        self.name_edit = QLineEdit("" if design.name == UNNAMED else design.name)
        self.name_edit.setObjectName("designName")
        self.name_edit.setPlaceholderText(UNNAMED)
        self.name_edit.setMaxLength(MAX_NAME_CHARS)
        self.description_edit = QPlainTextEdit(design.description)
        self.description_edit.setObjectName("designDescription")
        self.description_edit.setPlaceholderText("What this design is: shown in the example gallery and reports")
        self.description_edit.setTabChangesFocus(True)
        self.notes_edit = QPlainTextEdit(design.notes)
        self.notes_edit.setObjectName("designNotes")
        self.notes_edit.setPlaceholderText("Your own notes: decisions, open questions, sources (saved in the file)")
        self.notes_edit.setTabChangesFocus(True)
        self.problem = QLabel()
        self.problem.setObjectName("propertiesProblem")
        self.problem.setStyleSheet(f"color: {colors.ERROR}")
        self.problem.setWordWrap(True)
        self.problem.hide()
        form = QFormLayout()
        form.addRow("&Name:", self.name_edit)
        form.addRow("&Description:", self.description_edit)
        form.addRow("N&otes:", self.notes_edit)
        where = QLabel(f"File: {document.path}" if document.path else "Not saved yet")
        where.setObjectName("designFile")
        where.setStyleSheet("color: palette(mid)")
        form.addRow("", where)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        document.error.connect(self._show_problem)

    def values(self) -> dict[str, str]:
        return {"name": self.name_edit.text().strip() or UNNAMED,
                "description": self.description_edit.toPlainText(),
                "notes": self.notes_edit.toPlainText()}

    def accept(self) -> None:
        design = self.document.design
        values = self.values()
        if all(getattr(design, key) == value for key, value in values.items()):
            super().accept()
            return
        self.problem.hide()
        if self.document.set_design_text("Edit design properties", **values):
            super().accept()

    def _show_problem(self, message: str) -> None:
        if self.isVisible():
            self.problem.setText(message)
            self.problem.show()
