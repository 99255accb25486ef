"""The workload form on the Training tab: the model preset, the run's size (training tokens, global
batch, sequence length), the plan (auto, or every key of the plan syntax: TP / PP / virtual stages
/ DP / CP / EP / micro-batch / sequence parallel / recompute / ZeRO / attention kernel) and the
overlap assumptions, as the workload dict `evaluate(..., workload)` accepts.

A manual plan stays consistent with the accelerators: when TP, PP or CP changes, DP follows
(accelerators / (TP·PP·CP)); where that does not divide, the form says so beside the plan and
offers the nearest plan that fits, or Auto, in one click."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QWidget)

from designer.engine import workloads
from designer.engine.evaluate import training_model
from designer.engine.training import ATTENTION, OVERLAP_CHOICES, OVERLAP_DEFAULTS, PLAN_DEFAULTS, RECOMPUTE
from designer.style import colors

# (plan key, label, maximum, tooltip) of the plan's whole-number fields, in the order shown.
_SPINS = (("tp", "TP", 1024, "Tensor-parallel degree"),
          ("pp", "PP", 1024, "Pipeline-parallel stages"),
          ("vp", "VP", 64, "Virtual stages per pipeline rank (interleaved 1F1B; 1 = plain 1F1B)"),
          ("dp", "DP", 1_000_000, "Data-parallel replicas"),
          ("cp", "CP", 1024, "Context-parallel degree (sequence split over GPUs, ring attention)"),
          ("ep", "EP", 100_000, "Expert-parallel degree (mixture-of-experts models; divides DP)"),
          ("mb", "Micro-batch", 1024, "Micro-batch size (sequences)"))
_OVERLAP_NAMES = {"tp": "TP", "dp": "DP", "pp": "PP", "cp": "CP", "ep": "EP"}
OVERLAP_GAP = 10  # px between one overlap field and the next one's name
INLINE_MODEL = "inline model"  # marks the model combo's entry for a design's own (inline) model
PLAN_DEGREES = ("tp", "pp", "cp")  # the degrees whose product with DP is the accelerators used


@dataclass(frozen=True)
class SizeField:
    """One of the run's sizes: the training spec's key, its label and undo step name, how it is
    read (whole number or not), its range (the schema's) and what a value means."""

    key: str
    label: str
    short: str  # the field's name in the form (its column is as narrow as the plan's)
    step: str
    whole: bool
    minimum: float
    maximum: float
    unit: str
    example: str


SIZE_FIELDS = (
    SizeField("tokens", "Tokens", "Tokens", "Change training tokens", False, 1, 1e18, "tokens to train on",
              "300B, 2T or 3e11"),
    SizeField("global_batch", "Global batch", "Batch", "Change global batch", True, 1, 100_000_000,
              "sequences per optimizer step", "1536"),
    SizeField("seq", "Sequence", "Sequence", "Change sequence length", True, 1, 10_000_000,
              "tokens per sequence", "4096"),
)
_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15,
             "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def parse_size(text: str, field: SizeField) -> float:
    """A size as typed ("300B", "2T", "3e11", "1,536"), or a ValueError whose message names the
    field and the problem."""
    cleaned = re.sub(r"[\s,_]", "", text)
    match = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)([kmbgtp]|thousand|million|billion|trillion)?",
                         cleaned, re.IGNORECASE)
    if not match:
        raise ValueError(f"{field.label}: “{text.strip()}” is not a number of {field.unit} (e.g. {field.example})")
    value = float(match.group(1)) * _SUFFIXES.get((match.group(2) or "").lower(), 1.0)
    if field.whole and value != int(value):
        raise ValueError(f"{field.label}: “{text.strip()}” is not a whole number of {field.unit}")
    if not field.minimum <= value <= field.maximum:
        def shown(number: float) -> str:
            return f"{number:,.0f}" if number == int(number) and number < 1e15 else f"{number:.3g}"

        raise ValueError(f"{field.label}: {shown(value)} is out of range: from {shown(field.minimum)} "
                         f"to {shown(field.maximum)} {field.unit}")
    return int(value) if field.whole else value


def size_text(value: float, field: SizeField) -> str:
    """2e12 → "2T", 1536 → "1,536"."""
    if not field.whole:
        for suffix, factor in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
            if value >= factor:
                return f"{value / factor:.4g}{suffix}"
    return f"{value:,.0f}" if field.whole else f"{value:.6g}"


