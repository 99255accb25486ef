"""Many items changed as one edit (designer.model.bulk, part_change.change_parts), without the GUI."""

from __future__ import annotations

import pytest

from designer.model import bulk
from designer.model.catalog import _COMMON, _FIELDS, FIELD_NAMES, default_catalog, field_label, field_unit
from designer.model.design import Design, Item
from designer.model.part_change import change_parts, using_part
from designer.topologies.base import Builder


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def _servers(catalog, n: int = 2) -> Design:
    design = Design()
    builder = Builder(design, catalog)
    for k in range(n):
        builder.server(f"s{k}", "dgx-h100", None, x=700 * k)
    return design


def test_a_platform_change_with_contents_swaps_the_old_defaults_for_the_new(catalog):
    design = _servers(catalog)
    before = dict(design.items)
    change = change_parts(design, catalog, using_part(design, "dgx-h100"), "hgx-h200")
    assert change.problems == () and change.changed == ("s0", "s1")
    assert len(change.contents) == 16  # 8 H100 per server; the NICs are already the H200's default (ConnectX-7 NDR)
    change.edit.apply(design)
    assert {i.part for i in design.items.values() if i.kind == "accelerator"} == {"h200-sxm"}
    change.edit.inverse().apply(design)
    assert design.items == before


def test_a_platform_change_the_accelerators_cannot_follow_alone_is_refused_with_the_reason(catalog):
    design = _servers(catalog)
    change = change_parts(design, catalog, ["s0"], "mi300x-platform", with_contents=False)
    assert change.edit is None
    assert "8 NVIDIA H100 SXM5 80GB in NVIDIA DGX H100 cannot join" in change.problems[0]
    whole = change_parts(design, catalog, ["s0"], "mi300x-platform")
    whole.edit.apply(design)
    inside = [i for i in design.items.values() if i.parent == "s0"]
    assert {i.part for i in inside if i.kind == "accelerator"} == {"mi300x"}
    assert {i.part for i in inside if i.kind == "nic"} == {"cx7-400gbe"}  # the MI300X platform's own NIC


def test_in_the_selection_counts_what_is_inside_the_selected_items(catalog):
    design = _servers(catalog)
    assert using_part(design, "cx7-ndr", ["s1"]) == [f"s1.nic{k}" for k in range(8)]
    assert len(using_part(design, "cx7-ndr")) == 16


def test_the_same_count_for_several_groups_is_one_edit_that_undoes_whole():
    design = Design()
    for k, count in enumerate((1, 4, 2)):
        design.add_item(Item(f"g{k}", "group", count=count))
    edit = bulk.set_items(design, ["g0", "g1", "g2"], "Set count", count=8)
    assert len(edit.ops) == 3 and edit.text == "Set count"
    edit.apply(design)
    assert [design.items[g].count for g in ("g0", "g1", "g2")] == [8, 8, 8]
    edit.inverse().apply(design)
    assert [design.items[g].count for g in ("g0", "g1", "g2")] == [1, 4, 2]


def test_field_labels_name_the_unit_the_schema_states():
    assert field_label("memory_bw_tb_per_s") == "Memory bandwidth (TB/s)"
    assert field_label("lane_gb_per_s") == "Lane rate (GB/s)"
    assert field_label("port_gbps") == "Port rate (Gb/s)"
    assert field_label("peak_tflops", "bf16_sparse") == "Peak BF16 sparse (TFLOPS)"
    assert field_label("scale_up", "switches") == "Scale-up switches"
    for kind, fields in {**_FIELDS, "any": _COMMON}.items():
        for key, node in fields.items():
            assert key in FIELD_NAMES, (kind, key)  # named in the one table, not spelled from the key
            expected = node.get("x-expected", "")
            if expected.startswith("a figure"):  # "a figure from 0 to 1,000 TB/s": the unit is its last word
                assert field_unit(key) == expected.rsplit(" ", 1)[1], (kind, key)
