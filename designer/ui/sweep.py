"""The Sweep window: edit a sweep (the JSON of NAME.sweep.json), run it or find its best point on
Dask (`designer.explore`, the engine and runner the CLI uses) on a helper thread, and watch the
points arrive on a scatter of any two figures, coloured by a third, with the Pareto front drawn.
Clicking a point, or double-clicking its row, opens its design in a window of its own; the table
sorts by any column and filters on any text. A point's tooltip names it (its parameters) and its
figures; the axes are named as the summary rows name the figures, in units (US$ million, EFLOPS)
that suit the values."""

from __future__ import annotations

import functools
import json
import math
import re
import threading
from dataclasses import dataclass
from html import escape
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QObject, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QMainWindow, QMessageBox,
                               QPlainTextEdit, QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget)

from designer.engine import evaluate
from designer.engine.figures import FigureError, direction, figures, number, summary_key
from designer.engine.summary import summary_rows
from designer.explore.optimize import optimize
from designer.explore.pareto import pareto_front
from designer.explore.results import columns
from designer.explore.runner import dask_client, progress_line, run_sweep
from designer.explore.spec import MAX_SWEEP_BYTES, Sweep, SweepError, design_of, sweep_from_document
from designer.io.files import write_text_atomically
from designer.model.catalog import default_catalog
from designer.model.errors import DesignerError
from designer.model.validation import parse_json, read_text
from designer.paths import sweeps_dir
from designer.style import colors
from designer.topologies import generate
from designer.ui.results import plotstyle
from designer.ui.results.formatting import axis_scale, figure_text, plan_text

SWEEP_FILTER = "Sweeps (*.sweep.json);;JSON files (*.json);;All files (*)"
STARTER = {
    "format": "cluster-designer-sweep", "version": 1, "name": "H100 pods",
    "template": "rail-fat-tree",
    "params": {"nodes": {"from": 16, "to": 256, "factor": 2}, "oversubscription": [1, 2],
               "gpu": ["h100-sxm", "h200-sxm"]},
    "workloads": [{"model": "llama2-70b", "tokens": 2e12}],
    "plans": ["auto"],
    "keep": ["summary.power_kw", "training.days", "summary.accelerators", "training.mfu"],
    "constraints": ["summary.power_kw <= 2500", "training.days <= 60"],
    "goal": {"minimize": "summary.power_kw"},
}
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
MAX_COLUMN_PX = 260
NO_VALUE = "#BBBBBB"  # the colour of a point without a value for the colour figure
SCHEDULER_SETTING = "sweep/scheduler"  # the last scheduler address used, offered again


class _Relay(QObject):
    row = Signal(object)
    progress = Signal(object)
    done = Signal(str)


