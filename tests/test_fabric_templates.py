"""The dragonfly, rail-only, multi-plane and nvl72 templates and the engine's handling of them
(issue 13): each builds, lints clean and evaluates; each accepts its largest size by its formula
and refuses the next; the engine's figures follow each fabric's shape."""

import math
import re

import pytest

from designer.engine import calibration as cal
from designer.engine import collectives as coll
from designer.engine import evaluate
from designer.engine.network import SCALE_UP, build_fabric
from designer.engine.shapes import classify
from designer.engine.training import plan_candidates
from designer.model import lint, load_catalog
from designer.model.catalog import Catalog
from designer.topologies import TopologyError, generate

NEW_TEMPLATES = ("dragonfly", "rail-only", "multi-plane", "nvl72")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def errors(design, catalog):
    return [f.message for f in lint(design, catalog) if f.severity == "error"]


def alltoall(design, catalog, size="8G"):
    result = evaluate(design, catalog, {"collective": {"op": "alltoall", "sizes": [size]}})
    return next(row for row in result.collectives if row.algorithm == "auto"), result


@pytest.mark.parametrize("template", NEW_TEMPLATES)
def test_template_builds_lints_clean_and_evaluates(catalog, template):
    design = generate(template, catalog)
    assert design.settings["template"]["name"] == template
    assert errors(design, catalog) == []
    result = evaluate(design, catalog, {"training": {"model": "llama2-70b"}})
    assert all(row.time_s is not None for row in result.collectives), template
    assert result.training.step_time_s is not None, result.training.why


# --- size boundaries, by each template's formula --------------------------------------------------

def test_dragonfly_size_boundary(catalog):
    # Rosetta (64 ports), 4 NICs per node: a = 64/2 = 32 switches per group, p = (64/4)/4 = 4
    # nodes per switch, h = 64 − 16 − 31 = 17 global ports; at most a·h + 1 = 545 groups.
    a, p, h = 32, 4, 17
    most = (a * h + 1) * a * p
    assert most == 69_760
    design = generate("dragonfly", catalog, nodes=most)
    assert design.items["groups"].count == a * h + 1
    assert errors(design, catalog) == []
    with pytest.raises(TopologyError, match="69,760 servers is the most a dragonfly .* needs 69,761"):
        generate("dragonfly", catalog, nodes=most + 1)


def test_dragonfly_partial_group_is_one_more_group(catalog):
    design = generate("dragonfly", catalog, nodes=9408, links_per_pair=4)
    assert design.items["groups"].count == 73
    assert design.items["partial"].count == 1
    result = evaluate(design, catalog)
    assert result.network.accelerators == 9408 * 4
    assert result.network.shape.dragonfly.groups == 74
    # Frontier's 74 cabinets, one per group; the partial one keeps its 32 switches, 2 nodes each.
    assert result.inventory.racks == 74
    assert result.inventory.switches == 74 * 32
    full, partial = result.power.per_rack
    assert (full.copies, partial.copies) == (73, 1)
    assert full.kw_each == pytest.approx(128 * 2.24 + 32 * 0.25, rel=0.01)
    assert partial.kw_each == pytest.approx(64 * 2.24 + 32 * 0.25, rel=0.01)


def test_rail_only_size_boundary(catalog):
    # One QM9700 (64 ports) per rail up to 64 servers; then two tiers per rail: 64 leaves of 32
    # servers under 32 spines, 64 × 32 = 2,048 servers.
    one = generate("rail-only", catalog, nodes=64)
    assert not any(one.items[l.a].kind == "switch" and one.items[l.b].kind == "switch" for l in one.links.values())
    two = generate("rail-only", catalog, nodes=65)
    assert any(two.items[l.a].kind == "switch" and two.items[l.b].kind == "switch" for l in two.links.values())
    most = 64 * 32
    assert errors(generate("rail-only", catalog, nodes=most), catalog) == []
    with pytest.raises(TopologyError, match="2,048 servers is the most a rail .* needs 2,049"):
        generate("rail-only", catalog, nodes=most + 1)


def test_multi_plane_size_boundary(catalog):
    # 256-port switches (the SN5600 split 256 × 200G, one port per 200G plane port), 8 rails: a
    # plane's spine reaches every leaf, so 256 / 8 = 32 units of 128.
    most = 256 // 8 * 128
    assert errors(generate("multi-plane", catalog, nodes=most), catalog) == []
    with pytest.raises(TopologyError, match="4,096 servers is the most a two-tier plane .* needs 4,097"):
        generate("multi-plane", catalog, nodes=most + 1)


