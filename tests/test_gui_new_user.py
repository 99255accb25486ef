"""What a new user found wrong checking issue 15 in the app, each driven as the user did it: the
Cost tab of a design with many unpriced parts on a laptop-sized window, the inspector's blast
radius and what-if rows, failing some of a group's copies, and the cost assumptions' defaults."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem, QLabel, QToolTip

from designer.io.examples import resolve_design_path
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.ui.results.cost import money
from tests.helpers import window_settled
from tests.helpers.gui import answer_fail_copies, right_click_at_and_choose, strike_of, what_if_rows


def _open_example(make_window, qtbot, name: str, size: tuple[int, int] = (1400, 900)):
    window = make_window(load_design(resolve_design_path(name), default_catalog()))
    window.resize(*size)
    assert window.scheduler.wait_idle(30_000)
    return window


def _click_tab(window, qtbot, name: str):
    panel = window.results
    bar = panel.tabs.tabBar()
    index = list(panel.sections).index(name)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert panel.tabs.currentIndex() == index
    return panel.sections[name]


def _settle(window, qtbot) -> None:
    """Wait until the window has caught up, then let Qt run the layouts that posted."""
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    for _ in range(3):
        QApplication.processEvents()


def _click_item(window, qtbot, item_id: str) -> None:
    view = window.view
    node = window.scene.nodes[item_id]
    view.ensureVisible(node.sceneBoundingRect())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.mapFromScene(node.sceneBoundingRect().center()))
    assert window.scene.selection() == ([item_id], [])


# -- the Cost tab --------------------------------------------------------------------------------

def test_cost_plots_fit_the_panel_of_a_1280_window_with_many_unpriced_parts(make_window, qtbot):
    # The TPU v4 pod leaves four capital categories unpriced. Naming their parts in the legend made
    # it wider than the panel, and the plots were widened with it and cut off on the right.
    window = _open_example(make_window, qtbot, "google-tpu-v4-pod", (1280, 800))
    tab = _click_tab(window, qtbot, "cost")
    cost = window.last_result.cost
    assert len(cost.unpriced_parts) >= 4
    view = tab.view
    _settle(window, qtbot)
    assert view.ci.geometry().width() <= view.viewport().width()
    assert tab.capital_legend["accelerators_and_servers"].text == "Accelerators and servers (unpriced)"
    # The parts are named in the figures under the plots, every one of them.
    assert all(part in tab.labels["unpriced_parts"].text() for part in cost.unpriced_parts)
    # One legend column holds more rows: the view grows by them, and the yearly plot keeps its height.
    qtbot.waitUntil(lambda: tab.yearly_plot.geometry().height() >= 150, timeout=10_000)

    # A wider results dock (the user drags its edge) gives the legend back its two columns.
    window.resizeDocks([window.results_dock], [900], Qt.Orientation.Horizontal)
    _settle(window, qtbot)
    assert tab.capital_legend_item.columnCount == 2
    assert view.ci.geometry().width() <= view.viewport().width()


# -- the inspector -------------------------------------------------------------------------------

def test_the_inspectors_blast_radius_and_what_if_rows_show_every_line(make_window, qtbot):
    # A long part name in the Part box made the form lay its wrapping rows out for a width it did
    # not have: the blast radius's second line was cut off.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    _click_item(window, qtbot, "spines.sw")
    window.act_fail_one.trigger()
    qtbot.waitUntil(lambda: "what_if" in window.inspector.fields, timeout=10_000)
    _settle(window, qtbot)
    for key in ("blast_radius", "what_if"):
        label = window.inspector.fields[key]
        assert label.width() < window.inspector.width()
        assert label.heightForWidth(label.width()) > label.fontMetrics().height() * 1.5, "expected a wrapped row"
        assert label.height() >= label.heightForWidth(label.width())
    blast = window.inspector.fields["blast_radius"]
    assert blast.text() == "0 accelerators cut off, 1,024 slowed"
    # Of one copy: the whole group of 16 spines failing would cut every server off.
    assert window.inspector.form.labelForField(blast).text() == "Blast radius\n(one copy)"


# -- failing some of a group's copies --------------------------------------------------------------

def test_a_share_of_a_link_groups_optics_fails_from_the_right_click_menu(make_window, qtbot, tmp_path):
    # "2 % of optics": the app offered only Fail (every physical link) and Fail One Copy (items only).
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    link_id = "su.leaf0--spines.sw"  # one drawn link standing for 64 physical leaf-spine links
    line = window.scene.link_items[link_id]
    seen: list[str] = []
    QTimer.singleShot(0, lambda: answer_fail_copies(qtbot, "failPercent", "5", seen))
    right_click_at_and_choose(qtbot, window, line.mapToScene(line.line().pointAt(0.5)), "Fail Some Copies…")
    assert seen == ["3 of 64 physical links fail; the others stay in service."]
    design = window.document.design
    assert design.settings["failures"] == [{"target": link_id, "percent": 5.0}]
    assert window.document.undo_stack.undoText() == "Fail Some Copies"
    # Drawn dotted: some of its physical links, not all (those are dashed).
    assert line.failed and line.pen().style() == Qt.PenStyle.DotLine
    assert "What-if: 5% of 64 physical links failed: 3" in window.scene.tooltip_for(link_id)
    window.scene.select_ids([link_id])
    qtbot.waitUntil(lambda: "what_if" in window.inspector.fields, timeout=10_000)
    row = window.inspector.fields["what_if"]
    assert row.text() == "5% of 64 physical links failed: 3 (right-click ▸ Restore)"
    qtbot.waitUntil(lambda: row.height() >= row.heightForWidth(row.width()), timeout=10_000)
    rows = what_if_rows(window, qtbot)
    healthy, degraded = (float(v.replace(",", "")) for v in rows["Scale-out bisection (GB/s)"][1:3])
    assert degraded < healthy

    path = tmp_path / "optics.cluster.json"
    save_design(design, path)
    reopened = make_window(load_design(path, default_catalog()))
    assert reopened.document.design.settings["failures"] == [{"target": link_id, "percent": 5.0}]
    assert reopened.scene.link_items[link_id].failed

    window.act_undo.trigger()
    assert "failures" not in window.document.design.settings and not line.failed
    window.act_redo.trigger()
    assert window.document.design.settings["failures"] == [{"target": link_id, "percent": 5.0}] and line.failed


def test_four_of_sixteen_spines_fail_by_count_and_the_bisection_drops_by_a_quarter(make_window, qtbot):
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    node = window.scene.nodes["spines.sw"]
    assert not window.act_fail_some.isEnabled()  # nothing selected yet
    seen: list[str] = []
    QTimer.singleShot(0, lambda: answer_fail_copies(qtbot, "failCount", "4", seen))
    right_click_at_and_choose(qtbot, window, node.sceneBoundingRect().center(), "Fail Some Copies…")
    assert seen == ["4 of 16 copies fail; the others stay in service."]
    assert window.document.design.settings["failures"] == [{"target": "spines.sw", "copies": 4}]
    assert "What-if: 4 of 16 copies failed" in window.scene.tooltip_for("spines.sw")
    # A dashed strike: some of the copies (every copy failed is struck through solid, below).
    assert strike_of(node).pen().style() == Qt.PenStyle.DashLine
    rows = what_if_rows(window, qtbot)
    assert rows["Scale-out bisection (GB/s)"][1:3] == ("25,600", "19,200")
    assert "(-25.0%)" in rows["Scale-out bisection (GB/s)"][3]
    assert "What-if: 4 of 16 × Spine failed" in window.results.goodput.whatif_label.text()
    # Marked once, the item offers Restore, not a second share.
    window.scene.select_ids(["spines.sw"])
    assert window.act_restore.isEnabled() and not window.act_fail_some.isEnabled()

    window.act_undo.trigger()
    assert strike_of(node) is None and "failures" not in window.document.design.settings
    window.scene.select_ids(["spines.sw"])
    window.act_fail.trigger()
    assert strike_of(node).pen().style() == Qt.PenStyle.SolidLine
    assert "What-if: all 16 copies failed" in window.scene.tooltip_for("spines.sw")


def test_a_share_of_every_link_on_a_medium_fails_and_restores_from_any_of_its_links(make_window, qtbot):
    # "2 % of optics" over the whole fabric, as the CLI's --fail ib-ndr:2% does.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    design = window.document.design
    ndr = [link_id for link_id, link in design.links.items() if link.medium == "ib-ndr"]
    line = window.scene.link_items["su.leaf0--spines.sw"]
    seen: list[str] = []
    QTimer.singleShot(0, lambda: answer_fail_copies(qtbot, "failPercent", "2", seen, every_link=True))
    right_click_at_and_choose(qtbot, window, line.mapToScene(line.line().pointAt(0.5)), "Fail Some Copies…")
    # 2 % of the 1,536 physical links (8 leaf-spine links of 64, 8 NIC-leaf links of 128), spread evenly.
    assert seen == ["31 of 1,536 physical links fail; the others stay in service."]
    assert window.document.design.settings["failures"] == [{"target": "ib-ndr", "percent": 2.0}]
    assert window.scene.failed == window.scene.partly_failed == set(ndr)
    assert all(window.scene.link_items[i].pen().style() == Qt.PenStyle.DotLine for i in ndr)
    nic_link = next(i for i in ndr if "nic" in i)
    assert ("What-if: 2% of every InfiniBand NDR (one 4x port) link failed: 31 of 1,536 physical links, spread "
            "evenly (2.6 of these 128)" in window.scene.tooltip_for(nic_link))
    rows = what_if_rows(window, qtbot)
    # The what-if line in the design's words, not the CLI's "ib-ndr:2%".
    assert "What-if: 2% of every InfiniBand NDR (one 4x port) link failed" in window.results.goodput.whatif_label.text()
    assert rows["Scale-out bisection (GB/s)"][1:3] == ("25,600", f"{25_600 * (1 - 31 / 1_536):,.0f}")

    # Any link on the medium restores it.
    window.scene.select_ids([nic_link])
    assert window.act_restore.isEnabled()
    _menu_action(window, "Design", "Failure What-If", "Restore").trigger()
    assert "failures" not in window.document.design.settings and not window.scene.failed
    window.act_undo.trigger()
    assert window.scene.failed == set(ndr)


def _menu_action(window, *path: str):
    """The action at a menu path of the menu bar, by the texts a user reads ("Design", "Failure What-If", …)."""
    actions = window.menuBar().actions()
    for i, text in enumerate(path):
        action = next(a for a in actions if a.text().replace("&", "") == text)
        if i < len(path) - 1:
            actions = action.menu().actions()
    return action


def test_the_failure_actions_are_in_the_design_menu_and_restore_all_clears_every_mark(make_window, qtbot):
    # The failure what-if was reachable only by right-clicking; nothing in the menu bar said it exists.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    restore_all = _menu_action(window, "Design", "Failure What-If", "Restore All")
    assert not restore_all.isEnabled()
    _click_item(window, qtbot, "spines.sw")
    _menu_action(window, "Design", "Failure What-If", "Fail One Copy").trigger()
    window.scene.select_ids(["su.leaf0--spines.sw"])
    _menu_action(window, "Design", "Failure What-If", "Fail").trigger()
    design = window.document.design
    assert [e["target"] for e in design.settings["failures"]] == ["spines.sw", "su.leaf0--spines.sw"]
    assert restore_all.isEnabled()
    restore_all.trigger()
    assert "failures" not in window.document.design.settings
    assert window.document.undo_stack.undoText() == "Restore All"
    assert not window.scene.failed and not restore_all.isEnabled()
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result.degraded is None, timeout=30_000)
    window.act_undo.trigger()
    assert len(window.document.design.settings["failures"]) == 2 and window.scene.failed == {
        "spines.sw", "su.leaf0--spines.sw"}


# -- the cost assumptions' defaults ----------------------------------------------------------------

def _type_into(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


def test_a_changed_assumption_shows_its_default_and_reset_to_defaults_is_one_undo_step(make_window, qtbot):
    # Once edited, an assumption's default was nowhere to be seen, and going back meant knowing it.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    form = _click_tab(window, qtbot, "cost").assumptions
    source = form.sources["electricity_usd_per_kwh"]
    assert "Default" not in source.text() and "EIA" in source.text()
    assert not form.reset.isEnabled()
    _type_into(qtbot, form.editors["electricity_usd_per_kwh"], "0.16")
    _type_into(qtbot, form.editors["pue"], "1.5")
    doc = window.document
    assert doc.design.settings["cost"] == {"electricity_usd_per_kwh": 0.16, "pue": 1.5}
    assert source.text().startswith("<b>Default: 0.080 USD/kWh.</b> US average industrial price")
    assert form.sources["pue"].text().startswith("<b>Default: 1.30.</b>")
    assert "Default" not in form.sources["depreciation_years"].text()
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result.cost.assumptions["pue"] == 1.5, timeout=30_000)

    assert form.reset.isEnabled()
    steps = doc.undo_stack.count()
    qtbot.mouseClick(form.reset, Qt.MouseButton.LeftButton)
    assert "cost" not in doc.design.settings and doc.undo_stack.count() == steps + 1
    assert form.editors["electricity_usd_per_kwh"].value() == pytest.approx(0.08)
    assert "Default" not in source.text() and not form.reset.isEnabled()
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result.cost.assumptions["pue"] == 1.3, timeout=30_000)

    window.act_undo.trigger()
    assert doc.design.settings["cost"] == {"electricity_usd_per_kwh": 0.16, "pue": 1.5}
    assert form.editors["pue"].value() == pytest.approx(1.5) and source.text().startswith("<b>Default: 0.080")


# -- goodput ---------------------------------------------------------------------------------------

def _goodput_rows(tab) -> dict[str, tuple[str, str]]:
    table = tab.goodput_table
    return {table.item(r, 0).text(): (table.item(r, 1).text(), table.item(r, 2).text())
            for r in range(table.rowCount())}


def test_goodput_leads_with_what_the_job_loses_in_units_a_reader_takes_in(make_window, qtbot):
    # At 1280x800 the effective ratio and the days with failures were below the fold, the ratio a
    # bare 0.9853, the checkpoint interval 854.2 s and the part classes "nic", "switch".
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su", (1280, 800))
    tab = _click_tab(window, qtbot, "goodput")
    g = window.last_result.goodput
    table = tab.goodput_table
    first = [table.item(r, 0).text() for r in range(3)]
    assert first == ["Effective training time ratio", "Days to train, with failures", "Days to train, without failures"]
    _settle(window, qtbot)
    assert all(table.visualItemRect(table.item(r, 0)).bottom() <= table.viewport().height() for r in range(3))
    rows = _goodput_rows(tab)
    assert rows["Effective training time ratio"] == (f"{g.effective_ratio * 100:.2f}", "%")
    assert rows["Days to train, without failures"] == (f"{window.last_result.training.days:,.2f}", "days")
    assert rows["Checkpoint interval (Young/Daly)"] == (f"{g.checkpoint_interval_s / 60:.1f}", "min")
    assert rows["Checkpoint write"][1] == "s"
    assert "  interruptions from NICs" in rows and "  interruptions from switches" in rows
    spare = rows["Chance a hot spare is free"]
    assert spare[1] == "%" and float(spare[0]) > 99

    # No hot spares: a failed server is waited for, and the rows say so.
    spin = tab.spares
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "0")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: _goodput_rows(tab)["Chance a hot spare is free"] == ("0.00", "%"), timeout=30_000)
    restart = _goodput_rows(tab)["Restart and recovery per interruption"]
    assert restart[1] == "h" and float(restart[0]) > 1


def test_the_right_click_menu_sets_the_what_if_apart_from_the_editing_actions(make_window, qtbot):
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    view = window.view
    pos = view.mapFromScene(window.scene.nodes["spines.sw"].sceneBoundingRect().center())
    shown: list[list] = []

    def read_and_close():
        menu = QApplication.activePopupWidget()
        if menu is None:
            QTimer.singleShot(10, read_and_close)
            return
        shown.append([(a.isSeparator(), a.text().replace("&", "")) for a in menu.actions() if a.isVisible()])
        menu.close()

    QTimer.singleShot(0, read_and_close)
    QApplication.sendEvent(view.viewport(),
                           QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos)))
    entries = shown[0]
    fail = entries.index((False, "Fail"))
    assert entries[fail - 1][0], "a separator above Fail"
    assert [text for _sep, text in entries[fail:]] == ["Fail", "Fail One Copy", "Fail Some Copies…"]


def test_a_summary_card_says_how_many_failed_parts_it_hides(make_window, qtbot, tmp_path):
    # Reopened at Zoom to Fit on a laptop window, the failed spine sat inside the "16 spines" card:
    # nothing on the canvas said any part was marked failed.
    design = load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog())
    design.settings["failures"] = [{"target": "spines.sw", "copies": 1}]
    path = tmp_path / "one-spine.cluster.json"
    save_design(design, path)
    window = make_window(load_design(path, default_catalog()))
    window.resize(1280, 800)
    window.view.zoom_to_fit()
    card = window.scene.nodes["spines"]
    qtbot.waitUntil(lambda: card.card and window_settled(window), timeout=30_000)
    assert _shown_texts(card)[1].split("\n")[0] == "1 failed"
    window.act_restore_all.trigger()
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    assert "failed" not in _shown_texts(card)[1]
    window.act_undo.trigger()
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    assert _shown_texts(card)[1].startswith("1 failed")


def _shown_texts(node) -> list[str]:
    return [c.text() for c in node.plate.childItems() if isinstance(c, QGraphicsSimpleTextItem) and c.isVisible()]


def test_the_cost_bars_say_their_figures_at_their_ends_and_under_the_mouse(make_window, qtbot):
    # The yearly components (IT depreciation, electricity…) were given nowhere as figures, and
    # neither chart said a figure when pointed at.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    tab = _click_tab(window, qtbot, "cost")
    cost = window.last_result.cost
    _settle(window, qtbot)
    assert tab.yearly_values["electricity"].toPlainText() == f" {money(cost.yearly_by_category_usd['electricity'])}"
    assert tab.yearly_values["colocation"].toPlainText() == ""  # built, not rented: nothing to say
    # The longest bar's figure ends inside the plot.
    label = tab.yearly_values["it_depreciation"]
    assert label.sceneBoundingRect().right() <= tab.yearly_plot.vb.sceneBoundingRect().right()

    view = tab.view

    def rest_on(plot, x: float, y: float) -> str:
        """Rest the mouse on a point of a plot: Qt asks the view for a tooltip there."""
        pos = view.mapFromScene(plot.vb.mapViewToScene(QPointF(x, y)))
        QTest.mouseMove(view.viewport(), pos)
        QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
        return QToolTip.text() if QToolTip.isVisible() else ""

    accelerators = tab.capital_bars["accelerators_and_servers"]
    value = cost.capital_by_category_usd["accelerators_and_servers"]
    assert rest_on(tab.capital_plot, accelerators.opts["x0"][0] + accelerators.opts["width"][0] / 2, 0) == (
        f"Accelerators and servers: {money(value)}, {value / cost.capital_usd:.0%} of the capital cost")
    electricity = tab.yearly_bars["electricity"].opts["width"][0]
    y = -list(tab.yearly_bars).index("electricity")
    assert rest_on(tab.yearly_plot, electricity / 2, y) == (
        f"Electricity: {money(cost.yearly_by_category_usd['electricity'])} per year")
    rest_on(tab.yearly_plot, electricity / 2, y - 1)  # the colocation row: no bar, no tip
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=5_000)


def test_the_what_if_line_names_a_few_failures_and_counts_the_rest(make_window, qtbot):
    # Select All ▸ Fail marks every part: the line named each (tens of thousands on a big design).
    from tests.helpers import flat_grid

    window = make_window(flat_grid(4, wrap=False, hosts=True))
    window.act_select_all.trigger()
    window.act_fail.trigger()
    marked = len(window.document.design.settings["failures"])
    assert marked == 4 + 24  # the 4 hosts and the 24 links of a 4 × 4 mesh
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result.degraded is not None, timeout=30_000)
    tab = _click_tab(window, qtbot, "goodput")
    named = tab.whatif_label.text().split("</b>")[0]
    assert named.endswith(f"and {marked - 5:,} more failed") and named.count("Host ") + named.count("link ") == 5
    # A link failed with the host at its end is simply gone: the what-if was refused ("failure
    # 'h2-2': no item, link or link medium 'h2-2' in the design") and compared nothing.
    degraded = window.last_result.degraded
    assert degraded.why is None or "no item" not in degraded.why
    assert degraded.cut_off == 16 and tab.rows_shown()


# -- the results panel on a laptop-sized window ------------------------------------------------------

def test_the_training_tabs_plan_shows_every_line_at_1280x800(make_window, qtbot):
    # The plan wraps to three lines there; the page was squeezed to the panel and cut the last off.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su", (1280, 800))
    tab = _click_tab(window, qtbot, "training")
    _settle(window, qtbot)
    plan = tab.labels["plan"]
    assert "(chosen by the auto plan)" in plan.text()
    assert plan.heightForWidth(plan.width()) > 2 * plan.fontMetrics().lineSpacing(), "expected a wrapped plan"
    assert plan.height() >= plan.heightForWidth(plan.width())
    # Scrolled to, it is shown whole: the page scrolls rather than cutting rows off.
    tab.page.ensureWidgetVisible(plan)
    _settle(window, qtbot)
    shown = plan.visibleRegion().boundingRect()
    assert shown.height() == plan.height() and shown.width() == plan.width()


def test_the_summarys_metric_names_are_shown_whole_at_1280x800(make_window, qtbot):
    # The values' column took 300 px for a long list of parts, eliding "Scale-out bisection band…".
    from PySide6.QtWidgets import QStyle

    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su", (1280, 800))
    tab = _click_tab(window, qtbot, "summary")
    _settle(window, qtbot)
    table = tab.table
    margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert "Restart and recovery per interruption" in names
    cut = [name for name in names if table.fontMetrics().horizontalAdvance(name) + margin > table.columnWidth(0)]
    assert not cut
    # The figures fit their column too; only a long text (a list of parts) is elided, whole in its tooltip.
    for r in range(table.rowCount()):
        value = table.item(r, 1)
        if isinstance(value.data(Qt.ItemDataRole.UserRole), (int, float)):
            assert table.fontMetrics().horizontalAdvance(value.text()) + margin <= table.columnWidth(1)


def test_the_overlap_fields_names_stand_apart_from_the_field_before(make_window, qtbot):
    # "full ▾DP": each name touched the box before it and read as that box's.
    from designer.ui.results.workload import OVERLAP_GAP

    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su", (1280, 800))
    tab = _click_tab(window, qtbot, "training")
    _settle(window, qtbot)
    combos = list(tab.workload_form.overlap_combos.values())
    row = combos[0].parentWidget()
    names = sorted((w for w in row.findChildren(QLabel) if w.text() in ("DP", "PP", "CP", "EP")
                    and abs(w.geometry().center().y() - combos[0].geometry().center().y()) < 4),
                   key=lambda w: w.x())
    assert [w.text() for w in names] == ["DP", "PP", "CP", "EP"]
    for before, name in zip(combos, names):
        assert name.geometry().left() - before.geometry().right() >= OVERLAP_GAP
