"""The results panel: summary rows, plots updated in place, lint clicks, PNG export, workload panel."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage

from designer.engine.result import Result, freeze
from designer.engine.summary import format_value, summary_rows
from designer.ui.results import ResultsPanel


# -- results ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_result():
    """A real evaluation of a generated 64-node rail-optimized fat tree."""
    from designer.engine.evaluate import evaluate
    from designer.topologies import generate

    design = generate("rail-fat-tree", nodes=64)
    return evaluate(design)


def _collectives(busbw_scale=1.0):
    rows = []
    for alg, latency, bw in (("ring", 80e-6, 360e9), ("tree", 30e-6, 300e9), ("nvls", 20e-6, 450e9)):
        for size in (2**20, 2**24, 2**30, 2**33):
            t = latency + 2 * 511 / 512 * size / (bw * busbw_scale)
            algbw = size / t / 1e9
            rows.append({"op": "allreduce", "algorithm": alg, "ranks": 512, "bytes": size, "time_s": t,
                         "algbw_gb_per_s": algbw, "busbw_gb_per_s": algbw * 2 * 511 / 512,
                         "bound_time_s": t * 0.9, "bottleneck": "spine uplink (scale-out)"})
    best = {}
    for r in rows:
        if r["bytes"] not in best or r["time_s"] < best[r["bytes"]]["time_s"]:
            best[r["bytes"]] = r
    rows += [dict(r, algorithm="auto", chosen=r["algorithm"]) for r in best.values()]
    return rows


def _utilization(level):
    """The engine's shape: per-GPU fractions and per-phase link records."""
    tp = [{"link": f"nv{i}", "tier": "scale-up", "utilization": level * (1 - i / 40), "copies": 1} for i in range(32)]
    dp = [{"link": f"ib{i}", "tier": "scale-out", "utilization": level * 0.5, "copies": 1} for i in range(16)]
    return {"gpus": [{"group": "gpu0", "count": 8, "compute": 0.7, "communication": 0.2, "idle": 0.1}],
            "phases": [{"phase": "training tp", "links": tp}, {"phase": "training dp", "links": dp}]}


TRAINING = {"step_time_s": 10.0, "compute_s": 7.0, "exposed_tp_s": 1.0, "exposed_pp_s": 0.5, "exposed_dp_s": 0.5,
            "bubble_s": 1.0, "tflops_per_gpu": 400.0, "mfu": 0.40, "tokens_per_s": 150_000.0, "days": 23.1,
            "memory_per_gpu_gb": 61.5, "fits": True,
            "plan": {"tp": 8, "pp": 8, "dp": 8, "mb": 1, "recompute": "selective", "zero": 1}}


def _with_network(result, level=0.8, busbw_scale=1.0, lint=None):
    sections = result.as_dict()
    sections["collectives"] = _collectives(busbw_scale)
    sections["utilization"] = _utilization(level)
    sections["training"] = dict(TRAINING)
    if lint is not None:
        sections["lint"] = lint
    return Result(freeze(sections), seconds=0.01)


@pytest.fixture
def panel(qtbot):
    p = ResultsPanel()
    qtbot.addWidget(p)
    p.resize(700, 900)
    p.show()
    return p


# -- summary ------------------------------------------------------------------------------------

def test_summary_shows_exactly_the_summary_rows_of_a_real_evaluation(panel, real_result):
    panel.show_result(real_result)
    expected = [(m, format_value(v), u) for m, v, u in summary_rows(real_result)]
    assert panel.summary_table_rows() == expected
    assert ("Accelerators", "512", "count") in panel.summary_table_rows()
    assert panel.summary_page.showing_content


def test_missing_sections_say_not_computed_instead_of_failing(panel, real_result):
    core = {k: v for k, v in real_result.as_dict().items() if k not in ("collectives", "utilization", "training")}
    panel.show_result(Result(freeze(core)))
    panel.summary_table_rows()  # draws every tab
    assert not panel.collectives_page.showing_content
    assert "not computed" in panel.collectives_page.message.text()
    assert "not computed" in panel.utilization_page.message.text()
    assert "not computed" in panel.training_plot_page.message.text()
    assert panel.training_labels["mfu"].text() == "not computed"


