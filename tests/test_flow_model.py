"""The flow-level network model (designer/engine/flows.py) on small designs drawn by hand, the way a
user draws them: switches and servers at the top level (no groups, no template), cables one by one.

Every expected figure is worked out by hand in the test from the catalogue's link speeds and the
calibration constants, from what the flow model states (docs in flows.py): a collective's traffic
between servers (scale-up domains) is flows NIC to NIC, channel c leaving through NIC c mod k;
flows take shortest paths, split evenly (ECMP) at every hop over the links one hop closer; a phase
takes its busiest link's load / (capacity × efficiency). Bisection: a max-flow minimum cut between
the halves of the accelerators in rank order.

Notation: S the message (bytes), n the ranks, f = 2(n − 1)/n the ring allreduce's bus factor. A DGX
H100 has 8 H100 (18 NVLink4 lanes of 25 GB/s = 450 GB/s each, through 4 NVSwitches) and 8 CX-7 NICs,
one 400G NDR cable each: 50 GB/s raw per direction.
"""

from __future__ import annotations

import pytest

from designer.engine import calibration as cal
from designer.engine.evaluate import evaluate
from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.topologies.base import Builder

CATALOG = default_catalog()
NDR = CATALOG["ib-ndr"].number("lane_gb_per_s")  # 50 GB/s, one lane per cable
NVLINK = CATALOG["h100-sxm"].number("scale_up_lanes") * CATALOG["nvlink4"].number("lane_gb_per_s")  # 450
HOPPER = cal.GENERATIONS["nvlink4"]
NET = NDR * cal.NET_EFFICIENCY  # 48.5 GB/s achieved per NDR cable and direction
UP = NVLINK * HOPPER.ring_efficiency  # 367.65 GB/s achieved per H100 over NVLink (ring)
GiB = 2 ** 30
S8G, S1G = 8 * GiB, GiB
TRAINING = {"training": {"model": "llama3-8b", "plan": {"tp": 8, "pp": 1}, "overlap": {"dp": "none"}}}


# -- designs, drawn by hand --------------------------------------------------------------------------

def _server(b: Builder, server_id: str, switch: str, platform: str = "dgx-h100", parent: str | None = None,
            reverse: bool = False) -> None:
    nics = b.server(server_id, platform, parent)["nics"]
    for nic in (nics[::-1] if reverse else nics):
        b.link(nic, switch, "ib-ndr", 1)


def two_leaf_tree(uplinks: int = 1, spines: int = 1, spine: bool = True, boxed: bool = False,
                  platforms: dict | None = None, on_spine: tuple = (), reverse: tuple = ()) -> Design:
    """Two leaves (QM9700) of two DGX H100 each (s00, s01 on Leaf 0; s10, s11 on Leaf 1), every NIC
    cabled to its leaf; `uplinks` NDR cables from each leaf to each of `spines` spines, or (spine
    False) one cable between the leaves. `boxed`: each leaf and its servers inside a rack.
    `platforms`: another chassis for some servers; `on_spine`: servers cabled to the spine instead
    of their leaf; `reverse`: servers whose NICs are cabled in the reverse order."""
    platforms = platforms or {}
    d = Design(name="hand-drawn tree")
    b = Builder(d, CATALOG)
    spine_ids = [f"spine{s}" for s in range(spines)] if spine else []
    for s, spine_id in enumerate(spine_ids):
        b.item(spine_id, "switch", "qm9700", None, name=f"Spine {s}")
    for leaf in range(2):
        parent = b.item(f"rack{leaf}", "rack", "rack-42u-superpod", None, name=f"Rack {leaf}") if boxed else None
        b.item(f"leaf{leaf}", "switch", "qm9700", parent, name=f"Leaf {leaf}")
        for k in range(2):
            server = f"s{leaf}{k}"
            _server(b, server, "spine0" if server in on_spine else f"leaf{leaf}",
                    platforms.get(server, "dgx-h100"), parent, server in reverse)
        for spine_id in spine_ids:
            for _ in range(uplinks):
                b.link(f"leaf{leaf}", spine_id, "ib-ndr", 1)
    if not spine:
        b.link("leaf0", "leaf1", "ib-ndr", 1)
    return d


def one_switch(servers: int = 4) -> Design:
    """The same servers all on one leaf: no cut between them but their own NICs."""
    d = Design(name="one switch")
    b = Builder(d, CATALOG)
    b.item("leaf0", "switch", "qm9700", None, name="Leaf 0")
    for k in range(servers):
        _server(b, f"s{k}", "leaf0")
    return d


