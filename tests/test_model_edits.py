"""Edits as plain model values: every operation undoes exactly, an edit is all or nothing, removals
cascade through the model's own rule, and the placement, naming and media rules the canvas asks.
Nothing here needs Qt (checked in a fresh interpreter below)."""

from __future__ import annotations

import copy
import subprocess
import sys
from dataclasses import replace

import pytest

from designer.model import default_catalog, edits, placement
from designer.model.catalog import Catalog, Part
from designer.model.design import Design, DesignError, Item, Link
from designer.model.edits import (AddItem, AddLink, Edit, RemoveItem, RemoveLink, SetSetting, UpdateItem,
                                  UpdateLink)
from designer.topologies import generate
from tests.helpers import flat_grid, mini_fat_tree


def state(design: Design):
    return dict(design.items), dict(design.links), copy.deepcopy(design.settings)


def rack_design() -> Design:
    """A rack holding a server (a GPU and a NIC inside) and a switch; the NIC is linked to the
    switch and to a switch outside the rack."""
    d = Design(name="rack", settings={"workload": {"model": "a"}})
    d.add_item(Item("rack", "rack", name="Rack 1", part="rack-48u"))
    d.add_item(Item("srv", "server", part="dgx-h100", parent="rack", x=20, y=40))
    d.add_item(Item("gpu", "accelerator", name="GPU 1", part="h100-sxm", parent="srv"))
    d.add_item(Item("nic", "nic", part="cx7", parent="srv", x=100))
    d.add_item(Item("tor", "switch", name="Switch 1", part="qm9700", parent="rack", y=200))
    d.add_item(Item("spine", "switch", name="Switch 2", part="qm9700", x=400))
    d.add_link(Link("gpu--nic", "gpu", "nic", "pcie-gen5", 16))
    d.add_link(Link("nic--tor", "nic", "tor", "ib-ndr"))
    d.add_link(Link("tor--spine", "tor", "spine", "ib-ndr", 4))
    return d


def round_trip(design: Design, edit: Edit) -> None:
    """Apply, check something changed, undo, check the design is exactly as before, redo."""
    before = state(design)
    edit.apply(design)
    after = state(design)
    assert after != before
    edit.inverse().apply(design)
    assert state(design) == before
    edit.apply(design)
    assert state(design) == after


# --- operations ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda d: AddItem(Item("leaf2", "switch", part="qm9700", parent="rack")),
    lambda d: AddItem(Item("srv2", "server", part="dgx-h100", parent="rack"),
                      (Item("gpu2", "accelerator", part="h100-sxm", parent="srv2"),),
                      (Link("gpu2--tor", "gpu2", "tor", "ib-ndr"),)),
    lambda d: RemoveItem(d.items["spine"], (), (d.links["tor--spine"],)),
    lambda d: UpdateItem(d.items["srv"], replace(d.items["srv"], x=60.0, name="Renamed")),
    lambda d: AddLink(Link("gpu--tor", "gpu", "tor", "ib-ndr", 2)),
    lambda d: RemoveLink(d.links["nic--tor"]),
    lambda d: UpdateLink(d.links["nic--tor"], replace(d.links["nic--tor"], lanes=2, medium="eth-400g")),
    lambda d: SetSetting("workload", {"model": "a"}, {"model": "b"}),
    lambda d: SetSetting("in_network_reduction", None, True),
    lambda d: SetSetting("workload", {"model": "a"}, None),
], ids=["add", "add-with-contents", "remove", "update-item", "add-link", "remove-link", "update-link",
        "set-setting", "new-setting", "clear-setting"])
def test_each_operation_is_undone_exactly_by_its_inverse(make):
    design = rack_design()
    round_trip(design, Edit((make(design),)))


def test_the_change_names_what_an_edit_touched():
    design = rack_design()
    edit = edits.remove(design, ["srv"], ["tor--spine"])
    change = edit.apply(design)
    assert set(change.items_removed) == {"srv", "gpu", "nic"}
    assert change.items_removed.index("gpu") < change.items_removed.index("srv")  # children first
    assert set(change.links_removed) == {"gpu--nic", "nic--tor", "tor--spine"}
    assert not (change.items_added or change.items_changed or change.links_added or change.links_changed)
    undo = edit.inverse().apply(design)
    assert set(undo.items_added) == {"srv", "gpu", "nic"} and undo.items_added[0] == "srv"
    assert set(undo.links_added) == {"gpu--nic", "nic--tor", "tor--spine"}
    assert edits.set_setting(design, "workload", {"model": "b"}, "W").apply(design).settings_changed == ["workload"]


