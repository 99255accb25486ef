"""One LLM training step with Megatron-style 3D parallelism on the design's fabric.

Rank order is Megatron's: tensor parallel fastest, then data parallel, then pipeline stages, so a
TP group is `tp` neighbouring accelerators (inside one scale-up domain when tp fits), a DP group is
every `tp`-th accelerator, and pipeline neighbours are `tp × dp` apart. Communication times come
from `collectives.py` on the same fabric, with every group of a kind running at once (their
traffic shares the cuts). Formulas and the measurements behind the constants (`calibration.py`):
docs/calibration.md.
"""

from __future__ import annotations

import math

from designer.engine import calibration as cal
from designer.engine import collectives as coll
from designer.engine import streaming
from designer.engine import workloads
from designer.engine.network import Fabric
from designer.engine.workloads import WorkloadError
from designer.engine.result import rounded
from designer.engine.sections import LinkLoad, LinkPhase, read_only

RECOMPUTE = ("none", "selective", "full")
ATTENTION = ("flash", "standard")

# What each plan key is when a plan leaves it out.
PLAN_DEFAULTS = {"tp": 1, "pp": 1, "vp": 1, "cp": 1, "sp": 0, "ep": 1, "mb": 1, "recompute": "selective", "zero": 1,
                 "attention": "flash"}

# Which communication is hidden behind compute (workload setting `training.overlap`), and the
# defaults, each as the stack that defines it ships:
# - tp: none — Megatron-LM's --tp-comm-overlap is off unless asked for; "partial" hides
#   TP_PARTIAL_HIDDEN of it (the bulk overlaps of Transformer Engine's userbuffers without the
#   pipelined GEMM splits), "full" all of it up to the compute it hides behind.
# - dp: full — Megatron-LM's --overlap-grad-reduce / --overlap-param-gather (on in NeMo's and
#   Megatron's published recipes): the gradient reduce-scatter runs under the last micro-batch's
#   backward, the parameter all-gather under the first micro-batch's forward (ZeRO-2: the
#   reduce-scatter every micro-batch; ZeRO-3: layer by layer, `_sharded_exposed`). "none": both
#   exposed.
# - pp: full — Megatron-LM's --overlap-p2p-communication (its default): sends and receives run
#   under the next micro-batch's compute, exposed only while the pipeline fills and drains.
# - cp: full — ring attention (Liu et al. 2023; Megatron-Core's context parallelism) passes the
#   next KV chunk while attending to the current one.
# - ep: none — Megatron-Core's MoE all-to-all is blocking by default; "full" hides it behind the
#   other micro-batch's compute as DeepSeek-V3's DualPipe does (arXiv:2412.19437, section 3.2.1).
OVERLAP_CHOICES = {"tp": ("none", "partial", "full"), "dp": ("none", "full"), "pp": ("none", "full"),
                   "cp": ("none", "full"), "ep": ("none", "full")}
OVERLAP_DEFAULTS = {"tp": "none", "dp": "full", "pp": "full", "cp": "full", "ep": "none"}
TP_PARTIAL_HIDDEN = 0.5
_TP_HIDDEN = {"none": 0.0, "partial": TP_PARTIAL_HIDDEN, "full": 1.0}

# Communication phases and step parts, in the order a step adds them up.
STEP_KEYS = ("compute_s", "exposed_tp_s", "exposed_cp_s", "exposed_ep_s", "exposed_pp_s", "exposed_dp_s",
             "exposed_memory_s", "bubble_s")
_TIMED_KEYS = ("step_time_s", *STEP_KEYS, "tflops_per_gpu", "model_tflops_per_gpu", "mfu", "tokens_per_s", "days")


class PlanError(WorkloadError):
    """A plan that does not fit this design or model."""

    def __init__(self, problem: str):
        super().__init__(problem, "training.plan")


