"""The work an evaluation will do, estimated before it starts, and the budget it must fit in.

The engine is linear in what is drawn: about 45 µs of one core per drawn item or link (the
32×32×32 flat torus, 41,000 items and 98,000 links, evaluates in 6.7 s of CPU), and the automatic
plan search times each candidate plan in about 0.5 ms, the cost of a dozen drawn items. An
evaluation estimated above MAX_WORK is refused before it starts, with its figures, so the command
line answers within 10 s and the app's worker never runs for minutes (docs/limits.md)."""

from __future__ import annotations

from designer.engine.training import plan_candidates
from designer.model.design import Design
from designer.model.errors import DesignerError

MAX_WORK = 150_000  # units: one drawn item or link
PLAN_UNITS = 12  # one plan timed by the auto search
SECONDS_PER_UNIT = 45e-6
_LARGEST_DOMAIN = 64  # the widest tensor parallelism the search tries: an upper bound on its plans


class BudgetError(DesignerError):
    """An evaluation that would take too long, refused before it starts."""


def check(design: Design, accelerators: int, model: dict, plan) -> None:
    drawn = len(design.items) + len(design.links)
    plans = sum(1 for _ in plan_candidates(accelerators, _LARGEST_DOMAIN, model)) \
        if plan == "auto" and accelerators else 0
    work = drawn + PLAN_UNITS * plans
    if work <= MAX_WORK:
        return
    searched = f" + {plans:,} plans to search" if plans else ""
    advice = "give a fixed plan" if drawn <= MAX_WORK else "draw repeated parts once, in a group with a count"
    raise BudgetError(f"too large to evaluate: {len(design.items):,} items + {len(design.links):,} links{searched} "
                      f"= {work:,} units (about {work * SECONDS_PER_UNIT:.0f} s), above the budget of {MAX_WORK:,}; "
                      f"{advice} (docs/limits.md)")
