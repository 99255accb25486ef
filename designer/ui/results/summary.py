"""The Summary tab: the engine's summary rows (the same as the CSV export and the CLI table), a
compute figure in the unit of its size (19.8 EFLOPS where the CSV says 19,788,000 TFLOPS)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from designer.engine.result import Result
from designer.engine.summary import format_value, summary_rows
from designer.style import colors
from designer.ui.results.formatting import compute_scale
from designer.ui.results.placeholder import Placeholder
from designer.ui.results.tables import columns_sized_once


VALUE_MAX_WIDTH = 150  # px: the figures fit; a longer text is elided, whole in its tooltip


class SummaryTab:
    title = "Summary"
    subject = "Summary"  # what a message on the page is about

    def __init__(self) -> None:
        table = QTableWidget(0, 3)
        table.setHorizontalHeaderLabels(["Metric", "Value", "Unit"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setWordWrap(False)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        # A long text value (a list of unpriced parts) is elided, its whole text in the tooltip,
        # rather than squeezing the metric names to nothing.
        header.setMaximumSectionSize(VALUE_MAX_WIDTH)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        table.verticalHeader().setDefaultSectionSize(24)
        self.table = table
        self.page = Placeholder(table)
        self.message_page = self.page

    def show(self, result: Result) -> None:
        rows = summary_rows(result)
        table = self.table
        table.setRowCount(len(rows))
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        with columns_sized_once(table):
            for r, (metric, value, unit) in enumerate(rows):
                text, shown_unit = shown_figure(value, unit)
                cells = [QTableWidgetItem(metric), QTableWidgetItem(text), QTableWidgetItem(shown_unit)]
                cells[1].setTextAlignment(right)
                cells[1].setData(Qt.ItemDataRole.UserRole, value)
                # The whole text of a long value; a scaled figure as the engine (and the CSV) gives it.
                cells[1].setToolTip(text if shown_unit == unit else f"{format_value(value)} {unit}")
                if metric == "Lint errors" and value > 0:
                    cells[1].setForeground(QBrush(QColor(colors.ERROR)))
                for c, cell in enumerate(cells):
                    table.setItem(r, c, cell)
        self.page.show_content()

    def rows_shown(self) -> list[tuple[str, str, str]]:
        t = self.table
        return [tuple(t.item(r, c).text() for c in range(3)) for r in range(t.rowCount())]


def shown_figure(value, unit: str) -> tuple[str, str]:
    """A summary row's value and unit as shown: (19788000.0, "TFLOPS") → ("19.79", "EFLOPS")."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        factor, shown_unit = compute_scale(value, unit)
        if factor != 1:
            return format_value(float(value * factor)), shown_unit
    return format_value(value), unit
