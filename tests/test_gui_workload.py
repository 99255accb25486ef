"""The workload form on the Training tab, driven as a user does: typing the run's sizes (tokens,
global batch, sequence length) and the plan's degrees, each one undo step, and the plan kept
consistent with the design's accelerators."""

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.topologies.base import Builder
from tests.helpers import window_settled

OUT = Path("/tmp/w/workflow")


def four_servers(plan=None) -> Design:
    """Four DGX H100 (32 GPUs) on one leaf; the workload megatron-1.7b with `plan` (or auto)."""
    design = Design(name="Four servers")
    builder = Builder(design, default_catalog())
    leaf = builder.item("leaf", "switch", "qm9700", None, name="Leaf", x=1200, y=0)
    for k in range(4):
        for nic in builder.server(f"s{k}", "dgx-h100", None, x=700 * k, y=200)["nics"]:
            builder.link(nic, leaf, "ib-ndr", 1)
    design.settings["workload"] = {"training": {"model": "megatron-1.7b", "plan": plan or "auto"}}
    return design


def _settled(window, qtbot, evaluations: int | None = None):
    qtbot.waitUntil(lambda: window_settled(window) and window.last_result is not None
                    and (evaluations is None or window.evaluations > evaluations), timeout=60_000)
    return window.last_result


def _show_training_tab(window, qtbot):
    tabs = window.results.tabs
    index = next(i for i in range(tabs.count()) if tabs.tabText(i) == "Training")
    qtbot.mouseClick(tabs.tabBar(), Qt.MouseButton.LeftButton, pos=tabs.tabBar().tabRect(index).center())
    assert tabs.currentIndex() == index
    return window.results.training


def _type_into(qtbot, field, text: str) -> None:
    """Click the field, select what it holds, type, press Enter: as a user replaces a value."""
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def _training_setting(window) -> dict:
    return window.document.design.settings["workload"]["training"]


def test_typing_tokens_batch_and_sequence_changes_the_model_and_the_figures(make_window, qtbot):
    window = make_window(four_servers())
    first = _settled(window, qtbot)
    tab = _show_training_tab(window, qtbot)
    form = tab.workload_form
    assert form.tokens_edit.text() == "300B" and form.batch_edit.text() == "512" and form.seq_edit.text() == "2,048"
    stack = window.document.undo_stack
    steps = stack.count()

    seen = window.evaluations
    _type_into(qtbot, form.tokens_edit, "600B")
    result = _settled(window, qtbot, seen)
    assert _training_setting(window)["tokens"] == 600e9
    assert stack.count() == steps + 1 and stack.undoText() == "Change training tokens"
    assert result.training.tokens == 600e9
    assert result.training.days == pytest.approx(2 * first.training.days, rel=1e-3)
    assert "600 billion tokens" in tab.labels["days"].text()

    seen = window.evaluations
    _type_into(qtbot, form.batch_edit, "1,024")
    result = _settled(window, qtbot, seen)
    assert _training_setting(window)["global_batch"] == 1024 and result.training.global_batch == 1024
    assert stack.count() == steps + 2 and stack.undoText() == "Change global batch"
    assert result.training.step_time_s > first.training.step_time_s  # twice the sequences per step

    seen = window.evaluations
    _type_into(qtbot, form.seq_edit, "4096")
    result = _settled(window, qtbot, seen)
    assert _training_setting(window)["seq"] == 4096 and result.training.seq == 4096
    assert stack.count() == steps + 3 and stack.undoText() == "Change sequence length"
    assert form.seq_edit.text() == "4,096"
    window.grab().save(str(OUT / "workload-sizes.png"))

    # Enter again on an unchanged field is no edit.
    _type_into(qtbot, form.seq_edit, "4096")
    assert stack.count() == steps + 3

    # Undo takes back one field at a time, and the form shows the value it returns to.
    window.act_undo.trigger()
    assert "seq" not in _training_setting(window) and form.seq_edit.text() == "2,048"
    assert _training_setting(window)["global_batch"] == 1024


