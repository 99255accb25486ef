"""The results dock: summary table, collectives, utilization and training plots, lint findings.

Every section of the engine's result is read defensively: a section the engine did not compute (or
computed in a shape this panel does not know) shows "not computed" instead of failing. Plot items
are created once, the first time a curve is needed, and updated with `setData`/`setOpts` on every
later result, so live updates never rebuild the plots.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QImage, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QStackedWidget,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.engine.summary import format_value, summary_rows
from designer.document.turns import later

pg.setConfigOptions(background="w", foreground="k", antialias=True)

__all__ = ["ResultsPanel"]

# Okabe–Ito: distinguishable for colour-blind readers and in greyscale print.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
ALGORITHM_COLORS = {
    "ring": "#0072B2", "tree": "#D55E00", "hierarchical": "#009E73", "nvls": "#CC79A7",
    "sharp": "#E69F00", "torus": "#56B4E9",
}
TIER_COLORS = {"scale-up": "#0072B2", "scale-out": "#D55E00", "pcie": "#009E73", "front-end": "#CC79A7"}
STEP_PARTS = [  # (training key, label, colour)
    ("compute_s", "Compute", "#0072B2"),
    ("exposed_tp_s", "Exposed TP comm.", "#E69F00"),
    ("exposed_pp_s", "Exposed PP comm.", "#CC79A7"),
    ("exposed_dp_s", "Exposed DP comm.", "#D55E00"),
    ("bubble_s", "Pipeline bubble", "#999999"),
]
GPU_PARTS = [("compute", "Compute", "#0072B2"), ("communication", "Communication", "#D55E00"), ("idle", "Idle", "#BBBBBB")]
RECOMPUTE = ["none", "selective", "full"]
NOT_COMPUTED = "not computed"
SECTIONS = ("summary", "collectives", "utilization", "training", "lint")  # in tab order

TICK_FONT = QFont()
TICK_FONT.setPointSizeF(9.5)
LABEL_STYLE = {"font-size": "11pt", "color": "#000"}
TITLE_STYLE = {"size": "11pt", "color": "#000", "bold": True}


# -- helpers -----------------------------------------------------------------------------------

def _get(mapping: Any, key: str, default: Any = None) -> Any:
    try:
        return mapping.get(key, default) if mapping is not None else default
    except AttributeError:
        return default


def _section(result: Any, name: str) -> Any:
    return result.get(name) if result is not None else None


def _num(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _si(value: float, unit: str, digits: int = 3) -> str:
    """1.5e-5, "s" → "15 µs"; 2.1e9, "B" → "2.1 GB"."""
    if value == 0:
        return f"0 {unit}"
    prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    for factor, prefix in prefixes:
        if abs(value) >= factor * 0.9999:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def _bytes(value: float) -> str:
    """nccl-tests style binary sizes: 1048576 → "1 MiB"."""
    for factor, suffix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if value >= factor:
            return f"{value / factor:.3g} {suffix}"
    return f"{value:.0f} B"


def _count(value: float) -> str:
    for factor, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if value >= factor:
            return f"{value / factor:,.3g} {word}"
    return f"{value:,.0f}"


def _duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:,.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return _si(seconds, "s")


class _LogSIAxis(pg.AxisItem):
    """A log axis whose ticks read "10 µs", "1 MB" instead of 10⁻⁵, 10⁶."""

    def __init__(self, orientation: str, unit: str, **kw: Any) -> None:
        super().__init__(orientation, **kw)
        self._unit = unit

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        out = []
        for v in values:
            x = 10 ** (float(v)) * scale
            exponent = round(float(v))
            # Label the decades only; minor ticks (2×, 5× …) stay unlabelled to avoid clutter.
            out.append(_si(x, self._unit, 3) if abs(float(v) - exponent) < 1e-6 else "")
        return out


def _style_plot(plot: pg.PlotItem, title: str | None = None) -> None:
    if title:
        plot.setTitle(title, **TITLE_STYLE)
    plot.showGrid(x=True, y=True, alpha=0.25)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setTickFont(TICK_FONT)
        axis.setPen(pg.mkPen("#333"))
        axis.setTextPen(pg.mkPen("#000"))
    plot.getAxis("left").setWidth(72)
    for name in ("top", "right"):
        plot.showAxis(name, False)
    plot.setMenuEnabled(False)
    plot.hideButtons()


def _label(plot: pg.PlotItem, side: str, text: str, unit: str, auto_si: bool = False) -> None:
    axis = plot.getAxis(side)
    axis.enableAutoSIPrefix(auto_si)
    axis.setLabel(text, units=unit, **LABEL_STYLE)


def _legend(plot: pg.PlotItem, offset=(-10, 10)) -> pg.LegendItem:
    legend = plot.addLegend(offset=offset, labelTextSize="9.5pt", brush=pg.mkBrush(255, 255, 255, 220),
                            pen=pg.mkPen("#bbb"), verSpacing=-4)
    return legend


def _outside_legend(view: pg.GraphicsLayoutWidget, row: int, columns: int) -> pg.LegendItem:
    """A legend in its own layout row under a plot, so it never hides the bars."""
    legend = pg.LegendItem(offset=None, labelTextSize="9.5pt", colCount=columns, horSpacing=18)
    view.ci.addItem(legend, row=row, col=0)
    view.ci.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    return legend


class _Placeholder(QStackedWidget):
    """Shows its content, or a centred grey message when the section is not computed."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.content = content
        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #666; font-size: 12pt; background: white;")
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