def test_an_edit_refused_half_way_leaves_the_design_exactly_as_before():
    design = rack_design()
    before = state(design)
    srv = design.items["srv"]
    edit = Edit((
        UpdateItem(srv, replace(srv, x=99.0)),
        RemoveLink(design.links["nic--tor"]),
        AddItem(Item("extra", "switch", part="qm9700")),
        RemoveItem(design.items["spine"], (), (design.links["tor--spine"],)),
        SetSetting("workload", {"model": "a"}, {"model": "b"}),
        AddItem(Item("cpu", "cpu", part="xeon-8480", parent="tor")),  # a cpu cannot go in a switch
    ))
    with pytest.raises(DesignError, match="cannot be placed inside a switch"):
        edit.apply(design)
    assert state(design) == before


def test_an_operation_refused_half_way_takes_back_its_own_part_too():
    design = rack_design()
    before = state(design)
    op = AddItem(Item("srv2", "server", part="dgx-h100", parent="rack"),
                 (Item("gpu2", "accelerator", part="h100-sxm", parent="srv2"),),
                 (Link("gpu2--x", "gpu2", "nowhere", "ib-ndr"),))
    with pytest.raises(DesignError, match="does not exist"):
        Edit((op,)).apply(design)
    assert state(design) == before


def test_an_operation_made_for_another_state_is_refused_not_half_applied():
    design = rack_design()
    srv = design.items["srv"]
    stale = Edit((UpdateItem(replace(srv, x=1.0), replace(srv, x=2.0)),))
    with pytest.raises(DesignError, match="changed since"):
        stale.apply(design)
    removal = edits.remove(design, ["rack"])
    design.add_item(Item("late", "switch", part="qm9700", parent="rack"))  # not in the recorded contents
    before = state(design)
    with pytest.raises(DesignError, match="changed since"):
        removal.apply(design)
    assert state(design) == before


# --- removal ---------------------------------------------------------------------------------------
def test_removal_cascades_through_the_models_own_rule(monkeypatch):
    design = rack_design()
    before = state(design)
    removed_by_model = []
    original = Design.remove_item

    def spy(self, item_id):
        removed_by_model.append(item_id)
        return original(self, item_id)

    monkeypatch.setattr(Design, "remove_item", spy)
    edit = edits.remove(design, ["rack", "gpu", "missing"])  # the GPU goes with the rack anyway
    (op,) = edit.ops
    assert isinstance(op, RemoveItem) and op.item.id == "rack"
    assert {i.id for i in op.contents} == {"srv", "gpu", "nic", "tor"}
    assert {l.id for l in op.links} == {"gpu--nic", "nic--tor", "tor--spine"}
    removed_by_model.clear()
    edit.apply(design)
    assert removed_by_model == ["rack"]
    assert set(design.items) == {"spine"} and not design.links
    edit.inverse().apply(design)
    assert state(design) == before


def test_removing_a_link_and_an_item_it_touches_removes_each_once():
    design = rack_design()
    edit = edits.remove(design, ["spine"], ["tor--spine", "tor--spine", "gpu--nic"])
    assert [type(op) for op in edit.ops] == [RemoveLink, RemoveItem]  # the spine's link goes with it
    assert edit.ops[0].link.id == "gpu--nic" and [l.id for l in edit.ops[1].links] == ["tor--spine"]
    round_trip(design, edit)



def test_removing_many_top_level_items_is_one_pass_over_the_design_and_undoes_exactly(monkeypatch):
    """A Delete of every item of a big flat design removes them in one pass (`Design.remove_items`),
    not one pass per item; a link between two removed items goes with the first of them, so the
    undo puts both ends back before it."""
    design = rack_design()
    design.add_item(Item("spine2", "switch", part="qm9700", x=600))
    design.add_link(Link("spine--spine2", "spine", "spine2", "ib-ndr"))
    passes = []
    original = Design.remove_items
    monkeypatch.setattr(Design, "remove_items", lambda self, ids: passes.append(list(ids)) or original(self, ids))
    edit = edits.remove(design, ["spine2", "rack", "spine"])
    (op,) = edit.ops
    assert isinstance(op, edits.RemoveItems) and [r.item.id for r in op.removals] == ["spine2", "rack", "spine"]
    assert [l.id for l in op.removals[0].links] == ["spine--spine2"]
    assert [l.id for l in op.removals[1].links] == ["gpu--nic", "nic--tor", "tor--spine"]
    passes.clear()
    round_trip(design, edit)
    assert passes == [["spine2", "rack", "spine"]] * 2  # the edit and its redo: one pass each
    assert not design.items and not design.links
    assert edit.change().items_removed[-1] == "spine"


