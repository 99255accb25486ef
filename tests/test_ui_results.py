"""The results panel on real evaluations: summary rows, plots updated in place, lint clicks, PNG
export, workload panel. Every result comes from `evaluate()`; if the engine fails, these fail."""

import dataclasses
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage

from designer.canvas import colors
from designer.engine import views
from designer.engine.evaluate import evaluate
from designer.engine.sections import LinkLoad, LinkPhase, Utilization
from designer.engine.summary import format_value, summary_rows
from designer.model.design import Design, Item
from designer.topologies import generate
from designer.ui.results import ResultsPanel

SMALL_MESSAGES = {"collective": {"op": "allreduce", "sizes": ["1M", "16M"]}}


@pytest.fixture(scope="module")
def fat_tree():
    """A generated 64-node rail-optimized fat tree (512 accelerators)."""
    return generate("rail-fat-tree", nodes=64)


@pytest.fixture(scope="module")
def real_result(fat_tree):
    result = evaluate(fat_tree)
    assert result.training.step_time_s is not None and result.utilization.gpus, "the fixture must be timed"
    return result


@pytest.fixture(scope="module")
def linted_result(fat_tree):
    """The fat tree with two parts the catalogue does not know: two lint errors."""
    design = fat_tree.snapshot()
    design.add_item(Item(id="stray-switch", kind="switch", part="no-such-switch"))
    design.add_item(Item(id="stray-nic", kind="nic", part="no-such-nic"))
    return evaluate(design)


@pytest.fixture(scope="module")
def empty_result():
    """A design with nothing drawn: no network, collectives, training or utilization."""
    return evaluate(Design(name="empty"))


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
    # Compute reads in the unit its size needs (512 H100 × 989.4 TFLOPS BF16 = 506.6 PFLOPS); every
    # other row is the engine's value and unit as they are.
    compute = {"TFLOPS", "TOPS"}
    expected = [(m, format_value(v), u) for m, v, u in summary_rows(real_result) if u not in compute]
    shown = panel.summary_table_rows()
    assert [row for row in shown if not row[2].endswith(("FLOPS", "OPS"))] == expected
    assert len(shown) == len(summary_rows(real_result))
    peaks = {m: (v, u) for m, v, u in shown if u.endswith("FLOPS")}
    assert peaks["Peak BF16/FP16"] == ("506.6", "PFLOPS")
    assert ("Accelerators", "512", "count") in panel.summary_table_rows()
    assert panel.summary.page.showing_content


def test_summary_elides_a_long_value_instead_of_squeezing_the_metric_names(panel, qtbot):
    # Frontier's parts priced by a derived estimate make a value longer than the panel's share for it.
    from designer.io.examples import example_paths
    from designer.io.files import load_design
    from designer.ui.results.summary import VALUE_MAX_WIDTH

    frontier = next(p for p in example_paths() if p.name.startswith("frontier"))
    panel.show_result(evaluate(load_design(frontier)))
    table = panel.summary.table
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text().startswith("Derived estimates"))
    value = table.item(row, 1)
    assert "cray-ex-cabinet" in value.text() and value.toolTip() == value.text()
    header = table.horizontalHeader()
    qtbot.waitUntil(lambda: header.sectionSize(1) <= VALUE_MAX_WIDTH)
    assert header.sectionSize(0) >= 200  # the metric names stay readable


def test_summary_columns_fit_their_contents_after_every_result(panel, qtbot, empty_result, real_result):
    # The table is filled with its columns held at a fixed size (measuring them after each cell
    # was slow): they must fit the new contents once it is filled, result after result.
    from PySide6.QtWidgets import QHeaderView

    from designer.ui.results.summary import VALUE_MAX_WIDTH

    table = panel.summary.table
    header = table.horizontalHeader()
    for result in (empty_result, real_result, empty_result):
        panel.show_result(result)
        assert [header.sectionResizeMode(c) for c in range(3)] == [
            QHeaderView.ResizeMode.Stretch, QHeaderView.ResizeMode.ResizeToContents,
            QHeaderView.ResizeMode.ResizeToContents]
        for column in (1, 2):
            fits = min(VALUE_MAX_WIDTH, max(table.sizeHintForColumn(column), header.sectionSizeHint(column)))
            qtbot.waitUntil(lambda column=column, fits=fits: header.sectionSize(column) == fits)


