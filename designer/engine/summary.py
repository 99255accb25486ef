"""The summary of a result as (metric, value, unit) rows: the CSV export, the CLI table and the
app's summary table all read these, so the three always agree.

Every row is declared once (`SummaryFigure`): its key, which is what a sweep file or Compare names
it by (`summary.power_kw`) and never changes with its label, its label, unit, and which way is
better (`engine.figures.direction`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from designer.engine.cost import CATEGORIES
from designer.engine.result import Result
from designer.engine.sections import HIGHER, LOWER


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One row of a result's summary: its stable `key`, what it is called (`metric`), value, unit
    and which way is better (HIGHER, LOWER or None)."""

    key: str
    metric: str
    value: Any
    unit: str
    better: str | None = None

    def triple(self) -> tuple[str, Any, str]:
        return self.metric, self.value, self.unit


def key_words(text: str) -> str:
    """`text` as a piece of a key: snake case, without any parenthesised aside ("Leaf (tier 1)" → "leaf")."""
    return re.sub(r"[^a-z0-9]+", "_", re.sub(r"\([^)]*\)", "", str(text)).lower()).strip("_")


@dataclass(frozen=True, slots=True)
class SummaryFigure:
    """A summary row as declared. A row repeated per part, switch level or collective has "{}" in
    its key and label: `row` fills the key from ids (`key_words`), the label from what a person reads."""

    key: str
    label: str
    unit: str
    better: str | None = None

    def row(self, value: Any, keys: tuple = (), labels: tuple | None = None) -> SummaryRow:
        labels = keys if labels is None else labels
        return SummaryRow(self.key.format(*map(key_words, keys)), self.label.format(*labels), value, self.unit,
                          self.better)

    def names(self, key: str) -> bool:
        """Whether `key` is this figure's (one of its keys, for a repeated row)."""
        if "{}" not in self.key:
            return key == self.key
        return re.fullmatch(".+".join(map(re.escape, self.key.split("{}"))), key) is not None


# Precision id, its label and its piece of the peak row's key (unit: TOPS for int8, else TFLOPS).
PRECISIONS = (
    ("fp64", "FP64", "fp64"), ("fp64_tensor", "FP64 tensor", "fp64_tensor"), ("fp32", "FP32", "fp32"),
    ("tf32", "TF32", "tf32"), ("tf32_sparse", "TF32 sparse", "tf32_sparse"), ("bf16", "BF16/FP16", "bf16_fp16"),
    ("bf16_sparse", "BF16/FP16 sparse", "bf16_fp16_sparse"), ("fp8", "FP8", "fp8"),
    ("fp8_sparse", "FP8 sparse", "fp8_sparse"), ("int8", "INT8", "int8"), ("int8_sparse", "INT8 sparse", "int8_sparse"),
)
PRECISION_LABELS = {precision: label for precision, label, _key in PRECISIONS}


def _peak(precision: str, label: str, key: str) -> SummaryFigure:
    unit = "TOPS" if precision.startswith("int") else "TFLOPS"
    return SummaryFigure(f"peak_{key}_{unit.lower()}", f"Peak {label}", unit, HIGHER)


PEAKS = {precision: _peak(precision, label, key) for precision, label, key in PRECISIONS}

ACCELERATORS = SummaryFigure("accelerators", "Accelerators", "count")
ACCELERATOR_MODEL = SummaryFigure("accelerators_{}", "Accelerators: {}", "count")
SERVERS = SummaryFigure("servers", "Servers", "count")
SWITCHES = SummaryFigure("switches", "Switches", "count")
NICS = SummaryFigure("nics", "NICs", "count")
RACKS = SummaryFigure("racks", "Racks", "count")
LINKS = SummaryFigure("links", "Links", "count")
HBM_CAPACITY = SummaryFigure("hbm_capacity_gib", "HBM capacity", "GiB")
HBM_BANDWIDTH = SummaryFigure("hbm_bandwidth_tb_per_s", "HBM bandwidth", "TB/s", HIGHER)
SRAM = SummaryFigure("on_chip_sram_gib", "On-chip SRAM", "GiB")
POWER = SummaryFigure("power_kw", "Power", "kW", LOWER)
STORAGE_POWER = SummaryFigure("of_which_checkpoint_storage_kw", "  of which checkpoint storage", "kW", LOWER)
SPARES_POWER = SummaryFigure("of_which_hot_spare_servers_kw", "  of which hot spare servers", "kW", LOWER)
SCALE_UP_BANDWIDTH = SummaryFigure("scale_up_bandwidth_per_accelerator_gb_per_s", "Scale-up bandwidth per accelerator",
                                   "GB/s", HIGHER)
