"""The result's JSON, its figures' directions and the summary's keys come from declarations: each
section's fields (`sections.figure_field`) and each summary row (`summary.SummaryFigure`), so a
display label can change without renaming a figure a saved sweep file names."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from designer.engine import figures as figs
from designer.engine import summary
from designer.engine.evaluate import evaluate
from designer.engine.sections import STEP_PARTS, BomRow, Plan, Training, record_dict
from designer.explore import spec
from designer.explore.points import evaluate_point
from designer.io.files import load_design
from designer.model.catalog import default_catalog

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.cluster.json"))
SWEEPS = sorted((ROOT / "resources" / "sweeps").glob("*.sweep.json"))


@pytest.fixture(scope="module")
def results():
    catalog = default_catalog()
    return [evaluate(load_design(path, catalog), catalog) for path in EXAMPLES[:6]]


# How summary keys were made from labels before the rows declared them (figures.summary_key then):
# frozen here, so the declared keys are shown to be the very keys saved sweep files already hold.
_UNIT_WORDS = {"kW": "kw", "USD": "usd", "GB": "gb", "GB/s": "gb_per_s", "TB/s": "tb_per_s", "TFLOPS": "tflops",
               "TOPS": "tops", "TFLOP/s": "tflops", "tokens/s": "", "s": "s", "days": "days", "hops": "hops",
               ":1": "", "count": "", "fraction": "", "accelerators": "", "": ""}


def key_from_label(metric: str, unit: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "_", re.sub(r"\([^)]*\)", "", metric).lower()).strip("_")
    suffix = _UNIT_WORDS.get(unit, re.sub(r"[^a-z0-9]+", "_", unit.lower()).strip("_"))
    if suffix and not words.endswith(suffix) and suffix not in words.split("_"):
        words = f"{words}_{suffix}"
    return words


def test_declared_summary_keys_are_the_keys_the_labels_made(results):
    for result in results:
        for row in summary.summary_table(result, named=False):
            assert row.key == key_from_label(row.metric, row.unit), row


def test_every_summary_key_names_its_declaration(results):
    for result in results:
        for row in summary.summary_table(result):
            figure = summary.figure_of_key(row.key)
            assert figure is not None and figure.unit == row.unit and figure.better == row.better, row


def test_a_field_omitted_when_its_metadata_says_so():
    plain = BomRow("nic", "cx7", "ConnectX-7", 4, None)
    assert record_dict(plain) == {"category": "nic", "part": "cx7", "name": "ConnectX-7", "quantity": 4,
                                  "unit_price_usd": None, "extended_usd": None}
    marked = BomRow("cable", "dac", "DAC", 2, 10.0, included=True, price_derived=True, variant="copper")
    assert list(marked.as_dict())[-3:] == ["included", "price_basis", "variant"]
    assert marked.as_dict()["price_basis"] == "derived" and marked.as_dict()["extended_usd"] == 20.0


def test_training_writes_the_step_only_once_a_plan_was_considered():
    none = Training(fits=False, why="the design has no accelerators").as_dict()
    assert none == {"fits": False, "why": "the design has no accelerators"}
    untimed = Training(fits=None, why="no path", plan="auto", model="m", timed=False).as_dict()
    assert untimed["timed"] is False and untimed["step_time_s"] is None and "tokens" not in untimed
    assert list(untimed)[:5] == ["fits", "why", "plan", "model", "timed"]


def test_plan_json_keeps_its_order():
    plan = Plan(tp=8, pp=2, dp=4, mb=1, recompute="none", zero=1, auto=True)
    assert list(plan.as_dict()) == ["tp", "pp", "vp", "dp", "cp", "sp", "ep", "mb", "recompute", "zero",
                                    "attention", "auto"]


@pytest.mark.parametrize(("path", "better"), [
    ("training.days", -1), ("training.mfu", 1), ("training.plan.tp", 0), ("training.tokens", 0),
    ("collectives.3.busbw_gb_per_s", 1), ("collectives.3.time_s", -1), ("cost.capital_usd", -1),
    ("cost.capital_by_category_usd.storage", -1), ("cost.assumptions.electricity_usd_per_kwh", 0),
    ("bom.rows.0.extended_usd", -1), ("bom.rows.0.quantity", 0), ("compute.peak_tflops.bf16", 1),
    ("network.tiers.scale-out.oversubscription.0.oversubscription", -1),
    ("network.tiers.scale-up.injection_gb_per_s", 1), ("goodput.mtbi_hours", 1),
    ("goodput.checkpoint_interval_s", 0), ("degraded.figures.0.change", 0),
    ("summary.power_kw", -1), ("summary.accelerators", 0), ("summary.allreduce_8g_busbw_gb_per_s", 1),
    ("summary.oversubscription_at_leaf", -1), ("power_kw", -1), ("summary.no_such_row", 0),
])
def test_direction_is_the_declared_one(path, better):
    assert figs.direction(path) == better


def test_every_figure_under_summary_is_a_declared_row(results):
    for result in results:
        for key in figs.figures(result)["summary"]:
            assert summary.figure_of_key(key) is not None, key


def test_one_table_of_step_parts_serves_the_training_record():
    training = Training(fits=True, why=None, timed=True, compute_s=1.0, bubble_s=0.5)
    assert [name for name, _ in training.step_parts()] == [part.field for part in STEP_PARTS]
    assert dict(training.step_parts())["bubble_s"] == 0.5
    assert all(part.segment == part.field.removesuffix("_s") for part in STEP_PARTS)


@pytest.fixture
def fresh_figure_shape():
    spec._figure_shape.cache_clear()
    spec._figure_paths.cache_clear()
    yield
    spec._figure_shape.cache_clear()
    spec._figure_paths.cache_clear()


@pytest.mark.parametrize("sweep_path", SWEEPS, ids=lambda p: p.name)
def test_renaming_a_summary_label_keeps_saved_sweeps_running(monkeypatch, fresh_figure_shape, sweep_path):
    monkeypatch.setattr(summary, "POWER", dataclasses.replace(summary.POWER, label="Electrical power draw"))
    monkeypatch.setattr(summary, "ACCELERATORS", dataclasses.replace(summary.ACCELERATORS, label="GPUs"))
    sweep = spec.load_sweep(sweep_path)  # checks every figure the file names
    assert "summary.power_kw" in sweep.figures
    point = next(sweep.points())
    row = evaluate_point(point, sweep.figures, sweep.constraints, prune=False, catalog=sweep.catalog,
                         bases=sweep.bases)
    assert row["error"] is None
    assert isinstance(row["summary.power_kw"], float) and row["summary.accelerators"] > 0
    result = evaluate(spec.design_of(point["recipe"], sweep.catalog), sweep.catalog,
                      workload=point["recipe"]["workload"])
    metrics = [metric for metric, _value, _unit in summary.summary_rows(result)]
    assert "Electrical power draw" in metrics and "Power" not in metrics
    assert figs.summary_key("Electrical power draw", "kW") == "power_kw"