def test_nvl72_size_boundary(catalog):
    # 128-port switches, three tiers: a rail's spines take 64 units of 64 racks.
    most = 128 // 2 * 64
    design = generate("nvl72", catalog, nodes=most)
    assert errors(design, catalog) == []
    with pytest.raises(TopologyError, match="4,096 racks is the most .* needs 4,097"):
        generate("nvl72", catalog, nodes=most + 1)
    with pytest.raises(TopologyError, match="72 rails need switches of at least 72 ports"):
        generate("nvl72", catalog, nodes=2, switch="qm9700", nic="cx7-400gbe")


# --- the engine on each fabric --------------------------------------------------------------------

def small_dragonfly(catalog):
    """5 groups of 4 switches, one 4-GPU node per switch, 1 global link between every two groups:
    each group has 4 global links of 25 GB/s, 100 GB/s out of a group."""
    return generate("dragonfly", catalog, nodes=20, nodes_per_switch=1, switches_per_group=4,
                    global_ports_per_switch=2, links_per_pair=1)


def test_dragonfly_alltoall_is_limited_by_the_global_links(catalog):
    row, result = alltoall(small_dragonfly(catalog), catalog)
    n, per_group, global_cut = 80, 16, 4 * 25.0
    # Minimal routing: a group sends per_group × (n − per_group) / n of the message out over all
    # its global links.
    seconds_per_byte = per_group * (n - per_group) / n / (global_cut * cal.NET_EFFICIENCY * 1e9)
    expected_busbw = 1 / seconds_per_byte / 1e9 * (n - 1) / n
    assert math.isclose(row.busbw_gb_per_s, expected_busbw, rel_tol=0.01)
    assert row.bottleneck.where.startswith("rack HPE Cray EX4000 cabinet")  # each group in its cabinet
    assert row.bottleneck.link.endswith("--global")
    shape = result.network.shape
    assert shape.kind == "dragonfly"
    figures = shape.dragonfly
    assert (figures.groups, figures.switches_per_group, figures.global_links_per_group) == (5, 4, 4)
    assert figures.minimal.alltoall_gb_per_s == global_cut
    assert figures.minimal.neighbour_gb_per_s == global_cut / 4  # links to one of 4 other groups
    assert figures.valiant.alltoall_gb_per_s == figures.valiant.neighbour_gb_per_s == global_cut / 2
    assert figures.bisection_gb_per_s == 5 * 5 / 4 * global_cut / 4
    assert result.network.scale_out.bisection_gb_per_s == figures.bisection_gb_per_s


def test_dragonfly_large_ring_takes_half_the_global_links_valiant(catalog):
    # 5 groups of 8 switches, 1 global link per switch, 1 between every two groups: 100 GB/s of
    # global links out of a group, 175 GB/s of local links out of a switch.
    design = generate("dragonfly", catalog, nodes=40, nodes_per_switch=1, switches_per_group=8,
                      global_ports_per_switch=1, links_per_pair=1)
    result = evaluate(design, catalog, {"collective": {"op": "allreduce", "sizes": ["8G"], "algorithm": "ring"}})
    row = next(r for r in result.collectives if r.algorithm == "ring")
    assert row.bottleneck.where.startswith("rack HPE Cray EX4000 cabinet")  # each group in its cabinet
    # The ring crosses each group boundary with its whole message; Valiant spreads it over half
    # the group's 100 GB/s of global links (minimal would have only the 25 GB/s to one neighbour).
    assert math.isclose(row.busbw_gb_per_s, 50 * cal.NET_EFFICIENCY, rel_tol=0.02)
    assert "Valiant for rings" in result.network.shape.dragonfly.routing


def test_rail_only_cross_rail_traffic_pays_the_scale_up_hop(catalog):
    def alltoall_up_traffic(design):
        fabric = build_fabric(design, catalog)
        shape = classify(fabric)
        n = fabric.total_accelerators
        (phase,) = coll.phases(fabric, "alltoall", "ring", coll.layout(fabric, n))
        up = next(t for t in phase.terms if t.tier == SCALE_UP)
        return shape, up.traffic, n

    shape, traffic, n = alltoall_up_traffic(generate("rail-only", catalog, nodes=16))
    assert (shape.kind, shape.rails) == ("rail-only", 8)
    r = 8
    assert math.isclose(traffic, (r - 1) / n + (n - r) / n * 7 / 8)
    # The same servers on a rail-optimized fat tree (a spine joins the rails) send cross-rail
    # traffic through the spine instead.
    shape, traffic, n = alltoall_up_traffic(generate("rail-fat-tree", catalog, nodes=16))
    assert shape is None
    assert math.isclose(traffic, (r - 1) / n)


