"""Per-link load: every drawn link carries the load the engine computes for it, and links that are
copies of each other by symmetry carry the same load, in every phase (no Qt)."""

from helpers import two_servers_on_a_leaf

from designer.engine import views
from designer.engine.evaluate import evaluate
from designer.io.examples import resolve_design_path
from designer.io.files import load_design


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
