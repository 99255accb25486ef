"""ZeRO-3 / FSDP step times worked out by hand: one layer's parameters gathered before its forward
and again before its backward, its gradients reduce-scattered after, each a collective of its own,
hidden under the neighbouring layer's compute up to that compute (docs/training.md, "Time per
step"). The collective times are NCCL rings from the calibration constants (docs/calibration.md)."""

import pytest

from designer.engine import training
from designer.engine.network import build_fabric
from designer.model.catalog import default_catalog
from designer.topologies import generate

REL = 1e-3
US = 1e-6

# A 4-layer GPT block: h 4096, 32 heads, FFN 16384, vocabulary 32,000 (tied), 2,048-token sequences.
MODEL = {"name": "four-layers", "layers": 4, "hidden": 4096, "heads": 32, "ffn": 16384, "vocab": 32000,
         "seq": 2048, "global_batch": 8}
LAYER_PARAMETERS = 4 * 4096 ** 2 + 4 * 4096 + 2 * 4096 * 16384  # attention with its norms, then the MLP
EMBEDDING = 32000 * 4096
# Forward FLOPs per token: the layers' weights, the attention core (4 · s · h per layer), the logits.
LAYERS_FWD = 2 * 4 * LAYER_PARAMETERS + 4 * 2048 * 4096 * 4
LOGITS_FWD = 2 * 4096 * 32000
# A100: 312 TFLOP/s BF16 at the matmul efficiency of a 4096-wide GEMM, 0.62 × 4096 / (4096 + 870).
EFFECTIVE_FLOPS = 312e12 * 0.62 * 4096 / (4096 + 870)


def compute_per_microbatch(tp: int) -> float:
    """Seconds of one 2,048-token micro-batch, no recomputation: 3 passes of the layers and the logits."""
    return 3 * (LAYERS_FWD + LOGITS_FWD) * 2048 / tp / EFFECTIVE_FLOPS


def evaluate(fabric, overlap: str, **plan):
    chosen = training.validate_plan(fabric, MODEL, {"pp": 1, "mb": 1, "zero": 3, "recompute": "none", **plan})
    return training.evaluate_plan(fabric, MODEL, chosen, overlap=training.overlap_of({"dp": overlap}))


@pytest.fixture(scope="module")
def one_dgx():
    catalog = default_catalog()
    return build_fabric(generate("server", catalog, platform="dgx-a100"), catalog)


@pytest.fixture(scope="module")
def two_dgx():
    catalog = default_catalog()
    return build_fabric(generate("rail-fat-tree", catalog, platform="dgx-a100", switch="qm8700", nodes=2), catalog)


def test_compute_bound_zero3_exposes_only_the_first_gathers_and_the_last_reduce_scatter(one_dgx):
    """dp 8 inside one DGX A100: a layer's gather over NVLink takes less than the layer's compute."""
    size = 2 * (4 * LAYER_PARAMETERS + EMBEDDING) / 4  # bytes of one layer's share of the parameters
    # Ring over 8 GPUs on NVLink3, Simple: 8.4 µs + 7 steps × 10 µs, 7/8 of the bytes at 0.772 × 300 GB/s.
    gather = 8.4 * US + 7 * 10 * US + size * 7 / 8 / (0.772 * 300e9)
    t_mb = compute_per_microbatch(tp=1)
    layer_forward, layer_backward = t_mb / 3 / 4, t_mb * 2 / 3 / 4
    assert gather < layer_forward and 2 * gather < layer_backward  # every gather but the first hides

    hidden = evaluate(one_dgx, "full", tp=1)
    assert hidden["compute_s"] == pytest.approx(t_mb, rel=REL)
    assert hidden["exposed_dp_s"] == pytest.approx(3 * gather, rel=REL)  # first forward and backward gathers, last RS
    assert hidden["step_time_s"] == pytest.approx(t_mb + 3 * gather, rel=REL)

    shown = evaluate(one_dgx, "none", tp=1)  # 4 layers × (2 gathers + 1 reduce-scatter), nothing hidden
    assert shown["exposed_dp_s"] == pytest.approx(4 * 3 * gather, rel=REL)
    assert shown["step_time_s"] == pytest.approx(t_mb + 12 * gather, rel=REL)


