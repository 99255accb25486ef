"""Collective times and the training step of a degraded design, timed on the weakest copy the job
still uses (network.build_fabric's `slowest_of`, failures.weakened_accelerators; docs/goodput.md,
"Collectives and the step on the weakest copy"), against hand-computed cases.

The default example: 4 scalable units of 32 DGX H100 (8 H100, 8 ConnectX-7 NDR NICs at 50 GB/s
raw and 48.5 GB/s achieved, 450 GB/s of NVLink per GPU), 8 rail leaves per unit, 16 spines. The
largest collective of its workload is an allreduce of 8 GiB over all 1,024 GPUs, which the auto
choice runs as NCCL's tree: its slowest term is a GPU's NVLink share, 2 S over 450 × 0.817
(Hopper's ring efficiency) × 0.92 (the tree's factor) = 338.2 GB/s, ahead of its NIC share, S / 4
(2 S over the server's 8 GPUs) over 48.5 × 0.92. The tree's latency with Simple, 8 ranks per
server and 128 servers: 8.4 µs + 2 × (7 × 5 µs + ⌈log2 128⌉ × 14 µs) = 274.4 µs."""

import math

import pytest

from designer.engine import calibration as cal
from designer.engine import evaluate
from designer.engine.failures import Failure, degraded_design, weakened_accelerators
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog

S = 8 * 2 ** 30
N = 1024
BUS = 2 * (N - 1) / N
TREE = cal.TREE_BANDWIDTH_FACTOR
HOPPER = cal.HOPPER.ring_efficiency
TREE_LATENCY = cal.BASE_LATENCY["tree"]["Simple"] + 2 * (
    7 * cal.HOPPER.step_latency["Simple"] + math.ceil(math.log2(128)) * cal.NET_STEP_LATENCY["tree"]["Simple"])
HEALTHY_TREE = TREE_LATENCY + S * 2 / (450 * HOPPER * TREE * 1e9)
# One NIC of 8 fewer: the server's GPUs share 7 × 48.5 GB/s, 42.4375 each, and its tree share
# (S / 4 per GPU) is now the slowest term.
WEAK_INJECTION = 7 * 48.5 / 8
WEAK_TREE = TREE_LATENCY + S / 4 / (WEAK_INJECTION * TREE * 1e9)

# A workload whose data-parallel allreduce is exposed: llama3-8b, tp 8 inside each server, dp 128
# (GPU k of every server), no ZeRO, nothing hidden behind compute. Each GPU's 938,147,840
# parameters give S_DP = 2 B × 938,147,840 = 1.876 GB of bf16 gradients, reduced with SHARP: each
# GPU sends S_DP once through its injection, 48.5 GB/s, after 8.4 µs + 2 × 3 levels × 14 µs.
DP_WORKLOAD = {"training": {"model": "llama3-8b", "overlap": {"dp": "none"},
                            "plan": {"tp": 8, "pp": 1, "dp": 128, "zero": 0}}}
S_DP = 2 * 938_147_840
SHARP_LATENCY = cal.SHARP_BASE_LATENCY + 2 * 3 * cal.NET_STEP_LATENCY["ring"]["Simple"]
HEALTHY_DP = SHARP_LATENCY + S_DP / (48.5 * 1e9)
WEAK_DP = SHARP_LATENCY + S_DP / (WEAK_INJECTION * 1e9)


@pytest.fixture
def superpod():
    return load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog())


def what_if(design, *failures, workload=None):
    design.settings["failures"] = [failure.setting() for failure in failures]
    if workload is not None:
        design.settings["workload"] = workload
    return evaluate(design).degraded


def allreduce(degraded):
    return (degraded.figure("allreduce 8 GiB time"), degraded.figure("allreduce 8 GiB bus bandwidth"))


def test_the_healthy_tree_by_hand(superpod):
    row = next(r for r in evaluate(superpod).collectives if r.algorithm == "auto" and r.bytes == S)
    assert row.chosen == "tree"
    assert row.time_s == pytest.approx(HEALTHY_TREE, rel=1e-5)
    assert row.busbw_gb_per_s == pytest.approx(S / HEALTHY_TREE * BUS / 1e9, rel=1e-5) == pytest.approx(336.1, abs=0.1)


