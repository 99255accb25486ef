"""Running a what-if: the degraded design evaluated with the healthy job (its plan on fewer
data-parallel replicas where it still fits, else the best plan that does), on a torus of
reconfigurable blocks the faster of in place and a slice of intact blocks, and each figure next
to the healthy one (`degraded`, `sections.Degraded`).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

from designer.engine.failures.bisection import uneven_bisection
from designer.engine.failures.compare import comparisons
from designer.engine.failures.degrade import components, degraded_design, weakened_accelerators
from designer.engine.failures.marks import failures_of
from designer.engine.failures.slices import Blocks, intact_blocks, largest_slice, reconfigurable_blocks, slice_design
from designer.engine.network import build_fabric
from designer.engine.result import Result
from designer.engine.sections import Degraded, Plan
from designer.engine.torus_lines import TorusLines
from designer.engine.workloads import WorkloadError
from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.model.errors import DesignError


@dataclass(frozen=True)
class DegradedRun:
    """The degraded design evaluated: `result` (its own Result, every collective row and size),
    its scale-out bisection weighed over copies that differ (`uneven_bisection`), the accelerators
    cut off, what could not be evaluated, and where the job runs (`placement`: on a torus of
    reconfigurable blocks, in place or moved to a slice of intact blocks, and why; else None)."""

    result: Result | None
    bisection: float | None
    cut_off: int
    plan: Plan | str | None
    why: str | None
    placement: str | None = None


def run_degraded(design: Design, catalog: Catalog, workload: dict, healthy: Result, evaluate,
                 model: dict) -> DegradedRun:
    """Evaluate the design with its failures (`settings["failures"]`) applied. `evaluate` is the
    engine's entry point (passed in: it calls this module); `model` the healthy job's model, kept (a
    preset sized to the design would change with its size). On a torus whose blocks meet through
    circuit switches (`reconfigurable_blocks`) the job may instead move to the largest slice of
    intact blocks (`largest_slice`): the faster of the two is kept (docs/goodput.md, "A torus of
    reconfigurable blocks")."""
    failures = failures_of(design)
    try:
        broken, cut_off, note = degraded_design(design, catalog, failures)
    except DesignError as exc:
        return DegradedRun(None, None, 0, None, str(exc))
    lines = _torus_lines(broken, catalog)
    if lines is not None and lines.split() is not None:
        return DegradedRun(None, None, 0, None, lines.split())
    training = {**(workload.get("training") or {}), "model": model}
    slowest = weakened_accelerators(design, broken, failures)
    left = sum(size * islands for size, islands, _ in components(broken))
    result, plan_note = _run_job(broken, catalog, workload, training, healthy, evaluate, slowest, left)
    placement = None
    blocks = reconfigurable_blocks(design, catalog)
    if blocks is not None:
        moved, placement = _slice_or_in_place(design, broken, lines, blocks, catalog, workload, training, healthy,
                                              evaluate, result)
        if moved is not None:
            (result, plan_note), broken, slowest, note = moved, None, (), None
    plan = result.training.plan if isinstance(result.training.plan, Plan | str) else None
    untimed = None if result.training.timed or not result.network.accelerators else result.training.why
    why = "; ".join(filter(None, (note, plan_note, untimed))) or None
    bisection = (uneven_bisection(broken, catalog, healthy.network, result.network, slowest) if broken is not None
                 else result.network.scale_out.bisection_gb_per_s if result.network.scale_out else None)
    return DegradedRun(result, bisection, cut_off, plan, why, placement)


def _run_job(design: Design, catalog: Catalog, workload: dict, training: dict, healthy: Result, evaluate,
             slowest: Collection[str], left: int) -> tuple[Result, str | None]:
    """`design` (what is left, or a slice of it) evaluated with the healthy job on its `left`
    accelerators (`_fewer_replicas`), else the best plan that fits; (result, what changed of the
    plan, or None)."""
    plan_note, result = None, None
    kept = _fewer_replicas(healthy.training, left) if left < healthy.network.accelerators else None
    if kept is not None:
        plan, working = kept
        result = _timed(evaluate, design, catalog, {**workload, "training": {**training, "plan": plan,
                                                                               "accelerators": working}}, slowest)
        dropped, idle = healthy.training.plan.dp - plan["dp"], left - working
        if result is not None and (dropped or idle):
            plan_note = (f"the healthy plan with {dropped:,} data-parallel replica{'s' if dropped != 1 else ''} fewer"
                         + (f", {idle:,} accelerator{'s' if idle != 1 else ''} idle" if idle else ""))
    elif training.get("plan") not in (None, "auto"):
        result = _timed(evaluate, design, catalog, {**workload, "training": training}, slowest)
    if result is None:
        # No healthy plan to keep, or it no longer fits: the best plan for what is left.
        result = evaluate(design, catalog, {**workload, "training": {**training, "plan": "auto"}}, slowest_of=slowest)
        if kept is not None or training.get("plan") not in (None, "auto"):
            plan_note = "the healthy plan no longer fits: the best plan that does"
    return result, plan_note


def _timed(evaluate, design: Design, catalog: Catalog, workload: dict, slowest: list[str]) -> Result | None:
    """The evaluation of `workload`'s plan, or None where it does not fit or cannot be timed."""
    try:
        result = evaluate(design, catalog, workload, slowest_of=slowest)
    except WorkloadError:
        return None
    return result if result.training.timed and result.training.fits else None


def _fewer_replicas(healthy, accelerators: int) -> tuple[dict, int] | None:
    """The healthy job's plan on `accelerators` (the degraded design's), as a job restarted after a
    failure runs it: the same tensor, pipeline and context layout, as many data-parallel replicas as
    the accelerators hold (a multiple of ep), the rest idle; with the global batch fixed each
    replica runs more micro-batches (a searched plan's micro-batch, ZeRO stage and recomputation
    are chosen again, a given plan's kept). (plan, accelerators it works on), or None without a timed
    healthy plan or room for one replica. Searching the degraded job's best plan instead can find a
    faster one than the healthy search did (9,984 GPUs divide as pp 13 where 10,000 do not), which
    the healthy cluster could have run on 9,984 of its GPUs: the failure would look like a gain."""
    plan = healthy.plan
    if not healthy.timed or not isinstance(plan, Plan):
        return None
    replica = plan.tp * plan.pp * plan.cp
    dp = min(plan.dp, accelerators // replica)
    dp -= dp % plan.ep
    if dp < 1:
        return None
    return {**plan.as_dict(), "dp": dp}, dp * replica


def degraded(design: Design, catalog: Catalog, workload: dict, healthy: Result, evaluate, model: dict) -> Degraded:
    """The degraded design's figures next to `healthy`'s (`run_degraded`)."""
    texts = tuple(f.text() for f in failures_of(design))
    run = run_degraded(design, catalog, workload, healthy, evaluate, model)
    if run.result is None:
        return Degraded(texts, healthy.network.accelerators, 0, (), None, why=run.why)
    figures = comparisons(healthy, run.result, run.bisection)
    return Degraded(texts, run.result.network.accelerators, run.cut_off, figures, run.plan, why=run.why,
                    placement=run.placement)


def _tokens(result: Result) -> float | None:
    t = result.training
    return t.tokens_per_s if t.timed and t.fits else None


def _torus_lines(design: Design, catalog: Catalog) -> TorusLines | None:
    """The lines of a torus of blocks that failures broke or thinned (`engine.torus_lines`)."""
    if (design.settings.get("template") or {}).get("name") != "torus":
        return None
    return build_fabric(design, catalog).torus_lines


def _slice_or_in_place(design: Design, broken: Design, lines: TorusLines | None, blocks: Blocks, catalog: Catalog,
                       workload: dict, training: dict, healthy: Result, evaluate, in_place: Result):
    """The job on the largest slice of intact blocks, where it trains faster (tokens/s) than in
    place (`lines` the in-place torus's broken lines): ((result, plan note) or None, the placement
    text saying which and why)."""
    missing = healthy.network.accelerators - in_place.network.accelerators
    where = f"in place around {missing:,} missing chip{'s' if missing != 1 else ''}" if missing \
        else "in place on the degraded torus"
    here = _tokens(in_place)
    here_text = f"{here:,.0f} tokens/s" if here is not None else "no plan timed"
    # Lines a failed circuit switch or link broke (`torus_lines`): what the job in place runs on.
    damage = f"; {lines.text()}" if lines is not None else ""
    intact = intact_blocks(design, broken, blocks.group)
    if intact is None:
        return None, (f"runs {where} ({here_text}){damage}: the failure reaches what every block shares, "
                      "no slice avoids it")
    shape = largest_slice(blocks.counts, intact)
    if shape is None:
        return None, f"runs {where} ({here_text}){damage}: no block is left intact for a slice"
    dims = " × ".join(str(b * c) for b, c in zip(blocks.block, shape))
    count, chips = math.prod(shape), math.prod(b * c for b, c in zip(blocks.block, shape))
    what = f"a {dims} slice of {count:,} intact {blocks.text()} block{'s' if count != 1 else ''} ({chips:,} chips)"
    sliced = slice_design(design, blocks, shape)
    result, plan_note = _run_job(sliced, catalog, workload, training, healthy, evaluate, (), chips)
    there = _tokens(result)
    if there is not None and (here is None or there > here):
        return (result, plan_note), (f"job moved to {what}, its torus closed again through the circuit switches: "
                                     f"{there:,.0f} tokens/s against {here_text} {where}")
    there_text = f"{there:,.0f} tokens/s" if there is not None else "no plan that fits"
    return None, f"runs {where} ({here_text}){damage}: faster than on {what}, {there_text}"
