"""Each plan dimension and overlap switch moves memory and time the right way, by amounts worked out
by hand from the model's formulas (docs/calibration.md, "Training step")."""

import json
import math

import pytest

from designer.engine import calibration as cal
from designer.engine import training, workloads
from designer.engine.network import build_fabric
from designer.model.catalog import default_catalog
from designer.model.errors import InputError
from designer.topologies import generate

REL = 1e-3
GIB = 2 ** 30  # the engine counts memory in GiB (calibration.GIB)


@pytest.fixture(scope="module")
def fabric():
    """32 DGX H100 (256 GPUs) on a rail-optimized fat tree."""
    return build_fabric(generate("rail-fat-tree", default_catalog(), nodes=32), default_catalog())


def run(fabric, model, overlap=None, **plan):
    model = workloads.preset(model) if isinstance(model, str) else model
    chosen = training.validate_plan(fabric, model, plan)
    return training.evaluate_plan(fabric, model, chosen, overlap=training.overlap_of(overlap)), chosen, model


def per_microbatch(r) -> float:
    """Time of one micro-batch on one stage: compute plus the exposed TP / CP / EP time."""
    return (r["compute_s"] + r["exposed_tp_s"] + r["exposed_cp_s"] + r["exposed_ep_s"]) / r["microbatches"]


def seconds(timing) -> float:
    return float(timing.time[0]) if timing is not None else 0.0


# -- interleaved pipeline -----------------------------------------------------------------------

def test_virtual_stages_divide_the_bubble_and_multiply_the_transfers(fabric):
    base = dict(tp=8, pp=4, mb=1, sp=1, recompute="full")
    one, _, _ = run(fabric, "llama2-70b", overlap={"pp": "none"}, vp=1, **base)
    two, _, _ = run(fabric, "llama2-70b", overlap={"pp": "none"}, vp=2, **base)
    t_mb = per_microbatch(one)
    assert per_microbatch(two) == pytest.approx(t_mb, rel=REL)
    # bubble = (pp − 1) × (t_mb / vp + 2 × p2p): halving t_mb / vp saves 3 × t_mb / 2.
    assert one["bubble_s"] - two["bubble_s"] == pytest.approx(3 * t_mb / 2, rel=REL)
    # 2 × m × vp transfers: twice as many with vp = 2.
    assert two["exposed_pp_s"] == pytest.approx(2 * one["exposed_pp_s"], rel=REL)
    # The first stage keeps (1 + (pp − 1) / (pp × vp)) times the micro-batches in flight: 3/8 more.
    act_one, act_two = one["memory_per_gpu_gib"]["activations"], two["memory_per_gpu_gib"]["activations"]
    layers, in_flight = math.ceil(80 / 4), min(4, one["microbatches"])
    tokens, h = 4096, 8192
    layer_input = tokens * cal.FULL_RECOMPUTE_BYTES_PER_H * h / 8  # full recompute keeps the layer input, SP-split
    assert act_two - act_one == pytest.approx(layers * in_flight * layer_input * (3 / 8) / GIB, rel=REL)


def test_pipeline_overlap_hides_transfers_but_not_the_fill(fabric):
    base = dict(tp=8, pp=4, vp=2, mb=1, sp=1, recompute="full")
    hidden, _, _ = run(fabric, "llama2-70b", overlap={"pp": "full"}, **base)
    shown, _, _ = run(fabric, "llama2-70b", overlap={"pp": "none"}, **base)
    assert hidden["exposed_pp_s"] == 0 and shown["exposed_pp_s"] > 0
    assert hidden["bubble_s"] == pytest.approx(shown["bubble_s"], rel=REL)
    assert shown["step_time_s"] - hidden["step_time_s"] == pytest.approx(shown["exposed_pp_s"], rel=REL)


# -- ZeRO ------------------------------------------------------------------------------------------