# -- the panel ---------------------------------------------------------------------------------

class ResultsPanel(QWidget):
    """Tabs: Summary, Collectives, Utilization, Training, Lint."""

    workloadChanged = Signal(dict)  # noqa: N815 - Qt naming
    findingActivated = Signal(str)  # noqa: N815

    PLOTS = ("collectives", "utilization", "training")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._result: Any = None
        self._updating_workload = False
        self._collective_rows: list[Mapping] = []
        self._utilization_rows: list[tuple] = []
        self._curves: dict[str, dict[str, pg.PlotDataItem]] = {"time": {}, "busbw": {}, "utilization": {}}
        self._bars: dict[str, dict[str, pg.BarGraphItem]] = {"training": {}, "gpu": {}}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        self.state_label = QLabel("No result yet")
        self.state_label.setObjectName("resultsState")
        self.state_label.setStyleSheet("color: #555; padding: 2px 4px;")
        layout.addWidget(self.state_label)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        layout.addWidget(self.tabs, 1)

        self._build_summary()
        self._build_collectives()
        self._build_utilization()
        self._build_training()
        self._build_lint()
        self._stale: set[str] = set()
        self.tabs.currentChanged.connect(lambda index: self._refresh(SECTIONS[index]))
        self._clear_sections(NOT_COMPUTED)

    # -- public API ------------------------------------------------------------------------

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(560, 720)

    def show_state(self, text: str) -> None:
        """A one-line state above the tabs, e.g. "Evaluating…" or an engine failure."""
        self.state_label.setText(text)

    def show_result(self, result: Any) -> None:
        """Show an engine Result (or a mapping of sections). Missing sections say "not computed".

        Only the visible tab (and the lint tab, whose title carries the counts) is redrawn at
        once; the others follow one per turn of the event loop, or as soon as they are shown or
        read, so a large result never holds the UI thread for long."""
        self._result = result
        self._stale = set(SECTIONS)
        self._refresh(SECTIONS[self.tabs.currentIndex()])
        self._refresh("lint")
        later(self._refresh_next, self)
        seconds = _num(getattr(result, "seconds", None))
        self.show_state(f"Evaluated in {_si(seconds, 's')}" if seconds else "Evaluated")

    def _refresh(self, name: str) -> None:
        if name not in self._stale:
            return
        self._stale.discard(name)
        try:
            getattr(self, f"_update_{name}")(self._result)
        except Exception as exc:  # noqa: BLE001 - a malformed section must not blank the panel
            self._section_error(name, f"{type(exc).__name__}: {exc}")

    def _refresh_next(self) -> None:
        pending = [name for name in SECTIONS if name in self._stale]
        if pending:
            self._refresh(pending[0])
            later(self._refresh_next, self)

    def _refresh_all(self) -> None:
        for name in SECTIONS:
            self._refresh(name)

    def result(self) -> Any:
        return self._result

    def plot_names(self) -> list[str]:
        return list(self.PLOTS)

    def plot_widget(self, name: str) -> pg.GraphicsView:
        self._refresh_all()
        return {"collectives": self.collectives_view, "utilization": self.utilization_view,
                "training": self.training_view}[name]

    def plot_items(self, name: str) -> dict[str, Any]:
        """The live plot items of one plot, by key (for tests and overlays)."""
        self._refresh_all()
        if name == "collectives":
            return {**{f"time:{k}": v for k, v in self._curves["time"].items()},
                    **{f"busbw:{k}": v for k, v in self._curves["busbw"].items()}}
        if name == "utilization":
            return {**{f"tier:{k}": v for k, v in self._curves["utilization"].items()},
                    **{f"gpu:{k}": v for k, v in self._bars["gpu"].items()}}
        if name == "training":
            return dict(self._bars["training"])
        raise KeyError(name)

    def export_plot_png(self, name: str, path: str, scale: float = 2.0) -> str:
        """Write one plot as a PNG on a white background (2× by default); returns the path."""
        view = self.plot_widget(name)
        size = view.size()
        if size.width() < 50 or size.height() < 50:
            view.resize(640, 480)
            size = view.size()
        image = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(scale)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        view.render(painter, QRectF(0, 0, size.width(), size.height()), view.viewport().rect())
        painter.end()
        if not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
        return str(path)

    def workload(self) -> dict:
        """The workload dict the panel describes (the shape `evaluate(..., workload)` accepts)."""
        plan: Any
        if self.auto_plan.isChecked():
            plan = "auto"
        else:
            plan = {
                "tp": self.tp_spin.value(), "pp": self.pp_spin.value(), "dp": self.dp_spin.value(),
                "mb": self.mb_spin.value(), "recompute": self.recompute_combo.currentText(),
                "zero": self.zero_combo.currentIndex(),
            }
        return {"training": {"model": self.model_combo.currentText(), "plan": plan}}

    def set_workload(self, workload: Mapping | None) -> None:
        """Show a workload without emitting `workloadChanged`."""
        self._updating_workload = True
        try:
            workload = (workload or {}).get("training") or {}
            model = workload.get("model")
            if isinstance(model, str):
                if self.model_combo.findText(model) < 0:
                    self.model_combo.addItem(model)
                self.model_combo.setCurrentText(model)
            plan = workload.get("plan", "auto")
            self.auto_plan.setChecked(plan in (None, "auto"))
            if isinstance(plan, Mapping):
                self.tp_spin.setValue(int(plan.get("tp", 1)))
                self.pp_spin.setValue(int(plan.get("pp", 1)))
                self.dp_spin.setValue(int(plan.get("dp", 1)))
                self.mb_spin.setValue(int(plan.get("mb", plan.get("microbatch", 1))))
                recompute = str(plan.get("recompute", "selective"))
                if recompute in RECOMPUTE:
                    self.recompute_combo.setCurrentText(recompute)
                self.zero_combo.setCurrentIndex(int(plan.get("zero", 1)))
            self._sync_plan_enabled()
        finally:
            self._updating_workload = False

    # -- Summary ---------------------------------------------------------------------------

    def _build_summary(self) -> None:
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
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        table.verticalHeader().setDefaultSectionSize(24)
        self.summary_table = table
        self.summary_page = _Placeholder(table)
        self.tabs.addTab(self.summary_page, "Summary")

    def _update_summary(self, result: Any) -> None:
        try:
            rows = summary_rows(result)
        except Exception:  # noqa: BLE001 - the core sections are missing
            self.summary_table.setRowCount(0)
            self.summary_page.show_message("Summary not computed")
            return
        table = self.summary_table
        table.setRowCount(len(rows))
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for r, (metric, value, unit) in enumerate(rows):
            cells = [QTableWidgetItem(str(metric)), QTableWidgetItem(format_value(value)), QTableWidgetItem(str(unit))]
            cells[1].setTextAlignment(right)
            cells[1].setData(Qt.ItemDataRole.UserRole, value)
            if str(metric).startswith("Lint errors") and isinstance(value, int) and value > 0:
                cells[1].setForeground(QBrush(QColor("#B00020")))
            for c, cell in enumerate(cells):
                table.setItem(r, c, cell)
        self.summary_page.show_content()

    def summary_table_rows(self) -> list[tuple[str, str, str]]:
        self._refresh_all()
        t = self.summary_table
        return [tuple(t.item(r, c).text() for c in range(3)) for r in range(t.rowCount())]

    # -- Collectives -----------------------------------------------------------------------

    def _build_collectives(self) -> None:
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Collective:"))
        self.op_combo = QComboBox()
        self.op_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.op_combo.currentIndexChanged.connect(lambda _i: self._draw_collectives())
        row.addWidget(self.op_combo)
        row.addStretch(1)
        v.addLayout(row)

        view = pg.GraphicsLayoutWidget()
        view.ci.setContentsMargins(4, 4, 12, 4)
        view.ci.setSpacing(10)
        self.time_plot = view.addPlot(row=0, col=0, axisItems={
            "bottom": _LogSIAxis("bottom", "B"), "left": _LogSIAxis("left", "s")})
        self.busbw_plot = view.addPlot(row=1, col=0, axisItems={"bottom": _LogSIAxis("bottom", "B")})
        for plot, title in ((self.time_plot, "Collective time"), (self.busbw_plot, "Bus bandwidth")):
            _style_plot(plot, title)
        self.time_plot.setLogMode(x=True, y=True)
        self.busbw_plot.setLogMode(x=True, y=False)
        _label(self.time_plot, "bottom", "Message size", "B")
        _label(self.time_plot, "left", "Time", "s")
        _label(self.busbw_plot, "bottom", "Message size", "B")
        _label(self.busbw_plot, "left", "Bus bandwidth", "GB/s")
        self.busbw_plot.setXLink(self.time_plot)
        # One legend serves both plots (same colours), top left of the busbw plot: small messages never
        # reach a high bus bandwidth, so that corner is always empty.
        self.time_legend = None
        self.busbw_legend = _legend(self.busbw_plot, offset=(10, 10))
        self.collectives_view = view
        v.addWidget(view, 1)

        self.collectives_info = QLabel()
        self.collectives_info.setWordWrap(True)
        self.collectives_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.collectives_info.setStyleSheet("padding: 2px 6px;")
        v.addWidget(self.collectives_info)
        self.collectives_page = _Placeholder(page)
        self.tabs.addTab(self.collectives_page, "Collectives")

    def _collective_curve(self, plot_key: str, algorithm: str) -> pg.PlotDataItem:
        curves = self._curves[plot_key]
        item = curves.get(algorithm)
        if item is None:
            plot, legend = ((self.time_plot, self.time_legend) if plot_key == "time"
                            else (self.busbw_plot, self.busbw_legend))
            if algorithm == "auto":
                item = pg.PlotDataItem(name="auto (fastest)", pen=pg.mkPen(QColor(0, 0, 0, 70), width=9))
                item.setZValue(-10)
            else:
                n = len([k for k in curves if k != "auto"])
                color = ALGORITHM_COLORS.get(algorithm, PALETTE[n % len(PALETTE)])
                item = pg.PlotDataItem(name=algorithm, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=5,
                                       symbolBrush=color, symbolPen=None)
            plot.addItem(item)  # a named item joins the plot's legend by itself
            curves[algorithm] = item
        return item

    def _update_collectives(self, result: Any) -> None:
        section = _section(result, "collectives")
        if isinstance(section, Mapping):
            section = section.get("rows") or section.get("results")
        rows = [r for r in (section or ()) if isinstance(r, Mapping)]
        self._collective_rows = rows
        if not rows:
            self._blank_collectives()
            self.collectives_page.show_message("Collectives not computed")
            return
        groups: dict[tuple[str, Any], int] = {}
        for r in rows:
            key = (str(r.get("op", "?")), r.get("ranks"))
            groups[key] = groups.get(key, 0) + 1
        keys = sorted(groups, key=lambda k: (k[0] != "allreduce", k[0], -(k[1] or 0)))
        labels = [f"{op} · {ranks:,} ranks" if isinstance(ranks, int) else op for op, ranks in keys]
        current = self.op_combo.currentText()
        self.op_combo.blockSignals(True)
        self.op_combo.clear()
        for label, key in zip(labels, keys):
            self.op_combo.addItem(label, key)
        self.op_combo.setCurrentIndex(labels.index(current) if current in labels else 0)
        self.op_combo.blockSignals(False)
        self.collectives_page.show_content()
        self._draw_collectives()

    def _blank_collectives(self) -> None:
        for key in ("time", "busbw"):
            for item in self._curves[key].values():
                item.setData([], [])
        self.collectives_info.setText("")

    def _draw_collectives(self) -> None:
        key = self.op_combo.currentData()
        if key is None:
            return
        op, ranks = key
        rows = [r for r in self._collective_rows if str(r.get("op", "?")) == op and r.get("ranks") == ranks]
        by_alg: dict[str, list[Mapping]] = {}
        for r in rows:
            by_alg.setdefault(str(r.get("algorithm", "?")), []).append(r)
        # The chosen algorithm per size: the "auto" rows say; otherwise the fastest row.
        chosen_by_size: dict[float, str] = {}
        for r in by_alg.get("auto", ()):
            size, name = _num(r.get("bytes")), r.get("chosen")
            if size is not None and name:
                chosen_by_size[size] = str(name)
        if not chosen_by_size:
            best: dict[float, tuple[float, str]] = {}
            for alg, alg_rows in by_alg.items():
                for r in alg_rows:
                    size, t = _num(r.get("bytes")), _num(r.get("time_s"))
                    if size and t and (size not in best or t < best[size][0]):
                        best[size] = (t, alg)
            chosen_by_size = {s: a for s, (_, a) in best.items()}
        chosen = set(chosen_by_size.values())
        if "auto" not in by_alg and len(by_alg) > 1 and chosen_by_size:
            # Synthesize the envelope so the fastest choice is always drawn.
            by_alg["auto"] = [dict(r, algorithm="auto") for alg, rs in by_alg.items() for r in rs
                              if chosen_by_size.get(_num(r.get("bytes"))) == alg]
        for plot_key, field in (("time", "time_s"), ("busbw", "busbw_gb_per_s")):
            seen = set()
            for alg, alg_rows in by_alg.items():
                pts = sorted((_num(r.get("bytes")), _num(r.get(field))) for r in alg_rows)
                pts = [(x, y) for x, y in pts if x and x > 0 and y is not None and (y > 0 or plot_key == "busbw")]
                item = self._collective_curve(plot_key, alg)
                item.setData(np.array([p[0] for p in pts], float), np.array([p[1] for p in pts], float))
                if alg != "auto":
                    pen = item.opts["pen"]
                    color = pg.mkPen(pen).color()
                    emphasised = alg in chosen
                    item.setPen(pg.mkPen(color, width=3.5 if emphasised else 1.6,
                                         style=Qt.PenStyle.SolidLine if emphasised else Qt.PenStyle.DashLine))
                    item.setSymbolSize(7 if emphasised else 4)
                    legend = self._legend_for(plot_key)
                    label = legend.getLabel(item) if legend is not None else None
                    if label is not None:
                        label.setText(f"{alg} (chosen)" if emphasised else alg, size="9.5pt",
                                      bold=emphasised)
                seen.add(alg)
            for alg, item in self._curves[plot_key].items():
                if alg not in seen:
                    item.setData([], [])
        who = f"{op}, {ranks:,} ranks" if isinstance(ranks, int) else op
        self.time_plot.setTitle(f"Time: {who}", **TITLE_STYLE)
        self.busbw_plot.setTitle(f"Bus bandwidth: {who}", **TITLE_STYLE)
        self.time_plot.enableAutoRange()
        self.busbw_plot.enableAutoRange()
        self.collectives_info.setText(self._collective_caption(op, by_alg, chosen_by_size))

    def _legend_for(self, plot_key: str) -> pg.LegendItem | None:
        return self.time_legend if plot_key == "time" else self.busbw_legend

    def _collective_caption(self, op: str, by_alg: dict, chosen_by_size: dict) -> str:
        if not chosen_by_size:
            return ""
        largest = max(chosen_by_size)
        alg = chosen_by_size[largest]
        row = next((r for r in by_alg.get(alg, ()) if _num(r.get("bytes")) == largest), None)
        if row is None:
            row = next((r for r in by_alg.get("auto", ()) if _num(r.get("bytes")) == largest), {})
        parts = [f"<b>{op}</b> of {_bytes(largest)}: auto picks <b>{alg}</b>"]
        t, bus, alg_bw = _num(row.get("time_s")), _num(row.get("busbw_gb_per_s")), _num(row.get("algbw_gb_per_s"))
        if t is not None:
            parts.append(f"{_si(t, 's')}")
        if bus is not None:
            parts.append(f"busbw {bus:,.1f} GB/s" + (f" (algbw {alg_bw:,.1f} GB/s)" if alg_bw is not None else ""))
        bound = _num(row.get("bound_time_s"))
        if bound is not None and t:
            parts.append(f"{bound / t:.0%} of the bandwidth bound")
        text = ", ".join(parts)
        bottleneck = row.get("bottleneck")
        if bottleneck:
            text += f"<br>Bottleneck: {self._describe_bottleneck(bottleneck)}"
        small = min(chosen_by_size)
        if chosen_by_size[small] != alg:
            text += f"<br>Small messages ({_bytes(small)}): <b>{chosen_by_size[small]}</b>"
        return text

    @staticmethod
    def _describe_bottleneck(b: Any) -> str:
        if isinstance(b, Mapping):
            name = b.get("name") or b.get("link") or b.get("id") or b.get("item") or ""
            tier = b.get("tier")
            extra = []
            if tier:
                extra.append(str(tier))
            for k, unit in (("gb_per_s", "GB/s"), ("bandwidth_gb_per_s", "GB/s"), ("utilization", "")):
                if _num(b.get(k)) is not None:
                    val = _num(b.get(k))
                    extra.append(f"{val:.0%} utilized" if k == "utilization" else f"{val:,.1f} {unit}")
            return f"{name} ({', '.join(extra)})" if extra else str(name or dict(b))
        return str(b)

    # -- Utilization -----------------------------------------------------------------------

    def _build_utilization(self) -> None:
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Communication phase:"))
        self.phase_combo = QComboBox()
        self.phase_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.phase_combo.currentIndexChanged.connect(lambda _i: self._draw_utilization())
        row.addWidget(self.phase_combo)
        row.addStretch(1)
        v.addLayout(row)

        view = pg.GraphicsLayoutWidget()
        view.ci.setContentsMargins(4, 4, 12, 4)
        view.ci.setSpacing(10)
        self.link_plot = view.addPlot(row=0, col=0)
        _style_plot(self.link_plot, "Per-link utilization by tier (links sorted, busiest first)")
        _label(self.link_plot, "bottom", "Share of the tier's links", "%")
        _label(self.link_plot, "left", "Link utilization", "%")
        self.link_plot.setYRange(0, 100, padding=0.02)
        self.link_plot.setXRange(0, 100, padding=0.02)
        self.link_legend = _legend(self.link_plot, offset=(-10, 10))
        self.gpu_plot = view.addPlot(row=1, col=0)
        _style_plot(self.gpu_plot, "Per-GPU time over one training step")
        _label(self.gpu_plot, "bottom", "Share of the step", "%")
        self.gpu_plot.getAxis("left").setTicks([[(0, "GPU")]])
        self.gpu_plot.setXRange(0, 100, padding=0.01)
        self.gpu_plot.setYRange(-0.5, 0.5, padding=0)
        self.gpu_plot.setMouseEnabled(x=False, y=False)
        self.gpu_legend = _outside_legend(view, row=2, columns=3)
        for key, label, color in GPU_PARTS:
            bar = pg.BarGraphItem(x0=[0], y=[0], height=[0.7], width=[0], brush=color, pen=pg.mkPen("w", width=1))
            self.gpu_plot.addItem(bar)
            self.gpu_legend.addItem(bar, label)
            self._bars["gpu"][key] = bar
        view.ci.layout.setRowStretchFactor(0, 3)
        view.ci.layout.setRowStretchFactor(1, 1)
        self.utilization_view = view
        v.addWidget(view, 1)
        self.utilization_info = QLabel()
        self.utilization_info.setWordWrap(True)
        self.utilization_info.setStyleSheet("padding: 2px 6px;")
        v.addWidget(self.utilization_info)
        self.utilization_page = _Placeholder(page)
        self.tabs.addTab(self.utilization_page, "Utilization")

    def _update_utilization(self, result: Any) -> None:
        section = _section(result, "utilization")
        rows = _link_utilization_rows(section)
        gpu = _gpu_breakdown(section)
        self._utilization_rows = rows
        self._gpu_breakdown = gpu
        if not rows and gpu is None:
            self._blank_utilization()
            self.utilization_page.show_message("Utilization not computed")
            return
        phases = sorted({r[0] for r in rows})
        labels = (["all phases (busiest)"] if len(phases) > 1 else []) + phases
        current = self.phase_combo.currentText()
        self.phase_combo.blockSignals(True)
        self.phase_combo.clear()
        self.phase_combo.addItems(labels)
        if current in labels:
            self.phase_combo.setCurrentText(current)
        self.phase_combo.blockSignals(False)
        self.phase_combo.setEnabled(len(labels) > 1)
        self.utilization_page.show_content()
        self._draw_utilization()

    def _blank_utilization(self) -> None:
        for item in self._curves["utilization"].values():
            item.setData([], [])
        for bar in self._bars["gpu"].values():
            bar.setOpts(x0=[0], width=[0])
        self.utilization_info.setText("")

    def _tier_curve(self, tier: str) -> pg.PlotDataItem:
        item = self._curves["utilization"].get(tier)
        if item is None:
            n = len(self._curves["utilization"])
            color = TIER_COLORS.get(tier, PALETTE[(n + 2) % len(PALETTE)])
            item = pg.PlotDataItem(name=tier, pen=pg.mkPen(color, width=2.5))
            self.link_plot.addItem(item)
            self._curves["utilization"][tier] = item
        return item

    def _draw_utilization(self) -> None:
        phase = self.phase_combo.currentText()
        rows = self._utilization_rows
        busiest = phase.startswith("all phases")
        if phase and not busiest:
            rows = [r for r in rows if r[0] == phase]
        if busiest:
            # Each link at its busiest phase (links named by id; unnamed records are kept as they are).
            best: dict[tuple, tuple] = {}
            for i, r in enumerate(rows):
                key = (r[1], r[4]) if r[4] is not None else (r[1], None, i)
                if key not in best or r[2] > best[key][2]:
                    best[key] = r
            rows = list(best.values())
        by_tier: dict[str, tuple[list[float], list[float]]] = {}
        for _, tier, u, w, _ in rows:
            us, ws = by_tier.setdefault(tier, ([], []))
            us.append(u)
            ws.append(w)
        info = []
        top = 0.0
        for tier, (us, ws) in by_tier.items():
            u, w = np.asarray(us, float), np.asarray(ws, float)
            order = np.argsort(-u, kind="stable")
            u, w = u[order], w[order]
            total = w.sum()
            if len(u) == 0 or total <= 0:
                self._tier_curve(tier).setData([], [])
                continue
            # Step-shaped: each link (times its copies) owns its share of the x axis.
            edges = np.concatenate([[0.0], np.cumsum(w)]) * 100.0 / total
            self._tier_curve(tier).setData(np.repeat(edges, 2)[1:-1], np.repeat(u, 2))
            top = max(top, float(u[0]))
            cum = np.cumsum(w)
            median = float(u[np.searchsorted(cum, total / 2)])
            info.append(f"<b>{tier}</b>: {total:,.0f} links, max {u[0]:.0f} %, median {median:.0f} %, "
                        f"mean {np.average(u, weights=w):.0f} %")
        for tier, item in self._curves["utilization"].items():
            if tier not in by_tier:
                item.setData([], [])
        self.link_plot.setYRange(0, max(100.0, top * 1.05), padding=0.02)
        gpu = getattr(self, "_gpu_breakdown", None)
        x0 = 0.0
        for key, label, _ in GPU_PARTS:
            share = (gpu or {}).get(key, 0.0)
            self._bars["gpu"][key].setOpts(x0=[x0], width=[share])
            x0 += share
        if gpu:
            info.append("GPU: " + ", ".join(f"{label.lower()} {gpu.get(k, 0):.0f} %" for k, label, _ in GPU_PARTS))
        else:
            info.append("Per-GPU breakdown not computed")
        self.utilization_info.setText("<br>".join(info))

    # -- Training --------------------------------------------------------------------------

    def _build_training(self) -> None:
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 4, 0, 0)

        box = QGroupBox("Workload")
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(10)
        self.model_combo = QComboBox()
        self.model_combo.addItems(_presets())
        self.model_combo.setToolTip("LLM preset to train")
        self.auto_plan = QCheckBox("Auto plan (fastest that fits)")
        self.auto_plan.setChecked(True)
        self.tp_spin, self.pp_spin, self.dp_spin, self.mb_spin = (QSpinBox() for _ in range(4))
        for spin, maximum, tip in ((self.tp_spin, 1024, "Tensor-parallel degree"),
                                   (self.pp_spin, 1024, "Pipeline-parallel stages"),
                                   (self.dp_spin, 1_000_000, "Data-parallel replicas"),
                                   (self.mb_spin, 1024, "Micro-batch size (sequences)")):
            spin.setRange(1, maximum)
            spin.setToolTip(tip)
            spin.setAccelerated(True)
        self.tp_spin.setValue(8)
        self.recompute_combo = QComboBox()
        self.recompute_combo.addItems(RECOMPUTE)
        self.recompute_combo.setCurrentText("selective")
        self.zero_combo = QComboBox()
        self.zero_combo.addItems(["0 (off)", "1 (optimizer)", "2 (+ gradients)", "3 (+ weights)"])
        self.zero_combo.setCurrentIndex(1)
        grid.addWidget(QLabel("Model"), 0, 0)
        grid.addWidget(self.model_combo, 0, 1, 1, 3)
        grid.addWidget(self.auto_plan, 0, 4, 1, 4)
        for col, (text, w) in enumerate((("TP", self.tp_spin), ("PP", self.pp_spin), ("DP", self.dp_spin),
                                         ("Micro-batch", self.mb_spin))):
            grid.addWidget(QLabel(text), 1, col * 2, alignment=Qt.AlignmentFlag.AlignRight)
            grid.addWidget(w, 1, col * 2 + 1)
        grid.addWidget(QLabel("Recompute"), 2, 0, alignment=Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.recompute_combo, 2, 1, 1, 3)
        grid.addWidget(QLabel("ZeRO"), 2, 4, alignment=Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.zero_combo, 2, 5, 1, 3)
        v.addWidget(box)
        self.model_combo.currentIndexChanged.connect(self._workload_edited)
        self.auto_plan.toggled.connect(self._workload_edited)
        for spin in (self.tp_spin, self.pp_spin, self.dp_spin, self.mb_spin):
            spin.valueChanged.connect(self._workload_edited)
        self.recompute_combo.currentIndexChanged.connect(self._workload_edited)
        self.zero_combo.currentIndexChanged.connect(self._workload_edited)
        self._sync_plan_enabled()

        view = pg.GraphicsLayoutWidget()
        view.ci.setContentsMargins(4, 4, 12, 4)
        self.step_plot = view.addPlot(row=0, col=0)
        _style_plot(self.step_plot, "Training step breakdown")
        _label(self.step_plot, "bottom", "Time per step", "s", auto_si=True)
        self.step_plot.getAxis("left").setTicks([[(0, "step")]])
        self.step_plot.setYRange(-0.5, 0.5, padding=0)
        self.step_plot.setMouseEnabled(x=False, y=False)
        self.step_legend = _outside_legend(view, row=1, columns=3)
        for key, label, color in STEP_PARTS:
            bar = pg.BarGraphItem(x0=[0], y=[0], height=[0.7], width=[0], brush=color, pen=pg.mkPen("w", width=1))
            self.step_plot.addItem(bar)
            self.step_legend.addItem(bar, label)
            self._bars["training"][key] = bar
        view.setMinimumHeight(240)
        view.setMaximumHeight(320)
        self.training_view = view
        self.training_plot_page = _Placeholder(view)
        v.addWidget(self.training_plot_page)

        figures = QWidget()
        form = QFormLayout(figures)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(3)
        self.training_labels: dict[str, QLabel] = {}
        for key, text in (("step_time_s", "Step time"), ("mfu", "MFU"), ("tflops_per_gpu", "Model TFLOP/s per GPU"),
                          ("tokens_per_s", "Tokens/s"), ("days", "Time to train"),
                          ("memory_per_gpu_gb", "Memory per GPU"), ("fits", "Fits in memory"), ("plan", "Plan")):
            label = QLabel(NOT_COMPUTED)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setWordWrap(True)
            form.addRow(text + ":", label)
            self.training_labels[key] = label
        v.addWidget(figures)
        v.addStretch(1)
        self.training_page = page
        self.tabs.addTab(page, "Training")

    def _sync_plan_enabled(self) -> None:
        manual = not self.auto_plan.isChecked()
        for w in (self.tp_spin, self.pp_spin, self.dp_spin, self.mb_spin):
            w.setEnabled(manual)

    def _workload_edited(self, *_: Any) -> None:
        self._sync_plan_enabled()
        if not self._updating_workload:
            self.workloadChanged.emit(self.workload())

    def _update_training(self, result: Any) -> None:
        t = _section(result, "training")
        if not isinstance(t, Mapping) or not t:
            self._blank_training()
            self.training_plot_page.show_message("Training step not computed (no workload)")
            return
        fits = t.get("fits")
        x0 = 0.0
        total = 0.0
        for key, label, _ in STEP_PARTS:
            value = _num(t.get(key)) or 0.0
            self._bars["training"][key].setOpts(x0=[x0], width=[max(0.0, value)])
            x0 += max(0.0, value)
            total += max(0.0, value)
        self.step_plot.setXRange(0, max(total, 1e-9) * 1.02, padding=0.01)
        if fits is False and total == 0:
            self.training_plot_page.show_message("The plan does not fit in memory: not timed.\n"
                                                 + str(t.get("reason") or t.get("why") or ""))
        else:
            self.training_plot_page.show_content()
        L = self.training_labels
        step = _num(t.get("step_time_s"))
        L["step_time_s"].setText(_si(step, "s") if step is not None else NOT_COMPUTED)
        mfu = _num(t.get("mfu"))
        L["mfu"].setText(f"{mfu:.1%}" if mfu is not None else NOT_COMPUTED)
        tf = _num(t.get("tflops_per_gpu"))
        L["tflops_per_gpu"].setText(f"{tf:,.0f} TFLOP/s" if tf is not None else NOT_COMPUTED)
        tok = _num(t.get("tokens_per_s"))
        L["tokens_per_s"].setText(f"{format_value(float(round(tok)))} tokens/s" if tok is not None else NOT_COMPUTED)
        days = _num(t.get("days"))
        tokens = _num(t.get("tokens"))
        L["days"].setText((f"{days:,.1f} days" + (f" for {_count(tokens)} tokens" if tokens else ""))
                          if days is not None else NOT_COMPUTED)
        L["memory_per_gpu_gb"].setText(_memory_text(t.get("memory_per_gpu_gb"), t.get("memory_capacity_gb")))
        if fits is None:
            L["fits"].setText(NOT_COMPUTED)
            L["fits"].setStyleSheet("")
        else:
            reason = t.get("reason") or t.get("why") or ""
            L["fits"].setText("yes" if fits else f"NO — {reason}" if reason else "NO")
            L["fits"].setStyleSheet("color: #1B7F3B; font-weight: bold;" if fits else "color: #B00020; font-weight: bold;")
        L["plan"].setText(_plan_text(t.get("plan")))

    def _blank_training(self) -> None:
        for bar in self._bars["training"].values():
            bar.setOpts(x0=[0], width=[0])
        for label in self.training_labels.values():
            label.setText(NOT_COMPUTED)
            label.setStyleSheet("color: #666;")

    # -- Lint ------------------------------------------------------------------------------

    def _build_lint(self) -> None:
        tree = QTreeWidget()
        tree.setColumnCount(3)
        tree.setHeaderLabels(["Severity", "Item", "Finding"])
        tree.setRootIsDecorated(False)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setWordWrap(True)
        tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        tree.header().setStretchLastSection(True)
        tree.setToolTip("Click a finding to select its item on the canvas")
        tree.itemClicked.connect(self._finding_clicked)
        tree.itemActivated.connect(self._finding_clicked)
        self.lint_list = tree
        self.lint_page = _Placeholder(tree)
        self.tabs.addTab(self.lint_page, "Lint")
        style = self.style()
        self._severity_icons = {
            "error": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
            "warning": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
            "info": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation),
        }

    def _finding_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        item_id = item.data(0, Qt.ItemDataRole.UserRole)
        if item_id:
            self.findingActivated.emit(str(item_id))

    def _update_lint(self, result: Any) -> None:
        findings = _section(result, "lint")
        tree = self.lint_list
        tree.clear()
        index = self.tabs.indexOf(self.lint_page)
        if findings is None:
            self.lint_page.show_message("Lint not computed")
            self.tabs.setTabText(index, "Lint")
            return
        findings = [f for f in findings if isinstance(f, Mapping)]
        if not findings:
            self.lint_page.show_message("No findings: the design passes every rule.")
            self.tabs.setTabText(index, "Lint")
            return
        for f in findings:
            severity = str(f.get("severity", "info"))
            row = QTreeWidgetItem([severity, str(f.get("item", "")), str(f.get("message", ""))])
            row.setIcon(0, self._severity_icons.get(severity, self._severity_icons["info"]))
            row.setData(0, Qt.ItemDataRole.UserRole, f.get("item"))
            row.setToolTip(2, str(f.get("message", "")))
            tree.addTopLevelItem(row)
        self.lint_page.show_content()
        errors = sum(1 for f in findings if f.get("severity") == "error")
        warnings = sum(1 for f in findings if f.get("severity") == "warning")
        counts = [f"{errors} error{'s' if errors != 1 else ''}"] if errors else []
        counts += [f"{warnings} warning{'s' if warnings != 1 else ''}"] if warnings else []
        self.tabs.setTabText(index, f"Lint ({', '.join(counts) or len(findings)})")
        if errors:
            self.tabs.tabBar().setTabTextColor(index, QColor("#B00020"))
        else:
            self.tabs.tabBar().setTabTextColor(index, self.palette().color(QPalette.ColorRole.WindowText))

    def lint_findings_shown(self) -> list[tuple[str, str, str]]:
        self._refresh_all()
        t = self.lint_list
        return [tuple(t.topLevelItem(i).text(c) for c in range(3)) for i in range(t.topLevelItemCount())]

    # -- shared ----------------------------------------------------------------------------

    def _clear_sections(self, text: str) -> None:
        self.summary_page.show_message(f"Summary {text}")
        self.collectives_page.show_message(f"Collectives {text}")
        self.utilization_page.show_message(f"Utilization {text}")
        self.training_plot_page.show_message(f"Training step {text}")
        self.lint_page.show_message(f"Lint {text}")

    def _section_error(self, name: str, message: str) -> None:
        page = {"summary": self.summary_page, "collectives": self.collectives_page,
                "utilization": self.utilization_page, "training": self.training_plot_page,
                "lint": self.lint_page}[name]
        page.show_message(f"{name.capitalize()} could not be shown:\n{message}")


