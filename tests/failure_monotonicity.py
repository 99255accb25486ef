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
- switch tiers in the oversubscription table: degraded ≤ healthy (removing switches never adds a
  tier; a switch left with no link down towards the accelerators is dropped, split-out copies too);
- every collective size's time: degraded ≥ ρ × healthy, ρ the smallest ratio of latency steps a
  smaller job may save: (n' − 1) / (n − 1) over the ranks (a ring's 2 (n − 1) steps), (r' − 1) /
  (r − 1) inside a scale-up domain of r ranks (a hierarchical or tree algorithm's steps there: a
  GPU of every server failed leaves 7 of 8), (m' − 1) / (m − 1) across m domains. A collective over
  fewer ranks takes fewer steps, so a small message can honestly finish sooner; the bytes each
  rank moves fall by no more (2 (n − 1) / n × S for an allreduce) through links no faster, so no
  time falls by more than ρ. Figures are rounded to 6 significant digits: 1e-5 relative slack;
- tokens per second (fixed global batch and model): degraded ≤ healthy, the step allowed to fall
  only by what fewer ranks save of its communication: step_d ≥ step_h − (1 − ρ) × (step_h −
  bubble_h) (the communication is the exposed part and, hidden, at most the compute it hides
  behind; the compute itself never falls: fewer replicas run as many micro-batches or more). The
  degraded job keeps the healthy plan's layout and drops data-parallel replicas
  (failures.run_degraded); a fresh search over the degraded job's size could find a plan the
  healthy search never tried (it runs plans over every accelerator: 9,984 GPUs divide as
  pp 13, 10,000 do not), which the healthy cluster could have run on a subset of its GPUs: that
  would be a gain of the search, not of the failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from designer.engine import evaluate
from designer.engine.evaluate import training_model
from designer.engine.failures import Failure, run_degraded
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


def _step_ratio(healthy, degraded) -> float:
    """The smallest ratio of latency steps the degraded job's collectives may save (the rules)."""
    def ratio(new: int, old: int) -> float:
        return min(1.0, (new - 1) / (old - 1)) if old > 1 and new >= 1 else 1.0

    up_h, up_d = healthy.scale_up, degraded.scale_up
    ratios = [ratio(degraded.accelerators, healthy.accelerators)]
    if up_h is not None and up_d is not None:
        ratios += [ratio(up_d.domain_accelerators, up_h.domain_accelerators), ratio(up_d.domains, up_h.domains)]
    return min(ratios)


def _above(degraded: float | None, healthy: float | None) -> bool:
    return degraded is not None and healthy is not None and degraded > healthy * (1 + REL) + 1e-9


def violations(healthy: Healthy, catalog: Catalog, failure: Failure) -> list[str]:
    """What the degraded design breaks of the rules above, one line each ([] when none)."""
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
    check("switch tiers", True, _tiers(h), _tiers(d))
    if run.cut_off == 0 and not _touches_down_side(design, failure):
        check("worst oversubscription", False, _worst(h), _worst(d))
    rho = _step_ratio(h.network, d.network)
    times = {row.bytes: row.time_s for row in d.collectives if row.algorithm == "auto" and row.time_s}
    for row in h.collectives:
        if row.algorithm == "auto" and row.time_s and row.bytes in times:
            check(f"{row.op} {row.bytes:,} B time", False, rho * row.time_s, times[row.bytes])
    if h.training.timed and d.training.timed:
        # Communication that may shrink: the exposed part and, at most, the compute it hides behind.
        shrinking = h.training.step_time_s - (h.training.bubble_s or 0.0)
        floor = h.training.step_time_s - (1 - rho) * shrinking
        check("training step time", False, floor, d.training.step_time_s)
        if floor > 0:
            check("tokens per second", True, h.training.tokens_per_s * h.training.step_time_s / floor,
                  d.training.tokens_per_s)
    return out


def _tiers(result) -> int:
    return len(result.network.scale_out.oversubscription) if result.network.scale_out else 0


def _worst(result) -> float | None:
    if result.network.scale_out is None:
        return None
    ratios = [lv.oversubscription for lv in result.network.scale_out.oversubscription if lv.oversubscription]
    return max(ratios) if ratios else None


__all__ = ["Healthy", "failure_targets", "healthy_of", "violations"]
