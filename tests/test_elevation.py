"""The rack front view's stacking, power and fit (designer.model.elevation), against numbers worked
by hand from the catalogue: a DGX H100 is 8U and 10,200 W with its eight 700 W H100s, a QM9700
switch 1U and 1,720 W, the SuperPOD rack 42U with a 40.8 kW budget."""

import pytest

from designer.io.files import DesignFileError, dumps, loads
from designer.model import edits, elevation
from designer.model.catalog import default_catalog
from designer.model.design import Design, Item
from designer.model.errors import DesignError

CATALOG = default_catalog()


def dgx(design: Design, server_id: str, parent: str, rack_u: int | None = None) -> None:
    design.add_item(Item(server_id, "server", part="dgx-h100", parent=parent, rack_u=rack_u))
    for n in range(8):
        design.add_item(Item(f"{server_id}.gpu{n}", "accelerator", part="h100-sxm", parent=server_id))


def superpod_rack(servers: int = 4, switch: bool = True, rack_part: str = "rack-42u-superpod") -> Design:
    design = Design(name="rack test")
    design.add_item(Item("rack", "rack", name="Rack A", part=rack_part))
    for n in range(servers):
        dgx(design, f"srv{n}", "rack")
    if switch:
        design.add_item(Item("leaf", "switch", part="qm9700", parent="rack"))
    return design


def test_four_dgx_and_a_switch_fill_33u_and_draw_42_5_kw_over_the_budget():
    rack = elevation.rack_elevation(superpod_rack(), CATALOG, "rack")
    assert [(s.item_id, s.first_u, s.height_u) for s in rack.slots] == [
        ("leaf", 1, 1), ("srv0", 2, 8), ("srv1", 10, 8), ("srv2", 18, 8), ("srv3", 26, 8)]
    assert (rack.height_u, rack.used_u, rack.free_u, rack.overflow_u) == (42, 33, 9, 0)
    assert [s.power_w for s in rack.slots] == [1720, 10200, 10200, 10200, 10200]
    assert rack.power_w == 4 * 10200 + 1720 == 42520
    assert rack.budget_w == 40800 and rack.over_budget_w == pytest.approx(1720)
    assert rack.copies == 1 and rack.part_name == "42U rack for 4 DGX H100 (40.8 kW)"


def test_a_server_without_its_gpus_draws_only_its_chassis():
    design = Design()
    design.add_item(Item("rack", "rack", part="rack-42u-superpod"))
    design.add_item(Item("srv", "server", part="dgx-h100", parent="rack"))
    [slot] = elevation.rack_elevation(design, CATALOG, "rack").slots
    assert slot.power_w == 10200 - 8 * 700


def test_six_dgx_stick_out_6u_above_a_42u_rack():
    rack = elevation.rack_elevation(superpod_rack(servers=6, switch=False), CATALOG, "rack")
    assert (rack.used_u, rack.free_u, rack.overflow_u) == (48, -6, 6)
    assert [rack.fits(s) for s in rack.slots] == [True] * 5 + [False]
    assert rack.slots[-1].first_u == 41 and rack.slots[-1].top_u == 48


def test_a_group_of_servers_is_one_block_of_its_copies():
    design = Design()
    design.add_item(Item("rack", "rack", part="rack-42u-superpod"))
    design.add_item(Item("four", "group", name="4 servers", parent="rack", count=4))
    dgx(design, "srv", "four")
    [slot] = elevation.rack_elevation(design, CATALOG, "rack").slots
    assert (slot.first_u, slot.height_u, slot.copies, slot.unit_u) == (1, 32, 4, 8)
    assert slot.power_w == 40800 and slot.contents == "4 × NVIDIA DGX H100"


def test_a_rack_in_a_group_of_racks_is_shown_once_with_its_copies():
    design = Design()
    design.add_item(Item("row", "group", count=3))
    design.add_item(Item("rack", "rack", part="rack-42u", parent="row"))
    dgx(design, "srv", "rack")
    [rack] = elevation.rack_elevations(design, CATALOG)
    assert rack.copies == 3 and rack.power_w == 10200 and rack.budget_w == 30000