def test_a_result_draws_the_shown_tab_now_and_a_hidden_one_when_it_is_opened(panel, qtbot, empty_result,
                                                                              real_result):
    # Hidden tabs are drawn in later turns of the event loop; one opened before its turn comes is
    # drawn as it opens, with the newest result.
    panel.show_result(empty_result)
    panel.show_result(real_result)
    assert panel.summary.page.showing_content
    assert not panel.collectives.page.showing_content  # still the placeholder: not drawn yet
    bar = panel.tabs.tabBar()
    collectives = bar.tabRect(list(panel.sections).index("collectives")).center()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=collectives)
    assert panel.tabs.currentWidget() is panel.collectives.page
    assert panel.collectives.page.showing_content


def test_a_design_without_accelerators_says_not_computed(panel, empty_result):
    panel.show_result(empty_result)
    panel.summary_table_rows()  # draws every tab
    assert ("Accelerators", "0", "count") in panel.summary_table_rows()
    assert not panel.collectives.page.showing_content
    assert "not computed" in panel.collectives.page.message.text()
    assert "not computed" in panel.utilization.page.message.text()
    assert "no accelerators" in panel.training.plot_page.message.text()
    assert panel.training.labels["mfu"].text() == "not computed"
    assert panel.training.labels["fits"].text() == "NO — the design has no accelerators"


def test_show_state(panel, real_result):
    panel.show_state("Evaluating…")
    assert panel.state_label.text() == "Evaluating…"
    panel.show_result(real_result)
    assert panel.state_label.text().startswith("Evaluated in ")


# -- plots --------------------------------------------------------------------------------------

def test_plot_names():
    assert ResultsPanel.PLOTS == ("collectives", "utilization", "training", "cost")


def test_plot_items_are_reused_across_results_and_updated_by_setdata(panel, fat_tree, real_result):
    panel.show_result(real_result)
    first = {name: panel.plot_items(name) for name in panel.plot_names()}
    busbw_before = first["collectives"]["busbw:ring"].getData()[1].max()
    counts = {name: len(panel.plot_widget(name).scene().items()) for name in panel.plot_names()}

    panel.show_result(evaluate(fat_tree, workload=SMALL_MESSAGES))
    second = {name: panel.plot_items(name) for name in panel.plot_names()}
    for name in panel.plot_names():
        assert first[name].keys() == second[name].keys(), name
        for key in first[name]:
            assert first[name][key] is second[name][key], f"{name}/{key} was rebuilt"
        assert len(panel.plot_widget(name).scene().items()) == counts[name], f"{name}: items added"
    # ...and the data did change: small messages never reach the bus bandwidth of 8 GiB ones.
    assert second["collectives"]["busbw:ring"].getData()[1].max() < busbw_before


def test_collectives_plot_has_a_curve_per_algorithm_log_axes_units_and_emphasis(panel, real_result):
    panel.show_result(real_result)
    items = panel.plot_items("collectives")
    algorithms = set(views.collective_rows(real_result, "allreduce", 512))
    assert {f"time:{a}" for a in algorithms} <= set(items) and "time:auto" in items
    tab = panel.collectives
    for plot in (tab.time_plot, tab.busbw_plot):
        assert plot.getAxis("bottom").logMode
        assert plot.getAxis("bottom").labelText == "Message size" and plot.getAxis("bottom").labelUnits == "B"
    assert tab.time_plot.getAxis("left").labelUnits == "s"
    assert tab.busbw_plot.getAxis("left").labelUnits == "GB/s"
    # The algorithm auto picks for the largest message is drawn thicker than one it never picks.
    auto = views.collective_rows(real_result, "allreduce", 512)["auto"]
    chosen = {row.chosen for row in auto}
    largest = max(auto, key=lambda row: row.bytes).chosen
    others = algorithms - chosen - {"auto"}
    assert others, "the fixture must time an algorithm auto never picks"
    other = sorted(others)[0]
    assert items[f"time:{largest}"].opts["pen"].widthF() > items[f"time:{other}"].opts["pen"].widthF()
    assert items[f"time:{other}"].opts["pen"].color().name() == colors.ALGORITHM[other].lower()
    assert f"auto picks <b>{largest}</b>" in tab.info.text()
    legend_names = [label.text for _, label in tab.busbw_legend.items]
    assert f"{largest} (chosen)" in legend_names and other in legend_names


def test_training_breakdown_and_figures(panel, real_result):
    panel.show_result(real_result)
    bars = panel.plot_items("training")
    t = real_result.training
    assert bars["compute_s"].opts["width"][0] == t.compute_s
    assert bars["exposed_tp_s"].opts["x0"][0] == t.compute_s
    labels = panel.training.labels
    assert labels["mfu"].text() == f"{t.mfu:.1%}"
    assert labels["fits"].text() == "yes"
    assert labels["plan"].text().startswith(f"TP {t.plan.tp} · PP {t.plan.pp} · VP {t.plan.vp} · DP {t.plan.dp}")
    assert labels["memory_per_gpu_gib"].text().startswith(f"{t.memory_per_gpu_gib.total:,.1f} GiB of ")


