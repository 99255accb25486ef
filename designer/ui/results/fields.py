"""Number fields of the results panel's design settings (cost assumptions, hot spares).

A plain Qt spin box drops the keystrokes that would leave its range: "-1" becomes 1, "1.5" spares
become 15, "1000000" becomes 100000, and the field takes a number the user never typed. These take
what is typed and, when it is finished, refuse a text that is not a number in range: the field
keeps the value it had and `refused` carries the words that say why (shown under the fields by
`RefusalLabel`). A number with more decimals than the field shows is rounded to them.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QSpinBox

from designer.style import colors


def _typed(box: QSpinBox | QDoubleSpinBox, text: str) -> str:
    """What the user typed: the field's text without its prefix and suffix."""
    text = text.strip()
    for affix, cut in ((box.prefix().strip(), str.removeprefix), (box.suffix().strip(), str.removesuffix)):
        if affix:
            text = cut(text, affix).strip()
    return text


def _number_of(box: QSpinBox | QDoubleSpinBox, text: str) -> float | None:
    """The number a finished text holds (digit grouping aside), or None."""
    try:
        value = float(_typed(box, text).replace(",", "").replace("_", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _expected(box: QSpinBox | QDoubleSpinBox, whole: bool) -> str:
    """"a whole number from 0 to 1,000,000", "a number from 1 to 3 years": as the file's refusal says it."""
    unit = box.suffix().strip()
    low, high = (f"{v:,.0f}" if v == int(v) else f"{v:,g}" for v in (box.minimum(), box.maximum()))
    return f"{'a whole number' if whole else 'a number'} from {low} to {high}" + (f" {unit}" if unit else "")


def _validate(box: QSpinBox | QDoubleSpinBox, base, text: str, pos: int):
    state, text, pos = base.validate(box, text, pos)
    # Anything may be typed; what does not fit is refused with a reason when it is finished.
    return (QValidator.State.Intermediate if state == QValidator.State.Invalid else state), text, pos


def _fixup(box: QSpinBox | QDoubleSpinBox, text: str, whole: bool) -> str:
    value = _number_of(box, text)
    if value is not None and box.minimum() <= value <= box.maximum() and (not whole or value == int(value)):
        return box.textFromValue(int(value) if whole else value)  # in range: rounded to the decimals shown
    box.refused.emit(_typed(box, text))
    return text  # still not acceptable: the field keeps its value


class CheckedDoubleSpinBox(QDoubleSpinBox):
    refused = Signal(str)  # the finished text that was not taken

    def validate(self, text: str, pos: int):
        return _validate(self, QDoubleSpinBox, text, pos)

    def fixup(self, text: str) -> str:
        return _fixup(self, text, whole=False)


class CheckedSpinBox(QSpinBox):
    refused = Signal(str)  # the finished text that was not taken

    def validate(self, text: str, pos: int):
        return _validate(self, QSpinBox, text, pos)

    def fixup(self, text: str) -> str:
        return _fixup(self, text, whole=True)


class RefusalLabel(QLabel):
    """The reason the last typed value was refused, in the error colour; hidden after a value is
    taken."""

    def __init__(self) -> None:
        super().__init__("")
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {colors.ERROR};")
        self.setObjectName("refusal")
        self.hide()

    def refuse(self, what: str, box: QSpinBox | QDoubleSpinBox, typed: str) -> None:
        whole = isinstance(box, QSpinBox)
        kept = f"{box.prefix()}{box.textFromValue(box.value())}{box.suffix()}".strip()
        self.setText(f"{what}: expected {_expected(box, whole)}, got '{typed}'; kept {kept}")
        self.show()