def torus_of_leaves(rows: int, columns: int) -> Design:
    """A leaf per DGX H100 (server sXY on leaf XY), the leaves cabled as a rows × columns torus: one
    NDR cable from every leaf to the next along each dimension of more than two (wrapping round)."""
    d = Design(name="torus of leaves")
    b = Builder(d, CATALOG)
    for x in range(rows):
        for y in range(columns):
            b.item(f"leaf{x}{y}", "switch", "qm9700", None, name=f"Leaf {x},{y}")
            _server(b, f"s{x}{y}", f"leaf{x}{y}")
    for x in range(rows):
        for y in range(columns):
            if rows > 2:
                b.link(f"leaf{x}{y}", f"leaf{(x + 1) % rows}{y}", "ib-ndr", 1)
            if columns > 2:
                b.link(f"leaf{x}{y}", f"leaf{x}{(y + 1) % columns}", "ib-ndr", 1)
    return d


def triangle() -> Design:
    """Three leaves with one DGX H100 each, the leaves joined in a triangle by one cable each."""
    d = Design(name="triangle")
    b = Builder(d, CATALOG)
    for leaf in range(3):
        b.item(f"leaf{leaf}", "switch", "qm9700", None, name=f"Leaf {leaf}")
        _server(b, f"s{leaf}", f"leaf{leaf}")
    b.link("leaf0", "leaf1", "ib-ndr", 1)
    b.link("leaf1", "leaf2", "ib-ndr", 1)
    b.link("leaf2", "leaf0", "ib-ndr", 1)
    return d


# -- helpers -------------------------------------------------------------------------------------------

def collective(design: Design, op: str, size: str, algorithm: str = "auto"):
    return evaluate(design, workload={"collective": {"op": op, "sizes": [size], "algorithm": algorithm}})


def row(result, algorithm: str):
    rows = [r for r in result.collectives if r.algorithm == algorithm]
    assert len(rows) == 1, [(r.algorithm, r.bytes) for r in result.collectives]
    return rows[0]


def busbw(op: str, n: int, size: float, seconds: float) -> float:
    """nccl-tests' bus bandwidth (GB/s) of a collective of `size` bytes taking `seconds`."""
    factor = {"allreduce": 2 * (n - 1) / n}.get(op, (n - 1) / n)
    return size / seconds * factor / 1e9


def ring_latency(n: int, domains: int) -> float:
    """The ring allreduce's latency (Simple): NCCL's base, and 2(n − 1) steps of which the share
    domains/n crosses the network (calibration.py)."""
    steps = 2 * (n - 1)
    inter = steps * domains / n
    return (cal.BASE_LATENCY["ring"]["Simple"] + (steps - inter) * HOPPER.step_latency["Simple"]
            + inter * cal.NET_STEP_LATENCY["ring"]["Simple"])


def loads_by_link(result) -> dict[str, float]:
    return {load.link: load.utilization for load in result.utilization.phases[0].links}


def nic_uplinks(design: Design, server: str) -> list[str]:
    """The NIC → switch cables of one server."""
    return [l.id for l in design.links.values() if l.a.startswith(f"{server}.nic") and not l.b.startswith(server)]


def scale_up_links(design: Design, server: str) -> list[str]:
    """The GPU → NVSwitch links of one server."""
    return [l.id for l in design.links.values() if l.a.startswith(f"{server}.gpu") and l.b.startswith(f"{server}.sw")]


# -- 1. a 16:1 two-leaf tree -----------------------------------------------------------------------------

def test_sixteen_to_one_tree_ring_allreduce_is_bound_by_the_one_leaf_spine_cable():
    """32 ranks, 4 servers, ring s00 → s01 → s10 → s11 → s00. Each hop between servers carries
    f·S = 2·31/32·S = 1.9375 S, over 8 channels (NIC c → NIC c). s01 → s10 crosses Leaf 0 → Spine →
    Leaf 1, s11 → s00 crosses Leaf 1 → Spine → Leaf 0: each leaf–spine cable carries f·S each way,
    all 8 channels on one 50 GB/s cable (the NICs carry f·S/8 each, the NVLinks f·S over 450 GB/s).
    t = f·S / (50 × NET_EFFICIENCY) + latency, so busbw = f·S/t ≤ 50 × 0.97 = 48.5 GB/s; at 8 GiB
    the latency (0.39 ms of 343 ms) takes 0.1 % off it."""
    r = collective(two_leaf_tree(), "allreduce", "8G")
    ring = row(r, "ring")
    assert ring.ranks == 32
    assert ring.busbw_gb_per_s <= NET * 1.0005
    assert ring.busbw_gb_per_s == pytest.approx(NET, rel=0.01)
    f = 2 * 31 / 32
    assert ring.time_s == pytest.approx(f * S8G / (NET * 1e9) + ring_latency(32, 4), rel=0.005)
    assert ring.bottleneck.link in ("leaf0--spine0", "leaf1--spine0")
    assert "Spine" in ring.bottleneck.name and ring.bottleneck.tier == "scale-out"


