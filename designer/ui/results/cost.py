"""The Cost tab: capital cost by category (one stacked bar), yearly cost by component (a bar
each), the cost figures, and the cost model's assumptions, editable, with their sources beside
them. An edit is a design setting (`cost`): the window makes it one undo step."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Signal
from PySide6.QtWidgets import (QComboBox, QGridLayout, QGroupBox, QLabel, QPushButton, QToolTip,
                               QVBoxLayout, QWidget)

from designer.document.turns import later
from designer.engine.cost import ASSUMPTIONS, CATEGORIES, DEFAULTS, NOT_COUNTED, YEARLY, Assumption
from designer.engine.result import Result
from designer.engine.summary import derived_text, parts_text, unpriced_text
from designer.style import colors
from designer.ui.results import plotstyle
from designer.ui.results.formatting import NOT_COMPUTED
from designer.ui.results.fields import CheckedDoubleSpinBox, RefusalLabel
from designer.ui.results.figures import figures_form, scrolled_page
from designer.ui.results.placeholder import Placeholder

FIGURES = (("capital_usd", "Capital cost"), ("facility_usd", "Of which facility"), ("yearly_usd", "Yearly cost"),
           ("yearly_operating_usd", "Of which operating"), ("per_accelerator_hour_usd", "Per accelerator-hour"),
           ("run_usd", "Training run"), ("run_energy_mwh", "Training run energy"),
           ("per_million_tokens_usd", "Per million tokens"), ("unpriced_parts", "Unpriced parts"),
           ("derived_parts", "Derived estimates"), ("not_counted", "Not counted"))
VIEW_HEIGHT = (380, 440)  # the plots' view, with the legend in two columns: at least, at most
LEGEND_ROW_HEIGHT = 24
# Which assumptions apply to which way of paying for the building.
FACILITY_KEYS = {"build": ("facility_usd_per_kw", "facility_years"), "colocation": ("colocation_usd_per_kw_month",)}


def money(value: float | None) -> str:
    """"$1.23 M", "$3.41"."""
    if value is None:
        return NOT_COMPUTED
    for factor, suffix in ((1e9, " B"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= factor:
            return f"${value / factor:,.3g}{suffix}"
    return f"${value:,.2f}"


def _scale(largest: float) -> tuple[float, str]:
    """The divisor and word for a money axis whose largest value is `largest`."""
    for factor, word in ((1e9, "billion USD"), (1e6, "million USD"), (1e3, "thousand USD")):
        if largest >= factor:
            return factor, word
    return 1.0, "USD"


def _assumption_text(assumption: Assumption, value: Any) -> str:
    """An assumption's value as its editor shows it: "0.080 USD/kWh", "5.0 years", "build"."""
    if assumption.choices:
        return str(value)
    unit = f" {assumption.unit}" if assumption.unit and assumption.unit != "fraction" else ""
    return f"{value:,.{assumption.decimals}f}{unit}"


