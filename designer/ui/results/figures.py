"""The form of named figures under a tab's plots: a label per figure, selectable, wrapping."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from designer.ui.results.formatting import NOT_COMPUTED


def figures_form(figures) -> tuple[QWidget, dict[str, QLabel]]:
    """A form with a row "Text:" and a value label for each (key, text) of `figures`; the labels by key."""
    widget = QWidget()
    form = QFormLayout(widget)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
    form.setHorizontalSpacing(14)
    form.setVerticalSpacing(3)
    labels: dict[str, QLabel] = {}
    for key, text in figures:
        label = QLabel(NOT_COMPUTED)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        form.addRow(text + ":", label)
        labels[key] = label
    return widget, labels
