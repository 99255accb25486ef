"""The cost model (designer.engine.cost) against hand-computed cases, the priced BOM (chassis
share, parts in a server's price, cables by reach), unpriced parts and a user's price override."""

import csv
import io
import json

import pytest

from designer.engine import evaluate
from designer.engine.cost import DEFAULTS, cost_of_ownership
from designer.engine.summary import summary_rows
from designer.io.exports import bom_csv
from designer.model import Design, Item, Link, load_catalog
from designer.topologies import generate
from tests.helpers import without_storage_and_spares

# Hand-made assumptions whose figures are easy to follow.
ROUND = {"depreciation_years": 4, "electricity_usd_per_kwh": 0.1, "pue": 1.5, "facility": "colocation",
         "colocation_usd_per_kw_month": 100, "utilization": 0.5}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def dgx(catalog) -> Design:
    return without_storage_and_spares(generate("server", catalog, platform="dgx-h100"))


def test_a_dgx_costs_its_system_price_split_into_chassis_and_gpus(catalog):
    result = evaluate(dgx(catalog), catalog)
    rows = {(row.part, row.included): row for row in result.bom.rows}
    gpu, system = catalog["h100-sxm"].number("price_usd"), catalog["dgx-h100"].number("price_usd")
    assert rows[("dgx-h100", False)].unit_price_usd == system - 8 * gpu
    assert rows[("h100-sxm", False)].extended_usd == 8 * gpu
    # NICs, CPUs and NVSwitch chips are in the platform's price: listed, not charged, not unpriced.
    for part in ("cx7-ndr", "xeon-8480c", "nvswitch-gen3"):
        assert rows[(part, True)].unit_price_usd is None
    assert result.cost.total_usd == system
    assert result.cost.unpriced_parts == ()
    assert result.cost.capital_by_category_usd["accelerators_and_servers"] == system


def test_removing_gpus_lowers_the_cost_by_their_price(catalog):
    design = dgx(catalog)
    full = evaluate(design, catalog).cost.total_usd
    design.remove_item("node.gpu7")
    assert evaluate(design, catalog).cost.total_usd == full - catalog["h100-sxm"].number("price_usd")


def test_yearly_cost_and_run_against_hand_computed_figures(catalog):
    bom = evaluate(dgx(catalog), catalog).bom  # $270,000 of hardware, 10.2 kW
    cost = cost_of_ownership(bom, catalog, it_kw=10.2, accelerators=8, setting=ROUND, run_days=10,
                             run_accelerators=8, tokens=1e9)
    assert cost.capital_usd == 270_000  # colocation: no facility capital
    yearly = cost.yearly_by_category_usd
    assert yearly["it_depreciation"] == pytest.approx(270_000 / 4)
    assert yearly["facility_depreciation"] == 0
    assert yearly["electricity"] == pytest.approx(10.2 * 1.5 * 8760 * 0.1)  # 13,402.80
    assert yearly["colocation"] == pytest.approx(100 * 10.2 * 12)  # 12,240
    assert cost.yearly_operating_usd == pytest.approx(13_402.8 + 12_240)
    assert cost.yearly_usd == pytest.approx(67_500 + 13_402.8 + 12_240)  # 93,142.80
    assert cost.per_accelerator_hour_usd == pytest.approx(93_142.8 / (8 * 8760 * 0.5))  # 2.6582
    assert cost.run_usd == pytest.approx(8 * 10 * 24 * 93_142.8 / (8 * 8760 * 0.5))  # 5,103.7
    assert cost.run_energy_mwh == pytest.approx(10.2 * 1.5 * 240 / 1000)  # 3.672
    assert cost.per_million_tokens_usd == pytest.approx(cost.run_usd / 1000)


def test_building_the_facility_is_capital_depreciated_over_its_own_years(catalog):
    bom = evaluate(dgx(catalog), catalog).bom
    setting = {"facility": "build", "facility_usd_per_kw": 8000, "facility_years": 16}
    cost = cost_of_ownership(bom, catalog, 10.2, 8, setting, None, 8, None)
    assert cost.capital_by_category_usd["racks_and_facility"] == pytest.approx(8000 * 10.2)
    assert cost.capital_usd == pytest.approx(270_000 + 81_600)
    assert cost.yearly_by_category_usd["facility_depreciation"] == pytest.approx(81_600 / 16)
    assert cost.yearly_by_category_usd["colocation"] == 0
    assert cost.run_usd is None and cost.run_energy_mwh is None


