"""The two fat-tree templates at every size the switches allow, with partial last units, and the
defaults that follow from the parts named (issue 13)."""

import re

import pytest

from designer.cli import main
from designer.engine import evaluate
from designer.engine.inventory import multiplicities
from designer.model import lint, load_catalog
from designer.model.lint import ports_used
from designer.topologies import TopologyError, generate

NDR_GB_PER_S = 50  # one 400 Gb/s NDR port, per direction


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def check_design(design, catalog, nodes: int, gpus: int = 8, nics: int = 8) -> None:
    """What every generated fat tree must be: the accelerators asked for, every NIC's network
    port linked, no switch over its radix, lint clean, and few drawn items."""
    copies = multiplicities(design)
    items = design.items.values()
    assert sum(copies[i.id] for i in items if i.kind == "accelerator") == nodes * gpus
    assert sum(copies[i.id] for i in items if i.kind == "nic") == nodes * nics
    for item in items:
        ports = int(catalog[item.part].number("ports")) if item.kind in ("nic", "switch") else 0
        if item.kind == "nic":
            network = [l for l in design.links_of(item.id) if catalog[l.medium].get("tier") == "scale-out"]
            assert ports_used(design, item.id, catalog, network) == ports, item.id
        elif item.kind == "switch":
            assert ports_used(design, item.id, catalog) <= ports, item.id
    assert [f.message for f in lint(design, catalog) if f.severity == "error"] == []
    assert len(design.items) < 250


def switches(result, part: str = "qm9700") -> list[int]:
    """Switches of the part per tier (leaf, spine, core) as the engine counts them."""
    levels = result.as_dict()["network"]["tiers"]["scale-out"]["oversubscription"]
    assert sum(level["switches"] for level in levels) == result.inventory.switch_models[part]
    return [level["switches"] for level in levels]


# --- the size boundary: largest accepted, smallest refused, by the formula ----------------------------

# (parameters, NIC ports per server, switch ports k, tiers, oversubscription o): the limit is
# k·o/(o+1) ports per leaf × k leaves (two tiers) or × k²/2 leaves (three tiers).
BOUNDARIES = [
    ({}, 8, 64, 3, 1),
    ({"tiers": 2}, 8, 64, 2, 1),
    ({"oversubscription": 3}, 8, 64, 3, 3),
    ({"nic": "cx6-hdr"}, 8, 40, 3, 1),
    ({"nic": "cx6-hdr", "tiers": 2}, 8, 40, 2, 1),
    ({"nic": "cx7-400gbe", "nics_per_node": 4}, 4, 128, 3, 1),
]


