"""Figures of a result addressed by dotted JSON path (`training.days`, `collectives.2.busbw_gb_per_s`,
`summary.power_kw`): what sweeps keep, constraints test and comparisons line up.

A path is read from the JSON of `evaluate --json` plus a `summary` object holding the summary rows
(`engine.summary`) under keys made from their names and units, so a section another part of the
engine adds (`cost.capital_usd`, `goodput.days`) is addressable without code here."""

from __future__ import annotations

import re
from typing import Any

from designer.engine.result import Result
from designer.engine.summary import summary_rows
from designer.model.errors import DesignerError


class FigureError(DesignerError):
    """A figure path that names nothing the engine computes."""

    def __init__(self, path: str, known: list[str] | None = None):
        self.path = path
        hint = f" (it has {', '.join(known[:12])}{', …' if len(known) > 12 else ''})" if known else ""
        super().__init__(f"figure '{path}' is not computed{hint}")


# Unit words appended to a summary row's key ("Power", "kW" → power_kw); counts and plain text add none.
_UNIT_KEYS = {"kW": "kw", "USD": "usd", "GB": "gb", "GB/s": "gb_per_s", "TB/s": "tb_per_s", "TFLOPS": "tflops",
              "TOPS": "tops", "TFLOP/s": "tflops", "tokens/s": "", "s": "s", "days": "days", "hops": "hops",
              ":1": "", "count": "", "fraction": "", "accelerators": "", "": ""}


def summary_key(metric: str, unit: str) -> str:
    """The key of a summary row: its name without the parenthesised choice (an allreduce's chosen
    algorithm differs between designs, the row is the same) in snake case, plus its unit."""
    words = re.sub(r"[^a-z0-9]+", "_", re.sub(r"\([^)]*\)", "", metric).lower()).strip("_")
    suffix = _UNIT_KEYS.get(unit, re.sub(r"[^a-z0-9]+", "_", unit.lower()).strip("_"))
    if suffix and not words.endswith(suffix) and suffix not in words.split("_"):
        words = f"{words}_{suffix}"
    return words


def summary(result: Result) -> dict[str, Any]:
    return {summary_key(metric, unit): value for metric, value, unit in summary_rows(result, named=False)}


def figures(result: Result) -> dict:
    """Every figure of a result: the JSON of `evaluate --json` plus `summary`."""
    return {**result.as_dict(), "summary": summary(result)}


def figure(tree: dict, path: str) -> Any:
    """The value at a dotted path (list entries by index); FigureError if the path names nothing.
    A figure the engine leaves empty for this design (days of a plan that does not fit) is None."""
    node: Any = tree
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            known = list(node) if isinstance(node, dict) else None
            raise FigureError(path, known)
    return node


def number(tree: dict, path: str) -> float | None:
    """A figure as a float, None where it is empty or not a number."""
    value = figure(tree, path)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# Which way is better, read from the figure's name: lower cost (whatever it is per: "cost per
# million tokens" is a cost), power, energy, time and oversubscription; higher throughput,
# bandwidth and utilization; counts, capacities and chosen intervals are neither.
_MONEY = re.compile(r"(usd|cost)")
_NEITHER = re.compile(r"interval")
_LOWER = re.compile(r"(power|_kw$|energy|_mwh$|days|_s$|seconds|time|oversubscription|diameter|hops|lint|"
                    r"bubble|exposed|interruptions)")
_HIGHER = re.compile(r"(tflops|tops|gb_per_s|tb_per_s|busbw|algbw|bandwidth|tokens|mfu|throughput|"
                     r"effective_ratio|effective_training|goodput|mtbi_hours|mean_time_between)")


def direction(path: str) -> int:
    """+1 if a larger value is better, -1 if a smaller one is, 0 if neither."""
    name = path.rsplit(".", 1)[-1]
    if _MONEY.search(name):
        return -1
    if _NEITHER.search(name):
        return 0
    if _HIGHER.search(name):
        return 1
    if _LOWER.search(name):
        return -1
    return 0
