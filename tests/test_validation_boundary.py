"""Everything from outside is checked at the boundary: design files (settings included), workload
files, the catalogue, CLI options and generator parameters. A file never makes the tool read
another file; every refusal is one line naming the file and the JSON path (or the option, or the
template and parameter); reading and evaluating are bounded."""

from __future__ import annotations

import builtins
import copy
import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.cli import main
from designer.engine import budget, evaluate
from designer.io import schemas
from designer.io.exports import result_json
from designer.io.files import DesignFileError, dumps, load_design, loads
from designer.model.catalog import default_catalog
from designer.model.errors import MAX_MESSAGE_CHARS, DesignerError, InputError
from designer.model.validation import _fast, _Validator, check
from designer.topologies import TopologyError, generate

SMALL = json.loads(dumps(generate("server", default_catalog())))


def _with(path: str, value):
    """SMALL with the value at a dotted path (e.g. "settings.workload.training.model") replaced."""
    doc = copy.deepcopy(SMALL)
    *parents, last = path.split(".")
    node = doc
    for key in parents:
        node = node.setdefault(key, {}) if not key.isdigit() else node[int(key)]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return doc


def _refusal(tmp_path, document) -> str:
    path = tmp_path / "bad.cluster.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(DesignFileError) as caught:
        load_design(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and len(message) <= MAX_MESSAGE_CHARS
    return message[len(f"{path}: "):]


# --- a file never reaches outside itself --------------------------------------------------------

@pytest.fixture
def opened(monkeypatch):
    """Every path the process opens or looks at while the test runs."""
    seen: list[str] = []
    real_open, real_os_open, real_stat = builtins.open, os.open, os.stat

    def spy(real):
        def call(path, *args, **kwargs):
            seen.append(os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path))
            return real(path, *args, **kwargs)
        return call

    monkeypatch.setattr(builtins, "open", spy(real_open))
    monkeypatch.setattr(io, "open", spy(real_open))
    monkeypatch.setattr(os, "open", spy(real_os_open))
    monkeypatch.setattr(os, "stat", spy(real_stat))
    return seen


@pytest.mark.parametrize("named", ["/etc/hostname", "../../secret-model.json", "/proc/self/environ", "SENTINEL"])
def test_a_design_naming_a_file_is_refused_without_opening_it(tmp_path, opened, named):
    sentinel = tmp_path / "sentinel-model.json"
    sentinel.write_text('{"layers": 2, "hidden": 128, "heads": 1}')
    named = str(sentinel) if named == "SENTINEL" else named
    design = tmp_path / "d.cluster.json"
    design.write_text(json.dumps(_with("settings.workload.training.model", named)))
    opened.clear()
    with pytest.raises(DesignFileError) as caught:
        evaluate(load_design(design))
    assert str(caught.value).startswith(f"{design}: $.settings.workload.training.model: expected a preset")
    assert "never names a file" in str(caught.value)
    assert not [p for p in opened if p == named or p.endswith(("sentinel-model.json", "secret-model.json"))]


