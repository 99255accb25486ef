"""Designs and waits shared by several test files and `benchmarks/bench_gui.py`, imported one way:
`from tests.helpers import …`. GUI gestures shared by GUI tests are in `tests.helpers.gui`, the
recovery tests' autosave fixtures in `tests.helpers.autosave`."""

from __future__ import annotations

from designer.model.design import Design, Item, Link

BIG_GRID_SIDE = 128  # 128 × 128 = 16,384 chips in 4,096 hosts: 20,480 items


def flat_grid(side: int, wrap: bool, hosts: bool = False) -> Design:
    """A side × side grid of TPU v4 chips joined by ICI links, every chip and link drawn (no
    replicated groups): a torus when `wrap`, else a mesh. With `hosts` (an even side), each 2 × 2
    block of chips sits in a TPU v4 host, as the chips of a real pod do (a chip in no server is a
    lint error and the engine leaves it out)."""
    design = Design(name=f"{side}×{side} {'torus' if wrap else 'mesh'}, flat",
                    description="Stress test: every chip drawn")
    for i in range(side):
        for j in range(side):
            if not hosts:
                design.add_item(Item(f"c{i}-{j}", "accelerator", name=f"{i},{j}", part="tpu-v4", x=j * 80, y=i * 60))
                continue
            host = f"host{i // 2}-{j // 2}"
            if i % 2 == 0 and j % 2 == 0:
                design.add_item(Item(host, "server", name=f"Host {i // 2},{j // 2}", part="tpu-v4-host",
                                     x=j // 2 * 200, y=i // 2 * 180))
            design.add_item(Item(f"c{i}-{j}", "accelerator", name=f"{i},{j}", part="tpu-v4", parent=host,
                                 x=j % 2 * 80, y=i % 2 * 60))
    reach = side if wrap else side - 1
    for i in range(side):
        for j in range(reach):
            design.add_link(Link(f"h{i}-{j}", f"c{i}-{j}", f"c{i}-{(j + 1) % side}", "tpu-ici", 1))
            design.add_link(Link(f"v{j}-{i}", f"c{j}-{i}", f"c{(j + 1) % side}-{i}", "tpu-ici", 1))
    return design


def write_big_design(path) -> int:
    """The 20,000-item stress design (a flat torus of chips in hosts: the canvas must cope with
    that many items even where a design uses no replicated groups), saved to `path`. Returns the
    number of items."""
    from designer.io.files import save_design

    design = flat_grid(BIG_GRID_SIDE, wrap=True, hosts=True)
    save_design(design, path)
    return len(design.items)


def window_settled(window) -> bool:
    """The window has caught up: the canvas is built, no evaluation is pending or running, and no
    deferred job (overlay restyle, hidden tabs, painting held) is waiting."""
    from designer.document import turns

    return not window.scene.building and not window.scheduler.busy and turns.pending() == 0


def two_servers_on_a_leaf() -> tuple[Design, dict[str, str]]:
    """Two DGX H100 servers drawn side by side (not a replicated group), every NIC linked to one
    shared leaf switch; and each link of the first server → its counterpart in the second."""
    from designer.model.catalog import default_catalog
    from designer.topologies.base import Builder

    design = Design(name="Two servers on a leaf")
    builder = Builder(design, default_catalog())
    leaf = builder.item("leaf", "switch", "qm9700", None, name="Leaf", x=600, y=0)
    for k in range(2):
        for nic in builder.server(f"s{k}", "dgx-h100", None, x=700 * k, y=200)["nics"]:
            builder.link(nic, leaf, "ib-ndr", 1)
    counterpart = {link_id: link_id.replace("s0.", "s1.") for link_id in design.links if link_id.startswith("s0.")}
    assert set(counterpart.values()) <= set(design.links)
    return design, counterpart


def mini_fat_tree() -> Design:
    """2 blocks, each a leaf and 2 spines; 2 core planes of 3 cores; spine j ↔ plane j."""
    d = Design(name="mini")
    d.add_item(Item("blk", "group", count=2))
    d.add_item(Item("leaf", "switch", part="qm9700", parent="blk"))
    d.add_item(Item("spines", "group", parent="blk", count=2))
    d.add_item(Item("spine", "switch", part="qm9700", parent="spines"))
    d.add_item(Item("plane", "group", count=2))
    d.add_item(Item("cores", "group", parent="plane", count=3))
    d.add_item(Item("core", "switch", part="qm9700", parent="cores"))
    d.add_link(Link("up", "leaf", "spine", "ib-ndr", 4))
    d.add_link(Link("top", "spine", "core", "ib-ndr", 2, match=("spines", "plane")))
    return d


def without_storage_and_spares(design: Design) -> Design:
    """A generated design without the checkpoint storage and hot spares generators add, for
    figures hand-computed from the drawn hardware alone."""
    design.settings.pop("storage", None)
    design.settings.pop("spares", None)
    return design


def nested_matched_groups() -> Design:
    """Group `A` holds group `C`; both are matched copy for copy with `B` (A with B by link x--y,
    B with C by link y2--c): copy i of A holds every copy of C, copy i among them."""
    design = Design(name="Nested matched groups")
    for item in (Item("A", "group", count=2), Item("x", "switch", part="qm9700", parent="A", x=20, y=40),
                 Item("C", "group", parent="A", count=2, x=200, y=40),
                 Item("c", "switch", part="qm9700", parent="C", x=20, y=40),
                 Item("B", "group", count=2, x=700), Item("y", "switch", part="qm9700", parent="B", x=20, y=40),
                 Item("y2", "switch", part="qm9700", parent="B", x=200, y=40)):
        design.add_item(item)
    design.add_link(Link("x--y", "x", "y", "ib-ndr", match=("A", "B")))
    design.add_link(Link("y2--c", "y2", "c", "ib-ndr", match=("B", "C")))
    return design


def refusal(item: str) -> str:
    """What failing one copy of `item` in `nested_matched_groups` is refused with."""
    return (f"failure of '{item}': groups 'A' and 'C' are matched copy for copy (link 'y2--c') and 'A' holds 'C', "
            "so no copy can be split out of both; fail every copy")
