"""How the results panel's plots look: white views, log axes in SI units, labels, legends.

Every setting is made on the panel's own widgets, so the plots look the same whatever
pyqtgraph's process-wide configuration is."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont

from designer.style import colors
from designer.ui.results.formatting import si

TICK_FONT = QFont()
TICK_FONT.setPointSizeF(9.5)
LABEL_STYLE = {"font-size": "11pt", "color": colors.TEXT}
TITLE_STYLE = {"size": "11pt", "color": colors.TEXT, "bold": True}
LEGEND_TEXT_SIZE = "9.5pt"


def translucent(color: str, alpha: int) -> QColor:
    out = QColor(color)
    out.setAlpha(alpha)
    return out


def plot_view() -> pg.GraphicsLayoutWidget:
    """A plot view on the canvas background, antialiased."""
    view = pg.GraphicsLayoutWidget()
    view.setBackground(colors.CANVAS_BACKGROUND)
    view.setAntialiasing(True)
    view.ci.setContentsMargins(4, 4, 12, 4)
    return view


class LogSIAxis(pg.AxisItem):
    """A log axis whose ticks read "10 µs", "1 MB" instead of 10⁻⁵, 10⁶."""

    def __init__(self, orientation: str, unit: str, **kw: Any) -> None:
        super().__init__(orientation, **kw)
        self._unit = unit

    def logTickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            x = 10 ** (float(v)) * scale
            exponent = round(float(v))
            # Label the decades only; minor ticks (2×, 5× …) stay unlabelled to avoid clutter.
            out.append(si(x, self._unit, 3) if abs(float(v) - exponent) < 1e-6 else "")
        return out


def style_plot(plot: pg.PlotItem, title: str | None = None) -> None:
    if title:
        plot.setTitle(title, **TITLE_STYLE)
    plot.showGrid(x=True, y=True, alpha=0.25)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setTickFont(TICK_FONT)
        axis.setPen(pg.mkPen(colors.TEXT))
        axis.setTextPen(pg.mkPen(colors.TEXT))
    plot.getAxis("left").setWidth(72)
    for name in ("top", "right"):
        plot.showAxis(name, False)
    plot.setMenuEnabled(False)
    plot.hideButtons()


def label(plot: pg.PlotItem, side: str, text: str, unit: str, auto_si: bool = False) -> None:
    axis = plot.getAxis(side)
    axis.enableAutoSIPrefix(auto_si)
    axis.setLabel(text, units=unit, **LABEL_STYLE)


def outside_legend(view: pg.GraphicsLayoutWidget, row: int, columns: int) -> pg.LegendItem:
    """A legend in its own layout row under a plot, so it never hides a curve or a bar and an
    export of the view always holds all of it. Its cell is as large as its entries need."""
    item = pg.LegendItem(offset=None, labelTextSize=LEGEND_TEXT_SIZE, labelTextColor=colors.TEXT, colCount=columns,
                         horSpacing=18)
    view.ci.addItem(item, row=row, col=0)
    view.ci.layout.setAlignment(item, Qt.AlignmentFlag.AlignHCenter)
    return item


def bar(color: str) -> pg.BarGraphItem:
    """One horizontal bar segment at y = 0, empty until `setOpts(x0=…, width=…)`."""
    return pg.BarGraphItem(x0=[0], y=[0], height=[0.7], width=[0], brush=color,
                           pen=pg.mkPen(colors.CANVAS_BACKGROUND, width=1))


def stacked_bars(plot: pg.PlotItem, legend: pg.LegendItem, parts, palette) -> dict[str, pg.BarGraphItem]:
    """One bar segment per (key, text, colour key) of `parts`, on `plot` and named in `legend`,
    coloured from `palette`; by key."""
    bars: dict[str, pg.BarGraphItem] = {}
    for key, text, color in parts:
        item = bar(palette[color])
        plot.addItem(item)
        legend.addItem(item, text)
        bars[key] = item
    return bars
