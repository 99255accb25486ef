"""Goodput: how much of the wall clock a training job trains, given how often its parts fail.

A job on every accelerator of the design depends on every part: any failure stops it (a series
system), so its interruption rate is the sum over part classes of count × failures per year
(`resources/reliability/failure-rates.json`). It checkpoints its model and optimizer state to the
design's storage (`settings["storage"]`: a catalogue storage part and how many) at the interval
that minimises lost time (Young/Daly), and each interruption costs a restart, the checkpoint
read, half an interval of lost work on average and, for a failed server without a hot spare
(`settings["spares"]`), the wait for its repair. docs/goodput.md gives the formulas and sources.
"""

from __future__ import annotations

import json
import math
from functools import cache

from designer.engine.result import rounded
from designer.engine.sections import BillOfMaterials, Goodput, Inventory, Training
from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.paths import reliability_file

HOURS_PER_YEAR = 8760.0
# Classes whose failure takes a server out of the job: with no spare server the job waits for it.
SERVER_CLASSES = ("accelerator", "server", "nic")


@cache
def reliability() -> dict:
    """The shipped failure rates and recovery assumptions."""
    return json.loads(reliability_file().read_text(encoding="utf-8"))


def part_counts(design: Design, copies: dict, chains: dict, inventory: Inventory, bom: BillOfMaterials,
                catalog: Catalog) -> dict:
    """Physical parts per reliability class. Switches inside a server are the server's own."""
    items = design.items
    network_switches = sum(copies[i.id] for i in items.values() if i.kind == "switch"
                           and not any(items[a].kind == "server" for a in chains[i.id][1:]))
    storage = design.settings.get("storage") or {}
    return {"accelerator": inventory.accelerators, "server": inventory.servers, "nic": inventory.nics,
            "switch": network_switches, "transceiver": sum(bom.transceivers_by_medium.values()),
            "cable": sum(bom.cables_by_medium.values()),
            "storage": storage.get("count", 1) if storage.get("part") in catalog else 0}


def spare_available(spares: int, servers_in_repair: float) -> float:
    """The chance a failed server finds a hot spare: failed servers under repair at a time are
    Poisson with mean `servers_in_repair` (an M/G/∞ queue), and a spare is free when fewer than
    `spares` are away."""
    if spares <= 0:
        return 0.0
    term = total = math.exp(-servers_in_repair)
    for k in range(1, spares):
        term *= servers_in_repair / k
        total += term
    return min(1.0, total)


def young_daly_interval(write_s: float, mtbi_s: float) -> float:
    """Daly's first-order optimum checkpoint interval (compute time between checkpoints):
    sqrt(2 δ M) − δ while δ < M / 2, else M (Daly, FGCS 2006; Young, CACM 1974)."""
    if write_s >= mtbi_s / 2:
        return mtbi_s
    return math.sqrt(2 * write_s * mtbi_s) - write_s


def effective_ratio(interval_s: float, write_s: float, restart_s: float, rate_per_s: float) -> float:
    """The share of wall-clock time that is useful training: every interval τ of work costs τ + δ,
    and each interruption (rate λ) loses a restart R and half an interval on average:
    T_wall = T_work (1 + δ/τ) / (1 − λ (R + (τ + δ) / 2)); 0 when failures outrun progress."""
    lost = rate_per_s * (restart_s + (interval_s + write_s) / 2)
    if lost >= 1 or interval_s <= 0:
        return 0.0
    return (1 - lost) / (1 + write_s / interval_s)


def goodput(design: Design, catalog: Catalog, copies: dict, chains: dict, inventory: Inventory,
            bom: BillOfMaterials, training: Training) -> Goodput:
    """The goodput section; `copies` and `chains` as `evaluate` has them (multiplicities, parent
    chains)."""
    data = reliability()
    rates = {name: entry["failures_per_year"] for name, entry in data["classes"].items()}
    counts = part_counts(design, copies, chains, inventory, bom, catalog)
    per_year = {name: counts[name] * rates[name] for name in rates}
    rate_per_h = sum(per_year.values()) / HOURS_PER_YEAR
    recovery = data["recovery"]
    spares = int(design.settings.get("spares") or 0)
    server_rate_per_h = sum(per_year[name] for name in SERVER_CLASSES) / HOURS_PER_YEAR
    in_repair = server_rate_per_h * recovery["repair_hours"]
    found = spare_available(spares, in_repair)
    server_share = server_rate_per_h / rate_per_h if rate_per_h else 0.0
    common = dict(interruptions_per_day=rounded(rate_per_h * 24),
                  mtbi_hours=rounded(1 / rate_per_h) if rate_per_h else None,
                  by_class={name: rounded(value / 365) for name, value in per_year.items() if value},
                  parts=dict(counts), spares=spares, spare_found=rounded(found))
    storage = design.settings.get("storage") or {}
    part = catalog.get(storage.get("part"))
    if part is None or part.kind != "storage":
        return Goodput(**common, why="the design names no storage to checkpoint to (settings: storage)")
    if not training.parameters:
        return Goodput(**common, why="no training job to checkpoint")
    units = storage.get("count", 1)
    checkpoint_gb = training.parameters * recovery["checkpoint_bytes_per_parameter"] / 1e9
    write_s = checkpoint_gb / (units * part.number("write_gb_per_s"))
    read_s = checkpoint_gb / (units * part.number("read_gb_per_s"))
    restart_s = recovery["restart_s"] + read_s + server_share * (1 - found) * recovery["repair_hours"] * 3600
    mtbi_s = 3600 / rate_per_h if rate_per_h else math.inf
    interval_s = young_daly_interval(write_s, mtbi_s) if rate_per_h else None
    ratio = effective_ratio(interval_s, write_s, restart_s, rate_per_h / 3600) if rate_per_h else 1.0
    days = training.days / ratio if training.days and ratio > 0 else None
    why = None
    if days is None and training.days:
        why = ("failures outrun progress: a checkpoint takes longer to write than the mean time between interruptions"
               if write_s >= mtbi_s else "failures outrun progress: it never ends")
    return Goodput(**common, storage=part.id, checkpoint_gb=rounded(checkpoint_gb),
                   checkpoint_write_s=rounded(write_s), checkpoint_read_s=rounded(read_s),
                   checkpoint_interval_s=rounded(interval_s), restart_s=rounded(restart_s),
                   effective_ratio=rounded(ratio), days=rounded(days), why=why)