@pytest.mark.parametrize("template", ["rail-fat-tree", "fat-tree"])
@pytest.mark.parametrize("params,nics,k,tiers,oversub", BOUNDARIES)
def test_largest_size_is_accepted_and_one_more_server_refused(catalog, template, params, nics, k, tiers, oversub):
    per_leaf = k * oversub // (oversub + 1)
    most_ports = per_leaf * (k if tiers == 2 else k * k // 2)
    most = most_ports // nics
    design = generate(template, catalog, nodes=most, **params)
    check_design(design, catalog, most, nics=nics)
    assert ("core" in str(design.items)) == (tiers == 3)
    word = {2: "two", 3: "three"}[tiers]
    with pytest.raises(TopologyError, match=re.escape(
            f"{template}: {most_ports:,} ports is the most a {word}-tier fabric of {k}-port switches"
            + (f" at {oversub:g}:1" if oversub != 1 else "")
            + f" can join; this design needs {(most + 1) * nics:,}")):
        generate(template, catalog, nodes=most + 1, **params)


def test_refusal_names_the_limit_as_the_issue_asks(catalog):
    with pytest.raises(TopologyError, match="65,536 ports is the most a three-tier fabric of 64-port switches can "
                                            "join; this design needs 73,728"):
        generate("rail-fat-tree", catalog, nodes=9216)


# --- sizes that did not divide into whole units ---------------------------------------------------------

@pytest.mark.parametrize("params", [
    {"nodes": 2500},
    {"nodes": 3000},
    {"nodes": 10_000, "nics_per_node": 4},
    {"nodes": 12_500, "nics_per_node": 4},
    {"nodes": 12_500, "nic": "cx7-400gbe", "nics_per_node": 4},
])
def test_issue_sizes_build_with_a_partial_unit(catalog, params):
    design = generate("rail-fat-tree", catalog, **params)
    nics = params.get("nics_per_node", 8)
    check_design(design, catalog, params["nodes"], nics=nics)
    assert "Partial unit" in str([i.name for i in design.items.values()])
    result = evaluate(design, catalog)
    # Non-blocking: half the ports' bandwidth crosses the middle, partial unit included.
    port = 50 if params.get("nic") != "efa-v2" else 12.5
    assert result.network.scale_out.bisection_gb_per_s == params["nodes"] * nics * port / 2


def test_engine_counts_a_partial_unit_and_block_as_a_hand_count(catalog):
    # 2,500 DGX H100 on QM9700, 8 rails: 78 units of 32 and one of 4 (79 units); rail pods of 30
    # units with 32 spines (one link from each leaf): 2 full blocks, then a last block of 18 full
    # units and the partial one; 32 core groups of 10 cores.
    result = evaluate(generate("rail-fat-tree", catalog, nodes=2500), catalog)
    assert switches(result) == [79 * 8, 3 * 8 * 32, 32 * 10]
    nic_cables = 2500 * 8
    leaf_spine = 78 * 8 * 32 + 8 * 32  # the partial unit's leaves: one link to each spine of their pod
    # A full pod's spine: 30 down, 3 links to each of its 10 cores; the last block's: 18 + 1 down, 2 to each.
    spine_core = 2 * 8 * 32 * 30 + 8 * 32 * 20
    assert result.bom.cables_by_medium == {"ib-ndr": nic_cables + leaf_spine + spine_core}
    assert result.network.scale_out.bisection_gb_per_s == 20_000 * NDR_GB_PER_S / 2


def test_engine_counts_a_partial_leaf_and_pod_as_a_hand_count(catalog):
    # 1,001 servers (7 × 11 × 13) of 8 NICs: 4 to a leaf, so 250 full leaves and one of 1 server;
    # 7 pods of 32 leaves under 32 spines each, a last pod of 26 leaves + the partial one;
    # 32 core groups of 4 (7 × 8 + 7 = 63 of a core's 64 ports).
    design = generate("fat-tree", catalog, nodes=1001)
    check_design(design, catalog, 1001)
    result = evaluate(design, catalog)
    assert switches(result) == [251, 8 * 32, 32 * 4]
    leaf_spine = 250 * 32 + 32
    spine_core = 7 * 32 * 4 * 8 + 32 * 4 * 7  # the last pod's spines: 27 down, 7 links to each of 4 cores
    assert result.bom.cables_by_medium == {"ib-ndr": 1001 * 8 + leaf_spine + spine_core}
    assert result.network.scale_out.bisection_gb_per_s == 1001 * 8 * NDR_GB_PER_S / 2


def test_every_unit_alike_where_the_count_divides(catalog):
    # The issue's 12,800 servers of 4 NICs: 400 units of 32 in blocks alike, no partial unit or block.
    design = generate("rail-fat-tree", catalog, nodes=12_800, nics_per_node=4)
    check_design(design, catalog, 12_800, nics=4)
    assert not [i for i in design.items.values() if "Partial" in i.name or i.id.startswith("blkx")]


# --- a sweep of sizes with the default parts ---------------------------------------------------------------

PRIMES = [61, 67, 127, 131, 257, 1021, 2039, 4093, 8191]
SWEEP = sorted(set(range(1, 65)) | set(range(65, 20_001, 997)) | set(PRIMES) | {255, 256, 4096, 8192, 8193, 20_000})


@pytest.mark.parametrize("template", ["rail-fat-tree", "fat-tree"])
def test_sweep_of_sizes_with_the_default_parts(catalog, template):
    """1…20,000 DGX H100 (8 × NDR) on QM9700: every size up to 65,536 ports builds; above, one refusal."""
    for nodes in SWEEP:
        if nodes * 8 > 65_536:
            with pytest.raises(TopologyError, match="65,536 ports is the most a three-tier fabric"):
                generate(template, catalog, nodes=nodes)
            continue
        design = generate(template, catalog, nodes=nodes)
        check_design(design, catalog, nodes)
        tiers = 1 + ("spine" in str(design.items).lower()) + ("core" in str(design.items).lower())
        assert tiers == (2 if nodes <= 256 else 3), nodes


# --- defaults that follow the parts ---------------------------------------------------------------------

def template_params(design) -> dict:
    return design.settings["template"]["params"]


def test_naming_a_gpu_picks_a_platform_that_carries_it_and_its_fabric(catalog):
    design = generate("rail-fat-tree", catalog, gpu="a100-sxm-80gb", nodes=40)
    # DGX A100 → its ConnectX-6 HDR → QM8700 (40 ports) → 20 servers per scalable unit.
    assert template_params(design)["platform"] == "dgx-a100" and template_params(design)["switch"] == "qm8700"
    assert design.items["su"].count == 2
    check_design(design, catalog, 40)


def test_naming_a_nic_picks_a_switch_of_its_medium_and_speed(catalog):
    assert template_params(generate("fat-tree", catalog, nic="cx6-hdr", nodes=16))["switch"] == "qm8700"
    design = generate("rail-fat-tree", catalog, nic="cx7-400gbe", nodes=200)
    assert template_params(design)["switch"] == "sn5600-400g"
    assert design.items["su"].count == 3 and design.items["sux"].name == "Partial unit of 8 servers"  # 64 a unit
    assert template_params(generate("rail-fat-tree", catalog, platform="hgx-h800"))["switch"] == "sn5600-400g"


def test_a_100g_link_takes_one_of_the_256_ports_of_the_sn5600_split_four_ways(catalog):
    # A 100 GbE EFA card goes to the slowest ports that carry it: the SN5600 as 256 × 200G. A unit
    # of 128 servers fills a leaf, 128 links down and 128 up: one port each, all 256 of them.
    design = generate("rail-fat-tree", catalog, platform="hgx-h100", nic="efa-v2", nics_per_node=8, nodes=128)
    assert template_params(design)["switch"] == "sn5600-200g"
    check_design(design, catalog, 128)
    assert ports_used(design, "su.leaf0", catalog) == catalog["sn5600-200g"].number("ports") == 256
    assert evaluate(design, catalog).network.scale_out.bisection_gb_per_s == 128 * 8 * 12.5 / 2
    # The same switch split 128 × 400G has half the ports for the same 100G links.
    with pytest.raises(TopologyError, match="a leaf needs 128 downlinks \\+ 128 uplinks but has 128 ports"):
        generate("rail-fat-tree", catalog, platform="hgx-h100", nic="efa-v2", nics_per_node=8, nodes=128,
                 nodes_per_su=128, switch="sn5600-400g")


def test_the_defaults_without_parts_named_are_dgx_h100_on_qm9700(catalog):
    params = template_params(generate("fat-tree", catalog))
    assert (params["platform"], params["switch"]) == ("dgx-h100", "qm9700")


@pytest.mark.parametrize("params,message", [
    ({"gpu": "tpu-v4"}, re.escape("platform 'tpu-v4-host' has no default NIC; set parameter 'nic' (the switch "
                                  "follows from it)")),
    ({"switch": "sn5600-400g"}, "NVIDIA ConnectX-7 NDR .* share no link medium .*; NICs it takes: .*cx7-400gbe.* "
                                "\\(parameter 'nic'\\)"),
    ({"tiers": 1}, re.escape("parameter 'tiers' must be 2 or 3 (or 0 to choose), got 1")),
])
def test_no_fitting_part_is_one_clear_refusal(catalog, params, message):
    for template in ("rail-fat-tree", "fat-tree"):
        with pytest.raises(TopologyError, match=f"^{template}: {message}"):
            generate(template, catalog, **params)


def test_tiers_zero_picks_the_fewest_that_fit(catalog):
    assert not any("core" in i for i in generate("rail-fat-tree", catalog, nodes=256).items)
    assert any("core" in i for i in generate("rail-fat-tree", catalog, nodes=257).items)


def test_templates_listing_says_what_each_default_follows_from(capsys):
    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    rail = out.split("rail-fat-tree:")[1].split("fat-tree:")[0]
    assert "default: the first that carries 'gpu'" in rail
    assert "default: one with the medium and port speed of 'nic' or the platform's NIC" in rail
    assert "as many as a leaf's downlinks" in rail and "0 for the fewest that fit" in rail
    assert "k²/2 in two tiers, k³/4 in three" in rail


@pytest.mark.parametrize("template,most,message", [
    # 3 rails: 21 blocks' pods (63 of a core's 64 ports) of 32 units of 32.
    ("rail-fat-tree", 21 * 32 * 32, "at most 21,504 servers fit three tiers of 64-port switches in scalable units of "
                                    "32 with 3 rails"),
    # 3 NICs a server: blocks of 32 servers on 3 leaves, 10 blocks (30 leaves) to a pod, 64 pods.
    ("fat-tree", 64 * 10 * 32, "at most 20,480 servers of 3 NICs fit three tiers of 64-port switches in blocks of 32 "
                               "on 3 leaves"),
])
def test_nic_counts_that_do_not_divide_the_radix_are_refused_at_what_fits(catalog, template, most, message):
    check_design(generate(template, catalog, nodes=most, nics_per_node=3), catalog, most, nics=3)
    with pytest.raises(TopologyError, match=re.escape(f"{template}: {message}; this design has {most + 1:,}")):
        generate(template, catalog, nodes=most + 1, nics_per_node=3)


def test_the_issue_commands_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "big.cluster.json"
    assert main(["new", "--template", "rail-fat-tree", "--set", "nodes=2500", "-o", str(path)]) == 0
    assert "20,000 × NVIDIA H100" in capsys.readouterr().out and path.stat().st_size < 100_000
    assert main(["new", "--template", "rail-fat-tree", "--set", "nodes=9216", "-o", str(tmp_path / "no.json")]) == 2
    assert "65,536 ports is the most a three-tier fabric of 64-port switches can join; this design needs 73,728" \
        in capsys.readouterr().err
    assert not (tmp_path / "no.json").exists()