def test_an_empty_or_malformed_result_does_not_crash(panel):
    panel.show_result(Result(freeze({})))
    assert "not computed" in panel.summary_page.message.text()
    panel.show_result(Result(freeze({"collectives": [{"op": "allreduce"}], "utilization": {"links": "bad"},
                                     "training": {"mfu": "n/a"}, "lint": [{"severity": "weird"}]})))
    assert panel.lint_findings_shown() == [("weird", "", "")]


def test_show_state(panel):
    panel.show_state("Evaluating…")
    assert panel.state_label.text() == "Evaluating…"


# -- plots --------------------------------------------------------------------------------------

def test_plot_names():
    assert ResultsPanel.PLOTS == ("collectives", "utilization", "training")


def test_plot_items_are_reused_across_results_and_updated_by_setdata(panel, real_result):
    panel.show_result(_with_network(real_result, level=0.8, busbw_scale=1.0))
    first = {name: panel.plot_items(name) for name in panel.plot_names()}
    util_before = first["utilization"]["tier:scale-up"].getData()[1].max()
    busbw_before = first["collectives"]["busbw:ring"].getData()[1].max()
    counts = {name: len(panel.plot_widget(name).scene().items()) for name in panel.plot_names()}

    panel.show_result(_with_network(real_result, level=0.4, busbw_scale=0.5))
    second = {name: panel.plot_items(name) for name in panel.plot_names()}
    for name in panel.plot_names():
        assert first[name].keys() == second[name].keys(), name
        for key in first[name]:
            assert first[name][key] is second[name][key], f"{name}/{key} was rebuilt"
        assert len(panel.plot_widget(name).scene().items()) == counts[name], f"{name}: items added"
    # ...and the data did change.
    assert second["utilization"]["tier:scale-up"].getData()[1].max() == pytest.approx(util_before / 2)
    assert second["collectives"]["busbw:ring"].getData()[1].max() < busbw_before


def test_collectives_plot_has_a_curve_per_algorithm_log_axes_units_and_emphasis(panel, real_result):
    panel.show_result(_with_network(real_result))
    items = panel.plot_items("collectives")
    assert {"time:ring", "time:tree", "time:nvls", "time:auto", "busbw:ring"} <= set(items)
    for plot in (panel.time_plot, panel.busbw_plot):
        assert plot.getAxis("bottom").logMode
        assert plot.getAxis("bottom").labelText == "Message size" and plot.getAxis("bottom").labelUnits == "B"
    assert panel.time_plot.getAxis("left").labelUnits == "s"
    assert panel.busbw_plot.getAxis("left").labelUnits == "GB/s"
    # nvls is fastest at every size in this data: it is the chosen one, drawn thicker.
    assert items["time:nvls"].opts["pen"].widthF() > items["time:ring"].opts["pen"].widthF()
    assert "nvls" in panel.collectives_info.text()
    legend_names = [label.text for _, label in panel.busbw_legend.items]
    assert "nvls (chosen)" in legend_names and "ring" in legend_names


def test_training_breakdown_and_figures(panel, real_result):
    panel.show_result(_with_network(real_result))
    bars = panel.plot_items("training")
    assert bars["compute_s"].opts["width"][0] == 7.0
    assert bars["exposed_tp_s"].opts["x0"][0] == 7.0
    assert panel.training_labels["mfu"].text() == "40.0%"
    assert panel.training_labels["fits"].text() == "yes"
    assert "150,000" in panel.training_labels["tokens_per_s"].text()
    assert "TP 8" in panel.training_labels["plan"].text()


def test_export_plot_png_writes_a_white_png(panel, real_result, tmp_path):
    panel.show_result(_with_network(real_result))
    for name in panel.plot_names():
        path = tmp_path / f"{name}.png"
        panel.export_plot_png(name, str(path))
        assert path.stat().st_size > 1000
        image = QImage(str(path))
        assert not image.isNull() and image.width() > 100
        for x, y in ((1, 1), (image.width() - 2, 1), (1, image.height() - 2)):
            assert image.pixelColor(x, y).name() == "#ffffff", (name, x, y)
    with pytest.raises(KeyError):
        panel.export_plot_png("nonsense", str(tmp_path / "x.png"))


# -- lint ---------------------------------------------------------------------------------------

LINT = [{"severity": "error", "item": "leaf-3", "message": "switch leaf-3 has 70 links but 64 ports"},
        {"severity": "warning", "item": "rack-2", "message": "rack rack-2 is over its power budget"}]


