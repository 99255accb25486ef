"""The best design of a declared space: a sweep with a goal ({"minimize": "cost.capital_usd"}) and
constraints ("training.days <= 60", "summary.power_kw <= 20000"). Points the bounds rule out are
never evaluated (`points.ruled_out`): those that cannot meet a constraint, and, once two designs
meet them all, those whose goal is bounded beyond the second best (branch and bound: a point
costing more than the runner-up so far can be neither winner nor runner-up). Of the rest, the
best that meets every constraint wins.

The answer says why: the runner-up (the next best that meets the constraints, and by how much it
is worse) and the nearest miss (the best point on the goal that failed a constraint, and which)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from designer.explore.points import BEST_SO_FAR
from designer.explore.runner import BATCH, Progress, run_sweep
from designer.explore.spec import Constraint, Sweep
from designer.model.errors import DesignerError

if TYPE_CHECKING:  # Dask is imported where a sweep runs, not when the module loads
    from distributed import Client


MISSES_KEPT = 2_000  # failing points kept to choose the nearest miss from (the closest to the winner survive)


class OptimizeError(DesignerError):
    pass


@dataclass
class Answer:
    goal: tuple[str, str]
    best: dict | None = None
    runner_up: dict | None = None
    nearest_miss: dict | None = None  # the closest to the winner of those better on the goal that fail a constraint
    evaluated: int = 0
    pruned: int = 0
    pruned_by: dict[str, int] = field(default_factory=dict)  # points ruled out, by the figure whose bound did it
    failed: int = 0
    errors: list[str] = field(default_factory=list)  # a few distinct errors, to say why points failed

    def explain(self, sweep: Sweep) -> str:
        sense, path = self.goal
        lines = []
        if self.best is None:
            lines.append(f"no design of the {self.evaluated + self.pruned + self.failed:,} points meets "
                         + (" and ".join(str(c) for c in sweep.constraints) or "the constraints"))
        else:
            held = [c.path for c in sweep.constraints if c.path != path]
            lines.append(f"best: {_describe(self.best, sweep)}  {path} = {_shown(self.best[path])}"
                         + "".join(f", {_shown_figure(self.best, p)}" for p in held))
            if self.runner_up is not None:
                gap = _gap(self.runner_up[path], self.best[path])
                lines.append(f"runner-up: {_describe(self.runner_up, sweep)}  {path} = {_shown(self.runner_up[path])}"
                             f" ({gap} {'higher' if sense == 'minimize' else 'lower'})"
                             + "".join(f", {_shown_figure(self.runner_up, p)}" for p in held))
        if self.nearest_miss is not None:
            misses = [c for c in sweep.constraints if not c.holds(_number(self.nearest_miss.get(c.path)))]
            gap = "" if self.best is None else \
                f" ({_gap(self.nearest_miss[path], self.best[path])} {'lower' if sense == 'minimize' else 'higher'})"
            lines.append(f"closest {'cheaper' if sense == 'minimize' else 'better'} design that misses: "
                         f"{_describe(self.nearest_miss, sweep)}  {path} = {_shown(self.nearest_miss[path])}{gap}; "
                         f"fails {', '.join(str(c) for c in misses)} "
                         f"({', '.join(_shown_figure(self.nearest_miss, c.path) for c in misses)})")
        by = ", ".join(f"{count:,} by {reason}" for reason, count in
                       sorted(self.pruned_by.items(), key=lambda item: -item[1]))
        if path.startswith("cost."):
            # A money figure leaves unpriced parts out: say which, for the designs the answer names.
            for name, row in (("best", self.best), ("runner-up", self.runner_up)):
                if row is not None and row.get("unpriced"):
                    lines.append(f"note: the {name}'s {path} leaves out its unpriced parts ({row['unpriced']})")
        lines.append(f"{self.evaluated:,} points evaluated, {self.pruned:,} ruled out before evaluating"
                     + (f" ({by})" if by else "") + f", {self.failed:,} failed")
        lines += [f"  error: {text}" for text in self.errors]
        return "\n".join(lines)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _shown(value: Any) -> str:
    number = _number(value)
    if number is None:
        return "n/a"
    return f"{number:,.0f}" if abs(number) >= 1e4 else f"{number:,.4g}"


def _shown_figure(row: dict, path: str) -> str:
    return f"{path} = {_shown(row.get(path))}"


def _gap(value: Any, best: Any) -> str:
    value, best = _number(value), _number(best)
    if value is None or best is None or best == 0:
        return "n/a"
    share = abs(value - best) / abs(best)
    return f"{share:.1%}" if share >= 0.01 else f"{share * 100:.2g}%"


def _describe(row: dict, sweep: Sweep) -> str:
    return ", ".join(f"{axis.removeprefix('param.').removeprefix('part.')}={row[axis]}" for axis in sweep.axes
                     if axis in row)


def optimize(sweep: Sweep, client: Client, stop: threading.Event | None = None,
             on_progress: Callable[[Progress], None] | None = None,
             on_row: Callable[[dict], None] | None = None, batch: int = BATCH) -> tuple[Answer, Progress]:
    """The best point of `sweep` for its goal; `on_row` also sees every row (the app plots them).
    `batch`: points per Dask task (the fewer in flight, the sooner the best so far prunes)."""
    if sweep.goal is None:
        raise OptimizeError(f"{sweep.source}: $: an optimization needs a goal, "
                            "like {\"minimize\": \"cost.capital_usd\"}")
    sense, path = sweep.goal
    sign = 1.0 if sense == "minimize" else -1.0
    answer = Answer(goal=sweep.goal)
    feasible: list[tuple[float, int, dict, str]] = []  # the best two designs
    misses: list[tuple[float, int, dict]] = []  # evaluated points failing a constraint, better than the best so far

    def score(row: dict) -> float | None:
        value = _number(row.get(path))
        return None if value is None else sign * value

    def judge(row: dict[str, Any]) -> None:
        if on_row is not None:
            on_row(row)
        if row["error"] is not None:
            if row["error"].startswith("figure '"):
                raise OptimizeError(row["error"])  # the same on every point: say so at once
            answer.failed += 1
            if len(answer.errors) < 3 and row["error"] not in answer.errors:
                answer.errors.append(row["error"])
            return
        if row["pruned"] is not None:
            answer.pruned += 1
            reason = _pruning_reason(row["pruned"])
            answer.pruned_by[reason] = answer.pruned_by.get(reason, 0) + 1
            return
        answer.evaluated += 1
        value = score(row)
        if value is None:
            return
        if row["meets"]:
            # The runner-up is another design, not the winner with a slower plan.
            design = json.dumps({k: v for k, v in json.loads(row["design"]).items() if k != "workload"}, sort_keys=True)
            same = [entry for entry in feasible if entry[3] == design]
            if same and same[0][:2] <= (value, row["point"]):
                return
            feasible[:] = [entry for entry in feasible if entry[3] != design]
            feasible.append((value, row["point"], row, design))
            feasible.sort(key=lambda entry: entry[:2])
            del feasible[2:]
        else:
            misses.append((value, row["point"], row))
            if len(misses) > MISSES_KEPT:
                # Only misses better than the best so far can be the answer's: keep the best of them
                # (wanted if nothing meets the constraints) and those closest to the best so far.
                kept = sorted(m for m in misses if not feasible or m[0] < feasible[0][0])
                quarter = MISSES_KEPT // 4
                misses[:] = kept if len(kept) <= 2 * quarter else kept[:quarter] + kept[-quarter:]

    def beyond() -> tuple[Constraint, ...]:
        if len(feasible) < 2:
            return ()
        return (Constraint(path, "<=" if sense == "minimize" else ">=", sign * feasible[-1][0]),)

    progress = run_sweep(sweep, client, judge, prune=True, stop=stop, on_progress=on_progress, beyond=beyond,
                         batch=batch)
    if feasible:
        answer.best = feasible[0][2]
        answer.runner_up = feasible[1][2] if len(feasible) > 1 else None
    # The miss closest to the winner on the goal: the design one step better that did not make it.
    # (Without a winner, the best on the goal of those that miss.)
    better = [m for m in misses if not feasible or m[0] < feasible[0][0]]
    if better:
        answer.nearest_miss = (max if feasible else min)(better, key=lambda m: m[:2])[2]
    if not answer.evaluated and answer.failed and answer.errors:
        raise OptimizeError(f"every point failed: {answer.errors[0]}")
    return answer, progress


def _pruning_reason(text: str) -> str:
    """What ruled a point out: the figure of a constraint, or the best two so far on the goal."""
    best = text.startswith(BEST_SO_FAR)
    figure = text.removeprefix(BEST_SO_FAR).split(" is ", 1)[0]
    return f"the best two so far on {figure}" if best else figure


def recipe_of(row: dict) -> dict:
    return json.loads(row["design"])