class _Comms:
    """Cached collective times for one fabric (the auto search asks the same questions often)."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.cache: dict = {}

    def best(self, op: str, n: int, size: float, stride: int) -> coll.Timing | None:
        if n < 2 or size <= 0:
            return None
        key = (op, n, int(size), stride)
        hit = self.cache.get(key)
        if hit is None:
            algos = coll.applicable(self.fabric, op, n, stride)
            timings = [coll.time_collective(self.fabric, op, a, n, [size], stride, concurrent=True) for a in algos]
            hit = min(timings, key=lambda t: float(t.time[0]))
            self.cache[key] = hit
        return hit

    def p2p(self, size: float, stride: int) -> coll.Timing | None:
        if size <= 0:
            return None
        key = ("p2p", int(size), stride)
        hit = self.cache.get(key)
        if hit is None:
            hit = coll.time_collective(self.fabric, "broadcast", "ring", 2, [size], stride, concurrent=True)
            self.cache[key] = hit
        return hit


def _seconds(timing: coll.Timing | None) -> float:
    return float(timing.time[0]) if timing is not None else 0.0


def _part_id(fabric: Fabric) -> str:
    return fabric.design.items[fabric.rep].part


def _peak_tflops(fabric: Fabric, precision: str) -> float:
    part = fabric.catalog.get(_part_id(fabric))
    peaks = part.peak_tflops if part else {}
    key = "fp8" if precision == "fp8" and "fp8" in peaks else "bf16"
    return float(peaks.get(key) or peaks.get("bf16") or peaks.get("fp16") or 0.0)


def _memory_gib(fabric: Fabric) -> float:
    part = fabric.catalog.get(_part_id(fabric))
    return part.number("memory_gib") if part else 0.0


def _memory_budget(fabric: Fabric) -> tuple[float, float]:
    """(GiB an accelerator has for training, counting off-chip weight memory; GiB the runtime keeps)."""
    streamed = streaming.model_for(_part_id(fabric))
    if streamed is None:
        return _memory_gib(fabric), cal.MEMORY_OVERHEAD_GIB
    return _memory_gib(fabric) + streamed.offchip_gib, streamed.overhead_gib


class _Shape:
    """What a model's figures imply per token and per layer, computed once per evaluation."""

    def __init__(self, model: dict):
        self.model = model
        h, L, V = model["hidden"], model["layers"], model["vocab"]
        self.h, self.L, self.V, self.s = h, L, V, model["seq"]
        self.heads, self.kv, self.hd = model["heads"], model.get("kv_heads", model["heads"]), workloads.head_dim(model)
        self.attention, self.dense_mlp, self.moe_mlp = workloads.layer_parameters(model)
        self.L_moe = workloads.moe_layers(model)
        self.L_dense = L - self.L_moe
        self.experts, self.top_k = model.get("experts", 0), model.get("top_k", 0)
        self.parallel_block = bool(model.get("parallel_block"))
        self.moe_ffn = model.get("moe_ffn", model["ffn"])
        per_ffn = (3 if model.get("gated_mlp") else 2) * h
        active_moe = per_ffn * self.moe_ffn * (self.top_k + model.get("shared_experts", 0)) if self.experts else 0.0
        self.parameters = workloads.parameters(model)
        # Forward FLOPs per token: the layers' weights outside and inside the experts, the
        # attention core (QKᵀ and AV over the whole sequence) and the logits.
        self.dense_fwd = 2.0 * (L * self.attention + self.L_dense * self.dense_mlp)
        self.expert_fwd = 2.0 * self.L_moe * active_moe
        self.core_fwd = 4.0 * self.s * self.heads * self.hd * L
        self.logits_fwd = 2.0 * h * V
        self.model_flops = 3.0 * (self.dense_fwd + self.expert_fwd + self.core_fwd + self.logits_fwd)
        # Activation bytes per token of one layer (Korthikanti et al. 2022's count, generalised to
        # the model's block): each norm's input (2 × 2h), the QKV input (2h), Q (2 heads·hd), K and
        # V (2 × 2 kv·hd), the attention output that is the projection's input (2 heads·hd), the
        # MLP input (2h), and the MLP's stored tensors: GELU input and output (2 × 2 ffn) or a fused
        # SwiGLU's gate and up (2 × 2 ffn) and product (2 ffn). With dropout (GPT-style blocks) a
        # 1-byte mask after attention and after the MLP; Llama-style blocks have none. Experts add
        # the routed copies of each token. Norm inputs, QKV and MLP inputs and the masks stay whole
        # under TP without sequence parallelism; TP splits the rest. A parallel block has one norm
        # whose output is both the QKV and the MLP input: 4h fewer.
        self.dropout = model.get("dropout", True)
        masks = 2 * h if self.dropout else 0
        gate = 6 if model.get("gated_mlp") else 4
        norms_and_inputs = 4 * h if self.parallel_block else 8 * h
        attention_bytes = 4 * self.heads * self.hd + 4 * self.kv * self.hd
        dense_bytes = norms_and_inputs + attention_bytes + gate * model["ffn"] + masks
        moe_bytes = (norms_and_inputs + attention_bytes + 2 * h * self.top_k
                     + gate * self.moe_ffn * (self.top_k + model.get("shared_experts", 0)) + masks)
        self.layer_bytes = (self.L_dense * dense_bytes + self.L_moe * moe_bytes) / L
        self.whole_bytes = norms_and_inputs + masks


def flops_per_token(model: dict, passes: float) -> float:
    """FLOPs per token: `passes` × forward of the transformer layers + 3 × forward of the logits."""
    shape = _Shape(model)
    return passes * (shape.dense_fwd + shape.expert_fwd + shape.core_fwd) + 3 * shape.logits_fwd


def _parameters_per_gpu(shape: _Shape, plan: dict) -> tuple[float, float]:
    """Parameters one accelerator holds outside the experts (its stage's layers split by TP, plus
    the embedding on the first/last stage) and inside them (split by EP and TP as well)."""
    tp, pp = plan["tp"], plan["pp"]
    dense = (shape.L * shape.attention + shape.L_dense * shape.dense_mlp) / (tp * pp) + shape.V * shape.h / tp
    expert = shape.L_moe * shape.moe_mlp / (tp * pp * plan["ep"])
    return dense, expert


def memory(model: dict, plan: dict, m: int, shape: _Shape | None = None,
           overhead_gib: float = cal.MEMORY_OVERHEAD_GIB) -> dict:
    """GiB per accelerator by part, and their total (see calibration.GIB for the unit)."""
    return {k: rounded(v) for k, v in _memory(model, plan, m, shape or _Shape(model), overhead_gib).items()}


