"""Every input of a sweep is checked before its first point: the base design is read once, with
the design file's reader, and goes to the workers by content (never by path: an edited file on a
long-lived cluster gives its new figures); parts swap only for parts of their kind; the figures
kept, constrained and aimed at are ones the engine computes, numbers where a number is needed;
true/false is not a number. And the smaller refusals found beside them: a price dated in the
future, an accelerator without compute, compare's column names, `gui --screenshot ""`."""

from __future__ import annotations

import json
import os
from datetime import date

import pytest
from dask.distributed import Client

from designer.cli import main
from designer.engine import evaluate
from designer.engine.figures import figures
from designer.engine.summary import summary_rows
from designer.explore.runner import run_sweep
from designer.explore.spec import BaseChangedError, SweepError, design_of, figure_problem, load_sweep
from designer.io.examples import resolve_design_path
from designer.io.files import load_design, save_design
from designer.model.catalog import load_catalog
from designer.model.errors import CatalogError
from designer.paths import catalog_dir
from designer.topologies import generate

SWEEP = {"format": "cluster-designer-sweep", "version": 1}
TEMPLATE = {**SWEEP, "template": "rail-fat-tree", "params": {"nodes": [2, 4]},
            "workloads": [{"model": "megatron-1.7b", "tokens": 1e11}]}


@pytest.fixture(scope="module")
def client():
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as c:
        yield c


def _sweep_file(folder, document: dict, name: str = "s.sweep.json"):
    path = folder / name
    path.write_text(json.dumps(document))
    return path


def _base_file(folder, nodes: int = 2, name: str = "base.cluster.json"):
    path = folder / name
    save_design(generate("rail-fat-tree", nodes=nodes), path, backup=False)
    return path


def _refusal(path) -> str:
    """The one line load_sweep refuses the file with."""
    with pytest.raises(SweepError) as refused:
        load_sweep(path)
    text = str(refused.value)
    assert "\n" not in text and text.startswith(f"{path}: ")
    return text


def _cli_refusal(capsys, argv: list[str]) -> str:
    """Exit code 2 and one line on stderr."""
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cluster-designer: error: "), lines
    return lines[0]


# -- the base design ------------------------------------------------------------------------------

def _fifo(folder):
    os.mkfifo(folder / "fifo")
    return str(folder / "fifo")


def _folder(folder):
    (folder / "designs").mkdir()
    return str(folder / "designs")


def _two_gigabytes(folder):
    with open(folder / "big.cluster.json", "wb") as handle:
        handle.truncate(2 * 2 ** 30)  # sparse: no disk used
    return str(folder / "big.cluster.json")


def _symlink_loop(folder):
    os.symlink("loop.cluster.json", folder / "loop.cluster.json")
    return "loop.cluster.json"  # beside the sweep file


@pytest.mark.parametrize("base, problem", [
    (lambda folder: "/etc/passwd", "not valid JSON"),
    (lambda folder: "/dev/zero", "is not a regular file"),
    (_fifo, "is not a regular file"),
    (_folder, "is a folder"),
    (_two_gigabytes, "above the limit of 64 MiB"),
    (_symlink_loop, "cannot be read"),
    (lambda folder: "", "expected a non-empty text"),
    (lambda folder: "missing.cluster.json", "cannot be read"),
], ids=["passwd", "dev-zero", "fifo", "folder", "2-GB", "symlink-loop", "empty", "missing"])
def test_a_base_that_is_no_design_file_is_refused_at_load_naming_base(tmp_path, capsys, base, problem):
    spec = _sweep_file(tmp_path, {**SWEEP, "base": base(tmp_path)})
    text = _refusal(spec)
    assert text.startswith(f"{spec}: $.base: ") and problem in text
    out = tmp_path / "rows.csv"
    assert problem in _cli_refusal(capsys, ["sweep", str(spec), "-o", str(out), "--workers", "1"])
    assert not out.exists()  # refused before any cluster started or any row was written


def test_a_base_design_with_a_bad_item_is_refused_at_load_naming_base_and_the_item(tmp_path):
    base = _base_file(tmp_path)
    document = json.loads(base.read_text())
    document["items"][0]["part"] = "no-such-part"
    base.write_text(json.dumps(document))
    text = _refusal(_sweep_file(tmp_path, {**SWEEP, "base": "base.cluster.json"}))
    assert "$.base: " in text and "$.items[0].part: unknown part 'no-such-part'" in text