def test_one_nic_of_one_server_slows_every_collective_through_it(superpod):
    """One NIC of one of the 128 servers fails. The engine keeps the server in the job: its GPU
    on rail 3 reaches the other seven NICs over NVLink (NCCL's PXN), so the server's eight GPUs
    share 7 × 48.5 = 339.5 GB/s, 42.44 each, and nothing is cut off. A ring or tree over all
    1,024 GPUs passes through that server, so the 8 GiB allreduce runs at its pace: the tree's
    slowest term becomes the server's injection, S / 4 over 42.44 × 0.92:
    t = 274.4 µs + 8 GiB / 4 / 39.04 GB/s = 0.05528 s (healthy 0.05107 s), busbw
    8 GiB / t × 2 × 1,023 / 1,024 = 310.5 GB/s (healthy 336.1).

    The default workload (tp 2 × dp 512, ZeRO 3) exposes 35.4 ms of data-parallel traffic (the
    all-gather before the first layer, the reduce-scatter after the last), which now crosses
    that server's 7 NICs: its step grows, by less than 35.4 ms × (48.5 / 42.44 − 1) = 5.06 ms,
    the most a 7/8 injection can add (the collectives' latency does not grow). With the data-parallel allreduce
    exposed (DP_WORKLOAD) it grows from 92.4 µs + 1.876 GB / 48.5 GB/s = 38.78 ms to
    92.4 µs + 1.876 GB / 42.44 GB/s = 44.31 ms: the step 5.53 ms longer."""
    degraded = what_if(superpod, Failure("su.node.nic3", 1))
    assert degraded.cut_off == 0 and degraded.accelerators == N
    assert degraded.figure("Scale-out injection per accelerator (achieved)").degraded == WEAK_INJECTION
    time, busbw = allreduce(degraded)
    assert time.degraded == pytest.approx(WEAK_TREE, rel=1e-4) == pytest.approx(0.05528, abs=1e-5)
    assert busbw.degraded == pytest.approx(S / WEAK_TREE * BUS / 1e9, rel=1e-4) == pytest.approx(310.5, abs=0.1)
    assert 0 < degraded.figure("Training step time").change < 0.0354183 * (48.5 / WEAK_INJECTION - 1)

    exposed = what_if(superpod, Failure("su.node.nic3", 1), workload=DP_WORKLOAD)
    step = exposed.figure("Training step time")
    assert step.degraded - step.healthy == pytest.approx(WEAK_DP - HEALTHY_DP, rel=1e-3)
    assert WEAK_DP - HEALTHY_DP == pytest.approx(5.53e-3, abs=1e-5)


def test_one_leaf_of_one_scalable_unit(superpod):
    """The rail-3 leaf of one unit fails. Its 32 servers' rail-3 NICs lead nowhere; the engine
    sends their GPU 3's traffic over NVLink to the other rails' NICs (PXN), as it does for a
    failed NIC, so each of those 256 GPUs injects 7/8 × 48.5 = 42.44 GB/s and none is cut off.
    The unit's cut loses 1/8 (11,200 of 12,800 GB/s), which the tree (2 S over 11,200 × 0.97 ×
    0.92) does not feel; its servers' injection it does, exactly as with one failed NIC: the
    allreduce takes 0.05528 s (busbw 310.5 GB/s) and the exposed data-parallel step is 5.53 ms
    longer."""
    degraded = what_if(superpod, Failure("su.leaf3", 1))
    assert degraded.cut_off == 0
    time, busbw = allreduce(degraded)
    assert time.degraded == pytest.approx(WEAK_TREE, rel=1e-4)
    assert busbw.degraded == pytest.approx(310.5, abs=0.1)
    exposed = what_if(superpod, Failure("su.leaf3", 1), workload=DP_WORKLOAD)
    step = exposed.figure("Training step time")
    assert step.degraded - step.healthy == pytest.approx(WEAK_DP - HEALTHY_DP, rel=1e-3)


def test_one_spine_of_sixteen(superpod):
    """One spine of 16 fails: every unit loses 1/16 of its uplinks (12,000 of 12,800 GB/s),
    alike. The allreduce's unit term, 2 S over 12,000 × 0.97 × 0.92 = 10,709 GB/s, stays far
    below its NVLink term (338.2 GB/s), and with dp exposed the SHARP reduction's unit term
    (8 ranks' S_DP over 11,640 GB/s = 1,455 GB/s per rank) below its injection (48.5 GB/s): the
    allreduce (0.05107 s, 336.1 GB/s) and the step do not move; only the bisection (× 15/16)
    and the spines' oversubscription (16/15) do."""
    degraded = what_if(superpod, Failure("spines.sw", 1))
    time, busbw = allreduce(degraded)
    assert time.degraded == time.healthy == pytest.approx(HEALTHY_TREE, rel=1e-5)
    assert busbw.change == 0
    assert degraded.figure("Scale-out bisection").degraded == 25_600 * 15 / 16
    assert degraded.figure("Worst oversubscription").degraded == pytest.approx(16 / 15, abs=1e-3)
    exposed = what_if(superpod, Failure("spines.sw", 1), workload=DP_WORKLOAD)
    assert exposed.figure("Training step time").change == 0


