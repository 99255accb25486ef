"""Results are never stale: an edit that makes the evaluation fail (a server deleted under a plan
typed by hand) leaves no figure of the design as it was on any tab, on the canvas or in an export;
each tab says why, in the engine's words (no exception class names), and Use Auto Plan gets back to
a plan that fits in one click."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.helpers import two_servers_on_a_leaf, window_settled


def test_a_server_deleted_under_a_manual_plan_leaves_no_old_figure_anywhere(make_window, qtbot, tmp_path):
    # Two DGX H100 drawn by hand on one leaf: 16 GPUs, run as TP 8 × DP 2 typed by hand.
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    form = window.results.training.workload_form
    with qtbot.waitSignal(window.evaluated, timeout=120_000):
        form.auto_plan.setChecked(False)
        form.tp_spin.setValue(8)
        form.pp_spin.setValue(1)
        form.dp_spin.setValue(2)
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)
    assert _summary(window)["Accelerators"] == "16"
    assert window.scene.utilization and window.last_result is not None

    # The user selects the second server and presses Delete: 8 GPUs left, the plan needs 16.
    window.scene.nodes["s1"].setSelected(True)
    with qtbot.waitSignal(window.evaluationFailed, timeout=120_000) as failed:
        window.view.setFocus()
        QTest.keyClick(window.view, Qt.Key.Key_Delete)
    assert "s1" not in window.document.design.items
    message = failed.args[0]
    assert "16" in message and "8 accelerators" in message, message
    assert not message.startswith(("PlanError", "TrainingError", "DesignerError")), message

    # Not one tab keeps a figure of the 16-GPU design: each says why where its figures were.
    for name, tab in window.results.sections.items():
        assert not tab.message_page.showing_content, name
        assert "the evaluation failed" in tab.message_page.message.text() and message in \
            tab.message_page.message.text(), name
    for tab in (window.results.training, window.results.cost):  # the figures beside their plots
        assert {label.text() for key, label in tab.labels.items() if key != "not_counted"} == {"not computed"}
    assert window.results.result() is None and window.last_result is None
    assert window.scene.utilization == {} and window.scene.bottleneck is None
    assert window.export_summary_csv(str(tmp_path / "summary.csv")) is None  # nothing stale to export
    assert not (tmp_path / "summary.csv").exists()
    button = window.results.auto_plan_button
    assert button.isVisible()

    # One click back to a plan that fits what is left.
    with qtbot.waitSignal(window.evaluated, timeout=120_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert form.auto_plan.isChecked() and not button.isVisible()
    qtbot.waitUntil(lambda: window.results.summary.page.showing_content, timeout=60_000)
    assert _summary(window)["Accelerators"] == "8"


def _summary(window) -> dict[str, str]:
    return {metric: value for metric, value, _unit in window.results.summary.rows_shown()}
