"""The tidy layout (Qt-free): every shipped example and every generated design is stored tidy (no
two siblings' boxes overlap, every item inside its container's box, a second tidy moves nothing),
switches sit above what they serve, and a tidy of a selection moves only what was selected."""

from __future__ import annotations

import itertools

import pytest

from designer.io.examples import example_paths
from designer.io.files import load_design
from designer.model import load_catalog
from designer.model.design import Design, Item, Link
from designer.model.layout import (HEADER_H, LEAF_H, LEAF_W, MARGIN, MIN_CONTAINER_W, boxes_in_parent, item_rects,
                                   tidy, tidy_in_place)
from designer.topologies import generate


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def overlapping_siblings(design: Design, positions=None) -> list[tuple[str, str]]:
    boxes = boxes_in_parent(design, positions)
    return [(a.id, b.id) for siblings in design.children_index().values()
            for a, b in itertools.combinations(siblings, 2) if boxes[a.id].overlaps(boxes[b.id])]


def outside_parent(design: Design) -> list[str]:
    """Items whose box is not inside their container's box, below its header."""
    boxes, rects = boxes_in_parent(design), item_rects(design)
    out = []
    for item in design.items.values():
        if item.parent is not None:
            inner = rects[item.parent]
            below_header = type(inner)(inner.left, inner.top + HEADER_H, inner.width, inner.height - HEADER_H)
            if not below_header.contains(boxes[item.id]):
                out.append(item.id)
    return out


def assert_tidy(design: Design) -> None:
    assert overlapping_siblings(design) == []
    assert outside_parent(design) == []
    assert tidy(design) == {}, "a second tidy moves nothing"


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.name.split(".")[0])
def test_every_example_is_stored_tidy(path, catalog):
    assert_tidy(load_design(path, catalog))


GENERATED = [
    ("server", {}),
    ("server", {"platform": "hgx-h100", "nic": "efa-v2", "nics_per_node": 32}),
    ("rail-fat-tree", {"nodes": 64}),
    ("rail-fat-tree", {"nodes": 2000, "nodes_per_su": 20, "switch": "qm8700", "platform": "dgx-a100"}),
    ("fat-tree", {"nodes": 64}),
    ("fat-tree", {"nodes": 2000, "switch": "qm8700", "platform": "hgx-v100"}),
    ("torus", {"dims": "8x8x8", "block": "4x4x4"}),
    ("pcie-fabric", {"nodes": 4}),
]


@pytest.mark.parametrize("template,params", GENERATED, ids=lambda v: v if isinstance(v, str) else "")
def test_generated_designs_are_tidy(template, params, catalog):
    assert_tidy(generate(template, catalog, **params))


def test_boxes_follow_the_canvas_rules():
    design = Design()
    design.add_item(Item("s", "server", part="dgx-h100"))
    design.add_item(Item("g0", "accelerator", part="h100-sxm", parent="s", x=10, y=5))
    design.add_item(Item("g1", "accelerator", part="h100-sxm", parent="s", x=100, y=65))
    design.add_item(Item("empty", "group", count=2, x=400))
    rects = item_rects(design)
    assert (rects["g0"].width, rects["g0"].height) == (LEAF_W, LEAF_H)
    server = rects["s"]
    assert (server.left, server.top) == (10 - MARGIN, 5 - MARGIN - HEADER_H)
    assert (server.right, server.bottom) == (100 + LEAF_W + MARGIN, 65 + LEAF_H + MARGIN)
    assert (rects["empty"].width, rects["empty"].height) == (MIN_CONTAINER_W, 70)


def _server_rows(design: Design, kind: str) -> tuple[float, float]:
    boxes = boxes_in_parent(design)
    kids = [boxes[i.id] for i in design.items.values() if i.kind == kind]
    return min(b.top for b in kids), max(b.bottom for b in kids)


def test_switches_sit_above_what_they_serve_and_a_servers_links_leave_it_upwards(catalog):
    """Inside a server, the NICs (cabled to leaves above) sit on top, then the GPUs, then the
    NVSwitches, whose links stay inside, and the CPUs: no link runs over a label."""
    server = generate("server", catalog, platform="dgx-h100")
    nic_top, nic_bottom = _server_rows(server, "nic")
    gpu_top, gpu_bottom = _server_rows(server, "accelerator")
    nvswitch_top, nvswitch_bottom = _server_rows(server, "switch")
    cpu_top, cpu_bottom = _server_rows(server, "cpu")
    assert nic_bottom < gpu_top and gpu_bottom < nvswitch_top and nvswitch_bottom < cpu_top
    fabric = generate("rail-fat-tree", catalog, nodes=128, nodes_per_su=32, tiers=3)
    boxes = boxes_in_parent(fabric)
    assert boxes["su.spine0"].bottom < boxes["su.leaf0"].top < boxes["su.racks"].top  # spine, leaf, racks
    assert boxes["core0"].bottom < boxes["su"].top  # core groups above the units


def _messy() -> Design:
    """Two servers of four GPUs each, everything piled up at the origin, under one group."""
    design = Design()
    design.add_item(Item("pod", "group", count=4))
    for s in range(2):
        design.add_item(Item(f"s{s}", "server", part="dgx-h100", parent="pod", x=s * 30))
        design.add_item(Item(f"s{s}.sw", "switch", part="nvswitch-gen4", parent=f"s{s}", x=15, y=15))
        for g in range(4):
            design.add_item(Item(f"s{s}.g{g}", "accelerator", part="h100-sxm", parent=f"s{s}", x=g * 10, y=g * 10))
            design.add_link(Link(f"s{s}.l{g}", f"s{s}.g{g}", f"s{s}.sw", "nvlink4", 4))
    return design


def test_tidy_of_a_messy_design_leaves_nothing_overlapping_and_is_deterministic():
    design = _messy()
    assert overlapping_siblings(design)
    positions = tidy(design)
    assert positions == tidy(_messy())
    assert overlapping_siblings(design, positions) == []
    assert_tidy(tidy_in_place(design))
    boxes = boxes_in_parent(design)
    assert boxes["s0.sw"].top > max(boxes[f"s0.g{g}"].bottom for g in range(4))  # its links stay inside


def test_tidy_of_a_selected_container_moves_only_its_contents():
    design = _messy()
    positions = tidy(design, ["s0"])
    assert set(positions) <= {"s0.sw", *(f"s0.g{g}" for g in range(4))} and positions
    boxes = boxes_in_parent(design, positions)
    for a, b in itertools.combinations([i.id for i in design.children("s0")], 2):
        assert not boxes[a].overlaps(boxes[b])
    # The container keeps its top left corner: its contents start where they started.
    before, after = item_rects(design)["s0"], item_rects(design, positions)["s0"]
    assert (before.left, before.top) == (after.left, after.top)


def test_tidy_of_selected_siblings_arranges_them_among_themselves():
    design = _messy()
    positions = tidy(design, ["s0.g0", "s0.g1", "s0.g2"])
    assert set(positions) <= {"s0.g0", "s0.g1", "s0.g2"}
    boxes = boxes_in_parent(design, positions)
    for a, b in itertools.combinations(["s0.g0", "s0.g1", "s0.g2"], 2):
        assert not boxes[a].overlaps(boxes[b])
    assert min(boxes[g].left for g in ("s0.g0", "s0.g1", "s0.g2")) == 0  # where the first of them was