def test_zero_stages_split_optimizer_gradients_and_weights_over_dp(fabric):
    base = dict(tp=8, pp=4, mb=1, sp=1, recompute="full")
    stages = {z: run(fabric, "llama2-70b", zero=z, **base)[0]["memory_per_gpu_gib"] for z in range(4)}
    dp = 256 // 32
    assert stages[1]["optimizer"] == pytest.approx(stages[0]["optimizer"] / dp, rel=REL)
    assert stages[1]["gradients"] == pytest.approx(stages[0]["gradients"], rel=REL)
    assert stages[2]["gradients"] == pytest.approx(stages[0]["gradients"] / dp, rel=REL)
    # ZeRO-3 keeps 1/dp of the weights plus two whole layers (the one gathered, the next prefetched).
    model = workloads.preset("llama2-70b")
    attention, dense, _ = workloads.layer_parameters(model)
    two_layers = 2 * cal.WEIGHT_BYTES * (attention + dense) / 8 / GIB
    embedding_share = 2 * cal.WEIGHT_BYTES * model["vocab"] * model["hidden"] / 8 / 20 / GIB
    assert stages[3]["weights"] == pytest.approx(stages[0]["weights"] / dp + two_layers + embedding_share, rel=REL)


def test_zero_traffic_per_stage(fabric):
    """Overlap off: ZeRO-1 pays one reduce-scatter and one all-gather per step, ZeRO-2 a
    reduce-scatter per micro-batch, ZeRO-3 two all-gathers and a reduce-scatter per micro-batch and
    layer, each of one layer's share of the stage's parameters."""
    base = dict(tp=8, pp=4, mb=1, sp=1, recompute="full")
    r = {z: run(fabric, "llama2-70b", overlap={"dp": "none"}, zero=z, **base) for z in range(4)}
    one, plan, model = r[1]
    comms = training._Comms(fabric)
    dense, _ = training._parameters_per_gpu(training._Shape(model), plan)
    size = cal.GRADIENT_BYTES * dense
    rs = seconds(comms.best("reduce-scatter", 8, size, 8))
    ag = seconds(comms.best("allgather", 8, size, 8))
    ar = seconds(comms.best("allreduce", 8, size, 8))
    m = one["microbatches"]
    assert r[0][0]["exposed_dp_s"] == pytest.approx(ar, rel=REL)
    assert one["exposed_dp_s"] == pytest.approx(rs + ag, rel=REL)
    assert r[2][0]["exposed_dp_s"] == pytest.approx(m * rs + ag, rel=REL)
    layers = 80 // 4
    ag_layer = seconds(comms.best("allgather", 8, size / layers, 8))
    rs_layer = seconds(comms.best("reduce-scatter", 8, size / layers, 8))
    assert r[3][0]["exposed_dp_s"] == pytest.approx(m * layers * (2 * ag_layer + rs_layer), rel=REL)


def test_dp_overlap_hides_reduce_scatter_under_backward_and_all_gather_under_forward(fabric):
    base = dict(tp=8, pp=4, mb=1, sp=1, recompute="full", zero=1)
    hidden, plan, model = run(fabric, "llama2-70b", overlap={"dp": "full"}, **base)
    shown, _, _ = run(fabric, "llama2-70b", overlap={"dp": "none"}, **base)
    comms = training._Comms(fabric)
    dense, _ = training._parameters_per_gpu(training._Shape(model), plan)
    rs = seconds(comms.best("reduce-scatter", 8, cal.GRADIENT_BYTES * dense, 8))
    ag = seconds(comms.best("allgather", 8, cal.GRADIENT_BYTES * dense, 8))
    t_mb = hidden["compute_s"] / hidden["microbatches"]  # full recompute: 4 passes, 1 forward, 3 backward
    assert shown["exposed_dp_s"] == pytest.approx(rs + ag, rel=REL)
    assert hidden["exposed_dp_s"] == pytest.approx(max(0, rs - 3 * t_mb / 4) + max(0, ag - t_mb / 4), rel=REL)
    assert hidden["exposed_dp_s"] < shown["exposed_dp_s"]


# -- tensor and sequence parallel -------------------------------------------------------------------