def test_multi_plane_aggregates_the_planes_bandwidth(catalog):
    two, result = alltoall(generate("multi-plane", catalog, nodes=64), catalog)
    one, single = alltoall(generate("multi-plane", catalog, nodes=64, planes=1), catalog)
    assert result.network.shape.kind == "multi-plane"
    assert result.network.shape.planes == 2
    assert single.network.shape is None
    assert result.network.scale_out.injection_gb_per_s == 2 * single.network.scale_out.injection_gb_per_s
    assert result.network.shape.plane_injection_gb_per_s == single.network.scale_out.injection_gb_per_s
    assert math.isclose(two.busbw_gb_per_s, 2 * one.busbw_gb_per_s, rel_tol=0.02)


def test_nvl72_domain_is_72_and_the_auto_plan_uses_it(catalog):
    result = evaluate(generate("nvl72", catalog, nodes=512), catalog, {"training": {"model": "gpt3-175b"}})
    assert result.network.scale_up.domain_accelerators == 72
    assert result.network.scale_up.domains == 512
    # The plan's model-parallel group uses more of the domain than an 8-GPU server holds and
    # tiles it, so its tensor and pipeline traffic stays on NVLink.
    plan = result.training.plan
    assert plan.tp * plan.pp > 8
    assert 72 % (plan.tp * plan.pp) == 0


def test_auto_plan_tp_tiles_the_domain_up_to_72():
    model = {"global_batch": 4096, "layers": 96, "heads": 144, "seq": 2048}
    tps = {plan["tp"] for plan in plan_candidates(72 * 8, 72, model)}
    assert tps == {1, 2, 3, 4, 6, 8, 9, 12, 18, 24, 36, 72}
    # An 8-GPU domain keeps the powers of two it always had.
    assert {plan["tp"] for plan in plan_candidates(64, 8, {**model, "heads": 64})} == {1, 2, 4, 8}


def test_existing_shapes_are_not_mistaken(catalog):
    for template in ("rail-fat-tree", "fat-tree"):
        fabric = build_fabric(generate(template, catalog, nodes=64), catalog)
        assert classify(fabric) is None, template


def test_summary_rows_name_the_fabric_shape(catalog):
    from designer.engine.summary import performance_rows

    design = generate("dragonfly", catalog, nodes=9408, links_per_pair=4)
    rows = {label: value for label, value, _ in performance_rows(evaluate(design, catalog))}
    assert rows["Scale-out fabric"] == "dragonfly"
    assert rows["Dragonfly groups"] == 74
    assert rows["Global bandwidth per group"] == 73 * 4 * 25
    assert rows["Global bandwidth per group (Valiant)"] == 73 * 4 * 25 / 2
    plain = {label for label, _, _ in performance_rows(evaluate(generate("rail-fat-tree", catalog), catalog))}
    assert "Scale-out fabric" not in plain


