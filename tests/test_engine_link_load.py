"""Per-link load: every drawn link carries the load the engine computes for it, and links that are
copies of each other by symmetry carry the same load, in every phase (no Qt)."""

import pytest

from designer.engine import views
from designer.engine.evaluate import evaluate
from designer.io.examples import example_paths, resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from tests.helpers import two_servers_on_a_leaf


def test_two_identical_servers_load_their_corresponding_links_alike_in_every_phase():
    design, counterpart = two_servers_on_a_leaf()
    result = evaluate(design)
    assert not result.lint
    phases = views.phase_names(result)
    assert phases[0].startswith("allreduce") and any(p.startswith("training") for p in phases)
    for phase in [None, *phases]:
        loads = views.link_utilization(result, phase)
        assert set(loads) == set(design.links)
        for first, second in counterpart.items():
            assert loads[first] == loads[second], (phase, first)
        # Every NVLink and every NIC uplink of both servers carries the allreduce.
        busy = {link_id for link_id, u in loads.items() if u > 0}
        assert {i for i in design.links if "sw" in i or i.endswith("leaf")} <= busy, phase


def test_the_per_tier_figures_count_every_loaded_link():
    """The SuperPOD's allreduce uses every NVLink: the scale-up tier reads the same load on all of
    them (the figure was 0 % on all but one GPU's links)."""
    result = evaluate(load_design(resolve_design_path("nvidia-superpod-h100-4su")))
    allreduce = result.utilization.phases[0]
    assert allreduce.phase.startswith("allreduce")
    scale_up = allreduce.tiers["scale-up"]
    assert len(scale_up) == 32 and min(scale_up) > 0.5 and len(set(scale_up)) == 1
    assert min(allreduce.tiers["scale-out"]) > 0


def test_the_dojo_mesh_loads_every_link_of_a_role_alike():
    result = evaluate(load_design(resolve_design_path("tesla-dojo-exapod")))
    loads = views.link_utilization(result)
    assert len(loads) == 5890 and min(loads.values()) > 0
    assert len(set(loads.values())) <= 3  # inside a tile, between tiles of a rack, between racks


def _links_between_ranks(design, loads) -> set[str]:
    """The links of `loads` on some path between two accelerators: all but those behind a dead end
    (a bridge with no accelerator beyond it, like a NIC cabled to nothing)."""
    import networkx as nx

    graph = nx.MultiGraph()
    for link_id in loads:
        link = design.links[link_id]
        graph.add_edge(link.a, link.b, key=link_id)
    accelerators = {i for i in graph if design.items[i].kind == "accelerator"}
    simple = nx.Graph(graph)
    dead = set()
    for a, b in nx.bridges(simple):
        if graph.number_of_edges(a, b) > 1:
            continue
        simple.remove_edge(a, b)
        if not (nx.node_connected_component(simple, a) & accelerators) or \
                not (nx.node_connected_component(simple, b) & accelerators):
            dead |= set(graph[a][b])
        simple.add_edge(a, b)
    return set(loads) - dead


@pytest.mark.parametrize("name", [p.name.removesuffix(".cluster.json") for p in example_paths()])
def test_every_link_between_two_ranks_carries_the_allreduce(name):
    """GPU↔NIC links carry what their NIC sends up, a unit's leaf–spine links what leaves the
    unit, FabreX's inter-switch link what a ring sends across it: none reads 0 % in the allreduce."""
    design = load_design(resolve_design_path(name))
    result = evaluate(design)
    phase = next((p for p in views.phase_names(result) if p.startswith("allreduce")), None)
    loads = views.link_utilization(result, phase) if phase else {}
    idle = sorted(link_id for link_id in _links_between_ranks(design, loads) if not loads[link_id] > 0)
    assert not idle, f"{name}: {len(idle)} links at 0 %, e.g. {idle[:5]}"


def test_a_nic_cabled_to_nothing_leaves_its_pcie_link_idle():
    result = evaluate(load_design(resolve_design_path("aws-p4de")))
    loads = views.link_utilization(result, views.phase_names(result)[0])
    assert loads["node.gpu0--node.nic0"] == 0 and loads["node.gpu0--node.sw0"] > 0


def test_a_gpu_nic_link_carries_what_its_nic_sends_up_by_capacity():
    design, _ = two_servers_on_a_leaf()
    result = evaluate(design)
    loads = views.link_utilization(result, views.phase_names(result)[0])
    pcie = next(i for i in design.links if i.startswith("s0.gpu0--") and "nic" in i)
    uplink = next(i for i in design.links if i.startswith(design.links[pcie].b + "--"))
    nic_gb_per_s = design.links[uplink].lanes * default_catalog().get("ib-ndr").number("lane_gb_per_s")
    pcie_gb_per_s = design.links[pcie].lanes * default_catalog().get(design.links[pcie].medium).number("lane_gb_per_s")
    assert loads[pcie] == pytest.approx(loads[uplink] * nic_gb_per_s / pcie_gb_per_s, rel=1e-3)


def test_servers_outside_a_smaller_communicator_stay_idle():
    """An allreduce over the first server's 8 GPUs: the second server (not a rank) carries nothing,
    though its links are copies of the first's by symmetry."""
    design, counterpart = two_servers_on_a_leaf()
    design.settings["workload"] = {"collective": {"op": "allreduce", "sizes": ["1G"], "ranks": 8}}
    result = evaluate(design)
    loads = views.link_utilization(result, views.phase_names(result)[0])
    nvlinks = [link_id for link_id in counterpart if ".sw" in link_id]
    assert nvlinks and all(loads[link_id] > 0 for link_id in nvlinks)
    assert all(loads[second] == 0 for second in counterpart.values())
