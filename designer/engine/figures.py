"""Figures of a result addressed by dotted JSON path (`training.days`, `collectives.2.busbw_gb_per_s`,
`summary.power_kw`): what sweeps keep, constraints test and comparisons line up.

A path is read from the JSON of `evaluate --json` plus a `summary` object holding the summary rows
(`engine.summary`) under the keys they declare, so a section another part of the engine adds
(`cost.capital_usd`, `goodput.days`) is addressable without code here. Which way a figure is better
is what its field (`sections.figure_field`) or summary row (`summary.SummaryFigure`) declares."""

from __future__ import annotations

import collections.abc
import dataclasses
import re
import types
import typing
from typing import Any

from designer.engine.result import Result
from designer.engine.sections import HIGHER, LOWER, json_fields
from designer.engine.summary import figure_of_key, summary_figures, summary_table
from designer.model.errors import DesignerError


class FigureError(DesignerError):
    """A figure path that names nothing the engine computes."""

    def __init__(self, path: str, known: list[str] | None = None):
        self.path = path
        hint = f" (it has {', '.join(known[:12])}{', …' if len(known) > 12 else ''})" if known else ""
        super().__init__(f"figure '{path}' is not computed{hint}")


# Unit words appended to a key made from a row's label ("Power", "kW" → power_kw); counts and plain text add none.
_UNIT_KEYS = {"kW": "kw", "USD": "usd", "GB": "gb", "GB/s": "gb_per_s", "TB/s": "tb_per_s", "TFLOPS": "tflops",
              "TOPS": "tops", "TFLOP/s": "tflops", "tokens/s": "", "s": "s", "days": "days", "hops": "hops",
              ":1": "", "count": "", "fraction": "", "accelerators": "", "": ""}


def summary_key(metric: str, unit: str) -> str:
    """The key of a summary row called `metric`: the key a row of that label declares
    (`summary.SummaryFigure`); for a row repeated per part, level or collective, its name without
    the parenthesised choice (an allreduce's chosen algorithm differs between designs, the row is
    the same) in snake case, plus its unit, which is how the declared keys were first made.
    `figures` and sweeps read the rows' declared keys (`summary.summary_table`)."""
    declared = _declared_labels().get((metric, unit))
    if declared is not None:
        return declared
    words = re.sub(r"[^a-z0-9]+", "_", re.sub(r"\([^)]*\)", "", metric).lower()).strip("_")
    suffix = _UNIT_KEYS.get(unit, re.sub(r"[^a-z0-9]+", "_", unit.lower()).strip("_"))
    if suffix and not words.endswith(suffix) and suffix not in words.split("_"):
        words = f"{words}_{suffix}"
    return words


def _declared_labels() -> dict[tuple[str, str], str]:
    """(label, unit) → key of every summary row declared once (not repeated per part or level)."""
    return {(f.label, f.unit): f.key for f in summary_figures() if "{}" not in f.key}


def summary(result: Result) -> dict[str, Any]:
    """The summary rows by their declared keys (a later row of a key replaces an earlier one)."""
    return {row.key: row.value for row in summary_table(result, named=False)}


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


_SIGN = {HIGHER: 1, LOWER: -1}


def direction(path: str) -> int:
    """+1 if a larger value is better, -1 if a smaller one is, 0 if neither (or the path names no
    figure), as the figure's field or summary row declares. A summary key alone ("power_kw", as
    Compare's rows are keyed) is read as `summary.power_kw`."""
    parts = path.split(".")
    if parts[0] == "summary" or parts[0] not in json_fields(Result):
        figure_ = figure_of_key(".".join(parts[1:]) if parts[0] == "summary" else path)
        return _SIGN.get(figure_.better, 0) if figure_ is not None else 0
    return _SIGN.get(declared_better(Result, parts), 0)


def declared_better(record_type: type, parts: list[str]) -> str | None:
    """Which way is better for the figure at the JSON path `parts` under a record of `record_type`:
    the declaration of the field it is in (a mapping's or list's entries are their field's)."""
    node: Any = record_type
    better = None
    i = 0
    while i < len(parts):
        node = _unwrapped(node)
        origin = typing.get_origin(node)
        if dataclasses.is_dataclass(node):
            fields = json_fields(node)
            nested = ".".join(parts[i:i + 2])
            if parts[i] in fields or nested in fields:
                key = parts[i] if parts[i] in fields else nested
                field_, node = fields[key]
                better = field_.metadata.get("better")
                i += key.count(".") + 1
                continue
            derived = [d for f, _ in fields.values() for d in f.metadata.get("then", ()) if d.name == parts[i]]
            return derived[0].better if derived and i == len(parts) - 1 else None
        if origin is tuple and parts[i].isdigit():
            node = typing.get_args(node)[0]
        elif origin in (dict, collections.abc.Mapping):
            node = typing.get_args(node)[1]
        else:
            return None  # below a plain value, or an entry of a row that is not a record
        i += 1
    return better


def _unwrapped(annotation: Any) -> Any:
    """A union's record member (`Plan | str | None` → Plan), else its first member that is not None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return next((a for a in members if dataclasses.is_dataclass(a)), members[0])
    return annotation


__all__ = ["FigureError", "declared_better", "direction", "figure", "figures", "number", "summary",
           "summary_key"]
