"""Fail many items, links and link media of every example and list every figure a failure makes
look better (the rules: tests/failure_monotonicity.py; docs/goodput.md, "A failure never helps").

    .venv/bin/python benchmarks/failure_monotonicity.py [--per-example 60] [--seed 1] [EXAMPLE ...]

Each example gets `--per-example` failures drawn at random (a target, then all its copies, one
copy or 5 % of them); the CI test draws a few per example with hypothesis. Prints the violations
and their count; exits 1 if there is any."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from designer.engine.failures import Failure  # noqa: E402 - after the sys.path entry above
from designer.io.examples import example_paths  # noqa: E402
from designer.io.files import load_design  # noqa: E402
from designer.model.catalog import default_catalog  # noqa: E402
from tests.failure_monotonicity import failure_targets, healthy_of, violations  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", help="example names (default: all)")
    parser.add_argument("--per-example", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    catalog = default_catalog()
    rng = random.Random(args.seed)
    found, checked = [], 0
    for path in example_paths():
        name = path.name.removesuffix(".cluster.json")
        if args.examples and name not in args.examples:
            continue
        design = load_design(path, catalog)
        healthy = healthy_of(design, catalog)
        targets = failure_targets(design)
        for _ in range(args.per_example):
            target = rng.choice(targets)
            failure = rng.choice((Failure(target), Failure(target, copies=1), Failure(target, percent=5)))
            checked += 1
            for line in violations(healthy, catalog, failure):
                print(line, flush=True)
                found.append(line)
    print(f"{len(found)} violations in {checked} failures")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
