"""The main window: canvas in the middle, palette and inspector on the left, results on the right.
The editing (document, canvas, undo, clipboard, what-if) is `ui.editor.DesignEditor`'s; the window
keeps files, recent files, exports, recovery, compare and sweep, the docks, title and status.

Data flow (docs/architecture.md): a gesture → an undo command in the Document → `Document.changed` → the scene
updates the affected items, and the evaluation scheduler (debounced, one worker thread) is asked
for a new evaluation of a snapshot → its `finished` result goes to the results panel and the
canvas' link colours; stale results are dropped by the scheduler.
"""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEventLoop, QPoint, QSettings, QSignalBlocker, QSize, QStandardPaths, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QSplitter,
                               QToolBar)

from designer.canvas.export import ExportOptions, PngExport, export_rect, export_vector
from designer.engine.failures import failure_words
from designer.io.autosave import Orphan, find_orphans
from designer.io.examples import example_summaries
from designer.io.files import SUFFIX, load_design, save_design, short_names
from designer.io.outputs import is_example
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design
from designer.model.errors import DesignerError
from designer.paths import examples_dir, icons_dir
from designer.ui.actions import ActionAttribute, ActionSpec, make_actions
from designer.ui.autosave import Autosaver, RecoveryDialog, autosave_folder, describe, interval_ms
from designer.ui.bulk import install_bulk_actions
from designer.ui.dialogs import ExampleGallery, ExportProgress, show_about
from designer.ui.editor import DesignEditor
from designer.ui.export_dialog import ExportOptionsDialog
from designer.ui.errors import report_error
from designer.ui.inspector import Inspector
from designer.ui.palette import Palette
from designer.document.turns import later

MAX_RECENT = 8
FILE_FILTER = "Cluster designs (*.cluster.json);;JSON files (*.json);;All files (*)"
CANVAS_FORMATS = {"png": "PNG images (*.png)", "svg": "SVG drawings (*.svg)", "pdf": "PDF documents (*.pdf)"}


def _app_icon() -> QIcon:
    path = icons_dir() / "cluster-designer.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


@dataclass(frozen=True)
class WindowActions:
    """The window's own actions (`MainWindow.window_actions`), one field per row of its table; the
    editing ones are the editor's (`editor.actions`)."""

    new: QAction
    open: QAction
    open_example: QAction
    new_from_template: QAction
    save: QAction
    save_as: QAction
    keep_backup: QAction
    export_canvas: QAction
    export_canvas_svg: QAction
    export_canvas_pdf: QAction
    export_summary: QAction
    export_bom: QAction
    export_report: QAction
    quit: QAction
    about: QAction
    compare: QAction
    compare_copy: QAction
    sweep: QAction
    design_properties: QAction