def test_dragonfly_counts_each_global_cable_once(catalog):
    # 25 groups of 4 switches × 2 servers × 4 NICs (the last group partial: 4 servers on its 4
    # switches); h = 64 − 8 − 3 = 53 global ports, 4 × 53 // 24 = 8 links to each other group.
    design = generate("dragonfly", catalog, nodes=196, switches_per_group=4, nodes_per_switch=2)
    result = evaluate(design, catalog)
    nic_cables = 196 * 4
    local_cables = 25 * (4 * 3 // 2)
    global_cables = 25 * 24 * 8 // 2  # every pair of groups, 8 cables each
    assert result.bom.cables_by_medium["slingshot-200g"] == nic_cables + local_cables + global_cables
    # Each group in its cabinet: copper inside it, optical (two transceivers) between cabinets.
    assert result.bom.transceivers_by_medium["slingshot-200g"] == 2 * global_cables
    assert result.inventory.racks == 25
    assert "dragonfly-global-links" not in result.inventory.switch_models
    assert result.inventory.switches == 25 * 4  # the partial group keeps its switches
    assert all(row.part != "dragonfly-global-links" for row in result.bom.rows)


@pytest.mark.parametrize("routing, neighbour_share, alltoall_share", [("minimal", 1 / 7, 1.0), ("valiant", 0.5, 0.5)])
def test_dragonfly_routing_setting_forces_one_routing(catalog, routing, neighbour_share, alltoall_share):
    # 8 groups of 128 nodes with one global cable between two groups: the global links bound all-to-all.
    sizes = {"nodes": 1024, "links_per_pair": 1}
    adaptive = generate("dragonfly", catalog, **sizes)
    forced = generate("dragonfly", catalog, routing=routing, **sizes)
    assert "dragonfly_routing" not in adaptive.settings
    assert forced.settings["dragonfly_routing"] == routing
    fabric = build_fabric(forced, catalog)
    assert classify(fabric).dragonfly.routing.lower().startswith(routing)
    group = next(b for b in fabric.boundaries if b.item == "g.cabinet")
    assert group.neighbour_share == pytest.approx(neighbour_share)
    assert group.uniform_share == pytest.approx(alltoall_share)
    free, _ = alltoall(adaptive, catalog)
    fixed, _ = alltoall(forced, catalog)
    # Valiant halves what the global links carry for all-to-all; minimal is what adaptive picks for it.
    assert fixed.busbw_gb_per_s == pytest.approx(free.busbw_gb_per_s * alltoall_share, rel=0.02)


def test_dragonfly_rack_follows_the_group(catalog):
    # 4 NICs per node: 128 nodes and 32 switches per group fit a Cray EX cabinet (192U, 300 kW).
    assert sum(i.kind == "rack" for i in generate("dragonfly", catalog).items.values()) == 1
    # One NIC per node: 512 nodes per group do not; by default the groups are drawn without racks…
    wide = generate("dragonfly", catalog, nics_per_node=1, nodes=512)
    assert not any(i.kind == "rack" for i in wide.items.values()) and errors(wide, catalog) == []
    # …and a cabinet named for them is refused with the figures.
    with pytest.raises(TopologyError, match="512 servers and 32 switches needs 544U .* holds 192U and 300 kW"):
        generate("dragonfly", catalog, nics_per_node=1, nodes=512, rack="cray-ex-cabinet")


# --- defaults that follow the parts named ---------------------------------------------------------------

def chosen(design) -> tuple:
    params = design.settings["template"]["params"]
    return params["platform"], params["switch"]


@pytest.mark.parametrize("template,nodes,nic,switch", [
    ("rail-only", 64, "cx7-400gbe", "sn5600-400g"),
    ("rail-only", 16, "cx6-hdr", "qm8700"),
    ("multi-plane", 16, "cx7-400gbe", "sn5600-400g"),
    ("nvl72", 2, "cx7-400gbe", "sn5600-400g"),
    ("dragonfly", 64, "cx7-400gbe", "sn5600-400g"),
    ("dragonfly", 64, "cx7-ndr", "qm9700"),
])
def test_naming_a_nic_picks_a_switch_of_its_medium_and_speed_in_every_template(catalog, template, nodes, nic, switch):
    design = generate(template, catalog, nodes=nodes, nic=nic)
    assert chosen(design)[1] == switch
    assert errors(design, catalog) == []


@pytest.mark.parametrize("template,defaults", [
    ("rail-only", ("dgx-h100", "qm9700")),
    ("multi-plane", ("dgx-h100", "sn5600-200g")),  # cx7-2x200gbe: one 200G port for each plane port
    ("nvl72", ("gb200-nvl72", "sn5600-400g")),
    ("dragonfly", ("mi250x-node", "slingshot-rosetta")),
])
def test_each_template_keeps_its_own_parts_when_none_is_named(catalog, template, defaults):
    assert chosen(generate(template, catalog, nodes=2)) == defaults


@pytest.mark.parametrize("template,gpu,platform,switch", [
    ("rail-only", "a100-sxm-80gb", "dgx-a100", "qm8700"),  # DGX A100 → its ConnectX-6 HDR → QM8700
    ("multi-plane", "h200-sxm", "hgx-h200", "sn5600-200g"),
    ("nvl72", "gb200", "gb200-nvl72", "sn5600-400g"),
    ("dragonfly", "h100-sxm", "dgx-h100", "slingshot-rosetta"),
])
def test_naming_a_gpu_picks_a_platform_that_carries_it(catalog, template, gpu, platform, switch):
    design = generate(template, catalog, nodes=2, gpu=gpu)
    assert chosen(design) == (platform, switch)
    assert errors(design, catalog) == []


@pytest.mark.parametrize("template", ["rail-fat-tree", "fat-tree", "rail-only", "multi-plane", "nvl72", "dragonfly"])
def test_no_fitting_switch_is_one_clear_refusal(catalog, template):
    without_100g = Catalog(p for p in catalog if not (p.kind == "switch" and "eth-100g" in p.media))
    message = ("no switch in the catalogue has ports of 100 Gb/s or faster for efa or eth-100g (the network of "
               "'efa-v2'); set parameter 'switch'")
    with pytest.raises(TopologyError, match=f"^{template}: " + re.escape(message)):
        generate(template, without_100g, nodes=2, nic="efa-v2")


def test_rail_only_with_a_named_ethernet_nic_builds_and_evaluates(catalog):
    # The case: 400GbE NICs no longer land on the InfiniBand QM9700.
    design = generate("rail-only", catalog, nic="cx7-400gbe", nodes=64)
    assert errors(design, catalog) == []
    assert evaluate(design, catalog).as_dict()["lint"] == []


def test_templates_listing_says_what_the_new_templates_defaults_follow_from(capsys):
    from designer.cli import main

    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    for template in ("rail-only", "multi-plane", "nvl72", "dragonfly"):
        section = re.search(f"^{template}:.*\n((?:    .*\n)+)", out, re.M).group(1)
        assert "medium and port speed of 'nic'" in section, template
        assert "carries 'gpu'" in section, template