def test_a_workload_file_is_read_when_the_user_names_it(tmp_path, capsys):
    model = tmp_path / "tiny.json"
    model.write_text('{"layers": 4, "hidden": 512, "heads": 8, "seq": 1024, "global_batch": 64}')
    design = tmp_path / "d.cluster.json"
    design.write_text(json.dumps(SMALL))
    assert main(["evaluate", str(design), "--workload", str(model), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["training"]["model"] == "tiny"
    model.write_text('{"layers": 4, "hidden": 512, "heads": 7}')
    assert main(["evaluate", str(design), "--workload", str(model)]) == 2
    assert f"{model}: $.heads: hidden (512) must be a multiple of heads (7)" in capsys.readouterr().err


# --- every field of settings, and the shapes that crashed before --------------------------------

@pytest.mark.parametrize("path,value,where,problem", [
    ("settings.workload.collective.sizes", ["1M", "16M", -4], "$.settings.workload.collective.sizes[2]",
     'expected a positive size like "1G" (at most 1,125,899,906,842,624 bytes), got -4'),
    ("settings.workload.collective.sizes", ["9999999999999T"], "$.settings.workload.collective.sizes[0]",
     "at most 1P"),
    ("settings.workload.collective.sizes", ["1M"] * 199_999, "$.settings.workload.collective.sizes",
     "199,999 entries; expected at most 64"),
    ("settings.workload.collective.op", 3, "$.settings.workload.collective.op", "expected one of"),
    ("settings.workload.collective.algorithm", "warp", "$.settings.workload.collective.algorithm", '"warp"'),
    ("settings.workload.collective.ranks", "8", "$.settings.workload.collective.ranks", 'got "8"'),
    ("settings.workload.collective.ranks", 0, "$.settings.workload.collective.ranks", "from 1 to"),
    ("settings.workload.training.plan", "fast", "$.settings.workload.training.plan", '"auto" or a plan object'),
    ("settings.workload.training.plan", {"tp": "8"}, "$.settings.workload.training.plan.tp", 'got "8"'),
    ("settings.workload.training.plan", {"zero": 7}, "$.settings.workload.training.plan.zero", "from 0 to 3"),
    ("settings.workload.training.model", {"layers": -1}, "$.settings.workload.training.model.layers", "got -1"),
    ("settings.workload.training.model", {"layers": 2, "hidden": 100, "heads": 3},
     "$.settings.workload.training.model.heads",
     "hidden (100) must be a multiple of heads (3)"),
    ("settings.workload.training.model", {"layers": 2, "hidden": 128, "experts": 8, "top_k": 9},
     "$.settings.workload.training.model.top_k", "more than the 8 experts"),
    ("settings.workload.training.model", {"hidden": 128}, "$.settings.workload.training.model.layers", "missing"),
    ("settings.workload.training.plan", {"attention": "paged"}, "$.settings.workload.training.plan.attention",
     '"flash"'),
    ("settings.workload.training.overlap", {"tp": "some"}, "$.settings.workload.training.overlap.tp", '"partial"'),
    ("settings.workload.training.model", ["gpt3-175b"], "$.settings.workload.training.model", "an object"),
    ("settings.workload.training.tokens", 1e300, "$.settings.workload.training.tokens", "at most 1e18"),
    ("settings.template", "torus", "$.settings.template", "expected an object"),
    ("settings.template", {"name": "torus", "params": {"dims": "axb"}}, "$.settings.template.params.dims",
     "torus shape"),
    ("settings.in_network_reduction", {"nvls": "yes"}, "$.settings.in_network_reduction.nvls", "true or false"),
    ("settings.plan", {}, "$.settings", "unknown field \"plan\""),
    ("items.0.count", 2.5, "$.items[0].count", "got 2.5"),
    ("name", "\x1b[2J", "$.name", "no control characters"),
])
def test_settings_and_fields_are_checked_at_load(tmp_path, path, value, where, problem):
    message = _refusal(tmp_path, _with(path, value))
    assert message.startswith(f"{where}: ") and problem in message


@pytest.mark.parametrize("text,where,problem", [
    ('{"x": ' + "9" * 5000 + "}", "$", ""),  # a 5,000-digit integer: Python's int() refuses over 4,300
    (json.dumps(SMALL).replace('"x": 0', '"x": NaN', 1), "$.items", "got NaN"),
    (json.dumps(SMALL).replace('"x": 0', '"x": 1e999', 1), "$.items", "got 1e999"),
    (json.dumps(SMALL).replace('"x": 0', '"x": ' + "1" * 5000, 1), "$.items", "got a 5,000-digit number"),
    ("[" * 100_000 + "]" * 100_000, None, "nested too deeply"),
])
def test_numbers_and_nesting_json_cannot_hold(tmp_path, text, where, problem):
    message = _refusal(tmp_path, text)
    assert where is None or message.startswith(where)
    assert problem in message


def test_containment_is_bounded_and_read_in_one_pass(tmp_path):
    # 25,000 nested groups listed children first took 286 s and 2.46 GB, and 987 raised RecursionError.
    chain = [{"id": f"g{i}", "kind": "group", **({"parent": f"g{i - 1}"} if i else {})} for i in range(25_000)]
    message = _refusal(tmp_path, {**SMALL, "items": chain[::-1], "links": []})
    assert message.startswith("$.items[") and "nested more than 32 levels deep" in message


# --- bounded reading ----------------------------------------------------------------------------

def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "pipe.cluster.json"
    os.mkfifo(fifo)  # opening it to read would wait for a writer for ever
    for path, problem in ((fifo, "is not a regular file"), ("/dev/zero", "is not a regular file"),
                          (tmp_path, "is a folder, not a design file")):
        with pytest.raises(DesignFileError, match=problem):
            load_design(path)


def test_size_is_checked_before_reading(tmp_path):
    big = tmp_path / "big.cluster.json"
    with open(big, "wb") as handle:
        handle.truncate(65 * 2 ** 20)  # sparse: nothing to read, only the size is looked at
    with pytest.raises(DesignFileError, match=r"is 65.0 MiB, above the limit of 64 MiB for a design file"):
        load_design(big)


def test_a_folder_that_cannot_be_searched_gives_one_line(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(DesignFileError, match=r"locked/x.cluster.json: cannot be read \(Permission denied\)"):
        load_design(tmp_path / "locked" / "x.cluster.json")


def test_evaluation_above_the_work_budget_is_refused_up_front(monkeypatch):
    design = generate("rail-fat-tree", default_catalog(), nodes=32)
    monkeypatch.setattr(budget, "MAX_WORK", len(design.items) + len(design.links) - 1)
    with pytest.raises(budget.BudgetError, match="too large to evaluate: .* above the budget"):
        evaluate(design)


# --- engine refusals name where the setting came from -----------------------------------------------

def test_plan_that_does_not_fit_is_refused_at_its_place(tmp_path, capsys):
    design = tmp_path / "d.cluster.json"
    design.write_text(json.dumps(_with("settings.workload.training.plan", {"tp": 3})))
    assert main(["evaluate", str(design)]) == 2
    assert f"{design}: $.settings.workload.training.plan: plan tp=3" in capsys.readouterr().err
    design.write_text(json.dumps(SMALL))
    assert main(["evaluate", str(design), "--plan", "tp=3"]) == 2
    assert "command line: --plan: plan tp=3" in capsys.readouterr().err
    assert main(["evaluate", str(design), "--sizes", "1M,-4"]) == 2
    assert "command line: --sizes[1]: size must be a positive number of bytes" in capsys.readouterr().err
    assert main(["evaluate", str(design), "--ranks", "9" * 30]) == 2
    assert "command line: --ranks: expected a whole number from 1 to 100,000,000" in capsys.readouterr().err


def test_json_output_has_no_nan(tmp_path, capsys, monkeypatch):
    result = evaluate(generate("server", default_catalog()))
    monkeypatch.setattr(type(result.network.scale_up), "as_dict",
                        lambda self: {"bandwidth": float("nan"), "peak": float("inf")}, raising=False)
    text = result_json(result)
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in --json output"))


# --- generators -------------------------------------------------------------------------------------

@pytest.mark.parametrize("template,params,fragment", [
    ("torus", {"dims": "1000x1000"}, "torus: a block of 1,000,000 chips"),
    ("torus", {"dims": "4096x4096x4096"}, "torus: parameter 'dims'"),
    ("torus", {"dims": "64x64x64"}, "set parameter 'block'"),
    ("server", {"platform": "mi300x-platform", "gpus_per_node": 4096}, "server: parameter 'gpus_per_node'"),
    ("server", {"name": "a\udcffb"}, "server: parameter 'name' must be printable text"),
    ("rail-fat-tree", {"platform": "supernode-32", "nics_per_node": 4}, "rail-fat-tree: platform 'supernode-32' "
                                                                         "has no default NIC; set parameter 'nic'"),
    ("fat-tree", {"nodes": 1_000_000, "gpus_per_node": 256}, "fat-tree: parameters 'nodes'"),
])
def test_generator_refusals_name_the_template_and_parameter(template, params, fragment):
    with pytest.raises(TopologyError) as caught:
        generate(template, default_catalog(), **params)
    assert fragment in str(caught.value) and len(str(caught.value)) <= MAX_MESSAGE_CHARS


@pytest.mark.parametrize("template", ["server", "rail-fat-tree", "fat-tree", "torus", "pcie-fabric"])
def test_what_a_generator_makes_loads_back(template):
    design = generate(template, default_catalog())
    assert loads(dumps(design)).items == design.items


def test_non_utf8_argument_from_the_shell_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "designer", "new", "--template", "server", "--set", b"name=a\xffb",
                           "-o", os.devnull], capture_output=True)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1


# --- the fast schema test agrees with jsonschema -----------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10, 10 ** 7), st.floats(-1e10, 1e10),
                     st.text(max_size=8), st.sampled_from(["auto", "1G", "h100-sxm", "gpt3-175b", "x" * 300]))
