"""The best design of a declared space: a sweep with a goal ({"minimize": "cost.capital_usd"}) and
constraints ("training.days <= 60", "summary.power_kw <= 20000"). Points the bounds rule out are
never evaluated (`points.ruled_out`); of the rest, the best that meets every constraint wins.

The answer says why: the runner-up (the next best that meets the constraints, and by how much it
is worse) and the nearest miss (the best point on the goal that failed a constraint, and which)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from designer.explore.runner import Progress, run_sweep
from designer.explore.spec import Sweep
from designer.model.errors import DesignerError


class OptimizeError(DesignerError):
    pass


@dataclass
class Answer:
    goal: tuple[str, str]
    best: dict | None = None
    runner_up: dict | None = None
    nearest_miss: dict | None = None  # better on the goal than the winner, but failing a constraint
    evaluated: int = 0
    pruned: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)  # a few distinct errors, to say why points failed

    def explain(self, sweep: Sweep) -> str:
        sense, path = self.goal
        lines = []
        if self.best is None:
            lines.append(f"no design of the {self.evaluated + self.pruned + self.failed:,} points meets "
                         + (" and ".join(str(c) for c in sweep.constraints) or "the constraints"))
        else:
            lines.append(f"best: {_describe(self.best, sweep)}  {path} = {_shown(self.best[path])}")
            if self.runner_up is not None:
                gap = _gap(self.runner_up[path], self.best[path])
                lines.append(f"runner-up: {_describe(self.runner_up, sweep)}  {path} = {_shown(self.runner_up[path])}"
                             f" ({gap} {'higher' if sense == 'minimize' else 'lower'})")
        if self.nearest_miss is not None:
            misses = [c for c in sweep.constraints if not c.holds(_number(self.nearest_miss.get(c.path)))]
            failed = [str(c) for c in misses]
            lines.append(f"{'cheaper' if sense == 'minimize' else 'better'} but ruled out: "
                         f"{_describe(self.nearest_miss, sweep)}  {path} = {_shown(self.nearest_miss[path])}; "
                         f"fails {', '.join(failed)} "
                         f"({', '.join(_shown_figure(self.nearest_miss, c.path) for c in misses)})")
        lines.append(f"{self.evaluated:,} points evaluated, {self.pruned:,} ruled out before evaluating by bounds "
                     f"on power and peak compute, {self.failed:,} failed")
        lines += [f"  error: {text}" for text in self.errors]
        return "\n".join(lines)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _shown(value) -> str:
    number = _number(value)
    return "n/a" if number is None else f"{number:,.4g}"


def _shown_figure(row: dict, path: str) -> str:
    return f"{path} = {_shown(row.get(path))}"


def _gap(value, best) -> str:
    value, best = _number(value), _number(best)
    if value is None or best is None or best == 0:
        return "n/a"
    return f"{abs(value - best) / abs(best):.1%}"


def _describe(row: dict, sweep: Sweep) -> str:
    return ", ".join(f"{axis.removeprefix('param.').removeprefix('part.')}={row[axis]}" for axis in sweep.axes
                     if axis in row)


def optimize(sweep: Sweep, client, stop: threading.Event | None = None, on_progress=None,
             on_row: Callable[[dict], None] | None = None) -> tuple[Answer, Progress]:
    """The best point of `sweep` for its goal; `on_row` also sees every row (the app plots them)."""
    if sweep.goal is None:
        raise OptimizeError(f"{sweep.source}: $: an optimization needs a goal, "
                            "like {\"minimize\": \"cost.capital_usd\"}")
    sense, path = sweep.goal
    sign = 1.0 if sense == "minimize" else -1.0
    answer = Answer(goal=sweep.goal)
    feasible: list[tuple[float, int, dict, str]] = []  # the best two designs

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
        elif answer.nearest_miss is None or value < score(answer.nearest_miss):
            answer.nearest_miss = row

    progress = run_sweep(sweep, client, judge, prune=True, stop=stop, on_progress=on_progress)
    if feasible:
        answer.best = feasible[0][2]
        answer.runner_up = feasible[1][2] if len(feasible) > 1 else None
        if answer.nearest_miss is not None and score(answer.nearest_miss) >= feasible[0][0]:
            answer.nearest_miss = None  # no worse point "lacked" anything the winner had
    if not answer.evaluated and answer.failed and answer.errors:
        raise OptimizeError(f"every point failed: {answer.errors[0]}")
    return answer, progress


def recipe_of(row: dict) -> dict:
    return json.loads(row["design"])
