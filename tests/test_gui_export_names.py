"""The results panel and the File ▸ Export CSVs as a user reads them: parts by name (their ids
beside), the BOM's closing rows adding up to the capital the Cost tab shows, and a what-if's
degraded figures in the exported summary beside the healthy ones."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from designer.ui.results.cost import money
from tests.helpers.gui import show_what_if

STORAGE = "DDN AI400X2 (EXAScaler parallel file system appliance) (ddn-ai400x2)"


@pytest.fixture
def superpod(make_window):
    window = make_window(load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog()))
    assert window.scheduler.wait_idle(30_000)
    return window


@pytest.fixture
def save_as(monkeypatch):
    """Answers File ▸ Export's save dialog with the path in `answer["path"]`."""
    answer: dict = {}
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, title, suggested, filter_: (answer["path"], filter_)))
    return answer


def _show_tab(window, name: str):
    panel = window.results
    panel.tabs.setCurrentIndex(list(panel.sections).index(name))
    return panel.sections[name]


def _export(window, action, save_as, path: Path) -> list[list[str]]:
    save_as["path"] = str(path)
    action.trigger()
    with path.open(newline="") as f:
        return list(csv.reader(f))


def test_the_cost_and_goodput_tabs_name_parts(superpod):
    cost = _show_tab(superpod, "cost")
    derived = cost.labels["derived_parts"].text()
    assert derived.startswith(f"price: {STORAGE}, 42U rack for 4 DGX H100 (40.8 kW) (rack-42u-superpod); "
                              f"power: {STORAGE} — ")
    goodput = _show_tab(superpod, "goodput")
    table = goodput.goodput_table
    rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert rows["Storage"] == STORAGE
    # The long name is elided (whole in its tooltip), never squeezing the figures' names.
    storage = next(table.item(r, 1) for r in range(table.rowCount()) if table.item(r, 0).text() == "Storage")
    assert storage.toolTip() == STORAGE
    longest = max(table.fontMetrics().horizontalAdvance(table.item(r, 0).text()) for r in range(table.rowCount()))
    assert table.columnWidth(0) >= longest
    summary = _show_tab(superpod, "summary")
    assert ("Accelerators: NVIDIA H100 SXM5 80GB (h100-sxm)", "1,024", "count") in summary.rows_shown()


def test_the_exported_bom_adds_up_to_the_capital_the_cost_tab_shows(superpod, save_as, tmp_path):
    cost = _show_tab(superpod, "cost")
    bom = _export(superpod, superpod.act_export_bom, save_as, tmp_path / "bom.csv")
    subtotal, facility, total = bom[-3:]
    capital = float(total[5])
    assert total[:3] == ["total", "", "Capital cost (parts total + facility)"]
    assert capital == superpod.last_result.cost.capital_usd
    # The figure the Cost tab leads with, and the facility line that explains the gap to the parts.
    assert cost.labels["capital_usd"].text().startswith(money(capital) + " (")
    assert float(subtotal[5]) + float(facility[5]) == pytest.approx(capital, abs=0.01)
    assert cost.labels["facility_usd"].text().startswith(f"{money(float(facility[5]))}: 10,000 USD/kW × ")
    assert f"parts {money(float(subtotal[5]))} (the BOM) + facility = the capital cost" in \
        cost.labels["facility_usd"].text()


def test_the_exported_summary_of_a_what_if_has_the_degraded_figures_by_the_healthy_ones(superpod, qtbot, save_as,
                                                                                         tmp_path):
    window = superpod
    window.scene.select_ids(["spines.sw"])
    assert window.act_fail_one.isEnabled()
    window.act_fail_one.trigger()
    goodput = show_what_if(window, qtbot)
    qtbot.waitUntil(lambda: goodput.degraded_table.rowCount() > 0, timeout=10_000)
    shown = goodput.rows_shown()
    summary = _export(window, window.act_export_summary, save_as, tmp_path / "summary.csv")
    assert summary[0] == ["metric", "value", "unit", "what_if_value", "what_if_change"]
    rows = {row[0]: row[1:] for row in summary}
    # What failed, in the words the Goodput tab uses.
    assert rows["What-if: marked failed"][0] == "1 of 16 × Spine"
    assert "What-if: 1 of 16 × Spine failed" in goodput.whatif_label.text()
    # The rows of the Goodput tab's what-if table, in its order, with the same figures.
    exported = [row for row in summary if row[0].startswith("What-if: ") and len(row) == 5]
    assert [f"What-if: {figure}" for figure, *_ in shown] == [
        f"{row[0]} ({row[2]})" if row[2] else row[0] for row in exported]
    assert rows["What-if: Scale-out bisection"] == ["25600.0", "GB/s", "24000.0", "-1600.0"]
    bisection = next(row for row in shown if row[0].startswith("Scale-out bisection"))
    assert bisection[1:3] == ("25,600", "24,000") and bisection[3].startswith("-1,600")


def test_the_summary_tab_and_the_exports_carry_the_goodput_headline(superpod, save_as, tmp_path):
    g = superpod.last_result.goodput
    summary = _show_tab(superpod, "summary")
    shown = {metric: (value, unit) for metric, value, unit in summary.rows_shown()}
    assert shown["Days to train with failures"] == (f"{g.days:.4g}", "days")
    assert shown["Effective training time ratio"] == (f"{g.effective_ratio:.4g}", "fraction")
    assert shown["Mean time between interruptions"] == (f"{g.mtbi_hours:.4g}", "h")
    assert shown["Hot spare servers"] == ("3", "count")
    rows = {row[0]: row[1:] for row in _export(superpod, superpod.act_export_summary, save_as, tmp_path / "s.csv")}
    assert rows["Days to train with failures"] == [str(g.days), "days"]
    assert rows["Restart and recovery per interruption"] == [str(g.restart_s), "s"]
    # The BOM says once, in its note, that a server's NICs are in its price.
    bom = _export(superpod, superpod.act_export_bom, save_as, tmp_path / "bom.csv")
    nic = next(row for row in bom if row[1] == "cx7-ndr")
    assert (nic[2], nic[7]) == ("NVIDIA ConnectX-7 NDR InfiniBand (1 port)", "included in the server's price")