SCALE_UP_DOMAIN = SummaryFigure("scale_up_domain", "Scale-up domain", "accelerators")
SCALE_OUT_BANDWIDTH = SummaryFigure("scale_out_bandwidth_per_accelerator_gb_per_s",
                                    "Scale-out bandwidth per accelerator", "GB/s", HIGHER)
SCALE_OUT_BISECTION = SummaryFigure("scale_out_bisection_bandwidth_gb_per_s", "Scale-out bisection bandwidth", "GB/s",
                                    HIGHER)
OVERSUBSCRIPTION = SummaryFigure("oversubscription_at_{}", "Oversubscription at {}", ":1", LOWER)
DIAMETER = SummaryFigure("diameter_hops", "Diameter", "hops", LOWER)
# An auto row's busbw, by operation and size; the label names the algorithm chosen, the key does not
# (it differs between designs, the row is the same).
COLLECTIVE_BUSBW = SummaryFigure("{}_{}_busbw_gb_per_s", "{} {} ({}) busbw", "GB/s", HIGHER)
TRAINING_MODEL = SummaryFigure("training_model", "Training model", "")
STEP_TIME = SummaryFigure("training_step_time_s", "Training step time", "s", LOWER)
TFLOPS_PER_GPU = SummaryFigure("training_tflop_s_per_gpu_tflops", "Training TFLOP/s per GPU", "TFLOP/s", HIGHER)
MFU = SummaryFigure("training_mfu", "Training MFU", "fraction", HIGHER)
TOKENS_PER_S = SummaryFigure("training_tokens_per_second", "Training tokens per second", "tokens/s", HIGHER)
DAYS = SummaryFigure("days_to_train", "Days to train", "days", LOWER)
MEMORY_PER_GPU = SummaryFigure("memory_per_gpu_gib", "Memory per GPU", "GiB")
TRAINING_TIMED = SummaryFigure("training_timed", "Training timed", "")
TRAINING_FITS = SummaryFigure("training_fits_in_memory", "Training fits in memory", "")
FABRIC = SummaryFigure("scale_out_fabric", "Scale-out fabric", "")
RAILS = SummaryFigure("rails", "Rails (joined only over scale-up)", "count")
PLANES = SummaryFigure("fabric_planes", "Fabric planes", "count")
PLANE_BANDWIDTH = SummaryFigure("scale_out_bandwidth_per_accelerator_per_plane_gb_per_s",
                                "Scale-out bandwidth per accelerator per plane", "GB/s", HIGHER)
DRAGONFLY_GROUPS = SummaryFigure("dragonfly_groups", "Dragonfly groups", "count")
GROUP_BANDWIDTH = SummaryFigure("global_bandwidth_per_group_gb_per_s", "Global bandwidth per group", "GB/s", HIGHER)
NEIGHBOUR_BANDWIDTH = SummaryFigure("global_bandwidth_to_one_other_group_gb_per_s",
                                    "Global bandwidth to one other group (minimal)", "GB/s", HIGHER)
# The same key as the minimal routing's row, as it has been since the summary's keys were made
# from its labels: saved sweeps read the Valiant figure under it.
VALIANT_GROUP_BANDWIDTH = SummaryFigure("global_bandwidth_per_group_gb_per_s", "Global bandwidth per group (Valiant)",
                                        "GB/s", HIGHER)
DRAGONFLY_ROUTING = SummaryFigure("dragonfly_routing", "Dragonfly routing", "")
GOODPUT_WHY = SummaryFigure("why_some_goodput_figures_are_missing", "Why some goodput figures are missing", "")
CAPITAL = SummaryFigure("capital_cost_usd", "Capital cost", "USD", LOWER)
CAPITAL_BY_CATEGORY = {key: SummaryFigure(f"capital_{key}_usd", f"Capital: {name.lower()}", "USD", LOWER)
                       for key, name in CATEGORIES.items()}
