"""The Training tab: the workload form, the step broken into its parts, and the step's figures."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from designer.engine.result import Result
from designer.engine.sections import STEP_PARTS, Plan
from designer.engine.summary import format_value
from designer.style import colors
from designer.ui.results import plotstyle
from designer.ui.results.formatting import (NOT_COMPUTED, count, fits_text, memory_text, overlap_text,
                                           plan_text, si)
from designer.ui.results.figures import figures_form, scrolled_page
from designer.ui.results.placeholder import Placeholder
from designer.ui.results.workload import WorkloadForm

STEP_VIEW_HEIGHT = 240  # px
STEP_LABELS = {part.field: part.label for part in STEP_PARTS}
FIGURES = (("step_time_s", "Step time"), ("mfu", "MFU"), ("tflops_per_gpu", "Model TFLOP/s per GPU"),
           ("tokens_per_s", "Tokens/s"), ("days", "Time to train"), ("memory_per_gpu_gib", "Memory per GPU"),
           ("fits", "Fits in memory"), ("plan", "Plan"), ("exposed", "Exposed per step"),
           ("overlap", "Overlap assumed"), ("memory_model", "Memory model"))


class TrainingTab:
    title = "Training"
    subject = "Training step"

    def __init__(self) -> None:
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 4, 0, 0)
        self.workload_form = WorkloadForm()
        v.addWidget(self.workload_form.box)

        view = plotstyle.plot_view()
        self.step_plot = view.addPlot(row=0, col=0)
        plotstyle.style_plot(self.step_plot, "Training step: compute and exposed parts")
        plotstyle.label(self.step_plot, "bottom", "Time per step", "s", auto_si=True)
        self.step_plot.getAxis("left").setTicks([[(0, "step")]])
        self.step_plot.setYRange(-0.5, 0.5, padding=0)
        self.step_plot.setMouseEnabled(x=False, y=False)
        legend = plotstyle.outside_legend(view, row=1, columns=3)
        self.bars = plotstyle.stacked_bars(self.step_plot, legend, STEP_PARTS, colors.STEP_PART)
        # One bar and its legend: as tall as that needs, so the figures below it stay in view.
        view.setFixedHeight(STEP_VIEW_HEIGHT)
        self.view = view
        self.plot_page = Placeholder(view)
        self.message_page = self.plot_page
        v.addWidget(self.plot_page)

        figures, self.labels = figures_form(FIGURES)
        v.addWidget(figures)
        v.addStretch(1)
        self.page = scrolled_page(page)  # the plan's three wrapped lines need the height

    def plot_items(self) -> dict[str, pg.BarGraphItem]:
        return dict(self.bars)

    def clear(self) -> None:
        """No result: no figure of an earlier evaluation stays under the plot's message."""
        for label in self.labels.values():
            label.setText(NOT_COMPUTED)
            label.setStyleSheet("")

    def show(self, result: Result) -> None:
        t = result.training
        x0 = 0.0
        for key, seconds in t.step_parts():
            width = max(0.0, seconds)
            self.bars[key].setOpts(x0=[x0], width=[width])
            x0 += width
        self.step_plot.setXRange(0, max(x0, 1e-9) * 1.02, padding=0.01)
        if t.fits is False and x0 == 0:
            self.plot_page.show_message("The plan does not fit in memory: not timed.\n" + (t.why or ""))
        else:
            self.plot_page.show_content()
        labels = self.labels
        labels["step_time_s"].setText(si(t.step_time_s, "s") if t.step_time_s is not None else NOT_COMPUTED)
        labels["mfu"].setText(f"{t.mfu:.1%}" if t.mfu is not None else NOT_COMPUTED)
        labels["tflops_per_gpu"].setText(f"{t.tflops_per_gpu:,.0f} TFLOP/s" if t.tflops_per_gpu is not None
                                         else NOT_COMPUTED)
        labels["tokens_per_s"].setText(f"{format_value(float(round(t.tokens_per_s)))} tokens/s"
                                       if t.tokens_per_s is not None else NOT_COMPUTED)
        labels["days"].setText((f"{t.days:,.1f} days" + (f" for {count(t.tokens)} tokens" if t.tokens else ""))
                               if t.days is not None else NOT_COMPUTED)
        labels["memory_per_gpu_gib"].setText(memory_text(t.memory_per_gpu_gib, t.memory_capacity_gib))
        if t.fits is None:
            labels["fits"].setText(NOT_COMPUTED)
            labels["fits"].setStyleSheet("")
        else:
            labels["fits"].setText(fits_text(t))
            labels["fits"].setStyleSheet(f"color: {colors.GOOD if t.fits else colors.ERROR}; font-weight: bold;")
        labels["plan"].setText(plan_text(t.plan))
        self.workload_form.set_accelerators(result.inventory.accelerators)
        if isinstance(t.plan, Plan) and t.plan.auto:
            self.workload_form.show_chosen_plan(t.plan.as_dict())
        exposed = [f"{STEP_LABELS[key]} {si(seconds, 's')}"
                   for key, seconds in t.step_parts() if key != "compute_s" and seconds > 0]
        labels["exposed"].setText(", ".join(exposed) if t.step_time_s is not None and exposed else
                                  "nothing" if t.step_time_s is not None else NOT_COMPUTED)
        labels["overlap"].setText(overlap_text(t.overlap))
        labels["memory_model"].setText(t.memory_model or "accelerator memory (HBM)")