class _CountedPasses(dict):
    """An id → value table that counts the walks over all of it (a whole-design pass)."""

    walks = 0

    def __iter__(self):
        _CountedPasses.walks += 1
        return super().__iter__()

    def keys(self):
        _CountedPasses.walks += 1
        return super().keys()

    def values(self):
        _CountedPasses.walks += 1
        return super().values()

    def items(self):
        _CountedPasses.walks += 1
        return super().items()


def test_deleting_undoing_and_moving_a_thousand_items_makes_a_fixed_number_of_design_passes(monkeypatch):
    """Counted operations, not time: deleting 1,024 hosts (4,096 chips, 8,192 links) with their
    contents and links, undoing it and moving every host each walk the whole design a few times
    (every walk over the item or link table, and every children index, counted); one walk per item
    (a whole-design look per removal, per re-added item or per moved item) would make thousands."""
    design = flat_grid(64, wrap=True, hosts=True)
    design.items, design.links = _CountedPasses(design.items), _CountedPasses(design.links)
    scans = []
    for name in ("children_index", "children", "links_of"):  # each looks at every item or link
        original = getattr(Design, name)
        monkeypatch.setattr(Design, name, lambda self, *args, _original=original, _name=name:
                            scans.append(_name) or _original(self, *args))
    hosts = [i for i, item in design.items.items() if item.parent is None]
    assert len(hosts) == 1024
    before = state(design)

    def passes(step) -> int:
        start = _CountedPasses.walks + len(scans)
        step()
        return _CountedPasses.walks + len(scans) - start

    every_item, every_link = list(design.items), list(design.links)  # Select All
    delete = edits.remove(design, every_item, every_link)
    assert passes(lambda: edits.remove(design, every_item, every_link)) <= 6
    assert passes(lambda: delete.apply(design)) <= 6
    assert not design.items and not design.links
    assert passes(lambda: delete.inverse().apply(design)) <= 6
    assert state(design) == before
    positions = {h: (design.items[h].x + 5, design.items[h].y) for h in hosts}
    move = edits.move(design, positions)
    assert passes(lambda: edits.move(design, positions)) <= 6
    assert passes(lambda: move.apply(design)) <= 6
    assert len(move.ops) == 1024 and design.items[hosts[-1]].x == before[0][hosts[-1]].x + 5
    assert passes(lambda: move.inverse().apply(design)) <= 6
    assert state(design) == before


# --- compound edits -----------------------------------------------------------------------------------
def test_move_names_itself_and_can_move_into_a_new_container():
    design = rack_design()
    one = edits.move(design, {"spine": (420, 0)})
    assert one.text == "Move item" and len(one.ops) == 1
    two = edits.move(design, {"spine": (420, 0), "rack": (5, 5)})
    assert two.text == "Move 2 items"
    into = edits.move(design, {"spine": (20, 300)}, {"spine": "rack"})
    assert into.text == "Move into Rack 1"
    round_trip(design, into)
    assert design.items["spine"].parent == "rack"
    assert edits.move(design, {"spine": (20, 300)}).ops == ()  # already there


def test_group_and_ungroup_undo_exactly():
    design = rack_design()
    edit, group_id = edits.group(design, ["srv", "gpu", "tor"], count=1, name="pod")
    assert group_id and edit.text == "Group"
    assert [type(op) for op in edit.ops] == [AddItem, UpdateItem, UpdateItem]  # the GPU goes with its server
    round_trip(design, edit)
    assert {c.id for c in design.children(group_id)} == {"srv", "tor"}
    assert design.items[group_id].parent == "rack"
    with pytest.raises(DesignError, match="same container"):
        edits.group(design, ["spine", "srv"])
    undo_group, placed = edits.ungroup(design, [group_id])
    assert set(placed) == {"srv", "tor"}
    round_trip(design, undo_group)
    assert group_id not in design.items and design.items["srv"].parent == "rack"
    assert (design.items["srv"].x, design.items["srv"].y) == (20, 40)  # where it was drawn
    with pytest.raises(DesignError, match="select a group"):
        edits.ungroup(design, ["srv"])