_PATHS = ["items.0.count", "items.1.x", "items.1.kind", "links", "name", "settings.workload.collective.sizes",
          "settings.workload.collective.op", "settings.workload.training.plan", "settings.workload.training.model",
          "settings.template.params.dims", "settings.in_network_reduction.sharp", "version", "items.0.part"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_PATHS), st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3),
                                                               st.dictionaries(st.text(max_size=4), _SCALARS,
                                                                               max_size=2))), max_size=3))
def test_fast_schema_test_agrees_with_jsonschema(changes):
    doc = SMALL
    for path, value in changes:
        doc = _with(path, value) if doc is SMALL else _merge(doc, path, value)
    fast_ok = _fast(schemas.DESIGN)(doc, ()) is None
    assert fast_ok == _Validator(schemas.DESIGN).is_valid(doc)


def _merge(doc, path, value):
    global SMALL
    saved, SMALL = SMALL, doc
    try:
        return _with(path, value)
    finally:
        SMALL = saved


# --- fuzzing: load and evaluate either work or refuse with one line naming the place ----------------

@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_PATHS + ["settings.workload.collective.ranks",
                                                   "settings.workload.training.global_batch", "links.0.lanes",
                                                   "items.2.parent"]),
                          st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3))), min_size=1, max_size=3))
