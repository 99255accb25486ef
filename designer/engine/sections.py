"""The sections of the engine's Result, one frozen record type each.

Every reader (report, exports, summary rows, the app's panels and canvas) reads these attributes;
`as_dict()` gives the JSON shape `evaluate --json` prints, key for key. Units are in the field
names where a figure has one: `_gb_per_s` is gigabytes (10⁹ B) per second per direction, `_gb`
gigabytes, `_kw` kilowatts, `_s` seconds, `_usd` US dollars; utilizations and shares are fractions
0..1. Counts are physical copies (a drawn item times the copies of everything around it).

Collections are tuples and read-only mappings, so a Result can be shared between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    """One line of the bill of materials: `category` is the part's kind, or cable / transceiver.
    `unit_price_usd` is None where the catalogue has no price, or where the part's price is part
    of its server platform's (`included`: a NIC, CPU or switch inside a server, as its power is);
    a server's unit price is its chassis share (the platform's price less its default
    accelerators). Cables and transceivers say their `variant`: "copper" (both ends in one rack)
    or "optical" (beyond). `price_derived`: the unit price is an estimate derived from other
    parts' published figures (the catalogue's `price_basis`), not a price published for the part."""

    category: str
    part: str
    name: str
    quantity: int
    unit_price_usd: float | None
    included: bool = False
    variant: str | None = None
    price_derived: bool = False

    @property
    def extended_usd(self) -> float | None:
        return None if self.unit_price_usd is None else self.unit_price_usd * self.quantity

    @property
    def priced(self) -> bool:
        return self.unit_price_usd is not None

    def as_dict(self) -> dict:
        out = {"category": self.category, "part": self.part, "name": self.name, "quantity": self.quantity,
               "unit_price_usd": self.unit_price_usd, "extended_usd": self.extended_usd}
        if self.included:
            out["included"] = True
        if self.price_derived:
            out["price_basis"] = "derived"
        if self.variant is not None:
            out["variant"] = self.variant
        return out


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
    """Accelerator memory of the whole design: HBM (GiB, TB/s), on-chip SRAM (GiB), both (GiB); GiB as
    the catalogue's `memory_gib` (calibration.GIB says why)."""

    hbm_gib: float
    hbm_tb_per_s: float
    sram_gib: float
    pooled_gib: float

    def as_dict(self) -> dict:
        return {"hbm_gib": self.hbm_gib, "hbm_tb_per_s": self.hbm_tb_per_s, "sram_gib": self.sram_gib,
                "pooled_gib": self.pooled_gib}


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
    """Total power (kW) and the power of each drawn rack. The total includes the checkpoint
    storage (`storage_kw`) and the hot spare servers, kept powered (`spares_kw`), which are
    design settings and in no drawn rack. `derived_parts`: the parts whose counted power is an
    estimate derived from other parts' published figures (the catalogue's `power_basis`)."""

    total_kw: float
    per_rack: tuple[RackPower, ...]
    storage_kw: float = 0.0
    spares_kw: float = 0.0
    derived_parts: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"total_kw": self.total_kw, "per_rack": [rack.as_dict() for rack in self.per_rack],
                "storage_kw": self.storage_kw, "spares_kw": self.spares_kw,
                "derived_parts": list(self.derived_parts)}


