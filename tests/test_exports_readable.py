"""The CSV exports as a user reads them, written by `cluster-designer export` and opened as files:
the BOM closes with rows that add up to the capital cost the app and the JSON show, parts are
named (with their ids kept), a what-if's degraded figures stand beside the healthy ones, the
goodput headline is in the summary, and nothing reads 'None' or 'nan'. And `evaluate`'s text
table, which names a what-if's failures as the app does."""

from __future__ import annotations

import csv
import json

import pytest

from designer.cli import main
from designer.engine import evaluate
from designer.engine.figures import figures
from designer.io.examples import resolve_design_path
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog

DEFAULT = "nvidia-superpod-h100-4su"


def _export(tmp_path, design: str, *options: str) -> tuple[list[list[str]], list[list[str]], dict]:
    """The summary CSV, the BOM CSV (as rows) and the JSON `export` writes for `design`."""
    summary, bom, result = tmp_path / "summary.csv", tmp_path / "bom.csv", tmp_path / "result.json"
    assert main(["export", design, "--csv", str(summary), "--bom", str(bom), "--json", str(result), *options]) == 0
    with summary.open(newline="") as s, bom.open(newline="") as b:
        tables = list(csv.reader(s)), list(csv.reader(b))
    for table in tables:
        cells = {cell.strip().lower() for row in table for cell in row}
        assert not cells & {"none", "nan", "inf", "-inf", "null"}, cells & {"none", "nan", "inf", "-inf", "null"}
        assert not any("None" in cell for row in table for cell in row)
    return *tables, json.loads(result.read_text())


def _colocated(tmp_path) -> str:
    design = load_design(resolve_design_path(DEFAULT), default_catalog())
    design.settings["cost"] = {"facility": "colocation"}
    path = tmp_path / "colocated.cluster.json"
    save_design(design, path)
    return str(path)


@pytest.mark.parametrize("example", [DEFAULT, "google-tpu-v4-pod", "aws-p4de", "colocated"])
def test_the_bom_csv_closes_with_the_capital_cost_of_the_app_and_the_json(example, tmp_path):
    # The parts alone ($41.9 M for the default SuperPOD) are not the capital ($56.2 M): the
    # facility is. The closing rows say so, and add up.
    design = _colocated(tmp_path) if example == "colocated" else example
    _summary, bom, result = _export(tmp_path, design)
    cost = result["cost"]
    subtotal, facility, total = bom[-3:]
    assert bom[0][5] == "extended_usd"
    assert (subtotal[0], subtotal[2]) == ("subtotal", "Parts total (the priced lines above)")
    assert float(subtotal[5]) == cost["total_usd"]
    priced = sum(float(row[5]) for row in bom[1:-3] if row[5])
    assert priced == pytest.approx(cost["total_usd"], abs=0.01)
    assert facility[0] == "facility" and float(facility[5]) == cost["facility_usd"]
    assert (total[0], total[2]) == ("total", "Capital cost (parts total + facility)")
    assert float(total[5]) == cost["capital_usd"]
    assert float(subtotal[5]) + float(facility[5]) == pytest.approx(float(total[5]), abs=0.01)
    if example == "colocated":
        assert cost["facility_usd"] == 0 and "colocation" in facility[2]
    else:
        kw = result["power"]["total_kw"]
        assert facility[2].startswith(f"Facility: 10,000 USD/kW × {kw:,.2f} kW IT load")
        assert cost["facility_usd"] == pytest.approx(10_000 * kw)
    if cost["unpriced_parts"]:
        # The capital says what it leaves out, by name.
        assert total[7].startswith("leaves out the unpriced parts: ")
        assert f"{default_catalog()['tpu-v4'].name} (tpu-v4)" in total[7]
    else:
        assert total[7] == ""


def test_the_summary_names_parts_keeps_their_ids_and_the_figure_keys(tmp_path):
    summary, _bom, result = _export(tmp_path, DEFAULT)
    rows = {row[0]: row[1:] for row in summary}
    assert summary[0] == ["metric", "value", "unit"]
    assert rows["Accelerators: NVIDIA H100 SXM5 80GB (h100-sxm)"] == ["1024", "count"]
    # The facility is said apart from the racks it shares a category with: the BOM's parts leave it out.
    assert rows["Capital: racks and facility"] == ["14459600.0", "USD"]
    assert rows["  of which facility"] == [str(result["cost"]["facility_usd"]), "USD"] == ["14267600.0", "USD"]
    storage = "DDN AI400X2 (EXAScaler parallel file system appliance) (ddn-ai400x2)"
    assert rows["Derived estimates (not published figures)"][0] == (
        f"price: {storage}, 42U rack for 4 DGX H100 (40.8 kW) (rack-42u-superpod); power: {storage}")
    # The JSON keeps ids and adds the names; figure keys (sweeps, compare) stay made of ids.
    assert result["cost"]["derived_price_parts"] == ["ddn-ai400x2", "rack-42u-superpod"]
    assert result["part_names"]["ddn-ai400x2"] == "DDN AI400X2 (EXAScaler parallel file system appliance)"
    assert result["goodput"]["storage"] == "ddn-ai400x2"
    catalog = default_catalog()
    keyed = figures(evaluate(load_design(resolve_design_path(DEFAULT), catalog), catalog))["summary"]
    assert keyed["accelerators_h100_sxm"] == 1024
    assert keyed["derived_estimates"] == "price: ddn-ai400x2, rack-42u-superpod; power: ddn-ai400x2"