def test_an_edited_base_gives_its_new_figures_on_the_same_cluster(tmp_path, client):
    base = _base_file(tmp_path, nodes=2)
    spec = _sweep_file(tmp_path, {**SWEEP, "base": "base.cluster.json", "keep": ["summary.accelerators"]})

    def accelerators() -> tuple[int, list[dict]]:
        rows: list[dict] = []
        run_sweep(load_sweep(spec), client, rows.append)
        assert [row["error"] for row in rows] == [None]
        return rows[0]["summary.accelerators"], rows

    before, rows = accelerators()
    assert before == figures(evaluate(load_design(base)))["summary"]["accelerators"]
    recipe = json.loads(rows[0]["design"])
    assert recipe["base"] == str(base) and len(recipe["base_sha256"]) == 64

    _base_file(tmp_path, nodes=4)  # edited between two runs on one long-lived cluster
    after, rows = accelerators()
    assert after == figures(evaluate(load_design(base)))["summary"]["accelerators"] != before
    assert json.loads(rows[0]["design"])["base_sha256"] != recipe["base_sha256"]

    # A row of the first run no longer stands for what the file holds: refused, not rebuilt from the new file.
    with pytest.raises(BaseChangedError) as refused:
        design_of(recipe)
    assert str(refused.value) == (f"the base design {base} changed since the sweep ran; "
                                  "run the sweep again to rebuild its points")


def test_the_base_is_read_on_the_driver_and_shipped_by_content(tmp_path):
    base = _base_file(tmp_path)
    sweep = load_sweep(_sweep_file(tmp_path, {**SWEEP, "base": "base.cluster.json"}))
    assert list(sweep.bases) == [sweep.base_sha256]
    base.unlink()  # the points need no file: they are built from the design the sweep carries
    point = next(sweep.points())
    assert point["recipe"]["base_sha256"] == sweep.base_sha256
    assert design_of(point["recipe"], bases=sweep.bases).items.keys() == sweep.bases[sweep.base_sha256].items.keys()


# -- parts swapped ---------------------------------------------------------------------------------

def test_a_part_of_another_kind_is_refused_naming_its_place(tmp_path, capsys):
    _base_file(tmp_path)
    spec = _sweep_file(tmp_path, {**SWEEP, "base": "base.cluster.json",
                                  "parts": {"h100-sxm": ["h200-sxm", "cx7-ndr"]}})
    assert _refusal(spec) == (f"{spec}: $.parts.h100-sxm[1]: part 'cx7-ndr' is a nic, "
                              "but 'h100-sxm' is an accelerator")
    best = tmp_path / "best.cluster.json"
    assert "is a nic" in _cli_refusal(capsys, ["optimize", str(spec), "-o", str(best), "--workers", "1"])
    assert not best.exists()


def test_a_part_the_base_does_not_hold_is_refused(tmp_path):
    _base_file(tmp_path)
    spec = _sweep_file(tmp_path, {**SWEEP, "base": "base.cluster.json", "parts": {"mi300x": ["h200-sxm"]}})
    assert "$.parts.mi300x: the base design has no item of part 'mi300x'" in _refusal(spec)


@pytest.mark.parametrize("swaps", [["h100-sxm", "h200-sxm"], ["h200-sxm", "cx7-ndr"]], ids=["same-kind", "a-nic"])
def test_whatever_optimize_writes_loads(tmp_path, capsys, swaps):
    _base_file(tmp_path)
    spec = _sweep_file(tmp_path, {**SWEEP, "base": "base.cluster.json", "parts": {"h100-sxm": swaps},
                                  "workloads": [{"model": "megatron-1.7b", "tokens": 1e11}],
                                  "keep": ["summary.power_kw"], "goal": {"minimize": "summary.power_kw"}})
    best = tmp_path / "best.cluster.json"
    code = main(["optimize", str(spec), "-o", str(best), "--workers", "1"])
    capsys.readouterr()
    if code == 0:
        winner = load_design(best)  # as `evaluate` and the app read it
        assert {i.part for i in winner.items.values() if i.kind == "accelerator"} <= set(swaps)
    else:
        assert code == 2 and not best.exists()
    assert code == (0 if swaps[-1] != "cx7-ndr" else 2)