def test_ungrouping_a_group_and_the_group_inside_it_draws_every_copy_of_both():
    design = mini_fat_tree()
    design.update_link("top", match=None)  # a match on a group that goes away is refused (below)
    before = drawn_totals(design)
    edit, placed = edits.ungroup(design, ["blk", "spines"])
    round_trip(design, edit)
    assert not {"blk", "spines"} & set(design.items)
    kinds = [design.items[i].kind for i in placed]
    assert kinds.count("switch") == 6 and design.items["spine"].parent is None  # 2 × (leaf + 2 spines)
    assert drawn_totals(design) == before


def drawn_totals(design: Design) -> tuple:
    """Physical items by kind and physical links by medium, as the model counts them."""
    items: dict[str, int] = {}
    for item in design.items.values():
        if item.kind != "group":
            items[item.kind] = items.get(item.kind, 0) + design.multiplicity(item.id)
    links: dict[str, int] = {}
    for link_id, copies in design.all_link_copies().items():
        medium = design.links[link_id].medium
        links[medium] = links.get(medium, 0) + copies.instances
    return items, links


def pod_of_four() -> Design:
    """A ×4 group of servers (2 GPUs and a NIC each, linked inside) whose NICs are linked to a
    spine outside the group and to a leaf inside it."""
    d = Design(name="pods")
    d.add_item(Item("spine", "switch", name="Spine", part="qm9700", x=0, y=-200))
    d.add_item(Item("pod", "group", name="Pod", count=4, x=0, y=0))
    d.add_item(Item("leaf", "switch", name="Leaf", part="qm9700", parent="pod", x=20, y=40))
    d.add_item(Item("srv", "server", name="Server", part="dgx-h100", parent="pod", x=20, y=140))
    d.add_item(Item("nic", "nic", name="NIC", part="cx7", parent="srv", x=200))
    for g in range(2):
        d.add_item(Item(f"gpu{g}", "accelerator", name=f"GPU {g}", part="h100-sxm", parent="srv", x=20 + 80 * g))
        d.add_link(Link(f"gpu{g}--nic", f"gpu{g}", "nic", "pcie-gen5", 16))
    d.add_link(Link("nic--leaf", "nic", "leaf", "ib-ndr"))
    d.add_link(Link("leaf--spine", "leaf", "spine", "ib-ndr", 2))
    return d


def test_ungroup_draws_every_copy_with_its_links_and_the_engine_counts_the_same():
    from designer.engine import evaluate

    design = pod_of_four()
    catalog = default_catalog()

    def totals(d: Design) -> tuple:
        result = evaluate(d.snapshot(), catalog)
        inventory = result.inventory
        return (inventory.accelerators, inventory.servers, inventory.switches, inventory.nics, inventory.links,
                dict(result.bom.links_by_medium))

    before = totals(design)
    assert before[0] == 8 and before[1] == 4
    edit, placed = edits.ungroup(design, ["pod"], sizes={"pod": (400.0, 300.0)})
    round_trip(design, edit)
    assert "pod" not in design.items
    assert totals(design) == before
    assert drawn_totals(design) == drawn_totals(pod_of_four())
    servers = [design.items[i] for i in placed if design.items[i].kind == "server"]
    assert len(servers) == 4 and len({(s.x, s.y) for s in servers}) == 4
    # Side by side, one drawn group's width (400) plus the gap apart, in the group's container.
    assert sorted(s.x for s in servers) == [20.0, 460.0, 900.0, 1340.0] and {s.parent for s in servers} == {None}
    assert len([i for i in design.items.values() if i.kind == "accelerator"]) == 8
    # Every copy's NIC is linked to its own leaf, and every leaf to the spine.
    for server in servers:
        nic = next(i for i in design.descendants(server.id) if i.kind == "nic")
        (uplink,) = [l for l in design.links_of(nic.id) if l.medium == "ib-ndr"]
        leaf = uplink.b if uplink.a == nic.id else uplink.a
        assert design.items[leaf].kind == "switch" and design.items[leaf].parent is None
    assert len([l for l in design.links.values() if "spine" in (l.a, l.b)]) == 4


def test_ungroup_refuses_what_it_cannot_draw_or_keep_matched():
    design = pod_of_four()
    design.update_item("pod", count=edits.UNGROUP_MAX_NEW_ITEMS)
    before = state(design)
    with pytest.raises(DesignError, match=r"would add .* items \(the limit is 2,000\)"):
        edits.ungroup(design, ["pod"])
    assert state(design) == before
    with pytest.raises(DesignError, match="'top' joins copy i of"):
        edits.ungroup(mini_fat_tree(), ["spines"])


