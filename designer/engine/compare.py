"""Two or more evaluated designs side by side, each against the first: every summary row with its
difference, ratio and whether it is better or worse; the cost rows (capital, yearly, per
accelerator-hour, the run; cheaper is better) and the goodput rows (days with failures, ...) in
blocks of their own; the bill of materials changes; and the curves (allreduce busbw by size, the
training step's parts) to overlay.

Plain data, no Qt: the CLI prints it (text, JSON, CSV) and the app's Compare window shows it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from designer.engine.figures import direction, summary_key
from designer.engine.result import Result
from designer.engine.summary import GOODPUT_FIGURES, cost_rows, format_value, goodput_rows, summary_rows


@dataclass(frozen=True, slots=True)
class ComparedRow:
    """One summary row across the designs. `differences` and `ratios` are against the first design
    (None where either value is missing or not a number, or the first is 0 for a ratio); `verdicts`
    are "better", "worse", "same" or "" (no direction, or nothing to compare)."""

    key: str
    metric: str
    unit: str
    values: tuple
    differences: tuple
    ratios: tuple
    verdicts: tuple


@dataclass(frozen=True, slots=True)
class BomChange:
    """A bill of materials line whose quantity differs: `change` is "added" (not in the first
    design), "removed" (not in this one) or "changed"; quantities per design (0 where absent)."""

    category: str
    part: str
    name: str
    quantities: tuple[int, ...]
    changes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    names: tuple[str, ...]
    rows: tuple[ComparedRow, ...]  # the summary rows but the cost ones
    bom: tuple[BomChange, ...]
    cost: tuple[ComparedRow, ...]
    goodput: tuple[ComparedRow, ...]
    collectives: tuple[tuple[tuple[int, float | None], ...], ...]  # per design: (bytes, busbw GB/s) of auto rows
    steps: tuple[tuple[tuple[str, float], ...], ...]  # per design: (step part, seconds)

    def as_dict(self) -> dict:
        def row_dict(row: ComparedRow) -> dict:
            return {"key": row.key, "metric": row.metric, "unit": row.unit, "values": list(row.values),
                    "differences": list(row.differences), "ratios": list(row.ratios), "verdicts": list(row.verdicts)}

        return {
            "designs": list(self.names),
            "summary": [row_dict(row) for row in self.rows],
            "cost": [row_dict(row) for row in self.cost],
            "goodput": [row_dict(row) for row in self.goodput],
            "bom_changes": [{"category": c.category, "part": c.part, "name": c.name, "quantities": list(c.quantities),
                             "changes": list(c.changes)} for c in self.bom],
            "collectives": [[{"bytes": size, "busbw_gb_per_s": busbw} for size, busbw in curve]
                            for curve in self.collectives],
            "training_step": [dict(parts) for parts in self.steps],
        }


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def compared_row(key: str, metric: str, unit: str, values: list, better: int | None = None) -> ComparedRow:
    better = direction(key) if better is None else better
    first = _number(values[0])
    differences, ratios, verdicts = [], [], []
    for value in values:
        number = _number(value)
        if first is None or number is None:
            differences.append(None)
            ratios.append(None)
            verdicts.append("")
            continue
        difference = number - first
        differences.append(difference)
        ratios.append(number / first if first else None)
        if difference == 0:
            verdicts.append("same")
        elif better == 0:
            verdicts.append("")
        else:
            verdicts.append("better" if (difference > 0) == (better > 0) else "worse")
    return ComparedRow(key, metric, unit, tuple(values), tuple(differences), tuple(ratios), tuple(verdicts))


# The priced BOM's total, which the summary's cost rows leave out.
_COST_EXTRA = (("cost.total_usd", "Hardware (priced BOM)", "USD"),)
# The summary's goodput rows, keyed by their field of the goodput section ("goodput.days").
_GOODPUT = tuple((f"goodput.{field}", name, unit) for field, name, unit in GOODPUT_FIGURES)


def compare(results: list[Result], names: list[str]) -> Comparison:
    """`results[0]` is the reference every other design is compared with."""
    if len(results) < 2:
        raise ValueError("a comparison needs two or more designs")
    # Keyed by the rows naming parts by id (the keys of `figures`), shown with their names.
    per_design = [{summary_key(m, u): shown for (m, _v, u), shown in zip(summary_rows(r, named=False), summary_rows(r))}
                  for r in results]
    costs = {summary_key(m, u) for r in results for m, _v, u in cost_rows(r, named=False)}
    goodput = {summary_key(m, u) for r in results for m, _v, u in goodput_rows(r)}
    keys: dict[str, tuple[str, str]] = {}
    for rows in per_design:
        for key, (metric, _value, unit) in rows.items():
            keys.setdefault(key, (metric, unit))
    for key, (metric, unit) in keys.items():
        keys[key] = (_each_choice(metric, [d[key][0] if key in d else None for d in per_design], names), unit)
    rows = {key: compared_row(key, metric, unit, [d[key][1] if key in d else None for d in per_design])
            for key, (metric, unit) in keys.items()}
    sections = [r.as_dict() for r in results]
    cost = (*(row for key, row in rows.items() if key in costs), *_section_rows(sections, _COST_EXTRA))
    return Comparison(tuple(names), tuple(row for key, row in rows.items() if key not in costs | goodput),
                      _bom_changes(results),
                      cost, _section_rows(sections, _GOODPUT), tuple(_busbw_curve(r) for r in results),
                      tuple(r.training.step_parts() for r in results))


def _each_choice(metric: str, metrics: list[str | None], names: list[str]) -> str:
    """A row's name where the designs' own names for it differ in their parenthesised choice (one
    allreduce is a ring, the other's NVLS): each design's choice, by name, so no cell is labelled
    with another design's algorithm. "allreduce 8G (A: ring, B: nvls) busbw"."""
    choices = [None if m is None else (re.search(r"\(([^)]*)\)", m) or [None, None])[1] for m in metrics]
    if len({c for c in choices if c is not None}) < 2:
        return metric
    each = ", ".join(f"{name}: {choice}" for name, choice in zip(names, choices) if choice is not None)
    return re.sub(r"\([^)]*\)", f"({each})", metric, count=1)


def _section_rows(sections: list[dict], figures: tuple) -> tuple[ComparedRow, ...]:
    """The rows of `figures` (path, name, unit) that some design has a value for."""
    out = []
    for path, metric, unit in figures:
        section, field = path.split(".")
        values = [(s.get(section) or {}).get(field) for s in sections]
        if any(value is not None for value in values):
            out.append(compared_row(path, metric, unit, values))
    return tuple(out)


def _bom_changes(results: list[Result]) -> tuple[BomChange, ...]:
    lines: dict[tuple[str, str], str] = {}
    quantities = []
    for result in results:
        counted: dict[tuple[str, str], int] = {}
        for row in result.bom.rows:
            key = (row.category, row.part)
            counted[key] = counted.get(key, 0) + row.quantity
            lines.setdefault(key, row.name)
        quantities.append(counted)
    out = []
    for (category, part), name in lines.items():
        counts = tuple(q.get((category, part), 0) for q in quantities)
        if len(set(counts)) == 1:
            continue
        changes = tuple("" if count == counts[0] else "added" if counts[0] == 0 else "removed" if count == 0
                        else "changed" for count in counts)
        out.append(BomChange(category, part, name, counts, changes))
    return tuple(out)


def _busbw_curve(result: Result) -> tuple[tuple[int, float | None], ...]:
    rows = [row for row in result.collectives if row.algorithm == "auto"]
    if rows:
        op, ranks = rows[0].op, rows[0].ranks
        rows = [row for row in rows if row.op == op and row.ranks == ranks]
    return tuple((row.bytes, row.busbw_gb_per_s) for row in rows)


# -- text ---------------------------------------------------------------------------------------

def _shown(value) -> str:
    return "" if value is None else format_value(value)


def _ratio(value) -> str:
    return "" if value is None else f"×{value:.3g}"


_MARK = {"better": "+", "worse": "-", "same": "=", "": ""}


def comparison_table(comparison: Comparison) -> str:
    """The comparison as a text table: each design's value, then for every design after the first
    its difference, ratio and + (better) / - (worse)."""
    header = ["metric", "unit", *comparison.names]
    for name in comparison.names[1:]:
        header += [f"Δ {name}", "ratio", ""]
    body = []
    for row in (*comparison.rows, *comparison.cost, *comparison.goodput):
        cells = [row.metric, row.unit, *(_shown(v) for v in row.values)]
        for i in range(1, len(row.values)):
            cells += [_shown(row.differences[i]), _ratio(row.ratios[i]), _MARK[row.verdicts[i]]]
        body.append(cells)
    widths = [max(len(str(line[c])) for line in [header, *body]) for c in range(len(header))]
    lines = ["  ".join(str(cell).ljust(width) if c < 2 else str(cell).rjust(width)
                       for c, (cell, width) in enumerate(zip(line, widths))).rstrip() for line in [header, *body]]
    if comparison.bom:
        lines += ["", "bill of materials changes:"]
        for change in comparison.bom:
            counts = " → ".join(f"{q:,}" for q in change.quantities)
            what = ", ".join(sorted({c for c in change.changes if c}))
            lines.append(f"  {change.category:<12} {change.part:<24} {counts}  ({what})")
    return "\n".join(lines) + "\n"

