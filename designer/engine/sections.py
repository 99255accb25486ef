"""The sections of the engine's Result, one frozen record type each.

Every reader (report, exports, summary rows, the app's panels and canvas) reads these attributes;
`as_dict()` gives the JSON shape `evaluate --json` prints, key for key. Units are in the field
names where a figure has one: `_gb_per_s` is gigabytes (10⁹ B) per second per direction, `_gb`
gigabytes, `_kw` kilowatts, `_s` seconds, `_usd` US dollars; utilizations and shares are fractions
0..1. Counts are physical copies (a drawn item times the copies of everything around it).

Collections are tuples and read-only mappings, so a Result can be shared between threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple
from collections.abc import Mapping

from designer.model.lint import Finding


def read_only(pairs) -> Mapping:
    """A read-only mapping of `pairs` (a mapping or (key, value) pairs), in their order."""
    return MappingProxyType(dict(pairs))


# -- design, inventory, bill of materials -----------------------------------------------------

@dataclass(frozen=True, slots=True)
class DesignInfo:
    """The design evaluated: its name and how many items and links are drawn (not copies)."""

    name: str
    items: int
    links: int

    def as_dict(self) -> dict:
        return {"name": self.name, "items": self.items, "links": self.links}


@dataclass(frozen=True, slots=True)
class Inventory:
    """Physical counts by kind, and by catalogue part for accelerators, servers, switches, NICs
    (part id → count, sorted by id). `links` counts physical link instances."""

    accelerators: int
    accelerator_models: Mapping[str, int]
    servers: int
    server_models: Mapping[str, int]
    switches: int
    switch_models: Mapping[str, int]
    nics: int
    nic_models: Mapping[str, int]
    cpus: int
    racks: int
    links: int

    def as_dict(self) -> dict:
        return {"accelerators": self.accelerators, "accelerator_models": dict(self.accelerator_models),
                "servers": self.servers, "server_models": dict(self.server_models),
                "switches": self.switches, "switch_models": dict(self.switch_models),
                "nics": self.nics, "nic_models": dict(self.nic_models),
                "cpus": self.cpus, "racks": self.racks, "links": self.links}


@dataclass(frozen=True, slots=True)
class BomRow:
    """One line of the bill of materials: `category` is the part's kind, or cable / transceiver;
    `unit_price_usd` is None where the catalogue has no price."""

    category: str
    part: str
    name: str
    quantity: int
    unit_price_usd: float | None

    def as_dict(self) -> dict:
        return {"category": self.category, "part": self.part, "name": self.name, "quantity": self.quantity,
                "unit_price_usd": self.unit_price_usd}


@dataclass(frozen=True, slots=True)
class BillOfMaterials:
    """Parts, then cables, then transceivers; and physical links, cables and transceivers per
    medium id (links inside one server run on its boards and need no cable)."""

    rows: tuple[BomRow, ...]
    links_by_medium: Mapping[str, int]
    cables_by_medium: Mapping[str, int]
    transceivers_by_medium: Mapping[str, int]

    def as_dict(self) -> dict:
        return {"rows": [row.as_dict() for row in self.rows], "links_by_medium": dict(self.links_by_medium),
                "cables_by_medium": dict(self.cables_by_medium),
                "transceivers_by_medium": dict(self.transceivers_by_medium)}


@dataclass(frozen=True, slots=True)
class Compute:
    """Peak throughput of all accelerators per precision (catalogue precision id → TFLOPS, TOPS
    for int8), for the precisions the accelerators list."""

    peak_tflops: Mapping[str, float]

    def as_dict(self) -> dict:
        return {"peak_tflops": dict(self.peak_tflops)}


@dataclass(frozen=True, slots=True)
class Memory:
    """Accelerator memory of the whole design: HBM (GB, TB/s), on-chip SRAM (GB), both (GB)."""

    hbm_gb: float
    hbm_tb_per_s: float
    sram_gb: float
    pooled_gb: float

    def as_dict(self) -> dict:
        return {"hbm_gb": self.hbm_gb, "hbm_tb_per_s": self.hbm_tb_per_s, "sram_gb": self.sram_gb,
                "pooled_gb": self.pooled_gb}


@dataclass(frozen=True, slots=True)
class RackPower:
    """Power of one copy of a drawn rack (kW), its copies, and its budget (kW; None: unknown)."""

    rack: str
    name: str
    copies: int
    kw_each: float
    budget_kw: float | None

    def as_dict(self) -> dict:
        return {"rack": self.rack, "name": self.name, "copies": self.copies, "kw_each": self.kw_each,
                "budget_kw": self.budget_kw}


@dataclass(frozen=True, slots=True)
class Power:
    """Total power (kW) and the power of each drawn rack."""

    total_kw: float
    per_rack: tuple[RackPower, ...]

    def as_dict(self) -> dict:
        return {"total_kw": self.total_kw, "per_rack": [rack.as_dict() for rack in self.per_rack]}


@dataclass(frozen=True, slots=True)
class Cost:
    """Total of the priced BOM lines (USD; None when no line has a price), and the unpriced parts."""

    total_usd: float | None
    priced_lines: int
    unpriced_parts: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"total_usd": self.total_usd, "priced_lines": self.priced_lines,
                "unpriced_parts": list(self.unpriced_parts)}


# -- network ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ScaleUpTier:
    """The scale-up tier seen from one accelerator: injection bandwidth (GB/s), domain size and
    count, bisection of one domain (GB/s), and its diameter (hops)."""

    media: tuple[str, ...]
    injection_gb_per_s: float | None
    domain_accelerators: int
    domains: int
    bisection_gb_per_s: float | None
    direct_connect: bool
    in_network_reduction: str | None
    diameter_hops: float | None

    def as_dict(self) -> dict:
        return {"media": list(self.media), "injection_gb_per_s": self.injection_gb_per_s,
                "domain_accelerators": self.domain_accelerators, "domains": self.domains,
                "bisection_gb_per_s": self.bisection_gb_per_s, "direct_connect": self.direct_connect,
                "in_network_reduction": self.in_network_reduction, "diameter_hops": self.diameter_hops}


@dataclass(frozen=True, slots=True)
class SwitchLevel:
    """One level of the scale-out switch tree (1 = leaf): switches, bandwidth down and up (GB/s)
    and the worst down:up ratio of a switch at that level (None: no uplinks)."""

    level: int
    switches: int
    down_gb_per_s: float | None
    up_gb_per_s: float | None
    tier: int
    name: str
    oversubscription: float | None

    def as_dict(self) -> dict:
        return {"level": self.level, "switches": self.switches, "down_gb_per_s": self.down_gb_per_s,
                "up_gb_per_s": self.up_gb_per_s, "tier": self.tier, "name": self.name,
                "oversubscription": self.oversubscription}


@dataclass(frozen=True, slots=True)
class ScaleOutTier:
    """The scale-out tier: raw and achieved injection per accelerator (GB/s), bisection (GB/s;
    None for a single domain), oversubscription per switch level and diameter (hops)."""

    media: tuple[str, ...]
    injection_gb_per_s: float | None
    achieved_injection_gb_per_s: float | None
    bisection_gb_per_s: float | None
    oversubscription: tuple[SwitchLevel, ...]
    in_network_reduction: str | None
    diameter_hops: float | None

    def as_dict(self) -> dict:
        return {"media": list(self.media), "injection_gb_per_s": self.injection_gb_per_s,
                "achieved_injection_gb_per_s": self.achieved_injection_gb_per_s,
                "bisection_gb_per_s": self.bisection_gb_per_s,
                "oversubscription": [level.as_dict() for level in self.oversubscription],
                "in_network_reduction": self.in_network_reduction, "diameter_hops": self.diameter_hops}


@dataclass(frozen=True, slots=True)
class BoundaryCut:
    """One containment level around the representative accelerator (item None: the whole
    cluster): accelerators per copy, copies, and the raw capacity leaving one copy (GB/s) over
    `links` drawn links."""

    item: str | None
    label: str
    accelerators: int
    copies: int
    cut_gb_per_s: float | None
    links: int

    def as_dict(self) -> dict:
        return {"item": self.item, "label": self.label, "accelerators": self.accelerators, "copies": self.copies,
                "cut_gb_per_s": self.cut_gb_per_s, "links": self.links}


@dataclass(frozen=True, slots=True)
class Network:
    """Network figures. A design without accelerators has none: both tiers are None."""

    accelerators: int
    scale_up: ScaleUpTier | None
    scale_out: ScaleOutTier | None
    diameter_hops: float | None
    boundaries: tuple[BoundaryCut, ...]

    def as_dict(self) -> dict:
        if self.scale_up is None:
            return {"tiers": {}, "boundaries": [], "note": "no accelerators"}
        return {"accelerators": self.accelerators,
                "tiers": {"scale-up": self.scale_up.as_dict(), "scale-out": self.scale_out.as_dict()},
                "diameter_hops": self.diameter_hops, "boundaries": [b.as_dict() for b in self.boundaries]}


# -- collectives ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Bottleneck:
    """The weakest drawn link on the slowest part of a collective, its tier and where it sits.
    When the ranks have no path, `link` is None, `name` is "no path" and `why` says what is
    missing."""

    link: str | None
    tier: str | None
    where: str | None
    name: str | None = None
    why: str | None = None

    def as_dict(self) -> dict:
        out = {"link": self.link, "tier": self.tier, "where": self.where}
        if self.name is not None:
            out["name"] = self.name
        if self.why is not None:
            out["why"] = self.why
        return out


@dataclass(frozen=True, slots=True)
class CollectiveRow:
    """One collective at one message size (`bytes`) with one algorithm; "auto" rows take the
    fastest and name it in `chosen`. Time (s), algorithm and bus bandwidth (GB/s) and the time of
    the bandwidth bound (s) are None where the ranks have no path; `why` then says so."""

    op: str
    algorithm: str
    protocol: str
    ranks: int
    bytes: int
    time_s: float | None
    algbw_gb_per_s: float | None
    busbw_gb_per_s: float | None
    bound_time_s: float | None
    bottleneck: Bottleneck | None
    chosen: str | None = None
    why: str | None = None

    def as_dict(self) -> dict:
        out = {"op": self.op, "algorithm": self.algorithm, "protocol": self.protocol, "ranks": self.ranks,
               "bytes": self.bytes, "time_s": self.time_s, "algbw_gb_per_s": self.algbw_gb_per_s,
               "busbw_gb_per_s": self.busbw_gb_per_s, "bound_time_s": self.bound_time_s,
               "bottleneck": self.bottleneck.as_dict() if self.bottleneck is not None else None}
        if self.why is not None:
            out["why"] = self.why
        if self.chosen is not None:
            out["chosen"] = self.chosen
        return out


# -- training ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Plan:
    """A parallel plan: tensor, pipeline (with `vp` interleaved virtual stages per rank), data,
    context (`cp`) and expert (`ep`) parallel degrees, sequence parallelism (`sp` 0/1), micro-batch
    (sequences), activation recomputation (none / selective / full), ZeRO stage, attention kernel
    (flash / standard), and whether the engine chose it."""

    tp: int
    pp: int
    dp: int
    mb: int
    recompute: str
    zero: int
    auto: bool
    vp: int = 1
    cp: int = 1
    sp: int = 0
    ep: int = 1
    attention: str = "flash"

    def as_dict(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "vp": self.vp, "dp": self.dp, "cp": self.cp, "sp": self.sp,
                "ep": self.ep, "mb": self.mb, "recompute": self.recompute, "zero": self.zero,
                "attention": self.attention, "auto": self.auto}


@dataclass(frozen=True, slots=True)
class MemoryPerGpu:
    """Memory one accelerator needs for a plan, by part (GB), and their total (GB)."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    overhead: float
    total: float

    def parts(self) -> tuple[tuple[str, float], ...]:
        """(name, GB) of every part, without the total."""
        return (("weights", self.weights), ("gradients", self.gradients), ("optimizer", self.optimizer),
                ("activations", self.activations), ("logits", self.logits), ("overhead", self.overhead))

    def as_dict(self) -> dict:
        return {**dict(self.parts()), "total": self.total}


