import pytest

from designer.engine import evaluate
from designer.model import lint, load_catalog
from designer.topologies import GENERATORS, TopologyError, generate


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def errors(design, catalog):
    return [f for f in lint(design, catalog) if f.severity == "error"]


@pytest.mark.parametrize("platform", ["dgx-a100", "dgx-h100", "hgx-h200", "mi300x-platform", "supernode-32"])
def test_server_template_builds_any_platform(catalog, platform):
    design = generate("server", catalog, platform=platform)
    part = catalog[platform]
    assert evaluate(design, catalog).inventory.accelerators == int(part.number("accelerator_slots"))
    assert errors(design, catalog) == []


def test_dgx_h100_nvlinks_are_shared_over_four_nvswitches(catalog):
    design = generate("server", catalog, platform="dgx-h100")
    lanes = sorted(l.lanes for l in design.links.values() if l.a == "node.gpu0" and l.medium == "nvlink4")
    assert sum(lanes) == 18 and lanes == [4, 4, 5, 5]


def test_mi300x_platform_is_fully_connected(catalog):
    design = generate("server", catalog, platform="mi300x-platform")
    gpu_links = [l for l in design.links.values() if l.medium == catalog["mi300x"].get("scale_up_medium")]
    assert len(gpu_links) == 8 * 7 // 2


def test_rail_fat_tree_puts_gpu_i_of_every_server_on_leaf_i(catalog):
    design = generate("rail-fat-tree", catalog, nodes=64, nodes_per_su=32)
    graph = design.expand()
    leaf3 = [n for n in graph.nodes if graph.nodes[n]["item"] == "su.leaf3"]
    for leaf in leaf3:
        nics = {graph.nodes[n]["item"] for n in graph.neighbors(leaf) if graph.nodes[n]["item"].endswith("nic3")}
        assert nics == {"su.node.nic3"}
        assert sum(1 for n in graph.neighbors(leaf) if "nic" in n) == 32
    assert errors(design, catalog) == []


def test_rail_fat_tree_oversubscription_halves_uplinks(catalog):
    full = generate("rail-fat-tree", catalog, nodes=64, nodes_per_su=32)
    half = generate("rail-fat-tree", catalog, nodes=64, nodes_per_su=32, oversubscription=2)

    def uplinks(design):
        return sum(design.link_copies(l).instances * l.lanes for l in design.links.values()
                   if "spine" in l.b and "leaf" in l.a)

    assert uplinks(half) * 2 == uplinks(full)


def test_rail_fat_tree_scales_to_three_tiers_with_few_items(catalog):
    design = generate("rail-fat-tree", catalog, nodes=1280, nodes_per_su=32)
    assert evaluate(design, catalog).inventory.accelerators == 10240
    assert len(design.items) < 120
    assert errors(design, catalog) == []


@pytest.mark.parametrize("oversubscription", [1, 3])
def test_fat_tree_two_tiers(catalog, oversubscription):
    design = generate("fat-tree", catalog, nodes=32, oversubscription=oversubscription)
    assert evaluate(design, catalog).inventory.accelerators == 256
    assert errors(design, catalog) == []


def test_fat_tree_three_tiers(catalog):
    design = generate("fat-tree", catalog, nodes=1024, tiers=3)
    assert evaluate(design, catalog).inventory.accelerators == 8192
    assert errors(design, catalog) == []


def test_torus_3d_block_with_wraparound(catalog):
    design = generate("torus", catalog, dims="4x4x4")
    assert evaluate(design, catalog).inventory.accelerators == 64
    chip_links = [l for l in design.links.values()]
    assert len(chip_links) == 64 * 3  # every chip has 6 neighbours, each link counted once
    assert errors(design, catalog) == []


def test_torus_2d_open_mesh(catalog):
    design = generate("torus", catalog, dims="5x5", wrap=0, platform="dojo-training-tile", gpu="dojo-d1",
                      gpus_per_node=25)
    assert evaluate(design, catalog).inventory.accelerators == 25
    assert len(design.links) == 2 * 5 * 4


def test_pcie_fabric(catalog):
    design = generate("pcie-fabric", catalog, nodes=4)
    inv = evaluate(design, catalog).as_dict()["inventory"]
    assert inv["accelerators"] == 4 * int(catalog["supernode-32"].number("accelerator_slots"))
    assert errors(design, catalog) == []


@pytest.mark.parametrize("template,params,message", [
    ("rail-fat-tree", {"nodes": "many"}, "parameter 'nodes' must be a whole number"),
    ("rail-fat-tree", {"nodes": 0}, "parameter 'nodes' must be at least 1"),
    ("rail-fat-tree", {"gpu": "h100-sxx"}, "parameter 'gpu': 'h100-sxx' is not an accelerator"),
    ("rail-fat-tree", {"switch": "cx7-ndr"}, "parameter 'switch'"),
    ("fat-tree", {"oversubscription": 0.5}, "parameter 'oversubscription' must be at least 1"),
    ("fat-tree", {"colour": "red"}, "unknown parameter 'colour'"),
    ("torus", {"dims": "4by4"}, "parameter 'dims' must look like"),
    ("nope", {}, "unknown template 'nope'"),
])
def test_bad_parameters_are_refused_by_name(catalog, template, params, message):
    with pytest.raises(TopologyError, match=message):
        generate(template, catalog, **params)


def test_every_generator_takes_the_common_parameters():
    for generator in GENERATORS.values():
        names = {p.name for p in generator.params}
        assert {"gpu", "gpus_per_node", "nic", "nics_per_node"} <= names, generator.name