def test_comm_bound_zero3_exposes_what_the_compute_cannot_hide(two_dgx):
    """tp 8 in each of two DGX A100, dp 2 across them: a layer's gather goes over one 200 Gb/s HDR
    NIC per GPU and takes longer than the layer's compute."""
    size = 2 * (4 * LAYER_PARAMETERS + EMBEDDING) / 8 / 4  # one layer's share of a TP rank's parameters
    # Ring of 2 ranks, one network step: 8.4 µs + 14 µs, half the bytes through the NIC's 23.5 GB/s.
    gather = 8.4 * US + 14 * US + size / 2 / 23.5e9
    t_mb = compute_per_microbatch(tp=8)
    f, b = t_mb / 3 / 4, t_mb * 2 / 3 / 4
    assert gather > f and 2 * gather > b
    m = 8 // 2  # global batch 8 over dp 2, one sequence per micro-batch

    hidden = evaluate(two_dgx, "full", tp=8)
    # Per micro-batch: all 4 layers' traffic, less the compute of the 3 layers it runs under.
    per_mb = 4 * 3 * gather - 3 * (f + b)
    assert hidden["compute_s"] == pytest.approx(m * t_mb, rel=REL)
    assert hidden["exposed_dp_s"] == pytest.approx(m * per_mb, rel=REL)
    # So a micro-batch takes its communication plus one layer's compute (and its TP allreduces).
    assert hidden["step_time_s"] - hidden["exposed_tp_s"] == pytest.approx(m * (4 * 3 * gather + f + b), rel=REL)

    shown = evaluate(two_dgx, "none", tp=8)
    assert shown["exposed_dp_s"] == pytest.approx(m * 4 * 3 * gather, rel=REL)


def test_each_layer_pays_its_own_collective_latency(two_dgx):
    """The same bytes in 4 collectives cost 3 more latencies than in one: 3 × (8.4 + 14) µs for
    each of the 3 collectives of every micro-batch, with nothing hidden."""
    four = evaluate(two_dgx, "none", tp=8)["exposed_dp_s"]
    one_layer = {**MODEL, "layers": 1}
    chosen = training.validate_plan(two_dgx, one_layer, {"tp": 8, "pp": 1, "mb": 1, "zero": 3, "recompute": "none"})
    single = training.evaluate_plan(two_dgx, one_layer, chosen, overlap=training.overlap_of({"dp": "none"}))
    bytes_time = 3 * 4 * 2 * (3 * LAYER_PARAMETERS) / 8 / 2 / 23.5e9  # m × 3 collectives × 3 layers' bytes
    assert four - single["exposed_dp_s"] == pytest.approx(bytes_time + 4 * 3 * 3 * (8.4 + 14) * US, rel=REL)


def test_link_load_of_zero3_is_one_layers_collective_over_its_time(two_dgx):
    """The data-parallel phase's link load is one layer's reduce-scatter over that collective's
    time: each GPU's HDR NIC carries half the layer's bytes at 25 GB/s raw."""
    _, utilization = training.training(two_dgx, {"model": MODEL, "plan": {"tp": 8, "pp": 1, "mb": 1, "zero": 3,
                                                                           "recompute": "none"}})
    phase = next(p for p in utilization["phases"] if p.phase == "training dp")
    size = 2 * (4 * LAYER_PARAMETERS + EMBEDDING) / 8 / 4
    seconds = 8.4 * US + 14 * US + size / 2 / 23.5e9
    nic_load = max(load.utilization for load in phase.links if load.tier == "scale-out")
    assert nic_load == pytest.approx(size / 2 / 25e9 / seconds, rel=REL)
