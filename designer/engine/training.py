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
from designer.engine import workloads
from designer.engine.network import Fabric
from designer.engine.workloads import WorkloadError
from designer.engine.result import rounded
from designer.engine.sections import LinkLoad, LinkPhase, read_only

RECOMPUTE = ("none", "selective", "full")


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


def _peak_tflops(fabric: Fabric, precision: str) -> float:
    part = fabric.catalog.get(fabric.design.items[fabric.rep].part)
    peaks = part.peak_tflops if part else {}
    key = "fp8" if precision == "fp8" and "fp8" in peaks else "bf16"
    return float(peaks.get(key) or peaks.get("bf16") or peaks.get("fp16") or 0.0)


def _memory_gb(fabric: Fabric) -> float:
    part = fabric.catalog.get(fabric.design.items[fabric.rep].part)
    return part.number("memory_gb") if part else 0.0


def flops_per_token(model: dict, passes: float) -> float:
    """FLOPs per token: `passes` × forward of the transformer layers + 3 × forward of the logits."""
    P = workloads.parameters(model)
    h, L, V, s = model["hidden"], model["layers"], model["vocab"], model["seq"]
    layer_params = P - V * h
    forward_layers = 2 * layer_params + 4 * s * h * L
    return passes * forward_layers + 3 * 2 * h * V


def memory(model: dict, plan: dict, m: int) -> dict:
    P = workloads.parameters(model)
    h, L, V, s, a = model["hidden"], model["layers"], model["vocab"], model["seq"], model["heads"]
    tp, pp, dp, mb, zero = plan["tp"], plan["pp"], plan["dp"], plan["mb"], plan["zero"]
    per_gpu = (P - V * h) / (tp * pp) + V * h / tp  # the first/last stage also holds the embedding
    weights = cal.WEIGHT_BYTES * per_gpu / (dp if zero >= 3 else 1)
    grads = cal.GRADIENT_BYTES * per_gpu / (dp if zero >= 2 else 1)
    optim = cal.OPTIMIZER_BYTES * per_gpu / (dp if zero >= 1 else 1)
    tokens = mb * s
    full_layer = tokens * (cal.ACTIVATION_BYTES_PER_H * h + cal.ACTIVATION_ATTENTION_BYTES * a * s) / tp
    per_layer = {"none": full_layer, "selective": tokens * cal.ACTIVATION_BYTES_PER_H * h / tp,
                 "full": tokens * cal.FULL_RECOMPUTE_BYTES_PER_H * h / tp}[plan["recompute"]]
    layers_per_stage = math.ceil(L / pp)
    in_flight = min(pp, m)
    activations = layers_per_stage * in_flight * per_layer + (full_layer if plan["recompute"] != "none" else 0.0)
    logits = 4.0 * tokens * V / tp
    gb = 1e9
    out = {"weights": weights / gb, "gradients": grads / gb, "optimizer": optim / gb,
           "activations": activations / gb, "logits": logits / gb, "overhead": cal.MEMORY_OVERHEAD_GB}
    out["total"] = sum(out.values())
    return {k: rounded(v) for k, v in out.items()}