def test_removal_is_one_edit_whatever_the_order_of_the_selection():
    design = rack_design()
    before = state(design)
    everything = [*design.items, *reversed(list(design.items))]
    for chosen in (everything, ["gpu", "srv"], ["srv", "gpu"], ["nic", "rack", "gpu", "tor"]):
        edit = edits.remove(design, chosen, list(design.links))
        round_trip(design, edit)
        edit.inverse().apply(design)
        assert state(design) == before
    assert [op.item.id for op in edits.remove(design, ["gpu", "nic", "srv"]).ops] == ["srv"]


def test_paste_gives_fresh_ids_keeps_internal_links_and_offsets_roots():
    design = rack_design()
    data = edits.fragment(design, ["srv", "gpu"])
    assert data["roots"] == ["srv"] and {d["id"] for d in data["links"]} == {"gpu--nic"}
    edit, roots = edits.paste(design, copy.deepcopy(data), (40.0, 40.0))
    round_trip(design, edit)
    (root,) = roots
    new = {root} | {d.id for d in design.descendants(root)}
    assert len(new) == 3 and not new & {"srv", "gpu", "nic"}
    assert design.items[root].parent == "rack" and (design.items[root].x, design.items[root].y) == (60.0, 80.0)
    assert [l for l in design.links.values() if l.a in new and l.b in new]
    assert not [l for l in design.links.values() if (l.a in new) != (l.b in new)]


def test_paste_keeps_a_match_whose_groups_come_along_and_drops_one_that_cannot_hold():
    design = mini_fat_tree()
    edit, roots = edits.paste(design, edits.fragment(design, ["blk", "plane"]))
    edit.apply(design)
    pasted = next(l for l in design.links.values() if l.id != "top" and l.match)
    assert set(pasted.match) <= set(roots) | {d.id for r in roots for d in design.descendants(r)}
    edit.inverse().apply(design)
    # Pasted back into their groups, a spine and a core stay matched.
    edit, (spine, core) = edits.paste(design, edits.fragment(design, ["spine", "core"]))
    edit.apply(design)
    assert next(l for l in design.links.values() if {l.a, l.b} == {spine, core}).match == ("spines", "plane")
    # With the groups gone the copies land at the top level, every-to-every.
    data = edits.fragment(design, ["spine", "core"])
    edits.remove(design, ["blk", "plane"]).apply(design)
    edit, (spine, core) = edits.paste(design, data)
    edit.apply(design)
    assert next(l for l in design.links.values() if {l.a, l.b} == {spine, core}).match is None


def test_recounting_a_matched_group_recounts_its_partners_in_the_same_edit():
    design = generate("rail-fat-tree", default_catalog(), nodes=400, nodes_per_su=4, switch="qm9700",
                      platform="dgx-h100", nic="cx7-ndr", nics_per_node=2)
    partners = design.matched_groups("blk.spines0")
    assert partners == ["blk.spines1", "core"]
    count = design.items["core"].count
    edit = edits.set_item(design, "blk.spines0", "Set count", count=count - 1)
    assert {op.new.id for op in edit.ops} == {"blk.spines0", *partners}
    assert edit.text == "Set count (and 2 matched groups)"
    round_trip(design, edit)
    assert {design.items[g].count for g in ["blk.spines0", *partners]} == {count - 1}
    rename = edits.set_item(design, "blk.spines0", "Rename", name="spines")
    assert len(rename.ops) == 1 and rename.text == "Rename"
    assert edits.set_item(design, "blk.spines0", count=count - 1).ops == ()  # nothing to change


def test_set_link_and_add_link():
    design = mini_fat_tree()
    round_trip(design, edits.set_link(design, "top", lanes=3))
    with pytest.raises(DesignError, match="contains both ends"):
        edits.set_link(design, "up", match=("blk", "spines"))
    first = edits.add_link(design, "leaf", "core", "ib-ndr")
    first.apply(design)
    second = edits.add_link(design, "leaf", "core", "ib-ndr", 2)
    assert first.ops[0].link.id == "leaf--core" and second.ops[0].link.id == "leaf--core-1"


