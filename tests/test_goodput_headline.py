"""The goodput headline in the summary rows (issue 15: "days-to-train and cost of the run include
it"): the rows and their units, the keys sweeps and comparisons address them by, the reason when a
figure is missing, and a comparison showing each goodput figure once, in its Goodput block."""

from __future__ import annotations

import pytest

from designer.engine import evaluate
from designer.engine.compare import compare
from designer.engine.figures import direction, figures
from designer.engine.summary import summary_rows
from designer.explore.points import bounds
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog

DEFAULT = "nvidia-superpod-h100-4su"

# (row, unit, summary key, goodput field): written out here, so a renamed row or key fails.
HEADLINE = [
    ("Days to train with failures", "days", "days_to_train_with_failures", "days"),
    ("Effective training time ratio", "fraction", "effective_training_time_ratio", "effective_ratio"),
    ("Interruptions per day", "/day", "interruptions_per_day", "interruptions_per_day"),
    ("Mean time between interruptions", "h", "mean_time_between_interruptions_h", "mtbi_hours"),
    ("Checkpoint write time", "s", "checkpoint_write_time_s", "checkpoint_write_s"),
    ("Checkpoint interval (Young/Daly)", "s", "checkpoint_interval_s", "checkpoint_interval_s"),
    ("Restart and recovery per interruption", "s", "restart_and_recovery_per_interruption_s", "restart_s"),
    ("Hot spare servers", "count", "hot_spare_servers", "spares"),
]


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def _result(catalog, name: str = DEFAULT, **settings):
    design = load_design(resolve_design_path(name), catalog)
    for key, value in settings.items():
        if value is None:
            design.settings.pop(key, None)
        else:
            design.settings[key] = value
    return evaluate(design, catalog)


def test_the_summary_rows_carry_the_goodput_headline_after_the_training_rows(catalog):
    result = _result(catalog)
    g = result.goodput
    rows = summary_rows(result)
    names = [name for name, _value, _unit in rows]
    by_name = {name: (value, unit) for name, value, unit in rows}
    for name, unit, _key, field in HEADLINE:
        assert by_name[name] == (getattr(g, field), unit), name
    # Days without failures is the training row; the headline follows the training rows and comes
    # before the cost, whose run is paid for the days with failures.
    assert by_name["Days to train"] == (result.training.days, "days")
    assert names.index("Memory per GPU") < names.index("Days to train with failures") < names.index("Capital cost")
    assert [n for n in names if n in {h[0] for h in HEADLINE}] == [h[0] for h in HEADLINE]
    assert g.days > result.training.days and by_name["Hot spare servers"] == (3, "count")
    assert "Why some goodput figures are missing" not in by_name


def test_the_headline_keys_address_the_figures_and_say_which_way_is_better(catalog):
    result = _result(catalog)
    summary = figures(result)["summary"]
    for _name, _unit, key, field in HEADLINE:
        assert summary[key] == getattr(result.goodput, field), key
    assert summary["days_to_train"] == result.training.days  # the key sweeps used before stays
    better = {key: direction(f"summary.{key}") for _n, _u, key, _f in HEADLINE}
    assert better == {"days_to_train_with_failures": -1, "effective_training_time_ratio": 1,
                      "interruptions_per_day": -1, "mean_time_between_interruptions_h": 1,
                      "checkpoint_write_time_s": -1, "checkpoint_interval_s": 0,
                      "restart_and_recovery_per_interruption_s": -1, "hot_spare_servers": 0}


def test_a_sweep_bounds_the_days_with_failures_from_below_as_it_does_the_days(catalog):
    design = load_design(resolve_design_path(DEFAULT), catalog)
    known = bounds(design, catalog, design.settings.get("workload") or {})
    low, _high = known["summary.days_to_train_with_failures"]
    assert known["summary.days_to_train_with_failures"] == known["goodput.days"]
    assert 0 < low <= evaluate(design, catalog).goodput.days


def test_without_storage_the_rows_say_why_the_checkpoint_figures_are_missing(catalog):
    result = _result(catalog, storage=None)
    by_name = {name: (value, unit) for name, value, unit in summary_rows(result)}
    assert by_name["Interruptions per day"][0] == result.goodput.interruptions_per_day > 0
    for missing in ("Checkpoint write time", "Checkpoint interval (Young/Daly)", "Effective training time ratio",
                    "Days to train with failures"):
        assert missing not in by_name
    why, unit = by_name["Why some goodput figures are missing"]
    assert "no storage" in why and unit == ""


def test_a_comparison_shows_each_goodput_figure_once_in_its_goodput_block(catalog):
    superpod, azure = _result(catalog), _result(catalog, "azure-nd-h100-v5")
    comparison = compare([superpod, azure], ["superpod", "azure"])
    main_block = {row.key for row in comparison.rows}
    assert not main_block & {key for _n, _u, key, _f in HEADLINE}
    assert "days_to_train" in main_block
    goodput = {row.key: row for row in comparison.goodput}
    assert list(goodput) == [f"goodput.{field}" for *_rest, field in HEADLINE]
    assert goodput["goodput.spares"].values == (superpod.goodput.spares, azure.goodput.spares)
    assert goodput["goodput.interruptions_per_day"].unit == "/day"
