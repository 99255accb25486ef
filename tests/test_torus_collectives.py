"""All-gather and reduce-scatter on a torus run dimension by dimension (`collectives._torus_phases`),
as TPU collectives do, for communicators over the whole torus or over whole dimensions of it.

The expected times are worked out by hand from the 4×4×4 TPU v4 torus of the default catalogue:
each ICI link carries 23.44 GB/s each way, a dimension's ring uses a chip's two links of that
dimension (46.88 GB/s), at the torus efficiency 0.795 (37.2696 GB/s); the ICI has the generic
collective constants (per step LL 2 µs, Simple 10 µs; base latency LL 6.6 µs, Simple 8.4 µs; LL at
half the bandwidth)."""

import pytest

from designer.engine.collectives import TorusRing, applicable, collective_rows, time_collective, torus_rings
from designer.engine.network import build_fabric, network_summary
from designer.model.catalog import default_catalog
from designer.topologies import generate

K, G = 2 ** 10, 2 ** 30
RING_GB_PER_S = 2 * 23.44 * 0.795  # both links of one dimension, at the torus efficiency


@pytest.fixture(scope="module")
def torus():
    return build_fabric(generate("torus", default_catalog(), dims="4x4x4"), default_catalog())


@pytest.mark.parametrize("op", ["reduce-scatter", "allgather"])
def test_whole_torus_1_gib(torus, op):
    """64 chips, 1 GiB (S = 1,073,741,824 bytes), Simple protocol.

    Three stages of 4 chips. A reduce-scatter moves 3/4 of S, then 3/4 of S/4, then 3/4 of S/16
    (an all-gather the same, growing): 63/64 S = 1,056,964,608 bytes per chip in all, over
    37.2696 GB/s = 28.3598 ms. Latency: 3 stages × 3 steps × 10 µs + 8.4 µs = 98.4 µs.
    Total 28.4582 ms. The 1-D ring over all 64 chips pays 63 × 10 µs + 8.4 µs = 638.4 µs of
    latency for the same bytes: 28.9982 ms."""
    assert "torus" in applicable(torus, op, 64)
    on_torus = time_collective(torus, op, "torus", 64, [G])
    assert len(on_torus.phases) == 3
    assert float(on_torus.time[0]) == pytest.approx(28.4582e-3, rel=1e-5)
    assert float(time_collective(torus, op, "ring", 64, [G]).time[0]) == pytest.approx(28.9982e-3, rel=1e-5)


@pytest.mark.parametrize("op", ["reduce-scatter", "allgather"])
def test_whole_torus_64_kib_is_latency_bound(torus, op):
    """64 chips, 64 KiB (65,536 bytes), LL protocol (it beats Simple's 100.1 µs).

    Bytes: 63/64 × 65,536 = 64,512 over 37.2696 / 2 GB/s (LL) = 3.4619 µs. Latency:
    9 steps × 2 µs + 6.6 µs = 24.6 µs. Total 28.0619 µs, against the ring's
    63 × 2 µs + 6.6 µs + 3.4619 µs = 136.0619 µs: latency grows with the sum of the dimensions
    (3 + 3 + 3 steps), not their product (63)."""
    rows, _ = collective_rows(torus, op, [64 * K])
    auto = next(r for r in rows if r["algorithm"] == "auto")
    assert auto["chosen"] == "torus" and auto["protocol"] == "LL"
    assert auto["time_s"] == pytest.approx(28.0619e-6, rel=1e-4)
    ring = next(r for r in rows if r["algorithm"] == "ring")
    assert ring["time_s"] == pytest.approx(136.0619e-6, rel=1e-4)


@pytest.mark.parametrize("op", ["reduce-scatter", "allgather"])
def test_group_of_whole_dimensions_beside_a_strided_one(torus, op):
    """A data-parallel group of 16 chips, every 4th (tensor parallel takes one dimension): the
    group spans the other two dimensions. 1 GiB, Simple: 3/4 S + 3/4 S/4 = 15/16 S =
    1,006,632,960 bytes over 37.2696 GB/s = 27.0094 ms, plus 2 × 3 × 10 µs + 8.4 µs = 68.4 µs:
    27.0778 ms."""
    assert torus_rings(torus, 16, 4) == (TorusRing(4, 1, True), TorusRing(4, 1, True))
    assert "torus" in applicable(torus, op, 16, 4)
    timing = time_collective(torus, op, "torus", 16, [G], stride=4)
    assert float(timing.time[0]) == pytest.approx(27.0778e-3, rel=1e-5)