def test_sixteen_to_one_tree_other_allreduce_algorithms():
    """The same cable bounds every algorithm; per byte of S (GB/s in the denominators):

    - tree: NCCL's double binary tree over the 4 servers (engine order 0..3 = s00, s01, s10, s11):
      tree 1 edges 0–2, 2–1, 2–3; tree 2 (mirrored) 1–2, 3–1, 1–0. Each tree edge carries S/2 each
      way (reduce up, broadcast down, half the message per tree). Edges crossing the leaves: 0–2,
      2–1, 1–2, 3–1, four, so the cable carries 4 × S/2 = 2 S each way at 48.5 × TREE_BANDWIDTH_FACTOR:
      t = 2 S / (48.5 × 0.92), busbw = f·S/t = (31/32) × 44.62 = 43.23 GB/s.
    - hierarchical: reduce-scatter in the server, 7/8 S over NVLink (450 × 0.817); a ring over the
      4 servers with g = 2·3/4 = 1.5 per hop (8 rails × S/8), 1.5 S on the cable each way; then the
      all-gather, 7/8 S again: t/S = 2 × (7/8)/367.65 + 1.5/48.5.
    - nvls: NVLink SHARP in the server, S over 450 × NVLS_EFFICIENCY, then the same 1.5 S ring:
      t/S = 1/274.5 + 1.5/48.5.
    - sharp: NVLS, then S up and S down each leaf–spine cable (the switches reduce):
      t/S = 1/274.5 + 1/48.5 (busbw 79.9 GB/s).
    Latency is below 0.1 % of these at 8 GiB."""
    r = collective(two_leaf_tree(), "allreduce", "8G")
    f = 2 * 31 / 32
    nvls = NVLINK * cal.NVLS_EFFICIENCY
    expected_seconds_per_byte = {
        "tree": 2.0 / (NET * cal.TREE_BANDWIDTH_FACTOR),
        "hierarchical": 2 * (7 / 8) / UP + 1.5 / NET,
        "nvls": 1 / nvls + 1.5 / NET,
        "sharp": 1 / nvls + 1.0 / NET,
    }
    for algorithm, per_byte in expected_seconds_per_byte.items():
        got = row(r, algorithm)
        assert got.busbw_gb_per_s == pytest.approx(f / per_byte, rel=0.01), algorithm
        assert got.bottleneck.link in ("leaf0--spine0", "leaf1--spine0"), algorithm
    assert row(r, "auto").chosen == "sharp"


def test_sixteen_to_one_tree_alltoall_is_bound_by_the_cut():
    """All-to-all: S/n between every two ranks. 16 ranks under each leaf send S/32 to each of the
    16 under the other: 16 × 16 × S/32 = 8 S crosses each leaf–spine cable each way. t = 8 S / 48.5
    GB/s, busbw = (n − 1)/n × S/t = (31/32) × 48.5 / 8 = 5.87 GB/s."""
    r = collective(two_leaf_tree(), "alltoall", "1G")
    ring = row(r, "ring")
    expected = 31 / 32 * NET / 8
    assert ring.busbw_gb_per_s == pytest.approx(expected, rel=0.01)
    assert ring.time_s == pytest.approx(8 * S1G / (NET * 1e9), rel=0.01)
    assert ring.bottleneck.link in ("leaf0--spine0", "leaf1--spine0")


def test_sixteen_to_one_tree_bisection_is_the_one_cable():
    """Halves in rank order: s00 + s01 (Leaf 0) | s10 + s11 (Leaf 1). The minimum cut between them is
    the single 50 GB/s leaf–spine cable (either one), not the 16 × 50 = 800 GB/s of NICs."""
    r = evaluate(two_leaf_tree())
    assert r.network.scale_out.bisection_gb_per_s == pytest.approx(NDR, rel=0.001)