def evaluate_plan(fabric: Fabric, model: dict, plan: dict, comms: _Comms | None = None, detail: bool = False) -> dict:
    comms = comms or _Comms(fabric)
    N = fabric.total_accelerators
    tp, pp, dp, mb = plan["tp"], plan["pp"], plan["dp"], plan["mb"]
    B, s, h, L = model["global_batch"], model["seq"], model["hidden"], model["layers"]
    m = math.ceil(B / (dp * mb))
    mem = memory(model, plan, m)
    capacity = _memory_gb(fabric) * cal.MEMORY_USABLE_FRACTION
    result = {"plan": dict(plan), "microbatches": m, "memory_per_gpu_gb": mem,
              "memory_capacity_gb": rounded(_memory_gb(fabric)), "fits": mem["total"] <= capacity, "why": None}
    if not result["fits"]:
        biggest = max((k for k in mem if k != "total"), key=lambda k: mem[k])
        result["why"] = (f"needs {mem['total']:.1f} GB per GPU (largest: {biggest} {mem[biggest]:.1f} GB) but "
                         f"{capacity:.1f} GB are usable of {_memory_gb(fabric):g} GB")
        result["timed"] = False
        for key in ("step_time_s", "compute_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s",
                    "tflops_per_gpu", "mfu", "tokens_per_s", "days"):
            result[key] = None
        return result
    peak = _peak_tflops(fabric, model.get("precision", "bf16")) * 1e12
    eff = cal.MATMUL_EFFICIENCY_MAX * h / (h + cal.MATMUL_EFFICIENCY_HALF_H)
    passes = {"none": 3.0, "selective": 3.0, "full": 4.0}[plan["recompute"]]
    per_token = flops_per_token(model, passes)
    if plan["recompute"] == "selective":
        per_token += 4 * s * h * L  # the attention core is computed again
    model_per_token = flops_per_token(model, 3.0)
    t_compute_mb = per_token * mb * s / (tp * pp) / (peak * eff) if peak else math.inf
    layers_per_stage = math.ceil(L / pp)
    act_bytes = 2.0 * mb * s * h
    t_tp_mb = 0.0
    tp_timing = comms.best("allreduce", tp, act_bytes, 1) if tp > 1 else None
    if tp_timing is not None:
        per_layer = 4 + (2 if plan["recompute"] == "full" else 0)
        t_tp_mb = per_layer * layers_per_stage * float(tp_timing.time[0])
    pp_timing = comms.p2p(act_bytes / tp, tp * dp) if pp > 1 else None
    t_p2p = float(pp_timing.time[0]) if pp_timing is not None else 0.0
    grad_bytes = cal.GRADIENT_BYTES * ((workloads.parameters(model) - model["vocab"] * h) / (tp * pp)
                                       + model["vocab"] * h / tp)
    dp_timing = None
    t_dp = 0.0
    if dp > 1:
        if plan["zero"] >= 1:
            rs = comms.best("reduce-scatter", dp, grad_bytes, tp)
            ag = comms.best("allgather", dp, grad_bytes, tp)
            t_dp = float(rs.time[0]) + float(ag.time[0])
            dp_timing = rs
        else:
            dp_timing = comms.best("allreduce", dp, grad_bytes, tp)
            t_dp = float(dp_timing.time[0])
    t_mb = t_compute_mb + t_tp_mb
    compute = m * t_compute_mb
    exposed_tp = m * t_tp_mb
    exposed_pp = 2 * m * t_p2p
    bubble = (pp - 1) * (t_mb + 2 * t_p2p)
    backward_last = t_compute_mb * 2.0 / passes
    exposed_dp = max(0.0, t_dp - backward_last)
    step = compute + exposed_tp + exposed_pp + bubble + exposed_dp
    tokens_step = B * s
    if not math.isfinite(step) or step <= 0:
        result["why"] = ("training not timed: the accelerators of this plan have no network path between them; "
                         "draw the links that join their servers")
        result["timed"] = False
        result["fits"] = None  # memory fits (see memory_per_gpu_gb) but the step cannot be timed
        for key in ("step_time_s", "compute_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s",
                    "tflops_per_gpu", "model_tflops_per_gpu", "mfu", "tokens_per_s", "days"):
            result[key] = None
        return result
    result.update({
        "timed": True,
        "step_time_s": rounded(step), "compute_s": rounded(compute), "exposed_tp_s": rounded(exposed_tp),
        "exposed_pp_s": rounded(exposed_pp), "exposed_dp_s": rounded(exposed_dp), "bubble_s": rounded(bubble),
        "tflops_per_gpu": rounded(per_token * tokens_step / N / step / 1e12),
        "model_tflops_per_gpu": rounded(model_per_token * tokens_step / N / step / 1e12),
        "mfu": rounded(model_per_token * tokens_step / N / step / peak) if peak else None,
        "tokens_per_s": rounded(tokens_step / step),
        "days": rounded(model.get("tokens", 0) / (tokens_step / step) / 86400),
    })
    if detail:
        result["_phases"] = {"tp": (tp_timing, act_bytes, t_tp_mb * m), "pp": (pp_timing, act_bytes / tp, exposed_pp),
                             "dp": (dp_timing, grad_bytes, t_dp)}
    return result


