from designer.engine import evaluate
from designer.engine.network import build_fabric, network_summary
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