def test_mutated_designs_load_and_evaluate_or_refuse_with_one_line(changes):
    doc = SMALL
    for path, value in changes:
        try:
            doc = _merge(doc, path, value)
        except (IndexError, KeyError, TypeError, AttributeError):
            continue  # that path is not in this mutant
    try:
        evaluate(loads(json.dumps(doc), path="mutant.cluster.json"))
    except InputError as exc:
        assert str(exc).startswith("mutant.cluster.json: $") and "\n" not in str(exc)
        assert len(str(exc)) <= MAX_MESSAGE_CHARS
    except DesignerError as exc:  # a workload that does not fit the design is refused by the engine
        assert "\n" not in str(exc) and getattr(exc, "setting", None)


def test_check_names_the_base_path():
    with pytest.raises(InputError, match=r"^opt: --x\[1\]: expected a whole number"):
        check([1, "2"], {"type": "array", "items": {"type": "integer"}}, "opt", InputError, "--x")


def test_the_app_cannot_make_a_name_its_files_refuse():
    from designer.model.design import Design, Item
    from designer.model.errors import DesignError

    design = Design()
    for name in ("x" * 201, "\x1b[2J"):
        with pytest.raises(DesignError, match="a name is printable text of at most 200 characters"):
            design.add_item(Item("g", "group", name=name))