# -- figures ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("change, where, words", [
    ({"keep": ["summary.power_kw", "training.days", "training.dayz"]}, "$.keep[2]",
     "figure 'training.dayz' is not computed for any design; did you mean 'training.days'"),
    ({"keep": ["design"]}, "$.keep[0]", "'design' is a column every row has already"),
    ({"keep": ["error"]}, "$.keep[0]", "is a column every row has already"),
    ({"keep": ["param.nodes"]}, "$.keep[0]", "'param.nodes' is a column every row has already"),
    ({"keep": ["summary.power_kw", "summary.power_kw"]}, "$.keep[1]", "kept twice (also $.keep[0])"),
    ({"constraints": ["summary.powerkw <= 100"]}, "$.constraints[0]",
     "figure 'summary.powerkw' is not computed for any design; did you mean 'summary.power_kw'"),
    ({"constraints": ["training.plan <= 1"]}, "$.constraints[0]",
     "figure 'training.plan' is an object or a text, never a number; a constraint needs a number"),
    ({"goal": {"minimize": "summary.training_model"}}, "$.goal.minimize",
     "figure 'summary.training_model' is a text, never a number; a goal needs a number"),
    ({"goal": {"maximize": "training.fits"}}, "$.goal.maximize", "is true or false, never a number"),
    ({"goal": {"minimize": "cost.nothing"}}, "$.goal.minimize", "figure 'cost.nothing' is not computed"),
])
def test_a_figure_no_design_has_or_a_goal_on_no_number_is_refused_naming_its_place(tmp_path, change, where, words):
    text = _refusal(_sweep_file(tmp_path, {**TEMPLATE, **change}))
    assert f": {where}: " in text and words in text


def test_figures_only_some_designs_have_are_accepted(tmp_path):
    sweep = load_sweep(_sweep_file(tmp_path, {
        **TEMPLATE, "keep": ["training.plan", "collectives.3.busbw_gb_per_s", "summary.accelerators_b200",
                             "inventory.accelerator_models.mi300x", "network.tiers.scale-out.bisection_gb_per_s",
                             "summary.dragonfly_groups", "summary.on_chip_sram_gib", "goodput.days",
                             "training.memory_model", "lint.0.message", "degraded.figures"],
        "constraints": ["summary.allreduce_4m_busbw_gb_per_s >= 1", "compute.peak_tflops.fp8 > 0"],
        "goal": {"minimize": "cost.run_usd"}}))
    assert sweep.goal == ("minimize", "cost.run_usd")


@pytest.mark.parametrize("example", ["cerebras-cg1", "google-tpu-v4-pod", "frontier-mi250x", "tesla-dojo-exapod"])
def test_every_figure_of_a_shipped_example_may_be_kept_and_every_number_aimed_at(example):
    def leaves(node, path=""):
        if isinstance(node, dict):
            for key, inner in node.items():
                yield from leaves(inner, f"{path}.{key}" if path else key)
        elif isinstance(node, list):
            for index, inner in enumerate(node[:3]):
                yield from leaves(inner, f"{path}.{index}")
        else:
            yield path, node

    tree = figures(evaluate(load_design(resolve_design_path(example))))
    for path, value in leaves(tree):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        assert figure_problem(path, "a goal" if number else None) is None, path


# -- true/false ------------------------------------------------------------------------------------

@pytest.mark.parametrize("params, where", [({"nodes": True}, "$.params.nodes"),
                                           ({"nodes": [1, True]}, "$.params.nodes[1]"),
                                           ({"nodes": {"from": True, "to": 4, "step": 1}}, "$.params.nodes.from")])
def test_true_is_not_taken_as_1(tmp_path, params, where):
    text = _refusal(_sweep_file(tmp_path, {**TEMPLATE, "params": params}))
    assert f": {where}: " in text and "got true" in text