FACILITY = SummaryFigure("of_which_facility_usd", "  of which facility", "USD", LOWER)
YEARLY = SummaryFigure("yearly_cost_usd_year", "Yearly cost", "USD/year", LOWER)
YEARLY_OPERATING = SummaryFigure("yearly_operating_cost_usd_year", "Yearly operating cost", "USD/year", LOWER)
PER_ACCELERATOR_HOUR = SummaryFigure("cost_per_accelerator_hour_usd_h", "Cost per accelerator-hour", "USD/h", LOWER)
RUN_COST = SummaryFigure("training_run_cost_usd", "Training run cost", "USD", LOWER)
PER_MILLION_TOKENS = SummaryFigure("cost_per_million_tokens_usd", "Cost per million tokens", "USD", LOWER)
RUN_ENERGY = SummaryFigure("training_run_energy_mwh", "Training run energy", "MWh", LOWER)
UNPRICED = SummaryFigure("unpriced_parts", "Unpriced parts (not in the costs)", "")
DERIVED = SummaryFigure("derived_estimates", "Derived estimates (not published figures)", "")
LINT_ERRORS = SummaryFigure("lint_errors", "Lint errors", "count", LOWER)
LINT_WARNINGS = SummaryFigure("lint_warnings", "Lint warnings", "count", LOWER)

# (goodput field, figure): the summary's goodput rows, and a comparison's goodput block
# (`engine.compare`, keyed by `goodput.FIELD`). Days without failures is the row "Days to train".
GOODPUT_SUMMARY = (
    ("days", SummaryFigure("days_to_train_with_failures", "Days to train with failures", "days", LOWER)),
    ("effective_ratio", SummaryFigure("effective_training_time_ratio", "Effective training time ratio", "fraction",
                                      HIGHER)),
    ("interruptions_per_day", SummaryFigure("interruptions_per_day", "Interruptions per day", "/day", LOWER)),
    ("mtbi_hours", SummaryFigure("mean_time_between_interruptions_h", "Mean time between interruptions", "h",
                                 HIGHER)),
    ("checkpoint_write_s", SummaryFigure("checkpoint_write_time_s", "Checkpoint write time", "s", LOWER)),
    ("checkpoint_interval_s", SummaryFigure("checkpoint_interval_s", "Checkpoint interval (Young/Daly)", "s")),
    ("restart_s", SummaryFigure("restart_and_recovery_per_interruption_s", "Restart and recovery per interruption",
                                "s", LOWER)),
    ("spares", SummaryFigure("hot_spare_servers", "Hot spare servers", "count")),
)


# (goodput field, row name, unit), as `engine.compare` reads them.
GOODPUT_FIGURES = tuple((field, figure.label, figure.unit) for field, figure in GOODPUT_SUMMARY)


def summary_figures() -> tuple[SummaryFigure, ...]:
    """Every row the summary may have, declared (repeated rows once, with "{}" in their key): the
    module's figures as they are now (a test may relabel one), then the tables'."""
    return tuple(value for value in globals().values() if isinstance(value, SummaryFigure)) + (
        *PEAKS.values(), *CAPITAL_BY_CATEGORY.values(), *(figure for _field, figure in GOODPUT_SUMMARY))


def figure_of_key(key: str) -> SummaryFigure | None:
    """The declared row a summary key names (`summary.KEY` without "summary."), None if none does."""
    declared = summary_figures()
    return next((f for f in declared if "{}" not in f.key and f.names(key)), None) or \
        next((f for f in declared if f.names(key)), None)


def summary_table(result: Result, named: bool = True) -> list[SummaryRow]:
    """The rows with their keys; a part is written as its catalogue name with its id ("NVIDIA H100
    SXM5 80GB (h100-sxm)", `part_label`), or by its id alone when not `named`. The keys are the
    same either way (parts by id)."""
    inv, compute, memory = result.inventory, result.compute, result.memory
    rows: list[SummaryRow] = [ACCELERATORS.row(inv.accelerators)]
    for model, count in inv.accelerator_models.items():
        rows.append(ACCELERATOR_MODEL.row(count, (model,), (part_label(result, model) if named else model,)))
    rows += [SERVERS.row(inv.servers), SWITCHES.row(inv.switches), NICS.row(inv.nics), RACKS.row(inv.racks),
             LINKS.row(inv.links)]
    for precision, value in compute.peak_tflops.items():
        rows.append(PEAKS[precision].row(value))
    rows += [HBM_CAPACITY.row(memory.hbm_gib), HBM_BANDWIDTH.row(memory.hbm_tb_per_s)]
    if memory.sram_gib:
        rows.append(SRAM.row(memory.sram_gib))
    rows.append(POWER.row(result.power.total_kw))
    # Storage and hot spares are settings, not drawn: say what of the total they draw.
    if result.power.storage_kw:
        rows.append(STORAGE_POWER.row(result.power.storage_kw))
    if result.power.spares_kw:
        rows.append(SPARES_POWER.row(result.power.spares_kw))
    rows += _performance_table(result)
    rows += _goodput_table(result)
    rows += _cost_table(result, named)
    rows.append(LINT_ERRORS.row(sum(1 for f in result.lint if f.severity == "error")))
    rows.append(LINT_WARNINGS.row(sum(1 for f in result.lint if f.severity == "warning")))
    return rows