@pytest.mark.parametrize(("field", "typed", "said"), [
    ("tokens_edit", "lots", "Tokens: “lots” is not a number of tokens to train on (e.g. 300B, 2T or 3e11)"),
    ("batch_edit", "12.5", "Global batch: “12.5” is not a whole number of sequences per optimizer step"),
    ("seq_edit", "0", "Sequence: 0 is out of range: from 1 to 10,000,000 tokens per sequence"),
])
def test_a_value_that_cannot_be_used_is_refused_with_a_clear_message(make_window, qtbot, field, typed, said):
    window = make_window(four_servers())
    _settled(window, qtbot)
    form = _show_training_tab(window, qtbot).workload_form
    before = dict(_training_setting(window))
    steps = window.document.undo_stack.count()
    edit = getattr(form, field)
    _type_into(qtbot, edit, typed)
    assert form.size_error.isVisible() and form.size_error.text() == said
    assert edit.text() == typed, "what the user typed is kept to be corrected"
    assert _training_setting(window) == before and window.document.undo_stack.count() == steps
    window.results.grab().save(str(OUT / f"workload-refused-{field}.png"))


def test_changing_tp_makes_dp_follow_on_32_gpus(make_window, qtbot):
    window = make_window(four_servers({"tp": 8, "pp": 1, "dp": 4, "mb": 1}))
    result = _settled(window, qtbot)
    assert (result.training.plan.tp, result.training.plan.dp) == (8, 4)
    form = _show_training_tab(window, qtbot).workload_form
    assert not form.auto_plan.isChecked() and form.accelerators == 32
    assert (form.tp_spin.value(), form.dp_spin.value()) == (8, 4)
    steps = window.document.undo_stack.count()

    seen = window.evaluations
    _type_into(qtbot, form.tp_spin, "4")
    assert (form.tp_spin.value(), form.dp_spin.value()) == (4, 8)
    result = _settled(window, qtbot, seen)
    plan = _training_setting(window)["plan"]
    assert (plan["tp"], plan["pp"], plan["dp"]) == (4, 1, 8)
    assert (result.training.plan.tp, result.training.plan.dp) == (4, 8)
    assert window.document.undo_stack.count() == steps + 1 and window.document.undo_stack.undoText() == "Change TP"
    assert not form.plan_note_row.isVisible()

    seen = window.evaluations
    _type_into(qtbot, form.pp_spin, "2")
    assert (form.tp_spin.value(), form.pp_spin.value(), form.dp_spin.value()) == (4, 2, 4)
    _settled(window, qtbot, seen)
    assert window.document.undo_stack.undoText() == "Change PP"

    window.act_undo.trigger()  # both TP and DP come back with one undo
    window.act_undo.trigger()
    assert (form.tp_spin.value(), form.pp_spin.value(), form.dp_spin.value()) == (8, 1, 4)


def test_a_tp_that_does_not_divide_the_gpus_is_said_beside_the_plan_with_a_way_back(make_window, qtbot):
    window = make_window(four_servers({"tp": 8, "pp": 1, "dp": 4, "mb": 1}))
    _settled(window, qtbot)
    form = _show_training_tab(window, qtbot).workload_form
    seen = window.evaluations
    _type_into(qtbot, form.tp_spin, "3")
    assert form.dp_spin.value() == 4  # DP cannot follow: 32 / 3 is not whole
    assert form.plan_note_row.isVisible()
    assert form.plan_note.text() == "Plan TP 3 × PP 1 × CP 1 × DP 4 = 12 does not divide the 32 accelerators."
    # The nearest TP that divides both the 32 GPUs and the model's 24 heads.
    assert form.use_fitting_button.text() == "Use TP 2 · PP 1 · CP 1 · DP 16"
    # The plan as typed is saved (nothing the user did is lost) and the evaluation says it cannot run.
    assert _training_setting(window)["plan"]["tp"] == 3
    qtbot.waitUntil(lambda: window.results.state_label.text().startswith("Evaluation failed")
                    and not window.scheduler.busy, timeout=60_000)
    assert window.evaluations == seen
    window.results.grab().save(str(OUT / "workload-plan-does-not-fit.png"))

    steps = window.document.undo_stack.count()
    seen = window.evaluations
    qtbot.mouseClick(form.use_fitting_button, Qt.MouseButton.LeftButton)
    result = _settled(window, qtbot, seen)
    plan = _training_setting(window)["plan"]
    assert (plan["tp"], plan["dp"]) == (2, 16) and (result.training.plan.tp, result.training.plan.dp) == (2, 16)
    assert window.document.undo_stack.count() == steps + 1
    assert window.document.undo_stack.undoText() == "Use a plan that fits"
    assert not form.plan_note_row.isVisible()

    _type_into(qtbot, form.tp_spin, "5")
    assert form.plan_note_row.isVisible()
    qtbot.mouseClick(form.use_auto_button, Qt.MouseButton.LeftButton)
    assert form.auto_plan.isChecked() and _training_setting(window)["plan"] == "auto"
    assert not form.plan_note_row.isVisible()
