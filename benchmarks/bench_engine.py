"""Engine speed: evaluate rail-fat-tree designs of 1k, 10k, 100k and 1M accelerators (all sections,
four collective sizes, one fixed training plan) and print time and peak memory per size.

`--tiny` runs small sizes only (part of `make test`, a few seconds). Beyond ~16k GPUs a 64-port
QM9700 cannot build a three-tier rail fabric, so the large sizes use a synthetic 512-port
variant of it (same port speed), added to the catalogue here only.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path
from types import MappingProxyType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.engine import evaluate  # noqa: E402
from designer.engine.network import build_fabric  # noqa: E402
from designer.engine import training, workloads  # noqa: E402
from designer.model.catalog import Catalog, Part, default_catalog  # noqa: E402
from designer.topologies import generate  # noqa: E402

SIZES = ["1M", "16M", "1G", "8G"]


def bench_catalog() -> Catalog:
    base = default_catalog()
    q = base["qm9700"]
    data = dict(q.data)
    data.update(id="bench-radix-512", name="QM9700 with 512 ports (benchmark only)", ports=512)
    return Catalog(list(base) + [Part("bench-radix-512", "switch", data["name"], q.source, MappingProxyType(data))])


def workload(plan: dict) -> dict:
    model = workloads.resolve("llama3-405b")
    model["global_batch"] = 1 << 16
    return {"collective": {"op": "allreduce", "sizes": SIZES, "algorithm": "auto"},
            "training": {"model": model, "plan": plan}}


def run(gpus: int, catalog: Catalog, repeat: int = 3) -> tuple[float, float, int]:
    nodes = gpus // 8
    switch = "qm9700" if gpus <= 8192 else "bench-radix-512"
    design = generate("rail-fat-tree", catalog, nodes=nodes, switch=switch)
    total = sum(1 for _ in design.items)
    plan = {"tp": 8, "pp": 8, "dp": gpus // 64, "mb": 1, "recompute": "full", "zero": 1}
    evaluate(design, catalog, workload(plan))  # warm caches
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true", help="small sizes only, a few seconds")
    args = parser.parse_args(argv)
    catalog = bench_catalog()
    sizes = [64, 1024] if args.tiny else [1024, 10240, 102400, 1048576]
    times = {}
    print(f"{'accelerators':>12}  {'drawn items':>11}  {'time s':>8}  {'peak MB':>8}")
    for gpus in sizes:
        seconds, peak, items = run(gpus, catalog, repeat=1 if args.tiny else 3)
        times[gpus] = seconds
        print(f"{gpus:>12,}  {items:>11,}  {seconds:>8.3f}  {peak:>8.1f}")
    first = sizes[0]
    for gpus in sizes[1:]:
        print(f"time ratio {gpus:,} / {first:,}: {times[gpus] / times[first]:.2f}")
    gpus = 64 if args.tiny else 10240
    design = generate("rail-fat-tree", catalog, nodes=gpus // 8)
    fabric = build_fabric(design, catalog)
    t = time.perf_counter()
    best = training.auto_plan(fabric, workloads.resolve("llama2-70b" if args.tiny else "llama3-405b"))
    print(f"auto plan on {gpus:,} accelerators: {time.perf_counter() - t:.3f} s → "
          f"{best['plan'] if best else 'no plan fits'}")
    if not args.tiny:
        ok = times.get(102400, 0) < 1.0 and times[1048576] < 3 * times[1024]
        print("targets (100k < 1 s, 1M within 3× of 1k):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