def test_sequence_parallel_splits_the_whole_activations_and_swaps_allreduce(fabric):
    base = dict(tp=8, pp=4, mb=1, recompute="none", zero=1)
    off, plan, model = run(fabric, "llama2-70b", overlap={"tp": "none"}, sp=0, **base)
    on, _, _ = run(fabric, "llama2-70b", overlap={"tp": "none"}, sp=1, **base)
    layers, in_flight, tokens, h = 20, min(4, off["microbatches"]), 4096, 8192
    # Llama 2 has no dropout: 8 h bytes per token (two norm inputs, QKV and MLP inputs) stay whole
    # under TP without SP; SP splits them 8 ways.
    saved = (layers * in_flight + 0) * tokens * 8 * h * (1 - 1 / 8) / GIB
    assert off["memory_per_gpu_gib"]["activations"] - on["memory_per_gpu_gib"]["activations"] == pytest.approx(
        saved, rel=REL)
    comms = training._Comms(fabric)
    act = 2.0 * tokens * h
    m = off["microbatches"]
    assert off["exposed_tp_s"] == pytest.approx(m * 4 * layers * seconds(comms.best("allreduce", 8, act, 1)), rel=REL)
    assert on["exposed_tp_s"] == pytest.approx(m * 4 * layers * (seconds(comms.best("reduce-scatter", 8, act, 1))
                                                                 + seconds(comms.best("allgather", 8, act, 1))),
                                               rel=REL)


def test_tp_overlap_none_partial_full(fabric):
    base = dict(tp=8, pp=4, mb=1, sp=1, recompute="full")
    none, _, _ = run(fabric, "llama2-70b", overlap={"tp": "none"}, **base)
    partial, _, _ = run(fabric, "llama2-70b", overlap={"tp": "partial"}, **base)
    full, _, _ = run(fabric, "llama2-70b", overlap={"tp": "full"}, **base)
    assert none["exposed_tp_s"] > 0
    assert partial["exposed_tp_s"] == pytest.approx(none["exposed_tp_s"] * (1 - training.TP_PARTIAL_HIDDEN), rel=REL)
    assert full["exposed_tp_s"] == 0
    assert none["step_time_s"] > partial["step_time_s"] > full["step_time_s"]


# -- context parallel ---------------------------------------------------------------------------

def test_context_parallel_splits_activations_and_passes_kv_around_the_ring(fabric):
    base = dict(tp=8, pp=1, mb=1, sp=1, recompute="full", zero=1)
    one, _, model = run(fabric, "llama3-8b", overlap={"cp": "none"}, cp=1, **base)
    two, _, _ = run(fabric, "llama3-8b", overlap={"cp": "none"}, cp=2, **base)
    # Each rank holds half the tokens of a micro-batch; twice the micro-batches (dp halves).
    assert two["microbatches"] == 2 * one["microbatches"]
    assert two["memory_per_gpu_gib"]["logits"] == pytest.approx(one["memory_per_gpu_gib"]["logits"] / 2, rel=REL)
    # The same work per GPU: min(h, tokens per rank) = 4096 either way, so the same efficiency.
    assert two["compute_s"] == pytest.approx(one["compute_s"], rel=REL)
    # Ring attention, no overlap: (cp − 1) KV passes forward, 2 backward, 1 recomputing, per layer.
    kv = 2 * 4096 * max(1.0, 8 / 8) * 128 * 2.0
    step = seconds(training._Comms(fabric).p2p(kv, 8))
    assert two["exposed_cp_s"] == pytest.approx(two["microbatches"] * 4 * 1 * 32 * step, rel=REL)
    hidden, _, _ = run(fabric, "llama3-8b", overlap={"cp": "full"}, cp=2, **base)
    assert hidden["exposed_cp_s"] < two["exposed_cp_s"]


def test_flash_attention_keeps_no_score_matrix(fabric):
    base = dict(tp=8, pp=4, mb=1, sp=1, recompute="none", zero=1)
    flash, _, _ = run(fabric, "llama2-70b", attention="flash", **base)
    standard, _, _ = run(fabric, "llama2-70b", attention="standard", **base)
    layers, in_flight, tokens, heads, s = 20, min(4, flash["microbatches"]), 4096, 64, 4096
    # Without dropout the scores are the softmax output alone; flash keeps a log-sum-exp per head.
    per_token = (cal.ATTENTION_SCORE_BYTES * heads * s - 4.0 * heads) / 8
    # Stashed micro-batches: no extra layer with recompute none.
    assert standard["memory_per_gpu_gib"]["activations"] - flash["memory_per_gpu_gib"]["activations"] == pytest.approx(
        layers * in_flight * tokens * per_token / GIB, rel=REL)
    # Selective recompute drops the scores of standard attention and recomputes the attention core.
    selective, _, _ = run(fabric, "llama2-70b", **{**base, "recompute": "selective", "attention": "standard"})
    assert selective["memory_per_gpu_gib"]["activations"] < standard["memory_per_gpu_gib"]["activations"]
    assert selective["tflops_per_gpu"] / selective["model_tflops_per_gpu"] > 1


