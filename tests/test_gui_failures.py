"""Failure what-ifs in the app: right-click ▸ Fail is one undo step, the failed part is drawn
struck through, the Goodput tab shows the degraded figures next to the healthy ones, and the
blast radius is in the tooltip and the inspector."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from designer.canvas import colors
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from tests.helpers.gui import right_click_and_choose, show_what_if, strike_of, what_if_rows


@pytest.fixture
def superpod(make_window):
    window = make_window(load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    return window


def test_right_click_fail_is_an_undo_step_drawn_struck_through_and_compared(superpod, qtbot):
    window = superpod
    healthy_bisection = window.last_result.network.scale_out.bisection_gb_per_s
    right_click_and_choose(qtbot, window, "spines.sw", "Fail One Copy")
    assert window.document.design.settings["failures"] == [{"target": "spines.sw", "copies": 1}]
    assert window.document.undo_stack.undoText() == "Fail One Copy"
    node = window.scene.nodes["spines.sw"]
    strike = strike_of(node)
    assert strike is not None and strike.pen().color() == QColor(colors.FAILED)
    rows = what_if_rows(window, qtbot)
    bisection = rows["Scale-out bisection (GB/s)"]
    assert bisection[1:3] == (f"{healthy_bisection:,.0f}", f"{healthy_bisection * 15 / 16:,.0f}")
    assert bisection[3].startswith(f"{-healthy_bisection / 16:+,.4g}") and "(-6.2%)" in bisection[3]
    assert rows["Accelerators in the job"][1:] == ("1,024", "1,024", "±0")
    assert "What-if: 1 of 16 × Spine failed" in window.results.goodput.whatif_label.text()
    # A change is red when it is worse (less bandwidth), green when better (one spine fewer to
    # fail: fewer interruptions), and never in exponent form.
    table = window.results.goodput.degraded_table
    change = {table.item(r, 0).text(): table.item(r, 3) for r in range(table.rowCount())}
    assert change["Scale-out bisection (GB/s)"].foreground().color() == QColor(colors.FAILED)
    assert change["Interruptions per day (/day)"].foreground().color() == QColor(colors.GOOD)
    assert not any("e-" in cell.text() or "e+" in cell.text() for cell in change.values())

    window.act_undo.trigger()
    assert "failures" not in window.document.design.settings
    assert strike_of(node) is None
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result.degraded is None, timeout=30_000)
    assert window.results.goodput.rows_shown() == []


def test_fail_a_link_then_restore(superpod, qtbot):
    window = superpod
    link_id = "su.leaf0--spines.sw"
    window.scene.select_ids([link_id])
    assert window.act_fail.isEnabled() and not window.act_restore.isEnabled()
    window.act_fail.trigger()
    link = window.scene.link_items[link_id]
    assert link.failed and link.pen().style() == Qt.PenStyle.DashLine
    assert link.pen().color() == QColor(colors.FAILED)
    window.scene.select_ids([link_id])
    assert window.act_restore.isEnabled()
    window.act_restore.trigger()
    assert not link.failed and link.pen().style() == Qt.PenStyle.SolidLine
    assert window.document.undo_stack.undoText() == "Restore"


def test_blast_radius_in_tooltip_and_inspector(superpod):
    window = superpod
    assert "Blast radius of one copy: 0 accelerators cut off, 1,024 slowed" in window.scene.tooltip_for("spines.sw")
    window.scene.select_ids(["su.node"])
    assert window.inspector.fields["blast_radius"].text() == "8 accelerators cut off, 0 slowed"
    assert "8 accelerators cut off" in window.scene.tooltip_for("su.node")


def test_hot_spares_are_an_undoable_setting_whose_effect_shows(superpod, qtbot):
    window = superpod
    window.results.tabs.setCurrentWidget(window.results.goodput.page)
    spin = window.results.goodput.spares
    assert spin.value() == 3  # the example's 2 % of 128 servers
    restart_with = window.last_result.goodput.restart_s
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "0")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert window.document.design.settings.get("spares") is None
    assert window.document.undo_stack.undoText() == "Change hot spares"
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result.goodput.spares == 0, timeout=30_000)
    assert window.last_result.goodput.restart_s > 10 * restart_with
    window.act_undo.trigger()
    assert window.document.design.settings["spares"] == 3
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: spin.value() == 3, timeout=30_000)


def test_a_big_designs_blast_radius_is_worked_out_off_the_ui_thread(superpod, qtbot, monkeypatch):
    window = superpod
    # Count the default example as big: the index is built on a helper thread.
    monkeypatch.setattr("designer.canvas.scene.BLAST_CONNECTIVITY_MAX_ITEMS", 10)
    window.document.set_item("su.leaf0", name="Leaf zero")  # any change drops the cached index
    with qtbot.waitSignal(window.scene.blastReady, timeout=30_000):
        assert "Blast radius of one copy: computing…" in window.scene.tooltip_for("spines.sw")
    assert "0 accelerators cut off, 1,024 slowed" in window.scene.tooltip_for("spines.sw")
    window.scene.select_ids(["su.node"])
    assert window.inspector.fields["blast_radius"].text() == "8 accelerators cut off, 0 slowed"


def test_one_leaf_of_one_unit_slows_the_allreduce_in_the_goodput_tab(superpod, qtbot):
    # One rail leaf of one of the 4 units: its 32 servers send rail 3 over NVLink to the other
    # NICs (7/8 of 48.5 GB/s per GPU), and the allreduce over all 1,024 GPUs runs at their pace
    # (tests/test_degraded_collectives.py has the hand computation).
    window = superpod
    right_click_and_choose(qtbot, window, "su.leaf3", "Fail One Copy")
    assert window.document.design.settings["failures"] == [{"target": "su.leaf3", "copies": 1}]
    rows = what_if_rows(window, qtbot)
    assert rows["allreduce 8 GiB bus bandwidth (GB/s)"][1:3] == ("336.1", "310.5")
    assert "(-7.6%)" in rows["allreduce 8 GiB bus bandwidth (GB/s)"][3]
    assert rows["Scale-out injection per accelerator (achieved) (GB/s)"][1:3] == ("48.5", "42.44")
    assert rows["Scale-out bisection (GB/s)"][1:3] == ("25,600", "24,000")
    assert rows["Accelerators in the job"][1:] == ("1,024", "1,024", "±0")


def test_select_all_offers_fail_one_copy_only_where_a_group_replicates_and_restore_only_with_marks(make_window, qtbot):
    """Select All on a flat design (no replicated group) offers Fail but not Fail One Copy; with a
    mark it offers Restore too; on a design whose groups stand for several copies it offers Fail One
    Copy."""
    from tests.helpers import flat_grid, mini_fat_tree

    window = make_window(flat_grid(4, wrap=False, hosts=True))
    window.act_select_all.trigger()
    assert window.act_fail.isEnabled() and not window.act_fail_one.isEnabled()
    assert not window.act_restore.isEnabled()
    window.act_fail.trigger()
    design = window.document.design
    hosts = {i for i, item in design.items.items() if item.parent is None}
    assert {e["target"] for e in design.settings["failures"]} == hosts | set(design.links)
    window.act_select_all.trigger()
    assert window.act_restore.isEnabled() and not window.act_fail.isEnabled()

    replicated = make_window(mini_fat_tree())
    replicated.act_select_all.trigger()
    assert replicated.act_fail_one.isEnabled() and replicated.act_fail.isEnabled()


def test_a_failed_tpu_cube_shows_the_job_moved_to_a_slice_of_intact_cubes(make_window, qtbot):
    # The pod's cubes (a rack each) meet through optical circuit switches: with one cube failed the
    # job moves to the largest slice of intact cubes (tests/test_torus_slice.py).
    window = make_window(load_design(resolve_design_path("google-tpu-v4-pod"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    right_click_and_choose(qtbot, window, "rack0", "Fail One Copy")
    assert window.document.design.settings["failures"] == [{"target": "rack0", "copies": 1}]
    text = show_what_if(window, qtbot).whatif_label.text()
    assert "3,072 accelerators run the job, 64 cut off." in text
    assert ("The job moved to a 12 × 16 × 16 slice of 48 intact 4 × 4 × 4 blocks (3,072 chips), its torus closed "
            "again through the circuit switches: 540,806 tokens/s against ") in text
    assert "in place around 64 missing chips." in text
    rows = {row[0]: row for row in window.results.goodput.rows_shown()}
    assert rows["Accelerators in the job"][1:3] == ("4,096", "3,072")


def test_a_failed_circuit_switch_shows_its_broken_lines_in_the_goodput_tab(make_window, qtbot):
    # Every cube meets its x neighbours at face position 0 through ocs0-0: failed, 16 of the 256
    # x lines lose their links between cubes (tests/test_failed_circuit_switch.py), the cut
    # across x 480 links of 512, and the job stays where it is.
    window = make_window(load_design(resolve_design_path("google-tpu-v4-pod"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    right_click_and_choose(qtbot, window, "ocs0-0", "Fail")
    assert window.document.design.settings["failures"] == [{"target": "ocs0-0"}]
    text = show_what_if(window, qtbot).whatif_label.text()
    assert "4,096 accelerators run the job, 0 cut off." in text
    assert "16 of the 256 lines along x broken, rerouted over neighbouring lines" in text
    assert "no slice avoids it" in text
    rows = {row[0]: row for row in window.results.goodput.rows_shown()}
    assert rows["Scale-up domain bisection (GB/s)"][3] == "-1,500 (-6.3%)"


def test_fail_and_restore_follow_the_marks_without_selecting_again(superpod, qtbot):
    window = superpod
    link_id = "su.leaf0--spines.sw"
    window.scene.select_ids([link_id])
    window.act_fail.trigger()
    # The same selection, just failed: the menus offer Restore (and Restore All) and no more Fail.
    assert window.act_restore.isEnabled() and not window.act_fail.isEnabled()
    what_if = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Design")
    submenu = next(a.menu() for a in what_if.actions() if a.menu() and "What-If" in a.text())
    assert {a.text().replace("&", ""): a.isEnabled() for a in submenu.actions() if a.text()}["Restore"]
    assert window.act_restore_all.isEnabled()
    window.act_restore.trigger()
    assert window.act_fail.isEnabled() and not window.act_restore.isEnabled()
    window.document.undo_stack.undo()  # the Restore undone: the link is failed again
    assert window.act_restore.isEnabled() and not window.act_fail.isEnabled()
