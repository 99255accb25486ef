"""Hostile input to what issue 15 added (cost assumptions, catalogue prices, failure what-ifs, hot
spares): each is refused with one line naming the field, or evaluated truthfully; the healthy
figures never move. The GUI's fields are in test_gui_hostile_inputs.py."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from designer.cli import UsageError, _mark_failures, main
from designer.engine import evaluate
from designer.engine.cost import ASSUMPTIONS
from designer.engine.failures import Failure, degraded_design, parse_failure, unbuildable
from designer.engine.goodput import reliability
from designer.io.examples import resolve_design_path
from designer.io.files import DesignFileError, design_from_document, design_to_document, load_design, save_design
from designer.io.report import result_table
from designer.model import edits
from designer.model.catalog import Catalog, default_catalog, parse_catalog_document
from designer.model.errors import CatalogError
from designer.paths import catalog_dir
from designer.topologies import generate

CATALOG = default_catalog()
# Two scalable units of four racks' servers, two spines: small enough to evaluate many times.
SMALL = generate("rail-fat-tree", CATALOG, nodes=16, nodes_per_su=8)
HEALTHY = evaluate(SMALL, CATALOG)


def small_document() -> dict:
    return copy.deepcopy(design_to_document(SMALL))  # its settings are the design's own


def small():
    return design_from_document(small_document(), CATALOG)


def figures(result) -> dict:
    """What a failure what-if must leave alone: the healthy design's own sections."""
    d = result.as_dict()
    return {key: d[key] for key in ("network", "collectives", "training", "goodput", "cost", "power")}


def finite_and_not_negative(values, where: str) -> None:
    for key, value in values.items():
        if isinstance(value, dict):
            finite_and_not_negative(value, f"{where}.{key}")
        elif isinstance(value, float | int) and not isinstance(value, bool):
            assert math.isfinite(value) and value >= 0, f"{where}.{key} = {value}"


# -- failure marks follow what they mark -------------------------------------------------------------

def test_deleting_a_failed_item_takes_its_mark_along_and_the_saved_file_opens(tmp_path):
    design = small()
    edits.set_setting(design, "failures", [{"target": "spines.sw", "copies": 1}, {"target": "su.leaf0"},
                                           {"target": "ib-ndr", "percent": 5}], "Fail").apply(design)
    delete = edits.remove(design, ["spines"])
    delete.apply(design)
    # The spine's mark went with it; the leaf's and the medium's (a catalogue part) stay.
    assert design.settings["failures"] == [{"target": "su.leaf0"}, {"target": "ib-ndr", "percent": 5}]
    path = tmp_path / "deleted.cluster.json"
    save_design(design, path)
    assert load_design(path, CATALOG).settings["failures"] == design.settings["failures"]
    delete.inverse().apply(design)  # undo: the spine and its mark are back
    assert design.settings["failures"][0] == {"target": "spines.sw", "copies": 1}
    assert "spines.sw" in design.items


def test_deleting_the_last_marked_link_leaves_no_empty_mark_list():
    design = small()
    link = next(iter(design.links))
    edits.set_setting(design, "failures", [{"target": link}], "Fail").apply(design)
    edits.remove(design, [], [link]).apply(design)
    assert "failures" not in design.settings


# -- failures in a file or on the command line ------------------------------------------------------

def degraded_of(design_failures: list[dict]):
    design = small()
    design.settings["failures"] = design_failures
    result = evaluate(design, CATALOG)
    assert figures(result) == figures(HEALTHY)  # the healthy figures never move
    return result.degraded


def test_a_failure_inside_something_failed_whole_is_already_failed():
    whole = degraded_of([{"target": "spines"}])
    for marks in ([{"target": "spines"}, {"target": "spines.sw"}],
                  [{"target": "spines.sw", "copies": 1}, {"target": "spines"}],
                  [{"target": "spines"}, {"target": "spines.sw"}, {"target": "spines.sw"}]):
        again = degraded_of(marks)
        assert again.why == whole.why and again.figures == whole.figures, marks
    # A link and one of its ends, in either order: the end's failure takes the link along.
    link = next(l for l in SMALL.links.values() if l.a == "su.leaf0" or l.b == "su.leaf0")
    one = degraded_of([{"target": "su.leaf0"}])
    for marks in ([{"target": link.id}, {"target": "su.leaf0"}], [{"target": "su.leaf0"}, {"target": link.id}]):
        assert degraded_of(marks).figures == one.figures


