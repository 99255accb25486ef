import pytest

from designer.engine import evaluate
from designer.engine.network import build_fabric, network_summary
from designer.engine.workloads import WorkloadError
from designer.model.catalog import default_catalog
from designer.topologies import generate


def summary(design):
    return network_summary(build_fabric(design, default_catalog()))


def test_dgx_h100_scale_up():
    s = summary(generate("server", default_catalog(), platform="dgx-h100"))
    up = s["tiers"]["scale-up"]
    assert up["injection_gb_per_s"] == 450 and up["domain_accelerators"] == 8
    assert up["in_network_reduction"] == "nvls" and up["diameter_hops"] == 2


def test_rail_fat_tree_figures():
    s = summary(generate("rail-fat-tree", default_catalog(), nodes=128))
    out = s["tiers"]["scale-out"]
    assert out["injection_gb_per_s"] == 50 and out["achieved_injection_gb_per_s"] == 48.5
    assert out["bisection_gb_per_s"] == 1024 * 50 / 2
    assert out["oversubscription"][0]["oversubscription"] == 1.0
    assert s["diameter_hops"] == 4


def test_halving_uplinks_changes_figures():
    design = generate("rail-fat-tree", default_catalog(), nodes=128)
    before = summary(design)["tiers"]["scale-out"]
    for link in list(design.links.values()):
        if "spine" in link.b and "leaf" in link.a and link.lanes > 1:
            design.update_link(link.id, lanes=link.lanes // 2)
    after = summary(design)["tiers"]["scale-out"]
    assert after["bisection_gb_per_s"] < before["bisection_gb_per_s"]
    assert after["oversubscription"][0]["oversubscription"] > before["oversubscription"][0]["oversubscription"]


def test_removing_a_spine_changes_bisection():
    design = generate("rail-fat-tree", default_catalog(), nodes=128)
    group = next(i for i in design.items.values() if i.kind == "group" and "spine" in i.id)
    before = summary(design)["tiers"]["scale-out"]["bisection_gb_per_s"]
    design.update_item(group.id, count=group.count - 1)
    assert summary(design)["tiers"]["scale-out"]["bisection_gb_per_s"] < before


def test_evaluate_sections_and_utilization():
    r = evaluate(generate("rail-fat-tree", default_catalog(), nodes=16)).as_dict()
    for key in ("network", "collectives", "training", "utilization", "inventory", "power"):
        assert key in r
    phase = r["utilization"]["phases"][0]
    assert phase["links"] and set(phase["tiers"]) >= {"scale-up", "scale-out"}
    assert all(0 <= l["utilization"] <= 1 for l in phase["links"])
    assert r["utilization"]["gpus"][0]["count"] >= 1


# --- servers with fewer NICs than GPUs (regression: injection 0, collectives None) ----------------

def _hgx_v100_pair(nics=None):
    """Two 8 × V100 servers (NVLink mesh; NIC n on GPU n*8//nics's PCIe) on one HDR switch."""
    from designer.model.design import Design
    from designer.topologies.base import Builder

    catalog = default_catalog()
    design = Design(name="two hgx-v100")
    b = Builder(design, catalog)
    switch = b.item("sw", "switch", "qm8700", None, name="Leaf")
    for prefix in ("a", "b"):
        server = b.server(prefix, "hgx-v100", None, nics=nics)
        for nic in server["nics"]:
            b.link(nic, switch, "ib-hdr")
    return design, catalog


def test_fewer_nics_than_gpus_share_the_servers_nics():
    design, catalog = _hgx_v100_pair()
    nic_gpus = {l.a for l in design.links.values() if l.b.endswith((".nic0", ".nic1"))}
    assert nic_gpus == {"a.gpu0", "a.gpu4", "b.gpu0", "b.gpu4"}  # GPUs 1-3, 5-7 have no NIC link
    fabric = build_fabric(design, catalog)
    # Each ConnectX-6 runs at the V100's PCIe Gen3 x16 (15.76 GB/s < 25 GB/s HDR); 2 NICs per 8 GPUs.
    host = 16 * catalog["pcie-gen3"].number("lane_gb_per_s")
    assert fabric.out_raw == pytest.approx(2 * host / 8)
    assert fabric.out_eff == pytest.approx(2 * min(host * 0.97, 23.5) / 8, rel=0.01)
    out = network_summary(fabric)["tiers"]["scale-out"]
    assert out["injection_gb_per_s"] == pytest.approx(2 * host / 8, rel=1e-4)
    r = evaluate(design, catalog).as_dict()
    rows = [x for x in r["collectives"] if x["ranks"] == 16]
    assert rows and all(x["time_s"] is not None and x["time_s"] > 0 for x in rows)
    auto_1g = next(x for x in rows if x["algorithm"] == "auto" and x["bytes"] == 2 ** 30)
    assert auto_1g["bottleneck"]["tier"] == "scale-out"
    assert r["training"]["step_time_s"] is not None and r["training"]["timed"]


def test_more_nics_never_lower_injection():
    figures = [build_fabric(*_hgx_v100_pair(nics)).out_eff for nics in (1, 2, 4)]
    assert 0 < figures[0] < figures[1] < figures[2]


def test_example_servers_with_fewer_nics_than_gpus_are_finite():
    from pathlib import Path

    from designer.io.files import load_design

    catalog = default_catalog()
    root = Path(__file__).resolve().parents[1] / "resources" / "examples"
    for name in ("meta-2017-v100", "microsoft-openai-2020", "frontier-mi250x"):
        r = evaluate(load_design(root / f"{name}.cluster.json", catalog), catalog).as_dict()
        assert r["network"]["tiers"]["scale-out"]["injection_gb_per_s"] > 0, name
        whole = [x for x in r["collectives"] if x["ranks"] == r["network"]["accelerators"]]
        assert whole and all(x["time_s"] is not None for x in whole), name


# --- accelerators with no path -------------------------------------------------------------------

def _two_unlinked_dgx():
    from designer.model.design import Design
    from designer.topologies.base import Builder

    catalog = default_catalog()
    design = Design(name="two unlinked DGX H100")
    b = Builder(design, catalog)
    b.server("a", "dgx-h100", None)
    b.server("b", "dgx-h100", None)
    return design, catalog


def test_no_path_between_servers_runs_the_job_on_the_largest_connected_set_and_says_so():
    import json

    design, catalog = _two_unlinked_dgx()
    result = evaluate(design, catalog)
    json.dumps(result.as_dict(), allow_nan=False)
    r = result.as_dict()
    assert r["network"]["job"].startswith("8 of 16 accelerators are joined by links")
    rows = r["collectives"]
    # One server's 8 GPUs, joined by NVLink: every row timed over them, none over the 16.
    assert rows and all(x["ranks"] == 8 and x["time_s"] and x["time_s"] > 0 for x in rows)
    t = r["training"]
    assert t["timed"] is True and t["step_time_s"] > 0
    plan = t["plan"]
    assert plan["tp"] * plan["pp"] * plan["dp"] * plan["cp"] == 8


def test_no_path_inside_one_server_is_still_timed():
    design, catalog = _two_unlinked_dgx()
    r = evaluate(design, catalog, {"collective": {"op": "allreduce", "sizes": ["1G"], "ranks": 8}}).as_dict()
    assert all(x["time_s"] and x["time_s"] > 0 for x in r["collectives"])


def test_an_explicit_plan_over_accelerators_with_no_path_is_refused():
    design, catalog = _two_unlinked_dgx()
    plan = {"tp": 8, "pp": 1, "dp": 2, "mb": 1, "recompute": "selective", "zero": 1}
    with pytest.raises(WorkloadError, match="= 16 but the design has 8 accelerators"):
        evaluate(design, catalog, {"training": {"model": "megatron-1.7b", "plan": plan}})