@dataclass(frozen=True, slots=True)
class Cost:
    """What the design costs (designer.engine.cost; docs/costs.md). `total_usd`: the priced BOM
    lines (None when no line has a price); `unpriced_parts` are left out of every money figure,
    never counted as zero. `capital_usd`: the priced hardware plus the facility built for it,
    by category (`capital_by_category_usd`: None for a category whose parts are all unpriced;
    `unpriced_by_category` names the unpriced parts of each category); yearly cost (USD per year) by component, of which
    electricity and colocation are `yearly_operating_usd`; cost per accelerator-hour in use; the
    training run of `run_days` days: its cost, energy (MWh, at the facility meter) and cost per
    million tokens. `assumptions` are the ones used (the design's `cost` setting over the
    defaults). Money figures are None where nothing is priced; the per-hour and run figures also
    where an accelerator or server is unpriced, and run figures where the run was not timed.
    `derived_price_parts` and `derived_power_parts`: the parts counted at a price, or drawing a
    power, that is an estimate derived from other parts' published figures, not published for
    the part (docs/costs.md). `facility_usd`: the facility's share of the capital (facility cost
    per kW × the IT load; 0 with colocation), so `total_usd + facility_usd == capital_usd` (to
    the cent), as the BOM CSV's closing rows show."""

    total_usd: float | None
    priced_lines: int
    unpriced_parts: tuple[str, ...]
    derived_price_parts: tuple[str, ...] = ()
    derived_power_parts: tuple[str, ...] = ()
    capital_usd: float | None = None
    facility_usd: float | None = None
    capital_by_category_usd: Mapping[str, float | None] = field(default_factory=lambda: read_only(()))
    unpriced_by_category: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: read_only(()))
    yearly_usd: float | None = None
    yearly_by_category_usd: Mapping[str, float] = field(default_factory=lambda: read_only(()))
    yearly_operating_usd: float | None = None
    per_accelerator_hour_usd: float | None = None
    run_days: float | None = None
    run_usd: float | None = None
    run_energy_mwh: float | None = None
    per_million_tokens_usd: float | None = None
    assumptions: Mapping[str, Any] = field(default_factory=lambda: read_only(()))

    def as_dict(self) -> dict:
        return {"total_usd": self.total_usd, "priced_lines": self.priced_lines,
                "unpriced_parts": list(self.unpriced_parts),
                "derived_price_parts": list(self.derived_price_parts),
                "derived_power_parts": list(self.derived_power_parts), "capital_usd": self.capital_usd,
                "facility_usd": self.facility_usd,
                "capital_by_category_usd": dict(self.capital_by_category_usd),
                "unpriced_by_category": {key: list(parts) for key, parts in self.unpriced_by_category.items()},
                "yearly_usd": self.yearly_usd,
                "yearly_by_category_usd": dict(self.yearly_by_category_usd),
                "yearly_operating_usd": self.yearly_operating_usd,
                "per_accelerator_hour_usd": self.per_accelerator_hour_usd, "run_days": self.run_days,
                "run_usd": self.run_usd, "run_energy_mwh": self.run_energy_mwh,
                "per_million_tokens_usd": self.per_million_tokens_usd, "assumptions": dict(self.assumptions)}


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
class Routing:
    """What one routing lets a dragonfly group send over its global links (GB/s per direction out
    of one group): under uniform all-to-all traffic, and to one neighbouring group (a ring's)."""

    alltoall_gb_per_s: float
    neighbour_gb_per_s: float

    def as_dict(self) -> dict:
        return {"alltoall_gb_per_s": self.alltoall_gb_per_s, "neighbour_gb_per_s": self.neighbour_gb_per_s}


@dataclass(frozen=True, slots=True)
class Dragonfly:
    """A dragonfly scale-out fabric: groups, switches per group, each group's global links and
    their bandwidth (GB/s), a switch's local links, the bisection under minimal routing, what
    minimal and Valiant routing give, and which one the collectives use for each pattern."""

    groups: int
    switches_per_group: int
    global_links_per_group: int
    global_gb_per_s_per_group: float
    local_gb_per_s_per_switch: float
    bisection_gb_per_s: float
    minimal: Routing
    valiant: Routing
    routing: str

    def as_dict(self) -> dict:
        return {"groups": self.groups, "switches_per_group": self.switches_per_group,
                "global_links_per_group": self.global_links_per_group,
                "global_gb_per_s_per_group": self.global_gb_per_s_per_group,
                "local_gb_per_s_per_switch": self.local_gb_per_s_per_switch,
                "bisection_gb_per_s": self.bisection_gb_per_s, "minimal": self.minimal.as_dict(),
                "valiant": self.valiant.as_dict(), "routing": self.routing}


@dataclass(frozen=True, slots=True)
class FabricShape:
    """The scale-out fabric's shape where it is not a plain tree: `kind` is "dragonfly", "rail-only"
    (a server's NICs reach separate fabrics that meet only over the scale-up links: traffic between
    rails pays a scale-up hop) or "multi-plane" (each NIC's ports reach separate planes, whose
    bandwidth adds up); `rails` and `planes` count them, `plane_injection_gb_per_s` is one plane's
    share of an accelerator's injection."""

    kind: str
    rails: int = 1
    planes: int = 1
    plane_injection_gb_per_s: float | None = None
    dragonfly: Dragonfly | None = None

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "rails": self.rails, "planes": self.planes,
               "plane_injection_gb_per_s": self.plane_injection_gb_per_s}
        if self.dragonfly is not None:
            out["dragonfly"] = self.dragonfly.as_dict()
        return out


