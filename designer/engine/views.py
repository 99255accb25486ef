"""Derived views of a Result that the app shows: per-link utilization of a phase, the bottleneck
link, per-GPU time split, link loads per tier, collective rows per communicator. Plain functions
of the engine's result, so they are tested without Qt and every screen reads the same answer."""

from __future__ import annotations

from designer.engine.result import Result
from designer.engine.sections import CollectiveRow, LinkLoad


def phase_names(result: Result) -> list[str]:
    """The utilization phases of the result, in the engine's order."""
    return [phase.phase for phase in result.utilization.phases]


def link_utilization(result: Result, phase: str | None = None) -> dict[str, float]:
    """Utilization (0..1) of every drawn link in `phase`; with no phase, each link's peak over all
    phases. Every copy of a drawn link carries the same load, so one figure stands for all."""
    out: dict[str, float] = {}
    for entry in result.utilization.phases:
        if phase is not None and entry.phase != phase:
            continue
        for link in entry.links:
            value = link.utilization
            if value is not None and value > out.get(link.link, -1.0):
                out[link.link] = value
    return out


def bottleneck_link(result: Result) -> str | None:
    """The link that limits the largest collective timed: the engine's own choice of algorithm
    ("auto" rows) where it made one, else the largest of the algorithms the workload fixed; where
    no collective names one, the busiest link of any phase (None when nothing carries load)."""
    timed = [row for row in result.collectives if row.bottleneck is not None]
    rows = [row for row in timed if row.algorithm == "auto"] or timed
    if rows:
        return max(rows, key=lambda row: row.bytes).bottleneck.link
    loads = link_utilization(result)
    busiest = max(loads, key=loads.get, default=None)
    return busiest if busiest is not None and loads[busiest] > 0 else None


def gpu_time_split(result: Result) -> dict[str, float] | None:
    """Compute / communication / idle as fractions of a training step, averaged over every
    accelerator (each drawn accelerator weighted by its copies); None where training was not
    timed."""
    gpus = result.utilization.gpus
    total = sum(gpu.count for gpu in gpus)
    if not total:
        return None
    return {key: sum(getattr(gpu, key) * gpu.count for gpu in gpus) / total
            for key in ("compute", "communication", "idle")}


def tier_link_loads(result: Result, phase: str | None = None) -> dict[str, list[LinkLoad]]:
    """The drawn links of each tier with their load in `phase`; with no phase, each link at its
    busiest phase. Tiers and links in the order the engine lists them."""
    busiest: dict[str, LinkLoad] = {}
    for entry in result.utilization.phases:
        if phase is not None and entry.phase != phase:
            continue
        for load in entry.links:
            seen = busiest.get(load.link)
            if seen is None or load.utilization > seen.utilization:
                busiest[load.link] = load
    by_tier: dict[str, list[LinkLoad]] = {}
    for load in busiest.values():
        by_tier.setdefault(load.tier, []).append(load)
    return by_tier


def communicators(result: Result) -> list[tuple[str, int]]:
    """(operation, ranks) of every communicator the collectives were timed for: allreduce first,
    then by name, larger communicators first."""
    keys = {(row.op, row.ranks) for row in result.collectives}
    return sorted(keys, key=lambda key: (key[0] != "allreduce", key[0], -key[1]))


def collective_rows(result: Result, op: str, ranks: int) -> dict[str, list[CollectiveRow]]:
    """The rows of one communicator by algorithm ("auto" holds the engine's choice per size)."""
    by_algorithm: dict[str, list[CollectiveRow]] = {}
    for row in result.collectives:
        if row.op == op and row.ranks == ranks:
            by_algorithm.setdefault(row.algorithm, []).append(row)
    return by_algorithm
