"""The Collectives tab: time and bus bandwidth against message size, one curve per algorithm, for
each communicator the engine timed; the chosen algorithms drawn solid and thick."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from designer.engine import views
from designer.engine.result import Result
from designer.engine.sections import CollectiveRow
from designer.style import colors
from designer.ui.results import plotstyle
from designer.ui.results.formatting import binary_bytes, bottleneck_text, si
from designer.ui.results.placeholder import Placeholder

AUTO_LABEL = "auto (fastest)"


class CollectivesTab:
    title = "Collectives"
    subject = "Collectives"

    def __init__(self) -> None:
        self._result: Result | None = None
        self.curves: dict[str, dict[str, pg.PlotDataItem]] = {"time": {}, "busbw": {}}
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Collective:"))
        self.op_combo = QComboBox()
        self.op_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.op_combo.currentIndexChanged.connect(lambda _i: self._draw())
        row.addWidget(self.op_combo)
        row.addStretch(1)
        v.addLayout(row)

        view = plotstyle.plot_view()
        view.ci.setSpacing(10)
        self.time_plot = view.addPlot(row=0, col=0, axisItems={
            "bottom": plotstyle.LogSIAxis("bottom", "B"), "left": plotstyle.LogSIAxis("left", "s")})
        self.busbw_plot = view.addPlot(row=1, col=0, axisItems={"bottom": plotstyle.LogSIAxis("bottom", "B")})
        for plot, title in ((self.time_plot, "Collective time"), (self.busbw_plot, "Bus bandwidth")):
            plotstyle.style_plot(plot, title)
        self.time_plot.setLogMode(x=True, y=True)
        self.busbw_plot.setLogMode(x=True, y=False)
        plotstyle.label(self.time_plot, "bottom", "Message size", "B")
        plotstyle.label(self.time_plot, "left", "Time", "s")
        plotstyle.label(self.busbw_plot, "bottom", "Message size", "B")
        plotstyle.label(self.busbw_plot, "left", "Bus bandwidth", "GB/s")
        self.busbw_plot.setXLink(self.time_plot)
        # One legend under both plots serves both (same colours).
        self.busbw_legend = plotstyle.outside_legend(view, row=2, columns=4)
        self.view = view
        v.addWidget(view, 1)

        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info.setStyleSheet("padding: 2px 6px;")
        v.addWidget(self.info)
        self.page = Placeholder(page)
        self.message_page = self.page

    def plot_items(self) -> dict[str, pg.PlotDataItem]:
        return {**{f"time:{k}": v for k, v in self.curves["time"].items()},
                **{f"busbw:{k}": v for k, v in self.curves["busbw"].items()}}

    def _curve(self, plot_key: str, algorithm: str) -> pg.PlotDataItem:
        curves = self.curves[plot_key]
        item = curves.get(algorithm)
        if item is None:
            if algorithm == "auto":
                item = pg.PlotDataItem(name=AUTO_LABEL, pen=pg.mkPen(plotstyle.translucent(colors.TEXT, 70), width=9))
                item.setZValue(-10)
            else:
                n = len([k for k in curves if k != "auto"])
                color = colors.ALGORITHM.get(algorithm, colors.SERIES[n % len(colors.SERIES)])
                item = pg.PlotDataItem(name=algorithm, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=5,
                                       symbolBrush=color, symbolPen=None)
            (self.time_plot if plot_key == "time" else self.busbw_plot).addItem(item)
            if plot_key == "busbw":
                self.busbw_legend.addItem(item, item.name())
            curves[algorithm] = item
        return item

    def show(self, result: Result) -> None:
        self._result = result
        keys = views.communicators(result)
        if not keys:
            for curves in self.curves.values():
                for item in curves.values():
                    item.setData([], [])
            self.info.setText("")
            self.page.show_message("Collectives not computed")
            return
        labels = [f"{op} · {ranks:,} ranks" for op, ranks in keys]
        current = self.op_combo.currentText()
        self.op_combo.blockSignals(True)
        self.op_combo.clear()
        for text, key in zip(labels, keys):
            self.op_combo.addItem(text, key)
        self.op_combo.setCurrentIndex(labels.index(current) if current in labels else 0)
        self.op_combo.blockSignals(False)
        self.page.show_content()
        self._draw()

    def _draw(self) -> None:
        key = self.op_combo.currentData()
        if key is None or self._result is None:
            return
        op, ranks = key
        by_algorithm = views.collective_rows(self._result, op, ranks)
        chosen_by_size = {row.bytes: row.chosen for row in by_algorithm.get("auto", ())}
        chosen = set(chosen_by_size.values())
        for plot_key, figure in (("time", "time_s"), ("busbw", "busbw_gb_per_s")):
            for algorithm, rows in by_algorithm.items():
                points = sorted((row.bytes, getattr(row, figure)) for row in rows if getattr(row, figure) is not None)
                points = [(x, y) for x, y in points if x > 0 and (y > 0 or plot_key == "busbw")]
                item = self._curve(plot_key, algorithm)
                item.setData(np.array([p[0] for p in points], float), np.array([p[1] for p in points], float))
                if algorithm != "auto":
                    self._emphasise(plot_key, item, algorithm, algorithm in chosen)
            for algorithm, item in self.curves[plot_key].items():
                if algorithm not in by_algorithm:
                    item.setData([], [])
        who = f"{op}, {ranks:,} ranks"
        self.time_plot.setTitle(f"Time: {who}", **plotstyle.TITLE_STYLE)
        self.busbw_plot.setTitle(f"Bus bandwidth: {who}", **plotstyle.TITLE_STYLE)
        self.time_plot.enableAutoRange()
        self.busbw_plot.enableAutoRange()
        text = caption(op, by_algorithm, chosen_by_size)
        job = self._result.network.job
        self.info.setText(f"{text}<br>{job[0].upper()}{job[1:]}." if job else text)

    def _emphasise(self, plot_key: str, item: pg.PlotDataItem, algorithm: str, chosen: bool) -> None:
        color = pg.mkPen(item.opts["pen"]).color()
        item.setPen(pg.mkPen(color, width=3.5 if chosen else 1.6,
                             style=Qt.PenStyle.SolidLine if chosen else Qt.PenStyle.DashLine))
        item.setSymbolSize(7 if chosen else 4)
        if plot_key == "busbw":
            label = self.busbw_legend.getLabel(item)
            if label is not None:
                label.setText(f"{algorithm} (chosen)" if chosen else algorithm, size=plotstyle.LEGEND_TEXT_SIZE,
                              bold=chosen, color=colors.TEXT)


def caption(op: str, by_algorithm: dict[str, list[CollectiveRow]], chosen_by_size: dict[int, str | None]) -> str:
    """What auto picks for the largest message, how fast it runs, what limits it, and what it picks
    for the smallest message when that differs."""
    if not chosen_by_size:
        return ""
    largest = max(chosen_by_size)
    algorithm = chosen_by_size[largest]
    row = next(r for r in by_algorithm["auto"] if r.bytes == largest)
    parts = [f"<b>{op}</b> of {binary_bytes(largest)}: auto picks <b>{algorithm}</b>"]
    t, bus, alg_bw = row.time_s, row.busbw_gb_per_s, row.algbw_gb_per_s
    if t is not None:
        parts.append(f"{si(t, 's')}")
    if bus is not None:
        parts.append(f"busbw {bus:,.1f} GB/s" + (f" (algbw {alg_bw:,.1f} GB/s)" if alg_bw is not None else ""))
    if row.bound_time_s is not None and t:
        parts.append(f"{row.bound_time_s / t:.0%} of the bandwidth bound")
    text = ", ".join(parts)
    if row.bottleneck is not None:
        text += f"<br>Bottleneck: {bottleneck_text(row.bottleneck)}"
    small = min(chosen_by_size)
    if chosen_by_size[small] != algorithm:
        text += f"<br>Small messages ({binary_bytes(small)}): <b>{chosen_by_size[small]}</b>"
    return text
