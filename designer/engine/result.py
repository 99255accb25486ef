"""The engine's answer: an immutable record of one evaluation, one typed section per attribute
(`designer.engine.sections`); `as_dict()`, written from the fields, is the JSON `evaluate --json` prints."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from designer.engine.sections import (
    BillOfMaterials,
    CollectiveRow,
    Compute,
    Cost,
    Degraded,
    DesignInfo,
    Finding,
    Goodput,
    Inventory,
    Memory,
    Network,
    Power,
    Section,
    Training,
    Utilization,
    figure_field,
    read_only,
)


def rounded(value: float | None, digits: int = 6) -> float | None:
    """A figure for the result: `digits` significant digits; None where it is missing or not
    finite (JSON has no infinity, and an untimed figure must not look like a number)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}") if value else 0.0


@dataclass(frozen=True, slots=True)
class Result(Section):
    """Every section of one evaluation; `seconds` is how long it took (not part of the answer)."""

    design: DesignInfo
    inventory: Inventory
    bom: BillOfMaterials
    compute: Compute
    memory: Memory
    power: Power
    cost: Cost
    lint: tuple[Finding, ...]
    network: Network
    collectives: tuple[CollectiveRow, ...]
    training: Training
    utilization: Utilization
    goodput: Goodput | None = None
    degraded: Degraded | None = figure_field(omit="none", default=None)  # only when parts are marked failed
    # The catalogue name of every part the sections name by id (BOM, cost, goodput), for readers.
    part_names: Mapping[str, str] = field(default_factory=lambda: read_only(()))
    seconds: float = figure_field("s", omit="always", default=0.0, compare=False)