# -- 2. two leaves joined by one cable -------------------------------------------------------------------

def test_two_leaves_joined_by_one_cable_ring_allreduce_as_the_tree():
    """No spine: the ring's two crossing hops (s01 → s10, s11 → s00) each put f·S on the one
    Leaf 0 – Leaf 1 cable, one per direction: the same busbw as the 16:1 tree, 48.5 GB/s at most."""
    r = collective(two_leaf_tree(spine=False), "allreduce", "8G")
    ring = row(r, "ring")
    assert ring.busbw_gb_per_s <= NET * 1.0005
    assert ring.busbw_gb_per_s == pytest.approx(NET, rel=0.01)
    assert ring.bottleneck.link == "leaf0--leaf1"
    tree_ring = row(collective(two_leaf_tree(), "allreduce", "8G"), "ring")
    assert ring.busbw_gb_per_s == pytest.approx(tree_ring.busbw_gb_per_s, rel=0.001)
    assert r.network.scale_out.bisection_gb_per_s == pytest.approx(NDR, rel=0.001)


# -- 3. a non-blocking two-tier fabric -------------------------------------------------------------------

@pytest.mark.parametrize("spines, uplinks", [(1, 16), (2, 8)], ids=["one-spine-16-cables", "two-spines-8-each"])
def test_non_blocking_two_tier_fabric_is_not_penalised(spines, uplinks):
    """16 NICs under each leaf and 16 cables up from it (to one spine, or 8 to each of two). ECMP
    splits a leaf's outgoing flows evenly over its 16 uplinks, so a crossing ring hop's f·S (8
    channels) puts f·S/16 on each uplink, below the f·S/8 on each NIC: the network adds nothing and
    the ring is bound by NVLink, as on one switch: t = f·S / (450 × 0.817) + latency (0.39 ms, 0.85 %
    at 8 GiB). Every other row (tree, hierarchical, nvls, sharp; all-to-all: each NIC sends 24/32 S,
    each uplink carries 8 S/16 = S/2) is the single switch's too. Bisection: the 16 uplinks of a
    leaf, 16 × 50 = 800 GB/s (as the 16 NICs of a half). Only SHARP's latency is not the single
    switch's: its reduction climbs two switch levels, leaf and spine, not one, 2 × NET_STEP more."""
    flat = two_leaf_tree(uplinks=uplinks, spines=spines)
    single = one_switch(4)
    for op, size in (("allreduce", "8G"), ("allreduce", "1M"), ("alltoall", "1G")):
        got, ref = collective(flat, op, size), collective(single, op, size)
        assert [(c.algorithm, c.ranks) for c in got.collectives] == [(c.algorithm, c.ranks) for c in ref.collectives]
        for mine, theirs in zip(got.collectives, ref.collectives):
            if _is_sharp(mine) and _is_sharp(theirs):
                assert mine.time_s == pytest.approx(theirs.time_s + 2 * cal.NET_STEP_LATENCY["ring"]["Simple"],
                                                    rel=0.01), (op, size, mine.algorithm)
                continue
            assert mine.busbw_gb_per_s == pytest.approx(theirs.busbw_gb_per_s, rel=0.01), (op, size, mine.algorithm)
    ring = row(collective(flat, "allreduce", "8G"), "ring")
    f = 2 * 31 / 32
    assert ring.time_s == pytest.approx(f * S8G / (UP * 1e9) + ring_latency(32, 4), rel=0.005)
    assert ring.bottleneck.tier == "scale-up"
    assert evaluate(flat).network.scale_out.bisection_gb_per_s == pytest.approx(16 * NDR, rel=0.001)


# -- 4. a ring of three switches -------------------------------------------------------------------------

def test_triangle_of_leaves_ring_allreduce():
    """24 ranks, ring s0 → s1 → s2 → s0. Each hop goes over the direct cable between the two leaves
    (one hop; the way round the third leaf is two), f·S = 2·23/24 S on it in one direction, 8
    channels: each cable carries f·S one way, so busbw = f·S/t ≤ 48.5 GB/s (latency 0.1 % off)."""
    r = collective(triangle(), "allreduce", "8G")
    ring = row(r, "ring")
    assert ring.ranks == 24
    f = 2 * 23 / 24
    assert ring.busbw_gb_per_s <= NET * 1.0005
    assert ring.time_s == pytest.approx(f * S8G / (NET * 1e9) + ring_latency(24, 3), rel=0.005)
    assert ring.bottleneck.link in ("leaf0--leaf1", "leaf1--leaf2", "leaf2--leaf0")


