"""A failure on a torus whose blocks meet through optical circuit switches (docs/goodput.md, "A
torus of reconfigurable blocks"): the job runs in place around the holes or moves to the largest
slice of intact blocks, the torus closed again through the switches, whichever trains faster.

TPU v4 pod (google-tpu-v4-pod): 64 blocks of 4×4×4 chips, 4 × 4 × 4 blocks; ICI links 23.44 GB/s
per direction; healthy plan tp 4 × dp 1,024, one micro-batch of one sequence per replica (global
batch 1,024), 1,081,590 tokens/s. One failed host (`host0:1`) leaves 63 intact blocks; the largest
box of whole blocks at most 4 per dimension is 3 × 4 × 4 = 48 blocks, a 12 × 16 × 16 torus of
3,072 chips:
- scale-up bisection: 2 planes × 3,072 / 16 chips × 23.44 × 2 directions = 18,001.92 GB/s;
- allreduce 8 GiB, dimension by dimension: 8.4 µs + 2 × (11 + 15 + 15) × 10 µs +
  S × 2 × (1 − 1/3,072) / (2 × 23.44 × 0.795 GB/s) = 0.461607 s;
- the plan keeps tp 4 with 768 replicas (256 fewer): 1,024 sequences over 768 replicas take two
  micro-batches each, so compute and tensor-parallel time per step double.

The bound: the slice has 3/4 of the chips, but with the global batch fixed each replica runs two
micro-batches where it ran one, so the step at least doubles (compute 2 × 2.953 s, tensor parallel
2 × 0.889 s) and the data-parallel traffic, all but 36 ms hidden on the healthy torus, stays hidden
on the slice's torus: tokens/s within 1 % of half the healthy figure. In place, the same two
micro-batches (1,024 over 1,023 replicas) plus every layer's ZeRO-3 gather exposed (the ring over
1,023 ranks: tests/test_failure_monotonicity.py) give 341,359 tokens/s, so the slice is kept.

A 2 × 2 × 2-block torus (8 × 8 × 8 chips, 512, healthy tp 4 × dp 128, 8 micro-batches of the
1,024 sequences): one failed host leaves 7 intact blocks, whose largest box is 1 × 2 × 2 = 4 blocks
(4 × 8 × 8, 256 chips, 64 replicas running 16 micro-batches: half the healthy tokens/s); in place
the job keeps 127 replicas running 9 micro-batches (at most 8/9 of it): in place is kept. With 4
blocks failed, in place has the same 256 chips on a torus with 256 holes (rings rerouted at half
capacity) and the slice, a whole torus, is kept.
"""

import json

import pytest

from designer.engine import evaluate
from designer.engine.failures import Failure, largest_slice, reconfigurable_blocks
from designer.io.examples import resolve_design_path
from designer.io.exports import result_json
from designer.io.files import load_design
from designer.io.report import result_table
from designer.model.catalog import default_catalog
from designer.topologies.generators import generate
from tests.failure_monotonicity import healthy_of, violations

S = 8 * 2 ** 30
ICI = 23.44
HEALTHY_TOKENS = 1_081_590


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def _pod(catalog, failure=None):
    design = load_design(resolve_design_path("google-tpu-v4-pod"), catalog)
    if failure is not None:
        design.settings["failures"] = [failure.setting()]
    return design


@pytest.mark.parametrize(("counts", "intact", "shape"), [
    ((4, 4, 4), 64, (4, 4, 4)),
    ((4, 4, 4), 63, (3, 4, 4)),  # 48 blocks: 12 × 16 × 16 of 4 × 4 × 4 blocks
    ((4, 4, 4), 20, (2, 3, 3)),  # 18 beats 16 (1 × 4 × 4, 2 × 2 × 4)
    ((4, 4, 4), 1, (1, 1, 1)),
    ((2, 2, 2), 7, (1, 2, 2)),  # 4 of 8 blocks
    ((2, 2, 2), 0, None),
])
def test_largest_slice_of_intact_blocks(counts, intact, shape):
    assert largest_slice(counts, intact) == shape


def test_only_a_torus_of_blocks_joined_by_circuit_switches_is_reconfigurable(catalog):
    blocks = reconfigurable_blocks(_pod(catalog), catalog)
    assert (blocks.group, blocks.block, blocks.counts) == ("block", (4, 4, 4), (4, 4, 4))
    for name in ("tesla-dojo-exapod", "nvidia-superpod-h100-4su"):  # a mesh wired directly, a fat tree
        assert reconfigurable_blocks(load_design(resolve_design_path(name), catalog), catalog) is None
    dojo = load_design(resolve_design_path("tesla-dojo-exapod"), catalog)
    dojo.settings["failures"] = [Failure("chip0-0", copies=1).setting()]
    d = evaluate(dojo, catalog).degraded
    assert d.placement is None and d.accelerators == 2999  # in place, one chip fewer


