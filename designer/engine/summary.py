"""The summary of a result as (metric, value, unit) rows: the CSV export, the CLI table and the
app's summary table all read these, so the three always agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from designer.engine.cost import CATEGORIES
from designer.engine.result import Result

PRECISION_LABELS = {
    "fp64": "FP64", "fp64_tensor": "FP64 tensor", "fp32": "FP32", "tf32": "TF32", "tf32_sparse": "TF32 sparse",
    "bf16": "BF16/FP16", "bf16_sparse": "BF16/FP16 sparse", "fp8": "FP8", "fp8_sparse": "FP8 sparse",
    "int8": "INT8", "int8_sparse": "INT8 sparse",
}


def summary_rows(result: Result, named: bool = True) -> list[tuple[str, Any, str]]:
    """The rows; a part is written as its catalogue name with its id ("NVIDIA H100 SXM5 80GB
    (h100-sxm)", `part_label`), or by its id alone when not `named`: the figure keys
    (`figures.summary_key`) are made from those, so they stay what they were."""
    inv, compute, memory = result.inventory, result.compute, result.memory
    rows: list[tuple[str, Any, str]] = [
        ("Accelerators", inv.accelerators, "count"),
    ]
    for model, count in inv.accelerator_models.items():
        rows.append((f"Accelerators: {part_label(result, model) if named else model}", count, "count"))
    rows += [
        ("Servers", inv.servers, "count"),
        ("Switches", inv.switches, "count"),
        ("NICs", inv.nics, "count"),
        ("Racks", inv.racks, "count"),
        ("Links", inv.links, "count"),
    ]
    for precision, value in compute.peak_tflops.items():
        unit = "TOPS" if precision.startswith("int") else "TFLOPS"
        rows.append((f"Peak {PRECISION_LABELS[precision]}", value, unit))
    rows += [
        ("HBM capacity", memory.hbm_gib, "GiB"),
        ("HBM bandwidth", memory.hbm_tb_per_s, "TB/s"),
    ]
    if memory.sram_gib:
        rows.append(("On-chip SRAM", memory.sram_gib, "GiB"))
    rows.append(("Power", result.power.total_kw, "kW"))
    # Storage and hot spares are settings, not drawn: say what of the total they draw.
    if result.power.storage_kw:
        rows.append(("  of which checkpoint storage", result.power.storage_kw, "kW"))
    if result.power.spares_kw:
        rows.append(("  of which hot spare servers", result.power.spares_kw, "kW"))
    rows += performance_rows(result)
    rows += goodput_rows(result)
    rows += cost_rows(result, named)
    rows.append(("Lint errors", sum(1 for f in result.lint if f.severity == "error"), "count"))
    rows.append(("Lint warnings", sum(1 for f in result.lint if f.severity == "warning"), "count"))
    return rows


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
    rows: list[tuple[str, Any, str]] = []
    network = result.network
    up, out = network.scale_up, network.scale_out
    if up is not None:
        rows.append(("Scale-up bandwidth per accelerator", up.injection_gb_per_s, "GB/s"))
        rows.append(("Scale-up domain", up.domain_accelerators, "accelerators"))
        if out.media:
            rows.append(("Scale-out bandwidth per accelerator", out.injection_gb_per_s, "GB/s"))
            if out.bisection_gb_per_s is not None:
                rows.append(("Scale-out bisection bandwidth", out.bisection_gb_per_s, "GB/s"))
            for level in out.oversubscription:
                if level.oversubscription is not None:
                    rows.append((f"Oversubscription at {level.name}", level.oversubscription, ":1"))
            rows += _shape_rows(network.shape)
        if network.diameter_hops is not None:
            rows.append(("Diameter", network.diameter_hops, "hops"))
    for row in result.collectives:
        if row.algorithm != "auto" or row.time_s is None:
            continue
        size = _size_label(row.bytes)
        rows.append((f"{row.op} {size} ({row.chosen}) busbw", row.busbw_gb_per_s, "GB/s"))
    training = result.training
    if training.model:
        rows.append(("Training model", training.model, ""))
        if training.step_time_s is not None:
            rows += [("Training step time", training.step_time_s, "s"),
                     ("Training TFLOP/s per GPU", training.tflops_per_gpu, "TFLOP/s"),
                     ("Training MFU", training.mfu, "fraction"),
                     ("Training tokens per second", training.tokens_per_s, "tokens/s"),
                     ("Days to train", training.days, "days"),
                     ("Memory per GPU", training.memory_per_gpu_gib.total, "GiB")]
        elif training.timed is False and training.fits is not False:
            # The reason is a sentence: the Training tab and the text report show it in full.
            rows.append(("Training timed", f"no: {_short_reason(training.why)}", ""))
        else:
            rows.append(("Training fits in memory", "no", ""))
    return rows


def _short_reason(why: str | None) -> str:
    if why and "no compute at" in why:
        return "an accelerator has no compute at the training precision"
    return "accelerators not all connected"


# (goodput field, row name, unit): the summary's goodput rows, and a comparison's goodput block
# (`engine.compare`, keyed by `goodput.FIELD`). Days without failures is the row "Days to train".
GOODPUT_FIGURES = (
    ("days", "Days to train with failures", "days"),
    ("effective_ratio", "Effective training time ratio", "fraction"),
    ("interruptions_per_day", "Interruptions per day", "/day"),
    ("mtbi_hours", "Mean time between interruptions", "h"),
    ("checkpoint_write_s", "Checkpoint write time", "s"),
    ("checkpoint_interval_s", "Checkpoint interval (Young/Daly)", "s"),
    ("restart_s", "Restart and recovery per interruption", "s"),
    ("spares", "Hot spare servers", "count"),
)


def goodput_rows(result: Result) -> list[tuple[str, Any, str]]:
    """The goodput headline (docs/goodput.md): the figures the engine computed for this design,
    and why the others are missing (no storage, no training job, failures outrunning progress)."""
    g = result.goodput
    if g is None:
        return []
    rows = [(name, getattr(g, field), unit) for field, name, unit in GOODPUT_FIGURES if getattr(g, field) is not None]
    if g.why:
        rows.append(("Why some goodput figures are missing", g.why, ""))
    return rows


def _shape_rows(shape) -> list[tuple[str, Any, str]]:
    """The fabric's shape where it is not a tree (rows only for such a fabric)."""
    if shape is None:
        return []
    rows: list[tuple[str, Any, str]] = [("Scale-out fabric", shape.kind, "")]
    if shape.kind == "rail-only":
        rows.append(("Rails (joined only over scale-up)", shape.rails, "count"))
    if shape.planes > 1:
        rows.append(("Fabric planes", shape.planes, "count"))
        rows.append(("Scale-out bandwidth per accelerator per plane", shape.plane_injection_gb_per_s, "GB/s"))
    dragonfly = shape.dragonfly
    if dragonfly is not None:
        rows += [
            ("Dragonfly groups", dragonfly.groups, "count"),
            ("Global bandwidth per group", dragonfly.global_gb_per_s_per_group, "GB/s"),
            ("Global bandwidth to one other group (minimal)", dragonfly.minimal.neighbour_gb_per_s, "GB/s"),
            ("Global bandwidth per group (Valiant)", dragonfly.valiant.alltoall_gb_per_s, "GB/s"),
            ("Dragonfly routing", dragonfly.routing, ""),
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
    cost = result.cost
    rows: list[tuple[str, Any, str]] = []
    if cost.capital_usd is not None:
        rows.append(("Capital cost", cost.capital_usd, "USD"))
        for key, value in cost.capital_by_category_usd.items():
            shown = unpriced_text(result, cost.unpriced_by_category.get(key, ()), named) if value is None else value
            rows.append((f"Capital: {CATEGORIES[key].lower()}", shown, "USD"))
            if key == "racks_and_facility" and cost.facility_usd:
                # What of the capital is the building, not parts: the BOM CSV's total leaves it out.
                rows.append(("  of which facility", cost.facility_usd, "USD"))
        rows += [("Yearly cost", cost.yearly_usd, "USD/year"),
                 ("Yearly operating cost", cost.yearly_operating_usd, "USD/year")]
        if cost.per_accelerator_hour_usd is not None:
            rows.append(("Cost per accelerator-hour", cost.per_accelerator_hour_usd, "USD/h"))
        if cost.run_usd is not None:
            rows.append(("Training run cost", cost.run_usd, "USD"))
            if cost.per_million_tokens_usd is not None:
                rows.append(("Cost per million tokens", cost.per_million_tokens_usd, "USD"))
    if cost.run_energy_mwh is not None:
        rows.append(("Training run energy", cost.run_energy_mwh, "MWh"))
    if cost.unpriced_parts:
        rows.append(("Unpriced parts (not in the costs)", parts_text(result, cost.unpriced_parts, named), ""))
    derived = derived_text(result, named)
    if derived:
        rows.append(("Derived estimates (not published figures)", derived, ""))
    return rows


def _size_label(size: int) -> str:
    for unit, value in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if size >= value and size % value == 0:
            return f"{size // value}{unit}"
    return f"{size} B"