def _memory(model: dict, plan: dict, m: int, shape: _Shape, overhead_gib: float) -> dict:
    tp, pp, vp, dp, cp, mb, zero = plan["tp"], plan["pp"], plan["vp"], plan["dp"], plan["cp"], plan["mb"], plan["zero"]
    dense, expert = _parameters_per_gpu(shape, plan)
    shard, expert_shard = dp * cp, max(1, dp * cp // plan["ep"])

    def held(stage: int) -> float:  # parameters kept whole below ZeRO `stage`, split from it on
        return dense / (shard if zero >= stage else 1) + expert / (expert_shard if zero >= stage else 1)

    weights = cal.WEIGHT_BYTES * held(3)
    if zero >= 3:  # the layer being gathered and the next one, prefetched
        weights += 2 * cal.WEIGHT_BYTES * (dense + expert) / max(1, math.ceil(shape.L / pp))
    grads = cal.GRADIENT_BYTES * held(2)
    optim = cal.OPTIMIZER_BYTES * held(1)
    tokens = mb * shape.s / cp
    h = shape.h
    split = (shape.layer_bytes - shape.whole_bytes) / tp
    whole = shape.whole_bytes / tp if plan["sp"] else shape.whole_bytes
    if plan["attention"] == "standard":
        per_pair = cal.ATTENTION_SCORE_BYTES + (cal.ATTENTION_DROPOUT_BYTES if shape.dropout else 0.0)
        scores = per_pair * shape.heads * (shape.s / cp) / tp  # the s × s score matrices
    else:
        scores = 4.0 * shape.heads / tp  # flash keeps one fp32 log-sum-exp per head
    full_layer = tokens * (whole + split + scores)
    per_layer = {"none": full_layer, "selective": tokens * (whole + split),
                 "full": tokens * cal.FULL_RECOMPUTE_BYTES_PER_H * h / (tp if plan["sp"] else 1)}[plan["recompute"]]
    if plan["attention"] == "flash" and plan["recompute"] == "selective":
        per_layer = full_layer  # nothing left to recompute: flash already keeps no scores
    layers_per_stage = math.ceil(shape.L / pp)
    recomputing = full_layer if plan["recompute"] != "none" else 0.0

    def stage(in_flight: float) -> float:  # a stage holding `in_flight` micro-batches of its layers
        return layers_per_stage * min(m, in_flight) * per_layer + recomputing

    # Micro-batches a stage holds at its peak (Megatron's schedules.py): 1F1B warms the first stage
    # up with pp, the last with none; interleaving warms stage r up with 2 (pp − 1 − r) + (vp − 1) pp
    # chunk passes, plus the one running: pp ± (pp − 1) / vp whole stages on the first and last. Never
    # more than the step's m (with m ≤ pp all of them run forward before the first backward).
    first = stage(pp + (pp - 1) / vp if vp > 1 else pp)
    last = stage(pp - (pp - 1) / vp if vp > 1 else 1)
    logits = 4.0 * tokens * shape.V / tp
    # The first stage holds the most activations, the last also the logits: the fuller of the two.
    activations, logits = (last, logits) if last + logits >= first else (first, 0.0)
    gib = cal.GIB
    out = {"weights": weights / gib, "gradients": grads / gib, "optimizer": optim / gib,
           "activations": activations / gib, "logits": logits / gib, "overhead": overhead_gib}
    out["total"] = sum(out.values())
    return out


def _compute_mb(shape: _Shape, plan: dict, part: str, peak: float, passes: float, extra: float) -> float:
    """Seconds one accelerator computes one micro-batch: the work outside the experts at the
    efficiency of GEMMs min(h, tokens per rank) wide, the experts' at that of GEMMs as wide as the
    tokens one expert gets (or its width, or h)."""
    if not peak:
        return math.inf
    tokens_mb = plan["mb"] * shape.s / plan["cp"]
    share = tokens_mb / (plan["tp"] * plan["pp"])  # of the whole model's per-token work, this accelerator's part
    eff = cal.matmul_efficiency(part, cal.gemm_dim(shape.h, tokens_mb))
    t = (passes * (shape.dense_fwd + shape.core_fwd) + 3 * shape.logits_fwd + extra) * share / (peak * eff)
    if shape.expert_fwd:
        per_expert = tokens_mb * shape.top_k * plan["ep"] / shape.experts
        eff_expert = cal.matmul_efficiency(part, cal.gemm_dim(min(shape.h, shape.moe_ffn), per_expert))
        t += passes * shape.expert_fwd * share / (peak * eff_expert)
    return t


def _sharded_exposed(t_ag: float, t_rs: float, forward: float, backward: float, units: int, hide: bool) -> float:
    """Exposed seconds of one micro-batch's ZeRO-3 / FSDP traffic. The parameters are gathered one
    unit (a layer) at a time, just before its forward and again before its backward, and each
    unit's gradients are reduce-scattered after its backward (ZeRO, Rajbhandari et al. 2020,
    arXiv:1910.02054, sections 5.3 and 7.2.2; PyTorch FSDP, Zhao et al. 2023, arXiv:2304.11277,
    "Communication Optimizations": one all-gather per FSDP unit, prefetched one unit ahead): every
    unit pays its own collective's latency (`t_ag`, `t_rs` are one unit's). Overlapped, a unit's
    gather runs under the previous unit's compute and its reduce-scatter under the next one's, so a
    pass hides at most all but one unit's compute: the first gather of each pass and the last
    reduce-scatter have nothing to run under, and what does not fit under a unit's compute waits."""
    if not hide:
        return units * (2 * t_ag + t_rs)
    f, b = forward / units, backward / units
    return (t_ag + (units - 1) * max(0.0, t_ag - f)
            + t_ag + (units - 1) * max(0.0, t_ag + t_rs - b) + t_rs)


def overlap_of(spec: dict | None) -> dict:
    """The overlap assumptions: the given ones over the defaults."""
    return {**OVERLAP_DEFAULTS, **(spec or {})}


def _not_timed(result: dict) -> dict:
    result["timed"] = False
    for key in _TIMED_KEYS:
        result[key] = None
    return result


def evaluate_plan(fabric: Fabric, model: dict, plan: dict, comms: _Comms | None = None, detail: bool = False,
                  overlap: dict | None = None, shape: _Shape | None = None, mem: dict | None = None,
                  step_only: bool = False) -> dict:
    """The step of one plan, by part, with its memory and throughput. `mem`: its memory, if known
    (unrounded, as `_memory` gives it); `step_only`: the search's question, only `step_time_s`
    (unrounded), or None where the plan does not fit or cannot be timed."""
    comms = comms or _Comms(fabric)
    shape = shape or _Shape(model)
    overlap = overlap or OVERLAP_DEFAULTS
    tp, pp, vp, dp, cp, ep, mb = plan["tp"], plan["pp"], plan["vp"], plan["dp"], plan["cp"], plan["ep"], plan["mb"]
    N = tp * pp * dp * cp  # the accelerators working: all of them, or fewer with the rest idle (`training`)
    B, s, h = model["global_batch"], shape.s, shape.h
    m = math.ceil(B / (dp * mb))
    streamed = streaming.model_for(_part_id(fabric))
    capacity_gib, overhead_gib = _memory_budget(fabric)
    mem = mem or _memory(model, plan, m, shape, overhead_gib)
    capacity = capacity_gib * cal.MEMORY_USABLE_FRACTION
    fits = mem["total"] <= capacity
    if step_only and not fits:
        return {"step_time_s": None}
    if not step_only:
        mem = {k: rounded(v) for k, v in mem.items()}
    result = {"plan": dict(plan), "microbatches": m, "memory_per_gpu_gib": mem,
              "memory_capacity_gib": rounded(capacity_gib), "fits": fits, "why": None}
    if not result["fits"]:
        biggest = max((k for k in mem if k != "total"), key=lambda k: mem[k])
        result["why"] = (f"needs {mem['total']:.1f} GiB per GPU (largest: {biggest} {mem[biggest]:.1f} GiB) but "
                         f"{capacity:.1f} GiB are usable of {capacity_gib:g} GiB")
        return _not_timed(result)
    part = _part_id(fabric)
    peak = _peak_tflops(fabric, model.get("precision", "bf16")) * 1e12
    recompute = plan["recompute"]
    passes = 4.0 if recompute == "full" else 3.0
    extra = shape.core_fwd if recompute == "selective" and plan["attention"] == "standard" else 0.0
    tokens_mb = mb * s / cp  # tokens of one micro-batch on one rank
    eff_dense = cal.matmul_efficiency(part, cal.gemm_dim(h, tokens_mb))
    t_compute_mb = _compute_mb(shape, plan, part, peak, passes, extra)
    per_token = passes * (shape.dense_fwd + shape.expert_fwd + shape.core_fwd) + 3 * shape.logits_fwd + extra
    layers_per_stage = math.ceil(shape.L / pp)
    calls = 4 + (2 if recompute == "full" else 0)  # per layer: 2 forward, 2 backward, 2 more recomputing
    # A parallel block (PaLM, GPT-J, MegaScale) adds the attention and MLP outputs before they are
    # reduced and feeds both from one all-gathered input: one TP reduction per pass, not two.
    tp_calls = calls // 2 if shape.parallel_block else calls
    act_bytes = 2.0 * tokens_mb * h

    # Tensor parallel: an allreduce per call, or a reduce-scatter and an all-gather under SP.
    tp_timing, t_tp_mb = None, 0.0
    if tp > 1:
        if plan["sp"]:
            tp_timing = comms.best("reduce-scatter", tp, act_bytes, 1)
            t_tp_mb = tp_calls * layers_per_stage * (_seconds(tp_timing) + _seconds(comms.best("allgather", tp,
                                                                                                 act_bytes, 1)))
        else:
            tp_timing = comms.best("allreduce", tp, act_bytes, 1)
            t_tp_mb = tp_calls * layers_per_stage * _seconds(tp_timing)
    exposed_tp_mb = t_tp_mb - min(_TP_HIDDEN[overlap["tp"]] * t_tp_mb, t_compute_mb)

    # Context parallel: ring attention passes each rank's K and V chunk around the cp ring,
    # cp − 1 steps forward and twice as many bytes backward, each step under one chunk's attention.
    cp_timing, exposed_cp_mb, kv_bytes = None, 0.0, 0.0
    if cp > 1:
        kv_bytes = 2 * tokens_mb * max(1.0, shape.kv / tp) * shape.hd * 2.0
        cp_timing = comms.p2p(kv_bytes, tp)
        steps = (3 + (1 if recompute == "full" else 0)) * (cp - 1) * layers_per_stage
        chunk = 4.0 * (s / cp) * shape.heads * shape.hd * tokens_mb / tp / (peak * eff_dense) if peak else 0.0
        hidden = chunk if overlap["cp"] == "full" else 0.0
        exposed_cp_mb = steps * max(0.0, _seconds(cp_timing) - hidden)

    # Expert parallel: two all-to-alls (dispatch, combine) per MoE layer forward and backward.
    ep_timing, t_ep_mb, a2a_bytes = None, 0.0, 0.0
    if shape.L_moe and ep > 1:
        a2a_bytes = 2.0 * tokens_mb * shape.top_k * h / tp
        ep_timing = comms.best("alltoall", ep, a2a_bytes, tp * cp)
        t_ep_mb = calls * math.ceil(shape.L_moe / pp) * _seconds(ep_timing)
    exposed_ep_mb = max(0.0, t_ep_mb - t_compute_mb) if overlap["ep"] == "full" else t_ep_mb

    # Pipeline: one activation forward and one gradient back per micro-batch and virtual stage.
    p2p_bytes = act_bytes / tp
    pp_timing = comms.p2p(p2p_bytes, tp * cp * dp) if pp > 1 else None
    t_p2p = _seconds(pp_timing)

    # Data parallel over dp × cp ranks (experts: over those holding the same experts).
    dense, expert = _parameters_per_gpu(shape, plan)
    forward_mb, backward_mb = t_compute_mb / passes, t_compute_mb * (passes - 1) / passes
    dp_timing, dp_bytes, exposed_dp = None, 0.0, 0.0  # the first group's collective and its message
    hide = overlap["dp"] == "full"
    zero = plan["zero"]
    for n, stride, params, units in ((dp * cp, tp, dense, layers_per_stage),
                                     (dp * cp // ep, tp * ep, expert, math.ceil(shape.L_moe / pp))):
        if n < 2 or params <= 0:
            continue
        size = cal.GRADIENT_BYTES * params
        message = size / units if zero == 3 else size  # ZeRO-3 moves one layer at a time
        if zero == 0:
            timing = comms.best("allreduce", n, size, stride)
            exposed = max(0.0, _seconds(timing) - (backward_mb if hide else 0.0))
        else:
            timing = comms.best("reduce-scatter", n, message, stride)
            t_rs, t_ag = _seconds(timing), _seconds(comms.best("allgather", n, message, stride))
            f, b = (forward_mb, backward_mb) if hide else (0.0, 0.0)
            if zero == 1:
                exposed = max(0.0, t_rs - b) + max(0.0, t_ag - f)
            elif zero == 2:  # gradients reduce-scattered every micro-batch
                exposed = m * max(0.0, t_rs - b) + max(0.0, t_ag - f)
            else:
                exposed = m * _sharded_exposed(t_ag, t_rs, forward_mb, backward_mb, units, hide)
        if dp_timing is None:
            dp_timing, dp_bytes = timing, message
        exposed_dp += exposed

    # Off-chip weight memory (Dojo's DIP HBM): what one micro-batch streams, under its compute.
    exposed_memory = 0.0
    if streamed is not None:
        stream_bytes = 2 * cal.WEIGHT_BYTES * (dense + expert) + 2 * mem["activations"] * cal.GIB / max(1, min(pp, m))
        exposed_memory = m * max(0.0, stream_bytes / streamed.offchip_bytes_per_s - t_compute_mb)

    t_mb = t_compute_mb + exposed_tp_mb + exposed_cp_mb + exposed_ep_mb
    compute = m * t_compute_mb
    exposed_pp = 0.0 if overlap["pp"] == "full" else 2 * m * vp * t_p2p
    bubble = (pp - 1) * (t_mb / vp + 2 * t_p2p)
    step = compute + m * (exposed_tp_mb + exposed_cp_mb + exposed_ep_mb) + exposed_pp + bubble + exposed_dp \
        + exposed_memory
    tokens_step = B * s
    if step_only:
        return {"step_time_s": step if math.isfinite(step) and step > 0 else None}
    if not math.isfinite(step) or step <= 0:
        result["why"] = ("training not timed: the accelerators of this plan have no network path between them; "
                         "draw the links that join their servers")
        result["fits"] = None  # memory fits (see memory_per_gpu_gib) but the step cannot be timed
        return _not_timed(result)
    result.update({
        "timed": True,
        "step_time_s": rounded(step), "compute_s": rounded(compute), "exposed_tp_s": rounded(m * exposed_tp_mb),
        "exposed_cp_s": rounded(m * exposed_cp_mb), "exposed_ep_s": rounded(m * exposed_ep_mb),
        "exposed_pp_s": rounded(exposed_pp), "exposed_dp_s": rounded(exposed_dp),
        "exposed_memory_s": rounded(exposed_memory), "bubble_s": rounded(bubble),
        "tflops_per_gpu": rounded(per_token * tokens_step / N / step / 1e12),
        "model_tflops_per_gpu": rounded(shape.model_flops * tokens_step / N / step / 1e12),
        "mfu": rounded(shape.model_flops * tokens_step / N / step / peak) if peak else None,
        "tokens_per_s": rounded(tokens_step / step),
        "days": rounded(model.get("tokens", 0) / (tokens_step / step) / 86400),
    })
    if detail:
        result["_phases"] = {"tp": (tp_timing, act_bytes), "cp": (cp_timing, kv_bytes), "ep": (ep_timing, a2a_bytes),
                             "pp": (pp_timing, p2p_bytes), "dp": (dp_timing, dp_bytes)}
    return result


MAX_AUTO_TP = 72  # the largest tensor-parallel group the auto plan tries: a GB200 NVL72 domain


def plan_candidates(accelerators: int, domain_size: int, model: dict):
    """The plan shapes the auto search times: tp dividing the scale-up domain (so tp groups tile
    the domains; up to the 72 GPUs of a GB200 NVL72; with sequence parallelism: it only saves
    memory), cp where sequences are long (at least 8K tokens per rank), pp dividing the rest with
    interleaving where the layers split evenly, ep dividing the experts and dp, and micro-batches
    of 1-8. Recompute and ZeRO are chosen per shape by `auto_plan`; attention is always flash (it
    only saves memory)."""
    N = accelerators
    B, L, heads, s = model["global_batch"], model["layers"], model["heads"], model["seq"]
    experts = model.get("experts", 0)
    g = max(1, domain_size)
    tps = [t for t in _divisors(g) if t <= MAX_AUTO_TP and heads % t == 0 and N % t == 0]
    for tp in tps:
        for cp in (c for c in (1, 2, 4, 8, 16, 32) if c == 1 or (s % c == 0 and s // c >= 8192)):
            if (N // tp) % cp:
                continue
            rest = N // (tp * cp)
            for pp in (p for p in _divisors(rest) if p <= L):
                dp = rest // pp
                if dp > B:
                    continue
                vps = [1] + [v for v in (2, 4) if pp > 1 and L % (pp * v) == 0]
                eps = [e for e in _divisors(experts) if dp % e == 0] if experts else [1]
                for vp in vps:
                    for ep in eps:
                        for mb in (1, 2, 4, 8):
                            if dp * mb > B:
                                continue
                            yield {"tp": tp, "pp": pp, "vp": vp, "dp": dp, "cp": cp, "sp": 1 if tp > 1 else 0,
                                   "ep": ep, "mb": mb, "recompute": "none", "zero": 1, "attention": "flash"}


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def auto_plan(fabric: Fabric, model: dict, comms: _Comms | None = None, overlap: dict | None = None,
              candidates=None) -> dict | None:
    """The fastest plan that fits: for each shape (`candidates`, or every shape `plan_candidates`
    gives) and ZeRO stage, the least recomputation that fits (less recomputation and a lower stage
    are never slower)."""
    comms = comms or _Comms(fabric)
    overlap = overlap or OVERLAP_DEFAULTS
    shape = _Shape(model)
    capacity_gib, overhead_gib = _memory_budget(fabric)
    capacity = capacity_gib * cal.MEMORY_USABLE_FRACTION
    B = model["global_batch"]
    part = _part_id(fabric)
    peak = _peak_tflops(fabric, model.get("precision", "bf16")) * 1e12
    # Shapes in the order of a bound no step of theirs beats (compute without recomputation plus
    # its share of the bubble): once the bound reaches the best step found, no later shape can win.
    shapes = []
    if candidates is None:
        candidates = plan_candidates(fabric.total_accelerators, fabric.domain_size, model)
    for index, plan in enumerate(candidates):
        m = math.ceil(B / (plan["dp"] * plan["mb"]))
        t_mb = _compute_mb(shape, plan, part, peak, 3.0, 0.0)
        shapes.append((m * t_mb + (plan["pp"] - 1) * t_mb / plan["vp"], index, plan, m))
    shapes.sort(key=lambda entry: entry[:2])
    best, best_step = None, math.inf
    for bound, _, plan, m in shapes:
        if bound >= best_step:
            break
        for zero in (1, 2, 3):
            for recompute in ("none", "full"):
                candidate = {**plan, "zero": zero, "recompute": recompute}
                mem = _memory(model, candidate, m, shape, overhead_gib)
                if mem["total"] <= capacity:
                    break
            else:
                continue
            step = evaluate_plan(fabric, model, candidate, comms, overlap=overlap, shape=shape, mem=mem,
                                 step_only=True)["step_time_s"]
            if step is not None and step < best_step:
                best, best_step = candidate, step
    return evaluate_plan(fabric, model, best, comms, overlap=overlap, shape=shape) if best is not None else None


def validate_plan(fabric: Fabric, model: dict, plan: dict, accelerators: int | None = None) -> dict:
    """A plan with its defaults filled in and dp worked out, or a PlanError saying what does not fit.
    `accelerators`: how many of the design's the plan runs on (the rest idle); None: all."""
    N = accelerators or fabric.total_accelerators
    plan = {**PLAN_DEFAULTS, **{k: v for k, v in plan.items() if k != "auto"}}
    tp, pp, vp, cp, ep = plan["tp"], plan["pp"], plan["vp"], plan["cp"], plan["ep"]
    if plan.get("dp") is None:
        if N % (tp * pp * cp):
            raise PlanError(f"plan tp={tp} × pp={pp} × cp={cp} does not divide the {N:,} accelerators")
        plan["dp"] = N // (tp * pp * cp)
    dp = plan["dp"]
    if tp * pp * dp * cp != N:
        raise PlanError(f"plan tp×pp×dp×cp = {tp * pp * dp * cp:,} but the design has {N:,} accelerators")
    if model["heads"] % tp:
        raise PlanError(f"tp={tp} must divide the {model['heads']} attention heads")
    if pp > model["layers"]:
        raise PlanError(f"pp={pp} is more than the {model['layers']} layers")
    if vp > 1 and pp == 1:
        raise PlanError(f"vp={vp} interleaves pipeline stages but pp=1: give pp > 1 or vp=1")
    if pp * vp > model["layers"]:
        raise PlanError(f"pp={pp} × vp={vp} virtual stages are more than the {model['layers']} layers")
    if model["seq"] % cp:
        raise PlanError(f"cp={cp} must divide the sequence length {model['seq']:,}")
    experts = model.get("experts", 0)
    if ep > 1 and not experts:
        raise PlanError(f"ep={ep} splits experts but the model {model.get('name', '')} has none (ep must be 1)")
    if experts and experts % ep:
        raise PlanError(f"ep={ep} must divide the {experts} experts")
    if dp % ep:
        raise PlanError(f"ep={ep} must divide dp={dp} (expert parallel groups are made of data-parallel ranks)")
    if dp * plan["mb"] > model["global_batch"]:
        raise PlanError(f"dp={dp} × mb={plan['mb']} is more than the global batch of {model['global_batch']}")
    return plan


def _untimed(fabric: Fabric, model: dict, plan, no_path: str) -> dict:
    """The training section when the accelerators are not all joined: nothing is timed. `fits`
    stays a statement about memory: None (not determined) unless an explicit plan is given."""
    out = {"model": model.get("name"), "plan": plan, "fits": None, "timed": False,
           "why": "training not timed: some accelerators have no network path to the others, so no plan "
                  f"spanning them can be timed ({no_path})",
           **{k: None for k in _TIMED_KEYS}, "memory_per_gpu_gib": None}
    if isinstance(plan, dict):
        chosen = validate_plan(fabric, model, plan)
        m = math.ceil(model["global_batch"] / (chosen["dp"] * chosen["mb"]))
        capacity_gib, overhead_gib = _memory_budget(fabric)
        mem = memory(model, chosen, m, overhead_gib=overhead_gib)
        capacity = capacity_gib * cal.MEMORY_USABLE_FRACTION
        out.update(plan=dict(chosen, auto=False), memory_per_gpu_gib=mem, memory_capacity_gib=rounded(capacity_gib))
        if mem["total"] > capacity:
            # Not fitting is known and final; report.py and the app print `why` for it.
            out["fits"] = False
            out["why"] = (f"needs {mem['total']:.1f} GiB per GPU but {capacity:.1f} GiB are usable; and " + out["why"])
    return out


def training(fabric: Fabric, spec: dict) -> tuple[dict, dict]:
    """The training section and the utilization it implies. `spec`: model (dict), plan (dict or
    "auto"), overlap (dict, optional), accelerators (optional: a given plan runs on that many of the
    design's accelerators and the rest stay idle, as a degraded job that dropped data-parallel
    replicas does: failures.run_degraded; a plan marked `auto` then has its micro-batch, ZeRO stage
    and recomputation chosen again)."""
    model = spec["model"]
    if fabric.rep is None:
        return {"fits": False, "why": "the design has no accelerators", "plan": None, "model": model.get("name")}, {}
    overlap = overlap_of(spec.get("overlap"))
    plan = spec.get("plan") or "auto"
    precision = model.get("precision", "bf16")
    if not _peak_tflops(fabric, precision):
        # Every step would take forever: said so, not as a plan search that found nothing fitting.
        read = " or ".join(dict.fromkeys((precision, "bf16", "fp16")))
        chosen = plan if plan == "auto" else dict(validate_plan(fabric, model, plan, spec.get("accelerators")),
                                                  auto=False)
        return {"model": model.get("name"), "plan": chosen, "fits": None, "timed": False,
                "why": f"training not timed: accelerator '{_part_id(fabric)}' has no compute at {precision} "
                       f"(its catalogue peak_tflops gives {read} as 0 or not at all)",
                **{k: None for k in _TIMED_KEYS}, "memory_per_gpu_gib": None}, {}
    streamed = streaming.model_for(_part_id(fabric))
    if streamed is not None and streamed.weight_streaming:
        if plan != "auto":
            raise PlanError("weight streaming runs one data-parallel replica per accelerator, with the "
                            "micro-batch that fits: give plan auto")
        part = _part_id(fabric)
        peak = _peak_tflops(fabric, model.get("precision", "bf16"))
        efficiency = cal.matmul_efficiency(part, model["hidden"])
        result = streaming.weight_streaming(streamed, model, fabric.total_accelerators, peak, _memory_gib(fabric),
                                            efficiency)
        return _described(result, model, None, streamed), {}  # the stream's overlap is the model itself
    comms = _Comms(fabric)
    if fabric.total_accelerators > 1:
        # Every plan spans all accelerators: if a whole-machine allreduce has no path, none can be timed.
        probe = comms.best("allreduce", fabric.total_accelerators, 2.0 ** 20, 1)
        if probe is None or not math.isfinite(float(probe.time[0])):
            return _untimed(fabric, model, plan, coll.no_path_why(probe.bottleneck if probe else None)), {}
    if plan == "auto":
        best = auto_plan(fabric, model, comms, overlap)
        if best is None:
            return ({"model": model.get("name"), "plan": "auto", "fits": False, "timed": False,
                     "why": f"no plan of tp, pp, dp, cp, ep over {fabric.total_accelerators:,} accelerators fits in "
                            f"memory with a global batch of {model['global_batch']:,}",
                     **{k: None for k in _TIMED_KEYS if k != "model_tflops_per_gpu"}, "memory_per_gpu_gib": None,
                     "overlap": overlap, "memory_model": streamed.description if streamed else None},
                    {})
        chosen = best["plan"]
        searched = True
    elif spec.get("accelerators") and plan.get("auto"):
        # A job restarted on fewer accelerators keeps the layout a search chose; its replicas now
        # run more micro-batches, so the micro-batch, ZeRO stage and recomputation are chosen again.
        layout = validate_plan(fabric, model, plan, spec["accelerators"])
        best = auto_plan(fabric, model, comms, overlap, [
            {**layout, "mb": mb} for mb in (1, 2, 4, 8) if layout["dp"] * mb <= model["global_batch"]])
        if best is None:
            raise PlanError(f"the plan's layout on {spec['accelerators']:,} accelerators fits in no micro-batch, "
                            "ZeRO stage or recomputation")
        chosen = best["plan"]
        searched = True
    else:
        chosen = validate_plan(fabric, model, plan, spec.get("accelerators"))
        searched = False
    result = evaluate_plan(fabric, model, chosen, comms, detail=True, overlap=overlap)
    phases = result.pop("_phases", {})
    result["plan"] = dict(chosen, auto=searched)
    utilization = _utilization(fabric, result, phases) if result["fits"] else {}
    return _described(result, model, overlap, streamed), utilization


def _described(result: dict, model: dict, overlap: dict | None, streamed) -> dict:
    """The section's figures about the workload and the assumptions behind the step."""
    result["model"] = model.get("name")
    result["parameters"] = rounded(workloads.parameters(model))
    result["global_batch"] = model["global_batch"]
    result["seq"] = model["seq"]
    result["tokens"] = model.get("tokens")
    result["overlap"] = overlap
    result["memory_model"] = streamed.description if streamed else None
    return result


# Step parts as they appear on an accelerator's time line: (kind, step key).
_SEGMENTS = (("compute", "compute_s"), ("communication", "exposed_tp_s"), ("communication", "exposed_cp_s"),
             ("communication", "exposed_ep_s"), ("communication", "exposed_pp_s"), ("idle", "bubble_s"),
             ("communication", "exposed_dp_s"), ("memory", "exposed_memory_s"))


def _utilization(fabric: Fabric, result: dict, phases: dict) -> dict:
    step = result["step_time_s"] or 0.0
    if step <= 0:
        return {}
    comm = sum(result[key] or 0.0 for kind, key in _SEGMENTS if kind in ("communication", "memory")) / step
    compute = result["compute_s"] / step
    idle = max(0.0, 1.0 - comm - compute)
    t = 0.0
    segments = []
    for kind, key in _SEGMENTS:
        d = result[key] or 0.0
        if d > 0:
            segments.append({"kind": "communication" if kind == "memory" else kind, "what": key[:-2],
                             "start_s": rounded(t), "duration_s": rounded(d)})
            t += d
    gpus = []
    for acc in fabric.accelerators:
        gpus.append({"group": acc.id, "count": fabric.copies[acc.id], "compute": rounded(compute),
                     "communication": rounded(comm),
                     "idle": rounded(idle), "segments": segments})
    link_phases = []
    for name, (timing, size) in phases.items():
        if timing is None:
            continue
        util = coll.link_utilization(fabric, timing, size)
        link_phases.append(link_phase(fabric, f"training {name}", util))
    return {"gpus": gpus, "phases": link_phases}


def link_phase(fabric: Fabric, name: str, util) -> LinkPhase:
    """The load of every drawn link during one phase; `util`: utilization per link index."""
    rows = fabric.__dict__.get("_phase_rows")
    if rows is None:
        rows = fabric.__dict__["_phase_rows"] = [(info.id, info.tier, info.instances) for info in fabric.links]
    links = []
    tiers: dict[str, list] = {"scale-up": [], "scale-out": [], "host": []}
    memo: dict = {}  # utilization → its rounded figure (most links share a handful of values)
    append = links.append
    for (link_id, tier_name, instances), raw in zip(rows, util.tolist()):
        u = memo.get(raw)
        if u is None:
            u = memo[raw] = rounded(min(1.0, raw))
        append(LinkLoad(link_id, tier_name, u, instances))
        tier = tiers.get(tier_name)
        if tier is None:
            tier = tiers[tier_name] = []
        tier.append(u)
    return LinkPhase(phase=name, links=tuple(links), tiers=read_only((k, tuple(v)) for k, v in tiers.items()))