# -- section readers ------------------------------------------------------------------------------

def _presets() -> list[str]:
    from designer.engine import workloads

    return list(workloads.PRESETS)


LinkRow = tuple  # (phase, tier, utilization %, copies, link id)


def _link_utilization_rows(section: Any) -> list[LinkRow]:
    """(phase, tier, utilization %, copies, link id) for every link in every phase of the engine's
    `utilization.phases`: [{phase, links: [{link, tier, utilization (a fraction), copies}]}]."""
    if not isinstance(section, Mapping):
        return []
    rows: list[LinkRow] = []
    for phase in section.get("phases") or ():
        name = str(phase.get("phase", "phase"))
        rows.extend((name, link["tier"], 100.0 * link["utilization"], link.get("copies", 1), link.get("link"))
                    for link in phase.get("links") or () if link.get("utilization") is not None)
    return rows


def _gpu_breakdown(section: Any) -> dict[str, float] | None:
    """Compute / communication / idle as % of the step, averaged over the engine's
    `utilization.gpus` (one entry per drawn accelerator, weighted by its copies)."""
    gpus = section.get("gpus") if isinstance(section, Mapping) else None
    if not gpus:
        return None
    weights = np.array([g.get("count", 1) for g in gpus], float)
    return {key: float(np.average([g.get(key, 0.0) for g in gpus], weights=weights)) * 100.0
            for key, _, _ in GPU_PARTS}