# -- activation bytes of one layer ----------------------------------------------------------------

SMALL_GQA = {"layers": 4, "hidden": 512, "heads": 8, "kv_heads": 2, "ffn": 1408, "vocab": 1000, "seq": 1024,
             "gated_mlp": True, "dropout": False}
SMALL_GPT = {"layers": 4, "hidden": 512, "heads": 8, "ffn": 2048, "vocab": 1000, "seq": 1024}


def layer_activation_bytes(model, **plan) -> float:
    """Activation bytes per token of one layer: one stage, one micro-batch in flight, nothing recomputed."""
    plan = {**training.PLAN_DEFAULTS, "dp": 1, "recompute": "none", "zero": 0, **plan}
    gib = training.memory(model, plan, 1)["activations"]
    return gib * GIB / (model["layers"] * model["seq"])


def test_a_gqa_swiglu_layer_without_dropout_stores_its_own_tensors():
    h, hd, ffn, heads, s = 512, 64, 1408, 8, 1024
    norms, qkv_in, mlp_in = 2 * 2 * h, 2 * h, 2 * h  # bf16 inputs of the two norms, of QKV and of the MLP
    q, kv, out = 2 * heads * hd, 2 * 2 * 2 * hd, 2 * heads * hd  # Q, 2 KV heads of K and V, attention output
    swiglu = 3 * 2 * ffn  # gate, up and their product
    stored = norms + qkv_in + q + kv + out + mlp_in + swiglu
    assert stored == 15104
    lse = 4 * heads
    assert layer_activation_bytes(SMALL_GQA) == pytest.approx(stored + lse, abs=1)
    # Standard attention adds the softmax output only: no mask, no dropped-out copy.
    assert layer_activation_bytes(SMALL_GQA, attention="standard") == pytest.approx(stored + 2 * heads * s, abs=1)
    # TP without SP splits all but the 8 h of norm, QKV and MLP inputs; SP splits those too.
    whole = norms + qkv_in + mlp_in
    assert layer_activation_bytes(SMALL_GQA, tp=4) == pytest.approx(whole + (stored - whole + lse) / 4, abs=1)
    assert layer_activation_bytes(SMALL_GQA, tp=4, sp=1) == pytest.approx((stored + lse) / 4, abs=1)


def test_a_gpt_layer_with_dropout_matches_korthikanti():
    h, heads, s = 512, 8, 1024
    # Korthikanti et al. 2022, eq. 1 and 4: s b h (34 + 5 a s / h) per layer, divided by t with SP;
    # 10 s b h of it stays whole under TP without SP.
    assert layer_activation_bytes(SMALL_GPT, attention="standard") == pytest.approx(34 * h + 5 * heads * s, abs=1)
    assert layer_activation_bytes(SMALL_GPT, attention="standard", tp=4, sp=1) == pytest.approx(
        (34 * h + 5 * heads * s) / 4, abs=1)
    assert layer_activation_bytes(SMALL_GPT, attention="standard", tp=4) == pytest.approx(
        10 * h + (24 * h + 5 * heads * s) / 4, abs=1)
    # The dropout masks after attention and after the MLP are 2 h of the 34 h.
    no_dropout = {**SMALL_GPT, "dropout": False}
    assert layer_activation_bytes(SMALL_GPT) - layer_activation_bytes(no_dropout) == pytest.approx(2 * h, abs=1)
    # A parallel block has one norm (input 2h) whose output (2h) feeds both QKV and the MLP: 4h fewer,
    # all of them among the 10h TP keeps whole without SP.
    parallel = {**SMALL_GPT, "parallel_block": True}
    assert layer_activation_bytes(SMALL_GPT) - layer_activation_bytes(parallel) == pytest.approx(4 * h, abs=1)
    assert layer_activation_bytes(SMALL_GPT, tp=4) - layer_activation_bytes(parallel, tp=4) == pytest.approx(
        4 * h, abs=1)