def test_marks_of_one_target_add_up_to_the_copies_there_are():
    assert degraded_of([{"target": "su.node.gpu0", "copies": 1}] * 2).figures == \
        degraded_of([{"target": "su.node.gpu0", "copies": 2}]).figures
    every = degraded_of([{"target": "spines.sw"}])
    too_many = degraded_of([{"target": "spines.sw", "copies": 5}])
    assert too_many.figures == every.figures
    assert "5 copies of 'spines.sw' marked failed, the design has 2: every copy failed" in too_many.why


def test_a_medium_no_link_uses_fails_nothing_and_says_so():
    degraded = degraded_of([{"target": "ib-hdr"}])
    assert degraded.cut_off == 0 and all(f.change in (0, None) for f in degraded.figures)
    assert "no link of the design uses medium 'ib-hdr'" in degraded.why


def test_failing_every_accelerator_says_nothing_trains_and_shows_no_job_figures():
    degraded = degraded_of([{"target": "su.node"}])
    assert degraded.accelerators == 0 and degraded.cut_off == HEALTHY.network.accelerators == 128
    assert "nothing trains" in degraded.why
    rows = {f.figure: f for f in degraded.figures}
    assert rows["Interruptions per day"].healthy > 0 and rows["Interruptions per day"].degraded is None
    assert rows["Days to train (with failures)"].degraded is None


def test_a_design_without_a_network_says_nothing_trains_when_every_system_fails():
    # Cerebras's systems are not joined: a failure cuts off no one else, and failing all leaves none.
    design = load_design(resolve_design_path("cerebras-cg1"), CATALOG)
    design.settings["failures"] = [{"target": "racks"}]
    degraded = evaluate(design, CATALOG).degraded
    assert degraded.accelerators == 0 and degraded.why == "no accelerator is left: nothing trains"
    design.settings["failures"] = [{"target": "racks", "copies": 31}]
    degraded = evaluate(design, CATALOG).degraded
    assert degraded.accelerators == 2 and degraded.cut_off == 62
    assert "only those of failed parts leave the job, none for a lost path" in degraded.why


def test_a_model_given_by_its_parameter_count_alone_survives_a_what_if():
    # The shape inferred from 10 million parameters counts about 39 million (its embeddings): checked
    # once, not refused when the degraded job is evaluated (benchmarks/fuzz.py found it).
    design = small()
    design.settings["workload"] = {"training": {"model": {"parameters": 1e7, "heads": 1}}}
    healthy = evaluate(design, CATALOG)
    design.settings["failures"] = [{"target": "spines.sw", "copies": 1}]
    result = evaluate(design, CATALOG)
    assert result.degraded.figures and result.training == healthy.training
    assert result.degraded.accelerators == 128


def test_a_whole_failure_is_applied_before_the_copy_a_partial_one_splits_out():
    # One GPU of one server fails first; failing the whole unit group must not leave the split copy running.
    broken, cut_off, why = degraded_design(SMALL, CATALOG, [parse_failure("su.node.gpu0:1"), parse_failure("su")])
    assert cut_off == 128 and "nothing trains" in why
    assert not any(item.kind == "accelerator" for item in broken.items.values())


@pytest.mark.parametrize("text, words", [
    ("", "expected ID, ID:COPIES or ID:PERCENT%"),
    ("spines.sw:0", "a whole number from 1 to 100,000,000"),
    ("spines.sw:-1", "after 'spines.sw:' expected a count of copies"),
    ("spines.sw:abc", "after 'spines.sw:' expected a count of copies"),
    ("spines.sw:150%", "above 0 and at most 100"),
    ("spines.sw:1.5", "a whole number"),
    ("spines.sw:3", "'spines.sw' has 2 copies in {path}, not 3"),
    ("spines.sw:" + "9" * 5000, "a whole number from 1 to 100,000,000"),
    ("ib-hdr", "no link of {path} uses medium 'ib-hdr'"),
    ("nowhere", "no item, link or link medium 'nowhere' in {path}"),
])
def test_a_bad_fail_option_is_a_usage_error_naming_it(tmp_path, capsys, text, words):
    path = tmp_path / "small.cluster.json"
    save_design(SMALL, path)
    assert main(["evaluate", str(path), "--fail", text]) == 2
    err = capsys.readouterr().err
    assert "--fail" in err and words.format(path=path) in err