def summary_rows(result: Result, named: bool = True) -> list[tuple[str, Any, str]]:
    """The rows as (metric, value, unit) (`summary_table` has their keys too)."""
    return [row.triple() for row in summary_table(result, named)]


def format_value(value: Any) -> str:
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def performance_rows(result: Result) -> list[tuple[str, Any, str]]:
    """Network, collective and training rows (present when the engine computed them)."""
    return [row.triple() for row in _performance_table(result)]


def _performance_table(result: Result) -> list[SummaryRow]:
    rows: list[SummaryRow] = []
    network = result.network
    up, out = network.scale_up, network.scale_out
    if up is not None:
        rows.append(SCALE_UP_BANDWIDTH.row(up.injection_gb_per_s))
        rows.append(SCALE_UP_DOMAIN.row(up.domain_accelerators))
        if out.media:
            rows.append(SCALE_OUT_BANDWIDTH.row(out.injection_gb_per_s))
            if out.bisection_gb_per_s is not None:
                rows.append(SCALE_OUT_BISECTION.row(out.bisection_gb_per_s))
            for level in out.oversubscription:
                if level.oversubscription is not None:
                    rows.append(OVERSUBSCRIPTION.row(level.oversubscription, (level.name,)))
            rows += _shape_table(network.shape)
        if network.diameter_hops is not None:
            rows.append(DIAMETER.row(network.diameter_hops))
    for row in result.collectives:
        if row.algorithm != "auto" or row.time_s is None:
            continue
        size = _size_label(row.bytes)
        rows.append(COLLECTIVE_BUSBW.row(row.busbw_gb_per_s, (row.op, size), (row.op, size, row.chosen)))
    training = result.training
    if training.model:
        rows.append(TRAINING_MODEL.row(training.model))
        if training.step_time_s is not None:
            rows += [STEP_TIME.row(training.step_time_s), TFLOPS_PER_GPU.row(training.tflops_per_gpu),
                     MFU.row(training.mfu), TOKENS_PER_S.row(training.tokens_per_s), DAYS.row(training.days),
                     MEMORY_PER_GPU.row(training.memory_per_gpu_gib.total)]
        elif training.timed is False and training.fits is not False:
            # The reason is a sentence: the Training tab and the text report show it in full.
            rows.append(TRAINING_TIMED.row(f"no: {_short_reason(training.why)}"))
        else:
            rows.append(TRAINING_FITS.row("no"))
    return rows


def _short_reason(why: str | None) -> str:
    if why and "no compute at" in why:
        return "an accelerator has no compute at the training precision"
    return "accelerators not all connected"


def goodput_rows(result: Result) -> list[tuple[str, Any, str]]:
    """The goodput headline (docs/goodput.md): the figures the engine computed for this design,
    and why the others are missing (no storage, no training job, failures outrunning progress)."""
    return [row.triple() for row in _goodput_table(result)]


def _goodput_table(result: Result) -> list[SummaryRow]:
    g = result.goodput
    if g is None:
        return []
    rows = [figure.row(getattr(g, field)) for field, figure in GOODPUT_SUMMARY if getattr(g, field) is not None]
    if g.why:
        rows.append(GOODPUT_WHY.row(g.why))
    return rows


def _shape_table(shape) -> list[SummaryRow]:
    """The fabric's shape where it is not a tree (rows only for such a fabric)."""
    if shape is None:
        return []
    rows: list[SummaryRow] = [FABRIC.row(shape.kind)]
    if shape.kind == "rail-only":
        rows.append(RAILS.row(shape.rails))
    if shape.planes > 1:
        rows.append(PLANES.row(shape.planes))
        rows.append(PLANE_BANDWIDTH.row(shape.plane_injection_gb_per_s))
    dragonfly = shape.dragonfly
    if dragonfly is not None:
        rows += [
            DRAGONFLY_GROUPS.row(dragonfly.groups),
            GROUP_BANDWIDTH.row(dragonfly.global_gb_per_s_per_group),
            NEIGHBOUR_BANDWIDTH.row(dragonfly.minimal.neighbour_gb_per_s),
            VALIANT_GROUP_BANDWIDTH.row(dragonfly.valiant.alltoall_gb_per_s),
            DRAGONFLY_ROUTING.row(dragonfly.routing),
        ]
    return rows