@pytest.mark.parametrize("op", ["reduce-scatter", "allgather"])
def test_group_on_part_of_a_dimension(torus, op):
    """Tensor parallel of 2 takes half of the first dimension: a data-parallel group of 32, every
    2nd chip, runs round the other two dimensions (4 and 4, 2 × 23.44 GB/s each) and round the
    first with its members 2 chips apart (2 members; the dimension's links shared with the other
    group: 2 × 23.44 / 2 GB/s). 1 GiB, Simple, the wide rings first: 3/4 S / 37.2696 GB/s +
    3/4 (S/4) / 37.2696 GB/s + 1/2 (S/16) / 18.6348 GB/s = S / 18.6348 GB/s × (3/8 + 3/32 + 1/32)
    = 57.6202 ms / 2 = 28.8101 ms, plus (3 + 3 + 1) × 10 µs + 8.4 µs = 78.4 µs: 28.8885 ms.
    The tensor-parallel pair itself is a segment of 2 chips (a line, one direction of a link each
    way): 1/2 S / 18.6348 GB/s + 10 µs + 8.4 µs = 28.8285 ms."""
    assert torus_rings(torus, 32, 2) == (TorusRing(4, 1, True), TorusRing(4, 1, True), TorusRing(2, 2, True))
    group = time_collective(torus, op, "torus", 32, [G], stride=2)
    assert float(group.time[0]) == pytest.approx(28.8885e-3, rel=1e-5)
    assert group.phases[-1 if op == "reduce-scatter" else 0].terms[0].where == "2 chips 2 apart round a torus dimension"
    assert torus_rings(torus, 2) == (TorusRing(2, 1, False),)
    assert float(time_collective(torus, op, "torus", 2, [G]).time[0]) == pytest.approx(28.8285e-3, rel=1e-5)


def test_groups_that_cannot_sit_evenly_on_the_torus_stay_rings(torus):
    """3 chips do not divide a dimension of 4, nor 6 chips every 2nd: no torus algorithm."""
    assert torus_rings(torus, 3) == () and torus_rings(torus, 6, 2) == ()
    assert "torus" not in applicable(torus, "allgather", 3)
    assert "torus" not in applicable(torus, "reduce-scatter", 6, 2)
    assert applicable(torus, "alltoall", 3) == ["ring"]


def test_allreduce_is_the_reduce_scatter_then_the_all_gather(torus):
    """The allreduce's stages are the reduce-scatter's and the all-gather's; the call's base
    latency (8.4 µs, Simple) is paid once."""
    times = {op: float(time_collective(torus, op, "torus", 64, [G]).time[0])
             for op in ("allreduce", "reduce-scatter", "allgather")}
    assert times["allreduce"] == pytest.approx(times["reduce-scatter"] + times["allgather"] - 8.4e-6, rel=1e-9)


def test_over_several_pods_the_dcn_stage_comes_after_the_reduce_and_before_the_gather():
    """Two 8×8×8 pods: a reduce-scatter reduces in the pod first (each chip then holds 1/512 of
    the message) and crosses the data-centre network last; an all-gather crosses it first. A
    communicator over both pods fills each (its rings, then the data-centre network)."""
    catalog = default_catalog()
    fabric = build_fabric(generate("torus", catalog, platform="tpu-v4-host-dcn", dims="8x8x8", block="4x4x4",
                                   pods=2), catalog)
    assert [ring.size for ring in torus_rings(fabric, 1024)] == [8, 8, 8]
    assert [ring.size for ring in torus_rings(fabric, 128, 8)] == [8, 8]
    # Tensor parallel of 2 splits the first dimension: data parallel over both pods, every 2nd chip.
    assert torus_rings(fabric, 512, 2) == (TorusRing(8, 1, True), TorusRing(8, 1, True), TorusRing(4, 2, True))
    assert len(time_collective(fabric, "allgather", "torus", 512, [G], stride=2).phases) == 4
    scatter = time_collective(fabric, "reduce-scatter", "torus", 1024, [G]).phases
    gather = time_collective(fabric, "allgather", "torus", 1024, [G]).phases
    assert [p.terms[0].where for p in scatter][-1] == "accelerator scale-out injection"
    assert [p.terms[0].where for p in gather][0] == "accelerator scale-out injection"
    assert scatter[-1].terms[0].traffic == pytest.approx(1 / 2 / 512)
    one_pod = time_collective(fabric, "reduce-scatter", "torus", 512, [G])
    assert len(one_pod.phases) == 3