MAX_AUTO_TP = 72  # the largest tensor-parallel group the auto plan tries: a GB200 NVL72 domain


def plan_candidates(accelerators: int, domain_size: int, model: dict):
    """The plans the auto search times: tp dividing the scale-up domain (so tp groups tile the
    domains; up to the 72 GPUs of a GB200 NVL72), pp dividing the rest."""
    N = accelerators
    B, L, heads = model["global_batch"], model["layers"], model["heads"]
    g = max(1, domain_size)
    tps = [t for t in _divisors(g) if t <= MAX_AUTO_TP and heads % t == 0 and N % t == 0]
    for tp in tps:
        rest = N // tp
        pps = [p for p in _divisors(rest) if p <= L]
        for pp in pps:
            dp = rest // pp
            if dp > B:
                continue
            for mb in (1, 2, 4, 8):
                if dp * mb > B:
                    continue
                for recompute in RECOMPUTE:
                    yield {"tp": tp, "pp": pp, "dp": dp, "mb": mb, "recompute": recompute, "zero": 1}


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def auto_plan(fabric: Fabric, model: dict, comms: _Comms | None = None) -> dict | None:
    comms = comms or _Comms(fabric)
    best = None
    for plan in plan_candidates(fabric.total_accelerators, fabric.domain_size, model):
        r = evaluate_plan(fabric, model, plan, comms)
        if r["fits"] and r["step_time_s"] is not None and (best is None or r["step_time_s"] < best["step_time_s"]):
            best = r
    return best


def validate_plan(fabric: Fabric, model: dict, plan: dict) -> dict:
    N = fabric.total_accelerators
    plan = dict(plan)
    plan.setdefault("tp", 1)
    plan.setdefault("pp", 1)
    plan.setdefault("mb", 1)
    plan.setdefault("recompute", "selective")
    plan.setdefault("zero", 1)
    if plan.get("dp") is None:
        if N % (plan["tp"] * plan["pp"]):
            raise PlanError(f"plan tp={plan['tp']} × pp={plan['pp']} does not divide the {N:,} accelerators")
        plan["dp"] = N // (plan["tp"] * plan["pp"])
    if plan["tp"] * plan["pp"] * plan["dp"] != N:
        raise PlanError(f"plan tp×pp×dp = {plan['tp'] * plan['pp'] * plan['dp']:,} but the design has {N:,} "
                        "accelerators")
    if model["heads"] % plan["tp"]:
        raise PlanError(f"tp={plan['tp']} must divide the {model['heads']} attention heads")
    if plan["pp"] > model["layers"]:
        raise PlanError(f"pp={plan['pp']} is more than the {model['layers']} layers")
    if plan["dp"] * plan["mb"] > model["global_batch"]:
        raise PlanError(f"dp={plan['dp']} × mb={plan['mb']} is more than the global batch of {model['global_batch']}")
    return plan


_TIMED_KEYS = ("step_time_s", "compute_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s",
               "tflops_per_gpu", "mfu", "tokens_per_s", "days")


