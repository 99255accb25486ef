"""The Cost tab: capital and yearly cost plotted from the engine's cost section, the assumptions
edited there as an undoable design setting, saved with the file, and unpriced parts said."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate
from tests.helpers import without_storage_and_spares
from tests.helpers.gui import choose_example


@pytest.fixture
def dgx_window(make_window):
    return make_window(generate("server", default_catalog(), platform="dgx-h100"))


def _show_cost_tab(window, qtbot):
    panel = window.results
    bar = panel.tabs.tabBar()
    index = list(panel.sections).index("cost")
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert panel.tabs.currentIndex() == index
    return panel.cost


def _type_into(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


def _electricity(window) -> float:
    return window.last_result.cost.yearly_by_category_usd["electricity"]


def test_editing_an_assumption_is_an_undo_step_and_changes_the_figures(dgx_window, qtbot, tmp_path):
    window, doc = dgx_window, dgx_window.document
    assert window.scheduler.wait_idle(30_000)
    tab = _show_cost_tab(window, qtbot)
    bar = tab.yearly_bars["electricity"]
    width_before = bar.opts["width"][0]
    spent_before = _electricity(window)
    assert width_before > 0 and tab.labels["per_accelerator_hour_usd"].text().startswith("$")
    spin = tab.assumptions.editors["electricity_usd_per_kwh"]
    assert spin.value() == pytest.approx(0.08)
    before = window.evaluations
    _type_into(qtbot, spin, "0.16")
    assert doc.design.settings["cost"] == {"electricity_usd_per_kwh": 0.16}
    assert doc.undo_stack.undoText() == "Change cost assumptions"
    qtbot.waitUntil(lambda: window.evaluations > before
                    and window.last_result.cost.assumptions["electricity_usd_per_kwh"] == 0.16, timeout=30_000)
    qtbot.waitUntil(lambda: bar.opts["width"][0] == pytest.approx(2 * width_before), timeout=10_000)
    assert _electricity(window) == pytest.approx(2 * spent_before)

    path = tmp_path / "priced.cluster.json"
    save_design(doc.design, path)  # what Save writes, without joining the recent files other tests read
    assert load_design(path).settings["cost"] == {"electricity_usd_per_kwh": 0.16}

    before = window.evaluations
    window.act_undo.trigger()
    assert "cost" not in doc.design.settings
    assert spin.value() == pytest.approx(0.08)
    qtbot.waitUntil(lambda: window.evaluations > before and _electricity(window) == pytest.approx(spent_before),
                    timeout=30_000)
    qtbot.waitUntil(lambda: bar.opts["width"][0] == pytest.approx(width_before), timeout=10_000)


def test_choosing_colocation_moves_the_facility_from_capital_to_yearly_cost(dgx_window, qtbot):
    window, doc = dgx_window, dgx_window.document
    assert window.scheduler.wait_idle(30_000)
    tab = _show_cost_tab(window, qtbot)
    facility = tab.assumptions.editors["facility"]
    assert not tab.assumptions.editors["colocation_usd_per_kw_month"].isEnabled()
    capital_before = window.last_result.cost.capital_usd
    before = window.evaluations
    facility.setCurrentText("colocation")  # a combo box's choice, as a user's pick emits it
    assert doc.design.settings["cost"] == {"facility": "colocation"}
    assert tab.assumptions.editors["colocation_usd_per_kw_month"].isEnabled()
    assert not tab.assumptions.editors["facility_usd_per_kw"].isEnabled()
    qtbot.waitUntil(lambda: window.evaluations > before and window.last_result.cost.assumptions["facility"]
                    == "colocation", timeout=30_000)
    cost = window.last_result.cost
    assert cost.capital_usd < capital_before and cost.yearly_by_category_usd["colocation"] > 0
    qtbot.waitUntil(lambda: tab.yearly_bars["colocation"].opts["width"][0] > 0, timeout=10_000)


def test_unpriced_parts_are_named_and_nothing_priced_is_said(make_window, qtbot):
    window = make_window(without_storage_and_spares(generate("server", default_catalog(), platform="tpu-v4-host")))
    assert window.scheduler.wait_idle(30_000)
    tab = _show_cost_tab(window, qtbot)
    qtbot.waitUntil(lambda: not tab.plot_page.showing_content, timeout=10_000)
    assert "Nothing in this design has a price" in tab.plot_page.message.text()
    assert "tpu-v4" in tab.labels["unpriced_parts"].text()
    assert tab.labels["per_accelerator_hour_usd"].text() == "not computed"
    assert tab.labels["run_energy_mwh"].text().endswith("MWh at the meter")  # energy needs no price
    # What no figure counts is said, priced or not.
    assert "staff" in tab.labels["not_counted"].text() and "spares' network cabling" in tab.labels["not_counted"].text()


def test_a_finer_figure_from_the_file_survives_an_edit_of_another(dgx_window, qtbot):
    window, doc = dgx_window, dgx_window.document
    doc.set_setting("cost", {"pue": 1.234}, "Change cost assumptions")
    assert window.scheduler.wait_idle(30_000)
    tab = _show_cost_tab(window, qtbot)
    form = tab.assumptions
    assert form.editors["pue"].text() == "1.23"
    spin = form.editors["depreciation_years"]
    spin.setFocus()
    qtbot.keyClick(spin, Qt.Key.Key_Up)  # 5 → 6 years
    assert doc.design.settings["cost"] == {"pue": 1.234, "depreciation_years": 6.0}


def test_a_category_of_only_unpriced_parts_says_so_in_the_text_and_the_legend(make_window, qtbot):
    # Checkpoints to FSx for Lustre, which is rented (billed per GB-month): no price as hardware.
    design = generate("server", default_catalog(), platform="dgx-h100")
    design.settings["storage"] = {"part": "aws-fsx-lustre-1000", "count": 100}
    window = make_window(design)
    assert window.scheduler.wait_idle(30_000)
    tab = _show_cost_tab(window, qtbot)
    qtbot.waitUntil(lambda: tab.plot_page.showing_content, timeout=10_000)
    named = f"{default_catalog()['aws-fsx-lustre-1000'].name} (aws-fsx-lustre-1000)"
    assert f"; storage unpriced: {named};" in tab.labels["capital_usd"].text()
    assert "storage $0" not in tab.labels["capital_usd"].text()
    assert tab.capital_legend["storage"].text == "Storage (unpriced)"  # its parts are named in the text
    assert tab.capital_legend["scale_up_network"].text == "Scale-up network"
    assert tab.capital_bars["storage"].opts["width"][0] == 0


def test_an_opened_example_says_which_figures_are_derived_estimates(make_window, qtbot, monkeypatch):
    # The GigaIO SuperNODE from the example gallery: GigaIO and DDN publish no price, so both are
    # counted at a derived estimate, which the Cost tab names; nothing is left unpriced.
    from designer.io.examples import example_paths
    from designer.ui import dialogs

    window = make_window()
    chosen = next(path for path in example_paths() if path.name.startswith("gigaio-supernode"))

    def accept(dialog):
        row = example_paths().index(chosen)
        choose_example(dialog, row)
        return dialog.result()

    monkeypatch.setattr(dialogs.ExampleGallery, "exec", accept)
    recent = window.recent_files()
    window.act_open_example.trigger()
    qtbot.waitUntil(lambda: str(window.document.path) == str(chosen), timeout=10_000)
    window.settings.setValue("recentFiles", recent)  # the session's recent files stay as other tests expect
    assert window.scheduler.wait_idle(30_000)
    tab = _show_cost_tab(window, qtbot)
    qtbot.waitUntil(lambda: tab.plot_page.showing_content, timeout=10_000)
    derived = tab.labels["derived_parts"].text()
    ddn, rack, node = (f"{default_catalog()[part].name} ({part})"
                       for part in ("ddn-ai400x2", "rack-42u", "supernode-32"))
    assert derived.startswith(f"price: {ddn}, {rack}, {node}; power: {ddn}, {node}")
    assert "estimated from comparable parts' published figures" in derived
    assert tab.labels["unpriced_parts"].text() == "none"
    assert "storage $" in tab.labels["capital_usd"].text()
    assert tab.labels["per_accelerator_hour_usd"].text().endswith("per accelerator-hour in use")
