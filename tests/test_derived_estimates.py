"""Prices and power that are derived estimates (docs/costs.md): every sold part has a price and
every part that draws power a figure, each derived one flagged; the engine names them in the cost
section, the summary and the BOM CSV; a user's own figure clears the flag; and a figure given to a
part inside a platform does not count its power twice."""

import json
from pathlib import Path

import pytest

from designer.engine import evaluate
from designer.engine.summary import summary_rows
from designer.io.examples import resolve_design_path
from designer.io.exports import bom_csv, summary_csv
from designer.io.files import load_design
from designer.model import Item, load_catalog
from designer.topologies import generate
from tests.helpers import without_storage_and_spares

# Parts that are not sold, so have no price: each with the reason.
NOT_SOLD = {
    "tpu-v4": "Google does not sell TPUs (rented only, as Cloud TPU)",
    "tpu-v4-host": "Google does not sell TPU hosts",
    "tpu-v4-host-dcn": "Google does not sell TPU hosts",
    "tpu-ocs": "Google's own optical circuit switch",
    "tpu-ici": "Google's own chip-to-chip links",
    "dojo-d1": "Tesla's in-house chip",
    "dojo-training-tile": "Tesla's in-house system",
    "efa-v2": "AWS's own network card",
    "ipu-200g": "Google's own network card",
    "aws-fsx-lustre-1000": "a rented service, billed per GB-month, not bought hardware",
    "nvswitch-gen2": "a chip on its server's board, sold only in the platform",
    "nvswitch-gen3": "a chip on its server's board, sold only in the platform",
    "nvlink-switch-gen4-tray": "sold only inside the GB200 NVL72 rack, whose price pays for it",
    "dcn-nic-200g": "a stand-in for a port of Google's data-centre network",
    "dcn-fabric-200g": "a stand-in for Google's data-centre network as one switch",
}
# Stand-ins that are no device, so draw no power of their own.
NO_POWER = {
    "dcn-nic-200g": "a stand-in for a port of Google's data-centre network",
    "dcn-fabric-200g": "a stand-in for Google's data-centre network as one switch",
    "dragonfly-global-links": "a bundle of dragonfly cables, not a device",
}
POWERED_KINDS = {"accelerator": "power_w", "cpu": "power_w", "nic": "power_w", "switch": "power_w",
                 "server": "system_power_w", "storage": "power_w"}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def _priced(part) -> bool:
    if part.kind == "medium":
        lanes = part.number("lanes_per_cable")
        return lanes == 0 or part.get("copper_cable_price_usd") is not None
    return part.get("price_usd") is not None


def test_every_part_that_is_sold_has_a_price_and_every_device_a_power(catalog):
    unpriced = {part.id for part in catalog if not _priced(part)}
    assert unpriced == set(NOT_SOLD)
    unpowered = {part.id for part in catalog if part.kind in POWERED_KINDS
                 and part.kind != "storage" and not part.number(POWERED_KINDS[part.kind])}
    assert unpowered == set(NO_POWER)
    # Storage draws power unless it is a rented service.
    assert {p.id for p in catalog.of_kind("storage") if not p.number("power_w")} == {"aws-fsx-lustre-1000"}


def test_a_derived_figure_is_flagged_and_its_rule_written_beside_it(catalog):
    for part in catalog:
        if part.price_derived:
            assert part.get("price_source") and part.get("price_date"), part.id
        if part.get("price_basis") is None and part.get("price_usd") is not None:
            assert "DERIVED" not in part.get("price_source"), part.id
    for part_id in ("sn5600", "sn5600-400g", "slingshot-rosetta", "slingshot-11-cassini", "fabrex-pcie5",
                    "supernode-32", "supernode-64", "cray-ex-cabinet", "ddn-ai400x2"):
        assert catalog[part_id].price_derived, part_id
        assert catalog[part_id].get("price_source").startswith("DERIVED ESTIMATE"), part_id
    for part_id in ("efa-v2", "ipu-200g", "slingshot-11-cassini", "fabrex-pcie5", "supernode-32", "ddn-ai400x2"):
        assert catalog[part_id].power_derived, part_id
    # The NVLink switch tray's 400 W is a published figure: 3.6 kW for an NVL72's nine trays.
    assert catalog["nvlink-switch-gen4-tray"].number("power_w") == 3_600 / 9
    assert not catalog["nvlink-switch-gen4-tray"].power_derived