class MainWindow(QMainWindow):
    """The application window around a `DesignEditor`: files, recent files, exports, recovery,
    compare and sweep, the docks, the title and the status bar."""

    evaluated = Signal(object)  # the latest result shown
    evaluationFailed = Signal(str)

    # `act_NAME`: each action by its old name (tests, the bulk edits); the records are the home.
    act_new = ActionAttribute("window_actions")
    act_open = ActionAttribute("window_actions")
    act_open_example = ActionAttribute("window_actions")
    act_new_from_template = ActionAttribute("window_actions")
    act_save = ActionAttribute("window_actions")
    act_save_as = ActionAttribute("window_actions")
    act_keep_backup = ActionAttribute("window_actions")
    act_export_canvas = ActionAttribute("window_actions")
    act_export_canvas_svg = ActionAttribute("window_actions")
    act_export_canvas_pdf = ActionAttribute("window_actions")
    act_export_summary = ActionAttribute("window_actions")
    act_export_bom = ActionAttribute("window_actions")
    act_export_report = ActionAttribute("window_actions")
    act_quit = ActionAttribute("window_actions")
    act_about = ActionAttribute("window_actions")
    act_compare = ActionAttribute("window_actions")
    act_compare_copy = ActionAttribute("window_actions")
    act_sweep = ActionAttribute("window_actions")
    act_design_properties = ActionAttribute("window_actions")
    act_undo = ActionAttribute("editor.actions")
    act_redo = ActionAttribute("editor.actions")
    act_cut = ActionAttribute("editor.actions")
    act_copy = ActionAttribute("editor.actions")
    act_paste = ActionAttribute("editor.actions")
    act_duplicate = ActionAttribute("editor.actions")
    act_delete = ActionAttribute("editor.actions")
    act_select_all = ActionAttribute("editor.actions")
    act_group = ActionAttribute("editor.actions")
    act_ungroup = ActionAttribute("editor.actions")
    act_rename = ActionAttribute("editor.actions")
    act_link_tool = ActionAttribute("editor.actions")
    act_zoom_in = ActionAttribute("editor.actions")
    act_zoom_out = ActionAttribute("editor.actions")
    act_zoom_fit = ActionAttribute("editor.actions")
    act_tidy = ActionAttribute("editor.actions")
    act_fail = ActionAttribute("editor.actions")
    act_fail_one = ActionAttribute("editor.actions")
    act_fail_some = ActionAttribute("editor.actions")
    act_restore = ActionAttribute("editor.actions")
    act_restore_all = ActionAttribute("editor.actions")

    def __init__(self, catalog: Catalog | None = None, debounce_ms: int = 250, autosave_interval_ms: int | None = None):
        super().__init__()
        from designer.ui.evaluation import EvaluationScheduler
        from designer.ui.results import ResultsPanel

        self.catalog = catalog or default_catalog()
        self.settings = QSettings("cluster-designer", "Cluster Designer")
        self.editor = DesignEditor(self.catalog, self)
        # The editor's document and canvas, which most of the window reads.
        self.document = self.editor.document
        self.scene = self.editor.scene
        self.view = self.editor.view
        self.setCentralWidget(self.view)
        self.setWindowIcon(_app_icon())
        self.setAcceptDrops(True)
        self.last_result: Any = None
        self.evaluations = 0
        self.canvas_export: PngExport | None = None  # the latest PNG export (it runs over several turns)

        # Docks: palette + inspector on the left, results on the right.
        self.parts_palette = Palette(self.catalog)  # not `palette`: that is QWidget.palette()
        self.inspector = Inspector(self.document)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.parts_palette)
        left.addWidget(self.inspector)
        left.setSizes([430, 470])
        self.left_dock = QDockWidget("Parts && properties", self)
        self.left_dock.setObjectName("partsDock")
        self.left_dock.setWidget(left)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.left_dock)
        self.results = ResultsPanel()
        self.results_dock = QDockWidget("Results", self)
        self.results_dock.setObjectName("resultsDock")
        self.results_dock.setWidget(self.results)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.results_dock)
        self.resizeDocks([self.left_dock, self.results_dock], [280, 580], Qt.Orientation.Horizontal)

        # Status bar: messages on the left, evaluation state on the right.
        self.eval_label = QLabel("Not evaluated")
        self.eval_label.setObjectName("evaluationState")
        self.statusBar().addPermanentWidget(self.eval_label)
        self.export_progress = ExportProgress()
        self.statusBar().addPermanentWidget(self.export_progress)

        # Evaluation: the engine runs on one worker thread (see app.configure_process for the
        # interpreter settings that keep the canvas responsive meanwhile).
        self.scheduler = EvaluationScheduler(catalog=self.catalog, debounce_ms=debounce_ms, parent=self)
        self.scheduler.started.connect(self._on_eval_started)
        self.scheduler.finished.connect(self._on_eval_finished)
        self.scheduler.failed.connect(self._on_eval_failed)

        # Wiring.
        self.document.changed.connect(self._on_document_changed)
        self.document.error.connect(self.show_message)
        self.document.pathChanged.connect(self._update_title)
        self.document.undo_stack.cleanChanged.connect(self._update_title)
        self.scene.selectionChanged.connect(self._on_selection)
        self.view.message.connect(self.show_message)
        self.editor.message.connect(self.show_message)
        self.view.fileDropped.connect(self.open_path_interactive)
        self.results.findingActivated.connect(self.editor.select_finding)
        self.results.workloadChanged.connect(self._on_workload)
        self.results.sparesChanged.connect(
            lambda spares: self.document.set_setting("spares", spares or None, "Change hot spares"))
        self.results.costChanged.connect(self._on_cost_assumptions)
        self.results.phaseChosen.connect(self._on_overlay_phase)
        self.parts_palette.partActivated.connect(self.place_part)

        self._build_actions()
        self._build_failure_views()
        self._build_menus()
        self._update_title()
        self._on_selection()
        self._build_safety(autosave_interval_ms)

    # --- actions -------------------------------------------------------------------------------
    def _action_table(self) -> list[ActionSpec]:
        keys = QKeySequence.StandardKey
        return [
            ActionSpec("new", "&New", self.new_design, keys.New, "Start an empty design"),
            ActionSpec("open", "&Open…", self.open_dialog, keys.Open, "Open a design file"),
            ActionSpec("open_example", "Open &Example…", self.open_example_dialog, None,
                       "Open one of the built-in example clusters"),
            ActionSpec("new_from_template", "New from &Template…", self.new_from_template_dialog, None,
                       "Start a design from a topology template (fat tree, dragonfly, NVL72…) with its parameters"),
            ActionSpec("save", "&Save", self.save, keys.Save, "Save the design"),
            ActionSpec("save_as", "Save &As…", self.save_as, keys.SaveAs, "Save the design under a new name"),
            ActionSpec("keep_backup", "Keep a &Backup When Saving", self._set_keep_backup, None,
                       "Keep the version a save replaces as NAME.cluster.json~", checkable=True),
            ActionSpec("export_canvas", "&PNG Image…", self.export_canvas_png, None,
                       "The canvas as a PNG at full detail (1×, 2× or 4×), with a title and legend if you choose"),
            ActionSpec("export_canvas_svg", "&SVG Drawing…", lambda: self.export_canvas_vector("svg"), None,
                       "The canvas as an SVG vector drawing at full detail, for slides and papers"),
            ActionSpec("export_canvas_pdf", "P&DF Document…", lambda: self.export_canvas_vector("pdf"), None,
                       "The canvas as a one-page vector PDF at full detail, for slides and papers"),
            ActionSpec("export_summary", "Export Summary &CSV…", self.export_summary_csv, None,
                       "Metric, value, unit: the same rows as the summary table"),
            ActionSpec("export_bom", "Export &BOM CSV…", self.export_bom_csv, None, "Bill of materials as CSV"),
            ActionSpec("export_report", "Export &Report…", self.export_report, None,
                       "One HTML page: the summary, the plots, the BOM, lint findings and the engine's assumptions"),
            ActionSpec("quit", "&Quit", self.close, keys.Quit, "Quit Cluster Designer"),
            ActionSpec("about", "&About Cluster Designer", lambda: show_about(self, self.catalog)),
            ActionSpec("compare", "Co&mpare…", self.compare_dialog, None,
                       "This design side by side with design files: every figure, the BOM and the plots"),
            ActionSpec("compare_copy", "Compare with a Co&py", self.compare_with_copy, None,
                       "Open a copy of this design to edit, side by side with it; the comparison follows the edits"),
            ActionSpec("sweep", "S&weep…", self.open_sweep, None,
                       "Evaluate a space of designs (NAME.sweep.json) on Dask and find the best"),
            ActionSpec("design_properties", "&Properties…", self.design_properties,
                       tip="Edit the design's name, description and notes"),
        ]

    def _build_actions(self) -> None:
        self.window_actions = WindowActions(**make_actions(self, self._action_table()))
        self.window_actions.export_canvas.setIconText("Export PNG")
        self.editor.build_actions()

    def _build_menus(self) -> None:
        w, e = self.window_actions, self.editor.actions
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        for action in (w.new, w.new_from_template, w.open, w.open_example):
            file_menu.addAction(action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self._fill_recent_menu()
        file_menu.addSeparator()
        for action in (w.save, w.save_as, w.keep_backup):
            file_menu.addAction(action)
        file_menu.addSeparator()
        canvas_menu = file_menu.addMenu("Export &Canvas")
        for action in (w.export_canvas, w.export_canvas_svg, w.export_canvas_pdf):
            canvas_menu.addAction(action)
        self.plot_menu = file_menu.addMenu("Export P&lot PNG")
        self.plot_actions: dict[str, QAction] = {}
        for name in self.results.plot_names():
            act = QAction(f"{name.capitalize()} plot…", self)
            act.setObjectName(f"export_plot_{name}")
            act.triggered.connect(lambda _c=False, n=name: self.export_plot_png(n))
            self.plot_menu.addAction(act)
            self.plot_actions[name] = act
        for action in (w.export_summary, w.export_bom, w.export_report):
            file_menu.addAction(action)
        file_menu.addSeparator()
        for action in (w.compare, w.compare_copy, w.sweep):
            file_menu.addAction(action)
        self.side_windows: list = []  # compare and sweep windows and the designs they open
        file_menu.addSeparator()
        file_menu.addAction(w.quit)

        edit = bar.addMenu("&Edit")
        for group in ((e.undo, e.redo), (e.cut, e.copy, e.paste, e.duplicate, e.delete),
                      (e.select_all, e.group, e.ungroup, e.rename, e.link_tool), (e.tidy,)):
            for action in group:
                edit.addAction(action)
            edit.addSeparator()
        install_bulk_actions(self, edit)

        view = bar.addMenu("&View")
        for action in (e.zoom_in, e.zoom_out, e.zoom_fit):
            view.addAction(action)
        view.addSeparator()
        view.addAction(self.left_dock.toggleViewAction())
        view.addAction(self.results_dock.toggleViewAction())
        view.addAction(self._build_elevation_dock().toggleViewAction())

        self._build_design_menu(bar)

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(w.about)

        tools = QToolBar("Main")
        tools.setObjectName("mainToolbar")
        tools.setIconSize(QSize(18, 18))
        tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for tool in (w.new, w.open, w.open_example, w.save, None, e.undo, e.redo, None, e.delete, e.duplicate,
                     e.group, e.link_tool, None, e.zoom_fit, e.tidy, None, w.export_canvas, w.export_summary,
                     w.export_bom):
            if tool is None:
                tools.addSeparator()
            else:
                tools.addAction(tool)
        tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(tools)
        self.toolbar = tools

    # --- design settings: in-network reduction ---------------------------------------------------
    def _build_design_menu(self, bar) -> None:
        """Design ▸ In-Network Reduction: whether collectives may reduce inside the switches, NVLink
        SHARP (NVLS) on the scale-up switches and InfiniBand SHARP on the scale-out ones. A design
        setting (saved, one undo step); it takes effect only where the switch parts support it."""
        design_menu = bar.addMenu("&Design")
        design_menu.addAction(self.window_actions.design_properties)
        design_menu.addSeparator()
        self._build_what_if_menu(design_menu)
        menu = design_menu.addMenu("&In-Network Reduction")
        self.in_network_actions: dict[str, QAction] = {}
        for kind, text, tip in (
                ("nvls", "&NVLink SHARP (NVLS)", "Let collectives reduce in NVLink switches that support NVLS"),
                ("sharp", "&InfiniBand SHARP", "Let collectives reduce in scale-out switches that support SHARP")):
            act = QAction(text, self)
            act.setObjectName(f"in_network_{kind}")
            act.setCheckable(True)
            act.setStatusTip(tip)
            act.setToolTip(tip)
            act.triggered.connect(lambda on, k=kind: self._set_in_network_reduction(k, on))
            menu.addAction(act)
            self.in_network_actions[kind] = act
        self._show_in_network_reduction()

    def _in_network_reduction(self) -> dict:
        return dict(self.document.design.settings.get("in_network_reduction") or {})

    def _show_in_network_reduction(self) -> None:
        allowed = self._in_network_reduction()
        for kind, act in self.in_network_actions.items():
            with QSignalBlocker(act):
                act.setChecked(allowed.get(kind, True) is not False)

    def _set_in_network_reduction(self, kind: str, on: bool) -> None:
        allowed = self._in_network_reduction()
        allowed[kind] = on
        # Both allowed is the default: leave no setting behind, so the file stays as it was.
        value = None if all(allowed.get(k, True) for k in self.in_network_actions) else allowed
        name = {"nvls": "NVLink SHARP", "sharp": "InfiniBand SHARP"}[kind]
        if not self.document.set_setting("in_network_reduction", value, f"Turn {name} {'on' if on else 'off'}"):
            self._show_in_network_reduction()

    # --- title, status ---------------------------------------------------------------------------
    def _update_title(self, *_args) -> None:
        if self._opening is not None:
            return  # the title switches with the canvas, once the design being opened is on it
        name = self.document.display_name
        if self.document.path and is_example(self.document.path):
            name += " (example)"  # read-only: Save asks for a file of the user's own
        # The file first (which one is open), then the design's own name when it has another.
        title = self.document.title
        named = f" — {title}" if title != self.document.display_name else ""
        self.setWindowTitle(f"{name}[*]{named} — Cluster Designer")
        self.setWindowModified(self.document.is_modified())

    def show_message(self, text: str, timeout_ms: int = 8000) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    # --- selection, failure what-if ---------------------------------------------------------------
    def _on_selection(self) -> None:
        items, links = self.editor.selection()
        self.inspector.show_selection(items, links)
        self.elevation.follow(items)

    def _build_failure_views(self) -> None:
        """The what-if's views in the docks: the inspector takes the blast radius from the scene's
        cache; the Goodput tab names the marks in words."""
        self.inspector.blast_source = self.scene.blast_radius
        self.scene.blastReady.connect(self.inspector.refresh)
        self.results.goodput.describe_failure = lambda text: failure_words(self.document.design, self.catalog, text)

    def _build_what_if_menu(self, design_menu) -> None:
        """Design ▸ Failure What-If: the right-click menu's failure actions where a user looks for
        them in the menu bar, and Restore All, which clears every mark at once."""
        e = self.editor.actions
        menu = design_menu.addMenu("Failure &What-If")
        for action in e.what_if():
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(e.restore_all)
        design_menu.addSeparator()

    def place_part(self, part_id: str) -> list[str]:
        """The palette's part placed in the middle of the visible canvas (`DesignEditor.place_part`)."""
        return self.editor.place_part(part_id)

    # --- evaluation ----------------------------------------------------------------------------------
    def _on_document_changed(self, change) -> None:
        if "name" in change.settings_changed:
            self._update_title()
        if change.reset or "workload" in change.settings_changed:
            self.results.set_workload(self.workload)
        if change.reset or "cost" in change.settings_changed:
            self.results.set_cost_assumptions(self.document.design.settings.get("cost"))
        if change.reset or "in_network_reduction" in change.settings_changed:
            self._show_in_network_reduction()
        if change.reset:
            later(self._freeze_long_lived_objects, self)
        if self.scene.building:
            # The engine thread holds the GIL in turns with this one, and every item the scene
            # takes in calls back through Python: evaluate once the canvas is complete.
            self.scene.built.connect(self._request_evaluation, Qt.ConnectionType.SingleShotConnection)
        else:
            self._request_evaluation()

    @property
    def workload(self) -> dict | None:
        """The workload saved with the design (None: the engine's defaults)."""
        workload = self.document.design.settings.get("workload")
        return workload if isinstance(workload, dict) else None

    def _request_evaluation(self) -> None:
        self.scheduler.request(self.document.design.snapshot(), self.workload)

    @staticmethod
    def _freeze_long_lived_objects() -> None:
        # Freezing moves everything alive now out of the collector's sight, so the periodic full
        # collections stay short however big the design; a full unfreeze-and-collect here would
        # itself stall the window for tens of milliseconds. The old design's objects are freed by
        # reference counting as usual; only reference cycles among them wait in the frozen set.
        gc.freeze()

    def _on_workload(self, workload: dict) -> None:
        # The step says which field changed ("Change global batch", "Change TP").
        self.document.set_setting("workload", workload, self.results.training.workload_form.edit_name)

    def _on_cost_assumptions(self, setting: dict | None) -> None:
        self.document.set_setting("cost", setting, "Change cost assumptions")

    def _on_eval_started(self, generation: int) -> None:
        self.eval_label.setText(self._eval_text("Evaluating…"))
        self.results.show_state("Evaluating…")

    def _eval_text(self, state: str) -> str:
        last = self.scheduler.last_duration_s
        return state if last is None else f"{state}  (last evaluation {last * 1000:,.0f} ms)"

    def _on_eval_finished(self, generation: int, result) -> None:
        self.last_result = result
        self.evaluations += 1
        if self.workload is None and result.training.model:
            # No workload saved: show the model the engine chose for this design.
            self.results.set_workload({"training": {"model": result.training.model, "plan": "auto"}})
        self.results.show_result(result)
        # The canvas overlay in its own event-loop turn, so input and timers run in between.
        later(lambda r=result: self._apply_overlay(r), self)
        errors = sum(1 for f in result.lint if f.severity == "error")
        state = f"Evaluated in {self.scheduler.last_duration_s * 1000:,.0f} ms"
        if errors:
            state += f" · {errors} lint error{'s' if errors != 1 else ''}"
        self.eval_label.setText(state)
        self.evaluated.emit(result)

    def _apply_overlay(self, result) -> None:
        if result is self.last_result:
            self.scene.apply_result(result, self.results.overlay_phase(result))
            self.view.update_legend()

    def _on_overlay_phase(self) -> None:
        if self.last_result is not None:
            self._apply_overlay(self.last_result)

    def _on_eval_failed(self, generation: int, message: str) -> None:
        # Nothing of the design as it was before the edit stays on show: not its figures, not its
        # link colours, not as what an export would write.
        self.last_result = None
        self.scene.clear_result()
        self.view.update_legend()
        self.eval_label.setText("Evaluation failed")
        self.results.show_failure(message)
        self.show_message(f"Evaluation failed: {message}", 0)
        self.evaluationFailed.emit(message)

    # --- files ------------------------------------------------------------------------------------------
    def maybe_save(self) -> bool:
        """True if it is fine to drop the current design (saved, discarded, or unchanged)."""
        if not self.document.is_modified():
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes", f"Save the changes to “{self.document.display_name}” before closing it?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_design(self) -> None:
        if self.maybe_save():
            self.document.reset(Design(name="Untitled"), None)
            self.results.set_workload(None)

    def new_from_template_dialog(self) -> None:
        """File ▸ New from Template: the design the dialog builds opens here as a new untitled document."""
        from designer.ui.templates import TemplateDialog

        if not self.maybe_save():
            return
        dialog = TemplateDialog(self.catalog, self)
        if dialog.exec() and dialog.design is not None:
            self.document.reset(dialog.design, None)
            self.results.set_workload(self.workload)
            self.fit_when_built()
            self.show_message(f"New design from the {dialog.template} template")

    _opening: str | None = None  # the file being opened: the title waits until its canvas is built

    def open_path(self, path: str | os.PathLike) -> bool:
        """Load a design; on failure show the loader's message and keep the open design. While it
        loads and its canvas is built, the status bar says so under a busy cursor; the title and
        the canvas then switch to it together (not the title first over the old design)."""
        name = Path(path).name.removesuffix(".cluster.json")
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # until the canvas shows it
        self.statusBar().showMessage(f"Opening {name}…")
        try:
            design = self._load_while_painting(path)
        except (DesignerError, OSError, ValueError) as exc:
            QApplication.restoreOverrideCursor()
            self.statusBar().clearMessage()
            self._forget_missing_recent()
            QMessageBox.warning(self, "Cannot open design", str(exc))
            return False
        self._opening = str(path)
        self.document.reset(design, path)
        self.results.set_workload(self.workload)
        self._add_recent(str(path))
        self.fit_when_built()
        if self.scene.building:
            self.scene.built.connect(lambda: self._opened(str(path)), Qt.ConnectionType.SingleShotConnection)
        else:
            self._opened(str(path))
        return True

    def _opened(self, path: str) -> None:
        QApplication.restoreOverrideCursor()
        if self._opening == path:  # not overtaken by a later open
            self._opening = None
            self._update_title()
        self.show_message(f"Opened {path}")

    def _load_while_painting(self, path: str | os.PathLike):
        """Read and check a design file on a helper thread; meanwhile the window keeps painting
        and its timers run (user input waits, so nothing can change under the load)."""
        outcome: dict = {}

        def load() -> None:
            try:
                outcome["design"] = load_design(path, self.catalog)
            except BaseException as exc:  # noqa: BLE001 - handed over to this thread, raised below
                outcome["error"] = exc

        worker = threading.Thread(target=load, name="open-design", daemon=True)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            worker.start()
            while worker.is_alive():
                QApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 5)
                worker.join(0.002)
        finally:
            QApplication.restoreOverrideCursor()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["design"]

    def fit_when_built(self) -> None:
        """Zoom to fit now, and again once a design being built in slices is complete."""
        self.view.zoom_to_fit()
        if self.scene.building:
            def fit() -> None:
                self.scene.built.disconnect(fit)
                self.view.zoom_to_fit()

            self.scene.built.connect(fit)

    def open_path_interactive(self, path: str) -> bool:
        if not self.maybe_save():
            return False
        return self.open_path(path)

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open design", self._last_dir(), FILE_FILTER)
        if path:
            self.open_path_interactive(path)

    def open_example_dialog(self) -> None:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            rows = example_summaries(self.catalog)
        finally:
            QApplication.restoreOverrideCursor()
        dialog = ExampleGallery(rows, self)
        if dialog.exec() and dialog.chosen:
            self.open_path_interactive(dialog.chosen)

    def save(self) -> bool:
        path = self.document.path
        # A restored design's recorded path is only a suggestion unless the file there is the one it was made from.
        if not path or not path.endswith(".json") or is_example(path) or path == self.autosaver.path_to_confirm:
            return self.save_as()
        return self.save_to(path)

    def save_as(self) -> bool:
        """Ask where to save; an opened example is offered under its own name in the user's folder."""
        path = self.document.path
        if path and not is_example(path):
            suggested = path
        else:
            name = Path(path).name if path else f"{_slug(self.document.design.name)}{SUFFIX}"
            suggested = str(Path(self._last_dir()) / name)
        path, _ = QFileDialog.getSaveFileName(self, "Save design as", suggested, FILE_FILTER)
        if not path:
            return False
        if not path.endswith(".json"):
            path += SUFFIX
        return self.save_to(path)

    def save_to(self, path: str) -> bool:
        if not self._writable(path, "Cannot save design"):
            return False
        try:
            save_design(self.document.design, path, backup=self.keep_backup)
        except (DesignerError, OSError) as exc:
            QMessageBox.warning(self, "Cannot save design", str(exc))
            return False
        self.document.set_path(path)
        self.document.undo_stack.setClean()
        self._add_recent(path)
        self.show_message(f"Saved {path}")
        return True

    def _writable(self, path: str, title: str) -> bool:
        """False, with a message, for a path in the installed examples folder: the shipped
        examples stay as they are."""
        if not is_example(path):
            return True
        QMessageBox.warning(self, title, f"{path} is in the built-in examples folder ({examples_dir()}), which is "
                                         "read-only. Choose a folder of your own.")
        return False

    def _last_dir(self) -> str:
        """The open design's folder, else that of the latest recent file outside the examples,
        else the user's documents folder."""
        for path in (self.document.path, *self.recent_files()):
            if path and not is_example(path) and Path(path).parent.is_dir():
                return str(Path(path).parent)
        documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
        return documents if documents and Path(documents).is_dir() else str(Path.home())

    def recent_files(self) -> list[str]:
        value = self.settings.value("recentFiles", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in (value or []) if v]

    def _add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        files = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recentFiles", files[:MAX_RECENT])
        self._fill_recent_menu()

    def _forget_missing_recent(self) -> list[str]:
        """Drop recent files that no longer exist from the list; returns those left."""
        files = self.recent_files()
        present = [p for p in files if Path(p).is_file()]
        if present != files:
            self.settings.setValue("recentFiles", present)
        return present

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self._forget_missing_recent()
        for path, name in zip(files, short_names(files)):  # folders shown where two files share a name
            act = self.recent_menu.addAction(name)
            act.setToolTip(path)
            act.setStatusTip(path)
            act.triggered.connect(lambda _c=False, p=path: self.open_path_interactive(p))
        if not files:
            empty = self.recent_menu.addAction("No recent files")
            empty.setEnabled(False)

    # --- exports ---------------------------------------------------------------------------------------
    def _save_path(self, title: str, default_name: str, filter_: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, title, str(Path(self._last_dir()) / default_name), filter_)
        return path or None

    def _ask_export_options(self, kind: str) -> ExportOptions | None:
        """The canvas export's options dialog (title, legend, selection only, scale); None: cancelled."""
        return ExportOptionsDialog.ask(self, kind, self.document.title,
                                       bool(self.scene.selectedItems()), export_rect(self.scene).size())

    def export_canvas_png(self, path: str | None = None, options: ExportOptions | None = None) -> PngExport | None:
        """Start exporting the canvas as a PNG at full detail (white background), drawn over several
        turns of the event loop with its progress and a Cancel button in the status bar. Asked
        from the menu (no path), the options dialog comes first; given a path and no options, the
        plain picture at 2×. Returns the export under way: its `finished`, `failed` or `cancelled`
        signal tells how it ended."""
        if self.canvas_export is not None and not self.canvas_export.done:
            self.show_message("An export of the canvas is already under way")
            return None
        if path is None and options is None:
            options = self._ask_export_options("png")
            if options is None:
                return None
        path = path or self._save_path("Export canvas as PNG", f"{_slug(self.document.display_name)}.png",
                                       CANVAS_FORMATS["png"])
        if not path or not self._writable(path, "Cannot export"):
            return None
        export = PngExport(self.scene, path, 2.0, self, options=options)
        progress = self.export_progress
        progress.cancelled.connect(export.cancel)
        export.progress.connect(progress.show_progress)

        def ended(text: str, error: str | None = None) -> None:
            progress.cancelled.disconnect(export.cancel)
            progress.hide()
            self.show_message(text)
            if error:
                QMessageBox.warning(self, "Cannot export", error)

        export.finished.connect(lambda written: ended(f"Wrote {written}"))
        export.cancelled.connect(lambda: ended("Export cancelled: nothing was written"))
        export.failed.connect(lambda error: ended(f"Export failed: {error}", error))
        self.canvas_export = export
        progress.begin(f"Exporting {Path(path).name}")
        export.start()
        return export

    def export_canvas_vector(self, kind: str, path: str | None = None,
                             options: ExportOptions | None = None) -> str | None:
        """The canvas as an SVG or PDF drawing (`kind`), vector, for slides and papers, at full
        detail; from the menu (no path) with the options dialog first."""
        if path is None and options is None:
            options = self._ask_export_options(kind)
            if options is None:
                return None
        path = path or self._save_path(f"Export canvas as {kind.upper()}",
                                       f"{_slug(self.document.display_name)}.{kind}", CANVAS_FORMATS[kind])
        if not path or not self._writable(path, "Cannot export"):
            return None
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            export_vector(self.scene, path, kind, self.document.title, options)
        except OSError as exc:
            QMessageBox.warning(self, "Cannot export", str(exc))
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.show_message(f"Wrote {path}")
        return path

    def export_plot_png(self, name: str, path: str | None = None) -> str | None:
        path = path or self._save_path(f"Export {name} plot as PNG", f"{_slug(self.document.display_name)}-{name}.png",
                                       "PNG images (*.png)")
        if not path or not self._writable(path, "Cannot export"):
            return None
        try:
            self.results.export_plot_png(name, path)
        except OSError as exc:
            QMessageBox.warning(self, "Cannot export", str(exc))
            return None
        self.show_message(f"Wrote {path}")
        return path

    def _export_text(self, kind: str, path: str | None) -> str | None:
        from designer.io.exports import bom_csv, summary_csv, write_export

        if self.last_result is None:
            self.show_message("Nothing to export yet: the design has not been evaluated")
            return None
        suffix = "summary" if kind == "summary" else "bom"
        path = path or self._save_path(f"Export {suffix} CSV", f"{_slug(self.document.display_name)}-{suffix}.csv",
                                       "CSV files (*.csv)")
        if not path or not self._writable(path, "Cannot export"):
            return None
        text = (summary_csv(self.last_result, self.results.goodput.describe_failure) if kind == "summary"
                else bom_csv(self.last_result))
        try:
            write_export(path, text)
        except DesignerError as exc:
            QMessageBox.warning(self, "Cannot export", str(exc))
            return None
        self.show_message(f"Wrote {path}")
        return path

    def export_summary_csv(self, path: str | None = None) -> str | None:
        return self._export_text("summary", path)

    def export_bom_csv(self, path: str | None = None) -> str | None:
        return self._export_text("bom", path)

    def export_report(self, path: str | None = None) -> str | None:
        """File ▸ Export Report…: one self-contained HTML page of the evaluated design."""
        from designer.ui.report import export_report

        return export_report(self, f"{_slug(self.document.display_name)}-report.html", path)

    # --- autosave, recovery, backups, errors -------------------------------------------------------------
    def _build_safety(self, autosave_interval_ms: int | None) -> None:
        interval = interval_ms(self.settings) if autosave_interval_ms is None else autosave_interval_ms
        self.autosaver = Autosaver(self.document, autosave_folder(), interval, self)
        self.autosaver.failed.connect(self.show_message)
        self.scheduler.crashed.connect(lambda summary, details: report_error(summary, details, self))
        with QSignalBlocker(self.window_actions.keep_backup):
            self.window_actions.keep_backup.setChecked(self.keep_backup)
        self.recovered_windows: list[MainWindow] = []

    @property
    def keep_backup(self) -> bool:
        """Whether a save keeps the version it replaces as NAME.cluster.json~ (a preference, on by default)."""
        return self.settings.value("saving/keepBackup", True, type=bool)

    def _set_keep_backup(self, on: bool) -> None:
        self.settings.setValue("saving/keepBackup", bool(on))

    def offer_recovery(self, use_this_window: bool = True) -> list[MainWindow]:
        """Offer the autosaves of runs that ended without closing them (a crash, kill -9, a power
        cut). Each one restored opens as an unsaved design: in this window first, if
        `use_this_window` and it holds nothing of the user's, else in a new window (returned)."""
        found = find_orphans(self.autosaver.slot.folder, self.catalog)
        if not found.orphans:
            if found.unreadable:
                more = len(found.unreadable) - 1
                self.show_message(f"{found.unreadable[0]}" + (f" (and {more} more)" if more else ""), 0)
            return []
        dialog = RecoveryDialog(found.orphans, self, found.unreadable)
        dialog.exec()
        for orphan in dialog.discarded:
            orphan.slot.discard()
        for orphan in dialog.later:
            orphan.slot.release()
        opened: list[MainWindow] = []
        for orphan in dialog.restored:
            if use_this_window and not self.document.path and not self.document.is_modified():
                target = self
                use_this_window = False
            else:
                target = MainWindow(self.catalog, self.scheduler.debounce_ms, self.autosaver.interval)
                target.resize(self.size())
                target.show()
                opened.append(target)
            target.restore_autosave(orphan)
        self.recovered_windows.extend(opened)
        return opened

    def restore_autosave(self, orphan: Orphan) -> bool:
        """Open an autosave as an unsaved design with its original path. Save writes there only if
        the file there is still the one the autosave was made from; else it asks where, suggesting
        that path. The autosave stays until the design is saved or closed."""
        try:
            design = orphan.design(self.catalog)
        except DesignerError as exc:
            orphan.slot.release()
            QMessageBox.warning(self, "Cannot restore design", str(exc))
            return False
        self.document.reset(design, orphan.record.original)
        self.document.undo_stack.resetClean()
        self.results.set_workload(self.workload)
        unchanged = self.autosaver.adopt(orphan)
        self.fit_when_built()
        what, when = describe(orphan.record)
        ask = "" if unchanged or not orphan.record.original else (
            f"; {Path(orphan.record.original).name} is not the file it was made from (or changed since), "
            "so Save asks where")
        self.show_message(f"Restored {what}, autosaved {when}; not saved yet{ask}")
        return True

    # --- window events --------------------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if any(u.toLocalFile().endswith(".json") for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.toLocalFile().endswith(".json")]
        if files:
            event.acceptProposedAction()
            QTimer.singleShot(0, lambda: self.open_path_interactive(files[0]))

    def place_on_screen(self, width: int = 1600, height: int = 1000) -> None:
        """The window as the user last left it (size, position, docks and toolbar), else
        `width` × `height` cut to nine tenths of the screen it opens on, centred: on a 1280×800
        laptop the results' values, the status bar and the close button stay in view."""
        geometry = self.settings.value("window/geometry")
        if geometry is not None and self.restoreGeometry(geometry):
            state = self.settings.value("window/state")
            if state is not None:
                self.restoreState(state)
            if self._on_a_screen():
                return
        screen = (self.screen() or QApplication.primaryScreen()).availableGeometry()
        size = QSize(min(width, int(screen.width() * 0.9)), min(height, int(screen.height() * 0.9)))
        self.resize(size)
        self.move(screen.center() - QPoint(size.width() // 2, size.height() // 2))

    def _on_a_screen(self) -> bool:
        """Whether the restored window's title bar lies on a screen now (a monitor may be gone)."""
        title = self.frameGeometry().topLeft() + QPoint(self.frameGeometry().width() // 2, 10)
        return any(screen.availableGeometry().contains(title) for screen in QApplication.screens())

    def closeEvent(self, event) -> None:
        if self.maybe_save():
            self.settings.setValue("window/geometry", self.saveGeometry())
            self.settings.setValue("window/state", self.saveState())
            self.autosaver.close()
            self.scheduler.shutdown(timeout_s=5)
            event.accept()
        else:
            event.ignore()


    # --- deciding between designs (compare, sweep), design properties, rack elevation -----------
    def design_properties(self):
        """Design ▸ Properties…: a window-modal dialog (`properties_dialog`) that applies on OK."""
        from designer.ui.properties import PropertiesDialog

        if getattr(self, "properties_dialog", None) is not None:
            self.properties_dialog.deleteLater()
        self.properties_dialog = PropertiesDialog(self.document, self)
        self.properties_dialog.open()
        return self.properties_dialog

    def _build_elevation_dock(self) -> QDockWidget:
        """View ▸ Rack Elevation: a dock with the selected rack's front view (closed at first)."""
        from designer.ui.elevation import RackElevationPanel

        self.elevation = RackElevationPanel(self.document)
        self.elevation_dock = QDockWidget("Rack Elevation", self)
        self.elevation_dock.setObjectName("elevationDock")
        self.elevation_dock.setWidget(self.elevation)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.elevation_dock)
        # A rack is tall: it shares the results' full height, as a tab, brought up when opened.
        self.tabifyDockWidget(self.results_dock, self.elevation_dock)
        self.elevation_dock.hide()
        act = self.elevation_dock.toggleViewAction()
        act.triggered.connect(lambda shown: shown and self.elevation_dock.raise_())
        act.setText("Rack &Elevation")
        act.setObjectName("rack_elevation")
        act.setStatusTip("Show the selected rack's front view: U by U, its power against its budget")
        return self.elevation_dock

    def compare_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Compare with", self._last_dir(), FILE_FILTER)
        if paths:
            self.compare_with(paths)

    def compare_with(self, paths: list[str] = (), windows: list | None = None):
        from designer.ui.compare import CompareWindow

        window = CompareWindow([self, *(windows or [])], list(paths))
        self.side_windows.append(window)
        window.show()
        return window

    def open_design_window(self, design: Design, message: str = "") -> MainWindow:
        """Another main window on an unsaved design (a copy to edit, a sweep's point)."""
        window = MainWindow(self.catalog, self.scheduler.debounce_ms, self.autosaver.interval)
        window.resize(self.size())
        window.document.reset(design, None)
        window.results.set_workload(window.workload)
        window.show()
        window.fit_when_built()
        if message:
            window.show_message(message)
        self.side_windows.append(window)
        return window

    def compare_with_copy(self):
        """One action for the common case: a copy of this design opens to be edited, and a Compare
        window shows this design against it, following the copy's edits."""
        design = self.document.design.snapshot()
        design.name = f"{self.document.title} (copy)"
        copy = self.open_design_window(design, "A copy to edit: the Compare window follows its changes")
        return copy, self.compare_with(windows=[copy])

    def open_sweep(self):
        from designer.ui.sweep import SweepWindow

        window = SweepWindow(self)
        self.side_windows.append(window)
        window.show()
        return window


def _slug(name: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "-" for c in name).strip("-")
    while "--" in out:
        out = out.replace("--", "-")
    return out or "design"