@pytest.mark.parametrize("text, bisection", [("core.sw:1", 199_500.0), ("blk.spine0:1", 199_500.0)])
def test_a_fail_option_on_a_matched_group_is_a_what_if_in_the_users_words(capsys, text, bisection):
    # Meta RSC phase 2's core switches are joined copy for copy to each block's spines (a matched
    # link): the copies are split out together (tests/test_matched_failures.py has the figures).
    assert main(["evaluate", "meta-rsc-phase2", "--fail", text]) == 0
    out = capsys.readouterr().out
    # Named in the design's words with the option as typed ("1 of 400 × Core (core.sw:1)").
    assert f"({text}) failed (0 accelerators cut off)" in out and ":f1" not in out
    whatif = out[out.index("What-if:"):].splitlines()
    row = next(line.split() for line in whatif if line.strip().startswith("Scale-out bisection"))
    assert row[2:] == ["200,000", "→", f"{bisection:,.0f}", "GB/s"]


def test_the_check_before_marking_says_what_the_engine_says_of_a_marked_file():
    design = load_design(resolve_design_path("meta-rsc-phase2"), CATALOG)
    for marks in ([Failure("blk.spine0", 1)], [Failure("core", 2)], [Failure("core.sw", 3), Failure("su.node", 1)]):
        assert unbuildable(design, CATALOG, marks) is None
        design.settings["failures"] = [mark.setting() for mark in marks]
        degraded = evaluate(design, CATALOG).degraded
        assert degraded.figures and degraded.cut_off == 8 * len(marks[1:])  # a server of 8 GPUs
        assert degraded.why in (None, "the healthy plan with 1 data-parallel replica fewer, 120 accelerators idle")
    # Every copy, or a link's copies, split nothing out.
    assert unbuildable(design, CATALOG, [Failure("core.sw"), Failure("blk.spine0--core.sw", 1)]) is None


def test_compare_names_the_design_a_fail_option_does_not_fit(tmp_path, capsys):
    first, second = tmp_path / "small.cluster.json", tmp_path / "one-server.cluster.json"
    save_design(SMALL, first)
    save_design(generate("server", CATALOG, platform="dgx-h100"), second)
    assert main(["compare", str(first), str(second), "--fail", "spines.sw:1"]) == 2
    assert f"--fail spines.sw:1: no item, link or link medium 'spines.sw' in {second}" in capsys.readouterr().err


def test_a_design_file_with_a_bad_failure_is_refused_at_its_path():
    document = small_document()
    document["settings"]["failures"] = [{"target": "spines.sw"}, {"target": "spines.sw", "copies": 1, "percent": 2}]
    with pytest.raises(DesignFileError, match=r"\$\.settings\.failures\[1\]: .*copies or percent, not both"):
        design_from_document(document, CATALOG)


# -- cost assumptions and catalogue prices --------------------------------------------------------------

def test_a_nan_in_a_document_built_in_memory_is_refused_at_its_path():
    document = small_document()
    document["settings"]["cost"] = {"pue": float("nan")}
    with pytest.raises(DesignFileError, match=r"\$\.settings\.cost\.pue: expected a number from 1 to 3, got NaN"):
        design_from_document(document, CATALOG)


def test_a_price_without_its_source_names_the_missing_field():
    entry = shipped_entry("h100-sxm")
    entry.pop("price_source")
    document = {"format": "cluster-designer-catalog", "version": 1, "parts": [entry]}
    with pytest.raises(CatalogError, match=r"\$\.parts\[0\]: missing field 'price_source' \('price_usd' needs"):
        parse_catalog_document(document, "mine.json")


