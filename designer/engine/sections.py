"""The sections of the engine's Result, one frozen record type each.

Every reader (report, exports, summary rows, the app's panels and canvas) reads these attributes;
`as_dict()` gives the JSON shape `evaluate --json` prints, key for key, written from the fields
themselves (`Section.as_dict`): a figure exists once, as a field. Units are in the field
names where a figure has one: `_gb_per_s` is gigabytes (10⁹ B) per second per direction, `_gb`
gigabytes, `_kw` kilowatts, `_s` seconds, `_usd` US dollars; utilizations and shares are fractions
0..1. Counts are physical copies (a drawn item times the copies of everything around it). A
figure's field also says its unit and which way is better (`figure_field`), which Compare and a
sweep's goals read (`engine.figures.direction`).

Collections are tuples and read-only mappings, so a Result can be shared between threads.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from designer.model.lint import Finding


def read_only(pairs) -> Mapping:
    """A read-only mapping of `pairs` (a mapping or (key, value) pairs), in their order."""
    return MappingProxyType(dict(pairs))


# -- how a field is written -------------------------------------------------------------------

HIGHER, LOWER = "higher", "lower"  # which way a figure is better (None: neither)


class Derived(NamedTuple):
    """A property the JSON writes beside the fields (`figure_field(then=…)`), with its unit and direction."""

    name: str
    unit: str | None = None
    better: str | None = None


def figure_field(unit: str | None = None, better: str | None = None, *, omit: str | None = None,
                 key: str | tuple[str, str] | None = None, write: Callable[[Any], Any] | None = None,
                 shown: Callable[[Any], bool] | None = None, then: tuple[Derived, ...] = (), **kwargs: Any) -> Any:
    """A dataclass field that says how it is read and written: its `unit` and whether a `better`
    value is HIGHER or LOWER (None: neither: counts, capacities, chosen settings); `omit` it from
    the JSON when it is "none" (None) or "false" (falsy), or "always" (not part of the answer);
    its JSON `key` where that is not the field's name (a pair nests it: ("tiers", "scale-up"));
    `write` turns the value into what the JSON holds; `shown(record)` says whether the JSON holds
    it at all; `then` the properties (`Derived`) written right after it. Other keywords go to `field`."""
    metadata = {"unit": unit, "better": better, "omit": omit, "key": key, "write": write, "shown": shown,
                "then": then}
    return field(metadata=metadata, **kwargs)


def json_value(value: Any) -> Any:
    """A field's value as the JSON holds it: records as their dicts, tuples as lists, mappings as dicts."""
    if hasattr(value, "as_dict"):
        return value.as_dict()
    if hasattr(value, "_asdict"):  # a NamedTuple row (LinkLoad): an object, not a list
        return {key: json_value(item) for key, item in value._asdict().items()}
    if isinstance(value, (tuple, list)):
        return [json_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: json_value(item) for key, item in value.items()}
    return value


def record_dict(record: Any) -> dict:
    """The JSON of a record, field by field in their order, as their metadata says (`figure_field`)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        meta = f.metadata
        value = getattr(record, f.name)
        omit = meta.get("omit")
        if omit == "always" or (omit == "none" and value is None) or (omit == "false" and not value):
            continue
        shown = meta.get("shown")
        if shown is not None and not shown(record):
            continue
        write = meta.get("write")
        written = write(value) if write is not None else json_value(value)
        key = meta.get("key") or f.name
        if isinstance(key, tuple):
            out.setdefault(key[0], {})[key[1]] = written
        else:
            out[key] = written
        for derived in meta.get("then", ()):
            out[derived.name] = json_value(getattr(record, derived.name))
    return out


class Section:
    """A record whose JSON comes from its fields (`record_dict`)."""

    __slots__ = ()

    def as_dict(self) -> dict:
        return record_dict(self)


@functools.cache
def json_fields(cls: type) -> Mapping[str, tuple[dataclasses.Field, Any]]:
    """A record type's fields by the JSON key each is written under (a nested key joined by dots:
    "tiers.scale-up"), with the field's resolved type."""
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[dataclasses.Field, Any]] = {}
    for f in dataclasses.fields(cls):
        key = f.metadata.get("key") or f.name
        out[key if isinstance(key, str) else ".".join(key)] = (f, hints[f.name])
    return read_only(out)