# --- naming, placement, media --------------------------------------------------------------------------
def test_a_new_item_takes_the_number_after_the_highest_of_its_kind():
    design = generate("rail-fat-tree", default_catalog(), nodes=64)
    switches = [i for i in design.items.values() if i.kind == "switch"]
    assert len(switches) >= 8 and not any(i.name.startswith("Switch ") for i in switches)
    assert placement.next_name(design, "switch") == "Switch 1"  # not "Switch 8" (one per switch already there)
    assert placement.next_name(Design(), "accelerator") == "GPU 1"
    design = rack_design()  # Switch 1, Switch 2, GPU 1
    assert placement.next_name(design, "switch") == "Switch 3"
    design.update_item("spine", name="Switch 7")
    design.add_item(Item("gpu-named-like-a-switch", "accelerator", name="Switch 40", part="h100-sxm", parent="srv"))
    assert placement.next_name(design, "switch") == "Switch 8"
    assert placement.next_name(design, "rack") == "Rack 2"


def test_which_container_may_hold_a_part():
    design = rack_design()
    assert placement.can_hold("rack", "server") and placement.can_hold("server", "accelerator")
    assert not placement.can_hold("switch", "cpu") and not placement.can_hold("rack", "rack")
    assert placement.can_hold("group", "switch")
    # Under a drop point, topmost first: a GPU over a server in a rack goes into the server.
    assert placement.container_under(design, "accelerator", ["gpu", "srv", "rack"]) == "srv"
    assert placement.container_under(design, "server", ["gpu", "srv", "rack"]) == "rack"
    assert placement.container_under(design, "rack", ["srv", "rack"]) is None


def test_a_move_into_a_new_parent_may_not_change_copies_or_nest_an_item_in_itself():
    design = mini_fat_tree()
    design.add_item(Item("loose", "switch", part="qm9700"))
    design.add_item(Item("one", "group"))
    assert placement.reparent_problem(design, "loose", None) is None
    assert placement.reparent_problem(design, "loose", "one") is None
    assert "×1 → ×4" in placement.reparent_problem(design, "loose", "spines")
    assert "use Cut and Paste" in placement.reparent_problem(design, "leaf", None)
    assert "inside itself" in placement.reparent_problem(design, "blk", "spines")
    assert "cannot be placed inside a switch" in placement.reparent_problem(design, "one", "loose")


def _part(part_id: str, kind: str, **data) -> Part:
    return Part(id=part_id, kind=kind, name=part_id.upper(), source="test", data={"id": part_id, "kind": kind, **data},
                origin="test")


def test_which_media_a_link_may_use_and_the_defaults():
    catalog = Catalog([
        _part("nvl", "medium", family="nvlink"), _part("pcie", "medium", family="pcie"),
        _part("ib", "medium", family="infiniband"),
        _part("h100-sxm", "accelerator", media=["nvl", "pcie"]), _part("cx7", "nic", media=["ib", "pcie"]),
        _part("qm9700", "switch", media=["ib"]), _part("dgx-h100", "server"), _part("rack-48u", "rack"),
    ])
    design = rack_design()
    design.add_item(Item("gpu2", "accelerator", part="h100-sxm", parent="srv"))
    both = placement.link_media(design, catalog, "gpu", "gpu2")
    assert both.media == ("nvl", "pcie") and both.default == "nvl" and both.reason is None
    assert placement.link_media(design, catalog, "nic", "tor").media == ("ib",)
    assert "no common medium" in placement.link_media(design, catalog, "gpu", "tor").reason
    assert placement.link_media(design, catalog, "gpu", "gpu").reason == "Link: drag from one item to another"
    design.add_item(Item("g", "group", parent="rack"))
    assert "links join hardware" in placement.link_media(design, catalog, "g", "tor").reason
    assert placement.link_media(design, catalog, "g", "tor").default is None
    assert placement.default_lanes(catalog, "pcie") == 16 and placement.default_lanes(catalog, "ib") == 1
    assert placement.medium_problem(design, catalog, "nic", "tor", "ib") is None
    assert "QM9700 does not support pcie" in placement.medium_problem(design, catalog, "nic", "tor", "pcie")


def test_the_edits_and_rules_import_no_qt():
    script = """
import sys
from designer.model import edits, placement
from designer.model.design import Design, Item
d = Design()
edit = edits.add(d, [Item("sw", "switch", part="qm9700")])
edit.apply(d)
edit.inverse().apply(d)
assert not d.items and placement.next_name(d, "switch") == "Switch 1"
print(sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph")))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
