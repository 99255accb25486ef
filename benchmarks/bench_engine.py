"""Engine speed: evaluate rail-fat-tree designs of 1k, 10k, 100k and 1M accelerators (all sections,
four collective sizes, one fixed training plan) and print time and peak memory per size.

`--tiny` runs small sizes only (part of `make test`, a few seconds).

Every size is built from the shipped catalogue with one configuration, so the sizes differ only
in scale: DGX H100 servers (8 × H100), 4 ConnectX-7 400GbE NICs per server (NIC n on GPU 2n's
PCIe; the other GPUs reach a NIC over NVLink, so 25 GB/s of injection per GPU), Spectrum-4
`sn5600-400g` switches (128 × 400G), 64 servers per scalable unit, non-blocking at every tier.
1k and 10k are two-tier; 100k and 1M are three-tier rail pods (`_rail_pod_tree`).

Why 4 NICs per server and not the DGX's 8: a non-blocking three-tier fat tree of k-port switches
reaches at most k³/4 NIC ports — 524,288 with 128 ports (65,536 with the 64-port QM9700) — so
1,048,576 GPUs need two GPUs per NIC port; with 8 NICs per server the generator rightly refuses
1M ("524,288 ports is the most a three-tier fabric of 128-port switches can join"). No synthetic
switch is needed.

`--template fat-tree` times the plain fat tree on the same parts; `--partial` times 1,000 ...
1,000,000 accelerators (125 ... 125,000 servers), which leave a partial last unit, leaf or pod.

Scaling: evaluation time follows the number of drawn items and links (distinct groups), not of
GPUs. The three-tier rail pods draw spine j of every pod and core group j as copy j of two groups
joined by one matched link (`Link.match`), so 100k and 1M draw 39 items against 29 for 1k.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.engine import evaluate  # noqa: E402 - after the sys.path entry above
from designer.engine.network import build_fabric  # noqa: E402 - after the sys.path entry above
from designer.engine import training, workloads  # noqa: E402 - after the sys.path entry above
from designer.model.catalog import Catalog, default_catalog  # noqa: E402 - after the sys.path entry above
from designer.topologies import generate  # noqa: E402 - after the sys.path entry above

SIZES = ["1M", "16M", "1G", "8G"]
AUTO_PRESETS = ["llama3-405b", "llama3-405b-128k", "gpt3-175b", "mixtral-8x7b", "deepseek-v3"]


FABRIC = {"platform": "dgx-h100", "nic": "cx7-400gbe", "nics_per_node": 4, "switch": "sn5600-400g",
          "nodes_per_su": 64}


def design_of(gpus: int, catalog: Catalog, template: str = "rail-fat-tree"):
    nodes = gpus // 8
    if template == "fat-tree":
        return generate(template, catalog, nodes=nodes, **{k: v for k, v in FABRIC.items() if k != "nodes_per_su"})
    return generate(template, catalog, nodes=nodes, **dict(FABRIC, nodes_per_su=min(64, nodes)))


# The fabric templates of issue 13 (`--templates`), each at about 1k accelerators and at the
# largest size up to 1M its parts allow (the formula each template refuses past): a dragonfly of
# Rosetta switches with one NIC per 4-GPU node (545 groups of 512 nodes at most); rail-only of
# GB200 NVL72 racks on 128-port Ethernet (128 leaves of 64 racks per rail); multi-plane of DGX
# H100 with one 2-port NIC each (128 units of 64 servers per plane); nvl72 (64 units of 64 racks
# per rail). Best of 9: the small sizes take a few milliseconds.
TEMPLATE_FABRICS = {
    "dragonfly": (4, {"platform": "mi250x-node", "nics_per_node": 1}, [1024, 1_048_576]),
    "rail-only": (72, {"platform": "gb200-nvl72", "nic": "cx7-400gbe", "switch": "sn5600-400g",
                       "servers_per_rack": 1, "rack": "rack-nvl72"}, [1152, 589_824]),
    "multi-plane": (8, {"platform": "dgx-h100", "nics_per_node": 1}, [1024, 65_536]),
    "nvl72": (72, {}, [1152, 294_912]),
}


def template_design(template: str, gpus: int, catalog: Catalog):
    per_node, params, _ = TEMPLATE_FABRICS[template]
    return generate(template, catalog, nodes=gpus // per_node, **params)


def workload(plan: dict) -> dict:
    model = workloads.preset("llama3-405b")
    model["global_batch"] = 1 << 16
    return {"collective": {"op": "allreduce", "sizes": SIZES, "algorithm": "auto"},
            "training": {"model": model, "plan": plan}}


def plan_for(gpus: int, template: str, partial: bool) -> dict:
    """One fixed plan per run, under which the 405B step fits at every size, so every size does
    the same work (a plan that does not fit skips the step and its link loads: the 1k partial size
    used to be timed without them, against 1M with them). The partial sizes (1,000 ... = 8 × 125 ×
    10^k) split into tp 8 × pp 5, with ZeRO-3 to fit 1k; the others into tp × pp 8."""
    tp = 4 if template == "dragonfly" else 8
    pp, zero = (5, 3) if partial else (8 if gpus % (8 * tp) == 0 else 1, 1)  # vp, cp... default
    return {"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "mb": 1, "recompute": "full", "zero": zero}


def run(gpus: int, catalog: Catalog, repeat: int = 3, template: str = "rail-fat-tree",
        partial: bool = False) -> tuple[float, float, int]:
    if template in TEMPLATE_FABRICS:
        design = template_design(template, gpus, catalog)
    else:
        design = design_of(gpus, catalog, template)
    total = sum(1 for _ in design.items)
    plan = plan_for(gpus, template, partial)
    warm = evaluate(design, catalog, workload(plan))  # warm caches
    # A benchmark of an answer-less evaluation would be meaningless: everything must be timed (the
    # 405B plan does not fit in memory on the tiny sizes; that is a real answer).
    untimed = warm.training.step_time_s is None and warm.training.fits is not False
    if untimed or any(row.time_s is None for row in warm.collectives):
        raise SystemExit(f"{gpus:,} accelerators: not all collectives / the training step were timed")
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        evaluate(design, catalog, workload(plan))
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    evaluate(design, catalog, workload(plan))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak / 2 ** 20, total


def hand_drawn(servers: int, catalog: Catalog):
    """A two-tier tree drawn by hand, every box at the top level or in a rack, nothing replicated:
    `servers` DGX H100s, each in a rack of its own, 4 to a leaf QM9700, every leaf with 4 uplinks to
    each of 8 spines (non-blocking: 32 NICs down, 32 cables up). What the flow model expands."""
    from designer.model.design import Design
    from designer.topologies.base import Builder

    design = Design(name=f"hand-drawn {servers} servers")
    builder = Builder(design, catalog)
    spines = [builder.item(f"spine{j}", "switch", "qm9700", None, name=f"Spine {j}") for j in range(8)]
    for s in range(servers):
        leaf = f"leaf{s // 4}"
        if s % 4 == 0:
            builder.item(leaf, "switch", "qm9700", None, name=f"Leaf {s // 4}")
            for spine in spines:
                for _ in range(4):
                    builder.link(leaf, spine, "ib-ndr", 1)
        rack = builder.item(f"rack{s}", "rack", "rack-42u", None, name=f"Rack {s}")
        for nic in builder.server(f"s{s}", "dgx-h100", rack)["nics"]:
            builder.link(nic, leaf, "ib-ndr", 1)
    return design


def run_hand_drawn(servers: int, catalog: Catalog, repeat: int) -> None:
    design = hand_drawn(servers, catalog)
    gpus = servers * 8
    plan = {"tp": 8, "pp": 1, "dp": servers, "mb": 1, "recompute": "full", "zero": 1}
    evaluate(design, catalog, workload(plan))
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        result = evaluate(design, catalog, workload(plan))
        best = min(best, time.perf_counter() - t)
    print(f"hand-drawn: {gpus:,} accelerators, {len(design.items):,} drawn items, {len(design.links):,} links: "
          f"{best:.3f} s (bisection {result.network.scale_out.bisection_gb_per_s:,.0f} GB/s)")
    if gpus >= 512:
        print("target hand-drawn 512 accelerators < 1 s:", "met" if best < 1.0 else "NOT met")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true", help="small sizes only, a few seconds")
    parser.add_argument("--templates", action="store_true",
                        help="only the dragonfly, rail-only, multi-plane and nvl72 templates, at two sizes each")
    parser.add_argument("--template", choices=("rail-fat-tree", "fat-tree"), default="rail-fat-tree")
    parser.add_argument("--partial", action="store_true",
                        help="sizes that leave a partial last unit (1,000 ... 1,000,000 accelerators)")
    parser.add_argument("--repeat", type=int, default=9,
                        help="evaluations per size, the best one timed (a 1k evaluation takes milliseconds)")
    args = parser.parse_args(argv)
    catalog = default_catalog()
    if args.templates:
        return run_templates(catalog)
    if args.tiny:
        sizes = [64, 1024]
    else:
        sizes = [1000, 10_000, 100_000, 1_000_000] if args.partial else [1024, 10240, 102400, 1048576]
    times, drawn = {}, {}
    print(f"{'accelerators':>12}  {'drawn items':>11}  {'time s':>8}  {'ms / item':>9}  {'peak MB':>8}")
    for gpus in sizes:
        seconds, peak, items = run(gpus, catalog, repeat=1 if args.tiny else args.repeat, template=args.template,
                                   partial=args.partial)
        times[gpus], drawn[gpus] = seconds, items
        print(f"{gpus:>12,}  {items:>11,}  {seconds:>8.3f}  {1e3 * seconds / items:>9.3f}  {peak:>8.1f}")
    first = sizes[0]
    for gpus in sizes[1:]:
        print(f"time ratio {gpus:,} / {first:,}: {times[gpus] / times[first]:.2f} "
              f"(drawn items ×{drawn[gpus] / drawn[first]:.1f})")
    gpus = 64 if args.tiny else 10240
    fabric = build_fabric(design_of(gpus, catalog), catalog)
    # The auto search over tp, cp, pp × vp, ep, mb (ZeRO and recompute per shape) for a dense model,
    # a long-context one (cp is searched), a coarse and a fine-grained mixture of experts (ep is).
    presets = ["llama2-70b", "mixtral-8x7b"] if args.tiny else AUTO_PRESETS
    for name in presets:
        t = time.perf_counter()
        best = training.auto_plan(fabric, workloads.preset(name))
        chosen = " ".join(f"{k}={v}" for k, v in best["plan"].items()) if best else "no plan fits"
        print(f"auto plan, {name} on {gpus:,} accelerators: {time.perf_counter() - t:.3f} s → {chosen}")
    run_hand_drawn(8 if args.tiny else 64, catalog, 1 if args.tiny else 3)
    if not args.tiny:
        print("target 100k < 1 s:", "met" if times[sizes[2]] < 1.0 else "NOT met")
        print("target 1M within 3× of 1k:", "met" if times[sizes[3]] < 3 * times[sizes[0]] else "NOT met")
    return 0


def run_templates(catalog: Catalog) -> int:
    print(f"{'template':>12}  {'accelerators':>12}  {'drawn items':>11}  {'time s':>8}")
    worst = 0.0
    for template, (_, _, sizes) in TEMPLATE_FABRICS.items():
        times = []
        for gpus in sizes:
            seconds, _, items = run(gpus, catalog, repeat=9, template=template)
            times.append(seconds)
            print(f"{template:>12}  {gpus:>12,}  {items:>11,}  {seconds:>8.3f}")
        ratio = times[-1] / times[0]
        worst = max(worst, ratio)
        print(f"{template:>12}  time ratio {sizes[-1]:,} / {sizes[0]:,}: {ratio:.2f}")
    print("target largest within 3× of 1k on every template:", "met" if worst <= 3 else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