class AssumptionsForm(QObject):
    """The cost model's assumptions; `changed` carries the design's new `cost` setting (only the
    values that differ from the defaults; None when all are defaults)."""

    changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self._updating = False
        box = QGroupBox("Assumptions (saved with the design)")
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(4)
        grid.setColumnStretch(2, 1)
        self.editors: dict[str, CheckedDoubleSpinBox | QComboBox] = {}
        self.sources: dict[str, QLabel] = {}
        self.refusal = RefusalLabel()
        for row, assumption in enumerate(ASSUMPTIONS):
            if assumption.choices:
                editor = QComboBox()
                editor.addItems(list(assumption.choices))
                editor.currentIndexChanged.connect(self._edited)
            else:
                editor = CheckedDoubleSpinBox()
                editor.setDecimals(assumption.decimals)
                editor.setRange(assumption.minimum, assumption.maximum)
                editor.setSuffix(f" {assumption.unit}" if assumption.unit and assumption.unit != "fraction" else "")
                editor.setKeyboardTracking(False)  # a typed number is one edit, when it is finished
                editor.setAccelerated(True)
                editor.valueChanged.connect(self._edited)
                editor.refused.connect(lambda typed, a=assumption, e=editor: self.refusal.refuse(a.label, e, typed))
            editor.setObjectName(f"cost-{assumption.key}")
            editor.setToolTip(assumption.source)
            source = QLabel(assumption.source)
            source.setObjectName(f"cost-source-{assumption.key}")
            source.setTextFormat(Qt.TextFormat.RichText)
            source.setWordWrap(True)
            source.setStyleSheet(f"color: {colors.DIM_TEXT}; font-size: 8.5pt;")
            source.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(QLabel(assumption.label), row, 0, alignment=Qt.AlignmentFlag.AlignRight)
            grid.addWidget(editor, row, 1)
            grid.addWidget(source, row, 2)
            self.editors[assumption.key] = editor
            self.sources[assumption.key] = source
        self.reset = QPushButton("Reset to Defaults")
        self.reset.setObjectName("cost-reset")
        self.reset.setToolTip("Every assumption back to its default (one undo step)")
        self.reset.clicked.connect(lambda: self.changed.emit(None))
        grid.addWidget(self.reset, len(ASSUMPTIONS), 1)
        grid.addWidget(self.refusal, len(ASSUMPTIONS) + 1, 0, 1, 3)
        self.box = box
        self.set_setting(None)

    def setting(self) -> dict | None:
        values = {}
        for assumption in ASSUMPTIONS:
            editor = self.editors[assumption.key]
            if isinstance(editor, QComboBox):
                value = editor.currentText()
            else:
                value = round(editor.value(), assumption.decimals)
                shown = self._shown[assumption.key]
                if round(shown, assumption.decimals) == value:
                    value = shown  # a finer figure from the file stays as it was, unless edited
            if value != DEFAULTS[assumption.key]:
                values[assumption.key] = value
        return values or None

    def set_setting(self, setting: Mapping[str, Any] | None) -> None:
        """Show a design's `cost` setting without emitting `changed`."""
        self._updating = True
        try:
            values = {**DEFAULTS, **(setting or {})}
            self._shown = values
            for key, editor in self.editors.items():
                if isinstance(editor, QComboBox):
                    editor.setCurrentText(str(values[key]))
                else:
                    editor.setValue(float(values[key]))
            self._sync_enabled()
        finally:
            self._updating = False

    def _sync_enabled(self) -> None:
        mode = self.editors["facility"].currentText()
        for facility, keys in FACILITY_KEYS.items():
            for key in keys:
                self.editors[key].setEnabled(facility == mode)
        self._show_defaults()

    def _show_defaults(self) -> None:
        """A changed assumption says its default beside its source, so the user can go back to it."""
        changed = self.setting() or {}
        for assumption in ASSUMPTIONS:
            label = self.sources[assumption.key]
            if assumption.key in changed:
                label.setText(f"<b>Default: {_assumption_text(assumption, assumption.default)}.</b> "
                              f"{html.escape(assumption.source, quote=False)}")
            else:
                label.setText(html.escape(assumption.source, quote=False))
        self.reset.setEnabled(bool(changed))

    def _edited(self, *_: Any) -> None:
        self._sync_enabled()
        if not self._updating:
            self.refusal.hide()
            self.changed.emit(self.setting())


def facility_text(result: Result) -> str:
    """What of the capital is the building, and how it adds up with the parts (the BOM CSV's
    closing rows say the same)."""
    cost, used = result.cost, result.cost.assumptions
    parts = f"parts {money(cost.total_usd)} (the BOM) + facility = the capital cost"
    if used["facility"] != "build":
        return f"none: colocation, paid by the month in the yearly cost; {parts}"
    return (f"{money(cost.facility_usd)}: {used['facility_usd_per_kw']:,.0f} USD/kW × {result.power.total_kw:,.0f} kW "
            f"of IT load; {parts}")


class _BarTips(QObject):
    """The tooltip of the bar the mouse rests on, asked for when Qt asks (never a stale one)."""

    def __init__(self, view: pg.GraphicsLayoutWidget, text_at) -> None:
        super().__init__(view)
        self._view, self._text_at = view, text_at
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ToolTip:
            return False
        text = self._text_at(self._view.mapToScene(event.pos()))
        if text:
            QToolTip.showText(event.globalPos(), text, self._view.viewport())
        else:
            QToolTip.hideText()
        return True


