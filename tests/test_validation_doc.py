"""docs/validation.md is what benchmarks/validate.py writes from the published points today."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _validate():
    spec = importlib.util.spec_from_file_location("validate", ROOT / "benchmarks" / "validate.py")
    module = sys.modules.setdefault("validate", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


def test_validation_doc_is_current():
    validate = _validate()
    outcomes = validate.evaluate_points(validate.json.loads(validate.POINTS.read_text(encoding="utf-8")))
    assert validate.DOC.read_text(encoding="utf-8") == validate.render(outcomes), \
        "docs/validation.md is out of date: run python benchmarks/validate.py"


def test_fitting_points_never_count_as_validation():
    validate = _validate()
    points = validate.json.loads(validate.POINTS.read_text(encoding="utf-8"))["points"]
    assert all(p["role"] in ("FIT", "CHECK") for p in points)
    assert all(("fits" in p) == (p["role"] == "FIT") for p in points), "a FIT point names what it fits; a CHECK none"
    outcome = validate.Outcome(200.0, "")
    fit = {**points[0], "role": "FIT", "measured": 100.0}
    summary = validate.summary([(fit, outcome)])
    assert summary["check"] == 0 and summary["mae_check"] == "none evaluated"
    assert sum(p["new"] and p["role"] == "CHECK" for p in points) >= 15