def failed_text(failures: tuple[str, ...], describe: Callable[[str], str] = str, shown: int = 6,
                with_ids: bool = False) -> str:
    """The failures of a what-if in one short line, each in the design's words (`describe`: the
    caller's `describe_failure`, "1 of 16 × Spine") and, `with_ids`, with the id `--fail` takes
    beside them where the two differ: "1 of 16 × Spine (spines.sw:1)". A Select All ▸ Fail marks
    thousands: the first `shown`, then how many more."""
    def text(failure: str) -> str:
        words = describe(failure)
        return f"{words} ({failure})" if with_ids and words != failure else words

    more = len(failures) - shown
    return ", ".join(map(text, failures[:shown])) + (f" and {more:,} more" if more > 0 else "")


def part_label(result: Result, part_id: str) -> str:
    """A catalogue part as a person reads it, wherever the app or an export lists parts: its
    name with its id, "DDN AI400X2 (EXAScaler parallel file system appliance) (ddn-ai400x2)";
    the id alone for a part the catalogue does not name."""
    name = result.part_names.get(part_id)
    return f"{name} ({part_id})" if name and name != part_id else part_id


def parts_text(result: Result, parts: tuple[str, ...], named: bool = True) -> str:
    return ", ".join(part_label(result, part) if named else part for part in parts)


def unpriced_text(result: Result, parts: tuple[str, ...], named: bool = True) -> str:
    """What a capital category whose parts are all unpriced shows in place of a sum."""
    return "unpriced: " + parts_text(result, parts, named)


def derived_text(result: Result, named: bool = True) -> str:
    """The parts counted at a derived estimate (docs/costs.md), by what is estimated; "" for none."""
    cost = result.cost
    kinds = (("price", cost.derived_price_parts), ("power", cost.derived_power_parts))
    return "; ".join(f"{what}: {parts_text(result, parts, named)}" for what, parts in kinds if parts)


def cost_rows(result: Result, named: bool = True) -> list[tuple[str, Any, str]]:
    """Capital by category, yearly cost, cost per accelerator-hour and of the training run
    (present where something is priced), the parts without a price, and the parts counted at a
    derived estimate of their price or power."""
    return [row.triple() for row in _cost_table(result, named)]


def _cost_table(result: Result, named: bool = True) -> list[SummaryRow]:
    cost = result.cost
    rows: list[SummaryRow] = []
    if cost.capital_usd is not None:
        rows.append(CAPITAL.row(cost.capital_usd))
        for key, value in cost.capital_by_category_usd.items():
            shown = unpriced_text(result, cost.unpriced_by_category.get(key, ()), named) if value is None else value
            rows.append(CAPITAL_BY_CATEGORY[key].row(shown))
            if key == "racks_and_facility" and cost.facility_usd:
                # What of the capital is the building, not parts: the BOM CSV's total leaves it out.
                rows.append(FACILITY.row(cost.facility_usd))
        rows += [YEARLY.row(cost.yearly_usd), YEARLY_OPERATING.row(cost.yearly_operating_usd)]
        if cost.per_accelerator_hour_usd is not None:
            rows.append(PER_ACCELERATOR_HOUR.row(cost.per_accelerator_hour_usd))
        if cost.run_usd is not None:
            rows.append(RUN_COST.row(cost.run_usd))
            if cost.per_million_tokens_usd is not None:
                rows.append(PER_MILLION_TOKENS.row(cost.per_million_tokens_usd))
    if cost.run_energy_mwh is not None:
        rows.append(RUN_ENERGY.row(cost.run_energy_mwh))
    if cost.unpriced_parts:
        rows.append(UNPRICED.row(parts_text(result, cost.unpriced_parts, named)))
    derived = derived_text(result, named)
    if derived:
        rows.append(DERIVED.row(derived))
    return rows


def _size_label(size: int) -> str:
    for unit, value in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if size >= value and size % value == 0:
            return f"{size // value}{unit}"
    return f"{size} B"
