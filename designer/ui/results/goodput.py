"""The Goodput tab: how much of the wall clock the job trains (interruptions, checkpoints,
restarts, effective ratio) and, when parts are marked failed, every compared figure of the
degraded design next to the healthy one with the difference."""

from __future__ import annotations

import html
import math
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QFormLayout, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from designer.engine.result import Result
from designer.engine.summary import failed_text, part_label
from designer.style import colors
from designer.ui.results.fields import CheckedSpinBox, RefusalLabel
from designer.ui.results.placeholder import Placeholder
from designer.ui.results.tables import columns_sized_once


def _figure(value) -> str:
    """"25,083", "37.2", "0.4618": whole figures from a thousand up, else four significant digits,
    never in exponent form."""
    if value is None:
        return "—"
    if isinstance(value, int) or abs(value) >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    digits = max(0, 3 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}".rstrip("0").rstrip(".")


def _change(change: float | None, healthy) -> str:
    """"+1,600 (+6.7%)", "-0.00178 (-0.2%)": three significant digits, never in exponent form."""
    if change is None:
        return "—"
    if change == 0:
        return "±0"
    digits = max(0, 2 - math.floor(math.log10(abs(change))))
    text = f"{change:+,.{digits}f}"
    if healthy:
        share = change / healthy
        percent = share * 100
        places = 1 if abs(percent) >= 0.1 else 1 - math.floor(math.log10(abs(percent)))
        text += f" ({percent:+.{places}f}%)"
    return text


def _percent(fraction: float | None) -> tuple[str, str]:
    """"98.53", "%"."""
    return ("—", "") if fraction is None else (f"{fraction * 100:.2f}", "%")


def _duration(seconds: float | None) -> tuple[str, str]:
    """A time in the unit a reader takes in at a glance: "3.7 s", "14.2 min", "2.5 h"."""
    if seconds is None:
        return "—", ""
    for size, unit in ((3600, "h"), (60, "min")):
        if seconds >= 2 * size:
            return f"{seconds / size:,.1f}", unit
    return _figure(seconds), "s"


# The part classes of `Goodput.by_class`, as a row names them.
PART_CLASSES = {"accelerator": "accelerators", "server": "servers", "nic": "NICs", "switch": "switches",
                "transceiver": "transceivers", "cable": "cables", "storage": "storage"}


VALUE_MAX_WIDTH = 240  # px


