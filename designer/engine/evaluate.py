"""evaluate(): the one entry point from a design snapshot to an immutable Result."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace

from designer.engine import budget
from designer.engine import collectives as coll
from designer.engine import cost as tco
from designer.engine import failures as fail
from designer.engine import goodput as gp
from designer.engine import inventory as inv
from designer.engine import streaming
from designer.engine import training as train
from designer.engine import workloads
from designer.engine.network import build_fabric, network_summary
from designer.engine.result import Result
from designer.engine.shapes import classify as classify_shape
from designer.engine.sections import (
    Bottleneck,
    BoundaryCut,
    CollectiveRow,
    DesignInfo,
    FabricShape,
    GpuTime,
    MemoryPerGpu,
    Network,
    Plan,
    Power,
    ScaleOutTier,
    ScaleUpTier,
    StepSegment,
    SwitchLevel,
    Training,
    Utilization,
    read_only,
)
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design
from designer.model.lint import lint

DEFAULT_SIZES = (2 ** 20, 16 * 2 ** 20, 256 * 2 ** 20, 2 ** 30, 8 * 2 ** 30)


def evaluate(design: Design, catalog: Catalog | None = None, workload: dict | None = None, *,
             slowest_of: Collection[str] = ()) -> Result:
    """Evaluate a design. The design is read, never changed; pass a snapshot if it may change.

    `workload`: {"collective": {op, sizes, algorithm, ranks}, "training": {model, plan,
    global_batch, seq, tokens}}, as `designer.io.schemas.WORKLOAD_SETTING` describes it (files and
    options are checked at the boundary; the engine does not check again); None means the design's
    `settings["workload"]` or the defaults (allreduce over all accelerators at 1M..8G, algorithm
    auto; a preset sized to the design with plan auto). A design whose estimated work is above
    `budget.MAX_WORK` is refused before anything is computed. `slowest_of`: accelerators whose
    surroundings may be slower than the representative's (a what-if's weakened copies,
    `failures.degraded`): the network, collective and training figures are then those of the
    slowest (`network.build_fabric`)."""
    started = time.perf_counter()
    catalog = catalog or default_catalog()
    workload = workload if workload is not None else (design.settings.get("workload") or {})
    copies = inv.multiplicities(design)
    accelerators = sum(copies[i.id] for i in design.items.values() if i.kind == "accelerator")
    training_spec = dict(workload.get("training") or {})
    budget.check(design, accelerators, training_model(training_spec, accelerators), training_spec.get("plan") or "auto")
    chains = design.chains()
    link_copies = design.all_link_copies(chains)
    bom = inv.bill_of_materials(design, catalog, copies, link_copies)
    compute, memory = inv.compute_and_memory(design, catalog, copies)
    network, collectives, training, utilization = performance(design, catalog, workload, copies, chains, link_copies,
                                                                slowest_of)
    inventory = inv.inventory(design, catalog, copies, link_copies)
    power = inv.power(design, catalog, copies)
    goodput = gp.goodput(design, catalog, copies, chains, inventory, bom, training)
    # The run's cost is paid for wall-clock days, failures and restarts included.
    run_days = goodput.days if goodput.days is not None else training.days
    result = Result(
        design=DesignInfo(name=design.name, items=len(design.items), links=len(design.links)),
        inventory=inventory,
        bom=bom,
        compute=compute,
        memory=memory,
        power=power,
        cost=run_cost(design, catalog, bom, power, accelerators, training, run_days),
        lint=tuple(lint(design, catalog, link_copies)),
        network=network,
        collectives=collectives,
        training=training,
        utilization=utilization,
        goodput=goodput,
        part_names=part_names(catalog, bom, power),
    )
    if design.settings.get("failures"):
        # The healthy job's model as the workload gives it (resolved again, it would be checked
        # again: a shape inferred from a parameter count is then refused as stated), or the preset
        # sized to the healthy design, which the degraded one would size anew.
        model = training_spec.get("model") or training_model(training_spec, accelerators)
        result = replace(result, degraded=fail.degraded(design, catalog, workload, result, evaluate, model))
    return replace(result, seconds=time.perf_counter() - started)


def part_names(catalog: Catalog, bom, power: Power):
    """The catalogue name of every part a section names by id: each BOM line's part (the
    accelerator models, storage, unpriced and derived-price parts among them) and each part
    drawing a derived power figure."""
    ids = {row.part for row in bom.rows} | set(power.derived_parts)
    return read_only((part_id, catalog[part_id].name) for part_id in sorted(ids) if part_id in catalog)


def run_cost(design: Design, catalog: Catalog, bom, power: Power, accelerators: int, training: Training,
             run_days: float | None):
    """The cost section, the training run taking `run_days` days on the plan's accelerators."""
    plan = training.plan
    run_accelerators = plan.tp * plan.pp * plan.dp if isinstance(plan, Plan) else accelerators
    return tco.cost_of_ownership(bom, catalog, power.total_kw, accelerators, design.settings.get("cost"), run_days,
                                 run_accelerators, training.tokens, power.derived_parts)