# -- design, inventory, bill of materials -----------------------------------------------------

@dataclass(frozen=True, slots=True)
class DesignInfo(Section):
    """The design evaluated: its name and how many items and links are drawn (not copies)."""

    name: str
    items: int
    links: int


@dataclass(frozen=True, slots=True)
class Inventory(Section):
    """Physical counts by kind, and by catalogue part for accelerators, servers, switches, NICs
    (part id → count, sorted by id). `links` counts physical link instances."""

    accelerators: int = figure_field("count")
    accelerator_models: Mapping[str, int]
    servers: int = figure_field("count")
    server_models: Mapping[str, int]
    switches: int = figure_field("count")
    switch_models: Mapping[str, int]
    nics: int = figure_field("count")
    nic_models: Mapping[str, int]
    cpus: int = figure_field("count")
    racks: int = figure_field("count")
    links: int = figure_field("count")


@dataclass(frozen=True, slots=True)
class BomRow(Section):
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
    quantity: int = figure_field("count")
    unit_price_usd: float | None = figure_field("USD", LOWER, then=(Derived("extended_usd", "USD", LOWER),))
    included: bool = figure_field(omit="false", default=False)
    price_derived: bool = figure_field(key="price_basis", omit="false", write=lambda _: "derived", default=False)
    variant: str | None = figure_field(omit="none", default=None)

    @property
    def extended_usd(self) -> float | None:
        return None if self.unit_price_usd is None else self.unit_price_usd * self.quantity

    @property
    def priced(self) -> bool:
        return self.unit_price_usd is not None


@dataclass(frozen=True, slots=True)
class BillOfMaterials(Section):
    """Parts, then cables, then transceivers; and physical links, cables and transceivers per
    medium id (links inside one server run on its boards and need no cable)."""

    rows: tuple[BomRow, ...]
    links_by_medium: Mapping[str, int]
    cables_by_medium: Mapping[str, int]
    transceivers_by_medium: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Compute(Section):
    """Peak throughput of all accelerators per precision (catalogue precision id → TFLOPS, TOPS
    for int8), for the precisions the accelerators list."""

    peak_tflops: Mapping[str, float] = figure_field("TFLOPS", HIGHER)


@dataclass(frozen=True, slots=True)
class Memory(Section):
    """Accelerator memory of the whole design: HBM (GiB, TB/s), on-chip SRAM (GiB), both (GiB); GiB as
    the catalogue's `memory_gib` (calibration.GIB says why)."""

    hbm_gib: float = figure_field("GiB")
    hbm_tb_per_s: float = figure_field("TB/s", HIGHER)
    sram_gib: float = figure_field("GiB")
    pooled_gib: float = figure_field("GiB")


@dataclass(frozen=True, slots=True)
class RackPower(Section):
    """Power of one copy of a drawn rack (kW), its copies, and its budget (kW; None: unknown)."""

    rack: str
    name: str
    copies: int = figure_field("count")
    kw_each: float = figure_field("kW", LOWER)
    budget_kw: float | None = figure_field("kW")


@dataclass(frozen=True, slots=True)
class Power(Section):
    """Total power (kW) and the power of each drawn rack. The total includes the checkpoint
    storage (`storage_kw`) and the hot spare servers, kept powered (`spares_kw`), which are
    design settings and in no drawn rack. `derived_parts`: the parts whose counted power is an
    estimate derived from other parts' published figures (the catalogue's `power_basis`)."""

    total_kw: float = figure_field("kW", LOWER)
    per_rack: tuple[RackPower, ...]
    storage_kw: float = figure_field("kW", LOWER, default=0.0)
    spares_kw: float = figure_field("kW", LOWER, default=0.0)
    derived_parts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Cost(Section):
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

    total_usd: float | None = figure_field("USD", LOWER)
    priced_lines: int = figure_field("count")
    unpriced_parts: tuple[str, ...]
    derived_price_parts: tuple[str, ...] = ()
    derived_power_parts: tuple[str, ...] = ()
    capital_usd: float | None = figure_field("USD", LOWER, default=None)
    facility_usd: float | None = figure_field("USD", LOWER, default=None)
    capital_by_category_usd: Mapping[str, float | None] = figure_field("USD", LOWER,
                                                                       default_factory=lambda: read_only(()))
    unpriced_by_category: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: read_only(()))
    yearly_usd: float | None = figure_field("USD/year", LOWER, default=None)
    yearly_by_category_usd: Mapping[str, float] = figure_field("USD/year", LOWER, default_factory=lambda: read_only(()))
    yearly_operating_usd: float | None = figure_field("USD/year", LOWER, default=None)
    per_accelerator_hour_usd: float | None = figure_field("USD/h", LOWER, default=None)
    run_days: float | None = figure_field("days", LOWER, default=None)
    run_usd: float | None = figure_field("USD", LOWER, default=None)
    run_energy_mwh: float | None = figure_field("MWh", LOWER, default=None)
    per_million_tokens_usd: float | None = figure_field("USD", LOWER, default=None)
    assumptions: Mapping[str, Any] = field(default_factory=lambda: read_only(()))