def test_the_bottleneck_is_the_weak_copys_link(superpod):
    # The degraded evaluation names the failed server's NIC uplinks, not the representative's.
    catalog = default_catalog()
    broken, _, _ = degraded_design(superpod, catalog, [Failure("su.node.nic3", 1)])
    weak = weakened_accelerators(superpod, broken, [Failure("su.node.nic3", 1)])
    assert any(":f" in a for a in weak)
    row = next(r for r in evaluate(broken, catalog, slowest_of=weak).collectives
               if r.algorithm == "auto" and r.bytes == S)
    assert row.bottleneck.where == "accelerator scale-out injection"
    assert ":f" in row.bottleneck.link
    # Without the weak copies the same design is timed on its representative, an intact server.
    plain = next(r for r in evaluate(broken, catalog).collectives if r.algorithm == "auto" and r.bytes == S)
    assert plain.time_s == pytest.approx(HEALTHY_TREE, rel=1e-5)


def test_frontier_one_switch_of_one_group():
    """Frontier: 74 dragonfly groups (73 drawn as one group of 73 copies, one partial), each with
    32 Rosetta switches and 292 global links of 25 GB/s (7,300 GB/s); the engine's bisection is
    G²/4 × 7,300 / (G − 1) = 74² / 4 × 100 = 136,900 GB/s. One switch of one group fails: its 4
    servers (16 GPUs) are cut off and the group keeps 7,300 − 9 × 25 = 7,075 GB/s of global
    links. Two groups share as many links as the weaker has per other group, so the worst even
    split puts that group with 36 whole ones, each meeting the 37 across:
    37 / 73 × (7,075 + 36 × 7,300) = 136,786 GB/s (the representative group alone said 136,900).
    The 8 GiB allreduce is bounded by each GPU's injection (24.25 GB/s), which no server lost:
    it does not move."""
    design = load_design(resolve_design_path("frontier-mi250x"), default_catalog())
    degraded = what_if(design, Failure("g.b5.sw", 1))
    assert degraded.cut_off == 16
    assert degraded.figure("Scale-out bisection").degraded == pytest.approx(37 / 73 * (7_075 + 36 * 7_300), abs=0.5)
    time, _ = allreduce(degraded)
    assert time.change == 0
    # The job keeps its layout and drops a data-parallel replica; 37,616 = 16 × 2,351 GPUs, so no
    # replica fits on the last 12 and they idle (a fresh search found no plan tiling 37,616).
    assert degraded.why == "the healthy plan with 1 data-parallel replica fewer, 12 accelerators idle"


def test_frontier_a_flat_drawn_group_is_weighed_too():
    """The partial group (64 servers) is drawn apart, its items once each: a failure there splits
    nothing. One switch of it (`pg.b5.sw`, 9 global links) leaves it 7,075 GB/s of global links
    and cuts its 2 servers off: the same 37 / 73 × (7,075 + 36 × 7,300) = 136,786 GB/s.

    One NIC of a node in it (`pg.b5.node.nic0`, both copies of that node): the node's 4 GPUs
    share 3 × 24.25 GB/s, 18.19 each, and the injection-bound allreduce tree (4 ranks per node,
    9,408 nodes; latency 8.4 µs + 2 × (3 steps inside the node + ⌈log2 9,408⌉ = 14 × 14 µs))
    takes 4/3 of its bandwidth time: 0.193 s → 0.257 s, as for the same NIC in a replicated
    group (`g.b5.node.nic0:1`)."""
    catalog = default_catalog()
    design = load_design(resolve_design_path("frontier-mi250x"), catalog)
    switch = what_if(design, Failure("pg.b5.sw"))
    assert switch.cut_off == 8
    assert switch.figure("Scale-out bisection").degraded == pytest.approx(37 / 73 * (7_075 + 36 * 7_300), abs=0.5)
    latency = cal.BASE_LATENCY["tree"]["Simple"] + 2 * (
        3 * cal.SCALE_UP_STEP_LATENCY["Simple"] + math.ceil(math.log2(9_408)) * cal.NET_STEP_LATENCY["tree"]["Simple"])
    for failure in (Failure("pg.b5.node.nic0"), Failure("g.b5.node.nic0", 1)):
        design = load_design(resolve_design_path("frontier-mi250x"), catalog)
        degraded = what_if(design, failure)
        assert degraded.figure("Scale-out injection per accelerator (achieved)").degraded == 3 * 24.25 / 4
        time, _ = allreduce(degraded)
        assert time.degraded == pytest.approx(latency + (time.healthy - latency) * 4 / 3, rel=1e-4)
        assert time.degraded == pytest.approx(0.2571, abs=1e-4)