@pytest.mark.parametrize("params, where, words", [
    ({"nodes": [4, 0]}, "$.params.nodes[1]", "parameter 'nodes' must be at least"),
    ({"gpu": ["h100-sxm", "cx7-ndr"]}, "$.params.gpu[1]", "'cx7-ndr' is not an accelerator"),
])
def test_a_parameter_value_every_point_would_refuse_is_refused_at_load(tmp_path, params, where, words):
    text = _refusal(_sweep_file(tmp_path, {**TEMPLATE, "params": params}))
    assert f": {where}: " in text and words in text


# -- beside the sweeps ------------------------------------------------------------------------------

def _catalogue_with(tmp_path, part: dict):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [part]}))
    return path


def _shipped(file: str, part_id: str) -> dict:
    return next(p for p in json.loads((catalog_dir() / file).read_text())["parts"] if p["id"] == part_id)


def test_a_price_dated_after_today_is_refused_naming_the_part_and_the_path(tmp_path, capsys):
    future = _catalogue_with(tmp_path, {**_shipped("switches.json", "qm8700"), "price_date": "2999-01"})
    with pytest.raises(CatalogError) as refused:
        load_catalog(future, include_user=False)
    assert str(refused.value).startswith(f"{future}: $.parts[0].price_date: '2999-01' is after today")
    assert "(part 'qm8700')" in str(refused.value)
    assert "is after today" in _cli_refusal(capsys, ["--catalog", str(future), "templates"])
    today = _catalogue_with(tmp_path, {**_shipped("switches.json", "qm8700"), "price_date": date.today().isoformat()})
    assert load_catalog(today, include_user=False)["qm8700"].get("price_date") == date.today().isoformat()


@pytest.mark.parametrize("peaks", [{"bf16": 0, "fp8": 0}, {"fp64": 34}], ids=["zero", "no-bf16"])
@pytest.mark.parametrize("plan", ["auto", {"tp": 8, "pp": 1}], ids=["auto", "given"])
def test_an_accelerator_without_compute_is_said_so_not_a_plan_that_does_not_fit(tmp_path, peaks, plan):
    catalog = load_catalog(_catalogue_with(tmp_path, {**_shipped("accelerators.json", "h100-sxm"),
                                                      "peak_tflops": peaks}), include_user=False)
    result = evaluate(generate("rail-fat-tree", catalog, nodes=2), catalog,
                      workload={"training": {"model": "megatron-1.7b", "plan": plan}})
    assert result.training.why.startswith("training not timed: accelerator 'h100-sxm' has no compute at bf16")
    assert "fits in memory" not in result.training.why and result.training.fits is None
    assert result.training.step_time_s is None
    summary = {metric: value for metric, value, _unit in summary_rows(result)}
    assert summary["Training timed"] == "no: an accelerator has no compute at the training precision"


def test_compare_tells_files_of_one_name_apart_by_their_folders(tmp_path, capsys):
    design = generate("server")
    for folder in ("a", "b", "x/c", "y/c"):
        (tmp_path / folder).mkdir(parents=True)
        save_design(design, tmp_path / folder / "pod.cluster.json", backup=False)
    save_design(design, tmp_path / "a" / "other.cluster.json", backup=False)

    def names(*files: str) -> list[str]:
        assert main(["compare", *(str(tmp_path / f) for f in files), "--json"]) == 0
        return json.loads(capsys.readouterr().out)["designs"]

    assert names("a/pod.cluster.json", "b/pod.cluster.json") == ["a/pod", "b/pod"]
    assert names("x/c/pod.cluster.json", "y/c/pod.cluster.json", "a/pod.cluster.json") == \
        ["x/c/pod", "y/c/pod", "a/pod"]
    assert names("a/pod.cluster.json", "a/other.cluster.json") == ["pod", "other"]
    assert main(["compare", str(tmp_path / "a/pod.cluster.json"), str(tmp_path / "b/pod.cluster.json"), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("key,metric,unit,a/pod,b/pod")


def test_gui_refuses_an_empty_screenshot_name_without_opening_the_app(capsys, monkeypatch):
    import designer.ui.app

    opened = []
    monkeypatch.setattr(designer.ui.app, "run_app", lambda *args, **options: opened.append(options) or 0)
    assert "--screenshot needs the PNG file" in _cli_refusal(capsys, ["gui", "--screenshot", ""])
    assert not opened