def test_a_run_on_part_of_the_cluster_pays_for_its_share(catalog):
    bom = evaluate(dgx(catalog), catalog).bom
    whole = cost_of_ownership(bom, catalog, 10.2, 8, ROUND, 10, 8, 1e9)
    half = cost_of_ownership(bom, catalog, 10.2, 8, ROUND, 10, 4, 1e9)
    assert half.run_usd == pytest.approx(whole.run_usd / 2)
    assert half.run_energy_mwh == pytest.approx(whole.run_energy_mwh / 2)


def test_the_design_setting_is_what_evaluate_uses(catalog):
    design = dgx(catalog)
    default = evaluate(design, catalog).cost
    assert dict(default.assumptions) == dict(DEFAULTS)
    design.settings["cost"] = {"electricity_usd_per_kwh": 0.2}
    dearer = evaluate(design, catalog).cost
    assert dearer.assumptions["electricity_usd_per_kwh"] == 0.2
    assert dearer.yearly_by_category_usd["electricity"] == pytest.approx(
        2.5 * default.yearly_by_category_usd["electricity"])
    # The run takes the training days; its cost is the accelerator-hours at the hourly cost.
    training = evaluate(design, catalog).training
    assert dearer.run_days == pytest.approx(training.days, rel=1e-5)
    assert dearer.run_usd == pytest.approx(8 * training.days * 24 * dearer.per_accelerator_hour_usd, rel=1e-6)


def test_unpriced_parts_are_listed_and_never_counted(catalog):
    design = without_storage_and_spares(generate("server", catalog, platform="tpu-v4-host"))
    cost = evaluate(design, catalog).cost
    assert "tpu-v4" in cost.unpriced_parts and "tpu-v4-host" in cost.unpriced_parts
    assert cost.total_usd is None and cost.capital_usd is None and cost.per_accelerator_hour_usd is None
    # A priced part beside them: the total is that part's price, the unpriced ones still listed.
    design.add_item(Item("spare-cpu", "cpu", part="epyc-9654"))
    cost = evaluate(design, catalog).cost
    assert cost.total_usd == catalog["epyc-9654"].number("price_usd")
    assert "tpu-v4" in cost.unpriced_parts
    # The TPUs' hours would look almost free: no cost per hour, nor of a run; its energy stands.
    assert cost.per_accelerator_hour_usd is None and cost.run_usd is None
    training = evaluate(design, catalog).training
    assert cost.run_energy_mwh == pytest.approx(evaluate(design, catalog).power.total_kw * DEFAULTS["pue"]
                                                * training.days * 24 / 1000, rel=1e-5)
    text = bom_csv(evaluate(design, catalog))
    assert "tpu-v4,Google TPU v4 (per chip),4,,,,no price" in text


def test_an_unpriced_switch_is_listed_but_leaves_the_hourly_cost(catalog):
    design = dgx(catalog)
    design.add_item(Item("ocs", "switch", part="tpu-ocs"))
    cost = evaluate(design, catalog).cost
    assert cost.unpriced_parts == ("tpu-ocs",)
    assert cost.per_accelerator_hour_usd is not None and cost.run_usd is not None


def test_a_user_catalogue_overrides_a_price(catalog, tmp_path):
    part = dict(catalog["h100-sxm"].data)
    part["peak_tflops"] = dict(part["peak_tflops"])
    part["media"] = list(part["media"])
    part.update(price_usd=20_000, price_date="2025-01", price_source="our quote")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [part]}))
    mine = load_catalog(path, include_user=False)
    lone = Design()
    lone.add_item(Item("gpu", "accelerator", part="h100-sxm"))
    assert evaluate(lone, catalog).cost.total_usd == catalog["h100-sxm"].number("price_usd")
    assert evaluate(lone, mine).cost.total_usd == 20_000
    design = dgx(catalog)
    shipped = evaluate(design, catalog).cost.total_usd
    # The DGX's chassis share is its price less its default GPUs at *their* price: the system's
    # price is unchanged by a cheaper GPU quote, only the fitted GPUs get cheaper.
    chassis = catalog["dgx-h100"].number("price_usd") - 8 * 20_000
    assert evaluate(design, mine).cost.total_usd == chassis + 8 * 20_000 == catalog["dgx-h100"].number("price_usd")
    design.remove_item("node.gpu7")
    assert evaluate(design, mine).cost.total_usd == shipped - 20_000


