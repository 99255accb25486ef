"""The Compare window: two or more designs side by side, each against the first
(`designer.engine.compare`): the summary rows with difference, ratio and better/worse, the bill
of materials and cost changes, and the allreduce bus bandwidth and training step of every design
overlaid on one plot each.

A design shown is either an open window (its latest result is shown, and the comparison follows
its edits: "Compare with a Copy"; closing the window takes it out of the comparison) or a file,
evaluated once on a helper thread. A compute row is shown in the unit of its size (EFLOPS)."""

from __future__ import annotations

import threading
from html import escape
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QLabel, QMainWindow, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout,
                               QWidget)

from designer.engine import evaluate
from designer.engine.compare import Comparison, compare
from designer.engine.sections import STEP_PARTS
from designer.engine.summary import format_value
from designer.io.files import load_design
from designer.model.errors import DesignerError
from designer.style import colors
from designer.ui.results import plotstyle
from designer.ui.results.formatting import compute_scale

VERDICT_COLOR = {"better": colors.GOOD, "worse": colors.ERROR}


@dataclass(eq=False)  # each is itself: two copies of one design are two sources
class Source:
    """One design in the comparison: a live window or a file's result."""

    name: str
    result: Any = None
    window: Any = None


class _Relay(QObject):
    evaluated = Signal(object, object, str)  # source, result (None on failure), error