def test_triangle_of_leaves_tree_and_alltoall():
    """Tree: NCCL's double binary tree over 3 servers: tree 1 edges (parent, child) (2, 1), (0, 2);
    tree 2 (an odd count: shifted by one) (0, 2), (1, 0). Edge 0–2 is in both trees: S/2 each way
    per tree, S each way on cable Leaf 2 – Leaf 0 (the others S/2): t = S / (48.5 × 0.92), busbw =
    2·23/24 × 44.62 = 85.5 GB/s.

    All-to-all: every two servers exchange 8 × 8 × S/24 = 8/3 S each way over their direct cable:
    t = (8/3) S / 48.5, busbw = (23/24) × 48.5 × 3/8 = 17.4 GB/s."""
    tree = row(collective(triangle(), "allreduce", "8G"), "tree")
    assert tree.busbw_gb_per_s == pytest.approx(2 * 23 / 24 * NET * cal.TREE_BANDWIDTH_FACTOR, rel=0.01)
    assert tree.bottleneck.link == "leaf2--leaf0"
    alltoall = row(collective(triangle(), "alltoall", "1G"), "ring")
    assert alltoall.busbw_gb_per_s == pytest.approx(23 / 24 * NET * 3 / 8, rel=0.01)


# -- 5. a split fabric -----------------------------------------------------------------------------------

def _split() -> Design:
    d = two_leaf_tree()
    d.remove_link("leaf1--spine0")  # Leaf 1 has no uplink: s10, s11 reach nothing beyond it
    return d


def test_split_fabric_runs_on_the_largest_connected_set():
    """Leaf 1 without its uplink: Leaf 0's 16 accelerators and Leaf 1's 16 are not joined; the job
    runs on 16 (Leaf 0 first, kept on the tie). Its ring allreduce s00 → s01 → s00 (f = 2·15/16)
    crosses only Leaf 0 (f·S/8 per NIC over 50 GB/s): NVLink bounds it, t = f·S/367.65 + latency.
    Bisection of the job: s00 | s01, the 8 NICs of a server, 8 × 50 = 400 GB/s."""
    r = collective(_split(), "allreduce", "8G")
    assert r.network.job is not None and "16 of 32" in r.network.job
    assert r.collectives and all(c.ranks == 16 for c in r.collectives)
    ring = row(r, "ring")
    f = 2 * 15 / 16
    assert ring.time_s == pytest.approx(f * S8G / (UP * 1e9) + ring_latency(16, 2), rel=0.005)
    assert r.network.scale_out.bisection_gb_per_s == pytest.approx(8 * NDR, rel=0.001)
    plan = r.training.plan
    assert r.training.timed and plan.tp * plan.pp * plan.dp * plan.cp == 16


def test_split_fabric_trains_on_sixteen_with_a_given_plan():
    """tp 8 on 16 accelerators leaves dp = 2."""
    r = evaluate(_split(), workload=TRAINING)
    plan = r.training.plan
    assert r.training.timed and (plan.tp, plan.pp, plan.dp, plan.cp) == (8, 1, 2, 1)
    assert "16 of 32" in r.network.job


# -- 6. one server differing from its neighbours -----------------------------------------------------------

VARIANTS = {
    "hgx-first": {"platforms": {"s00": "hgx-h100"}},
    "hgx-second": {"platforms": {"s01": "hgx-h100"}},
    "nics-reversed": {"reverse": ("s01",)},
    "on-the-spine": {"on_spine": ("s01",)},
}
SERVERS = ("s00", "s01", "s10", "s11")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("op, size, algorithm", [("allreduce", "8G", "auto"), ("allreduce", "8G", "ring"),
                                                 ("allreduce", "1M", "auto"), ("alltoall", "1G", "auto"),
                                                 ("allgather", "8G", "auto")])
