"""A failure never makes the cluster look better (docs/goodput.md, "A failure never helps"): drawn
failures of every example checked against the rules of `tests/failure_monotonicity.py`, and the
TPU v4 pod's failed hosts against hand-computed figures.

The pod (google-tpu-v4-pod): 64 blocks of 4×4×4 TPU v4 chips joined by optical circuit switches
into one 16×16×16 torus, 4,096 chips; 16 hosts of 4 chips per block; ICI links of 23.44 GB/s per
direction. Healthy: scale-up bisection 2 planes × 4,096 / 16 chips × 23.44 × 2 directions =
24,002.56 GB/s; the 8 GiB allreduce runs the dimension-wise torus algorithm (37.2 GB/s bus
bandwidth); the plan is tp 4 × dp 1,024, one micro-batch of one sequence per replica, ZeRO 3.

A failed host takes its 4 chips out and leaves a torus with holes: no dimension-wise algorithm runs
(every ring of every dimension must be whole), collectives run as rings over the chips left, each
through the two links of one dimension (2 × 23.44 GB/s), and the bisection is the whole torus's
two planes less one link per missing chip (network._torus_bisection).

`host0:1`, one host of one block, 4,092 chips left:
- scale-up bisection (512 − 4) links × 23.44 × 2 = 23,815.04 GB/s;
- allreduce 8 GiB, a ring over 4,092 chips with the Simple protocol: 8.4 µs + 2 × 4,091 × 10 µs +
  S × 2 × 4,091 / 4,092 / (2 × 23.44 × 0.795 GB/s) = 0.542678 s, bus bandwidth 31.6499 GB/s;
- the plan keeps tp 4 and drops one of 1,024 data-parallel replicas (1,023 × 4 = 4,092 chips, none
  idle); the global batch of 1,024 sequences no longer gives each replica one, so each runs two
  micro-batches, and its data-parallel collectives are rings over 1,023 ranks instead of the
  torus's dimension by dimension: the step triples (3.88 → 12.29 s), tokens/s fall to 341,359.

`host0`, host 0 of every block (×64), 3,840 chips left:
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
from designer.engine.failures import Failure
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


def _ring_time(n: int) -> float:
    return 8.4e-6 + 2 * (n - 1) * 10e-6 + S * 2 * (n - 1) / n / (RING * 1e9)


def test_one_host_of_one_tpu_block_failed():
    result = _tpu_what_if("host0:1")
    d = result.degraded
    assert d.accelerators == 4092 and d.cut_off == 4
    bisection = d.figure("Scale-up domain bisection")
    assert bisection.healthy == pytest.approx(1024 * ICI, rel=1e-5)
    assert bisection.degraded == pytest.approx((512 - 4) * ICI * 2, rel=1e-5)
    time = d.figure("allreduce 8 GiB time")
    assert time.healthy == pytest.approx(0.461758, rel=1e-5)  # the torus algorithm, healthy
    assert time.degraded == pytest.approx(_ring_time(4092), rel=1e-5)
    busbw = d.figure("allreduce 8 GiB bus bandwidth")
    assert busbw.degraded == pytest.approx(S / _ring_time(4092) * 2 * 4091 / 4092 / 1e9, rel=1e-5)
    assert busbw.degraded == pytest.approx(31.6499, rel=1e-5) and busbw.degraded < busbw.healthy
    plan = d.plan
    assert (plan.tp, plan.pp, plan.dp, plan.cp, plan.mb) == (4, 1, 1023, 1, 1)
    assert d.why == "the healthy plan with 1 data-parallel replica fewer"
    tokens = d.figure("Tokens per second")
    assert tokens.degraded < tokens.healthy


def test_host0_of_every_tpu_block_failed():
    result = _tpu_what_if("host0")
    d = result.degraded
    assert d.accelerators == 3840 and d.cut_off == 256
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