class WorkloadForm(QObject):
    changed = Signal(dict)  # the workload, after an edit by the user

    def __init__(self) -> None:
        super().__init__()
        self._updating = False
        self._shown: dict = {}  # the workload last shown: what the form does not edit is kept from it
        self.accelerators: int | None = None  # the design's, from its last evaluation
        self.edit_name = "Change workload"  # the undo step's name of the last edit emitted
        self._fitting: dict | None = None  # the nearest plan that fits, offered while the plan does not
        self._changed_degree: str | None = None  # the plan degree the user changed last: the one moved
        box = QGroupBox("Workload")
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(10)
        self.model_combo = QComboBox()
        self.model_combo.addItems(list(workloads.PRESETS))
        self.model_combo.setToolTip("LLM preset to train")
        self.auto_plan = QCheckBox("Auto plan (fastest that fits)")
        self.auto_plan.setChecked(True)
        self.spins: dict[str, QSpinBox] = {}
        for key, _, maximum, tip in _SPINS:
            spin = QSpinBox()
            spin.setRange(1, maximum)
            spin.setToolTip(tip)
            spin.setAccelerated(True)
            spin.setValue(PLAN_DEFAULTS.get(key, 1))
            self.spins[key] = spin
        self.tp_spin, self.pp_spin, self.vp_spin, self.dp_spin, self.cp_spin, self.ep_spin, self.mb_spin = (
            self.spins[key] for key, *_ in _SPINS)
        self.tp_spin.setValue(8)
        self.sp_check = QCheckBox("Seq. parallel")
        self.sp_check.setToolTip("Split the activations TP keeps whole (norms, dropout) over the TP group: "
                                 "reduce-scatter and all-gather instead of all-reduce")
        self.sp_check.setChecked(True)
        self.recompute_combo = QComboBox()
        self.recompute_combo.addItems(RECOMPUTE)
        self.recompute_combo.setCurrentText(PLAN_DEFAULTS["recompute"])
        self.zero_combo = QComboBox()
        self.zero_combo.addItems(["0", "1", "2", "3"])
        self.zero_combo.setToolTip("ZeRO / FSDP stage: 0 off, 1 optimizer state, 2 + gradients, 3 + weights split "
                                   "over the data-parallel ranks")
        self.zero_combo.setCurrentIndex(PLAN_DEFAULTS["zero"])
        self.attention_combo = QComboBox()
        self.attention_combo.addItems(ATTENTION)
        self.attention_combo.setToolTip("flash: no s × s score matrix kept; standard: the scores are stored")
        self.overlap_combos: dict[str, QComboBox] = {}
        for part, choices in OVERLAP_CHOICES.items():
            combo = QComboBox()
            combo.addItems(choices)
            combo.setCurrentText(OVERLAP_DEFAULTS[part])
            combo.setToolTip(f"How much {_OVERLAP_NAMES[part]} communication is hidden behind compute "
                             f"(default {OVERLAP_DEFAULTS[part]})")
            self.overlap_combos[part] = combo

        self.size_edits: dict[str, QLineEdit] = {}
        for field in SIZE_FIELDS:
            edit = QLineEdit()
            edit.setToolTip(f"{field.label}: {field.unit} (e.g. {field.example}); Enter to apply")
            edit.setObjectName(f"workload_{field.key}")
            self.size_edits[field.key] = edit
        self.tokens_edit, self.batch_edit, self.seq_edit = (self.size_edits[f.key] for f in SIZE_FIELDS)
        self.size_error = QLabel()  # a value typed that cannot be used: what and where
        self.size_error.setStyleSheet(f"color: {colors.ERROR};")
        self.size_error.setWordWrap(True)
        self.size_error.hide()
        # Beside the plan while it does not fit the accelerators: why, and the ways back.
        self.plan_note = QLabel()
        self.plan_note.setStyleSheet(f"color: {colors.ERROR};")
        self.plan_note.setWordWrap(True)
        self.use_fitting_button = QPushButton()
        self.use_fitting_button.setToolTip("Change the plan to the nearest one that uses every accelerator")
        self.use_fitting_button.clicked.connect(self._use_fitting_plan)
        self.use_auto_button = QPushButton("Auto plan")
        self.use_auto_button.setToolTip("Let the engine choose the fastest plan that fits")
        self.use_auto_button.clicked.connect(lambda: self.auto_plan.setChecked(True))
        self.plan_note_row = QWidget()
        note_row = QHBoxLayout(self.plan_note_row)
        note_row.setContentsMargins(0, 0, 0, 0)
        note_row.addWidget(self.plan_note, 1)
        note_row.addWidget(self.use_fitting_button)
        note_row.addWidget(self.use_auto_button)
        self.plan_note_row.hide()

        grid.addWidget(QLabel("Model"), 0, 0)
        grid.addWidget(self.model_combo, 0, 1, 1, 3)
        grid.addWidget(self.auto_plan, 0, 4, 1, 4)
        # Label and field pairs, four to a row: the run's sizes, the plan's numbers, its choices.
        rows = {1: [(f.short, self.size_edits[f.key]) for f in SIZE_FIELDS],
                2: [(text, self.spins[key]) for key, text, _, _ in _SPINS if key not in ("mb", "cp", "ep")],
                4: [("Micro-batch", self.mb_spin), ("CP", self.cp_spin), ("EP", self.ep_spin)],
                5: [("Recompute", self.recompute_combo), ("ZeRO", self.zero_combo),
                    ("Attention", self.attention_combo)]}
        for row, pairs in rows.items():
            for index, (text, widget) in enumerate(pairs):
                grid.addWidget(QLabel(text), row, index * 2, alignment=Qt.AlignmentFlag.AlignRight)
                grid.addWidget(widget, row, index * 2 + 1, 1, 3 if widget is self.attention_combo else 1)
        grid.addWidget(self.plan_note_row, 3, 0, 1, 8)
        grid.addWidget(self.sp_check, 4, 6, 1, 2)
        grid.addWidget(self.size_error, 7, 0, 1, 8)
        overlap_label = QLabel("Overlap")
        overlap_label.setToolTip("Communication hidden behind compute: an assumption of the step time")
        grid.addWidget(overlap_label, 6, 0, alignment=Qt.AlignmentFlag.AlignRight)
        overlap_row = QHBoxLayout()
        overlap_row.setSpacing(4)
        for index, (part, combo) in enumerate(self.overlap_combos.items()):
            if index:  # a gap before each name, so it reads as the next field's, not the last one's
                overlap_row.addSpacing(OVERLAP_GAP)
            overlap_row.addWidget(QLabel(_OVERLAP_NAMES[part]))
            overlap_row.addWidget(combo, 1)
        grid.addLayout(overlap_row, 6, 1, 1, 7)
        self.box = box
        self.model_combo.currentIndexChanged.connect(self._model_chosen)
        self.auto_plan.toggled.connect(lambda _on: self._edited(step="Change plan"))
        for key, text, *_ in _SPINS:
            spin = self.spins[key]
            # A number typed is one edit, applied on Enter or leaving the field, not one per digit.
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda _value, key=key, text=text: self._plan_number_edited(key, text))
        for field in SIZE_FIELDS:
            self.size_edits[field.key].editingFinished.connect(lambda field=field: self._size_edited(field))
        self.sp_check.toggled.connect(lambda _on: self._edited(step="Change sequence parallelism"))
        for combo, step in ((self.recompute_combo, "Change recompute"), (self.zero_combo, "Change ZeRO stage"),
                            (self.attention_combo, "Change attention kernel"),
                            *((c, "Change overlap") for c in self.overlap_combos.values())):
            combo.currentIndexChanged.connect(lambda _index, step=step: self._edited(step=step))
        self._sync_plan_enabled()
        self._show_sizes()

    def workload(self) -> dict:
        plan: Any
        if self.auto_plan.isChecked():
            plan = "auto"
        else:
            plan = {key: spin.value() for key, spin in self.spins.items()}
            plan.update(sp=int(self.sp_check.isChecked()), recompute=self.recompute_combo.currentText(),
                        zero=self.zero_combo.currentIndex(), attention=self.attention_combo.currentText())
        # What the form does not show (collective settings, batch, sequence, tokens) stays as it was.
        workload = dict(self._shown)
        training: dict[str, Any] = dict(workload.get("training") or {})
        inline = self.model_combo.currentData()
        training.update(model=dict(inline) if isinstance(inline, Mapping) else self.model_combo.currentText(),
                        plan=plan)
        overlap = {part: combo.currentText() for part, combo in self.overlap_combos.items()
                   if combo.currentText() != OVERLAP_DEFAULTS[part]}
        training.pop("overlap", None)
        if overlap:  # only what differs from the defaults is saved
            training["overlap"] = overlap
        workload["training"] = training
        return workload

    def set_workload(self, workload: Mapping | None) -> None:
        """Show a workload (a design's `settings["workload"]`) without emitting `changed`."""
        self._updating = True
        try:
            self._shown = dict(workload or {})
            training = self._shown.get("training") or {}
            model = training.get("model")
            inline = self.model_combo.findData(INLINE_MODEL, Qt.ItemDataRole.UserRole + 1)
            if inline >= 0:
                self.model_combo.removeItem(inline)
            if isinstance(model, Mapping):  # the design's own model: kept until a preset is chosen
                name = model.get("name") or model.get("preset") or "custom"
                self.model_combo.addItem(f"{name} (this design's model)", dict(model))
                self.model_combo.setItemData(self.model_combo.count() - 1, INLINE_MODEL, Qt.ItemDataRole.UserRole + 1)
                self.model_combo.setCurrentIndex(self.model_combo.count() - 1)
            elif isinstance(model, str):
                if self.model_combo.findText(model) < 0:
                    self.model_combo.addItem(model)
                self.model_combo.setCurrentText(model)
            plan = training.get("plan", "auto")
            self.auto_plan.setChecked(plan in (None, "auto"))
            if isinstance(plan, Mapping):
                self._show_plan(plan)
            overlap = {**OVERLAP_DEFAULTS, **(training.get("overlap") or {})}
            for part, combo in self.overlap_combos.items():
                combo.setCurrentText(str(overlap[part]))
            self._sync_plan_enabled()
            self._show_sizes()
            self._check_plan_fits()
        finally:
            self._updating = False

    def set_accelerators(self, accelerators: int) -> None:
        """The design's accelerator count (from its evaluation), which a manual plan must use."""
        if accelerators != self.accelerators:
            self.accelerators = accelerators
            self._check_plan_fits()

    # --- the run's sizes -----------------------------------------------------------------------
    def _training(self) -> dict:
        return dict(self._shown.get("training") or {})

    def _model(self) -> dict | None:
        """The model the workload trains, with its size overrides (None: it cannot be read)."""
        training = self._training()
        inline = self.model_combo.currentData()
        training["model"] = dict(inline) if isinstance(inline, Mapping) else self.model_combo.currentText() or None
        try:
            return training_model(training, self.accelerators or 1)
        except (workloads.WorkloadError, KeyError, TypeError, ValueError):
            return None

    def _show_sizes(self) -> None:
        model = self._model() or {}
        for field in SIZE_FIELDS:
            edit = self.size_edits[field.key]
            value = model.get(field.key)
            edit.setText(size_text(value, field) if value is not None else "")
            edit.setStyleSheet("")
        self.size_error.hide()

    def _size_edited(self, field: SizeField) -> None:
        edit = self.size_edits[field.key]
        try:
            value = parse_size(edit.text(), field)
        except ValueError as exc:
            # The text stays as typed, to be corrected; nothing is saved.
            edit.setStyleSheet(f"color: {colors.ERROR};")
            self.size_error.setText(str(exc))
            self.size_error.show()
            return
        edit.setStyleSheet("")
        self.size_error.hide()
        current = (self._model() or {}).get(field.key)
        edit.setText(size_text(value, field))
        if current is not None and math.isclose(float(current), float(value)):
            return  # Enter on an unchanged field is no edit
        training = self._training()
        training[field.key] = value
        self._shown = {**self._shown, "training": training}
        self._edited(step=field.step)

    def _model_chosen(self, *_: Any) -> None:
        """A preset brings its own batch, sequence and tokens: earlier overrides go with the model."""
        if not self._updating:
            training = self._training()
            for field in SIZE_FIELDS:
                training.pop(field.key, None)
            self._shown = {**self._shown, "training": training}
            self._show_sizes()
        self._edited(step="Change workload")  # the model is what the workload trains

    # --- the plan against the accelerators -------------------------------------------------------
    def _used_accelerators(self) -> int | None:
        return self._training().get("accelerators") or self.accelerators

    def _plan_number_edited(self, key: str, text: str) -> None:
        if self._updating:
            return
        accelerators = self._used_accelerators()
        if key in PLAN_DEGREES and accelerators:
            others = math.prod(self.spins[k].value() for k in PLAN_DEGREES)
            if accelerators % others == 0:
                self._set_quietly(self.dp_spin, accelerators // others)
        if key in PLAN_DEGREES:
            self._changed_degree = key
        self._edited(step=f"Change {text}")

    def _set_quietly(self, spin: QSpinBox, value: int) -> None:
        self._updating = True
        try:
            spin.setValue(value)
        finally:
            self._updating = False

    def _check_plan_fits(self) -> None:
        """Say beside the plan when TP·PP·CP·DP is not the accelerators, with the nearest plan that is."""
        accelerators = self._used_accelerators()
        degrees = {k: self.spins[k].value() for k in (*PLAN_DEGREES, "dp")}
        used = math.prod(degrees.values())
        if self.auto_plan.isChecked() or not accelerators or used == accelerators:
            self._fitting = None
            self.plan_note_row.hide()
            return
        names = " × ".join(f"{k.upper()} {v}" for k, v in degrees.items())
        if accelerators % math.prod(degrees[k] for k in PLAN_DEGREES):
            why = f"does not divide the {accelerators:,} accelerators"
        else:
            why = f"uses {used:,} of the {accelerators:,} accelerators"
        self.plan_note.setText(f"Plan {names} = {used:,} {why}.")
        self._fitting = self._nearest_fitting(accelerators, self._changed_degree)
        if self._fitting is not None:
            self.use_fitting_button.setText("Use " + " · ".join(f"{k.upper()} {self._fitting[k]}"
                                                                for k in (*PLAN_DEGREES, "dp")))
        self.use_fitting_button.setVisible(self._fitting is not None)
        self.plan_note_row.show()

    def _nearest_fitting(self, accelerators: int, changed: str | None) -> dict | None:
        """The plan nearest the one shown whose TP·PP·CP·DP is the accelerators: DP worked out
        where TP·PP·CP divides them, else the degree just changed (or TP) moved to the nearest
        value that divides them and suits the model (heads, layers, sequence)."""
        degrees = {k: self.spins[k].value() for k in PLAN_DEGREES}
        model = self._model() or {}
        limits = {"tp": model.get("heads"), "pp": model.get("layers"), "cp": model.get("seq")}

        def suits(key: str, value: int) -> bool:
            limit = limits[key]
            if key == "pp":
                return limit is None or value <= limit
            return limit is None or limit % value == 0

        moved = changed if changed in PLAN_DEGREES else "tp"
        rest = math.prod(v for k, v in degrees.items() if k != moved)
        if accelerators % math.prod(degrees.values()):
            candidates = [v for v in range(1, accelerators // rest + 1)
                          if (accelerators // rest) % v == 0 and accelerators % rest == 0 and suits(moved, v)]
            if not candidates:
                return None
            degrees[moved] = min(candidates, key=lambda v: (abs(v - degrees[moved]), v))
        fitting = {**degrees, "dp": accelerators // math.prod(degrees.values())}
        batch = model.get("global_batch")
        if batch and fitting["dp"] * self.mb_spin.value() > batch:
            fitting["mb"] = max(1, batch // fitting["dp"])
        return fitting

    def _use_fitting_plan(self) -> None:
        if self._fitting is None:
            return
        self._updating = True
        try:
            for key, value in self._fitting.items():
                self.spins[key].setValue(value)
        finally:
            self._updating = False
        self._check_plan_fits()
        self._edited(step="Use a plan that fits")

    def show_chosen_plan(self, plan: Mapping) -> None:
        """While the plan is auto, the (disabled) plan fields show the plan the engine chose, so
        unticking Auto starts from it; a manual plan is left as the user set it."""
        if not self.auto_plan.isChecked():
            return
        self._updating = True
        try:
            self._show_plan(plan)
        finally:
            self._updating = False

    def _show_plan(self, plan: Mapping) -> None:
        for key, spin in self.spins.items():
            spin.setValue(int(plan.get(key, PLAN_DEFAULTS.get(key, 1))))
        self.sp_check.setChecked(bool(plan.get("sp", PLAN_DEFAULTS["sp"])))
        recompute = str(plan.get("recompute", PLAN_DEFAULTS["recompute"]))
        if recompute in RECOMPUTE:
            self.recompute_combo.setCurrentText(recompute)
        self.zero_combo.setCurrentIndex(int(plan.get("zero", PLAN_DEFAULTS["zero"])))
        attention = str(plan.get("attention", PLAN_DEFAULTS["attention"]))
        if attention in ATTENTION:
            self.attention_combo.setCurrentText(attention)

    def _sync_plan_enabled(self) -> None:
        manual = not self.auto_plan.isChecked()
        for w in (*self.spins.values(), self.sp_check, self.recompute_combo, self.zero_combo, self.attention_combo):
            w.setEnabled(manual)

    def _edited(self, *_: Any, step: str = "Change workload") -> None:
        self._sync_plan_enabled()
        if not self._updating:
            self._check_plan_fits()
            self.edit_name = step
            self.changed.emit(self.workload())
