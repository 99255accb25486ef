"""The form of named figures under a tab's plots: a label per figure, selectable, wrapping; and
the scrolling page such a tab sits in.

A grid, not a QFormLayout: the form gave a wrapping label the height of fewer lines than it
wraps to at its width, so a long list of parts overlapped the row below."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QWidget

from designer.ui.results.formatting import NOT_COMPUTED


def figures_form(figures) -> tuple[QWidget, dict[str, QLabel]]:
    """A form with a row "Text:" and a value label for each (key, text) of `figures`; the labels by key."""
    widget = QWidget()
    grid = QGridLayout(widget)
    grid.setHorizontalSpacing(14)
    grid.setVerticalSpacing(3)
    grid.setColumnStretch(1, 1)
    labels: dict[str, QLabel] = {}
    for row, (key, text) in enumerate(figures):
        label = QLabel(NOT_COMPUTED)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        grid.addWidget(QLabel(text + ":"), row, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        grid.addWidget(label, row, 1)
        labels[key] = label
    return widget, labels


def scrolled_page(content: QWidget) -> QScrollArea:
    """A tab's page that scrolls down rather than squeezing its content: on a laptop-sized window
    wrapped rows were given less height than they wrap to, and their last lines cut off."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.setWidget(content)
    return scroll