# -- network ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ScaleUpTier(Section):
    """The scale-up tier seen from one accelerator: injection bandwidth (GB/s), domain size and
    count, bisection of one domain (GB/s), and its diameter (hops)."""

    media: tuple[str, ...]
    injection_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    domain_accelerators: int = figure_field("count")
    domains: int = figure_field("count")
    bisection_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    direct_connect: bool
    in_network_reduction: str | None
    diameter_hops: float | None = figure_field("hops", LOWER)


@dataclass(frozen=True, slots=True)
class SwitchLevel(Section):
    """One level of the scale-out switch tree (1 = leaf): switches, bandwidth down and up (GB/s)
    and the worst down:up ratio of a switch at that level (None: no uplinks)."""

    level: int
    switches: int = figure_field("count")
    down_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    up_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    tier: int
    name: str
    oversubscription: float | None = figure_field(":1", LOWER)


@dataclass(frozen=True, slots=True)
class ScaleOutTier(Section):
    """The scale-out tier: raw and achieved injection per accelerator (GB/s), bisection (GB/s;
    None for a single domain), oversubscription per switch level and diameter (hops)."""

    media: tuple[str, ...]
    injection_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    achieved_injection_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    bisection_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    oversubscription: tuple[SwitchLevel, ...]
    in_network_reduction: str | None
    diameter_hops: float | None = figure_field("hops", LOWER)


@dataclass(frozen=True, slots=True)
class BoundaryCut(Section):
    """One containment level around the representative accelerator (item None: the whole
    cluster): accelerators per copy, copies, and the raw capacity leaving one copy (GB/s) over
    `links` drawn links."""

    item: str | None
    label: str
    accelerators: int = figure_field("count")
    copies: int = figure_field("count")
    cut_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    links: int = figure_field("count")


@dataclass(frozen=True, slots=True)
class Routing(Section):
    """What one routing lets a dragonfly group send over its global links (GB/s per direction out
    of one group): under uniform all-to-all traffic, and to one neighbouring group (a ring's)."""

    alltoall_gb_per_s: float = figure_field("GB/s", HIGHER)
    neighbour_gb_per_s: float = figure_field("GB/s", HIGHER)


@dataclass(frozen=True, slots=True)
class Dragonfly(Section):
    """A dragonfly scale-out fabric: groups, switches per group, each group's global links and
    their bandwidth (GB/s), a switch's local links, the bisection under minimal routing, what
    minimal and Valiant routing give, and which one the collectives use for each pattern."""

    groups: int = figure_field("count")
    switches_per_group: int = figure_field("count")
    global_links_per_group: int = figure_field("count")
    global_gb_per_s_per_group: float = figure_field("GB/s", HIGHER)
    local_gb_per_s_per_switch: float = figure_field("GB/s", HIGHER)
    bisection_gb_per_s: float = figure_field("GB/s", HIGHER)
    minimal: Routing
    valiant: Routing
    routing: str


@dataclass(frozen=True, slots=True)
class FabricShape(Section):
    """The scale-out fabric's shape where it is not a plain tree: `kind` is "dragonfly", "rail-only"
    (a server's NICs reach separate fabrics that meet only over the scale-up links: traffic between
    rails pays a scale-up hop) or "multi-plane" (each NIC's ports reach separate planes, whose
    bandwidth adds up); `rails` and `planes` count them, `plane_injection_gb_per_s` is one plane's
    share of an accelerator's injection."""

    kind: str
    rails: int = figure_field("count", default=1)
    planes: int = figure_field("count", default=1)
    plane_injection_gb_per_s: float | None = figure_field("GB/s", HIGHER, default=None)
    dragonfly: Dragonfly | None = figure_field(omit="none", default=None)