def test_the_derived_figures_follow_their_stated_rules(catalog):
    qm9700_per_tbps = catalog["qm9700"].number("price_usd") / (64 * 0.4)  # USD per Tb/s, one direction
    qm8700_per_tbps = catalog["qm8700"].number("price_usd") / (40 * 0.2)
    assert catalog["sn5600"].number("price_usd") == qm9700_per_tbps * 64 * 0.8 == 72_000
    assert catalog["sn5600-400g"].number("price_usd") == catalog["sn5600"].number("price_usd")
    assert catalog["slingshot-rosetta"].number("price_usd") == qm8700_per_tbps * 64 * 0.2 == 27_200
    fabrex_tbps = 24 * 0.504
    assert catalog["fabrex-pcie5"].number("price_usd") == round(qm9700_per_tbps * fabrex_tbps, -3) == 17_000
    assert catalog["fabrex-pcie5"].number("power_w") == round(747 / 25.6 * fabrex_tbps) == 353
    cx6 = catalog["cx6-hdr"]
    assert catalog["slingshot-11-cassini"].number("price_usd") == cx6.number("price_usd")
    for part_id in ("slingshot-11-cassini", "efa-v2", "ipu-200g"):
        assert catalog[part_id].number("power_w") == cx6.number("power_w")
    # A SuperNODE: its MI300X, an 8-GPU platform's chassis share per eight GPUs, its FabreX switches.
    hgx = catalog["hgx-h100"].number("price_usd") - 8 * catalog["h100-sxm"].number("price_usd")
    mi300x = catalog["mi300x"].number("price_usd")
    for part_id, gpus, switches in (("supernode-32", 32, 2), ("supernode-64", 64, 4)):
        node = catalog[part_id]
        assert node.number("price_usd") == gpus * mi300x + gpus // 8 * hgx + switches * 17_000
        assert node.number("system_power_w") == gpus * 750 + 2 * 360 + switches * 353
    rack = catalog["rack-48u"]
    assert catalog["cray-ex-cabinet"].number("price_usd") == round(
        rack.number("price_usd") / rack.number("power_budget_kw") * 300, -3) == 125_000
    assert catalog["ddn-ai400x2"].number("price_usd") == round(24 * 15.36e3 * 0.20, -3) == 74_000


def _leaf_pair(catalog):
    design = without_storage_and_spares(generate("server", catalog, platform="dgx-h100"))
    design.add_item(Item("leaf", "switch", part="sn5600"))
    return design


def test_a_derived_price_and_power_are_named_in_the_cost_section_summary_and_bom_csv(catalog):
    result = evaluate(_leaf_pair(catalog), catalog)
    cost = result.cost
    assert cost.derived_price_parts == ("sn5600",) and cost.derived_power_parts == ("sn5600",)
    assert result.power.derived_parts == ("sn5600",)
    assert cost.unpriced_parts == ()
    # Counted, not left out: the switch's derived price is in the scale-out capital.
    assert cost.capital_by_category_usd["scale_out_network"] == 72_000
    section = result.cost.as_dict()
    assert section["derived_price_parts"] == ["sn5600"] and section["derived_power_parts"] == ["sn5600"]
    rows = {metric: value for metric, value, _unit in summary_rows(result)}
    switch = "NVIDIA Spectrum-4 SN5600 Ethernet switch (sn5600)"
    assert rows["Derived estimates (not published figures)"] == f"price: {switch}; power: {switch}"
    assert f"Derived estimates (not published figures),price: {switch}; power: {switch}," in summary_csv(result)
    lines = bom_csv(result).splitlines()
    assert lines[0].split(",")[6] == "price_basis"
    assert any(line.startswith("switch,sn5600,") and line.endswith(",72000.0,72000.0,derived,") for line in lines)
    assert any(line.startswith("accelerator,h100-sxm,") and ",published," in line for line in lines)
    assert any(line.startswith("nic,cx7-ndr,") and line.endswith(",,included in the server's price")
               for line in lines)
    # A design of published figures only has no such line.
    bare = evaluate(without_storage_and_spares(generate("server", catalog, platform="dgx-h100")), catalog)
    assert bare.cost.derived_price_parts == () == bare.cost.derived_power_parts
    assert not any(metric.startswith("Derived") for metric, _v, _u in summary_rows(bare))


