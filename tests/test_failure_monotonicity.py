"""A failure never makes the cluster look better (docs/goodput.md, "A failure never helps"): drawn
failures of every example checked against the rules of `tests/failure_monotonicity.py`, and the
TPU v4 pod's failed hosts against hand-computed figures.

The pod (google-tpu-v4-pod): 64 blocks of 4×4×4 TPU v4 chips joined by optical circuit switches
into one 16×16×16 torus, 4,096 chips; 16 hosts of 4 chips per block; ICI links of 23.44 GB/s per
direction. Healthy: scale-up bisection 2 planes × 4,096 / 16 chips × 23.44 × 2 directions =
24,002.56 GB/s; the 8 GiB allreduce runs the dimension-wise torus algorithm (37.2 GB/s bus
bandwidth); the plan is tp 4 × dp 1,024, one micro-batch of one sequence per replica, ZeRO 3.

A failed host takes its 4 chips out and leaves a torus with holes. In place, collectives run
either as rings over the chips left, each through the two links of one dimension (2 × 23.44
GB/s), or dimension by dimension with the rings the holes break rerouted round them at half a
whole ring's capacity (collectives.torus_rings), whichever is faster; the bisection is the whole
torus's two planes less one link per missing chip (network._torus_bisection). The pod's blocks
meet through optical circuit switches, so the job may instead move to the largest slice of intact
blocks (tests/test_torus_slice.py); these tests look at the in-place figures where it moves.

`host0:1`, one host of one block, 4,092 chips left, in place:
- scale-up bisection (512 − 4) links × 23.44 × 2 = 23,815.04 GB/s;
- allreduce 8 GiB, a ring over 4,092 chips with the Simple protocol: 8.4 µs + 2 × 4,091 × 10 µs +
  S × 2 × 4,091 / 4,092 / (2 × 23.44 × 0.795 GB/s) = 0.542678 s, bus bandwidth 31.6499 GB/s: the
  rerouted torus takes 8.4 µs + 2 × 45 × 10 µs + S × 2 × 4,095 / 4,096 / (23.44 × 0.795 GB/s) =
  0.922607 s, twice the bytes' time for 1/91 of the latency;
- allreduce 1 MiB: the rerouted torus with the LL protocol, 6.6 µs + 2 × 45 × 2 µs +
  2 × 1 MiB × 4,095 / 4,096 / (23.44 × 0.795 × 0.5 GB/s) = 0.411624 ms (the ring: 16.48 ms, its
  8,182 steps of 2 µs);
- the plan keeps tp 4 and drops one of 1,024 data-parallel replicas (1,023 × 4 = 4,092 chips, none
  idle); the global batch of 1,024 sequences no longer gives each replica one, so each runs two
  micro-batches (compute 2.953 → 5.906 s, tensor parallel 0.889 → 1.778 s), and ZeRO-3's gather
  of each layer, hidden under the layer's 12.30 ms of forward compute on the whole torus
  (12.17 ms), takes 21.96 ms as a ring over 1,023 ranks (10.2 ms of it the ring's 1,022 steps;
  the rerouted torus: 24.0 ms), so every layer's gather and reduce-scatter show: exposed data
  parallel 0.036 → 4.603 s, step 3.878 → 12.287 s, 341,359 tokens/s.

`host0`, host 0 of every block (×64), 3,840 chips left, no block intact, in place:
- scale-up bisection (512 − 256) × 23.44 × 2 = 12,001.28 GB/s: below the worst balanced plane cut
  through the holes (384 links, 18,002 GB/s), never above it;
- allreduce 8 GiB over 3,840 chips: 8.4 µs + 2 × 3,839 × 10 µs + S × 2 × 3,839 / 3,840 / 37.2696
  GB/s = 0.537630 s, bus bandwidth 31.9465 GB/s;
- the plan keeps tp 4 with 960 replicas (64 fewer), no chip idle.
"""

import functools
import os
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine import evaluate
from designer.engine.failures import Failure, degraded_design
from designer.io.examples import example_paths, resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from tests.failure_monotonicity import failure_targets, healthy_of, violations

# A few drawn failures per example keep CI to seconds; benchmarks/failure_monotonicity.py (or this
# variable) draws many more.
DRAWS = int(os.environ.get("MONOTONICITY_DRAWS", "2"))
EXAMPLES = sorted(path.name.removesuffix(".cluster.json") for path in example_paths())

S = 8 * 2 ** 30
ICI = 23.44
RING = 2 * ICI * 0.795  # GB/s: the two links of one dimension at the generic scale-up ring efficiency


@functools.cache
def _healthy(name: str):
    catalog = default_catalog()
    design = load_design(resolve_design_path(name), catalog)
    return healthy_of(design, catalog), catalog


