"""Every shipped example through the engine: JSON-clean, whole-machine collectives finite, training
timed or saying why."""

import json
import math
from pathlib import Path

import pytest

from designer.engine import evaluate
from designer.io.files import load_design
from designer.model.catalog import default_catalog

EXAMPLES = sorted(p.name.split(".")[0] for p in (Path(__file__).resolve().parents[1] / "resources" / "examples")
                  .glob("*.cluster.json"))
# Wafers of the Cerebras CG-1 are not linked (SwarmX/MemoryX are not catalogued): "no path" is the
# truth for collectives; training is timed by the weight-streaming model, which needs no drawn links.
NO_PATH = {"cerebras-cg1"}
# Training on accelerators whose weights live off the chip says how it counts that memory.
STREAMED = {"cerebras-cg1", "tesla-dojo-exapod"}


@pytest.fixture(scope="module")
def results():
    catalog = default_catalog()
    root = Path(__file__).resolve().parents[1] / "resources" / "examples"
    return {name: evaluate(load_design(root / f"{name}.cluster.json", catalog), catalog) for name in EXAMPLES}


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_json_has_no_nan_or_infinity(results, name):
    json.dumps(results[name].as_dict(), allow_nan=False)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_whole_machine_collectives(results, name):
    r = results[name].as_dict()
    n = r["network"]["accelerators"]
    rows = [x for x in r["collectives"] if x["ranks"] == n and x["algorithm"] == "auto"]
    assert rows
    for row in rows:
        if name in NO_PATH:
            assert row["time_s"] is None and "no path" in row["why"]
        else:
            assert row["time_s"] is not None and math.isfinite(row["time_s"]) and row["time_s"] > 0, row
            assert row["bound_time_s"] <= row["time_s"] * (1 + 1e-6)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_training_timed_or_says_why(results, name):
    t = results[name].as_dict()["training"]
    assert t["timed"] and t["step_time_s"] > 0 and 0 < t["mfu"] < 1, t.get("why")
    assert ("memory_model" in t) == (name in STREAMED)
