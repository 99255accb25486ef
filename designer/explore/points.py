"""One point of a sweep, evaluated where it runs (a Dask worker, or this process): the design
built from its recipe, the constraints tried first against bounds that cost no network or
training model (exact power, peak compute and capital cost, and from below the days and the run
cost of a perfect machine), then the whole evaluation and the figures the sweep keeps.

A row is a flat dict: `point`, the axes (`param.nodes`, `workload`, `plan`...), every kept figure
under its path, `meets` (all constraints hold), `pruned` (the bound that ruled it out), `error`
(why it could not be evaluated) and `design` (the recipe, JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from designer.engine import cost as tco
from designer.engine import evaluate
from designer.engine import inventory as inv
from designer.engine.evaluate import training_model
from designer.engine.figures import FigureError, figure, figures
from designer.engine.training import flops_per_token
from designer.explore.spec import Constraint, design_of, recipe_text
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design
from designer.model.errors import DesignerError

SECONDS_PER_DAY = 86_400.0
# Figures known before the network and training models run: exactly, or as a lower bound.
_EXACT = {"power": ("summary.power_kw", "power.total_kw"), "accelerators": ("summary.accelerators",
                                                                            "inventory.accelerators")}
_DAYS = ("training.days", "summary.days_to_train", "goodput.days", "summary.days_to_train_with_failures")
# The cost figures the priced bill of materials and the power fix (the run's cost from below).
_COST = {"capital_usd": ("cost.capital_usd", "summary.capital_cost_usd"), "total_usd": ("cost.total_usd",),
         "yearly_usd": ("cost.yearly_usd", "summary.yearly_cost_usd_year"),
         "per_accelerator_hour_usd": ("cost.per_accelerator_hour_usd", "summary.cost_per_accelerator_hour_usd_h")}
_RUN_COST = ("cost.run_usd", "summary.training_run_cost_usd")

BEST_SO_FAR = "cannot beat the best two so far: "

# Base designs a worker read from their files (points sent without the sweep's `bases`), by
# content (`spec.base_key`): an edited file is another key, never the old design again.
_base_designs: dict[str, Design] = {}


def bounds(design: Design, catalog: Catalog, workload: dict) -> dict[str, tuple[float, float]]:
    """(lowest, highest) possible value of the figures that need no network or training model:
    power, accelerators, peak compute and the capital and yearly cost exactly; days to train and
    the run's cost from below (every accelerator at its peak, no communication, no bubble)."""
    copies = inv.multiplicities(design)
    compute, _memory = inv.compute_and_memory(design, catalog, copies)
    power_kw = inv.power(design, catalog, copies).total_kw
    accelerators = sum(copies[i.id] for i in design.items.values() if i.kind == "accelerator")
    out = {path: (power_kw, power_kw) for path in _EXACT["power"]}
    out.update({path: (accelerators, accelerators) for path in _EXACT["accelerators"]})
    for precision, value in compute.peak_tflops.items():
        out[f"compute.peak_tflops.{precision}"] = (value, value)
    bom = inv.bill_of_materials(design, catalog, copies, design.all_link_copies(design.chains()))
    cost = tco.cost_of_ownership(bom, catalog, power_kw, accelerators, design.settings.get("cost"), None, 0, None)
    for key, paths in _COST.items():
        value = getattr(cost, key)
        if value is not None:
            out.update({path: (value, value) for path in paths})
    tspec = (workload or {}).get("training") or {}
    if accelerators:
        model = training_model(tspec, accelerators)
        precision = "fp8" if model.get("precision") == "fp8" else "bf16"
        fastest = max((part.peak_tflops.get(precision) or part.peak_tflops.get("bf16") or 0.0
                       for part in (catalog.get(i.part) for i in design.items.values() if i.kind == "accelerator")
                       if part is not None), default=0.0)
        if fastest:
            # The accelerator-seconds of the work at peak: however many run it, the run pays for these.
            busy_s = model["tokens"] * flops_per_token(model, 3.0) / (fastest * 1e12)
            out.update({path: (busy_s / accelerators / SECONDS_PER_DAY, float("inf")) for path in _DAYS})
            if cost.per_accelerator_hour_usd is not None:
                out.update({path: (busy_s / 3600 * cost.per_accelerator_hour_usd, float("inf")) for path in _RUN_COST})
    return out


def ruled_out(constraints: Sequence[Constraint], known: dict[str, tuple[float, float]]) -> str | None:
    """The first constraint the bounds show cannot hold, in words; None if all may hold."""
    for c in constraints:
        if c.path not in known:
            continue
        low, high = known[c.path]
        if c.op in ("<=", "<"):
            impossible, shown = not c.holds(low), low
        elif c.op in (">=", ">"):
            impossible, shown = not c.holds(high), high
        else:
            impossible, shown = not low <= c.bound <= high, low
        if impossible:
            exact = "" if low == high else "at least " if shown == low else "at most "
            return f"{c.path} is {exact}{shown:,.4g}, not {c.op} {c.bound:,.4g}"
    return None


def evaluate_point(point: dict, keep: list[str], constraints: list[Constraint], prune: bool = True,
                   catalog: Catalog | None = None, beyond: tuple[Constraint, ...] = (),
                   bases: dict[str, Design] | None = None) -> dict[str, Any]:
    """The row of one point. Never raises for a point that cannot be built or evaluated: its row
    says why, and the sweep goes on. `beyond`: bounds that only prune (an optimization's best
    so far), never counted in `meets`. `bases`: the sweep's base designs by content."""
    catalog = catalog or default_catalog()
    recipe = point["recipe"]
    row: dict[str, Any] = {"point": point["point"], **point["axes"], **dict.fromkeys(keep),
                           "meets": False, "unpriced": None, "pruned": None, "error": None,
                           "design": recipe_text(recipe)}
    try:
        design = design_of(recipe, catalog, _base_designs if bases is None else bases)
        if prune:
            known = bounds(design, catalog, recipe["workload"])
            why = ruled_out(constraints, known)
            if why is None and (why := ruled_out(beyond, known)) is not None:
                why = BEST_SO_FAR + why
            if why is not None:
                row["pruned"] = why
                row.update({path: known[path][0] for path in keep if path in known and len(set(known[path])) == 1})
                return row
        tree = figures(evaluate(design, catalog, workload=recipe["workload"]))
        for path in keep:
            row[path] = figure(tree, path)
        row["meets"] = all(c.holds(_number(row[c.path])) for c in constraints)
        # Money figures leave these parts out: a goal on cost cannot rank this point against others.
        row["unpriced"] = ", ".join(figure(tree, "cost.unpriced_parts")) or None
    except (DesignerError, FigureError) as exc:
        row["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - an engine bug on one point is recorded; the sweep goes on
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def evaluate_points(points: list[dict], keep: list[str], constraints: list[Constraint], prune: bool = True,
                    catalog: Catalog | None = None, beyond: tuple[Constraint, ...] = (),
                    bases: dict[str, Design] | None = None) -> list[dict[str, Any]]:
    """Several points in one task (a Dask task costs about a millisecond of scheduling), evaluated
    with the driver's catalogue and base designs (`catalog`, `bases`: sent once to each worker),
    not the worker's own files."""
    return [evaluate_point(point, keep, constraints, prune, catalog, beyond, bases) for point in points]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