class SweepWindow(QMainWindow):
    finished = Signal(str)  # the run ended: what happened, in words
    pointsShown = Signal(int)  # the scatter was redrawn with this many points

    def __init__(self, main_window, processes: bool = True, workers: int | None = None) -> None:
        super().__init__()
        self.setWindowTitle("Sweep")
        self.resize(1400, 850)
        self.main_window = main_window
        self.processes, self.workers = processes, workers  # the local cluster's, when no scheduler is named
        self.path: str | None = None
        self.sweep: Sweep | None = None
        self.rows: list[dict] = []
        self._row_of_point: dict[int, dict] = {}
        self.pareto: list[int] = []
        self.best_point: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._relay = _Relay(self)
        self._relay.row.connect(self._on_row)
        self._relay.progress.connect(lambda p: self.progress.setText(progress_line(p)))
        self._relay.done.connect(self._on_done)
        self._redraw = QTimer(self, singleShot=True, interval=150, timeout=self._draw)

        # Left: the sweep's text and the buttons.
        left = QWidget()
        lv = QVBoxLayout(left)
        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open…", clicked=self.open_dialog)
        self.save_button = QPushButton("Save As…", clicked=self.save_dialog)
        self.run_button = QPushButton("Run", clicked=lambda: self.run(find_best=False))
        self.best_button = QPushButton("Find best", clicked=lambda: self.run(find_best=True))
        self.stop_button = QPushButton("Stop", clicked=self.stop, enabled=False)
        for button in (self.open_button, self.save_button, self.run_button, self.best_button, self.stop_button):
            buttons.addWidget(button)
        lv.addLayout(buttons)
        where = QHBoxLayout()
        where.addWidget(QLabel("Dask scheduler:"))
        self.scheduler_field = QLineEdit(main_window.settings.value(SCHEDULER_SETTING, "", str))
        self.scheduler_field.setObjectName("sweepScheduler")
        self.scheduler_field.setPlaceholderText("empty: a local cluster on this machine; or tcp://host:8786")
        self.scheduler_field.setToolTip("Where Run and Find best evaluate the points: the address of an existing "
                                        "Dask scheduler, or empty for a local cluster of one worker process per core")
        where.addWidget(self.scheduler_field, 1)
        lv.addLayout(where)
        self.editor = QPlainTextEdit(json.dumps(STARTER, indent=2))
        self.editor.setObjectName("sweepText")
        lv.addWidget(self.editor, 1)
        self.status = QLabel("Edit the sweep, then Run (every point) or Find best (the goal, pruning what cannot win)")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lv.addWidget(self.status)
        self.progress = QLabel("")
        lv.addWidget(self.progress)

        # Right: scatter above, table below.
        right = QSplitter(Qt.Orientation.Vertical)
        plot_box = QWidget()
        pv = QVBoxLayout(plot_box)
        axes = QHBoxLayout()
        self.x_combo, self.y_combo, self.color_combo = QComboBox(), QComboBox(), QComboBox()
        for text, combo in (("x:", self.x_combo), ("y:", self.y_combo), ("colour:", self.color_combo)):
            axes.addWidget(QLabel(text))
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(lambda _i: self._redraw.start())
            axes.addWidget(combo)
        axes.addStretch(1)
        pv.addLayout(axes)
        self.plot = pg.PlotWidget(background=colors.CANVAS_BACKGROUND)
        plotstyle.style_plot(self.plot.getPlotItem())
        self.front_line = self.plot.plot([], [], pen=pg.mkPen(colors.PARETO, width=2, style=Qt.PenStyle.DashLine),
                                         name="Pareto front")
        self.scatter = pg.ScatterPlotItem(size=9, pen=pg.mkPen(colors.TEXT, width=0.5), hoverable=True,
                                          tip=self.point_tip)
        self.scatter.sigClicked.connect(self._on_clicked)
        self.plot.addItem(self.scatter)
        self.front_marks = pg.ScatterPlotItem(size=15, pen=pg.mkPen(colors.PARETO, width=2.5), brush=None)
        self.plot.addItem(self.front_marks)
        self.best_mark = pg.ScatterPlotItem(size=22, symbol="star", pen=pg.mkPen(colors.BOTTLENECK, width=1.5),
                                            brush=pg.mkBrush(colors.BOTTLENECK))
        self.plot.addItem(self.best_mark)
        for mark in (self.front_marks, self.best_mark):
            mark.setZValue(-1)  # under the points: a click on a marked point reaches the point
        pv.addWidget(self.plot, 1)
        self._limits: list = []
        self.legend = QLabel("")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        pv.addWidget(self.legend)
        right.addWidget(plot_box)
        table_box = QWidget()
        tv = QVBoxLayout(table_box)
        self.filter = QLineEdit(placeholderText="Filter rows (any column contains…)")
        tv.addWidget(self.filter)
        self.model = QStandardItemModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # points in order until the user sorts
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)  # the point's number is the first column
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setWordWrap(False)
        self.table.doubleClicked.connect(lambda index: self.open_point(
            int(self.proxy.index(index.row(), 0).data(SORT_ROLE))))
        tv.addWidget(self.table)
        right.addWidget(table_box)
        right.setSizes([520, 330])

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([420, 980])
        self.setCentralWidget(split)

    # --- the sweep's file --------------------------------------------------------------------------
    def open_dialog(self) -> None:
        # The shipped sweeps first, until a sweep of the user's own is open.
        folder = str(Path(self.path).parent) if self.path else str(sweeps_dir())
        path, _ = QFileDialog.getOpenFileName(self, "Open sweep", folder, SWEEP_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> None:
        try:
            text = read_text(path, MAX_SWEEP_BYTES, "sweep file", SweepError)
        except DesignerError as exc:
            QMessageBox.warning(self, "Open sweep", str(exc))
            return
        self.editor.setPlainText(text)
        self.path = path
        self.setWindowTitle(f"Sweep — {Path(path).name}")

    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save sweep", "sweep.sweep.json", SWEEP_FILTER)
        if not path:
            return
        try:
            write_text_atomically(path, self.editor.toPlainText())
        except (OSError, UnicodeEncodeError) as exc:
            QMessageBox.warning(self, "Save sweep", f"{path}: cannot be written "
                                                   f"({getattr(exc, 'strerror', None) or exc}); nothing was changed")
            return
        self.path = path

    def _parsed(self) -> Sweep | None:
        source = self.path or "sweep"
        try:
            return sweep_from_document(parse_json(self.editor.toPlainText(), source), source,
                                       self.main_window.catalog)
        except DesignerError as exc:
            self.status.setText(str(exc))
            return None

    # --- running -------------------------------------------------------------------------------------
    def run(self, find_best: bool = False) -> bool:
        """Start the sweep (or the search for its best point) on a helper thread; False if the
        text is refused (the status line says why) or a run is under way."""
        if self._thread is not None and self._thread.is_alive():
            return False
        sweep = self._parsed()
        if sweep is None:
            return False
        if find_best and sweep.goal is None:
            self.status.setText(f"{sweep.source}: $: Find best needs a goal, "
                                "like {\"minimize\": \"summary.power_kw\"}")
            return False
        self.sweep = sweep
        self.rows, self.pareto, self.best_point = [], [], None
        self._row_of_point = {}
        self._set_columns(sweep)
        self._stop.clear()
        scheduler = self.scheduler_field.text().strip() or None
        self.main_window.settings.setValue(SCHEDULER_SETTING, scheduler or "")
        self.status.setText(f"{'Finding the best of' if find_best else 'Evaluating'} {sweep.count():,} points "
                            f"on {scheduler or 'a local cluster'}…")
        for button in (self.run_button, self.best_button):
            button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self._thread = threading.Thread(target=self._work, args=(sweep, find_best, scheduler), name="sweep",
                                        daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        self._stop.set()
        self.status.setText("Stopping: the points under way are dropped, the finished ones stay")

    def _work(self, sweep: Sweep, find_best: bool, scheduler: str | None) -> None:
        try:
            with dask_client(scheduler, self.workers, self.processes) as client:
                if find_best:
                    answer, progress = optimize(sweep, client, self._stop, self._relay.progress.emit,
                                                self._relay.row.emit)
                    self.best_point = answer.best["point"] if answer.best else None
                    text = answer.explain(sweep)
                else:
                    progress = run_sweep(sweep, client, self._relay.row.emit, stop=self._stop,
                                         on_progress=self._relay.progress.emit)
                    text = f"{progress.done:,} of {progress.total:,} points evaluated" + \
                        (f", {progress.failed:,} failed" if progress.failed else "")
        except DesignerError as exc:
            text = str(exc)
        self._relay.done.emit(("Stopped. " if self._stop.is_set() else "") + text)

    def _on_done(self, text: str) -> None:
        self.status.setText(text)
        for button in (self.run_button, self.best_button):
            button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self._draw()
        self.finished.emit(text)

    def _set_columns(self, sweep: Sweep) -> None:
        self._columns = [c for c in columns(sweep) if c != "design"]
        self.model.clear()
        self.model.setHorizontalHeaderLabels(self._columns)
        for column, path in enumerate(self._columns):
            if "." in path:  # a parameter or a figure: what it is, hovering its header
                self.model.setHeaderData(column, Qt.Orientation.Horizontal, figure_name(path).title(),
                                         Qt.ItemDataRole.ToolTipRole)
        numeric = [a for a in sweep.axes if a.startswith("param.")] + sweep.figures
        for combo in (self.x_combo, self.y_combo, self.color_combo):
            combo.blockSignals(True)
            combo.clear()
            # The paths as the sweep's text spells them; what each is, with its unit, on hovering.
            for path in numeric:
                combo.addItem(path)
                combo.setItemData(combo.count() - 1, figure_name(path).title(), Qt.ItemDataRole.ToolTipRole)
            combo.blockSignals(False)
        goal = sweep.goal[1] if sweep.goal else None
        x = goal if goal in numeric else next((f for f in numeric if "power" in f or "cost" in f), numeric[0])
        y = next((f for f in numeric if f.endswith("days") and f != x), numeric[min(1, len(numeric) - 1)])
        color = next((f for f in numeric if f not in (x, y)), x)
        self.x_combo.setCurrentText(x)
        self.y_combo.setCurrentText(y)
        self.color_combo.setCurrentText(color)

    def _on_row(self, row: dict) -> None:
        self.rows.append(row)
        self._row_of_point[row["point"]] = row
        items = []
        for name in self._columns:
            value = row.get(name)
            text = "" if value is None else (json.dumps(value) if isinstance(value, (dict, list))
                                             else f"{value:,.4g}" if isinstance(value, float) else str(value))
            item = QStandardItem(text)
            item.setData(value if isinstance(value, (int, float)) else text, SORT_ROLE)
            items.append(item)
        self.model.appendRow(items)
        if self.model.rowCount() == 1:
            self._fit_columns(items)
        if not self._redraw.isActive():
            self._redraw.start()

    def _fit_columns(self, first: list[QStandardItem]) -> None:
        """Columns as wide as their name or the first row's text (measuring every row as points
        arrive would cost more than the rows)."""
        metrics = self.table.fontMetrics()
        for column, (name, item) in enumerate(zip(self._columns, first)):
            wanted = max(metrics.horizontalAdvance(name), metrics.horizontalAdvance(item.text())) + 24
            self.table.setColumnWidth(column, min(wanted, MAX_COLUMN_PX))

    # --- the scatter ---------------------------------------------------------------------------------
    def _draw(self) -> None:
        x_path, y_path, c_path = self.x_combo.currentText(), self.y_combo.currentText(), self.color_combo.currentText()
        if not x_path or not y_path:
            return
        shown = [(i, row) for i, row in enumerate(self.rows)
                 if _number(row.get(x_path)) is not None and _number(row.get(y_path)) is not None]
        xy = [(_number(row[x_path]), _number(row[y_path])) for _i, row in shown]
        brushes, key = self._tints([row.get(c_path) for _i, row in shown])
        meets = [row["meets"] for _i, row in shown]
        symbols = ["o" if ok else "x" for ok in meets]
        self.scatter.setData([p[0] for p in xy], [p[1] for p in xy], brush=brushes, symbol=symbols,
                             data=[row["point"] for _i, row in shown])
        front = pareto_front(xy, direction(x_path), direction(y_path))
        self.pareto = [shown[i][1]["point"] for i in front]
        self.front_line.setData([xy[i][0] for i in front], [xy[i][1] for i in front])
        self.front_marks.setData([xy[i][0] for i in front], [xy[i][1] for i in front])
        best = [(x, y) for (x, y), (_i, row) in zip(xy, shown) if row["point"] == self.best_point]
        self.best_mark.setData([p[0] for p in best], [p[1] for p in best])
        plot = self.plot.getPlotItem()
        for side, path, values in (("bottom", x_path, [p[0] for p in xy]), ("left", y_path, [p[1] for p in xy])):
            self._label_axis(plot, side, path, values)
        self._draw_limits(x_path, y_path)
        self.legend.setText(f"{len(xy):,} points · colour: {escape(figure_name(c_path).name)} {key} · "
                            "o meets the constraints, "
                            "x does not (dashed: the limits) · "
                            f"<span style='color:{colors.PARETO}'>violet rings, dashed</span>: Pareto front "
                            f"({len(front)} points)" + (" · star: best" if best else ""))
        self.pointsShown.emit(len(xy))

    @staticmethod
    def _label_axis(plot, side: str, path: str, values: list[float]) -> None:
        """The figure's name and unit, the ticks scaled to the unit (money in US$ million, not "M$")."""
        name = figure_name(path)
        factor, unit = axis_scale(max((abs(v) for v in values), default=0.0), name.unit)
        plotstyle.label(plot, side, name.name, "" if factor == 1 and name.says_unit() else unit)
        plot.getAxis(side).setScale(factor)

    def point_tip(self, x: float, y: float, data) -> str:
        """The tooltip of a point: which point, its parameters, the figures on the axes and the
        colour, whether it meets the constraints."""
        row = self._row_of_point.get(data)
        if row is None or self.sweep is None:
            return ""
        shown = [self.x_combo.currentText(), self.y_combo.currentText(), self.color_combo.currentText()]
        axes = [a for a in self.sweep.axes if a in row and not (a in ("workload", "plan") and _single(self.sweep, a))]
        lines = [f"Point {data}: " + ", ".join(f"{_axis_name(a)} {row[a]}" for a in axes)]
        for path in dict.fromkeys(shown + ["training.plan"]):
            value = row.get(path)
            if path == "training.plan" and isinstance(value, dict):
                lines.append(f"Plan: {plan_text(value)}")
            elif value is not None and path in self.sweep.figures:
                name = figure_name(path)
                lines.append(f"{name.name}: {figure_text(value, name.unit) if _number(value) is not None else value}")
        lines.append("meets the constraints" if row.get("meets") else "misses a constraint")
        lines.append("Click to open its design")
        return "\n".join(lines)

    def _tints(self, values: list) -> tuple[list, str]:
        """A brush per point and the colour key in words: numbers on a dark-to-yellow scale, text
        (a platform, a template) one colour per value."""
        numbers = [_number(v) for v in values]
        known = [n for n in numbers if n is not None]
        if known or not any(isinstance(v, str) for v in values):
            low, high = (min(known), max(known)) if known else (0.0, 1.0)
            cmap = pg.colormap.get("viridis")
            brushes = [pg.mkBrush(NO_VALUE) if n is None else
                       pg.mkBrush(cmap.map((n - low) / (high - low) if high > low else 0.5, mode="qcolor"))
                       for n in numbers]
            unit = figure_name(self.color_combo.currentText()).unit
            return brushes, f"from {figure_text(low, unit)} (dark) to {figure_text(high, unit)} (yellow)"
        names = sorted({v for v in values if isinstance(v, str)})
        palette = {name: colors.SERIES[i % len(colors.SERIES)] for i, name in enumerate(names)}
        brushes = [pg.mkBrush(palette.get(v, NO_VALUE)) for v in values]
        return brushes, " ".join(f"<span style='color:{palette[n]}'>■</span> {escape(n)}" for n in names)

    def _draw_limits(self, x_path: str, y_path: str) -> None:
        """The constraints on the two figures shown, as dashed lines."""
        for line in self._limits:
            self.plot.removeItem(line)
        self._limits = [pg.InfiniteLine(c.bound, angle=90 if c.path == x_path else 0,
                                        pen=pg.mkPen(colors.ERROR, width=1.5, style=Qt.PenStyle.DashLine))
                        for c in (self.sweep.constraints if self.sweep else ()) if c.path in (x_path, y_path)]
        for line in self._limits:
            self.plot.addItem(line, ignoreBounds=True)

    def _on_clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.open_point(int(points[0].data()))

    def open_point(self, point: int):
        """Open the design of a sweep's point in a window of its own (unsaved)."""
        row = next(r for r in self.rows if r["point"] == point)
        design = design_of(json.loads(row["design"]), self.main_window.catalog, self.sweep.bases)
        described = ", ".join(f"{k.removeprefix('param.')}={row[k]}" for k in self.sweep.axes if k in row)
        design.name = f"{self.sweep.name}: {described}"[:200]
        return self.main_window.open_design_window(design, f"Point {point} of sweep {self.sweep.name}")

    def closeEvent(self, event) -> None:
        self._stop.set()
        super().closeEvent(event)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _single(sweep: Sweep, axis: str) -> bool:
    """Whether the sweep has one value on `axis` (one workload, one plan): not worth naming."""
    return len(sweep.workloads if axis == "workload" else sweep.plans) == 1


def _axis_name(axis: str) -> str:
    """"param.nodes" → "nodes", "part.h100-sxm" → "part for h100-sxm"."""
    kind, _, name = axis.partition(".")
    if kind == "part":
        return f"part for {name}"
    return name.replace("_", " ") if name else kind


# --- what a figure path is called ----------------------------------------------------------------
# A figure's name and unit are those of the summary row showing it (engine.summary): a `summary.KEY`
# path is the row of that key; a section's path (`cost.capital_usd`) is the row showing the same
# figure, found on a small reference evaluation (the same value, and a word in common).

REFERENCE_JOB = {"model": "megatron-1.7b", "tokens": 1e11, "plan": "auto"}
_FILLER = {"of", "to", "the", "at", "per", "with", "which", "a", "by", "and"}


@dataclass(frozen=True)
class FigureName:
    name: str  # "Capital cost"
    unit: str  # the engine's unit: "USD", "kW", "TFLOPS", "fraction", "" for a count or a text

    def says_unit(self) -> bool:
        """Whether the name says the unit already ("Days to train")."""
        return self.unit.lower() in _words(self.name)

    def title(self) -> str:
        bare = not self.unit or self.unit in ("count", "fraction") or self.says_unit()
        return self.name if bare else f"{self.name} ({self.unit})"


@functools.lru_cache(maxsize=1)
def _reference() -> tuple[tuple, dict]:
    """The summary rows (parts by id) and the figures of two servers with a training job."""
    catalog = default_catalog()
    try:
        result = evaluate(generate("rail-fat-tree", catalog, nodes=2), catalog, workload={"training": REFERENCE_JOB})
    except DesignerError:
        return (), {}
    return tuple(summary_rows(result, named=False)), figures(result)


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w and not w.isdigit() and w not in _FILLER}


def _plain(metric: str) -> str:
    """A row's name without the choice that differs between designs: "allreduce 1G busbw"."""
    return re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", "", metric)).strip()


def _unit_and_rest(key: str, units) -> tuple[str, str]:
    """The unit a key ends with, read from the units' key suffixes ("capital_usd" → "USD", "capital"),
    the longest first."""
    suffixes = sorted(((summary_key("x", u).removeprefix("x").strip("_"), u) for u in units),
                      key=lambda pair: -len(pair[0]))
    for suffix, unit in suffixes:
        if suffix and (key == suffix or key.endswith("_" + suffix)):
            return unit, key.removesuffix(suffix).strip("_")
    return "", key


@functools.lru_cache(maxsize=512)
def figure_name(path: str) -> FigureName:
    """What a figure path is called, and its unit."""
    rows, tree = _reference()
    section, _, rest = path.partition(".")
    if section in ("param", "part", "template", "workload", "plan"):
        return FigureName(_axis_name(path), "")
    units = {unit for _m, _v, unit in rows}
    if section == "summary":
        for metric, _value, unit in rows:
            if summary_key(metric, unit) == rest:
                return FigureName(_plain(metric.strip()), unit)
    elif section == "collectives":
        # An entry's place depends on the algorithms that apply to each design: named by its number,
        # not by what it holds in the reference (`summary.allreduce_1g_busbw_gb_per_s` names its row).
        index, _, field = rest.partition(".")
        if index.isdigit() and field:
            unit, what = _unit_and_rest(field, units)
            return FigureName(f"collectives row {index}: {what.replace('_', ' ')}", unit)
    else:
        try:
            value = number(tree, path)
        except FigureError:
            value = None
        if value is not None:
            mine = _words(path)
            same = [(len(mine & _words(metric)), metric, unit) for metric, shown, unit in rows
                    if _number(shown) is not None and math.isclose(shown, value, rel_tol=1e-9)]
            overlap, metric, unit = max(same, key=lambda t: t[0], default=(0, "", ""))
            if overlap:
                return FigureName(_plain(metric.strip()), unit)
    *above, last = path.split(".")
    unit, what = _unit_and_rest(last, units)
    words = what.replace("_", " ")
    return FigureName(f"{' '.join(above).replace('_', ' ')}: {words}" if above else words, unit)