def test_a_server_unlike_its_neighbours_still_loads_its_links(variant, op, size, algorithm):
    """One server with another chassis (an HGX H100: the same 8 H100, 8 CX-7, 4 NVSwitches), its
    NICs cabled in another order, or cabled to the spine: every server is in the job and sends its
    share, so every NIC uplink and every NVLink of every server is busy in the collective's phase."""
    d = two_leaf_tree(**VARIANTS[variant])
    r = collective(d, op, size, algorithm)
    assert r.network.job is None and all(c.ranks == 32 for c in r.collectives)
    loads = loads_by_link(r)
    for server in SERVERS:
        up, nvlinks = nic_uplinks(d, server), scale_up_links(d, server)
        assert len(up) == 8 and len(nvlinks) == 32, server
        assert all(loads[link] > 0 for link in up), (server, {link: loads[link] for link in up})
        assert all(loads[link] > 0 for link in nvlinks), server


@pytest.mark.parametrize("variant", VARIANTS)
def test_ring_allreduce_loads_every_nic_uplink_alike(variant):
    """Ring allreduce 8 GiB: every server sends f·S to the next over 8 channels, one per NIC, so
    every NIC uplink carries f·S/8 one way: utilization (f·S/8) / (50 GB/s × t). Each leaf–spine
    cable carries f·S each way, utilization f·S / (50 GB/s × t) ≈ 0.97: s01 on its leaf, as in test
    1; s01 on the spine, Leaf 0 → Spine (s00 → s01), Spine → Leaf 0 (s11 → s00), Spine → Leaf 1
    (s01 → s10), Leaf 1 → Spine (s11 → s00)."""
    d = two_leaf_tree(**VARIANTS[variant])
    r = collective(d, "allreduce", "8G", "ring")
    t = row(r, "ring").time_s
    f = 2 * 31 / 32
    loads = loads_by_link(r)
    for server in SERVERS:
        for link in nic_uplinks(d, server):
            assert loads[link] == pytest.approx(f * S8G / 8 / (NDR * 1e9 * t), rel=0.01), (server, link)
    for link in ("leaf0--spine0", "leaf1--spine0"):
        assert loads[link] == pytest.approx(f * S8G / (NDR * 1e9 * t), rel=0.01), link


def _tree_nic_expectation(t: float) -> dict[str, float]:
    """Tree allreduce over s00, s01, s10, s11 (domains 0..3): tree 1 edges 0–2, 2–1, 2–3, tree 2
    1–2, 3–1, 1–0, S/2 each way per edge. s00 and s11 sit on one edge of each tree: S each way
    out of the server, S/8 per NIC; s01 and s10 on four edges: 2 S, S/4 per NIC."""
    per_nic = {"s00": 1 / 8, "s01": 2 / 8, "s10": 2 / 8, "s11": 1 / 8}
    return {server: share * S8G / (NDR * 1e9 * t) for server, share in per_nic.items()}


def test_tree_allreduce_nic_uplinks_show_the_flows_loads():
    """The flow model's loads per NIC (see `_tree_nic_expectation`): 0.056 on s00's and s11's
    uplinks, 0.112 on s01's and s10's at 8 GiB (t = 0.385 s)."""
    d = two_leaf_tree()
    r = collective(d, "allreduce", "8G", "tree")
    loads = loads_by_link(r)
    expected = _tree_nic_expectation(row(r, "tree").time_s)
    for server in SERVERS:
        for link in nic_uplinks(d, server):
            assert loads[link] == pytest.approx(expected[server], rel=0.01), (server, link)


def test_chassis_part_name_does_not_change_the_loads_shown():
    """s00 drawn as an HGX H100 (the same GPUs, NICs, NVSwitches and cables as a DGX H100): the
    tree allreduce moves the same bytes over the same links, so every link shows the same load."""
    plain, renamed = two_leaf_tree(), two_leaf_tree(platforms={"s00": "hgx-h100"})
    a = loads_by_link(collective(plain, "allreduce", "8G", "tree"))
    b = loads_by_link(collective(renamed, "allreduce", "8G", "tree"))
    assert set(a) == set(b)
    for link in a:
        assert b[link] == pytest.approx(a[link], rel=1e-6, abs=1e-9), link


# -- 7. the same network flat and boxed ------------------------------------------------------------------

def _is_sharp(row_) -> bool:
    return row_.algorithm == "sharp" or row_.chosen == "sharp"