def performance(design: Design, catalog: Catalog, workload: dict | None, copies: dict | None = None,
                chains: dict | None = None, link_copies: dict | None = None, slowest_of: Collection[str] = ()
                ) -> tuple[Network, tuple[CollectiveRow, ...], Training, Utilization]:
    """The network, collectives, training and utilization sections."""
    workload = workload if workload is not None else (design.settings.get("workload") or {})
    # Weight-streaming systems (Cerebras) are joined by the interconnect their model states, not by links drawn.
    streams = any(getattr(streaming.model_for(item.part), "weight_streaming", False)
                  for item in design.items.values() if item.kind == "accelerator")
    joined = None if streams else fail.connected_job(design, catalog)
    job = None
    if joined is not None:
        # A job never spans accelerators with no path between them: it runs on the largest connected set.
        design, size, total = joined
        copies = chains = link_copies = None
        job = (f"{size:,} of {total:,} accelerators are joined by links: collectives and training run on them, "
               "the largest connected set (the others have no path to them)")
    fabric = build_fabric(design, catalog, copies, chains, link_copies, slowest_of)
    shape = classify_shape(fabric)
    network = replace(_network(network_summary(fabric), shape), job=job)
    if fabric.rep is None:
        return network, (), Training(fits=False, why="the design has no accelerators"), Utilization(gpus=(), phases=())
    spec = dict(workload.get("collective") or {})
    op = spec.get("op", "allreduce")
    sizes = spec.get("sizes") or DEFAULT_SIZES
    sizes = [coll.parse_size(s) if isinstance(s, str) else int(s) for s in sizes]
    rows, link_util = coll.collective_rows(fabric, op, sizes, spec.get("algorithm", "auto"), spec.get("ranks"))
    collectives = tuple(_collective_row(row) for row in rows)
    phases = []
    if link_util.get("util") is not None:
        phases.append(train.link_phase(fabric, link_util["phase"], link_util["util"]))
    tspec = dict(workload.get("training") or {})
    model = training_model(tspec, fabric.total_accelerators)
    training, util = train.training(fabric, {"model": model, "plan": tspec.get("plan", "auto"),
                                             "accelerators": tspec.get("accelerators"),
                                             "overlap": tspec.get("overlap")})
    utilization = Utilization(gpus=_gpu_times(util.get("gpus", ())), phases=tuple(phases + util.get("phases", [])))
    return network, collectives, _training(training), utilization


def training_model(tspec: dict, accelerators: int) -> dict:
    """The model a workload's training spec names (a preset, an inline model, or the preset sized
    to the design), with its batch, sequence and token overrides."""
    model = tspec.get("model")
    if isinstance(model, str):
        model = workloads.preset(model)
    if model is None:
        model = workloads.preset(workloads.default_preset(accelerators))
        if "global_batch" not in tspec:
            # Big enough that the default plan search has room: at least one sequence per 32 GPUs.
            model["global_batch"] = max(model["global_batch"], -(-accelerators // 32))
    else:
        model = dict(model)
    for key in ("global_batch", "seq", "tokens"):
        if tspec.get(key) is not None:
            model[key] = tspec[key]
    return workloads.custom(model, model.get("name", "workload"))


# The network, collective and training computations work in plain dicts (their search loops and
# tests read them so); these type them for the Result, field for key.

def _network(summary: dict, shape: FabricShape | None) -> Network:
    if not summary["tiers"]:
        return Network(accelerators=0, scale_up=None, scale_out=None, diameter_hops=None, boundaries=())
    up, out = summary["tiers"]["scale-up"], summary["tiers"]["scale-out"]
    return Network(
        accelerators=summary["accelerators"],
        scale_up=ScaleUpTier(**{**up, "media": tuple(up["media"])}),
        scale_out=ScaleOutTier(**{**out, "media": tuple(out["media"]), "oversubscription": tuple(
            SwitchLevel(**level) for level in out["oversubscription"])}),
        diameter_hops=summary["diameter_hops"],
        boundaries=tuple(BoundaryCut(**boundary) for boundary in summary["boundaries"]),
        shape=shape,
    )


def _collective_row(row: dict) -> CollectiveRow:
    bottleneck = row["bottleneck"]
    return CollectiveRow(**{**row, "bottleneck": Bottleneck(**bottleneck) if bottleneck is not None else None})


def _training(training: dict) -> Training:
    plan, memory, overlap = training.get("plan"), training.get("memory_per_gpu_gib"), training.get("overlap")
    return Training(**{**training, "plan": Plan(**plan) if isinstance(plan, dict) else plan,
                       "overlap": read_only(overlap.items()) if overlap is not None else None,
                       "memory_per_gpu_gib": MemoryPerGpu(**memory) if memory is not None else None})


def _gpu_times(gpus) -> tuple[GpuTime, ...]:
    segments: dict[int, tuple[StepSegment, ...]] = {}  # every accelerator shares one step's segments
    out = []
    for gpu in gpus:
        key = id(gpu["segments"])
        if key not in segments:
            segments[key] = tuple(StepSegment(**segment) for segment in gpu["segments"])
        out.append(GpuTime(**{**gpu, "segments": segments[key]}))
    return tuple(out)