def test_a_zero_u_part_counts_in_power_but_fills_no_u():
    design = superpod_rack(servers=1, switch=False)
    design.add_item(Item("tray", "switch", part="nvlink-switch-gen4-tray", parent="rack"))
    rack = elevation.rack_elevation(design, CATALOG, "rack")
    assert [s.item_id for s in rack.slots] == ["srv0"]
    assert [(u.item_id, u.power_w) for u in rack.unslotted] == [("tray", 400)]
    assert rack.power_w == 10200 + 400


def test_rack_u_places_an_item_and_a_clash_moves_it_to_the_next_free_u():
    design = superpod_rack(servers=2, switch=False)
    design.update_item("srv1", rack_u=20)
    design.update_item("srv0", rack_u=3)
    rack = elevation.rack_elevation(design, CATALOG, "rack")
    assert [(s.item_id, s.first_u, s.requested_u) for s in rack.slots] == [("srv0", 3, None), ("srv1", 20, None)]
    assert (rack.used_u, rack.free_u) == (16, 26)
    design.update_item("srv1", rack_u=5)  # srv0 fills U3–U10
    rack = elevation.rack_elevation(design, CATALOG, "rack")
    assert [(s.item_id, s.first_u, s.requested_u) for s in rack.slots] == [("srv0", 3, None), ("srv1", 11, 5)]


def test_reorder_packs_the_stack_from_u1_in_one_edit_and_undoes_exactly():
    design = superpod_rack()
    before = dict(design.items)
    edit = elevation.reorder(design, CATALOG, "rack", ["srv3", "leaf"])
    assert edit.text == "Reorder rack Rack A"
    edit.apply(design)
    rack = elevation.rack_elevation(design, CATALOG, "rack")
    assert [(s.item_id, s.first_u) for s in rack.slots] == [
        ("srv3", 1), ("leaf", 9), ("srv0", 10), ("srv1", 18), ("srv2", 26)]
    assert {i: design.items[i].rack_u for i in ("srv3", "leaf", "srv0", "srv1", "srv2")} == {
        "srv3": 1, "leaf": 9, "srv0": 10, "srv1": 18, "srv2": 26}
    edit.inverse().apply(design)
    assert design.items == before


def test_reorder_refuses_an_item_outside_the_rack():
    design = superpod_rack()
    with pytest.raises(DesignError, match="srv0.gpu0"):
        elevation.reorder(design, CATALOG, "rack", ["srv0.gpu0"])


def test_rack_u_and_notes_are_saved_and_read_back_and_old_files_load():
    design = superpod_rack()
    edits.set_design_text(design, name="Hall 1", notes="Row C, cold aisle\nfeeds A+B").apply(design)
    elevation.reorder(design, CATALOG, "rack", ["srv2"]).apply(design)
    text = dumps(design)
    again = loads(text)
    assert again.notes == "Row C, cold aisle\nfeeds A+B" and again.name == "Hall 1"
    assert again.items["srv2"].rack_u == 1 and again.items["leaf"].rack_u == 9
    assert dumps(again) == text
    old = loads(dumps(superpod_rack()))  # written without either field
    assert old.notes == "" and all(i.rack_u is None for i in old.items.values())


def test_a_bad_rack_position_in_a_file_is_refused_naming_its_place():
    text = dumps(superpod_rack()).replace('"id": "leaf",', '"id": "leaf",\n      "rack_u": 0,')
    with pytest.raises(DesignFileError, match=r"\$\.items\[\d+\]\.rack_u.*rack position"):
        loads(text, path="bad.cluster.json")
    with pytest.raises(DesignError, match="rack position"):
        superpod_rack().update_item("leaf", rack_u=0)


def test_design_text_is_checked_and_one_edit_undoes_all_of_it():
    design = Design(name="Untitled")
    edit = edits.set_design_text(design, name="A", description="B", notes="C")
    edit.apply(design)
    assert (design.name, design.description, design.notes) == ("A", "B", "C")
    edit.inverse().apply(design)
    assert (design.name, design.description, design.notes) == ("Untitled", "", "")
    with pytest.raises(DesignError, match="name is text of at most 200"):
        edits.set_design_text(design, name="x" * 201)
    with pytest.raises(DesignError, match="control character"):
        edits.set_design_text(design, name="two\nlines")
    assert not edits.set_design_text(design, name="Untitled").ops