@dataclass(frozen=True, slots=True)
class Network(Section):
    """Network figures. A design without accelerators has none: both tiers are None. `shape` is
    set for a dragonfly, rail-only or multi-plane fabric (None: a tree, a torus or no fabric)."""

    accelerators: int = figure_field("count")
    scale_up: ScaleUpTier | None = figure_field(key=("tiers", "scale-up"))
    scale_out: ScaleOutTier | None = figure_field(key=("tiers", "scale-out"))
    diameter_hops: float | None = figure_field("hops", LOWER)
    boundaries: tuple[BoundaryCut, ...]
    shape: FabricShape | None = figure_field(omit="none", default=None)
    # Set where not every accelerator is joined to the others: what the job runs on, and why.
    job: str | None = figure_field(omit="none", default=None)

    def as_dict(self) -> dict:
        if self.scale_up is None:
            return {"tiers": {}, "boundaries": [], "note": "no accelerators"}
        return record_dict(self)


# -- collectives ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Bottleneck(Section):
    """The weakest drawn link on the slowest part of a collective, its tier and where it sits.
    When the ranks have no path, `link` is None, `name` is "no path" and `why` says what is
    missing."""

    link: str | None
    tier: str | None
    where: str | None
    name: str | None = figure_field(omit="none", default=None)
    why: str | None = figure_field(omit="none", default=None)


@dataclass(frozen=True, slots=True)
class CollectiveRow(Section):
    """One collective at one message size (`bytes`) with one algorithm; "auto" rows take the
    fastest and name it in `chosen`. Time (s), algorithm and bus bandwidth (GB/s) and the time of
    the bandwidth bound (s) are None where the ranks have no path; `why` then says so."""

    op: str
    algorithm: str
    protocol: str
    ranks: int = figure_field("count")
    bytes: int = figure_field("B")
    time_s: float | None = figure_field("s", LOWER)
    algbw_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    busbw_gb_per_s: float | None = figure_field("GB/s", HIGHER)
    bound_time_s: float | None = figure_field("s", LOWER)
    bottleneck: Bottleneck | None
    why: str | None = figure_field(omit="none", default=None)
    chosen: str | None = figure_field(omit="none", default=None)


# -- training ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class Plan(Section):
    """A parallel plan: tensor, pipeline (with `vp` interleaved virtual stages per rank), data,
    context (`cp`) and expert (`ep`) parallel degrees, sequence parallelism (`sp` 0/1), micro-batch
    (sequences), activation recomputation (none / selective / full), ZeRO stage, attention kernel
    (flash / standard), and whether the engine chose it."""

    tp: int
    pp: int
    vp: int = 1
    dp: int
    cp: int = 1
    sp: int = 0
    ep: int = 1
    mb: int
    recompute: str
    zero: int
    attention: str = "flash"
    auto: bool


@dataclass(frozen=True, slots=True)
class MemoryPerGpu(Section):
    """Memory one accelerator needs for a plan, by part (GiB), and their total (GiB)."""

    weights: float = figure_field("GiB")
    gradients: float = figure_field("GiB")
    optimizer: float = figure_field("GiB")
    activations: float = figure_field("GiB")
    logits: float = figure_field("GiB")
    overhead: float = figure_field("GiB")
    total: float = figure_field("GiB")

    def parts(self) -> tuple[tuple[str, float], ...]:
        """(name, GiB) of every part, without the total."""
        return (("weights", self.weights), ("gradients", self.gradients), ("optimizer", self.optimizer),
                ("activations", self.activations), ("logits", self.logits), ("overhead", self.overhead))


class StepPart(NamedTuple):
    """One part of a training step: the Training field holding its seconds, what the app calls it,
    and its colour's key (`style.colors.STEP_PART`)."""

    field: str
    label: str
    colour: str

    @property
    def segment(self) -> str:
        """The name a utilization segment gives this part (`StepSegment.what`): "exposed_tp"."""
        return self.field.removesuffix("_s")