@pytest.mark.parametrize("name", EXAMPLES)
def test_no_failure_makes_an_example_look_better(name):
    healthy, catalog = _healthy(name)
    targets = failure_targets(healthy.design)

    @settings(max_examples=DRAWS, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(target=st.sampled_from(targets), amount=st.sampled_from(("all", "one", "five percent")))
    def check(target, amount):
        failure = {"all": Failure(target), "one": Failure(target, copies=1),
                   "five percent": Failure(target, percent=5)}[amount]
        assert violations(healthy, catalog, failure) == []

    check()


@pytest.mark.parametrize("target", ["core.sw", "core.group", "core", "blk.spine0", "blk.spines0"])
def test_no_failure_of_some_copies_of_matched_groups_helps(target):
    """Meta RSC phase 2's core groups and each rail's spines are matched copy for copy: failing
    some of their copies splits copy i of every matched group out together (docs/goodput.md,
    "Copies joined copy for copy"); each figure obeys the rules, and the bisection falls."""
    healthy, catalog = _healthy("meta-rsc-phase2")
    for failure in (Failure(target, copies=1), Failure(target, percent=5)):
        assert violations(healthy, catalog, failure) == []
        design = replace(healthy.design, settings={**healthy.design.settings, "failures": [failure.setting()]})
        degraded = evaluate(design, catalog).degraded
        assert degraded.why is None and degraded.cut_off == 0
        bisection = next(f for f in degraded.figures if f.figure == "Scale-out bisection")
        assert bisection.degraded < bisection.healthy


def test_the_rules_catch_a_failure_that_helps():
    """The checker itself: a degraded design better than the healthy one is reported. Against a
    healthy pod whose scale-up bisection is a quarter of its own, one failed host (23,815 GB/s
    left of 24,002.6) looks like a gain."""
    healthy, catalog = _healthy("google-tpu-v4-pod")
    network = healthy.result.network
    weaker = replace(healthy.result, network=replace(
        network, scale_up=replace(network.scale_up, bisection_gb_per_s=network.scale_up.bisection_gb_per_s / 4)))
    found = violations(replace(healthy, result=weaker), catalog, Failure("host0", copies=1))
    assert any("scale-up domain bisection" in line for line in found)


def _tpu_what_if(failure: str):
    catalog = default_catalog()
    design = load_design(resolve_design_path("google-tpu-v4-pod"), catalog)
    design.settings["failures"] = [{"target": failure.split(":")[0], "copies": 1}] if ":" in failure else [
        {"target": failure}]
    return evaluate(design, catalog)


def _in_place(failure: Failure, dp: int):
    """The pod with `failure` in place (the degraded design, not moved to a slice), running the
    healthy plan with `dp` replicas."""
    healthy, catalog = _healthy("google-tpu-v4-pod")
    design = load_design(resolve_design_path("google-tpu-v4-pod"), catalog)
    broken, cut_off, _ = degraded_design(design, catalog, [failure])
    plan = {**healthy.result.training.plan.as_dict(), "dp": dp}
    training = {"model": healthy.model, "plan": plan, "accelerators": dp * 4}
    return evaluate(broken, catalog, {**healthy.workload, "training": training}), cut_off


def _ring_time(n: int) -> float:
    return 8.4e-6 + 2 * (n - 1) * 10e-6 + S * 2 * (n - 1) / n / (RING * 1e9)


def test_one_host_of_one_tpu_block_failed_in_place():
    result, cut_off = _in_place(Failure("host0", copies=1), 1023)
    assert result.network.accelerators == 4092 and cut_off == 4
    assert result.network.scale_up.bisection_gb_per_s == pytest.approx((512 - 4) * ICI * 2, rel=1e-5)
    rows = {row.bytes: row for row in result.collectives}
    big, small = rows[S], rows[2 ** 20]
    assert big.chosen == "ring" and big.time_s == pytest.approx(_ring_time(4092), rel=1e-5)
    assert big.busbw_gb_per_s == pytest.approx(31.6499, rel=1e-5)
    rerouted = 8.4e-6 + 2 * 45 * 10e-6 + S * 2 * 4095 / 4096 / (ICI * 0.795 * 1e9)
    assert rerouted == pytest.approx(0.922607, rel=1e-5) and rerouted > big.time_s
    assert small.chosen == "torus"
    assert small.time_s == pytest.approx(6.6e-6 + 2 * 45 * 2e-6 + 2 ** 21 * 4095 / 4096 / (ICI * 0.795 * 0.5e9),
                                         rel=1e-4)
    t = result.training
    assert (t.plan.tp, t.plan.dp, t.microbatches) == (4, 1023, 2)
    assert t.compute_s == pytest.approx(2 * 2.95317, rel=1e-4) and t.exposed_tp_s == pytest.approx(2 * 0.88888,
                                                                                                     rel=1e-4)
    assert t.step_time_s == pytest.approx(12.2871, rel=1e-4) and t.tokens_per_s == pytest.approx(341_359, rel=1e-4)


def test_one_host_of_one_tpu_block_failed():
    d = _tpu_what_if("host0:1").degraded
    assert d.cut_off == 4
    assert d.placement.endswith("against 341,359 tokens/s in place around 4 missing chips")
    assert d.figure("allreduce 8 GiB time").healthy == pytest.approx(0.461758, rel=1e-5)  # the torus, healthy
    tokens = d.figure("Tokens per second")
    assert tokens.degraded < tokens.healthy


def test_host0_of_every_tpu_block_failed():
    result = _tpu_what_if("host0")
    d = result.degraded
    assert d.accelerators == 3840 and d.cut_off == 256
    assert d.placement == ("runs in place around 256 missing chips (349,983 tokens/s): no block is left intact "
                           "for a slice")
    assert d.figure("Scale-up domain bisection").degraded == pytest.approx((512 - 256) * ICI * 2, rel=1e-5)
    assert d.figure("allreduce 8 GiB time").degraded == pytest.approx(_ring_time(3840), rel=1e-5)
    assert d.figure("allreduce 8 GiB bus bandwidth").degraded == pytest.approx(31.9465, rel=1e-5)
    assert (d.plan.tp, d.plan.pp, d.plan.dp) == (4, 1, 960)
    assert d.why == "the healthy plan with 64 data-parallel replicas fewer"
    for name in ("Tokens per second", "allreduce 8 GiB bus bandwidth", "Scale-up domain bisection"):
        figure = d.figure(name)
        assert figure.degraded < figure.healthy, name


def test_a_job_that_lost_gpus_keeps_its_layout():
    """Tesla's H100 cluster (2023): 10,000 H100, healthy plan tp 8 × dp 1,250 (10,000 has no pp that
    fits better: 1,250 = 2 × 5⁴). Failing the partial unit `sux` (16 GPUs) leaves 9,984: the job
    keeps tp 8 and runs 1,248 replicas at the healthy tokens/s (892,509 against 892,221: the same
    micro-batches, a data-parallel ring 4 steps shorter, within the rules' allowance). A fresh search over
    9,984 GPUs found tp 8 × pp 13 × dp 96 at 1,128,950 tokens/s, 27 % above the healthy 892,221: a
    plan the healthy cluster could have run on 9,984 of its GPUs, which its search (plans over every
    accelerator) never tried."""
    catalog = default_catalog()
    design = load_design(resolve_design_path("tesla-h100-2023"), catalog)
    design.settings["failures"] = [{"target": "sux"}]
    d = evaluate(design, catalog).degraded
    assert d.accelerators == 9984
    assert (d.plan.tp, d.plan.pp, d.plan.dp) == (8, 1, 1248)
    tokens = d.figure("Tokens per second")
    assert tokens.degraded == pytest.approx(tokens.healthy, rel=1e-3)
    healthy, catalog = _healthy("tesla-h100-2023")
    assert violations(healthy, catalog, Failure("sux")) == []


def test_a_unit_split_out_empty_leaves_no_phantom_tier():
    """Tesla's H100 cluster with 5 % of its 1,248 servers failed (62: one whole unit of 32 and 30
    of another): the emptied unit is split out (`su:f1`) with its leaves and spines, which no
    longer lead down to any GPU and are dropped like any dead end. Left in, they counted as two
    more tiers above the core and the core's ratio as 39:1; the fat tree stays 1:1 at three tiers."""
    healthy, catalog = _healthy("tesla-h100-2023")
    failure = Failure("su.node", percent=5)
    assert violations(healthy, catalog, failure) == []
    design = load_design(resolve_design_path("tesla-h100-2023"), catalog)
    design.settings["failures"] = [failure.setting()]
    d = evaluate(design, catalog).degraded
    assert d.figure("Worst oversubscription").degraded == 1.0


def test_the_nic_of_a_failed_gpu_leads_nowhere():
    """Tencent's HCC (H800, 2,048 GPUs: 256 servers of 8 GPUs with one 400G NIC each, rail leaves
    and spines, 1:1): GPU 5 of every server fails. Its NIC's only host link was to that GPU, so
    NIC 5 and the rail-5 leaves it fed carry nothing and are dropped, as a leaf with nothing below
    is: the scale-out bisection loses 1/8 (51,200 → 44,800 GB/s), the fat tree keeps its two tiers
    at 1:1 (left in, the rail-5 leaves were reached from above and counted as a third tier), and
    the 7 GPUs left per server each keep a NIC of their own (48.5 GB/s)."""
    healthy, catalog = _healthy("tencent-hcc-h800")
    failure = Failure("su.node.gpu5")
    assert violations(healthy, catalog, failure) == []
    design = load_design(resolve_design_path("tencent-hcc-h800"), catalog)
    design.settings["failures"] = [failure.setting()]
    result = evaluate(design, catalog)
    d = result.degraded
    assert d.accelerators == 1792
    assert d.figure("Scale-out bisection").degraded == pytest.approx(51_200 * 7 / 8)
    assert d.figure("Worst oversubscription").degraded == 1.0
    assert d.figure("Scale-out injection per accelerator (achieved)").degraded == 48.5