def test_the_fuller_of_first_and_last_stage_counts_with_at_most_the_steps_micro_batches():
    plan = {**training.PLAN_DEFAULTS, "dp": 1, "recompute": "none", "zero": 0, "pp": 2, "vp": 2}
    per_mb = 2 * 1024 * (15104 + 4 * 8) / GIB  # a stage's two layers of one micro-batch, GiB

    def held(model, m):
        mem = training.memory(model, plan, m)
        return mem["activations"], mem["logits"]

    # Interleaved, m = 8: the first stage holds pp + (pp − 1) / vp = 2.5 micro-batches, the last
    # 1.5 and 4 vocab bytes per token of logits (4 MB), less than the first: no logits counted.
    assert held(SMALL_GQA, 8) == (pytest.approx(2.5 * per_mb, rel=REL), 0)
    # m = pp: every micro-batch runs forward before the first backward, so 2, not 2.5.
    assert held(SMALL_GQA, 2) == (pytest.approx(2 * per_mb, rel=REL), 0)
    # A vocabulary of 100,000 makes the last stage the fuller one (410 MB of logits).
    logits = 4 * 1024 * 100_000 / GIB
    assert held({**SMALL_GQA, "vocab": 100_000}, 8) == (pytest.approx(1.5 * per_mb, rel=REL),
                                                        pytest.approx(logits, rel=REL))


# -- experts ------------------------------------------------------------------------------------

def test_expert_parallel_splits_experts_and_adds_all_to_alls(fabric):
    base = dict(tp=1, pp=4, mb=1, sp=0, recompute="full", zero=1)
    one, plan, model = run(fabric, "mixtral-8x7b", overlap={"ep": "none"}, ep=1, **base)
    eight, _, _ = run(fabric, "mixtral-8x7b", overlap={"ep": "none"}, ep=8, **base)
    _, _, moe = workloads.layer_parameters(model)
    expert_weights = cal.WEIGHT_BYTES * 32 * moe / 4 / GIB
    assert one["memory_per_gpu_gib"]["weights"] - eight["memory_per_gpu_gib"]["weights"] == pytest.approx(
        expert_weights * (1 - 1 / 8), rel=REL)
    assert one["exposed_ep_s"] == 0
    # Two all-to-alls per MoE layer forward, two backward, two more recomputing: 6 per layer.
    tokens = 32768
    a2a = 2.0 * tokens * 2 * 4096
    t = seconds(training._Comms(fabric).best("alltoall", 8, a2a, 1))
    assert eight["exposed_ep_s"] == pytest.approx(eight["microbatches"] * 6 * 8 * t, rel=REL)
    hidden, _, _ = run(fabric, "mixtral-8x7b", overlap={"ep": "full"}, ep=8, **base)
    assert hidden["exposed_ep_s"] < eight["exposed_ep_s"]


def test_micro_batch_and_full_recompute(fabric):
    base = dict(tp=8, pp=4, sp=1, zero=1)
    mb1, _, _ = run(fabric, "llama2-70b", mb=1, recompute="full", **base)
    mb2, _, _ = run(fabric, "llama2-70b", mb=2, recompute="full", **base)
    assert mb2["microbatches"] * 2 == mb1["microbatches"]
    assert mb2["memory_per_gpu_gib"]["logits"] == pytest.approx(2 * mb1["memory_per_gpu_gib"]["logits"], rel=REL)
    none, _, model = run(fabric, "llama2-70b", mb=1, recompute="none", **base)
    shape = training._Shape(model)
    layers = shape.dense_fwd + shape.core_fwd
    # Full recompute: the layers' forward once more; the logits are not recomputed.
    assert mb1["compute_s"] / none["compute_s"] == pytest.approx(
        (4 * layers + 3 * shape.logits_fwd) / (3 * layers + 3 * shape.logits_fwd), rel=REL)


# -- plans refused -------------------------------------------------------------------------------