class CostTab:
    title = "Cost"
    subject = "Cost"

    def __init__(self) -> None:
        self.capital_bars: dict[str, pg.BarGraphItem] = {}
        self.capital_legend: dict[str, pg.LabelItem] = {}
        self.yearly_bars: dict[str, pg.BarGraphItem] = {}
        self.yearly_values: dict[str, pg.TextItem] = {}
        content = QWidget()
        v = QVBoxLayout(content)
        v.setContentsMargins(0, 4, 0, 0)

        view = plotstyle.plot_view()
        self.capital_plot = view.addPlot(row=0, col=0)
        plotstyle.style_plot(self.capital_plot, "Capital cost by category")
        self.capital_plot.getAxis("left").setTicks([[(0, "capital")]])
        self.capital_plot.setYRange(-0.5, 0.5, padding=0)
        self.capital_plot.setMouseEnabled(x=False, y=False)
        legend = self.capital_legend_item = plotstyle.outside_legend(view, row=1, columns=2)
        for key, text in CATEGORIES.items():
            item = plotstyle.bar(colors.COST_CATEGORY[key])
            self.capital_plot.addItem(item)
            legend.addItem(item, text)
            self.capital_bars[key] = item
            self.capital_legend[key] = legend.items[-1][1]
        self.yearly_plot = view.addPlot(row=2, col=0)
        plotstyle.style_plot(self.yearly_plot, "Yearly cost")
        self.yearly_plot.getAxis("left").setTicks([[(-i, text) for i, text in enumerate(YEARLY.values())]])
        self.yearly_plot.setYRange(-len(YEARLY) + 0.5, 0.5, padding=0)
        self.yearly_plot.setMouseEnabled(x=False, y=False)
        for plot in (self.capital_plot, self.yearly_plot):
            plot.getAxis("left").setWidth(150)
        for i, key in enumerate(YEARLY):
            item = pg.BarGraphItem(x0=[0], y=[-i], height=[0.7], width=[0], brush=colors.YEARLY_COST[key],
                                   pen=pg.mkPen(colors.CANVAS_BACKGROUND, width=1))
            self.yearly_plot.addItem(item)
            self.yearly_bars[key] = item
            # Each bar's figure at its end: the tab lists no other per-component yearly figure.
            text = pg.TextItem("", color=colors.TEXT, anchor=(0, 0.5))
            text.setFont(plotstyle.TICK_FONT)
            text.setPos(0, -i)
            self.yearly_plot.addItem(text)
            self.yearly_values[key] = text
        # What the mouse is over: (x from, x to, y, text) in each plot's own units.
        self._spans: dict[str, list[tuple[float, float, float, str]]] = {"capital": [], "yearly": []}
        self._tips = _BarTips(view, self.bar_text_at)
        view.sigDeviceRangeChanged.connect(lambda *_: self._fit_legend())
        view.setMinimumHeight(VIEW_HEIGHT[0])
        view.setMaximumHeight(VIEW_HEIGHT[1])
        self.view = view
        self.plot_page = Placeholder(view)
        self.message_page = self.plot_page
        v.addWidget(self.plot_page)

        figures, self.labels = figures_form(FIGURES)
        self.labels["not_counted"].setText(NOT_COUNTED)
        v.addWidget(figures)
        self.assumptions = AssumptionsForm()
        v.addWidget(self.assumptions.box)
        v.addStretch(1)
        self.page = scrolled_page(content)

    def clear(self) -> None:
        """No result: no figure of an earlier evaluation stays under the plot's message."""
        for key, label in self.labels.items():
            if key != "not_counted":  # what the cost leaves out, not a figure
                label.setText(NOT_COMPUTED)
                label.setStyleSheet("")

    def _fit_legend(self) -> None:
        """Two legend columns where they fit the panel, else one: a legend wider than the panel
        would widen the plots with it and cut their right side off."""
        legend = self.capital_legend_item
        legend.setColumnCount(2)
        layout = self.view.ci
        layout.layout.invalidate()
        if layout.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() > self.view.viewport().width():
            legend.setColumnCount(1)
        layout.setGeometry(self.view.range)
        # One column has more rows: the view grows by them, so the plots keep their height. Not
        # now: this may run inside the view's own resize, which would undo a nested one.
        extra = LEGEND_ROW_HEIGHT * (legend.rowCount - math.ceil(len(legend.items) / 2))
        heights = (VIEW_HEIGHT[1] + extra, VIEW_HEIGHT[1] + extra) if extra else VIEW_HEIGHT
        if (self.view.minimumHeight(), self.view.maximumHeight()) != heights:
            later(lambda: (self.view.setMinimumHeight(heights[0]), self.view.setMaximumHeight(heights[1])), self.view)

    def bar_text_at(self, scene_pos: QPointF) -> str:
        """The bar at a point of the view's scene, named with its figure ("" where no bar is)."""
        for name, plot in (("capital", self.capital_plot), ("yearly", self.yearly_plot)):
            if plot.vb.sceneBoundingRect().contains(scene_pos):
                point = plot.vb.mapSceneToView(scene_pos)
                return next((tip for x0, x1, y, tip in self._spans[name]
                             if x0 <= point.x() <= x1 and abs(point.y() - y) <= 0.35), "")
        return ""

    def plot_items(self) -> dict[str, pg.BarGraphItem]:
        return {**{f"capital {key}": bar for key, bar in self.capital_bars.items()},
                **{f"yearly {key}": bar for key, bar in self.yearly_bars.items()}}

    def show(self, result: Result) -> None:
        cost = result.cost
        self.assumptions.set_setting({key: cost.assumptions[key] for key in DEFAULTS if key in cost.assumptions})
        unpriced = parts_text(result, cost.unpriced_parts) if cost.unpriced_parts else "none"
        self.labels["unpriced_parts"].setText(unpriced if not cost.unpriced_parts
                                              else f"{unpriced} — left out of every figure above")
        self.labels["unpriced_parts"].setStyleSheet(f"color: {colors.WARNING};" if cost.unpriced_parts else "")
        derived = derived_text(result)
        self.labels["derived_parts"].setText(
            f"{derived} — estimated from comparable parts' published figures, not published for these "
            "(docs/costs.md)" if derived else "none")
        self.labels["derived_parts"].setStyleSheet(f"color: {colors.WARNING};" if derived else "")
        self.labels["run_energy_mwh"].setText(f"{cost.run_energy_mwh:,.0f} MWh at the meter"
                                              if cost.run_energy_mwh is not None else NOT_COMPUTED)
        if cost.capital_usd is None:
            self.plot_page.show_message("Nothing in this design has a price in the catalogue.\nUnpriced: " + unpriced)
            for key, _text in FIGURES:
                if key not in ("run_energy_mwh", "unpriced_parts", "derived_parts", "not_counted"):
                    self.labels[key].setText(NOT_COMPUTED)
            return
        self.plot_page.show_content()
        factor, word = _scale(cost.capital_usd)
        x0 = 0.0
        self._spans = {"capital": [], "yearly": []}
        for key, bar in self.capital_bars.items():
            value = cost.capital_by_category_usd.get(key, 0.0)
            width = (value or 0.0) / factor
            bar.setOpts(x0=[x0], width=[width])
            if width:
                self._spans["capital"].append((x0, x0 + width, 0.0, f"{CATEGORIES[key]}: {money(value)}, "
                                               f"{value / cost.capital_usd:.0%} of the capital cost"))
            x0 += width
            # The legend only marks the category: its parts are named in the figures below, and a
            # long list here would widen the plots past the panel and cut them off.
            unpriced = value is None and cost.unpriced_by_category.get(key)
            self.capital_legend[key].setText(f"{CATEGORIES[key]} (unpriced)" if unpriced else CATEGORIES[key])
        self._fit_legend()
        self.capital_plot.setXRange(0, max(x0, 1e-9) * 1.02, padding=0.01)
        plotstyle.label(self.capital_plot, "bottom", "Capital cost", word)
        yearly_factor, yearly_word = _scale(max(cost.yearly_by_category_usd.values(), default=0.0))
        for i, (key, bar) in enumerate(self.yearly_bars.items()):
            value = cost.yearly_by_category_usd.get(key, 0.0)
            width = value / yearly_factor
            bar.setOpts(width=[width])
            self.yearly_values[key].setText(f" {money(value)}" if value else "")
            self.yearly_values[key].setPos(width, -i)
            if value:
                self._spans["yearly"].append((0.0, width, -i, f"{YEARLY[key]}: {money(value)} per year"))
        largest = max(cost.yearly_by_category_usd.values(), default=0.0) / yearly_factor
        # Room at the right for the longest bar's figure.
        self.yearly_plot.setXRange(0, max(largest, 1e-9) * 1.22, padding=0.01)
        plotstyle.label(self.yearly_plot, "bottom", "Cost per year", yearly_word)
        labels = self.labels
        # Categories apart by semicolons: a part's name may hold commas.
        labels["capital_usd"].setText(money(cost.capital_usd) + " (" + "; ".join(
            f"{CATEGORIES[key].lower()} "
            + (money(value) if value is not None else unpriced_text(result, cost.unpriced_by_category.get(key, ())))
            for key, value in cost.capital_by_category_usd.items() if value != 0) + ")")
        labels["facility_usd"].setText(facility_text(result))
        labels["yearly_usd"].setText(f"{money(cost.yearly_usd)} per year")
        labels["yearly_operating_usd"].setText(f"{money(cost.yearly_operating_usd)} per year (electricity"
                                               + (", colocation)" if cost.yearly_by_category_usd.get("colocation")
                                                  else ")"))
        unknown = NOT_COMPUTED + (": an accelerator or server has no price" if cost.unpriced_parts else "")
        labels["per_accelerator_hour_usd"].setText(money(cost.per_accelerator_hour_usd) + " per accelerator-hour in use"
                                                   if cost.per_accelerator_hour_usd is not None else unknown)
        labels["run_usd"].setText(f"{money(cost.run_usd)} for {cost.run_days:,.1f} days"
                                  if cost.run_usd is not None else unknown if cost.per_accelerator_hour_usd is None
                                  else NOT_COMPUTED + ": the training run was not timed")
        labels["per_million_tokens_usd"].setText(money(cost.per_million_tokens_usd)
                                                 if cost.per_million_tokens_usd is not None else NOT_COMPUTED)
