"""The tidy layout (Qt-free): every shipped example and every generated design is stored tidy (no
two siblings' boxes overlap, every item inside its container's box, a second tidy moves nothing),
switches sit above what they serve, and a tidy of a selection moves only what was selected; new
items land clear of their siblings and a container that grows pushes its neighbours aside."""

from __future__ import annotations

import itertools

import pytest

from designer.io.examples import example_paths
from designer.io.files import load_design
from designer.model import load_catalog
from designer.model.design import Design, Item, Link
from designer.model.layout import (
    GAP_X,
    GAP_Y,
    HEADER_H,
    LEAF_H,
    LEAF_W,
    MARGIN,
    MIN_CONTAINER_W,
    boxes_in_parent,
    clear_spots,
    item_rects,
    make_room,
    tidy,
    tidy_in_place,
)
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


def test_tidy_of_a_selected_container_places_it_among_its_siblings_and_keeps_its_contents():
    design = _messy()
    positions = tidy(design, ["s0"])
    assert set(positions) == {"s0"}  # its contents stay as they were
    boxes = boxes_in_parent(design, positions)
    assert not boxes["s0"].overlaps(boxes["s1"])
    # Lined up with its sibling, below and right of where the group's contents began.
    assert boxes["s0"].top == boxes["s1"].top or boxes["s0"].left == boxes["s1"].left
    old = boxes_in_parent(design)
    assert boxes["s0"].left >= min(old["s0"].left, old["s1"].left)
    assert boxes["s0"].top >= min(old["s0"].top, old["s1"].top)
    design.update_item("s0", x=positions["s0"][0], y=positions["s0"][1])
    assert tidy(design, ["s0"]) == {}, "a placed item stays where it is"


def test_tidy_of_selected_siblings_arranges_them_in_rows_clear_of_the_others():
    design = _messy()
    positions = tidy(design, ["s0.g0", "s0.g1", "s0.g2"])
    assert set(positions) <= {"s0.g0", "s0.g1", "s0.g2"}
    boxes = boxes_in_parent(design, positions)
    for a, b in itertools.product(["s0.g0", "s0.g1", "s0.g2"], [i.id for i in design.children("s0")]):
        assert a == b or not boxes[a].overlaps(boxes[b])  # nor the siblings left where they were
    assert min(boxes[g].left for g in ("s0.g0", "s0.g1", "s0.g2")) >= 0  # not left of where the contents began


def _racks_beside() -> Design:
    design = Design()
    design.add_item(Item("A", "rack", part="rack-48u"))
    design.add_item(Item("A.sw", "switch", part="qm9700", parent="A", x=12, y=34))
    design.add_item(Item("B", "rack", part="rack-48u", x=180))  # 8 px clear of A's 160-wide box
    design.add_item(Item("C", "rack", part="rack-48u", y=110))  # 24 px under A
    return design


def test_a_new_item_lands_clear_in_a_row_of_its_container():
    before = _racks_beside()
    after = before.snapshot()
    after.add_item(Item("A.new", "switch", part="qm9700", parent="A", x=50, y=40))  # on A.sw, to its right
    spots = clear_spots(after, ["A.new"])
    assert spots == {"A.new": (12 + LEAF_W + GAP_X, 34)}  # beside the first, in its row
    empty = before.snapshot()
    empty.add_item(Item("first", "switch", part="qm9700", parent="B", x=70, y=-5))
    assert clear_spots(empty, ["first"]) == {"first": (MARGIN, MARGIN + HEADER_H)}  # B's box keeps its corner
    top = before.snapshot()
    top.add_item(Item("loose", "switch", part="qm9700", x=5, y=-60))
    assert clear_spots(top, ["loose"]) == {}  # clear where it was put at the top level


def test_a_container_that_grows_pushes_its_neighbours_right_and_down_keeping_their_order():
    before = _racks_beside()
    after = before.snapshot()
    after.add_item(Item("A.new", "switch", part="qm9700", parent="A", x=12 + LEAF_W + GAP_X, y=34))
    after.add_item(Item("A.low", "switch", part="qm9700", parent="A", x=12, y=34 + LEAF_H + GAP_Y))
    room = make_room(before, after, ["A.new", "A.low"])
    assert set(room) == {"B", "C"}
    moved = boxes_in_parent(after, {**{i: (it.x, it.y) for i, it in after.items.items()}, **room})
    assert moved["B"].left == moved["A"].right + GAP_X and room["B"][1] == 0  # right, level
    assert moved["C"].top == moved["A"].bottom + GAP_Y and room["C"][0] == 0  # down, in its column
    assert overlapping_siblings(after, room) == []
