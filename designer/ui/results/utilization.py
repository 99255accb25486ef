"""The Utilization tab: per-link utilization by tier for one communication phase (links sorted,
busiest first, each owning its copies' share of the axis), and the per-GPU time split. Its phase
choice is also the phase the canvas colours its links by."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from designer.engine import views
from designer.engine.result import Result
from designer.engine.sections import STEP_PARTS
from designer.style import colors
from designer.ui.results import plotstyle
from designer.ui.results.placeholder import Placeholder

ALL_PHASES = "all phases (busiest)"
GPU_PARTS = (("compute", "Compute"), ("communication", "Communication"), ("idle", "Idle"))
# The per-GPU bar: each part of the step (the training tab's breakdown), as shares of the step.
GPU_STEP_PARTS = tuple((part.segment, part.label, part.colour) for part in STEP_PARTS)


class UtilizationTab:
    title = "Utilization"
    subject = "Utilization"

    def __init__(self) -> None:
        self._result: Result | None = None
        self.tier_curves: dict[str, pg.PlotDataItem] = {}
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Phase (plot and canvas):"))
        self.phase_combo = QComboBox()
        self.phase_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.phase_combo.setToolTip("The communication phase this plot shows and the canvas colours its links by")
        self.phase_combo.currentIndexChanged.connect(lambda _i: self._draw())
        row.addWidget(self.phase_combo)
        row.addStretch(1)
        v.addLayout(row)

        view = plotstyle.plot_view()
        view.ci.setSpacing(10)
        self.link_plot = view.addPlot(row=0, col=0)
        plotstyle.style_plot(self.link_plot, "Per-link utilization by tier (links sorted, busiest first)")
        plotstyle.label(self.link_plot, "bottom", "Share of the tier's links", "%")
        plotstyle.label(self.link_plot, "left", "Link utilization", "%")
        self.link_plot.setYRange(0, 100, padding=0.02)
        self.link_plot.setXRange(0, 100, padding=0.02)
        self.tier_legend = plotstyle.outside_legend(view, row=1, columns=3)
        self.gpu_plot = view.addPlot(row=2, col=0)
        plotstyle.style_plot(self.gpu_plot, "Per-GPU time over one training step")
        plotstyle.label(self.gpu_plot, "bottom", "Share of the step", "%")
        self.gpu_plot.getAxis("left").setTicks([[(0, "GPU")]])
        self.gpu_plot.setXRange(0, 100, padding=0.01)
        self.gpu_plot.setYRange(-0.5, 0.5, padding=0)
        self.gpu_plot.setMouseEnabled(x=False, y=False)
        gpu_legend = plotstyle.outside_legend(view, row=3, columns=3)
        self.gpu_bars = plotstyle.stacked_bars(self.gpu_plot, gpu_legend, GPU_STEP_PARTS, colors.STEP_PART)
        view.ci.layout.setRowStretchFactor(0, 3)
        view.ci.layout.setRowStretchFactor(2, 1)
        self.view = view
        v.addWidget(view, 1)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setStyleSheet("padding: 2px 6px;")
        v.addWidget(self.info)
        self.page = Placeholder(page)
        self.message_page = self.page

    def plot_items(self) -> dict[str, pg.GraphicsObject]:
        return {**{f"tier:{k}": v for k, v in self.tier_curves.items()},
                **{f"gpu:{k}": v for k, v in self.gpu_bars.items()}}

    def phase_for(self, result: Result) -> str | None:
        """The phase chosen, if `result` has it; None for the busiest of all phases."""
        phase = self.phase_combo.currentText()
        return phase if phase in views.phase_names(result) else None

    def show(self, result: Result) -> None:
        self._result = result
        phases = sorted(set(views.phase_names(result)))
        if not phases and not result.utilization.gpus:
            for item in self.tier_curves.values():
                item.setData([], [])
            for item in self.gpu_bars.values():
                item.setOpts(x0=[0], width=[0])
            self.info.setText("")
            self.page.show_message("Utilization not computed")
            return
        labels = ([ALL_PHASES] if len(phases) > 1 else []) + phases
        current = self.phase_combo.currentText()
        self.phase_combo.blockSignals(True)
        self.phase_combo.clear()
        self.phase_combo.addItems(labels)
        if current in labels:
            self.phase_combo.setCurrentText(current)
        self.phase_combo.blockSignals(False)
        self.phase_combo.setEnabled(len(labels) > 1)
        self.page.show_content()
        self._draw()

    def _tier_curve(self, tier: str) -> pg.PlotDataItem:
        item = self.tier_curves.get(tier)
        if item is None:
            item = pg.PlotDataItem(name=tier, pen=pg.mkPen(colors.tier_color(tier), width=2.5))
            self.link_plot.addItem(item)
            self.tier_legend.addItem(item, tier)
            self.tier_curves[tier] = item
        return item

    def _draw(self) -> None:
        if self._result is None:
            return
        phase = self.phase_combo.currentText()
        loads = views.tier_link_loads(self._result, None if phase in ("", ALL_PHASES) else phase)
        info = []
        top = 0.0
        for tier, links in loads.items():
            u = np.array([link.utilization for link in links], float) * 100.0
            w = np.array([link.copies for link in links], float)
            order = np.argsort(-u, kind="stable")
            u, w = u[order], w[order]
            total = w.sum()
            if total <= 0:
                self._tier_curve(tier).setData([], [])
                continue
            # Step-shaped: each link (times its copies) owns its share of the x axis.
            edges = np.concatenate([[0.0], np.cumsum(w)]) * 100.0 / total
            self._tier_curve(tier).setData(np.repeat(edges, 2)[1:-1], np.repeat(u, 2))
            top = max(top, float(u[0]))
            median = float(u[np.searchsorted(np.cumsum(w), total / 2)])
            info.append(f"<b>{tier}</b>: {total:,.0f} links, max {u[0]:.0f} %, median {median:.0f} %, "
                        f"mean {np.average(u, weights=w):.0f} %")
        for tier, item in self.tier_curves.items():
            if tier not in loads:
                item.setData([], [])
        self.link_plot.setYRange(0, max(100.0, top * 1.05), padding=0.02)
        split = views.gpu_time_split(self._result)
        training = self._result.training
        step = training.step_time_s if split else None
        x0 = 0.0
        for part in STEP_PARTS:
            seconds = getattr(training, part.field) or 0.0
            share = seconds / step * 100.0 if step else 0.0
            self.gpu_bars[part.segment].setOpts(x0=[x0], width=[share])
            x0 += share
        if split:
            info.append("GPU: " + ", ".join(f"{text.lower()} {split[key] * 100.0:.0f} %" for key, text in GPU_PARTS))
        else:
            info.append("Per-GPU breakdown not computed")
        self.info.setText("<br>".join(info))
