"""A page that shows its content, or a centred grey message when there is nothing to show."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from designer.style import colors


class Placeholder(QStackedWidget):
    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.content = content
        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet(
            f"color: {colors.DIM_TEXT}; font-size: 12pt; background: {colors.CANVAS_BACKGROUND};")
        self.addWidget(content)
        self.addWidget(self.message)

    def show_content(self) -> None:
        self.setCurrentIndex(0)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.setCurrentIndex(1)

    @property
    def showing_content(self) -> bool:
        return self.currentIndex() == 0