def test_one_failed_tpu_host_moves_the_job_to_a_slice_of_intact_cubes(catalog):
    result = evaluate(_pod(catalog, Failure("host0", copies=1)), catalog)
    d = result.degraded
    assert d.placement == ("job moved to a 12 × 16 × 16 slice of 48 intact 4 × 4 × 4 blocks (3,072 chips), its "
                           "torus closed again through the circuit switches: 540,806 tokens/s against 341,359 "
                           "tokens/s in place around 4 missing chips")
    assert d.accelerators == 3072 and d.cut_off == 4
    assert (d.plan.tp, d.plan.pp, d.plan.dp, d.plan.mb) == (4, 1, 768, 1)
    assert d.why == "the healthy plan with 256 data-parallel replicas fewer"
    assert d.figure("Scale-up domain bisection").degraded == pytest.approx(2 * 3072 / 16 * ICI * 2, rel=1e-5)
    allreduce = 8.4e-6 + 2 * 41 * 10e-6 + S * 2 * (1 - 1 / 3072) / (2 * ICI * 0.795 * 1e9)
    assert d.figure("allreduce 8 GiB time").degraded == pytest.approx(allreduce, rel=1e-5)
    tokens = d.figure("Tokens per second")
    assert tokens.healthy == HEALTHY_TOKENS
    assert tokens.degraded == pytest.approx(HEALTHY_TOKENS / 2, rel=0.01) and tokens.degraded < tokens.healthy
    assert d.figure("Training step time").degraded == pytest.approx(2 * 3.8779, rel=0.01)
    # The CLI table and the JSON say it.
    assert f"  {d.placement}\n" in result_table(result)
    assert json.loads(result_json(result))["degraded"]["placement"] == d.placement


def test_a_failed_whole_cube_moves_the_job_too_and_no_failure_helps(catalog):
    d = evaluate(_pod(catalog, Failure("block", copies=1)), catalog).degraded
    assert d.placement.startswith("job moved to a 12 × 16 × 16 slice of 48 intact 4 × 4 × 4 blocks (3,072 chips)")
    assert d.placement.endswith("in place around 64 missing chips")
    healthy = healthy_of(_pod(catalog), catalog)
    for failure in (Failure("host0", copies=1), Failure("block", copies=1), Failure("chip0-0-0", copies=1)):
        assert violations(healthy, catalog, failure) == [], failure


def test_a_failure_outside_the_cubes_runs_in_place(catalog):
    d = evaluate(_pod(catalog, Failure("ocs0-0")), catalog).degraded
    assert d.placement.startswith("runs in place on the degraded torus (1,081,480 tokens/s)")
    assert d.placement.endswith(": the failure reaches what every block shares, no slice avoids it")


def test_the_blast_radius_of_a_tpu_host_stays_its_own_chips(catalog):
    from designer.engine.failures import blast_radius

    design = _pod(catalog)
    assert blast_radius(design, "host0").text() == "4 accelerators cut off, 0 slowed"
    assert blast_radius(design, "block").text() == "64 accelerators cut off, 0 slowed"


def _small(catalog, failure: Failure):
    design = generate("torus", catalog, dims="8x8x8", block="4x4x4")
    healthy = evaluate(design, catalog).training
    design.settings["failures"] = [failure.setting()]
    return healthy, evaluate(design, catalog).degraded


def test_a_small_torus_keeps_the_job_in_place_where_that_is_faster(catalog):
    healthy, d = _small(catalog, Failure("host0", copies=1))
    assert (healthy.plan.tp, healthy.plan.dp, healthy.microbatches) == (4, 128, 8)
    assert d.accelerators == 508 and (d.plan.tp, d.plan.dp) == (4, 127)
    in_place = d.figure("Tokens per second").degraded
    assert in_place <= healthy.tokens_per_s * 8 / 9
    slice_tokens = healthy.tokens_per_s * 8 / 16
    assert d.placement.startswith(f"runs in place around 4 missing chips ({in_place:,.0f} tokens/s): faster than "
                                  "on a 4 × 8 × 8 slice of 4 intact 4 × 4 × 4 blocks (256 chips), ")
    shown = float(d.placement.rsplit(", ", 1)[1].removesuffix(" tokens/s").replace(",", ""))
    assert shown == pytest.approx(slice_tokens, rel=0.01)


def test_a_small_torus_with_half_its_blocks_failed_moves_to_the_slice(catalog):
    healthy, d = _small(catalog, Failure("block", copies=4))
    assert d.placement.startswith("job moved to a 4 × 8 × 8 slice of 4 intact 4 × 4 × 4 blocks (256 chips)")
    assert d.accelerators == 256 and (d.plan.tp, d.plan.dp) == (4, 64)
    assert d.figure("Tokens per second").degraded == pytest.approx(healthy.tokens_per_s / 2, rel=0.01)