def test_export_with_fail_writes_the_degraded_figures_beside_the_healthy_ones(tmp_path):
    healthy, _bom, _result = _export(tmp_path, DEFAULT)
    assert not any(row[0].startswith("What-if") for row in healthy)
    summary, _bom, result = _export(tmp_path, DEFAULT, "--fail", "spines.sw:1")
    assert summary[0] == ["metric", "value", "unit", "what_if_value", "what_if_change"]
    rows = {row[0]: row[1:] for row in summary}
    # What failed, in the design's words and by id.
    assert rows["What-if: marked failed"][0] == "1 of 16 × Spine"
    assert rows["What-if: marked failed (ids)"][0] == "spines.sw:1"
    assert rows["What-if: accelerators cut off"] == ["0", "count"]
    # One spine of 16 lost: 1/16 of the bisection, the change beside it.
    assert rows["What-if: Scale-out bisection"] == ["25600.0", "GB/s", "24000.0", "-1600.0"]
    # Every figure the Goodput tab's what-if table compares, in its order.
    compared = [f"What-if: {f['figure']}" for f in result["degraded"]["figures"]]
    assert [row[0] for row in summary if row[0] in compared] == compared
    for f in result["degraded"]["figures"]:
        value, unit, degraded, change = rows[f"What-if: {f['figure']}"]
        assert (float(value), unit, float(degraded)) == (f["healthy"], f["unit"], f["degraded"])
        assert float(change) == pytest.approx(f["degraded"] - f["healthy"], abs=1e-5)
    # The healthy rows are the summary as before, in the first three columns.
    assert [row[:3] for row in summary[1:len(healthy)]] == healthy[1:]


def test_the_summary_csv_has_the_goodput_headline_with_units(tmp_path):
    summary, _bom, result = _export(tmp_path, DEFAULT)
    rows = {row[0]: row[1:] for row in summary}
    g = result["goodput"]
    for metric, field, unit in (("Days to train with failures", "days", "days"),
                                ("Effective training time ratio", "effective_ratio", "fraction"),
                                ("Interruptions per day", "interruptions_per_day", "/day"),
                                ("Mean time between interruptions", "mtbi_hours", "h"),
                                ("Checkpoint write time", "checkpoint_write_s", "s"),
                                ("Checkpoint interval (Young/Daly)", "checkpoint_interval_s", "s"),
                                ("Restart and recovery per interruption", "restart_s", "s"),
                                ("Hot spare servers", "spares", "count")):
        assert rows[metric] == [str(g[field]), unit], metric
    assert rows["Days to train"] == [str(result["training"]["days"]), "days"]  # without failures


def test_the_bom_csv_says_a_part_is_in_its_servers_price_once(tmp_path):
    # The name said "(in its server's price)" beside a note saying "included in the server's price".
    _summary, bom, result = _export(tmp_path, DEFAULT)
    header = bom[0]
    name, note = header.index("name"), header.index("price_note")
    included = [row for row in bom[1:] if row[note] == "included in the server's price"]
    assert {row[1] for row in included} == {"cx7-ndr", "nvswitch-gen3", "xeon-8480c"}
    for row in included:
        assert row[name] == result["part_names"][row[1]]
    assert not any("price" in row[name] for row in bom[1:-3])


def test_evaluate_names_a_what_ifs_failures_as_the_app_does_with_the_ids_to_type(capsys):
    assert main(["evaluate", DEFAULT, "--fail", "spines.sw:1", "--fail", "ib-ndr:2%"]) == 0
    out = capsys.readouterr().out
    what_if = next(line for line in out.splitlines() if line.startswith("What-if: "))
    ndr = default_catalog()["ib-ndr"].name
    assert what_if == (f"What-if: 1 of 16 × Spine (spines.sw:1), 2% of every {ndr} link (ib-ndr:2%) failed "
                       "(0 accelerators cut off)")
    # The goodput headline is in the summary rows, once.
    assert sum(line.startswith("Days to train with failures ") for line in out.splitlines()) == 1
    assert "\nGoodput\n" not in out
