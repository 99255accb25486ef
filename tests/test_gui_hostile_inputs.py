"""Hostile input in the app to what issue 15 added: a cost assumption or a number of hot spares
typed out of range (or not a number) is refused in place with the reason, and nothing changes;
a failed part deleted takes its mark along, so the saved file opens; failing everything says
nothing trains."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from designer.io.examples import resolve_design_path
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate
from designer.ui.results import goodput
from tests.helpers import nested_matched_groups, refusal
from tests.helpers.gui import answer_fail_copies, right_click_and_choose, show_what_if, strike_of, what_if_rows


def type_into(qtbot, spin, text: str) -> None:
    """Select the field's number, type `text` key by key and press Return, as a user does."""
    spin.setFocus()
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


@pytest.mark.parametrize("key, typed, words", [
    ("pue", "-1", "PUE: expected a number from 1 to 3, got '-1'; kept 1.30"),
    ("pue", "0.5", "PUE: expected a number from 1 to 3, got '0.5'"),
    ("pue", "1e3", "PUE: expected a number from 1 to 3, got '1e3'"),
    ("utilization", "1.5", "Utilization: expected a number from 0.01 to 1, got '1.5'; kept 0.80"),
    ("utilization", "0", "Utilization: expected a number from 0.01 to 1, got '0'"),
    ("depreciation_years", "abc", "IT depreciation: expected a number from 1 to 20 years, got 'abc'; kept 5.0 years"),
    ("facility_usd_per_kw", "1000000", "Facility capital: expected a number from 0 to 100,000 USD/kW, got '1000000'"),
])
def test_a_cost_assumption_typed_out_of_range_is_refused_with_the_reason(make_window, qtbot, key, typed, words):
    window = make_window(generate("server", default_catalog(), platform="dgx-h100"))
    assert window.scheduler.wait_idle(30_000)
    form = window.results.cost.assumptions
    spin = form.editors[key]
    before = spin.value()
    type_into(qtbot, spin, typed)
    assert form.refusal.isVisibleTo(form.box) and form.refusal.text().startswith(words)
    assert spin.value() == before
    assert "cost" not in window.document.design.settings
    assert window.document.undo_stack.count() == 0
    # A value in range is then taken as one undo step, and the reason goes away.
    type_into(qtbot, window.results.cost.assumptions.editors["pue"], "1.2")
    assert window.document.design.settings["cost"] == {"pue": 1.2}
    assert window.document.undo_stack.count() == 1 and not form.refusal.isVisibleTo(form.box)


def test_a_cost_assumption_with_more_decimals_than_shown_is_rounded_to_them(make_window, qtbot):
    window = make_window(generate("server", default_catalog(), platform="dgx-h100"))
    assert window.scheduler.wait_idle(30_000)
    form = window.results.cost.assumptions
    type_into(qtbot, form.editors["facility_years"], "12.26")
    type_into(qtbot, form.editors["utilization"], "0.756")
    assert window.document.design.settings["cost"] == {"facility_years": 12.3, "utilization": 0.76}
    assert not form.refusal.isVisibleTo(form.box) and window.document.undo_stack.count() == 2


def test_hot_spares_typed_out_of_range_or_not_whole_are_refused(make_window, qtbot):
    window = make_window(generate("server", default_catalog(), platform="dgx-h100"))
    assert window.scheduler.wait_idle(30_000)
    goodput = window.results.goodput
    window.results.tabs.setCurrentWidget(goodput.page)
    assert window.document.design.settings["spares"] == goodput.spares.value() == 1  # the template's
    for typed in ("1.5", "-1", "2000000", "two"):
        type_into(qtbot, goodput.spares, typed)
        assert goodput.spares_refusal.isVisibleTo(goodput.page)
        assert goodput.spares_refusal.text() == (
            f"Hot spare servers: expected a whole number from 0 to 1,000,000, got '{typed}'; kept 1")
        assert window.document.design.settings["spares"] == goodput.spares.value() == 1
        assert window.document.undo_stack.count() == 0
    type_into(qtbot, goodput.spares, "2.0")  # a whole number, written with a decimal point
    assert window.document.design.settings["spares"] == 2 and not goodput.spares_refusal.isVisibleTo(goodput.page)


