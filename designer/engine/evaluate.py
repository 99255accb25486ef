"""evaluate(): the one entry point from a design snapshot to an immutable Result."""

from __future__ import annotations

import time

from designer.engine import inventory as inv
from designer.engine.result import Result, freeze
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design
from designer.model.lint import lint


def evaluate(design: Design, catalog: Catalog | None = None, workload: dict | None = None) -> Result:
    """Evaluate a design. The design is read, never changed; pass a snapshot if it may change."""
    started = time.perf_counter()
    catalog = catalog or default_catalog()
    copies = inv.multiplicities(design)
    bom = inv.bill_of_materials(design, catalog, copies)
    compute, memory = inv.compute_and_memory(design, catalog, copies)
    sections = {
        "design": {"name": design.name, "items": len(design.items), "links": len(design.links)},
        "inventory": inv.inventory(design, catalog, copies),
        "bom": bom,
        "compute": compute,
        "memory": memory,
        "power": inv.power(design, catalog, copies),
        "cost": inv.cost(bom),
        "lint": [finding.as_dict() for finding in lint(design, catalog)],
    }
    return Result(freeze(sections), seconds=time.perf_counter() - started)