@dataclass(frozen=True, slots=True)
class Network:
    """Network figures. A design without accelerators has none: both tiers are None. `shape` is
    set for a dragonfly, rail-only or multi-plane fabric (None: a tree, a torus or no fabric)."""

    accelerators: int
    scale_up: ScaleUpTier | None
    scale_out: ScaleOutTier | None
    diameter_hops: float | None
    boundaries: tuple[BoundaryCut, ...]
    shape: FabricShape | None = None
    # Set where not every accelerator is joined to the others: what the job runs on, and why.
    job: str | None = None

    def as_dict(self) -> dict:
        if self.scale_up is None:
            return {"tiers": {}, "boundaries": [], "note": "no accelerators"}
        out = {"accelerators": self.accelerators,
               "tiers": {"scale-up": self.scale_up.as_dict(), "scale-out": self.scale_out.as_dict()},
               "diameter_hops": self.diameter_hops, "boundaries": [b.as_dict() for b in self.boundaries]}
        if self.shape is not None:
            out["shape"] = self.shape.as_dict()
        if self.job is not None:
            out["job"] = self.job
        return out


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
    """Memory one accelerator needs for a plan, by part (GiB), and their total (GiB)."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    overhead: float
    total: float

    def parts(self) -> tuple[tuple[str, float], ...]:
        """(name, GiB) of every part, without the total."""
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
    memory_per_gpu_gib: MemoryPerGpu | None = None
    memory_capacity_gib: float | None = None
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
                       memory_per_gpu_gib=self.memory_per_gpu_gib.as_dict() if self.memory_per_gpu_gib else None)
        if self.microbatches is not None and self.fits is not False:
            out["model_tflops_per_gpu"] = self.model_tflops_per_gpu
        for name in ("memory_capacity_gib", "microbatches", "parameters", "global_batch", "seq"):
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


# -- goodput and failure what-ifs -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Goodput:
    """How much of the wall clock the training job trains (docs/goodput.md). Interruptions per day
    and mean time between them (hours) for a job on every accelerator; `by_class` the
    interruptions per day of each part class, `parts` the parts counted per class; checkpoint
    size (GB), write and read time (s) over the `storage` part's bandwidth; the Young/Daly interval
    (s of training between checkpoints); the mean cost of one interruption (s: restart, read, and
    the wait for a repair when no hot spare is free; `spare_found` is the chance one is, with
    `spares` spare servers); the effective training time ratio (0..1) and `days` to train with all
    of it. Figures that need storage or a training job are None, and `why` says which is missing."""

    interruptions_per_day: float | None
    mtbi_hours: float | None
    by_class: Mapping[str, float]
    parts: Mapping[str, int]
    spares: int
    spare_found: float | None
    storage: str | None = None
    checkpoint_gb: float | None = None
    checkpoint_write_s: float | None = None
    checkpoint_read_s: float | None = None
    checkpoint_interval_s: float | None = None
    restart_s: float | None = None
    effective_ratio: float | None = None
    days: float | None = None
    why: str | None = None

    def as_dict(self) -> dict:
        return {"interruptions_per_day": self.interruptions_per_day, "mtbi_hours": self.mtbi_hours,
                "by_class": dict(self.by_class), "parts": dict(self.parts), "spares": self.spares,
                "spare_found": self.spare_found, "storage": self.storage, "checkpoint_gb": self.checkpoint_gb,
                "checkpoint_write_s": self.checkpoint_write_s, "checkpoint_read_s": self.checkpoint_read_s,
                "checkpoint_interval_s": self.checkpoint_interval_s, "restart_s": self.restart_s,
                "effective_ratio": self.effective_ratio, "days": self.days, "why": self.why}


@dataclass(frozen=True, slots=True)
class Comparison:
    """One figure of the healthy design next to the degraded one; `change` is degraded − healthy
    (None where either is missing)."""

    figure: str
    unit: str
    healthy: float | None
    degraded: float | None

    @property
    def change(self) -> float | None:
        if self.healthy is None or self.degraded is None:
            return None
        return float(f"{self.degraded - self.healthy:.6g}")

    def as_dict(self) -> dict:
        return {"figure": self.figure, "unit": self.unit, "healthy": self.healthy, "degraded": self.degraded,
                "change": self.change}


@dataclass(frozen=True, slots=True)
class Degraded:
    """The design with its failed parts out of service (`failures`: what was failed, as
    "ID" or "ID:copies"): accelerators cut off from the largest connected set (the job shrinks to
    it), and every compared figure healthy vs degraded. `plan` is the plan the degraded job runs
    (the healthy one where it still fits, else the best that does); `why` says what changed of the
    plan and what could not be evaluated; `placement`, on a torus of blocks joined through circuit
    switches, whether the job runs in place or moved to a slice of intact blocks, and why (None
    elsewhere)."""

    failures: tuple[str, ...]
    accelerators: int
    cut_off: int
    figures: tuple[Comparison, ...]
    plan: Plan | str | None
    why: str | None = None
    placement: str | None = None

    def figure(self, name: str) -> Comparison | None:
        return next((f for f in self.figures if f.figure == name), None)

    def as_dict(self) -> dict:
        plan = self.plan.as_dict() if isinstance(self.plan, Plan) else self.plan
        return {"failures": list(self.failures), "accelerators": self.accelerators, "cut_off": self.cut_off,
                "figures": [f.as_dict() for f in self.figures], "plan": plan, "why": self.why,
                "placement": self.placement}


__all__ = [
    "BillOfMaterials", "BomRow", "Bottleneck", "BoundaryCut", "CollectiveRow", "Comparison", "Compute", "Cost",
    "Degraded", "DesignInfo", "Goodput",
    "Finding", "GpuTime", "Inventory", "LinkLoad", "LinkPhase", "Memory", "MemoryPerGpu", "Network", "Plan",
    "Power", "RackPower", "ScaleOutTier", "ScaleUpTier", "StepSegment", "SwitchLevel", "Training",
    "Utilization", "STEP_PARTS",
]
