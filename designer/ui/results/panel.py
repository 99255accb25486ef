"""The results dock: one tab per view of the engine's Result (summary, collectives, utilization,
training, cost, lint).

Plot items are created once, the first time a curve is needed, and updated with
`setData`/`setOpts` on every later result, so live updates never rebuild the plots. Only the
visible tab (and the lint tab, whose title carries the counts) is redrawn when a result arrives;
the others follow one per turn of the event loop, or as soon as they are shown or read."""

from __future__ import annotations

from collections.abc import Mapping

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSize, QSizeF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTabWidget, QVBoxLayout, QWidget

from designer.canvas.export import save_image
from designer.document.turns import later
from designer.engine.result import Result
from designer.style import colors
from designer.ui.results.collectives import CollectivesTab
from designer.ui.results.cost import CostTab
from designer.ui.results.formatting import NOT_COMPUTED, si
from designer.ui.results.goodput import GoodputTab
from designer.ui.results.lint import LintTab
from designer.ui.results.summary import SummaryTab
from designer.ui.results.training import TrainingTab
from designer.ui.results.utilization import UtilizationTab


class ResultsPanel(QWidget):
    """Tabs: Summary, Collectives, Utilization, Training, Cost, Goodput, Lint."""

    workloadChanged = Signal(dict)
    costChanged = Signal(object)  # the design's new `cost` setting (None: the defaults)
    sparesChanged = Signal(int)  # the Goodput tab's hot spare servers
    findingActivated = Signal(str)
    phaseChosen = Signal()  # the user chose another phase in the Utilization tab

    PLOTS = ("collectives", "utilization", "training", "cost")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._result: Result | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        self.state_label = QLabel("No result yet")
        self.state_label.setObjectName("resultsState")
        self.state_label.setStyleSheet(f"color: {colors.DIM_TEXT}; padding: 2px 4px;")
        self.state_label.setWordWrap(True)
        # After a failed evaluation under a plan typed by hand: one click back to a plan that fits.
        self.auto_plan_button = QPushButton("Use Auto Plan")
        self.auto_plan_button.setToolTip("Let the engine choose the fastest plan that fits the design as it is now")
        self.auto_plan_button.hide()
        state_row = QHBoxLayout()
        state_row.setContentsMargins(0, 0, 0, 0)
        state_row.addWidget(self.state_label, 1)
        state_row.addWidget(self.auto_plan_button)
        layout.addLayout(state_row)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        layout.addWidget(self.tabs, 1)

        self.summary = SummaryTab()
        self.collectives = CollectivesTab()
        self.utilization = UtilizationTab()
        self.training = TrainingTab()
        self.cost = CostTab()
        self.lint = LintTab(self.tabs)
        self.goodput = GoodputTab()
        self.sections = {"summary": self.summary, "collectives": self.collectives, "utilization": self.utilization,
                         "training": self.training, "cost": self.cost, "goodput": self.goodput,
                         "lint": self.lint}  # in tab order
        for tab in self.sections.values():
            self.tabs.addTab(tab.page, tab.title)
            tab.message_page.show_message(f"{tab.subject} {NOT_COMPUTED}")
        self.training_page = self.training.page
        self.model_combo = self.training.workload_form.model_combo
        self.training.workload_form.changed.connect(self.workloadChanged)
        self.auto_plan_button.clicked.connect(lambda: self.training.workload_form.auto_plan.setChecked(True))
        self.cost.assumptions.changed.connect(self.costChanged)
        self.goodput.sparesChanged.connect(self.sparesChanged)
        self.lint.findingActivated.connect(self.findingActivated)
        self.utilization.phase_combo.currentIndexChanged.connect(lambda _i: self.phaseChosen.emit())
        self._stale: set[str] = set()
        self.tabs.currentChanged.connect(lambda index: self._refresh(list(self.sections)[index]))

    def sizeHint(self) -> QSize:
        return QSize(560, 720)

    def show_state(self, text: str) -> None:
        """A one-line state above the tabs, e.g. "Evaluating…" or an engine failure."""
        self.state_label.setText(text)

    def show_failure(self, message: str) -> None:
        """An evaluation that failed: no tab keeps a figure of the design as it was before the
        edit; each says, where its figures were, why there are none. Under a plan typed by hand,
        Use Auto Plan offers the way back in one click."""
        self._result = None
        self._stale.clear()
        for tab in self.sections.values():
            tab.message_page.show_message(f"{tab.subject} {NOT_COMPUTED}: the evaluation failed.\n\n{message}")
            if hasattr(tab, "clear"):  # figures beside the message page (Training, Cost)
                tab.clear()
        self.show_state(f"Evaluation failed: {message}")
        self.auto_plan_button.setVisible(not self.training.workload_form.auto_plan.isChecked())

    def show_result(self, result: Result) -> None:
        """Show an engine Result: the visible tab and the lint tab now, the others later."""
        self.auto_plan_button.hide()
        self._result = result
        self._stale = set(self.sections)
        self._refresh(list(self.sections)[self.tabs.currentIndex()])
        self._refresh("lint")
        later(self._refresh_next, self)
        self.show_state(f"Evaluated in {si(result.seconds, 's')}" if result.seconds else "Evaluated")

    def _refresh(self, name: str) -> None:
        if name in self._stale:
            self._stale.discard(name)
            self.sections[name].show(self._result)

    def _refresh_next(self) -> None:
        pending = [name for name in self.sections if name in self._stale]
        if pending:
            self._refresh(pending[0])
            later(self._refresh_next, self)

    def _refresh_all(self) -> None:
        for name in self.sections:
            self._refresh(name)

    def result(self) -> Result | None:
        return self._result

    def overlay_phase(self, result: Result) -> str | None:
        """The phase the canvas overlay shows for `result`: the Utilization tab's choice where the
        result has it, else None (each link at its busiest phase)."""
        return self.utilization.phase_for(result)

    def plot_names(self) -> list[str]:
        return list(self.PLOTS)

    def plot_widget(self, name: str) -> pg.GraphicsView:
        self._refresh_all()
        return {"collectives": self.collectives.view, "utilization": self.utilization.view,
                "training": self.training.view, "cost": self.cost.view}[name]

    def plot_items(self, name: str) -> dict[str, pg.GraphicsObject]:
        """The live plot items of one plot, by key (for tests and overlays)."""
        self._refresh_all()
        return {"collectives": self.collectives, "utilization": self.utilization,
                "training": self.training, "cost": self.cost}[name].plot_items()

    def export_plot_png(self, name: str, path: str, scale: float = 2.0) -> str:
        """Write one plot as a PNG on a white background (2× by default); returns the path. The
        picture has the view's size, or more if its plots and legends need it; a view on a
        hidden tab is laid out for the export first (Qt does that only when it is shown)."""
        view = self.plot_widget(name)
        layout = view.ci
        needed = layout.effectiveSizeHint(Qt.SizeHint.PreferredSize)
        size = QSizeF(max(view.width(), needed.width(), 320.0), max(view.height(), needed.height(), 200.0))
        shown = layout.geometry()
        layout.setGeometry(QRectF(QPointF(0, 0), size))
        layout.layout.activate()
        image = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(scale)
        image.fill(QColor(colors.CANVAS_BACKGROUND))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        view.scene().render(painter, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), size))
        painter.end()
        layout.setGeometry(shown)
        save_image(image, path)
        return str(path)

    def workload(self) -> dict:
        """The workload dict the panel describes (the shape `evaluate(..., workload)` accepts)."""
        return self.training.workload_form.workload()

    def set_workload(self, workload: Mapping | None) -> None:
        """Show a workload without emitting `workloadChanged`."""
        self.training.workload_form.set_workload(workload)

    def set_cost_assumptions(self, setting: Mapping | None) -> None:
        """Show a design's `cost` setting without emitting `costChanged`."""
        self.cost.assumptions.set_setting(setting)

    def summary_table_rows(self) -> list[tuple[str, str, str]]:
        self._refresh_all()
        return self.summary.rows_shown()

    def lint_findings_shown(self) -> list[tuple[str, str, str]]:
        self._refresh_all()
        return self.lint.findings_shown()