def test_clicking_a_lint_finding_emits_its_item_id(panel, qtbot, real_result):
    panel.show_result(_with_network(real_result, lint=LINT))
    panel.tabs.setCurrentWidget(panel.lint_page)
    tree = panel.lint_list
    assert panel.lint_findings_shown()[0] == ("error", "leaf-3", "switch leaf-3 has 70 links but 64 ports")
    assert "1 error" in panel.tabs.tabText(panel.tabs.indexOf(panel.lint_page))
    row = tree.topLevelItem(1)
    rect = tree.visualItemRect(row)
    with qtbot.waitSignal(panel.findingActivated, timeout=1000) as blocker:
        qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == ["rack-2"]
    tree.setCurrentItem(tree.topLevelItem(0))
    tree.setFocus()
    with qtbot.waitSignal(panel.findingActivated, timeout=1000) as blocker:
        qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert blocker.args == ["leaf-3"]


def test_a_clean_design_says_so(panel, real_result):
    panel.show_result(_with_network(real_result, lint=[]))
    assert "No findings" in panel.lint_page.message.text()


# -- workload panel -----------------------------------------------------------------------------

def test_workload_panel_changes_emit_workload_changed(panel, qtbot):
    panel.tabs.setCurrentWidget(panel.training_page)
    assert panel.model_combo.count() >= 5
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        panel.model_combo.setCurrentText("llama2-70b")
    assert blocker.args[0] == {"training": {"model": "llama2-70b", "plan": "auto"}}
    assert not panel.tp_spin.isEnabled()

    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        qtbot.mouseClick(panel.auto_plan, Qt.MouseButton.LeftButton,
                         pos=QPoint(8, panel.auto_plan.height() // 2))  # on the check indicator
    assert panel.tp_spin.isEnabled()
    plan = blocker.args[0]["training"]["plan"]
    assert set(plan) == {"tp", "pp", "dp", "mb", "recompute", "zero"}

    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        panel.pp_spin.setValue(4)
    assert blocker.args[0]["training"]["plan"]["pp"] == 4
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        panel.recompute_combo.setCurrentText("full")
    assert blocker.args[0]["training"]["plan"]["recompute"] == "full"
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        panel.zero_combo.setCurrentIndex(3)
    assert blocker.args[0]["training"]["plan"]["zero"] == 3


def test_set_workload_does_not_emit(panel, qtbot):
    seen = []
    panel.workloadChanged.connect(seen.append)
    workload = {"training": {"model": "megatron-1t", "plan": {"tp": 8, "pp": 64, "dp": 6, "mb": 1,
                                                              "recompute": "full", "zero": 0}}}
    panel.set_workload(workload)
    assert seen == []
    assert panel.workload() == workload


def test_utilization_weights_replicated_links_by_their_copies(panel):
    """Each link counts once per copy; "all phases" takes every link at its busiest phase."""
    section = {"phases": [
        {"phase": "tp", "links": [{"link": "a", "tier": "scale-up", "utilization": 0.9, "copies": 1},
                                  {"link": "b", "tier": "scale-up", "utilization": 0.3, "copies": 3}]},
        {"phase": "dp", "links": [{"link": "c", "tier": "scale-out", "utilization": 0.5, "copies": 4},
                                  {"link": "b", "tier": "scale-up", "utilization": 0.6, "copies": 3}]},
    ]}
    panel.show_result(Result(freeze({"utilization": section})))
    panel.tabs.setCurrentWidget(panel.utilization_page)
    assert panel.utilization_page.showing_content
    labels = [panel.phase_combo.itemText(i) for i in range(panel.phase_combo.count())]
    assert labels == ["all phases (busiest)", "dp", "tp"]
    x, y = panel.plot_items("utilization")["tier:scale-up"].getData()
    # a at 90 % (1 copy), b at its busiest 60 % (3 copies): a owns the first 25 % of the axis.
    assert list(y) == [90.0, 90.0, 60.0, 60.0]
    assert list(x) == [0.0, 25.0, 25.0, 100.0]
    panel.phase_combo.setCurrentText("tp")
    x, y = panel.plot_items("utilization")["tier:scale-up"].getData()
    assert list(y) == [90.0, 90.0, 30.0, 30.0]
    assert len(panel.plot_items("utilization")["tier:scale-out"].getData()[0] or []) == 0
    assert "Per-GPU breakdown not computed" in panel.utilization_info.text()