STEP_PARTS = ("compute_s", "exposed_tp_s", "exposed_cp_s", "exposed_ep_s", "exposed_pp_s", "exposed_dp_s",
              "exposed_memory_s", "bubble_s")


@dataclass(frozen=True, slots=True)
class Training:
    """One training step of the workload's model with a plan.

    `fits`: the plan fits in accelerator memory (None: not determined); `timed`: the step was
    timed (None: no plan was considered, e.g. no accelerators); `why`
    explains a False or None. Times in seconds per step: compute, communication not hidden behind
    compute (exposed TP / CP / EP / PP / DP, and off-chip weight memory where the accelerator
    streams its weights), pipeline bubble; `overlap` the overlap assumptions the step was timed
    with; `memory_model` states how memory off the accelerator is counted where it is (Dojo,
    Cerebras); `tflops_per_gpu` counts recomputation,
    `model_tflops_per_gpu` and `mfu` (a fraction of peak) do not; `days` to train `tokens`.
    `plan` is a Plan, or "auto" when none was found.

    Which keys the JSON carries depends on how far evaluation got, as the engine has always
    reported it: the step figures and memory appear once a plan was considered (`timed` is set),
    the workload figures once a plan was evaluated."""

    fits: bool | None
    why: str | None
    plan: Plan | str | Mapping[str, Any] | None = None
    model: str | None = None
    timed: bool | None = None
    step_time_s: float | None = None
    compute_s: float | None = None
    exposed_tp_s: float | None = None
    exposed_pp_s: float | None = None
    exposed_dp_s: float | None = None
    bubble_s: float | None = None
    exposed_cp_s: float | None = None
    exposed_ep_s: float | None = None
    exposed_memory_s: float | None = None
    overlap: Mapping[str, str] | None = None
    memory_model: str | None = None
    tflops_per_gpu: float | None = None
    model_tflops_per_gpu: float | None = None
    mfu: float | None = None
    tokens_per_s: float | None = None
    days: float | None = None
    memory_per_gpu_gb: MemoryPerGpu | None = None
    memory_capacity_gb: float | None = None
    microbatches: int | None = None
    parameters: float | None = None
    global_batch: int | None = None
    seq: int | None = None
    tokens: float | None = None

    def step_parts(self) -> tuple[tuple[str, float], ...]:
        """(field name, seconds) of the parts of a step, in the order they add up; 0 untimed."""
        return tuple((name, getattr(self, name) or 0.0) for name in STEP_PARTS)

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"fits": self.fits, "why": self.why}
        plan = self.plan
        if isinstance(plan, Plan):
            out["plan"] = plan.as_dict()
        elif isinstance(plan, Mapping):
            out["plan"] = dict(plan)
        elif plan is not None:
            out["plan"] = plan
        if self.model is not None:
            out["model"] = self.model
        if self.timed is not None:
            out.update(timed=self.timed, step_time_s=self.step_time_s, compute_s=self.compute_s,
                       exposed_tp_s=self.exposed_tp_s, exposed_cp_s=self.exposed_cp_s, exposed_ep_s=self.exposed_ep_s,
                       exposed_pp_s=self.exposed_pp_s, exposed_dp_s=self.exposed_dp_s,
                       exposed_memory_s=self.exposed_memory_s, bubble_s=self.bubble_s,
                       tflops_per_gpu=self.tflops_per_gpu,
                       mfu=self.mfu, tokens_per_s=self.tokens_per_s, days=self.days,
                       memory_per_gpu_gb=self.memory_per_gpu_gb.as_dict() if self.memory_per_gpu_gb else None)
        if self.microbatches is not None and self.fits is not False:
            out["model_tflops_per_gpu"] = self.model_tflops_per_gpu
        for name in ("memory_capacity_gb", "microbatches", "parameters", "global_batch", "seq"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.parameters is not None:
            out["tokens"] = self.tokens
        if self.overlap is not None:
            out["overlap"] = dict(self.overlap)
        if self.memory_model is not None:
            out["memory_model"] = self.memory_model
        return out


# -- utilization ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StepSegment:
    """A stretch of one training step on an accelerator: kind (compute / communication / idle),
    what (the step part, e.g. "exposed_tp"), start and duration (s)."""

    kind: str
    what: str
    start_s: float
    duration_s: float

    def as_dict(self) -> dict:
        return {"kind": self.kind, "what": self.what, "start_s": self.start_s, "duration_s": self.duration_s}


@dataclass(frozen=True, slots=True)
class GpuTime:
    """How the accelerators of one drawn accelerator item (`group`, `count` copies) spend a
    training step: compute, communication and idle as fractions, and the step's segments."""

    group: str
    count: int
    compute: float
    communication: float
    idle: float
    segments: tuple[StepSegment, ...]

    def as_dict(self) -> dict:
        return {"group": self.group, "count": self.count, "compute": self.compute,
                "communication": self.communication, "idle": self.idle,
                "segments": [segment.as_dict() for segment in self.segments]}


class LinkLoad(NamedTuple):
    """Utilization (a fraction 0..1) of every copy of one drawn link during a phase; a plain
    tuple, since a phase holds one per drawn link."""

    link: str
    tier: str
    utilization: float
    copies: int


@dataclass(frozen=True, slots=True)
class LinkPhase:
    """One communication phase (e.g. "allreduce 8G (ring)", "training tp"): every drawn link's
    load, and the utilizations per tier (scale-up, scale-out, host) in link order."""

    phase: str
    links: tuple[LinkLoad, ...]
    tiers: Mapping[str, tuple[float, ...]]

    def as_dict(self) -> dict:
        return {"phase": self.phase,
                "links": [{"link": link, "tier": tier, "utilization": u, "copies": copies}
                          for link, tier, u, copies in self.links],
                "tiers": {name: list(values) for name, values in self.tiers.items()}}


@dataclass(frozen=True, slots=True)
class Utilization:
    """Per-accelerator time split of a training step (empty when untimed) and per-link loads of
    each communication phase (the largest collective first, then the training phases)."""

    gpus: tuple[GpuTime, ...]
    phases: tuple[LinkPhase, ...]

    def as_dict(self) -> dict:
        return {"gpus": [gpu.as_dict() for gpu in self.gpus], "phases": [phase.as_dict() for phase in self.phases]}


__all__ = [
    "BillOfMaterials", "BomRow", "Bottleneck", "BoundaryCut", "CollectiveRow", "Compute", "Cost", "DesignInfo",
    "Finding", "GpuTime", "Inventory", "LinkLoad", "LinkPhase", "Memory", "MemoryPerGpu", "Network", "Plan",
    "Power", "RackPower", "ScaleOutTier", "ScaleUpTier", "StepSegment", "SwitchLevel", "Training",
    "Utilization", "STEP_PARTS",
]