def _table(columns: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for c in range(1, len(columns)):
        header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
    # A long value (the storage part's name) is elided rather than squeezing the figures' names.
    header.setMaximumSectionSize(VALUE_MAX_WIDTH)
    table.verticalHeader().setDefaultSectionSize(22)
    # Long figure names lose their middle, never their unit at the end; the tooltip has it all.
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    return table


def _fill(table: QTableWidget, rows: list[list[str]], tints: dict[tuple[int, int], str] | None = None) -> None:
    table.setRowCount(len(rows))
    right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    with columns_sized_once(table):
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                cell = QTableWidgetItem(text)
                cell.setToolTip(text)
                if c:
                    cell.setTextAlignment(right)
                tint = (tints or {}).get((r, c))
                if tint:
                    cell.setForeground(QBrush(QColor(tint)))
                table.setItem(r, c, cell)


WHAT_IF_NAMED = 5  # failures the what-if line names; the rest it counts

# Units of the compared figures that are better when lower (docs/goodput.md, failure what-ifs).
LOWER_IS_BETTER = ("s", "days", "/day", ":1")


class GoodputTab(QObject):
    title = "Goodput"
    subject = "Goodput"
    sparesChanged = Signal(int)  # the user chose another number of hot spare servers
    # A failure as the engine writes it ("spines.sw:1") in the design's words; the window sets it.
    describe_failure: Callable[[str], str] = staticmethod(lambda text: text)

    def __init__(self) -> None:
        super().__init__()
        host = QWidget()
        layout = QVBoxLayout(host)
        layout.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        self.spares = CheckedSpinBox()
        self.spares.setObjectName("goodputSpares")
        self.spares.setRange(0, 1_000_000)
        self.spares.setKeyboardTracking(False)
        self.spares.setToolTip("Spare servers kept powered and ready: a failed server is swapped for one "
                               "instead of waited for (saved with the design, undoable)")
        self.spares.valueChanged.connect(self._spares_edited)
        self.spares.setMaximumWidth(140)
        form.addRow("Hot spare servers", self.spares)
        self.spares_refusal = RefusalLabel()
        self.spares.refused.connect(lambda typed: self.spares_refusal.refuse("Hot spare servers", self.spares, typed))
        form.addRow(self.spares_refusal)
        layout.addLayout(form)
        self.goodput_table = _table(["Goodput", "Value", "Unit"])
        layout.addWidget(self.goodput_table, 1)
        self.whatif_label = QLabel()
        self.whatif_label.setWordWrap(True)
        layout.addWidget(self.whatif_label)
        self.degraded_table = _table(["What-if figure", "Healthy", "Degraded", "Change"])
        self.degraded_table.setObjectName("degradedTable")
        layout.addWidget(self.degraded_table, 2)
        self.layout = layout
        self.page = Placeholder(host)
        self.message_page = self.page

    def show(self, result: Result) -> None:
        g = result.goodput
        if g is None:
            self.page.show_message("Goodput not computed")
            return
        # What the job loses first (a laptop-sized panel shows the top rows only), then why.
        rows = [["Effective training time ratio", *_percent(g.effective_ratio)],
                ["Days to train, with failures", _figure(g.days), "days"],
                ["Days to train, without failures", _figure(result.training.days), "days"],
                ["Interruptions per day", _figure(g.interruptions_per_day), "/day"],
                ["Mean time between interruptions", _figure(g.mtbi_hours), "h"],
                ["Checkpoint interval (Young/Daly)", *_duration(g.checkpoint_interval_s)],
                ["Checkpoint write", *_duration(g.checkpoint_write_s)],
                ["Checkpoint size", _figure(g.checkpoint_gb), "GB"],
                ["Storage", part_label(result, g.storage) if g.storage else "none", ""],
                ["Restart and recovery per interruption", *_duration(g.restart_s)],
                ["Chance a hot spare is free", *_percent(g.spare_found)]]
        rows += [[f"  interruptions from {PART_CLASSES.get(name, name)}", _figure(value), "/day"]
                 for name, value in g.by_class.items()]
        if g.why:
            rows.append(["Why some figures are missing", g.why, ""])
        _fill(self.goodput_table, rows)
        # The two tables share the height by their rows, so neither scrolls while the other has room.
        self.layout.setStretchFactor(self.goodput_table, len(rows))
        self._showing = True
        self.spares.setValue(g.spares)
        self._showing = False
        self._show_degraded(result)
        self.page.show_content()

    def _spares_edited(self, value: int) -> None:
        if not getattr(self, "_showing", False):
            self.spares_refusal.hide()
            self.sparesChanged.emit(value)

    def _show_degraded(self, result: Result) -> None:
        d = result.degraded
        if d is None:
            self.whatif_label.setText("No part is marked failed. Right-click an item or link ▸ Fail to see what a "
                                      "failure does.")
            self.degraded_table.setRowCount(0)
            self.degraded_table.hide()
            return
        self.degraded_table.show()
        # A few by name: Select All ▸ Fail marks thousands, and each name is looked up in the design.
        failed = html.escape(failed_text(d.failures, self.describe_failure, WHAT_IF_NAMED))
        text = (f"<b style='color:{colors.FAILED}'>What-if: {failed} failed</b> — "
                f"{d.accelerators:,} accelerators run the job, {d.cut_off:,} cut off.")
        if d.placement:
            text += f" The job {d.placement.removeprefix('job ')}."
        if d.why:
            text += f" {d.why[:1].upper()}{d.why[1:]}."
        self.whatif_label.setText(text)
        rows, tints = [], {}
        for r, f in enumerate(d.figures):
            rows.append([f"{f.figure} ({f.unit})" if f.unit else f.figure, _figure(f.healthy), _figure(f.degraded),
                         _change(f.change, f.healthy)])
            if f.change:
                # Times, rates of interruption and oversubscription are better lower; the rest higher.
                worse = (f.change > 0) == (f.unit in LOWER_IS_BETTER)
                tints[(r, 3)] = colors.FAILED if worse else colors.GOOD
        _fill(self.degraded_table, rows, tints)
        self.layout.setStretchFactor(self.degraded_table, len(rows))

    def rows_shown(self) -> list[tuple[str, ...]]:
        t = self.degraded_table
        return [tuple(t.item(r, c).text() for c in range(t.columnCount())) for r in range(t.rowCount())]
