"""Derived views of a Result that the app shows: per-link utilization of a phase, the bottleneck
link, per-GPU time split. Plain functions of the engine's result, so they are tested without Qt
and every screen reads the same answer."""

from __future__ import annotations

from designer.engine.result import Result


def phase_names(result: Result) -> list[str]:
    """The utilization phases of the result, in the engine's order."""
    return [phase["phase"] for phase in result["utilization"]["phases"]]


def link_utilization(result: Result, phase: str | None = None) -> dict[str, float]:
    """Utilization (0..1) of every drawn link in `phase`; with no phase, each link's peak over all
    phases. Every copy of a drawn link carries the same load, so one figure stands for all."""
    out: dict[str, float] = {}
    for entry in result["utilization"]["phases"]:
        if phase is not None and entry["phase"] != phase:
            continue
        for link in entry["links"]:
            value = link["utilization"]
            if value is not None and value > out.get(link["link"], -1.0):
                out[link["link"]] = value
    return out


def bottleneck_link(result: Result) -> str | None:
    """The link that limits the largest collective the engine chose an algorithm for ("auto" rows;
    None where nothing was timed)."""
    rows = [row for row in result["collectives"] if row["algorithm"] == "auto" and row.get("bottleneck")]
    if not rows:
        return None
    biggest = max(rows, key=lambda row: row["bytes"])
    return biggest["bottleneck"]["link"]


def gpu_time_split(result: Result) -> dict[str, float] | None:
    """Compute / communication / idle as fractions of a training step, averaged over every
    accelerator (each drawn accelerator weighted by its copies); None where training was not
    timed."""
    gpus = result["utilization"]["gpus"]
    total = sum(gpu["count"] for gpu in gpus)
    if not total:
        return None
    return {key: sum(gpu[key] * gpu["count"] for gpu in gpus) / total for key in ("compute", "communication", "idle")}
