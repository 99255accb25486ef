"""The workload form on the Training tab: the model preset, the plan (auto, or every key of the plan
syntax: TP / PP / virtual stages / DP / CP / EP / micro-batch / sequence parallel / recompute / ZeRO
/ attention kernel) and the overlap assumptions, as the workload dict `evaluate(..., workload)`
accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QSpinBox

from designer.engine import workloads
from designer.engine.training import ATTENTION, OVERLAP_CHOICES, OVERLAP_DEFAULTS, PLAN_DEFAULTS, RECOMPUTE

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


class WorkloadForm(QObject):
    changed = Signal(dict)  # the workload, after an edit by the user

    def __init__(self) -> None:
        super().__init__()
        self._updating = False
        self._shown: dict = {}  # the workload last shown: what the form does not edit is kept from it
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

        grid.addWidget(QLabel("Model"), 0, 0)
        grid.addWidget(self.model_combo, 0, 1, 1, 3)
        grid.addWidget(self.auto_plan, 0, 4, 1, 4)
        # Label and field pairs, four to a row: the plan's numbers, then its choices.
        rows = ([(text, self.spins[key]) for key, text, _, _ in _SPINS if key not in ("mb", "cp", "ep")],
                [("Micro-batch", self.mb_spin), ("CP", self.cp_spin), ("EP", self.ep_spin)],
                [("Recompute", self.recompute_combo), ("ZeRO", self.zero_combo), ("Attention", self.attention_combo)])
        for row, pairs in enumerate(rows, start=1):
            for index, (text, widget) in enumerate(pairs):
                grid.addWidget(QLabel(text), row, index * 2, alignment=Qt.AlignmentFlag.AlignRight)
                grid.addWidget(widget, row, index * 2 + 1, 1, 3 if widget is self.attention_combo else 1)
        grid.addWidget(self.sp_check, 2, 6, 1, 2)
        overlap_label = QLabel("Overlap")
        overlap_label.setToolTip("Communication hidden behind compute: an assumption of the step time")
        grid.addWidget(overlap_label, 4, 0, alignment=Qt.AlignmentFlag.AlignRight)
        overlap_row = QHBoxLayout()
        overlap_row.setSpacing(4)
        for index, (part, combo) in enumerate(self.overlap_combos.items()):
            if index:  # a gap before each name, so it reads as the next field's, not the last one's
                overlap_row.addSpacing(OVERLAP_GAP)
            overlap_row.addWidget(QLabel(_OVERLAP_NAMES[part]))
            overlap_row.addWidget(combo, 1)
        grid.addLayout(overlap_row, 4, 1, 1, 7)
        self.box = box
        self.model_combo.currentIndexChanged.connect(self._edited)
        self.auto_plan.toggled.connect(self._edited)
        for spin in self.spins.values():
            spin.valueChanged.connect(self._edited)
        self.sp_check.toggled.connect(self._edited)
        for combo in (self.recompute_combo, self.zero_combo, self.attention_combo, *self.overlap_combos.values()):
            combo.currentIndexChanged.connect(self._edited)
        self._sync_plan_enabled()

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
        finally:
            self._updating = False

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

    def _edited(self, *_: Any) -> None:
        self._sync_plan_enabled()
        if not self._updating:
            self.changed.emit(self.workload())