def test_utilization_plots_the_engines_link_loads_in_tier_colours(panel, real_result):
    panel.show_result(real_result)
    items = panel.plot_items("utilization")
    loads = views.tier_link_loads(real_result)
    assert {f"tier:{tier}" for tier in loads} <= set(items)
    for tier, links in loads.items():
        _, y = items[f"tier:{tier}"].getData()
        assert max(y) == pytest.approx(100 * max(link.utilization for link in links))
        assert items[f"tier:{tier}"].opts["pen"].color().name() == colors.TIER[tier].lower()
    split = views.gpu_time_split(real_result)
    assert items["gpu:compute"].opts["width"][0] == pytest.approx(100 * split["compute"])


def test_training_shows_each_exposed_part_and_the_overlap_assumed(panel, fat_tree):
    """Overlap switched off: TP and DP time is exposed, drawn as its own bar on the step and on the
    per-GPU time line, and the figures say which overlap the step assumed."""
    workload = {"training": {"model": "llama2-70b", "plan": {"tp": 8, "pp": 2, "mb": 1},
                             "overlap": {"tp": "none", "dp": "none", "pp": "none"}}}
    result = evaluate(fat_tree, workload=workload)
    t = result.training
    assert t.exposed_tp_s > 0 and t.exposed_dp_s > 0 and t.exposed_pp_s > 0
    panel.tabs.setCurrentWidget(panel.training_page)
    panel.show_result(result)
    labels = panel.training.labels
    assert labels["overlap"].text() == "TP exposed · DP exposed · PP exposed · CP hidden · EP exposed"
    assert "DP comm." in labels["exposed"].text() and "TP comm." in labels["exposed"].text()
    bars = panel.plot_items("training")
    assert bars["exposed_dp_s"].opts["width"][0] == t.exposed_dp_s
    panel.tabs.setCurrentWidget(panel.utilization.page)
    gpu = panel.plot_items("utilization")
    assert gpu["gpu:exposed_dp"].opts["width"][0] == pytest.approx(100 * t.exposed_dp_s / t.step_time_s)
    assert gpu["gpu:bubble"].opts["x0"][0] == pytest.approx(100 * (1 - t.bubble_s / t.step_time_s))


def test_utilization_weights_replicated_links_by_their_copies(panel, real_result):
    """Each link counts once per copy; "all phases" takes every link at its busiest phase."""
    phases = (
        LinkPhase("tp", (LinkLoad("a", "scale-up", 0.9, 1), LinkLoad("b", "scale-up", 0.3, 3)), {}),
        LinkPhase("dp", (LinkLoad("c", "scale-out", 0.5, 4), LinkLoad("b", "scale-up", 0.6, 3)), {}),
    )
    result = dataclasses.replace(real_result, utilization=Utilization(gpus=(), phases=phases))
    panel.show_result(result)
    panel.tabs.setCurrentWidget(panel.utilization.page)
    assert panel.utilization.page.showing_content
    combo = panel.utilization.phase_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["all phases (busiest)", "dp", "tp"]
    x, y = panel.plot_items("utilization")["tier:scale-up"].getData()
    # a at 90 % (1 copy), b at its busiest 60 % (3 copies): a owns the first 25 % of the axis.
    assert list(y) == [90.0, 90.0, 60.0, 60.0]
    assert list(x) == [0.0, 25.0, 25.0, 100.0]
    combo.setCurrentText("tp")
    x, y = panel.plot_items("utilization")["tier:scale-up"].getData()
    assert list(y) == [90.0, 90.0, 30.0, 30.0]
    assert len(panel.plot_items("utilization")["tier:scale-out"].getData()[0] or []) == 0
    assert "Per-GPU breakdown not computed" in panel.utilization.info.text()


def test_export_plot_png_writes_a_white_png(panel, real_result, tmp_path):
    panel.show_result(real_result)
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


def test_plots_are_white_whatever_the_global_pyqtgraph_configuration(qtbot, real_result):
    import pyqtgraph as pg

    before = pg.getConfigOption("background")
    pg.setConfigOptions(background="k", foreground="w")
    try:
        p = ResultsPanel()
        qtbot.addWidget(p)
        p.show_result(real_result)
        for name in p.plot_names():
            assert p.plot_widget(name).backgroundBrush().color().name() == "#ffffff", name
    finally:
        pg.setConfigOptions(background=before, foreground="k")


