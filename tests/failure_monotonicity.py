"""A failure never makes the cluster look better: the rules a degraded design's figures obey
against the healthy design's, shared by `tests/test_failure_monotonicity.py` (a few drawn failures
per example) and `benchmarks/failure_monotonicity.py` (many, every violation listed).

The rules (docs/goodput.md, "A failure never helps"), for every failure of an item, a link or a
link medium, whole (`ID`), one copy (`ID:1`) or a share of its copies (`ID:5%`):

- accelerators in the job: degraded ≤ healthy;
- scale-out bisection and scale-up domain bisection: degraded ≤ healthy. Removing hardware
  never raises a cut's capacity, and a balanced cut of what is left is a cut of the healthy
  design that some links no longer cross;
- worst oversubscription: degraded ≥ healthy, when the failure takes nothing off the leaves'
  down side (no accelerator cut off, no server, NIC, accelerator or link to one failed):
  losing up-links or switches above concentrates the same demand on fewer links; losing
  servers lowers the demand a leaf sends up as well, which may honestly lower the ratio;
- every collective size's bus bandwidth: degraded ≤ the better of the healthy bus bandwidth over
  all ranks and the healthy fabric's over its first n' ranks (n' the accelerators the degraded job
  keeps). A ring over fewer ranks takes fewer latency steps (2 (n' − 1) instead of 2 (n − 1)), so
  a small message can honestly run faster over fewer ranks; the healthy fabric could run the same
  smaller communicator, and the failure cannot beat that. Figures are rounded to 6 significant
  digits: 1e-5 relative slack;
- tokens per second (fixed global batch and model): degraded ≤ healthy, when both are timed
  and the degraded job keeps the healthy plan. With a plan of its own (the job shrank to a count
  the healthy plan does not divide) the rule is degraded ≤ what the healthy fabric gives the same
  plan on as many of its accelerators — the healthy job could have chosen it on a subset. The
  engine's auto search runs plans over every accelerator, so that figure is computed here by
  evaluating the healthy design cut down to the degraded job's size with no failed part.
"""

from __future__ import annotations

from dataclasses import dataclass

from designer.engine import evaluate
from designer.engine.evaluate import training_model
from designer.engine.failures import Failure, degraded_design, run_degraded
from designer.model.catalog import Catalog
from designer.model.design import Design

REL = 1e-5
DOWN_SIDE_KINDS = ("accelerator", "server", "nic")


@dataclass(frozen=True)
class Healthy:
    """One example's healthy result, its workload and its model, computed once."""

    design: Design
    result: object
    workload: dict
    model: dict


def healthy_of(design: Design, catalog: Catalog) -> Healthy:
    workload = design.settings.get("workload") or {}
    result = evaluate(design, catalog, workload)
    model = training_model(dict(workload.get("training") or {}), result.network.accelerators)
    return Healthy(design, result, workload, model)


def failure_targets(design: Design) -> list[str]:
    """Every item, link and link medium a failure may name, in a stable order."""
    media = sorted({link.medium for link in design.links.values()})
    return sorted(design.items) + sorted(design.links) + media


def _touches_down_side(design: Design, failure: Failure) -> bool:
    items = design.items
    if failure.target in items:
        held = {failure.target} | {i.id for i in design.descendants(failure.target)}
        return any(items[i].kind in DOWN_SIDE_KINDS for i in held)
    if failure.target in design.links:
        link = design.links[failure.target]
        return any(items[end].kind in DOWN_SIDE_KINDS for end in (link.a, link.b))
    return any(items[end].kind in DOWN_SIDE_KINDS for link in design.links.values()
               if link.medium == failure.target for end in (link.a, link.b))


def _busbw_by_size(result) -> dict[int, float]:
    return {row.bytes: row.busbw_gb_per_s for row in result.collectives
            if row.algorithm == "auto" and row.busbw_gb_per_s is not None}


def _above(degraded: float | None, healthy: float | None) -> bool:
    return degraded is not None and healthy is not None and degraded > healthy * (1 + REL) + 1e-9


def violations(healthy: Healthy, catalog: Catalog, failure: Failure, cache: dict | None = None) -> list[str]:
    """What the degraded design breaks of the rules above, one line each ([] when none)."""
    cache = {} if cache is None else cache
    design = healthy.design
    broken = Design(design.name, design.description, dict(design.items), dict(design.links),
                    {**design.settings, "failures": [failure.setting()]})
    run = run_degraded(broken, catalog, healthy.workload, healthy.result, evaluate, healthy.model)
    if run.result is None:
        return []
    h, d = healthy.result, run.result
    out = []

    def check(name: str, worse_is_lower: bool, hv, dv) -> None:
        if (_above(dv, hv) if worse_is_lower else _above(hv, dv)):
            out.append(f"{design.name} --fail {failure.text()}: {name} {hv} → {dv}")

    check("accelerators in the job", True, h.network.accelerators, d.network.accelerators)
    h_out = h.network.scale_out.bisection_gb_per_s if h.network.scale_out else None
    check("scale-out bisection", True, h_out, run.bisection)
    if h_out is None and run.bisection:
        out.append(f"{design.name} --fail {failure.text()}: scale-out bisection None → {run.bisection}")
    check("scale-up domain bisection", True, h.network.scale_up.bisection_gb_per_s if h.network.scale_up else None,
          d.network.scale_up.bisection_gb_per_s if d.network.scale_up else None)
    if run.cut_off == 0 and not _touches_down_side(design, failure):
        check("worst oversubscription", False, _worst(h), _worst(d))
    n = d.network.accelerators
    if n and n < h.network.accelerators:
        key = ("ranks", n)
        if key not in cache:
            spec = {**(healthy.workload.get("collective") or {}), "ranks": n}
            cache[key] = _busbw_by_size(evaluate(design, catalog, {**healthy.workload, "collective": spec}))
        fewer = cache[key]
    else:
        fewer = {}
    healthy_busbw = _busbw_by_size(h)
    for size, busbw in _busbw_by_size(d).items():
        bound = max(healthy_busbw.get(size, 0.0), fewer.get(size, 0.0))
        check(f"allreduce-like busbw at {size} B", True, bound or None, busbw)
    if h.training.timed and d.training.timed:
        check("tokens per second", True, h.training.tokens_per_s, d.training.tokens_per_s)
    return out


def _worst(result) -> float | None:
    if result.network.scale_out is None:
        return None
    ratios = [lv.oversubscription for lv in result.network.scale_out.oversubscription if lv.oversubscription]
    return max(ratios) if ratios else None


__all__ = ["Healthy", "degraded_design", "failure_targets", "healthy_of", "violations"]