def _user_catalogue(tmp_path, catalog, part_id, **changes):
    shipped = json.loads(Path(catalog[part_id].origin).read_text())["parts"]
    part = {**next(entry for entry in shipped if entry["id"] == part_id), **changes}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [part]}))
    return load_catalog(path, include_user=False)


def test_a_users_own_price_clears_the_derived_flag_and_an_unchanged_copy_keeps_it(catalog, tmp_path):
    # A copy of the shipped entry with the user's quote: the copied "derived" no longer describes it.
    quoted = _user_catalogue(tmp_path, catalog, "sn5600", price_usd=55_000, price_date="2026-11",
                             price_source="our quote")
    assert not quoted["sn5600"].price_derived and quoted["sn5600"].power_derived
    cost = evaluate(_leaf_pair(catalog), quoted).cost
    assert cost.derived_price_parts == () and cost.derived_power_parts == ("sn5600",)
    assert cost.capital_by_category_usd["scale_out_network"] == 55_000
    assert ",55000.0,55000.0,published," in bom_csv(evaluate(_leaf_pair(catalog), quoted))
    # Its own power figure clears the power flag the same way.
    measured = _user_catalogue(tmp_path, catalog, "sn5600", power_w=1_400)
    assert measured["sn5600"].price_derived and not measured["sn5600"].power_derived
    # An override that leaves the figures as shipped keeps what they are.
    renamed = _user_catalogue(tmp_path, catalog, "sn5600", name="Our spine")
    assert renamed["sn5600"].price_derived and renamed["sn5600"].power_derived


def test_a_part_inside_a_platform_does_not_count_its_power_twice(catalog):
    # The NVL72's 120 kW covers its nine switch trays (now 400 W each): the rack draws 120 kW.
    nvl72 = evaluate(without_storage_and_spares(generate("server", catalog, platform="gb200-nvl72")), catalog)
    assert nvl72.power.total_kw == catalog["gb200-nvl72"].number("system_power_w") / 1000 == 120
    # The SuperNODE's figure includes its two FabreX switches; the switches in it draw nothing more.
    node = without_storage_and_spares(generate("server", catalog, platform="supernode-32"))
    result = evaluate(node, catalog)
    assert result.power.total_kw == pytest.approx(catalog["supernode-32"].number("system_power_w") / 1000)
    assert result.power.derived_parts == ("supernode-32",)
    # A FabreX switch standing alone draws its own (derived) power and is charged its price.
    node.add_item(Item("tor", "switch", part="fabrex-pcie5"))
    alone = evaluate(node, catalog)
    assert alone.power.total_kw == pytest.approx(result.power.total_kw + 0.353)
    assert alone.power.derived_parts == ("fabrex-pcie5", "supernode-32")
    assert alone.cost.total_usd == result.cost.total_usd + 17_000
    # A NIC in a p5-class server is powered in the platform's figure; standing alone, its own.
    lone = without_storage_and_spares(generate("server", catalog, platform="dgx-h100"))
    before = evaluate(lone, catalog).power.total_kw
    lone.add_item(Item("spare-card", "nic", part="efa-v2"))
    assert evaluate(lone, catalog).power.total_kw == pytest.approx(before + 0.020)


def test_no_example_leaves_a_sold_part_unpriced():
    catalog = load_catalog(include_user=False)
    for name in ("nvidia-superpod-h100-4su", "aws-p5-ultracluster", "frontier-mi250x", "tensorwave-tensornode"):
        cost = evaluate(load_design(resolve_design_path(name), catalog), catalog).cost
        assert not set(cost.unpriced_parts) - set(NOT_SOLD), name
        assert cost.capital_by_category_usd["storage"] is not None, name
        assert cost.per_accelerator_hour_usd is not None, name


def test_a_basis_that_is_neither_published_nor_derived_is_refused_naming_it():
    from designer.model.catalog import CatalogError, parse_catalog_text

    nic = {"id": "my-nic", "kind": "nic", "name": "My NIC", "source": "ours", "port_gbps": 100, "ports": 1,
           "power_w": 15, "power_basis": "guessed"}
    with pytest.raises(CatalogError) as refused:
        parse_catalog_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [nic]}),
                           "mine.json")
    assert str(refused.value) == ('mine.json: $.parts[0].power_basis: expected one of "published", "derived", '
                                  'got "guessed" (part \'my-nic\')')