def _memory_text(memory: Any, capacity: Any = None) -> str:
    if memory is None:
        return NOT_COMPUTED
    cap = _num(capacity)
    if isinstance(memory, Mapping):
        parts = {str(k): _num(v) for k, v in memory.items()}
        total = parts.pop("total", None)
        if total is None:
            total = sum(v for v in parts.values() if v is not None)
        detail = ", ".join(f"{k} {v:,.1f}" for k, v in parts.items() if v)
        text = f"{total:,.1f} GB" + (f" of {cap:,.0f} GB" if cap else "")
        return f"{text} ({detail})" if detail else text
    v = _num(memory)
    if v is None:
        return str(memory)
    return f"{v:,.1f} GB" + (f" of {cap:,.0f} GB" if cap else "")


def _plan_text(plan: Any) -> str:
    if plan is None:
        return NOT_COMPUTED
    if isinstance(plan, str):
        return plan
    if isinstance(plan, Mapping):
        names = {"tp": "TP", "pp": "PP", "dp": "DP", "mb": "micro-batch", "microbatch": "micro-batch",
                 "micro_batch": "micro-batch", "recompute": "recompute", "zero": "ZeRO"}
        parts = [f"{names.get(str(k), str(k))} {v}" for k, v in plan.items() if v is not None]
        return " · ".join(parts)
    return str(plan)
