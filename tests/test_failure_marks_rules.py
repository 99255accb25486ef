"""The failure what-if's rules for a selection (designer.model.failure_marks), without a window:
what Fail, Fail One Copy, Fail Some Copies and Restore offer, and the marks each one leaves.

The design: a replicated group `rack` of 4 copies holding one server `rack.node` (a DGX H100,
8 NICs), and a switch `leaf` outside the group; each NIC is linked once to the leaf over
`ib-ndr`, so each drawn link stands for 4 physical links."""

from __future__ import annotations

from designer.model import failure_marks
from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.topologies.base import Builder

CATALOG = default_catalog()


def four_racks_on_a_leaf() -> tuple[Design, list[str]]:
    design = Design(name="Four racks on a leaf")
    b = Builder(design, CATALOG)
    b.group("rack", 4)
    server = b.server("rack.node", "dgx-h100", "rack")
    b.item("leaf", "switch", "qm9700", None)
    links = [b.link(nic, "leaf", "ib-ndr") for nic in server["nics"]]
    return design, links


def test_without_marks_everything_chosen_can_fail_and_nothing_can_be_restored():
    design, links = four_racks_on_a_leaf()
    offer = failure_marks.offer(design, ["rack", "leaf"], links[:1])
    assert offer.fail and offer.fail_one and not offer.restore
    assert not offer.fail_some  # several things chosen: the dialog asks about one
    assert not failure_marks.offer(design, [], []).fail


def test_fail_marks_the_outermost_chosen_items_and_the_links_once():
    design, links = four_racks_on_a_leaf()
    chosen = failure_marks.targets_to_fail(design, ["rack", "rack.node", "gone"], [links[0], "gone-link"], None)
    assert chosen == ["rack", links[0]]  # the server is inside the rack; unknown ids left out
    design.settings["failures"] = failure_marks.with_marks(design, [{"target": t} for t in chosen])
    assert failure_marks.marked_targets(design) == {"rack", links[0]}
    assert failure_marks.targets_to_fail(design, ["rack"], [links[0]], None) == []
    assert not failure_marks.offer(design, ["rack"], [links[0]]).fail
    assert failure_marks.offer(design, ["rack"], [links[0]]).restore


def test_one_copy_fails_only_where_an_item_stands_for_several():
    design, links = four_racks_on_a_leaf()
    assert failure_marks.targets_to_fail(design, ["rack", "leaf"], links, 1) == ["rack"]  # links: every copy only
    assert not failure_marks.offer(design, ["leaf"], []).fail_one


def test_some_copies_of_the_one_chosen_item_or_link():
    design, links = four_racks_on_a_leaf()
    rack = failure_marks.copies_to_fail(design, ["rack"], [])
    assert rack is not None and (rack.target, rack.total, rack.what) == ("rack", 4, "copies")
    link = failure_marks.copies_to_fail(design, [], [links[0]])
    assert link is not None and (link.total, link.what) == (4, "physical links")
    assert link.name.startswith("Link ") and link.name.endswith(" — " + design.items["leaf"].label)
    assert failure_marks.copies_to_fail(design, ["leaf"], []) is None  # one copy: Fail it whole
    assert failure_marks.copies_on_medium(design, "ib-ndr") == [4] * len(links)
    design.settings["failures"] = [{"target": "rack", "copies": 1}]
    assert failure_marks.copies_to_fail(design, ["rack"], []) is None  # marked already


def test_restore_takes_back_the_chosen_marks_and_the_medium_of_a_chosen_link():
    design, links = four_racks_on_a_leaf()
    design.settings["failures"] = [{"target": "rack"}, {"target": "ib-ndr", "percent": 50.0}, {"target": "leaf"}]
    assert failure_marks.offer(design, [], [links[3]]).restore  # the link is on the failed medium
    assert failure_marks.after_restore(design, ["rack"], [links[3]]) == [{"target": "leaf"}]
    assert failure_marks.after_restore(design, ["rack", "leaf"], [links[3]]) is None  # no marks left: no setting
    assert not failure_marks.offer(design, ["rack.node"], []).restore  # inside a failed group, not marked itself


def test_known_drops_ids_no_longer_in_the_design():
    design, links = four_racks_on_a_leaf()
    assert failure_marks.known(design, ["rack", "old"], [links[0], "old"]) == (["rack"], [links[0]])