def shipped_entry(part_id: str) -> dict:
    shipped = (json.loads(path.read_text(encoding="utf-8")) for path in catalog_dir().glob("*.json"))
    return next(part for document in shipped for part in document["parts"] if part["id"] == part_id)


@pytest.mark.parametrize("part, change, where, words", [
    ("h100-sxm", {"price_usd": -1}, "price_usd", "expected a figure from 0 to 1e+09 USD, got -1"),
    ("h100-sxm", {"price_usd": "27500"}, "price_usd", 'got "27500"'),
    ("h100-sxm", {"price_usd": "NaN"}, "price_usd", "got NaN"),
    ("h100-sxm", {"price_usd": "1e999"}, "price_usd", "got 1e999"),
    ("h100-sxm", {"price_date": "2024-13"}, "price_date", 'like "2024-01" or "2024-01-31", got "2024-13"'),
    ("h100-sxm", {"price_date": "2024-02-31"}, "price_date", "'2024-02-31' is not a date on the calendar"),
    ("h100-sxm", {"power_w": -5}, "power_w", "expected a figure from 0 to 1e+06 W, got -5"),
    ("ddn-ai400x2", {"write_gb_per_s": 0}, "write_gb_per_s", "expected a figure above 0"),
])
def test_a_bad_catalogue_override_is_refused_at_its_field(tmp_path, capsys, part, change, where, words):
    entry = {**shipped_entry(part), **{k: v for k, v in change.items() if v not in ("NaN", "1e999")}}
    text = json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [entry]})
    for key, literal in change.items():  # a number JSON cannot hold, written as a file would hold it
        if literal in ("NaN", "1e999"):
            text = text.replace(f'"{key}": {json.dumps(entry[key])}', f'"{key}": {literal}')
    mine = tmp_path / "mine.json"
    mine.write_text(text)
    design = tmp_path / "small.cluster.json"
    save_design(SMALL, design)
    assert main(["--catalog", str(mine), "evaluate", str(design)]) == 2
    err = capsys.readouterr().err
    assert f"{mine}: $.parts[0].{where}: " in err and words in err and f"(part '{part}')" in err


def test_storage_slower_than_the_failures_says_why_nothing_ends_and_prints_no_infinity():
    storage = SMALL.settings["storage"]["part"]
    for bandwidth in (5e-324, 1e-9):  # the catalogue takes any figure above 0
        entry = {**json.loads(json.dumps(dict(CATALOG[storage].data))), "write_gb_per_s": bandwidth,
                 "read_gb_per_s": bandwidth}
        slow = CATALOG.merged(Catalog(parse_catalog_document(
            {"format": "cluster-designer-catalog", "version": 1, "parts": [entry]}, "slow.json")))
        result = evaluate(SMALL, slow)
        goodput = result.goodput
        assert goodput.effective_ratio == 0 and goodput.days is None
        assert goodput.why == ("failures outrun progress: a checkpoint takes longer to write than the mean time "
                               "between interruptions")
        json.dumps(result.as_dict(), allow_nan=False)
        assert "inf" not in result_table(result).lower().replace("infiniband", "")


def test_more_hot_spares_than_servers_is_warned_about_and_still_costed():
    design = small()
    servers = sum(design.multiplicity(i.id) for i in design.items.values() if i.kind == "server")
    design.settings["spares"] = servers
    assert not [f for f in evaluate(design, CATALOG).lint if "hot spare" in f.message]
    design.settings["spares"] = servers + 1
    result = evaluate(design, CATALOG)
    warning = next(f for f in result.lint if "hot spare" in f.message)
    assert warning.severity == "warning" and warning.item == "su.node"
    assert warning.message.startswith(f"{servers + 1:,} hot spare servers for the design's {servers:,} servers")
    assert result.goodput.spares == servers + 1 and result.cost.capital_usd > HEALTHY.cost.capital_usd


