"""Write docs/validation.md: every published measurement the engine is checked against, with the
engine's prediction and its error, from the points in `benchmarks/validation_points.json`.

A point's role is FIT (a constant in `designer/engine/calibration.py` was chosen to reproduce it;
listed, never counted as validation) or CHECK (nothing was tuned to it). A training point whose
plan, model or template uses something the engine does not take yet is listed as "pending" with
the key it is waiting for, not dropped. The summary gives the mean absolute error of the CHECK
points, and of the new ones alone.

    python benchmarks/validate.py            # write docs/validation.md, print the summary
    python benchmarks/validate.py --check    # exit 1 if docs/validation.md is not what it would write
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.engine import evaluate  # noqa: E402
from designer.engine.collectives import BUS_FACTOR, collective_rows, time_collective  # noqa: E402
from designer.engine.network import build_fabric  # noqa: E402
from designer.io import schemas  # noqa: E402
from designer.io.options import OptionError, parse_plan  # noqa: E402
from designer.model.catalog import default_catalog  # noqa: E402
from designer.model.errors import DesignerError  # noqa: E402
from designer.topologies import generate  # noqa: E402
from designer.topologies.base import TopologyError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
POINTS = Path(__file__).with_name("validation_points.json")
DOC = ROOT / "docs" / "validation.md"
UNITS = {"collective": "GB/s busbw", "tflops_per_gpu": "TFLOP/s per GPU", "model_tflops_per_gpu": "TFLOP/s per GPU",
         "mfu": "MFU"}


@dataclass
class Outcome:
    predicted: float | None
    status: str  # "" when evaluated; else why not ("pending (plan key vp)")

    def error(self, measured: float) -> float | None:
        return None if self.predicted is None else (self.predicted - measured) / measured


def _design(point: dict, catalog):
    try:
        return generate(point["template"], catalog, **point.get("params", {})), ""
    except TopologyError as exc:
        unknown = re.search(r"unknown parameter '(\w+)'", str(exc))
        return None, f"pending (template parameter {unknown.group(1)})" if unknown else f"not evaluated: {exc}"


def _collective(point: dict, catalog) -> Outcome:
    design, why = _design(point, catalog)
    if design is None:
        return Outcome(None, why)
    fabric = build_fabric(design, catalog)
    op, size, algorithm = point["op"], point["size"], point.get("algorithm", "auto")
    if "stride" in point:
        n = point["ranks"]
        t = float(time_collective(fabric, op, algorithm, n, [size], stride=point["stride"]).time[0])
        return Outcome(size / t / 1e9 * BUS_FACTOR[op](n), "")
    rows, _ = collective_rows(fabric, op, [size], algorithm, point.get("ranks"))
    row = next(r for r in rows if r["algorithm"] == algorithm)
    return Outcome(row["busbw_gb_per_s"], "")


def _training(point: dict, models: dict, catalog) -> Outcome:
    model = point["model"]
    if model in models:
        model = dict(models[model])
        unknown = sorted(set(model) - set(schemas.MODEL["properties"]))
        if unknown:
            return Outcome(None, f"pending (model field {', '.join(unknown)})")
        model["name"] = point["model"]
    try:
        plan = parse_plan(point["plan"])
    except OptionError as exc:
        key = re.search(r'unknown key "(\w+)"', str(exc))
        return Outcome(None, f"pending (plan key {key.group(1)})" if key else f"not evaluated: {exc.problem}")
    design, why = _design(point, catalog)
    if design is None:
        return Outcome(None, why)
    training = {"model": model, "plan": plan}
    if "overlap" in point:  # what the run's stack overlapped, where its paper says so
        training["overlap"] = point["overlap"]
    for key in ("global_batch", "seq"):
        if key in point:
            training[key] = point[key]
    try:
        result = evaluate(design, catalog, {"training": training}).as_dict()["training"]
    except DesignerError as exc:
        return Outcome(None, f"not evaluated: {exc}")
    value = result.get(point["metric"])
    return Outcome(value, "" if value is not None else f"not timed: {result.get('why')}")


def evaluate_points(data: dict) -> list[tuple[dict, Outcome]]:
    catalog = default_catalog()
    out = []
    for point in data["points"]:
        if point["kind"] == "collective":
            out.append((point, _collective(point, catalog)))
        else:
            out.append((point, _training(point, data["models"], catalog)))
    return out


def _figure(value: float, metric: str) -> str:
    return f"{100 * value:.1f} %" if metric == "mfu" else f"{value:,.1f}"


def _mean_abs(errors: list[float]) -> str:
    return f"{100 * sum(abs(e) for e in errors) / len(errors):.1f} %" if errors else "none evaluated"


def summary(outcomes: list[tuple[dict, Outcome]]) -> dict:
    checks = [(p, o) for p, o in outcomes if p["role"] == "CHECK"]
    done = [(p, o.error(p["measured"])) for p, o in checks if o.predicted is not None]
    return {"points": len(outcomes), "fit": sum(p["role"] == "FIT" for p, _ in outcomes), "check": len(checks),
            "new_check": sum(p["new"] for p, _ in checks),
            "pending": sum(o.predicted is None for _, o in checks),
            "mae_check": _mean_abs([e for _, e in done]),
            "mae_new_check": _mean_abs([e for p, e in done if p["new"]]),
            "evaluated_new_check": sum(p["new"] for p, _ in done)}


def render(outcomes: list[tuple[dict, Outcome]]) -> str:
    s = summary(outcomes)
    lines = [
        "# Validation: published measurements and what the engine predicts",
        "",
        "Generated by `benchmarks/validate.py` from `benchmarks/validation_points.json`; do not edit by",
        "hand (`tests/test_validation_doc.py` checks that it is current). Each row is one published",
        "measurement, the setup it was taken on as drawn for the engine, the engine's figure and its",
        "error ((predicted − measured) / measured).",
        "",
        "- **FIT**: a constant in `designer/engine/calibration.py` was chosen to reproduce this point",
        "  ([calibration.md](calibration.md) says which). Listed for completeness; never counted as",
        "  validation.",
        "- **CHECK**: nothing was tuned to it. Only these count.",
        "- **new**: added in 2026-11, beyond the rows of [calibration.md](calibration.md).",
        "- *pending (plan key X)*: the run used a plan key, model field or template parameter the engine",
        "  does not take yet; the row is kept and is evaluated once it does.",
        "- *not re-verified*: the figure or setup was checked against no public text in 2026-11 (quoted",
        "  from the paper by memory); the note says what is unconfirmed.",
        "",
        "Collective figures are nccl-tests bus bandwidths (GB/s); training figures are TFLOP/s per GPU",
        "(counting recomputation, as Megatron-LM reports them) or model FLOPs utilization (MFU).",
        "",
        "## Summary",
        "",
        f"- {s['points']} points: {s['fit']} FIT, {s['check']} CHECK ({s['new_check']} of them new).",
        f"- CHECK points still pending: {s['pending']}.",
        f"- Mean absolute error of the evaluated CHECK points: **{s['mae_check']}**.",
        f"- Mean absolute error of the {s['evaluated_new_check']} evaluated new CHECK points: "
        f"**{s['mae_new_check']}**.",
    ]
    group = None
    for point, outcome in outcomes:
        if point["group"] != group:
            group = point["group"]
            lines += ["", f"## {group}", "", "| point | role | setup | measured | predicted | error | source |",
                      "|---|---|---|---|---|---|---|"]
        metric = "collective" if point["kind"] == "collective" else point["metric"]
        error = outcome.error(point["measured"])
        role = point["role"] + (" (new)" if point["new"] else "")
        if point["role"] == "FIT":
            role += f": {point['fits']}"
        setup = point["setup"]
        if point["kind"] == "training":
            setup += f"; plan `{point['plan']}`"
            if "overlap" in point:
                setup += "; overlap " + ", ".join(f"{k}={v}" for k, v in point["overlap"].items())
        lines.append("| {} | {} | {} | {} | {} | {} | {} |".format(
            point["id"], role, setup, _figure(point["measured"], metric),
            _figure(outcome.predicted, metric) if outcome.predicted is not None else f"*{outcome.status}*",
            f"{100 * error:+.1f} %" if error is not None else "",
            point["source"] + (f" — *not re-verified: {point['unverified']}*" if "unverified" in point else "")))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/validation.md is out of date")
    args = parser.parse_args(argv)
    outcomes = evaluate_points(json.loads(POINTS.read_text(encoding="utf-8")))
    text = render(outcomes)
    s = summary(outcomes)
    print(f"{s['points']} points ({s['fit']} FIT, {s['check']} CHECK, {s['pending']} pending); "
          f"MAE of CHECK points {s['mae_check']}; of the {s['evaluated_new_check']} evaluated new CHECK points "
          f"{s['mae_new_check']}")
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run python benchmarks/validate.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
