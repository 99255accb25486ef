"""Prices and power of the parts issue 15 left unpriced or without a published power
(docs/costs.md): the figures against the sources' arithmetic, and what they do to a design."""

import pytest

from designer.engine import evaluate
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model import Item, load_catalog
from designer.topologies import generate
from tests.helpers import without_storage_and_spares


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def test_every_price_has_its_date_and_the_kind_of_source(catalog):
    for part_id in ("mi250x", "mi250x-node"):
        part = catalog[part_id]
        assert part.number("price_usd") > 0 and part.get("price_date")
        assert "estimate" in part.get("price_source"), part_id


def test_a_frontier_node_is_its_share_of_the_contract_split_into_chassis_and_gpus(catalog):
    # $500 million of hardware over 9,408 nodes is $53,146 a node: $53,000 used; the four
    # MI250X at $10,000 leave a chassis share of $13,000.
    assert 500e6 / 9_408 == pytest.approx(53_146, abs=1)
    design = without_storage_and_spares(generate("server", catalog, platform="mi250x-node"))
    cost = evaluate(design, catalog).cost
    rows = {row.part: row for row in evaluate(design, catalog).bom.rows}
    assert rows["mi250x"].unit_price_usd == 10_000 and rows["mi250x"].quantity == 4
    assert rows["mi250x-node"].unit_price_usd == 53_000 - 4 * 10_000
    assert cost.total_usd == 53_000
    assert cost.unpriced_parts == ()
    assert cost.per_accelerator_hour_usd is not None


def test_the_frontier_example_has_an_hourly_cost_and_names_its_derived_estimates():
    catalog = load_catalog(include_user=False)
    cost = evaluate(load_design(resolve_design_path("frontier-mi250x"), catalog), catalog).cost
    assert cost.per_accelerator_hour_usd is not None
    assert cost.unpriced_parts == ()
    assert set(cost.derived_price_parts) == {"slingshot-rosetta", "slingshot-200g", "cray-ex-cabinet", "ddn-ai400x2"}
    assert "mi250x" not in cost.derived_price_parts and "mi250x-node" not in cost.derived_price_parts


def test_the_sn5600_draws_its_asic_and_a_full_cage_of_optics_within_its_supply(catalog):
    # 500 W Spectrum-4 ASIC + 64 OSFP cages × 18 W maximum module power; the 1+1 supplies are 3 kW.
    for part_id in ("sn5600", "sn5600-400g"):
        assert catalog[part_id].number("power_w") == 500 + 64 * 18 == 1_652 < 3_000
    design = without_storage_and_spares(generate("server", catalog, platform="dgx-h100"))
    before = evaluate(design, catalog).power.total_kw
    design.add_item(Item("leaf", "switch", part="sn5600"))
    assert evaluate(design, catalog).power.total_kw == pytest.approx(before + 1.652)


def test_the_frontier_node_power_is_within_two_percent_of_frontiers_measured_power_per_node(catalog):
    # TOP500 June 2022: 21.1 MW for 8,730,112 cores, 944 per node (64 CPU cores + 4 × 220 GPU
    # compute units): 9,248 nodes, 2,282 W each with the network's share.
    nodes = 8_730_112 / (64 + 4 * 220)
    per_node = 21.1e6 / nodes
    assert nodes == 9_248 and per_node == pytest.approx(2_282, abs=1)
    assert catalog["mi250x-node"].number("system_power_w") == pytest.approx(per_node, rel=0.02)