def test_storage_and_hot_spares_are_bought_and_powered(catalog, tmp_path):
    design = dgx(catalog)
    bare = evaluate(design, catalog)
    design.settings["storage"] = {"part": "ddn-ai400x2", "count": 2}
    design.settings["spares"] = 1
    result = evaluate(design, catalog)
    system, storage_w = catalog["dgx-h100"].number("price_usd"), catalog["ddn-ai400x2"].number("power_w")
    # A spare is the server it stands in for: its chassis share and its 8 GPUs, powered.
    spares = {row.category: row for row in result.bom.rows if row.variant == "spare"}
    assert (spares["server"].quantity, spares["accelerator"].quantity) == (1, 8)
    assert result.cost.capital_by_category_usd["accelerators_and_servers"] == 2 * system
    assert result.power.spares_kw == bare.power.total_kw == 10.2
    assert result.power.storage_kw == 2 * storage_w / 1000
    assert result.power.total_kw == pytest.approx(2 * 10.2 + 2 * storage_w / 1000)
    rows = {name: value for name, value, _unit in summary_rows(result)}
    assert rows["  of which hot spare servers"] == 10.2 and rows["  of which checkpoint storage"] == 4.0
    # The storage is its own capital category, at its shipped (derived) price or a user's quote.
    assert result.cost.capital_by_category_usd["storage"] == 2 * catalog["ddn-ai400x2"].number("price_usd")
    part = dict(catalog["ddn-ai400x2"].data)
    part.update(price_usd=250_000, price_date="2025-01", price_source="our quote")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [part]}))
    quoted = evaluate(design, load_catalog(path, include_user=False)).cost
    assert quoted.capital_by_category_usd["storage"] == 500_000
    assert quoted.unpriced_parts == ()
    # Cost per accelerator-hour counts the spares' cost over the job's 8 accelerators.
    assert result.cost.per_accelerator_hour_usd > bare.cost.per_accelerator_hour_usd


def _server_and_leaf(catalog, leaf_in_rack: bool) -> Design:
    design = dgx(catalog)
    design.add_item(Item("rack", "rack", part="rack-42u"))
    design.update_item("node", parent="rack")
    design.add_item(Item("leaf", "switch", part="qm9700", parent="rack" if leaf_in_rack else None))
    design.add_link(Link("up", "node.nic0", "leaf", "ib-ndr"))
    return design


def test_a_cable_within_a_rack_is_copper_and_between_racks_optical(catalog):
    medium = catalog["ib-ndr"]
    inside = evaluate(_server_and_leaf(catalog, True), catalog).bom
    cables = [row for row in inside.rows if row.category == "cable"]
    assert [(row.variant, row.quantity, row.unit_price_usd) for row in cables] == [
        ("copper", 1, medium.number("copper_cable_price_usd"))]
    assert not [row for row in inside.rows if row.category == "transceiver"]
    outside = evaluate(_server_and_leaf(catalog, False), catalog).bom
    cables = [row for row in outside.rows if row.category in ("cable", "transceiver")]
    assert [(row.category, row.variant, row.quantity, row.unit_price_usd) for row in cables] == [
        ("cable", "optical", 1, medium.number("optical_cable_price_usd")),
        ("transceiver", "optical", 2, medium.number("transceiver_price_usd"))]
    assert outside.cables_by_medium == inside.cables_by_medium == {"ib-ndr": 1}
    assert outside.transceivers_by_medium == {"ib-ndr": 2}


def test_capital_categories_follow_the_part(catalog):
    design = _server_and_leaf(catalog, False)
    design.add_item(Item("ocs", "switch", part="tpu-ocs"))  # unpriced: listed, its category unpriced
    cost = evaluate(design, catalog).cost
    by = cost.capital_by_category_usd
    assert by["scale_out_network"] == catalog["qm9700"].number("price_usd")
    medium = catalog["ib-ndr"]
    assert by["cables_and_optics"] == medium.number("optical_cable_price_usd") + 2 * medium.number(
        "transceiver_price_usd")
    assert by["racks_and_facility"] == pytest.approx(catalog["rack-42u"].number("price_usd")
                                                     + DEFAULTS["facility_usd_per_kw"] * evaluate(
                                                         design, catalog).power.total_kw)
    assert "tpu-ocs" in cost.unpriced_parts and by["scale_up_network"] is None
    assert sum(value for value in by.values() if value is not None) == pytest.approx(cost.capital_usd)


def test_a_standalone_switch_draws_its_power_and_a_chip_in_a_server_does_not(catalog):
    design = _server_and_leaf(catalog, True)
    power = evaluate(design, catalog).power.total_kw
    assert power == pytest.approx(catalog["dgx-h100"].number("system_power_w") / 1000
                                  + catalog["qm9700"].number("power_w") / 1000)