@pytest.mark.parametrize("plan,words", [
    ({"tp": 8, "vp": 2}, "vp=2 interleaves"),
    ({"tp": 8, "ep": 2}, "has none"),
    ({"tp": 8, "cp": 3}, "cp=3"),
    ({"tp": 8, "pp": 32, "vp": 4}, "virtual stages are more than"),
])
def test_plans_that_cannot_be_refused_by_setting(fabric, plan, words):
    with pytest.raises(training.PlanError, match=words):
        training.validate_plan(fabric, workloads.preset("llama2-70b"), plan)


def test_auto_searches_the_new_dimensions(fabric):
    long = training.auto_plan(fabric, workloads.preset("llama3-405b-128k"))
    assert long["plan"]["cp"] > 1  # 128K-token sequences do not fit one per GPU
    deepseek = training.auto_plan(fabric, workloads.preset("deepseek-v3"))
    assert deepseek["plan"]["ep"] > 1  # 671B of experts do not fit unsplit
    # Nothing the search tried beats what it returns: a few neighbours of the answer are no faster.
    model = workloads.preset("deepseek-v3")
    for change in ({"ep": deepseek["plan"]["ep"] // 2}, {"mb": 1}, {"recompute": "full"}, {"zero": 3}):
        other = training.evaluate_plan(fabric, model, {**deepseek["plan"], **change})
        assert not other["fits"] or other["step_time_s"] >= deepseek["step_time_s"] * (1 - 1e-6)


# -- presets and workload files ------------------------------------------------------------------

@pytest.mark.parametrize("name,total,active", [
    ("llama3-8b", 8.0e9, None), ("llama3-70b", 70.6e9, None), ("llama3-405b", 405e9, None),
    ("mixtral-8x7b", 46.7e9, 12.9e9), ("deepseek-v3", 671e9, 37e9), ("gpt3-175b", 175e9, None),
    ("palm-540b", 540e9, None)])
def test_presets_have_their_published_sizes(name, total, active):
    model = workloads.preset(name)
    assert workloads.parameters(model) == pytest.approx(total, rel=0.01)
    if active:  # DeepSeek-V3's attention is approximated (see the preset): within 10 %
        assert workloads.active_parameters(model) == pytest.approx(active, rel=0.1)


@pytest.mark.parametrize("fields,path", [
    ({"experts": 8}, "$.experts"),
    ({"experts": 8, "top_k": 9}, "$.top_k"),
    ({"top_k": 2}, "$.top_k"),
    ({"moe_ffn": 1024}, "$.moe_ffn"),
    ({"kv_heads": 5}, "$.kv_heads"),
    ({"parameters": 9e12}, "$.parameters"),
    ({"experts": 8, "top_k": 2, "dense_layers": 12}, "$.dense_layers"),
    ({"expert_count": 8}, "$"),
])
def test_workload_file_refuses_a_bad_field_by_name(tmp_path, fields, path):
    from designer.io.files import load_workload

    file = tmp_path / "m.json"
    file.write_text(json.dumps({"layers": 12, "hidden": 768, "heads": 12, **fields}))
    with pytest.raises(InputError) as info:
        load_workload(file)
    message = str(info.value)
    assert f"{path}:" in message or (path == "$" and "expert_count" in message), message


def test_workload_file_states_every_field(tmp_path):
    from designer.io.files import load_workload

    file = tmp_path / "moe.json"
    file.write_text(json.dumps({"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 4, "head_dim": 128,
                                "ffn": 8192, "vocab": 50000, "seq": 4096, "global_batch": 256, "tokens": 1e12,
                                "gated_mlp": True, "tied_embeddings": False, "experts": 64, "top_k": 6,
                                "shared_experts": 2, "moe_ffn": 1024, "dense_layers": 1, "precision": "bf16",
                                "dropout": False}))
    model = load_workload(file)
    assert workloads.moe_layers(model) == 15 and model["shared_experts"] == 2
    assert workloads.active_parameters(model) < workloads.parameters(model)


def test_design_setting_refuses_a_bad_model_field_by_json_path():
    from designer.io.files import DesignFileError, check_workload_setting

    setting = {"training": {"model": {"preset": "mixtral-8x7b", "top_k": 20}}}
    with pytest.raises(DesignFileError, match=r"\$\.settings\.workload\.training\.model\.top_k"):
        check_workload_setting(setting, "d.cluster.json", "$.settings.workload", DesignFileError)


# -- off-chip weight memory ---------------------------------------------------------------------

def test_cerebras_weight_streaming_is_bound_by_the_stream_or_the_wafer():
    from designer.engine import streaming

    model = workloads.preset("megatron-1.7b")
    r = streaming.weight_streaming(streaming.MODELS["cs-2"], model, 64, 62500, 40.0, 0.5)
    m = r["microbatches"]
    stream = 2 * cal.WEIGHT_BYTES * workloads.parameters(model) / streaming.CS2_STREAM_BYTES_PER_S
    assert r["exposed_memory_s"] == pytest.approx(m * max(0.0, stream - r["compute_s"] / m), rel=REL)
    assert r["step_time_s"] == pytest.approx(max(r["compute_s"], m * stream), rel=REL)
    assert r["plan"]["dp"] == 64 and r["memory_per_gpu_gib"]["total"] <= 40.0 * cal.MEMORY_USABLE_FRACTION


def test_dojo_counts_its_share_of_the_dip_hbm():
    from designer.engine import streaming

    dojo = streaming.MODELS["dojo-d1"]
    assert dojo.offchip_gib == pytest.approx(20 * 32 / 150)  # 20 DIPs of 32 GiB per tray of 150 D1
    assert dojo.offchip_bytes_per_s == pytest.approx(20 * 800e9 / 150)


def test_cerebras_refuses_a_fixed_plan_by_setting():
    from designer.engine import evaluate
    from designer.engine.workloads import WorkloadError
    from designer.io.examples import resolve_design_path
    from designer.io.files import load_design

    design = load_design(resolve_design_path("cerebras-cg1"))
    with pytest.raises(WorkloadError, match="weight streaming") as info:
        evaluate(design, workload={"training": {"plan": {"tp": 1, "pp": 2}}})
    assert info.value.setting == "training.plan"
    training_section = evaluate(design).training
    assert training_section.timed and training_section.overlap is None and "MemoryX" in training_section.memory_model


# -- parallel attention + MLP block -------------------------------------------------------------

@pytest.mark.parametrize("sp, recompute, reductions", [(0, "selective", 2), (1, "selective", 2), (0, "full", 3)])
def test_a_parallel_block_makes_one_tp_reduction_per_pass(fabric, sp, recompute, reductions):
    """PaLM's y = x + Attn(LN(x)) + MLP(LN(x)) sums both output projections before one reduction:
    per layer and micro-batch, one allreduce (or reduce-scatter + all-gather under SP) forward, one
    backward, one more for a recomputed forward; the serial layer makes twice as many."""
    serial = {**workloads.preset("gpt3-175b"), "parallel_block": False}
    parallel = {**serial, "parallel_block": True}
    plan = dict(tp=8, pp=8, sp=sp, mb=1, recompute=recompute)
    one, chosen, _ = run(fabric, serial, **plan)
    two, _, _ = run(fabric, parallel, **plan)
    comms = training._Comms(fabric)
    act_bytes = 2.0 * 1 * serial["seq"] * serial["hidden"]
    if sp:
        per_call = seconds(comms.best("reduce-scatter", 8, act_bytes, 1)) + seconds(comms.best("allgather", 8,
                                                                                               act_bytes, 1))
    else:
        per_call = seconds(comms.best("allreduce", 8, act_bytes, 1))
    layers = math.ceil(serial["layers"] / 8)
    m = two["microbatches"]
    assert two["exposed_tp_s"] == pytest.approx(m * reductions * layers * per_call, rel=REL)
    assert one["exposed_tp_s"] == pytest.approx(2 * two["exposed_tp_s"], rel=REL)
    # The same FLOPs and parameters; fewer stored activations (one norm: see the per-layer bytes above).
    assert two["compute_s"] == pytest.approx(one["compute_s"], rel=REL)
    for part in ("weights", "gradients", "optimizer", "logits", "overhead"):
        assert two["memory_per_gpu_gib"][part] == one["memory_per_gpu_gib"][part]
    assert two["memory_per_gpu_gib"]["activations"] < one["memory_per_gpu_gib"]["activations"]


def test_parallel_block_is_a_model_field(tmp_path):
    from designer.io import schemas
    assert schemas.MODEL["properties"]["parallel_block"] == {"type": "boolean"}
    assert workloads.preset("palm-540b")["parallel_block"] is True