def _untimed(fabric: Fabric, model: dict, plan, no_path: str) -> dict:
    """The training section when the accelerators are not all joined: nothing is timed. `fits`
    stays a statement about memory: None (not determined) unless an explicit plan is given."""
    out = {"model": model.get("name"), "plan": plan, "fits": None, "timed": False,
           "why": "training not timed: some accelerators have no network path to the others, so no plan "
                  f"spanning them can be timed ({no_path})",
           **{k: None for k in _TIMED_KEYS}, "memory_per_gpu_gb": None}
    if isinstance(plan, dict):
        chosen = validate_plan(fabric, model, plan)
        m = math.ceil(model["global_batch"] / (chosen["dp"] * chosen["mb"]))
        mem = memory(model, chosen, m)
        capacity = _memory_gb(fabric) * cal.MEMORY_USABLE_FRACTION
        out.update(plan=dict(chosen, auto=False), memory_per_gpu_gb=mem, memory_capacity_gb=rounded(_memory_gb(fabric)))
        if mem["total"] > capacity:
            # Not fitting is known and final; report.py and the app print `why` for it.
            out["fits"] = False
            out["why"] = (f"needs {mem['total']:.1f} GB per GPU but {capacity:.1f} GB are usable; and " + out["why"])
    return out


def training(fabric: Fabric, spec: dict) -> tuple[dict, dict]:
    """The training section and the utilization it implies. `spec`: model (dict), plan (dict or
    "auto")."""
    model = spec["model"]
    if fabric.rep is None:
        return {"fits": False, "why": "the design has no accelerators", "plan": None, "model": model.get("name")}, {}
    comms = _Comms(fabric)
    plan = spec.get("plan") or "auto"
    if fabric.total_accelerators > 1:
        # Every plan spans all accelerators: if a whole-machine allreduce has no path, none can be timed.
        probe = comms.best("allreduce", fabric.total_accelerators, 2.0 ** 20, 1)
        if probe is None or not math.isfinite(float(probe.time[0])):
            return _untimed(fabric, model, plan, coll.no_path_why(probe.bottleneck if probe else None)), {}
    if plan == "auto":
        best = auto_plan(fabric, model, comms)
        if best is None:
            return ({"model": model.get("name"), "plan": "auto", "fits": False, "timed": False,
                     "why": f"no plan of tp, pp, dp over {fabric.total_accelerators:,} accelerators fits in memory "
                            f"with a global batch of {model['global_batch']:,}",
                     **{k: None for k in ("step_time_s", "compute_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s",
                                          "bubble_s", "tflops_per_gpu", "mfu", "tokens_per_s", "days",
                                          "memory_per_gpu_gb")}},
                    {})
        chosen = best["plan"]
        searched = True
    else:
        chosen = validate_plan(fabric, model, plan)
        searched = False
    result = evaluate_plan(fabric, model, chosen, comms, detail=True)
    phases = result.pop("_phases", {})
    result["plan"] = dict(chosen, auto=searched)
    result["model"] = model.get("name")
    result["parameters"] = rounded(workloads.parameters(model))
    result["global_batch"] = model["global_batch"]
    result["seq"] = model["seq"]
    result["tokens"] = model.get("tokens")
    utilization = _utilization(fabric, result, phases) if result["fits"] else {}
    return result, utilization


def _utilization(fabric: Fabric, result: dict, phases: dict) -> dict:
    step = result["step_time_s"] or 0.0
    if step <= 0:
        return {}
    comm = (result["exposed_tp_s"] + result["exposed_pp_s"] + result["exposed_dp_s"]) / step
    compute = result["compute_s"] / step
    idle = max(0.0, 1.0 - comm - compute)
    t = 0.0
    segments = []
    for kind, key in (("compute", "compute_s"), ("communication", "exposed_tp_s"), ("communication", "exposed_pp_s"),
                      ("idle", "bubble_s"), ("communication", "exposed_dp_s")):
        d = result[key] or 0.0
        if d > 0:
            segments.append({"kind": kind, "what": key[:-2], "start_s": rounded(t), "duration_s": rounded(d)})
            t += d
    gpus = []
    for acc in fabric.accelerators:
        gpus.append({"group": acc.id, "count": fabric.copies[acc.id], "compute": rounded(compute),
                     "communication": rounded(comm),
                     "idle": rounded(idle), "segments": segments})
    link_phases = []
    for name, (timing, size, _) in phases.items():
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