def test_all_to_all_crosses_several_hops_of_each_dimension(torus):
    """Every chip sends S/n to every other, along each dimension ⌊k²/4⌋/k hops on average, all
    dimensions at once: the slowest dimension bounds it. Latency: 8.4 µs + one 10 µs step.

    4×4×4, 1 GiB: 1 hop on average per dimension, S / 37.2696 GB/s = 28.8101 ms + 18.4 µs =
    28.8285 ms. 16×16, 1 GiB: 4 hops, 4 S / 37.2696 GB/s = 115.2405 ms + 18.4 µs = 115.2589 ms,
    four times the one-hop ring formula (about 28.7 ms, the figure before the torus had its own)."""
    assert applicable(torus, "alltoall", 64) == ["torus"]
    assert float(time_collective(torus, "alltoall", "torus", 64, [G]).time[0]) == pytest.approx(28.8285e-3, rel=1e-5)
    plane = build_fabric(generate("torus", default_catalog(), dims="16x16"), default_catalog())
    rows, _ = collective_rows(plane, "alltoall", [G])
    auto = next(r for r in rows if r["algorithm"] == "auto")
    assert auto["chosen"] == "torus" and auto["time_s"] == pytest.approx(115.2589e-3, rel=1e-5)
    assert auto["time_s"] >= auto["bound_time_s"]


def test_all_to_all_over_several_pods_keeps_the_ring_formula():
    """Across pods the data-centre network bounds an all-to-all: it stays the ring's formula."""
    catalog = default_catalog()
    fabric = build_fabric(generate("torus", catalog, platform="tpu-v4-host-dcn", dims="8x8x8", block="4x4x4",
                                   pods=2), catalog)
    assert applicable(fabric, "alltoall", 1024) == ["ring"]
    assert applicable(fabric, "alltoall", 512) == ["torus"]


def test_an_open_mesh_has_lines_not_rings_and_half_the_bisection():
    """The torus template with wrap=0 (one block: Dojo's tiles) draws an open 4×4×4 mesh: a line of
    4 chips has no link back from its last chip to its first, so a reduce-scatter along it runs
    over one direction of each link (23.44 × 0.795 = 18.6348 GB/s per chip), half a ring's, and one
    plane cuts the mesh in two where a torus needs two.

    1 GiB over all 64 chips, Simple: 63/64 S = 1,056,964,608 bytes over 18.6348 GB/s = 56.7197 ms
    plus the same 98.4 µs of latency as on the torus: 56.8181 ms (the torus: 28.4582 ms).
    Bisection: 64 / 4 = 16 links across one plane, both directions: 16 × 23.44 × 2 = 750.08 GB/s
    (the torus: 1,500.16)."""
    catalog = default_catalog()
    mesh = build_fabric(generate("torus", catalog, dims="4x4x4", wrap=0), catalog)
    assert mesh.torus_open and all(not ring.closed for ring in torus_rings(mesh, 64))
    on_mesh = time_collective(mesh, "reduce-scatter", "torus", 64, [G])
    assert float(on_mesh.time[0]) == pytest.approx(56.8181e-3, rel=1e-5)
    torus = build_fabric(generate("torus", catalog, dims="4x4x4"), catalog)
    assert not torus.torus_open
    assert network_summary(mesh)["tiers"]["scale-up"]["bisection_gb_per_s"] == pytest.approx(750.08)
    assert network_summary(torus)["tiers"]["scale-up"]["bisection_gb_per_s"] == pytest.approx(1500.16)
