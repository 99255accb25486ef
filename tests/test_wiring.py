"""Wire… by rule (designer.model.wiring), checked against link lists worked out by hand."""

from __future__ import annotations

import pytest

from designer.model import wiring
from designer.model.catalog import default_catalog
from designer.model.design import Design, Item, Link
from designer.model.errors import DesignError


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def _two_servers(switches: int = 2, group_count: int = 1, switch_part: str = "qm9700",
                 nic_part: str = "cx7-ndr") -> Design:
    """Servers "Server 1" and "Server 2" with NICs "NIC 1" and "NIC 0" (drawn in that order), and
    switches named "Leaf 10", "Leaf 2"… so reading order is not drawing order."""
    design = Design()
    parent = None
    if group_count > 1:
        design.add_item(Item("pod", "group", count=group_count))
        parent = "pod"
    for s in (2, 1):
        design.add_item(Item(f"s{s}", "server", name=f"Server {s}", part="dgx-h100", parent=parent))
        for n in (1, 0):
            design.add_item(Item(f"s{s}.n{n}", "nic", name=f"NIC {n}", part=nic_part, parent=f"s{s}"))
    for k in reversed(range(switches)):
        design.add_item(Item(f"leaf{k}", "switch", name=f"Leaf {2 + 8 * k}", part=switch_part, x=100.0 * k))
    return design


def test_the_nics_of_selected_servers_in_reading_order_and_switches_by_name():
    design = _two_servers(switches=3)
    assert wiring.nics_of(design, ["s2", "s1", "leaf0"]) == ["s1.n0", "s1.n1", "s2.n0", "s2.n1"]
    # Named "Leaf 2", "Leaf 10", "Leaf 18": numbers in numeric order, not as text.
    assert wiring.switches_of(design, ["leaf2", "leaf1", "leaf0", "s1"]) == ["leaf0", "leaf1", "leaf2"]


def test_one_to_one_by_rail_joins_nic_i_of_every_server_to_switch_i():
    design = _two_servers()
    plan = wiring.plan(design, wiring.nics_of(design, ["s1", "s2"]), ["leaf0", "leaf1"], wiring.RAIL)
    assert plan.pairs == (("s1.n0", "leaf0"), ("s1.n1", "leaf1"), ("s2.n0", "leaf0"), ("s2.n1", "leaf1"))


def test_round_robin_deals_the_nics_to_the_switches_in_turn():
    design = _two_servers(switches=3)
    nics = wiring.nics_of(design, ["s1", "s2"])
    plan = wiring.plan(design, nics, ["leaf0", "leaf1", "leaf2"], wiring.ROUND_ROBIN)
    assert plan.pairs == (("s1.n0", "leaf0"), ("s1.n1", "leaf1"), ("s2.n0", "leaf2"), ("s2.n1", "leaf0"))


def test_every_to_every_joins_each_nic_to_each_switch():
    design = _two_servers()
    plan = wiring.plan(design, ["s1.n0", "s2.n1"], ["leaf0", "leaf1"], wiring.EVERY)
    assert plan.pairs == (("s1.n0", "leaf0"), ("s1.n0", "leaf1"), ("s2.n1", "leaf0"), ("s2.n1", "leaf1"))


def test_by_rail_a_server_with_more_nics_than_switches_is_refused_naming_it():
    design = _two_servers(switches=1)
    with pytest.raises(DesignError, match=r"^Wire by rail: Server 1 has 2 NICs but 1 switches are selected"):
        wiring.plan(design, wiring.nics_of(design, ["s1"]), ["leaf0"], wiring.RAIL)


def test_pairs_already_linked_are_left_as_they_are(catalog):
    design = _two_servers()
    design.add_link(Link("old", "leaf1", "s1.n1", "ib-ndr", 1))
    plan = wiring.plan(design, wiring.nics_of(design, ["s1", "s2"]), ["leaf0", "leaf1"], wiring.RAIL)
    assert plan.already_linked == (("s1.n1", "leaf1"),)
    edit = wiring.wire(design, catalog, plan, "ib-ndr", 1)
    assert edit.text == "Wire 3 NICs to 2 switches"
    edit.apply(design)
    made = {(l.a, l.b, l.medium, l.lanes) for l in design.links.values() if l.id != "old"}
    assert made == {("s1.n0", "leaf0", "ib-ndr", 1), ("s2.n0", "leaf0", "ib-ndr", 1), ("s2.n1", "leaf1", "ib-ndr", 1)}
    edit.inverse().apply(design)
    assert list(design.links) == ["old"]


def test_a_switch_without_enough_free_ports_is_refused_with_the_numbers(catalog):
    # 20 copies of the pod, each 2 servers × 2 NICs, round-robin onto one 40-port QM8700:
    # 20 × 4 = 80 ports needed. One port is already taken by a link from outside the pod.
    design = _two_servers(switches=1, group_count=20, switch_part="qm8700", nic_part="cx6-hdr")
    design.add_item(Item("x", "nic", name="Spare NIC", part="cx6-hdr"))
    design.add_link(Link("taken", "x", "leaf0", "ib-hdr", 1))
    plan = wiring.plan(design, wiring.nics_of(design, ["pod"]), ["leaf0"], wiring.ROUND_ROBIN)
    with pytest.raises(DesignError) as refused:
        wiring.wire(design, catalog, plan, "ib-hdr", 1)
    assert str(refused.value) == ("Wire: Leaf 2, a NVIDIA Quantum QM8700 HDR InfiniBand switch, has 39 free ports "
                                  "of 40; this wiring needs 80")
    assert list(design.links) == ["taken"]  # nothing made


def test_ten_copies_fit_a_switch_exactly_and_two_lanes_take_two_ports(catalog):
    design = _two_servers(switches=1, group_count=10, switch_part="qm8700", nic_part="cx6-hdr")
    plan = wiring.plan(design, wiring.nics_of(design, ["pod"]), ["leaf0"], wiring.ROUND_ROBIN)
    assert len(wiring.wire(design, catalog, plan, "ib-hdr", 1).ops) == 4  # 4 drawn links, 40 ports
    with pytest.raises(DesignError, match="has 40 free ports of 40; this wiring needs 80"):
        wiring.wire(design, catalog, plan, "ib-hdr", 2)


def test_a_single_port_nic_wired_to_two_switches_is_refused_naming_its_server(catalog):
    design = _two_servers()
    plan = wiring.plan(design, ["s1.n0"], ["leaf0", "leaf1"], wiring.EVERY)
    with pytest.raises(DesignError, match=r"^Wire: NIC 0 in Server 1, a .*, has 1 free port of 1; this wiring needs 2"):
        wiring.wire(design, catalog, plan, "ib-ndr", 1)


def test_a_medium_an_end_does_not_support_is_refused(catalog):
    design = _two_servers()
    plan = wiring.plan(design, ["s1.n0"], ["leaf0"], wiring.RAIL)
    assert wiring.common_media(design, catalog, ["s1.n0"], ["leaf0"]) == ["ib-ndr"]
    with pytest.raises(DesignError, match="does not support eth-400g"):
        wiring.wire(design, catalog, plan, "eth-400g", 1)


def test_nothing_to_wire_says_what_to_select():
    design = _two_servers()
    with pytest.raises(DesignError, match="select the switches"):
        wiring.plan(design, ["s1.n0"], [], wiring.RAIL)
    with pytest.raises(DesignError, match="select the NICs"):
        wiring.plan(design, [], ["leaf0"], wiring.RAIL)