def test_the_bom_csv_has_unit_and_extended_prices(catalog):
    text = bom_csv(evaluate(_server_and_leaf(catalog, True), catalog))
    lines = text.splitlines()
    assert lines[0] == "category,part,name,quantity,unit_price_usd,extended_usd,price_basis,price_note"
    assert "accelerator,h100-sxm,NVIDIA H100 SXM5 80GB,8,27500.0,220000.0,published," in lines
    assert any(line.startswith("nic,cx7-ndr,") and line.endswith(",included in the server's price") for line in lines)
    assert any(line.startswith("cable,ib-ndr,") and "passive copper" in line for line in lines)
    assert lines[-3].startswith("subtotal,,Parts total (the priced lines above),,,")
    assert lines[-1].startswith("total,,Capital cost (parts total + facility),,,")
    # The rack's price is an estimate built from its enclosure's and PDUs' list prices: derived.
    assert any(line.startswith("rack,rack-42u,") and line.endswith(",3500.0,3500.0,derived,") for line in lines)


def test_the_cli_json_cost_section_and_the_exports(capsys, catalog, tmp_path):
    from designer.cli import main
    from designer.io.files import save_design

    design = _server_and_leaf(catalog, True)
    design.settings["cost"] = {"pue": 1.2}
    path = tmp_path / "priced.cluster.json"
    save_design(design, path)
    assert main(["evaluate", str(path), "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    for key in ("capital_usd", "capital_by_category_usd", "yearly_operating_usd", "per_accelerator_hour_usd",
                "run_usd", "run_energy_mwh", "per_million_tokens_usd", "assumptions", "total_usd", "priced_lines",
                "unpriced_parts"):
        assert key in cost, key
    assert cost["assumptions"]["pue"] == 1.2
    assert set(cost["capital_by_category_usd"]) == {"accelerators_and_servers", "scale_up_network",
                                                    "scale_out_network", "cables_and_optics", "storage",
                                                    "racks_and_facility"}
    summary, bom = tmp_path / "s.csv", tmp_path / "b.csv"
    assert main(["export", str(path), "--csv", str(summary), "--bom", str(bom)]) == 0
    text = summary.read_text()
    assert f"Capital cost,{cost['capital_usd']},USD" in text
    assert f"Cost per accelerator-hour,{cost['per_accelerator_hour_usd']},USD/h" in text
    assert "extended_usd" in bom.read_text().splitlines()[0]


def test_a_bad_assumption_in_a_file_is_refused_naming_it(capsys, tmp_path):
    from designer.cli import main

    path = tmp_path / "bad.cluster.json"
    path.write_text(json.dumps({"format": "cluster-designer", "version": 1, "items": [],
                                "settings": {"cost": {"facility": "rent"}}}))
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "$.settings.cost.facility" in err and '"build" or "colocation"' in err


def test_a_category_of_only_unpriced_parts_is_unpriced_not_zero(capsys, catalog, tmp_path):
    from designer.cli import main
    from designer.io.exports import summary_csv
    from designer.io.files import save_design

    design = generate("server", catalog, platform="dgx-h100")
    # Checkpoints to FSx for Lustre: billed per GB-month, so not priced as bought hardware.
    design.settings["storage"] = {"part": "aws-fsx-lustre-1000", "count": 100}
    assert catalog["aws-fsx-lustre-1000"].get("price_usd") is None
    result = evaluate(design, catalog)
    cost = result.cost
    assert cost.capital_by_category_usd["storage"] is None
    assert dict(cost.unpriced_by_category) == {"storage": ("aws-fsx-lustre-1000",)}
    # A category with nothing in it costs nothing; one with priced parts keeps their sum.
    assert cost.capital_by_category_usd["scale_up_network"] == 0
    assert cost.capital_by_category_usd["accelerators_and_servers"] > 0
    rows = {metric: (value, unit) for metric, value, unit in summary_rows(result)}
    named = f"{catalog['aws-fsx-lustre-1000'].name} (aws-fsx-lustre-1000)"
    assert rows["Capital: storage"] == (f"unpriced: {named}", "USD")
    assert ["Capital: storage", f"unpriced: {named}", "USD"] in list(csv.reader(io.StringIO(summary_csv(result))))
    path = tmp_path / "dgx.cluster.json"
    save_design(design, path)
    assert main(["evaluate", str(path), "--json"]) == 0
    section = json.loads(capsys.readouterr().out)["cost"]
    assert section["capital_by_category_usd"]["storage"] is None
    assert section["unpriced_by_category"] == {"storage": ["aws-fsx-lustre-1000"]}


def test_an_unpriced_part_beside_priced_ones_keeps_their_sum_and_is_listed(catalog):
    design = _server_and_leaf(catalog, True)
    before = evaluate(design, catalog).cost.capital_by_category_usd["scale_out_network"]
    design.add_item(Item("lone-nic", "nic", part="efa-v2"))  # AWS's own card, not sold
    assert catalog["efa-v2"].get("price_usd") is None
    cost = evaluate(design, catalog).cost
    assert cost.capital_by_category_usd["scale_out_network"] == before > 0
    assert cost.unpriced_by_category["scale_out_network"] == ("efa-v2",)
