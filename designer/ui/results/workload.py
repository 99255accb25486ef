"""The workload form on the Training tab: the model preset and the plan (auto, or TP / PP / DP /
micro-batch / recompute / ZeRO), as the workload dict `evaluate(..., workload)` accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QGroupBox, QLabel, QSpinBox

from designer.engine import workloads
from designer.engine.training import RECOMPUTE


class WorkloadForm(QObject):
    changed = Signal(dict)  # the workload, after an edit by the user

    def __init__(self) -> None:
        super().__init__()
        self._updating = False
        box = QGroupBox("Workload")
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(10)
        self.model_combo = QComboBox()
        self.model_combo.addItems(list(workloads.PRESETS))
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
        self.box = box
        self.model_combo.currentIndexChanged.connect(self._edited)
        self.auto_plan.toggled.connect(self._edited)
        for spin in (self.tp_spin, self.pp_spin, self.dp_spin, self.mb_spin):
            spin.valueChanged.connect(self._edited)
        self.recompute_combo.currentIndexChanged.connect(self._edited)
        self.zero_combo.currentIndexChanged.connect(self._edited)
        self._sync_plan_enabled()

    def workload(self) -> dict:
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
        """Show a workload (a design's `settings["workload"]`) without emitting `changed`."""
        self._updating = True
        try:
            training = (workload or {}).get("training") or {}
            model = training.get("model")
            if isinstance(model, str):
                if self.model_combo.findText(model) < 0:
                    self.model_combo.addItem(model)
                self.model_combo.setCurrentText(model)
            plan = training.get("plan", "auto")
            self.auto_plan.setChecked(plan in (None, "auto"))
            if isinstance(plan, Mapping):
                self.tp_spin.setValue(int(plan.get("tp", 1)))
                self.pp_spin.setValue(int(plan.get("pp", 1)))
                self.dp_spin.setValue(int(plan.get("dp", 1)))
                self.mb_spin.setValue(int(plan.get("mb", 1)))
                recompute = str(plan.get("recompute", "selective"))
                if recompute in RECOMPUTE:
                    self.recompute_combo.setCurrentText(recompute)
                self.zero_combo.setCurrentIndex(int(plan.get("zero", 1)))
            self._sync_plan_enabled()
        finally:
            self._updating = False

    def _sync_plan_enabled(self) -> None:
        manual = not self.auto_plan.isChecked()
        for w in (self.tp_spin, self.pp_spin, self.dp_spin, self.mb_spin):
            w.setEnabled(manual)

    def _edited(self, *_: Any) -> None:
        self._sync_plan_enabled()
        if not self._updating:
            self.changed.emit(self.workload())
