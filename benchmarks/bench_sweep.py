"""Sweep throughput on Dask: points per minute with auto plans on a local cluster of 1 and of N
worker processes (their ratio), and the driver's memory (RSS) at 25 % and 100 % of the points,
which stays flat because rows are written as they arrive and few batches are in flight.

    .venv/bin/python benchmarks/bench_sweep.py            # 1,200 points, 1 worker and one per core
    .venv/bin/python benchmarks/bench_sweep.py --tiny     # a smoke run: 16 points, in-process cluster
    .venv/bin/python benchmarks/bench_sweep.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.explore.results import CsvRows, columns  # noqa: E402
from designer.explore.runner import dask_client, run_sweep  # noqa: E402
from designer.explore.spec import sweep_from_document  # noqa: E402


def space(points: int) -> dict:
    """A rail-optimized fat tree over sizes, oversubscription and accelerators, auto plans."""
    sizes = max(1, points // 6)
    return {"format": "cluster-designer-sweep", "version": 1, "template": "rail-fat-tree",
            "params": {"nodes": {"from": 4, "to": 4 * sizes, "step": 4}, "oversubscription": [1, 2, 4],
                       "gpu": ["h100-sxm", "h200-sxm"]},
            "workloads": [{"model": "llama2-70b", "tokens": 2e12}], "plans": ["auto"],
            "keep": ["summary.power_kw", "training.days", "training.mfu"],
            "constraints": ["summary.power_kw <= 30000", "training.days <= 90"]}


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def run(points: int, workers: int, processes: bool = True) -> dict:
    sweep = sweep_from_document(space(points), "bench.sweep.json")
    total = sweep.count()
    memory: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder, dask_client(None, workers, processes) as client:
        sink = CsvRows(Path(folder) / "rows.csv", columns(sweep))
        client.submit(sum, [1]).result()  # workers up before the clock starts
        worker_cpu = sum(client.run(time.process_time).values())
        driver_cpu = time.process_time()
        load = os.getloadavg()[0]
        started = time.perf_counter()

        def on_row(row: dict) -> None:
            sink.write(row)
            done = row_count[0] = row_count[0] + 1
            if done == total // 4:
                memory["rss_mb_at_25"] = rss_mb()
            if done == total:
                memory["rss_mb_at_100"] = rss_mb()

        row_count = [0]
        progress = run_sweep(sweep, client, on_row)
        seconds = time.perf_counter() - started
        load_end = os.getloadavg()[0]  # the last minute's average: mostly the run itself
        worker_cpu = sum(client.run(time.process_time).values()) - worker_cpu if processes else 0.0
        driver_cpu = time.process_time() - driver_cpu
        sink.finish()
    # The machine may be shared: CPU seconds say what the points cost whatever else runs, and the
    # load average says how much else ran.
    return {"workers": workers, "points": total, "failed": progress.failed, "seconds": round(seconds, 2),
            "points_per_minute": round(total / seconds * 60), "worker_cpu_s": round(worker_cpu, 1),
            "driver_cpu_s": round(driver_cpu, 1),
            "points_per_cpu_minute": round(total / max(worker_cpu + driver_cpu, 1e-9) * 60),
            "load_average_before": round(load, 1), "load_average_at_end": round(load_end, 1),
            **{k: round(v, 1) for k, v in memory.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="smoke run: 16 points on an in-process cluster")
    parser.add_argument("--points", type=int, default=1200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    if args.tiny:
        out = {"nproc": cores, "runs": [run(16, 1, processes=False)]}
        assert out["runs"][0]["points"] >= 12 and out["runs"][0]["failed"] == 0, out
    else:
        runs = [run(args.points, 1), run(args.points, cores)]
        out = {"nproc": cores, "runs": runs,
               "ratio_many_to_one": round(runs[1]["points_per_minute"] / runs[0]["points_per_minute"], 2),
               "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"nproc {out['nproc']}")
        for r in out["runs"]:
            print(f"{r['workers']} worker(s): {r['points']:,} points in {r['seconds']} s = {r['points_per_minute']:,} "
                  f"points/min, {r['failed']} failed; CPU {r['worker_cpu_s']} s workers + {r['driver_cpu_s']} s "
                  f"driver = {r['points_per_cpu_minute']:,} points per CPU-minute; load average before "
                  f"{r['load_average_before']}, at the end {r['load_average_at_end']}; "
                  f"driver RSS {r.get('rss_mb_at_25')} MB at 25 %, "
                  f"{r.get('rss_mb_at_100')} MB at 100 %")
        if "ratio_many_to_one" in out:
            print(f"{out['runs'][1]['workers']} workers / 1 worker: ×{out['ratio_many_to_one']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