@pytest.fixture
def superpod(make_window):
    window = make_window(load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    return window


def test_deleting_a_failed_part_takes_its_mark_along_and_undo_brings_both_back(superpod, qtbot, tmp_path):
    window, doc = superpod, superpod.document
    right_click_and_choose(qtbot, window, "su.leaf0", "Fail")
    assert doc.design.settings["failures"] == [{"target": "su.leaf0"}]
    window.scene.select_ids(["su.leaf0"])
    window.act_delete.trigger()  # Edit ▸ Delete
    assert "su.leaf0" not in doc.design.items and "failures" not in doc.design.settings
    path = tmp_path / "deleted.cluster.json"
    save_design(doc.design, path)  # what Save writes
    assert "su.leaf0" not in load_design(path, default_catalog()).items  # the file opens again
    window.act_undo.trigger()
    assert doc.design.settings["failures"] == [{"target": "su.leaf0"}]
    assert strike_of(window.scene.nodes["su.leaf0"]) is not None


def test_one_copy_of_a_matched_group_fails_with_its_partners_and_shows_the_degraded_table(make_window, qtbot):
    # Meta RSC phase 2's core groups are joined copy for copy to each block's spines: one core group
    # of 20 switches is split out with the spines it pairs with, 1/20 of the ways out of a block.
    window = make_window(load_design(resolve_design_path("meta-rsc-phase2"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    right_click_and_choose(qtbot, window, "core", "Fail One Copy")
    assert window.document.design.settings["failures"] == [{"target": "core", "copies": 1}]
    assert window.document.undo_stack.undoText() == "Fail One Copy"
    assert strike_of(window.scene.nodes["core"]) is not None
    page = show_what_if(window, qtbot)
    assert page.degraded_table.isVisible()
    rows = {row[0]: row for row in page.rows_shown()}
    assert rows["Accelerators in the job"][1:] == ("16,000", "16,000", "±0")
    bisection = rows["Scale-out bisection (GB/s)"]
    assert bisection[1:3] == ("200,000", "190,000") and "(-5.0%)" in bisection[3]
    assert page.whatif_label.text().endswith("What-if: 1 of 20 × 20 core groups failed</b> — 16,000 accelerators "
                                             "run the job, 0 cut off.")


def test_one_copy_of_matched_groups_one_inside_the_other_is_refused_before_it_is_marked(make_window, qtbot):
    window = make_window(nested_matched_groups())
    assert window.scheduler.wait_idle(30_000)
    right_click_and_choose(qtbot, window, "A", "Fail One Copy")  # the group's card, at Zoom to Fit
    assert "failures" not in window.document.design.settings and window.document.undo_stack.count() == 0
    assert window.statusBar().currentMessage() == f"Fail One Copy: {refusal('A')}"
    right_click_and_choose(qtbot, window, "A", "Fail")  # every copy can fail
    assert window.document.design.settings["failures"] == [{"target": "A"}]


def test_some_copies_of_a_matched_group_fail_by_count_or_are_refused_where_groups_nest(make_window, qtbot):
    from PySide6.QtCore import QTimer

    # Meta RSC phase 2: 3 of the 20 core groups (each matched with a copy of every rail's spines).
    window = make_window(load_design(resolve_design_path("meta-rsc-phase2"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    seen: list[str] = []
    QTimer.singleShot(0, lambda: answer_fail_copies(qtbot, "failCount", "3", seen))
    right_click_and_choose(qtbot, window, "core", "Fail Some Copies…")
    assert window.document.design.settings["failures"] == [{"target": "core", "copies": 3}]
    rows = what_if_rows(window, qtbot)
    assert rows["Scale-out bisection (GB/s)"][1:3] == ("200,000", "170,000")  # 17 of 20 ways out of a block

    nested = make_window(nested_matched_groups())
    assert nested.scheduler.wait_idle(30_000)
    QTimer.singleShot(0, lambda: answer_fail_copies(qtbot, "failCount", "1", seen))
    right_click_and_choose(qtbot, nested, "A", "Fail Some Copies…")
    assert "failures" not in nested.document.design.settings and nested.document.undo_stack.count() == 0
    assert nested.statusBar().currentMessage() == f"Fail Some Copies: {refusal('A')}"


def test_failing_everything_says_nothing_trains(superpod, qtbot):
    window = superpod
    window.act_select_all.trigger()
    assert window.act_fail.isEnabled()
    window.act_fail.trigger()
    show_what_if(window, qtbot)
    degraded = window.last_result.degraded
    assert degraded.accelerators == 0 and degraded.cut_off == 1024 and degraded.figures
    label = window.results.goodput.whatif_label.text()
    assert "nothing trains" in label
    # Every top-level item and link is marked: the line names a few and counts the rest.
    named = goodput.WHAT_IF_NAMED
    assert len(degraded.failures) > named and f"and {len(degraded.failures) - named:,} more failed" in label
    rows = {row[0]: row for row in window.results.goodput.rows_shown()}
    assert rows["Accelerators in the job"][1:3] == ("1,024", "0")
    assert rows["Interruptions per day (/day)"][2] == "—"
    # The healthy side is the healthy design's own.
    assert window.last_result.training.timed and rows["Training step time (s)"][1] != "—"
