import pytest

from designer.model import Design, DesignError, Item, Link, lint, load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def small_design():
    d = Design(name="t")
    d.add_item(Item("su", "group", count=4))
    d.add_item(Item("nodes", "group", parent="su", count=32))
    d.add_item(Item("node", "server", part="dgx-h100", parent="nodes"))
    d.add_item(Item("gpu0", "accelerator", part="h100-sxm", parent="node"))
    d.add_item(Item("nic0", "nic", part="cx7-ndr", parent="node"))
    d.add_item(Item("leaf0", "switch", part="qm9700", parent="su"))
    d.add_item(Item("spines", "group", count=16))
    d.add_item(Item("spine", "switch", part="qm9700", parent="spines"))
    d.add_link(Link("l1", "gpu0", "nic0", "pcie-gen5", 16))
    d.add_link(Link("l2", "nic0", "leaf0", "ib-ndr", 1))
    d.add_link(Link("l3", "leaf0", "spine", "ib-ndr", 2))
    return d


def test_multiplicity_through_groups():
    d = small_design()
    assert d.multiplicity("gpu0") == 128
    assert d.multiplicity("leaf0") == 4
    assert d.multiplicity("spine") == 16


def test_links_crossing_group_boundaries_are_replicated_per_copy():
    d = small_design()
    inside = d.link_copies(d.links["l1"])
    assert inside.instances == 128 and inside.degree_at("a") == 1
    rail = d.link_copies(d.links["l2"])
    assert rail.instances == 128 and rail.degree_at("b") == 32  # each leaf sees its 32 servers
    mesh = d.link_copies(d.links["l3"])
    assert mesh.instances == 64  # 4 leaves × 16 spines
    assert mesh.degree_at("a") == 16 and mesh.degree_at("b") == 4


def test_expand_matches_link_copies():
    d = small_design()
    graph = d.expand()
    assert sum(1 for _, data in graph.nodes(data=True) if data["item"] == "gpu0") == 128
    assert graph.number_of_edges() == sum(d.link_copies(l).instances for l in d.links.values())
    # Every spine copy is reached by every SU's leaf.
    assert graph.degree("spine#5") == 4


def test_expand_refuses_above_limit():
    d = small_design()
    with pytest.raises(DesignError, match="above the limit of 100"):
        d.expand(limit=100)


def test_remove_cascades_to_children_and_links():
    d = small_design()
    items, links = d.remove_item("node")
    assert {i.id for i in items} == {"node", "gpu0", "nic0"}
    assert {l.id for l in links} == {"l1", "l2"}
    assert "gpu0" not in d.items and "l3" in d.links


@pytest.mark.parametrize("bad,message", [
    (Item("x", "server", part=None), "needs a catalogue part"),
    (Item("x", "rack", part="rack-42u", count=3), "only a group"),
    (Item("x", "group", count=0), "at least 1"),
    (Item("x", "group", count=10**9), "above the limit"),
    (Item("x", "accelerator", part="h100-sxm", parent="nowhere"), "does not exist"),
    (Item("x", "rack", part="rack-42u", parent="node"), "cannot be placed inside a server"),
])
def test_invalid_items_are_refused(bad, message):
    d = small_design()
    with pytest.raises(DesignError, match=message):
        d.add_item(bad)


def test_groups_multiplying_past_the_limit_are_refused():
    d = Design()
    d.add_item(Item("a", "group", count=100_000))
    with pytest.raises(DesignError, match="copies"):
        d.add_item(Item("b", "group", parent="a", count=100_000))


def test_cannot_move_an_item_inside_itself():
    d = small_design()
    with pytest.raises(DesignError, match="inside itself"):
        d.update_item("su", parent="nodes")


def test_snapshot_is_independent():
    d = small_design()
    snap = d.snapshot()
    d.update_item("su", count=8)
    assert snap.multiplicity("gpu0") == 128 and d.multiplicity("gpu0") == 256


def test_graph_is_networkx_with_links_as_edges():
    graph = small_design().graph()
    assert graph.has_edge("nic0", "leaf0")
    assert graph.number_of_nodes() == 8 and graph.number_of_edges() == 3


def _messages(findings):
    return [(f.severity, f.item, f.message) for f in findings]


def test_lint_clean_design_has_no_errors(catalog):
    assert [f for f in lint(small_design(), catalog) if f.severity == "error"] == []


def test_lint_switch_port_oversubscription(catalog):
    d = small_design()
    d.update_item("nodes", count=80)  # 80 servers on one 64-port leaf, plus 32 uplinks
    findings = _messages(lint(d, catalog))
    assert ("error", "leaf0", "leaf0 (NVIDIA Quantum-2 QM9700) needs 112 ports for its links but has 64") in [
        (s, i, m.replace(catalog["qm9700"].name, "NVIDIA Quantum-2 QM9700")) for s, i, m in findings]


def test_lint_incompatible_media(catalog):
    d = small_design()
    d.add_link(Link("bad", "gpu0", "leaf0", "nvlink4", 1))
    messages = [m for s, i, m in _messages(lint(d, catalog)) if i == "bad"]
    assert any("does not support" in m and catalog["qm9700"].name in m for m in messages)


def test_lint_unreachable_accelerator(catalog):
    d = small_design()
    d.add_item(Item("lonely", "accelerator", part="h100-sxm", parent="node"))
    assert ("warning", "lonely", "lonely has no path to the other accelerators") in _messages(lint(d, catalog))


def test_lint_server_over_its_slots(catalog):
    d = Design()
    d.add_item(Item("s", "server", part="dgx-h100"))
    d.add_item(Item("g", "group", parent="s", count=9))
    d.add_item(Item("gpu", "accelerator", part="h100-sxm", parent="g"))
    findings = _messages(lint(d, catalog))
    assert any(i == "s" and "holds 9 accelerators but has 8 slots" in m for _, i, m in findings)


def test_lint_rack_over_power_and_height(catalog):
    d = Design()
    d.add_item(Item("r", "rack", part="rack-42u"))
    d.add_item(Item("many", "group", parent="r", count=6))
    d.add_item(Item("s", "server", part="dgx-h100", parent="many"))
    d.add_item(Item("gs", "group", parent="s", count=8))
    d.add_item(Item("gpu", "accelerator", part="h100-sxm", parent="gs"))
    findings = _messages(lint(d, catalog))
    assert any(i == "r" and "need 48U but the rack has 42U" in m for _, i, m in findings)
    assert any(s == "warning" and i == "r" and "kW, over its" in m for s, i, m in findings)