def test_every_shipped_failure_rate_is_a_positive_figure_with_its_source():
    # The rates are shipped, not a user's input: this keeps an edit of the file from feeding the
    # goodput model a negative or infinite rate.
    data = reliability()
    for name, entry in data["classes"].items():
        rate = entry["failures_per_year"]
        assert isinstance(rate, float | int) and 0 < rate < 100 and entry["source"] and entry["what"], name
    recovery = data["recovery"]
    for key, source in (("restart_s", "restart_source"), ("repair_hours", "repair_source"),
                        ("checkpoint_bytes_per_parameter", "checkpoint_source")):
        assert 0 < recovery[key] < 1e6 and recovery[source], key


HOSTILE_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 20, 10 ** 20), st.booleans(), st.none(),
    st.text(max_size=5), st.sampled_from([0, 1, 0.01, 1e-300, 1e300, -0.0]))


@st.composite
def cost_settings(draw) -> dict:
    """A few assumptions, each in its range two times in three (bounds included), else anything."""
    setting = {}
    for a in draw(st.lists(st.sampled_from(ASSUMPTIONS), max_size=4, unique=True)):
        fits = (st.sampled_from(a.choices) if a.choices
                else st.one_of(st.floats(a.minimum, a.maximum), st.sampled_from([a.minimum, a.maximum])))
        hostile = st.sampled_from(["both", "", "Build", None, 1]) if a.choices else HOSTILE_NUMBERS
        setting[a.key] = draw(st.one_of(fits, fits, hostile))
    return setting


@settings(max_examples=50, deadline=None)
@given(setting=st.one_of(cost_settings(), cost_settings(), cost_settings(),
                         st.dictionaries(st.text(max_size=8), HOSTILE_NUMBERS, max_size=2)))
def test_any_cost_setting_is_refused_at_its_field_or_gives_finite_figures(setting):
    document = small_document()
    document["settings"]["cost"] = setting
    try:
        design = design_from_document(document, CATALOG)
    except DesignFileError as exc:
        assert exc.json_path.startswith("$.settings.cost"), exc
        event("refused")
        return
    event("evaluated")
    cost = evaluate(design, CATALOG).cost
    finite_and_not_negative(cost.as_dict(), "cost")
    assert cost.per_accelerator_hour_usd is not None and cost.per_accelerator_hour_usd > 0


# -- --fail specs, property ----------------------------------------------------------------------------

TARGETS = st.sampled_from(sorted(SMALL.items) + sorted(SMALL.links)[:20] + ["ib-ndr", "nvlink4", "ib-hdr",
                                                                           "h100-sxm", "nowhere", ""])
AMOUNTS = st.one_of(st.just(""), st.just(""), st.integers(1, 8).map(lambda n: f":{n}"),
                    st.floats(0.01, 100).map(lambda p: f":{p:g}%"),
                    st.one_of(st.integers(-3, 40).map(lambda n: f":{n}"),
                              st.floats(-10, 200, allow_nan=False).map(lambda p: f":{p:g}%"),
                              st.sampled_from([":", ":abc", ":1.5", ":1e3%", "%", ":0%", ":100%"])))


@settings(max_examples=50, deadline=None)
@given(specs=st.lists(st.tuples(TARGETS, AMOUNTS).map("".join), min_size=1, max_size=3))
def test_any_fail_options_are_refused_by_name_or_give_truthful_figures(specs):
    design = small()
    try:
        _mark_failures(design, CATALOG, specs, "small.cluster.json")
    except UsageError as exc:
        assert str(exc).startswith("--fail"), exc
        event("refused")
        return
    event("evaluated")
    result = evaluate(design, CATALOG)
    assert figures(result) == figures(HEALTHY)
    degraded = result.degraded
    assert 0 <= degraded.accelerators <= HEALTHY.network.accelerators
    assert degraded.cut_off == HEALTHY.network.accelerators - degraded.accelerators
    for figure in degraded.figures:
        for value in (figure.healthy, figure.degraded):
            assert value is None or (math.isfinite(value) and value >= 0), figure
    if degraded.accelerators == 0:
        assert "nothing trains" in degraded.why


def test_the_property_tests_start_from_a_priced_healthy_design():
    assert HEALTHY.cost.per_accelerator_hour_usd and HEALTHY.degraded is None and HEALTHY.training.timed