class CompareWindow(QMainWindow):
    updated = Signal()  # the comparison shown changed

    def __init__(self, windows: list, files: list[str] = (), parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare designs")
        self.resize(1200, 800)
        self.sources = [Source(w.document.display_name, w.last_result, w) for w in windows]
        self.sources += [Source(str(f).rsplit("/", 1)[-1].removesuffix(".cluster.json")) for f in files]
        self.comparison: Comparison | None = None
        self._relay = _Relay(self)
        self._relay.evaluated.connect(self._on_file_evaluated)
        for source in self.sources:
            if source.window is not None:
                source.window.evaluated.connect(lambda result, s=source: self._on_window_evaluated(s, result))
                source.window.document.pathChanged.connect(lambda *_a, s=source: self._rename(s))
                source.window.document.undo_stack.cleanChanged.connect(lambda *_a, s=source: self._rename(s))
                # A design window closed (its changes kept or discarded) leaves the comparison.
                source.window.installEventFilter(self)
        for source, path in zip(self.sources[len(windows):], files):
            threading.Thread(target=self._evaluate_file, args=(source, str(path), windows[0].catalog),
                             name="compare-evaluate", daemon=True).start()

        central = QWidget()
        layout = QVBoxLayout(central)
        self.state = QLabel("Evaluating…")
        self.state.setTextFormat(Qt.TextFormat.RichText)
        self.state.setObjectName("compareState")
        layout.addWidget(self.state)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        self.summary_table = QTableWidget()
        self.summary_table.setObjectName("compareSummary")
        self.summary_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        _compact(self.summary_table)
        self.tabs.addTab(self.summary_table, "Summary")
        self.plots = plotstyle.plot_view()
        self.busbw_plot = self.plots.addPlot(row=0, col=0, axisItems={"bottom": plotstyle.LogSIAxis("bottom", "B")})
        plotstyle.style_plot(self.busbw_plot, "Allreduce bus bandwidth")
        self.busbw_plot.setLogMode(x=True, y=False)
        plotstyle.label(self.busbw_plot, "bottom", "Message size", "B")
        plotstyle.label(self.busbw_plot, "left", "Bus bandwidth", "GB/s")
        self.step_plot = self.plots.addPlot(row=1, col=0)
        plotstyle.style_plot(self.step_plot, "Training step")
        plotstyle.label(self.step_plot, "left", "Time per step", "s")
        self.step_plot.getAxis("bottom").setTicks([[(i, part.segment.replace("_", " "))
                                                    for i, part in enumerate(STEP_PARTS)]])
        self.legend = plotstyle.outside_legend(self.plots, row=2, columns=4)
        self.tabs.addTab(self.plots, "Plots")
        bom_page = QWidget()
        bom_layout = QVBoxLayout(bom_page)
        self.cost_label = QLabel()
        self.cost_label.setObjectName("compareCost")
        self.cost_label.setWordWrap(True)
        self.cost_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bom_layout.addWidget(self.cost_label)
        self.bom_table = QTableWidget()
        self.bom_table.setObjectName("compareBom")
        self.bom_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        _compact(self.bom_table)
        bom_layout.addWidget(self.bom_table, 1)
        self.tabs.addTab(bom_page, "BOM and cost")
        self.setCentralWidget(central)
        self._refresh()

    # --- sources ---------------------------------------------------------------------------------
    def _evaluate_file(self, source: Source, path: str, catalog) -> None:
        try:
            result, error = evaluate(load_design(path, catalog), catalog), ""
        except (DesignerError, OSError) as exc:
            result, error = None, str(exc)
        self._relay.evaluated.emit(source, result, error)

    def _on_file_evaluated(self, source: Source, result, error: str) -> None:
        if result is None:
            self.state.setText(escape(f"{source.name}: {error}"))
            return
        source.result = result
        self._refresh()

    def _on_window_evaluated(self, source: Source, result) -> None:
        if source in self.sources:
            source.result = result
            self._refresh()

    def _rename(self, source: Source) -> None:
        if source not in self.sources:
            return
        document = source.window.document
        source.name = document.display_name + (" *" if document.is_modified() else "")
        self._refresh()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Close:
            # After the window's own close handling: a close the user cancelled keeps the design here.
            QTimer.singleShot(0, lambda w=watched: self._drop_if_closed(w))
        return False

    def _drop_if_closed(self, window) -> None:
        if window.isVisible():
            return
        closed = [s for s in self.sources if s.window is window]
        if not closed:
            return
        window.removeEventFilter(self)
        self.sources = [s for s in self.sources if s.window is not window]
        self.statusBar().showMessage(f"{window.document.display_name} was closed: it left the comparison", 10_000)
        self._refresh()

    # --- showing ---------------------------------------------------------------------------------
    def _refresh(self) -> None:
        if len(self.sources) < 2:
            self.comparison = None
            left = f"only {escape(self.sources[0].name)} is left" if self.sources else "none is left"
            self.state.setText(f"The other designs compared here were closed: {left}, nothing to compare. "
                               "File ▸ Compare… adds designs in a new window.")
            for table in (self.summary_table, self.bom_table):
                table.setRowCount(0)
                table.setColumnCount(0)
            for shown in (self.busbw_plot, self.step_plot, self.legend, self.cost_label):
                shown.clear()
            self.updated.emit()
            return
        missing = [s.name for s in self.sources if s.result is None]
        if missing:
            self.state.setText(escape(f"Evaluating {', '.join(missing)}…"))
            return
        names = [s.name for s in self.sources]
        self.comparison = compare([s.result for s in self.sources], names)
        self.state.setText("   ".join(f"<b>{letter(i)}</b>: {escape(name)}" for i, name in enumerate(names))
                           + f"<br>Each design against {letter(0)}: <span style='color:{colors.GOOD}'>green is better"
                           f"</span>, <span style='color:{colors.ERROR}'>red is worse</span>")
        self._show_summary(self.comparison)
        self._show_plots(self.comparison)
        self._show_bom(self.comparison)
        self.updated.emit()

    def _show_summary(self, comparison: Comparison) -> None:
        names = comparison.names
        headers = ["Metric", "Unit", *(letter(i) for i in range(len(names)))]
        for i in range(1, len(names)):
            headers += [f"Δ {letter(i)}", f"× {letter(i)}"]
        # The summary, then the cost and the goodput blocks under headings of their own.
        lines: list = [*comparison.rows]
        for heading, block in (("Cost (lower is better)", comparison.cost), ("Goodput", comparison.goodput)):
            if block:
                lines += [heading, *block]
        self._table_row = {line.key: r for r, line in enumerate(lines) if not isinstance(line, str)}
        table = self.summary_table
        table.clearSpans()
        table.setColumnCount(len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.setRowCount(len(lines))
        for r, row in enumerate(lines):
            if isinstance(row, str):
                item = QTableWidgetItem(row)
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                table.setItem(r, 0, item)
                table.setSpan(r, 0, 1, len(headers))
                continue
            # A row's figures in one unit, the unit of its largest (a compute peak in EFLOPS).
            factor, unit = compute_scale(max((abs(v) for v in row.values if _is_number(v)), default=0), row.unit)
            cells = [row.metric, unit, *("" if v is None else _shown(v, factor) for v in row.values)]
            for i in range(1, len(names)):
                difference, ratio = row.differences[i], row.ratios[i]
                cells += ["" if difference is None else ("+" if difference > 0 else "") + _shown(difference, factor),
                          "" if ratio is None else f"{ratio:.3g}"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c >= 2 + len(names):
                    verdict = row.verdicts[1 + (c - 2 - len(names)) // 2]
                    if verdict in VERDICT_COLOR:
                        item.setForeground(QBrush(QColor(VERDICT_COLOR[verdict])))
                        item.setToolTip(verdict)
                table.setItem(r, c, item)
        _fit_columns(table)

    def _show_plots(self, comparison: Comparison) -> None:
        self.busbw_plot.clear()
        self.step_plot.clear()
        self.legend.clear()
        count = len(comparison.names)
        width = 0.8 / count
        for i, name in enumerate(comparison.names):
            color = colors.SERIES[i % len(colors.SERIES)]
            curve = [(size, busbw) for size, busbw in comparison.collectives[i] if busbw is not None]
            # Equal curves lie on each other: each later one thinner, dashed and with its own marks, so all show.
            pen = pg.mkPen(color, width=max(1.5, 5 - 1.5 * i), style=CURVE_STYLES[i % len(CURVE_STYLES)])
            item = self.busbw_plot.plot([s for s, _ in curve], [b for _, b in curve], pen=pen,
                                        symbol=CURVE_SYMBOLS[i % len(CURVE_SYMBOLS)], symbolSize=max(6, 12 - 3 * i),
                                        symbolBrush=color, symbolPen=None)
            self.legend.addItem(item, f"{letter(i)}: {name}")
            seconds = [value for _part, value in comparison.steps[i]]
            bars = pg.BarGraphItem(x=[p - 0.4 + width * (i + 0.5) for p in range(len(seconds))], height=seconds,
                                   width=width * 0.9, brush=color, pen=pg.mkPen(colors.CANVAS_BACKGROUND))
            self.step_plot.addItem(bars)

    def _show_bom(self, comparison: Comparison) -> None:
        names = comparison.names
        priced = [row for row in comparison.cost if row.key in HEADLINE_COSTS
                  and any(isinstance(v, (int, float)) and v for v in row.values)]
        if priced:
            self.cost_label.setText("Cost: " + "; ".join(
                f"{row.metric} " + " → ".join("n/a" if v is None else _dollars(v) for v in row.values)
                + "".join(f" (×{r:.3g})" for r in row.ratios[1:] if r is not None) for row in priced))
        else:
            self.cost_label.setText("Cost: none of these designs has priced parts; the parts' quantities below "
                                    "are what changes")
        headers = ["Category", "Part", "Name", *(letter(i) for i in range(len(names))),
                   *(f"Δ {letter(i)}" for i in range(1, len(names))), "Change"]
        table = self.bom_table
        table.setColumnCount(len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.setRowCount(len(comparison.bom))
        for r, change in enumerate(comparison.bom):
            what = ", ".join(sorted({c for c in change.changes if c}))
            deltas = [f"{q - change.quantities[0]:+,}" for q in change.quantities[1:]]
            cells = [change.category, change.part, change.name, *(f"{q:,}" for q in change.quantities), *deltas, what]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if 3 <= c < len(cells) - 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, c, item)
        _fit_columns(table)

    def summary_cell(self, key: str, column: int) -> str:
        """The text shown for the row `key` (see `engine.figures.summary_key`; `goodput.days` and
        such for the section rows) in a column."""
        return self.summary_table.item(self._table_row[key], column).text()


# The costs the BOM tab's line names (their rows are in the summary's Cost block).
HEADLINE_COSTS = ("capital_cost_usd", "yearly_cost_usd_year", "cost_per_accelerator_hour_usd_h",
                  "training_run_cost_usd")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown(value, factor: float) -> str:
    return format_value(float(value * factor)) if factor != 1 and _is_number(value) else format_value(value)


def _dollars(value: float) -> str:
    return f"${value:,.0f}" if abs(value) >= 100 else f"${value:,.2f}"


MAX_COLUMN_PX = 240
CURVE_STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)
CURVE_SYMBOLS = ("o", "t", "s", "d")


def _compact(table: QTableWidget) -> None:
    """No row numbers, rows one line high: the rows are named in their first column."""
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)


def letter(index: int) -> str:
    """The short name of the index-th design in headers and legends: A, B, … Z, A2, B2, …"""
    return chr(ord("A") + index % 26) + (str(index // 26 + 1) if index >= 26 else "")


def _fit_columns(table: QTableWidget) -> None:
    """Columns as wide as their contents, at most MAX_COLUMN_PX (a long part name is cut)."""
    table.resizeColumnsToContents()
    for column in range(table.columnCount()):
        if table.columnWidth(column) > MAX_COLUMN_PX:
            table.setColumnWidth(column, MAX_COLUMN_PX)