# -- lint ---------------------------------------------------------------------------------------

def test_clicking_a_lint_finding_emits_its_item_id(panel, qtbot, linted_result):
    panel.show_result(linted_result)
    panel.tabs.setCurrentWidget(panel.lint.page)
    tree = panel.lint.tree
    shown = panel.lint_findings_shown()
    assert shown == [(f.severity, f.item, f.message) for f in linted_result.lint]
    assert {row[1] for row in shown} >= {"stray-switch", "stray-nic"}
    assert "2 errors" in panel.tabs.tabText(panel.tabs.indexOf(panel.lint.page))
    row = tree.topLevelItem(1)
    rect = tree.visualItemRect(row)
    with qtbot.waitSignal(panel.findingActivated, timeout=1000) as blocker:
        qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [shown[1][1]]
    tree.setCurrentItem(tree.topLevelItem(0))
    tree.setFocus()
    with qtbot.waitSignal(panel.findingActivated, timeout=1000) as blocker:
        qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert blocker.args == [shown[0][1]]


def test_a_clean_design_says_so(panel, real_result):
    assert not real_result.lint
    panel.show_result(real_result)
    assert "No findings" in panel.lint.page.message.text()


# -- workload panel -----------------------------------------------------------------------------

def test_workload_panel_changes_emit_workload_changed(panel, qtbot):
    panel.tabs.setCurrentWidget(panel.training_page)
    form = panel.training.workload_form
    assert form.model_combo.count() >= 5
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        form.model_combo.setCurrentText("llama2-70b")
    assert blocker.args[0] == {"training": {"model": "llama2-70b", "plan": "auto"}}
    assert not form.tp_spin.isEnabled()

    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        qtbot.mouseClick(form.auto_plan, Qt.MouseButton.LeftButton,
                         pos=QPoint(8, form.auto_plan.height() // 2))  # on the check indicator
    assert form.tp_spin.isEnabled()
    plan = blocker.args[0]["training"]["plan"]
    assert set(plan) == {"tp", "pp", "vp", "dp", "cp", "sp", "ep", "mb", "recompute", "zero", "attention"}

    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        form.pp_spin.setValue(4)
    assert blocker.args[0]["training"]["plan"]["pp"] == 4
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        form.recompute_combo.setCurrentText("full")
    assert blocker.args[0]["training"]["plan"]["recompute"] == "full"
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        form.zero_combo.setCurrentIndex(3)
    assert blocker.args[0]["training"]["plan"]["zero"] == 3


def test_auto_plan_fields_show_the_plan_the_engine_chose(panel, qtbot, real_result):
    plan = real_result.training.plan
    assert plan.auto
    form = panel.training.workload_form
    with qtbot.assertNotEmitted(panel.workloadChanged):
        panel.show_result(real_result)
    panel.tabs.setCurrentWidget(panel.training_page)
    assert [form.spins[key].value() for key in ("tp", "pp", "vp", "dp", "cp", "ep", "mb")] == \
        [plan.tp, plan.pp, plan.vp, plan.dp, plan.cp, plan.ep, plan.mb]
    assert form.zero_combo.currentIndex() == plan.zero and form.recompute_combo.currentText() == plan.recompute
    shown = panel.training.labels["plan"].text()
    assert "auto True" not in shown and shown.endswith("(chosen by the auto plan)")
    # Unticking Auto starts the manual plan from the chosen one.
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        qtbot.mouseClick(form.auto_plan, Qt.MouseButton.LeftButton, pos=QPoint(8, form.auto_plan.height() // 2))
    assert blocker.args[0]["training"]["plan"]["tp"] == plan.tp
    assert blocker.args[0]["training"]["plan"]["dp"] == plan.dp


def _type_into(qtbot, spin, value: int) -> None:
    """Select the spin box's text and type a number, then Enter, as a user does."""
    qtbot.mouseClick(spin.lineEdit(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(spin.lineEdit(), str(value))
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


def test_workload_panel_sets_every_plan_key_and_overlap(panel, qtbot):
    """VP, CP, EP, SP, attention and the overlap assumptions reach the workload the panel emits."""
    panel.tabs.setCurrentWidget(panel.training_page)
    form = panel.training.workload_form
    seen = []
    panel.workloadChanged.connect(seen.append)
    qtbot.mouseClick(form.auto_plan, Qt.MouseButton.LeftButton, pos=QPoint(8, form.auto_plan.height() // 2))
    assert form.vp_spin.isEnabled() and form.attention_combo.isEnabled()
    for spin, value in ((form.vp_spin, 4), (form.cp_spin, 2), (form.ep_spin, 8)):
        _type_into(qtbot, spin, value)
    qtbot.mouseClick(form.sp_check, Qt.MouseButton.LeftButton, pos=QPoint(8, form.sp_check.height() // 2))
    form.attention_combo.setFocus()
    qtbot.keyClick(form.attention_combo, Qt.Key.Key_Down)  # flash → standard
    form.overlap_combos["tp"].setFocus()
    qtbot.keyClick(form.overlap_combos["tp"], Qt.Key.Key_Down)  # none → partial
    form.overlap_combos["dp"].setFocus()
    qtbot.keyClick(form.overlap_combos["dp"], Qt.Key.Key_Up)  # full → none
    training = seen[-1]["training"]
    assert {k: training["plan"][k] for k in ("vp", "cp", "ep", "sp", "attention")} == {
        "vp": 4, "cp": 2, "ep": 8, "sp": 0, "attention": "standard"}
    assert training["overlap"] == {"tp": "partial", "dp": "none"}
    # Auto plan: the plan fields are off, the overlap stays a choice.
    qtbot.mouseClick(form.auto_plan, Qt.MouseButton.LeftButton, pos=QPoint(8, form.auto_plan.height() // 2))
    assert not form.cp_spin.isEnabled() and form.overlap_combos["tp"].isEnabled()
    assert seen[-1]["training"]["plan"] == "auto" and seen[-1]["training"]["overlap"]["tp"] == "partial"


def test_workload_panel_keeps_what_it_does_not_show(panel, qtbot):
    """An inline model, the collective settings and the batch survive a plan edit in the panel."""
    model = {"name": "tiny-moe", "layers": 4, "hidden": 512, "heads": 8, "experts": 4, "top_k": 2}
    panel.set_workload({"collective": {"op": "alltoall"}, "training": {"model": model, "plan": "auto",
                                                                       "global_batch": 64}})
    form = panel.training.workload_form
    assert form.model_combo.currentText() == "tiny-moe (this design's model)"
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        qtbot.mouseClick(form.auto_plan, Qt.MouseButton.LeftButton, pos=QPoint(8, form.auto_plan.height() // 2))
    emitted = blocker.args[0]
    assert emitted["collective"] == {"op": "alltoall"} and emitted["training"]["global_batch"] == 64
    assert emitted["training"]["model"] == model and isinstance(emitted["training"]["plan"], dict)
    with qtbot.waitSignal(panel.workloadChanged, timeout=1000) as blocker:
        form.model_combo.setCurrentText("mixtral-8x7b")
    assert blocker.args[0]["training"]["model"] == "mixtral-8x7b"
    panel.set_workload(None)  # another design: its own model entry goes
    assert form.model_combo.findText("tiny-moe (this design's model)") < 0


def test_set_workload_does_not_emit(panel, qtbot):
    seen = []
    panel.workloadChanged.connect(seen.append)
    workload = {"training": {"model": "megatron-1t",
                             "plan": {"tp": 8, "pp": 64, "vp": 2, "dp": 3, "cp": 2, "sp": 1, "ep": 1, "mb": 1,
                                      "recompute": "full", "zero": 0, "attention": "standard"},
                             "overlap": {"tp": "partial", "pp": "none"}}}
    panel.set_workload(workload)
    assert seen == []
    assert panel.workload() == workload


def test_plot_exports_hold_their_legends_whole_and_off_the_curves(panel, real_result, tmp_path):
    import pyqtgraph as pg
    from PySide6.QtCore import QRectF

    panel.show_result(real_result)
    for name in panel.plot_names():
        path = tmp_path / f"{name}.png"
        panel.export_plot_png(name, str(path))
        image = QImage(str(path))
        picture = QRectF(0, 0, image.width() / 2, image.height() / 2)  # exported at 2×
        view = panel.plot_widget(name)
        shown = view.ci.geometry()
        view.ci.setGeometry(picture)  # the layout the export drew
        view.ci.layout.activate()
        items = [view.ci.layout.itemAt(i) for i in range(view.ci.layout.count())]
        legends = [i for i in items if isinstance(i, pg.LegendItem)]
        data_areas = [i.getViewBox().sceneBoundingRect() for i in items if isinstance(i, pg.PlotItem)]
        assert legends and data_areas, name
        for legend in legends:
            assert legend.items, name  # every entry is there
            box = legend.sceneBoundingRect()
            assert picture.contains(box), (name, box, picture)
            assert not any(box.intersects(area) for area in data_areas), name
        view.ci.setGeometry(shown)