# The parts of a step in the order they add up: the engine's step, the Training and Utilization
# tabs' bars and Compare's step plot all read this one table.
STEP_PARTS = (
    StepPart("compute_s", "Compute", "compute"),
    StepPart("exposed_tp_s", "TP comm.", "exposed_tp"),
    StepPart("exposed_cp_s", "CP comm.", "exposed_cp"),
    StepPart("exposed_ep_s", "EP all-to-all", "exposed_ep"),
    StepPart("exposed_pp_s", "PP comm.", "exposed_pp"),
    StepPart("exposed_dp_s", "DP comm.", "exposed_dp"),
    StepPart("exposed_memory_s", "Weight streaming", "exposed_memory"),
    StepPart("bubble_s", "Pipeline bubble", "bubble"),
)


def _was_timed(training: Training) -> bool:
    return training.timed is not None


def _was_evaluated(training: Training) -> bool:
    return training.microbatches is not None and training.fits is not False


def _has_model(training: Training) -> bool:
    return training.parameters is not None


def _step_field(unit: str, better: str | None = None) -> Any:
    """A figure of the step, in the JSON once a plan was considered (None written where missing)."""
    return figure_field(unit, better, shown=_was_timed, default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Training(Section):
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
    plan: Plan | str | Mapping[str, Any] | None = figure_field(omit="none", default=None)
    model: str | None = figure_field(omit="none", default=None)
    timed: bool | None = figure_field(shown=_was_timed, default=None)
    step_time_s: float | None = _step_field("s", LOWER)
    compute_s: float | None = _step_field("s", LOWER)
    exposed_tp_s: float | None = _step_field("s", LOWER)
    exposed_cp_s: float | None = _step_field("s", LOWER)
    exposed_ep_s: float | None = _step_field("s", LOWER)
    exposed_pp_s: float | None = _step_field("s", LOWER)
    exposed_dp_s: float | None = _step_field("s", LOWER)
    exposed_memory_s: float | None = _step_field("s", LOWER)
    bubble_s: float | None = _step_field("s", LOWER)
    tflops_per_gpu: float | None = _step_field("TFLOP/s", HIGHER)
    mfu: float | None = _step_field("fraction", HIGHER)
    tokens_per_s: float | None = _step_field("tokens/s", HIGHER)
    days: float | None = _step_field("days", LOWER)
    memory_per_gpu_gib: MemoryPerGpu | None = _step_field("GiB")
    model_tflops_per_gpu: float | None = figure_field("TFLOP/s", HIGHER, shown=_was_evaluated, default=None)
    memory_capacity_gib: float | None = figure_field("GiB", omit="none", default=None)
    microbatches: int | None = figure_field("count", omit="none", default=None)
    parameters: float | None = figure_field("count", omit="none", default=None)
    global_batch: int | None = figure_field("sequences", omit="none", default=None)
    seq: int | None = figure_field("tokens", omit="none", default=None)
    tokens: float | None = figure_field("tokens", shown=_has_model, default=None)
    overlap: Mapping[str, str] | None = figure_field(omit="none", default=None)
    memory_model: str | None = figure_field(omit="none", default=None)

    def step_parts(self) -> tuple[tuple[str, float], ...]:
        """(field name, seconds) of the parts of a step, in the order they add up; 0 untimed."""
        return tuple((part.field, getattr(self, part.field) or 0.0) for part in STEP_PARTS)


# -- utilization ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StepSegment(Section):
    """A stretch of one training step on an accelerator: kind (compute / communication / idle),
    what (the step part, e.g. "exposed_tp"), start and duration (s)."""

    kind: str
    what: str
    start_s: float = figure_field("s")
    duration_s: float = figure_field("s", LOWER)


@dataclass(frozen=True, slots=True)
class GpuTime(Section):
    """How the accelerators of one drawn accelerator item (`group`, `count` copies) spend a
    training step: compute, communication and idle as fractions, and the step's segments."""

    group: str
    count: int = figure_field("count")
    compute: float = figure_field("fraction")
    communication: float = figure_field("fraction")
    idle: float = figure_field("fraction")
    segments: tuple[StepSegment, ...]


class LinkLoad(NamedTuple):
    """Utilization (a fraction 0..1) of every copy of one drawn link during a phase; a plain
    tuple, since a phase holds one per drawn link."""

    link: str
    tier: str
    utilization: float
    copies: int


@dataclass(frozen=True, slots=True)
class LinkPhase(Section):
    """One communication phase (e.g. "allreduce 8G (ring)", "training tp"): every drawn link's
    load, and the utilizations per tier (scale-up, scale-out, host) in link order."""

    phase: str
    links: tuple[LinkLoad, ...]
    tiers: Mapping[str, tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class Utilization(Section):
    """Per-accelerator time split of a training step (empty when untimed) and per-link loads of
    each communication phase (the largest collective first, then the training phases)."""

    gpus: tuple[GpuTime, ...]
    phases: tuple[LinkPhase, ...]


# -- goodput and failure what-ifs -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Goodput(Section):
    """How much of the wall clock the training job trains (docs/goodput.md). Interruptions per day
    and mean time between them (hours) for a job on every accelerator; `by_class` the
    interruptions per day of each part class, `parts` the parts counted per class; checkpoint
    size (GB), write and read time (s) over the `storage` part's bandwidth; the Young/Daly interval
    (s of training between checkpoints); the mean cost of one interruption (s: restart, read, and
    the wait for a repair when no hot spare is free; `spare_found` is the chance one is, with
    `spares` spare servers); the effective training time ratio (0..1) and `days` to train with all
    of it. Figures that need storage or a training job are None, and `why` says which is missing."""

    interruptions_per_day: float | None = figure_field("/day", LOWER)
    mtbi_hours: float | None = figure_field("h", HIGHER)
    by_class: Mapping[str, float]
    parts: Mapping[str, int]
    spares: int = figure_field("count")
    spare_found: float | None = figure_field("fraction")
    storage: str | None = None
    checkpoint_gb: float | None = figure_field("GB", default=None)
    checkpoint_write_s: float | None = figure_field("s", LOWER, default=None)
    checkpoint_read_s: float | None = figure_field("s", LOWER, default=None)
    checkpoint_interval_s: float | None = figure_field("s", default=None)
    restart_s: float | None = figure_field("s", LOWER, default=None)
    effective_ratio: float | None = figure_field("fraction", HIGHER, default=None)
    days: float | None = figure_field("days", LOWER, default=None)
    why: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison(Section):
    """One figure of the healthy design next to the degraded one; `change` is degraded − healthy
    (None where either is missing)."""

    figure: str
    unit: str
    healthy: float | None
    degraded: float | None = figure_field(then=(Derived("change"),))

    @property
    def change(self) -> float | None:
        if self.healthy is None or self.degraded is None:
            return None
        return float(f"{self.degraded - self.healthy:.6g}")


@dataclass(frozen=True, slots=True)
class Degraded(Section):
    """The design with its failed parts out of service (`failures`: what was failed, as
    "ID" or "ID:copies"): accelerators cut off from the largest connected set (the job shrinks to
    it), and every compared figure healthy vs degraded. `plan` is the plan the degraded job runs
    (the healthy one where it still fits, else the best that does); `why` says what changed of the
    plan and what could not be evaluated; `placement`, on a torus of blocks joined through circuit
    switches, whether the job runs in place or moved to a slice of intact blocks, and why (None
    elsewhere)."""

    failures: tuple[str, ...]
    accelerators: int = figure_field("count")
    cut_off: int = figure_field("count")
    figures: tuple[Comparison, ...]
    plan: Plan | str | None
    why: str | None = None
    placement: str | None = None

    def figure(self, name: str) -> Comparison | None:
        return next((f for f in self.figures if f.figure == name), None)


__all__ = [
    "BillOfMaterials", "BomRow", "Bottleneck", "BoundaryCut", "CollectiveRow", "Comparison", "Compute", "Cost",
    "Degraded", "DesignInfo", "Goodput",
    "Finding", "GpuTime", "Inventory", "LinkLoad", "LinkPhase", "Memory", "MemoryPerGpu", "Network", "Plan",
    "Power", "RackPower", "ScaleOutTier", "ScaleUpTier", "StepSegment", "SwitchLevel", "Training",
    "Utilization", "STEP_PARTS", "StepPart", "Section", "figure_field", "HIGHER", "LOWER",
]
