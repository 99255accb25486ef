"""Text of the results panel's figures: SI and binary sizes, durations, counts, memory, plans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from designer.engine.sections import Bottleneck, MemoryPerGpu, Plan, Training

NOT_COMPUTED = "not computed"


def si(value: float, unit: str, digits: int = 3) -> str:
    """1.5e-5, "s" → "15 µs"; 2.1e9, "B" → "2.1 GB"."""
    if value == 0:
        return f"0 {unit}"
    prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    for factor, prefix in prefixes:
        if abs(value) >= factor * 0.9999:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def binary_bytes(value: float) -> str:
    """nccl-tests style binary sizes: 1048576 → "1 MiB"."""
    for factor, suffix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if value >= factor:
            return f"{value / factor:.3g} {suffix}"
    return f"{value:.0f} B"


def count(value: float) -> str:
    """300e9 → "300 billion"."""
    for factor, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if value >= factor:
            return f"{value / factor:,.3g} {word}"
    return f"{value:,.0f}"


def memory_text(memory: MemoryPerGpu | None, capacity_gib: float | None) -> str:
    """"61.5 GiB of 80 GiB (weights 17.5, gradients 17.5, …)": binary units, as the engine counts."""
    if memory is None:
        return NOT_COMPUTED
    detail = ", ".join(f"{name} {gib:,.1f}" for name, gib in memory.parts() if gib)
    text = f"{memory.total:,.1f} GiB" + (f" of {capacity_gib:,.4g} GiB" if capacity_gib else "")
    return f"{text} ({detail})" if detail else text


PLAN_NAMES = {"tp": "TP", "pp": "PP", "vp": "VP", "dp": "DP", "cp": "CP", "sp": "SP", "ep": "EP", "mb": "micro-batch",
              "recompute": "recompute", "zero": "ZeRO", "attention": "attention"}
OVERLAP_TEXT = {"none": "exposed", "partial": "half hidden", "full": "hidden"}


def plan_text(plan: Plan | str | Mapping[str, Any] | None) -> str:
    """"TP 8 · PP 4 · DP 16 · micro-batch 1 · recompute selective · ZeRO 1 (chosen by the auto
    plan)"; a plan as requested (when the workload could not be read) is shown as it was given."""
    if plan is None:
        return NOT_COMPUTED
    if isinstance(plan, str):
        return plan
    figures = dict(plan.as_dict() if isinstance(plan, Plan) else plan)
    chosen = figures.pop("auto", False)
    text = " · ".join(f"{PLAN_NAMES.get(name, name)} {value}" for name, value in figures.items() if value is not None)
    return f"{text} (chosen by the auto plan)" if chosen else text


def overlap_text(overlap: Mapping[str, str] | None) -> str:
    """"TP exposed · DP hidden · PP hidden · CP hidden · EP exposed": what the step time assumed."""
    if overlap is None:
        return NOT_COMPUTED
    return " · ".join(f"{PLAN_NAMES.get(part, part)} {OVERLAP_TEXT.get(choice, choice)}"
                      for part, choice in overlap.items())


def bottleneck_text(bottleneck: Bottleneck) -> str:
    """"leaf-uplink (scale-out)"; "no path (scale-up)" where the ranks are not joined."""
    name = bottleneck.name or bottleneck.link or ""
    return f"{name} ({bottleneck.tier})" if bottleneck.tier else name


def fits_text(training: Training) -> str:
    if training.fits:
        return "yes"
    return f"NO — {training.why}" if training.why else "NO"


# A compute figure in the engine's unit, read in the unit of its size: a cluster's peak is
# millions of TFLOPS, which reads as EFLOPS. The engine's rows and the CSV keep their fixed unit.
COMPUTE_UNITS = {"TFLOPS": ("TFLOPS", "PFLOPS", "EFLOPS"), "TOPS": ("TOPS", "POPS", "EOPS"),
                 "TFLOP/s": ("TFLOP/s", "PFLOP/s", "EFLOP/s")}


def compute_scale(magnitude: float, unit: str) -> tuple[float, str]:
    """The factor and the unit a figure of this size in `unit` reads best in: (19,788,000, "TFLOPS")
    → (1e-6, "EFLOPS"); a unit that is not compute stays as it is, factor 1."""
    names = COMPUTE_UNITS.get(unit)
    if names is None:
        return 1.0, unit
    step = 0 if abs(magnitude) < 1e3 else 1 if abs(magnitude) < 1e6 else 2
    return 10.0 ** (-3 * step), names[step]


def compute_text(value: float, unit: str = "TFLOPS") -> str:
    """19,788,000 TFLOPS → "19.8 EFLOPS"; 989 → "989 TFLOPS"."""
    factor, shown = compute_scale(value, unit)
    return f"{value * factor:,.3g} {shown}" if factor != 1 else f"{value:,.4g} {shown}"


# Money figures: the engine's units "USD", "USD/year", "USD/h".
def is_money(unit: str) -> bool:
    return unit == "USD" or unit.startswith("USD/")


_MONEY_SCALES = ((1e9, "billion"), (1e6, "million"), (1e3, "thousand"))


def money_scale(magnitude: float, unit: str = "USD") -> tuple[float, str]:
    """The factor and the axis unit of money of this size: 1.44e8 USD → (1e-6, "US$ million");
    "USD/year" → "US$ million/year". SI prefixes are wrong for money ("M$", "k$")."""
    per = unit.removeprefix("USD")
    for factor, word in _MONEY_SCALES:
        if abs(magnitude) >= factor:
            return 1 / factor, f"US$ {word}{per}"
    return 1.0, f"US${per}"


def money_text(value: float, unit: str = "USD") -> str:
    """1.44e8 → "$144 million"; 52,400 → "$52,400"; 2.2539 → "$2.25"; "USD/year" adds "/year"."""
    per = unit.removeprefix("USD")
    sign, size = ("-" if value < 0 else ""), abs(value)
    if size >= 1e6:
        factor, word = next((f, w) for f, w in _MONEY_SCALES if size >= f)
        return f"{sign}${size / factor:,.3g} {word}{per}"
    return f"{sign}${size:,.0f}{per}" if size >= 100 else f"{sign}${size:,.2f}{per}"


def figure_text(value: float, unit: str) -> str:
    """A figure with its unit, as a reader wants it: money in dollars, compute in the unit of its
    size, a fraction as a percentage, a count bare."""
    if is_money(unit):
        return money_text(value, unit)
    if unit in COMPUTE_UNITS:
        return compute_text(value, unit)
    if unit == "fraction":
        return f"{value * 100:.3g} %"
    if unit in ("", "count"):
        return f"{value:,.4g}" if isinstance(value, float) and value != int(value) else f"{value:,.0f}"
    return f"{value:,.4g} {unit}"


def axis_scale(magnitude: float, unit: str) -> tuple[float, str]:
    """The factor a plot axis scales its ticks by and the unit its label names, for values up to
    `magnitude` in `unit`: money in US$ million, compute in EFLOPS, power in MW, a fraction in %."""
    if is_money(unit):
        return money_scale(magnitude, unit)
    if unit in COMPUTE_UNITS:
        return compute_scale(magnitude, unit)
    if unit == "kW" and abs(magnitude) >= 1e4:
        return 1e-3, "MW"
    if unit == "fraction":
        return 100.0, "%"
    return 1.0, "" if unit == "count" else unit