def test_racks_around_leaves_change_nothing():
    """Each leaf and its two servers inside a rack: the same links, so the same bisection (50 GB/s),
    the same collective rows (every algorithm, every size, several ops) and the same training step.
    (SHARP's latency in detail: `test_sharp_latency_counts_the_switch_levels_drawn`.)"""
    flat, boxed = two_leaf_tree(), two_leaf_tree(boxed=True)
    assert len(boxed.items) == len(flat.items) + 2 and set(boxed.links) == set(flat.links)
    for op in ("allreduce", "alltoall", "allgather", "reduce-scatter", "broadcast"):
        a = evaluate(flat, workload={"collective": {"op": op}})
        b = evaluate(boxed, workload={"collective": {"op": op}})
        assert a.network.scale_out.bisection_gb_per_s == pytest.approx(NDR, rel=0.001)
        assert b.network.scale_out.bisection_gb_per_s == pytest.approx(a.network.scale_out.bisection_gb_per_s,
                                                                       rel=0.005)
        assert [(c.algorithm, c.bytes, c.chosen) for c in a.collectives] == [(c.algorithm, c.bytes, c.chosen)
                                                                            for c in b.collectives]
        assert len(a.collectives) == (len(a.collectives) // 5) * 5 >= 10  # 5 default sizes × algorithms
        for x, y in zip(a.collectives, b.collectives):
            assert y.time_s == pytest.approx(x.time_s, rel=0.005), (op, x.algorithm, x.bytes)
            assert y.busbw_gb_per_s == pytest.approx(x.busbw_gb_per_s, rel=0.005), (op, x.algorithm, x.bytes)
    for workload in (None, TRAINING):
        a, b = evaluate(flat, workload=workload), evaluate(boxed, workload=workload)
        assert a.training.timed and b.training.timed
        assert b.training.step_time_s == pytest.approx(a.training.step_time_s, rel=0.005)
        assert b.training.exposed_dp_s == pytest.approx(a.training.exposed_dp_s, rel=0.005, abs=1e-6)


def test_sharp_latency_counts_the_switch_levels_drawn():
    """SHARP allreduce of S = 1 MiB on the 16:1 tree, flat and boxed. NVLS in the server: 60 µs
    (NVLS_LATENCY) + S / (450 × 0.61 GB/s) = 3.8 µs; then the switches reduce: SHARP_BASE_LATENCY
    8.4 µs + one trip up and down the switch tree, leaf and spine, 2 levels × 2 × 14 µs = 56 µs,
    + S over the leaf–spine cable at 48.5 GB/s = 21.6 µs (each NIC carries S/8). 149.8 µs in all."""
    size = 2 ** 20
    levels = 2  # Leaf, Spine
    expected = (cal.NVLS_LATENCY + size / (NVLINK * cal.NVLS_EFFICIENCY * 1e9) + cal.SHARP_BASE_LATENCY
                + 2 * levels * cal.NET_STEP_LATENCY["ring"]["Simple"] + size / (NET * 1e9))
    for design in (two_leaf_tree(boxed=True), two_leaf_tree()):
        sharp = row(collective(design, "allreduce", "1M", "sharp"), "sharp")
        assert sharp.time_s == pytest.approx(expected, rel=0.01), design.items.keys() >= {"rack0"}


# -- 8. training: data parallel over the thin cut ----------------------------------------------------------

def _llama3_8b_gradient_bytes_per_gpu(tp: int) -> float:
    """Llama 3 8B: 32 layers, h 4096, 32 heads of 128, 8 KV heads, FFN 14336 (gated), vocabulary
    128256 untied. Per layer Q and O 2h², K and V 2·h·(8·128), MLP 3·h·14336: 218.1 M; embedding
    V·h = 525.3 M counted once (as the engine does; norms < 0.01 %). Per GPU with TP 8:
    (32 × 218.1 M + 525.3 M)/8 = 938 M parameters, bf16 gradients: 2 bytes each."""
    h, kv = 4096, 8 * 128
    layer = 2 * h * h + 2 * h * kv + 3 * h * 14336
    return cal.GRADIENT_BYTES * (32 * layer + 128256 * h) / tp


def test_data_parallel_over_the_sixteen_to_one_cut():
    """tp 8, pp 1 on 32 GPUs: dp 4, ZeRO 1 (the engine's default), no overlap. The 8 data-parallel
    groups (GPU k of each server) each reduce-scatter then all-gather G = 1.876 GB over a ring of
    the 4 servers: (n − 1)/n = 3/4 G per hop each.

    One switch: each group's hop is spread over the server's 8 NICs, the 8 groups together put
    8 × 3/4 G / 8 on each NIC: t = 3/4 G / 48.5 GB/s = 29 ms per collective, 58 ms exposed.
    16:1 tree: the 8 groups' crossing hops all go over the one cable: 8 × 3/4 G each way, 232 ms per
    collective, 464 ms exposed: 8 × the single switch's (latency ~0.05 ms each)."""
    g = _llama3_8b_gradient_bytes_per_gpu(8)
    single = evaluate(one_switch(4), workload=TRAINING).training
    tree = evaluate(two_leaf_tree(), workload=TRAINING).training
    for t in (single, tree):
        assert t.timed and (t.plan.tp, t.plan.pp, t.plan.dp, t.plan.zero) == (8, 1, 4, 1)
    assert single.exposed_dp_s == pytest.approx(2 * 0.75 * g / (NET * 1e9), rel=0.01)
    assert tree.exposed_dp_s == pytest.approx(2 * 8 * 0.75 * g / (NET * 1e9), rel=0.01)
    assert tree.exposed_dp_s > 4 * single.exposed_dp_s
    # The rest of the step is the same: only the exposed data-parallel time differs.
    assert tree.step_time_s - single.step_time_s == pytest.approx(tree.exposed_dp_s - single.exposed_dp_s, rel=0.01)


# -- 9. tori of leaves --------------------------------------------------------------------------------------

def test_ring_of_four_leaves_alltoall_and_bisection():
    """Four leaves in a cycle 0–1–2–3–0, one DGX H100 each (32 ranks). All-to-all: every two servers
    exchange 8 × 8 × S/32 = 2 S each way. Neighbours go direct; opposite servers (0–2, 1–3) have two
    shortest paths, ECMP puts S on each. Cable 0 → 1 carries 0 → 1 (2 S), half of 0 → 2 (S), half of
    3 → 1 (S): 4 S, every cable and direction alike by symmetry. busbw = (31/32) × 48.5 / 4 = 11.75.
    Ring allreduce: every hop is one cable, f·S on it one way: busbw ≤ 48.5.
    Bisection: s00 + s01 | s02 + s03, two cables of the cycle: 100 GB/s."""
    d = torus_of_leaves(1, 4)
    alltoall = row(collective(d, "alltoall", "1G"), "ring")
    assert alltoall.busbw_gb_per_s == pytest.approx(31 / 32 * NET / 4, rel=0.01)
    r = collective(d, "allreduce", "8G")
    ring = row(r, "ring")
    assert ring.busbw_gb_per_s <= NET * 1.0005
    assert ring.time_s == pytest.approx(2 * 31 / 32 * S8G / (NET * 1e9) + ring_latency(32, 4), rel=0.005)
    assert r.network.scale_out.bisection_gb_per_s == pytest.approx(2 * NDR, rel=0.001)


def test_four_by_four_torus_of_leaves_alltoall_and_bisection():
    """16 leaves in a 4 × 4 torus (32 cables), one DGX H100 each: 128 ranks. All-to-all: every two
    servers exchange 8 × 8 × S/128 = S/2. From any server the 15 others are sum(dx + dy) = 32 hops
    away (per dimension of 4: 0, 1, 1, 2 hops; 2 × 4 × 4 in all), so the flows make 16 × 32 × S/2 =
    256 S·hops over 64 cable directions, which the torus's symmetry (shifts, swapping and
    mirroring the dimensions, ECMP alike under them) loads alike: 4 S each. busbw = (127/128) ×
    48.5 / 4 = 12.03 GB/s (each NIC sends only 15/16 S / 8).
    Bisection: rows 0–1 | rows 2–3 (64 ranks each), two cables per column: 8 × 50 = 400 GB/s.
    Ring allreduce in rank order (row by row): a row change (x, 3) → (x + 1, 0) takes two 2-hop
    paths, f·S/2 each; the busiest cables (a row's wrap cable, on both such paths) carry f·S:
    busbw ≤ 48.5, t = f·S/48.5 + latency."""
    d = torus_of_leaves(4, 4)
    alltoall = row(collective(d, "alltoall", "1G"), "ring")
    assert alltoall.ranks == 128
    assert alltoall.busbw_gb_per_s == pytest.approx(127 / 128 * NET / 4, rel=0.01)
    r = collective(d, "allreduce", "8G")
    ring = row(r, "ring")
    assert ring.time_s == pytest.approx(2 * 127 / 128 * S8G / (NET * 1e9) + ring_latency(128, 16), rel=0.005)
    assert r.network.scale_out.bisection_gb_per_s == pytest.approx(8 * NDR, rel=0.001)
