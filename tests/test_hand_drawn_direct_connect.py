"""Accelerators cabled to each other, drawn by hand: the scale-up bisection is the cut of the links
as drawn (a minimum cut between the halves of each domain, both ways, as the torus template's
closed form counts it), not the chips' injection times half the chips. Each expectation is worked
out in the test from the medium's per-direction figure (TPU ICI: 23.44 GB/s per link and direction)."""

from __future__ import annotations

import pytest

from designer.engine import evaluate
from designer.model.catalog import default_catalog
from designer.model.design import Design, Item, Link
from designer.topologies import generate

CATALOG = default_catalog()
ICI = CATALOG["tpu-ici"].number("lane_gb_per_s")  # 23.44 GB/s per direction


def chips_by_hand(rows: int, columns: int, wrap: bool, chips_per_host: int = 4) -> Design:
    """rows × columns TPU v4 chips, four to a host, in rows; each chip cabled to its right and lower
    neighbour (and round the edge with `wrap`), with no template setting and no racks."""
    design = Design(name="by hand")
    for host in range(rows * columns // chips_per_host):
        design.add_item(Item(f"host{host}", "server", part="tpu-v4-host", x=300 * host))
    for r in range(rows):
        for c in range(columns):
            index = r * columns + c
            design.add_item(Item(f"chip{r}-{c}", "accelerator", part="tpu-v4", parent=f"host{index // chips_per_host}"))
    for r in range(rows):
        for c in range(columns):
            for dr, dc in ((0, 1), (1, 0)):
                rr, cc = r + dr, c + dc
                if (dr and rows == 1) or (not wrap and (rr == rows or cc == columns)):
                    continue
                other = f"chip{rr % rows}-{cc % columns}"
                design.add_link(Link(f"l{r}-{c}-{dr}{dc}", f"chip{r}-{c}", other, "tpu-ici"))
    return design


def scale_up_bisection(design: Design) -> float:
    return evaluate(design, CATALOG).network.scale_up.bisection_gb_per_s


def test_a_hand_drawn_4x4_torus_is_cut_where_its_links_are():
    # Halves in rank order are rows 0-1 and rows 2-3: the 4 links between rows 1 and 2 and the 4
    # that wrap from row 3 to row 0 cross: 8 links × 23.44 GB/s × 2 directions = 375.04 GB/s.
    # (Injection × half the chips, 16 / 2 × 4 × 23.44, would read twice that: 750.08.)
    assert scale_up_bisection(chips_by_hand(4, 4, wrap=True)) == pytest.approx(8 * ICI * 2)


def test_the_same_torus_from_the_template_and_by_hand_agree():
    template = generate("torus", CATALOG, dims="4x4x1")
    assert scale_up_bisection(template) == pytest.approx(scale_up_bisection(chips_by_hand(4, 4, wrap=True)))


def test_a_mesh_without_wrap_has_half_the_cut():
    # No wrap-around: only the 4 links between rows 1 and 2 cross: 4 × 23.44 × 2 = 187.52 GB/s.
    assert scale_up_bisection(chips_by_hand(4, 4, wrap=False)) == pytest.approx(4 * ICI * 2)


def test_a_missing_cable_lowers_the_cut():
    design = chips_by_hand(4, 4, wrap=True)
    del design.links["l1-2-10"]  # chip1-2 to chip2-2, one of the 8 that cross
    assert scale_up_bisection(design) == pytest.approx(7 * ICI * 2)


def test_a_ring_of_eight_chips_is_cut_twice():
    # One row of 8, wrapped: the halves (chips 0-3 and 4-7) are joined by 3-4 and 7-0: 2 × 23.44 × 2.
    assert scale_up_bisection(chips_by_hand(1, 8, wrap=True)) == pytest.approx(2 * ICI * 2)


def test_several_meshes_report_one_domains_cut():
    # 16 MI300X-style servers, each an 8-GPU all-to-all mesh: halves of 4 GPUs, 16 links across,
    # both ways. The figure is a domain's, as a switched server's is, not the sum over servers.
    one = generate("server", CATALOG, platform="mi300x-platform")
    many = generate("fat-tree", CATALOG, platform="mi300x-platform", nodes=16)
    link = evaluate(one, CATALOG).network.scale_up
    assert link.direct_connect and link.domain_accelerators == 8
    per_link = next(l for l in one.links.values() if one.items[l.a].kind == one.items[l.b].kind == "accelerator")
    cap = CATALOG[per_link.medium].number("lane_gb_per_s") * per_link.lanes
    assert link.bisection_gb_per_s == pytest.approx(16 * cap * 2)
    assert evaluate(many, CATALOG).network.scale_up.bisection_gb_per_s == pytest.approx(link.bisection_gb_per_s)


def test_above_the_flow_models_size_a_servers_mesh_is_cut_the_same():
    # meta-2017-v100: 2,750 DGX-1 (22,000 V100, above the flow model's 4,096) drawn with an
    # all-to-all NVLink2 mesh of 28 single 25 GB/s links per server. Any halving of 4 + 4 GPUs
    # cuts 16 of them: 16 × 25 × 2 = 800 GB/s, the figure its single server gets from the flows
    # (failing the core leaves 110 servers, which the flow model expands: the same 800).
    from designer.engine.failures import Failure, degraded_design
    from designer.io.examples import resolve_design_path
    from designer.io.files import load_design

    design = load_design(resolve_design_path("meta-2017-v100"))
    healthy = evaluate(design, CATALOG).network.scale_up
    assert healthy.domains == 2750 and healthy.bisection_gb_per_s == pytest.approx(16 * 25 * 2)
    shrunk, _, _ = degraded_design(design, CATALOG, [Failure("core")])
    assert evaluate(shrunk, CATALOG).network.scale_up.bisection_gb_per_s == pytest.approx(16 * 25 * 2)


def test_the_same_torus_boxed_in_racks_is_cut_the_same():
    # The hosts of the hand-drawn 4×4 torus put in two racks (two hosts each): containers are
    # drawing, the cut is still the 8 links × 23.44 × 2.
    flat = chips_by_hand(4, 4, wrap=True)
    boxed = chips_by_hand(4, 4, wrap=True)
    for rack in range(2):
        boxed.add_item(Item(f"rack{rack}", "rack", part="rack-42u"))
    for host in range(4):
        boxed.update_item(f"host{host}", parent=f"rack{host // 2}")
    assert scale_up_bisection(boxed) == pytest.approx(scale_up_bisection(flat)) == pytest.approx(8 * ICI * 2)


def test_one_server_that_differs_gives_the_domain_its_own_cut():
    # Two MI300X-style servers drawn side by side on one leaf, each an all-to-all mesh of 8 GPUs
    # (28 links); the second lost the cables from its GPU 0 to GPUs 4-7. Any 4 + 4 halving of the
    # first cuts 16 links; the second's best halving (GPU 0 with 1-3) cuts 16 - 4 = 12. The figure
    # is the least, 12 links × 2 directions, where copying the first server would read 16.
    from designer.topologies.base import Builder

    design = Design(name="two meshes by hand")
    builder = Builder(design, CATALOG)
    leaf = builder.item("leaf", "switch", "qm9700", None, x=600, y=0)
    for k in range(2):
        for nic in builder.server(f"s{k}", "mi300x-platform", None, x=700 * k, y=200)["nics"]:
            builder.link(nic, leaf, "ib-ndr", 1)
    mesh = [l for l in design.links.values() if design.items[l.a].kind == design.items[l.b].kind == "accelerator"]
    cap = CATALOG[mesh[0].medium].number("lane_gb_per_s") * mesh[0].lanes
    gpus = sorted(i for i in design.items if i.startswith("s1.") and design.items[i].kind == "accelerator")
    cut = [l.id for l in mesh if {l.a, l.b} & {gpus[0]} and {l.a, l.b} & set(gpus[4:])]
    assert len(cut) == 4
    for link_id in cut:
        del design.links[link_id]
    assert scale_up_bisection(design) == pytest.approx(12 * cap * 2)


def _collective_times(design: Design) -> dict:
    return {(c.op, c.algorithm, c.protocol, c.bytes): c.time_s for c in evaluate(design, CATALOG).collectives}


@pytest.mark.parametrize("wrap", [True, False], ids=["torus", "open-mesh"])
def test_a_torus_drawn_by_hand_times_every_collective_as_the_template(wrap):
    # The same 4×4 chips and cables: drawn by hand (no template setting, ids of the user's own)
    # they get the template's torus model, every operation, algorithm, protocol and size alike.
    # Read as a plain mesh instead, the ring would run through all four links of a chip (74.4 GB/s
    # busbw at 8 GiB, where the torus's ring uses the two of one dimension: 37.2).
    template = generate("torus", CATALOG, dims="4x4x1", wrap=int(wrap))
    by_hand = chips_by_hand(4, 4, wrap=wrap)
    drawn, made = _collective_times(by_hand), _collective_times(template)
    assert drawn.keys() == made.keys() and any(key[1] == "torus" for key in drawn)
    for key, seconds in made.items():
        assert drawn[key] == pytest.approx(seconds, rel=1e-9), key


def test_a_failed_chip_of_a_hand_drawn_torus_is_a_hole_as_in_the_template():
    # Chip (1, 2) fails: 15 chips are left, which no torus of 15 holds, so the drawing reads as
    # the 4×4 torus with one hole, as the template's does: every collective equals the template's
    # with the same chip failed, and no bus bandwidth at 1 GiB or more is above the whole torus's
    # (a time may be below it: 15 ranks move 2 × 14/15 of the bytes where 16 move 2 × 15/16).
    from designer.engine.failures import Failure, degraded_design

    healthy = {(c.op, c.algorithm, c.protocol, c.bytes): c.busbw_gb_per_s
               for c in evaluate(chips_by_hand(4, 4, wrap=True), CATALOG).collectives}
    by_hand, _, _ = degraded_design(chips_by_hand(4, 4, wrap=True), CATALOG, [Failure("chip1-2")])
    template, _, _ = degraded_design(generate("torus", CATALOG, dims="4x4x1"), CATALOG, [Failure("chip1-2-0")])
    drawn, made = _collective_times(by_hand), _collective_times(template)
    assert drawn.keys() == made.keys()
    for key, seconds in made.items():
        assert drawn[key] == pytest.approx(seconds, rel=1e-9), key
    for row in evaluate(by_hand, CATALOG).collectives:
        key = (row.op, row.algorithm, row.protocol, row.bytes)
        if key in healthy and row.bytes >= 1 << 30:
            assert row.busbw_gb_per_s <= healthy[key] * 1.005, key  # fewer latency steps: 0.03 % at 1 GiB


def test_a_missing_cable_slows_the_torus_algorithm_and_a_diagonal_makes_a_mesh():
    healthy = _collective_times(chips_by_hand(4, 4, wrap=True))
    key = ("allreduce", "torus", "Simple", 8 << 30)
    cut = chips_by_hand(4, 4, wrap=True)
    del cut.links["l1-2-10"]
    assert _collective_times(cut)[key] > healthy[key]  # its line detours round the missing hop
    diagonal = chips_by_hand(4, 4, wrap=True)
    diagonal.add_link(Link("diagonal", "chip0-0", "chip1-1", "tpu-ici"))
    assert not any(k[1] == "torus" for k in _collective_times(diagonal))  # no torus has that link


def test_drawn_torus_reads_holes_and_missing_links():
    from designer.engine.torus_lines import drawn_torus

    # A ring of 6 in rank order: one dimension of 6, every link drawn.
    chips = [f"c{i}" for i in range(6)]
    ring = [(chips[i], chips[(i + 1) % 6]) for i in range(6)]
    found = drawn_torus(chips, ring)
    assert found is not None and (found.dims, found.wrap, found.holes, found.missing) == ((6,), True, 0, 0)
    # A 3×3 torus without chip 4 (the middle): 8 chips, no torus of 8 holds the links, the 3×3
    # with one hole does; its 18 links less the 4 of the middle chip are all drawn.
    places = [(r, c) for r in range(3) for c in range(3) if (r, c) != (1, 1)]
    links = [(f"{a}", f"{b}") for a in places for b in places
             if a < b and sum(x != y for x, y in zip(a, b)) == 1]
    found = drawn_torus([f"{p}" for p in places], links)
    assert found is not None and (found.dims, found.holes, found.missing) == ((3, 3), 1, 0)
    assert found.coords["(2, 2)"] == (2, 2)
    # A chain of 5 is an open line of 5; a star is no torus.
    chain = [(chips[i], chips[i + 1]) for i in range(4)]
    found = drawn_torus(chips[:5], chain)
    assert found is not None and (found.dims, found.wrap) == ((5,), False)
    assert drawn_torus(chips[:5], [(chips[0], c) for c in chips[1:5]]) is None


def test_the_same_torus_boxed_in_racks_times_every_collective_the_same():
    # Containers are drawing: the hand-drawn 4×4 torus with its hosts in two racks gets the same
    # collective times as drawn flat (and so as the template's, above).
    flat = chips_by_hand(4, 4, wrap=True)
    boxed = chips_by_hand(4, 4, wrap=True)
    for rack in range(2):
        boxed.add_item(Item(f"rack{rack}", "rack", part="rack-42u"))
    for host in range(4):
        boxed.update_item(f"host{host}", parent=f"rack{host // 2}")
    drawn, inside = _collective_times(flat), _collective_times(boxed)
    assert drawn.keys() == inside.keys() and any(key[1] == "torus" for key in inside)
    for key, seconds in drawn.items():
        assert inside[key] == pytest.approx(seconds, rel=1e-9), key
