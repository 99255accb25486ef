"""Compare, sweep and optimize without Qt: the rows of a sweep are the figures of each point
evaluated alone, on any Dask cluster; a stopped sweep keeps its rows; bad sweep files are refused
naming the JSON path."""

from __future__ import annotations

import csv
import json
import threading

import pytest
from dask.distributed import Client, LocalCluster

from designer.cli import main
from designer.engine import evaluate
from designer.engine.compare import compare, comparison_table
from designer.engine.figures import FigureError, figure, figures
from designer.explore.optimize import OptimizeError, optimize
from designer.explore.results import CsvRows, columns
from designer.explore.runner import run_sweep
from designer.explore.spec import SweepError, design_of, sweep_from_document
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.paths import catalog_dir

DOZEN = {"format": "cluster-designer-sweep", "version": 1, "template": "rail-fat-tree",
         "params": {"nodes": {"from": 4, "to": 16, "factor": 2}, "oversubscription": [1, 2]},
         "workloads": [{"model": "megatron-1.7b", "tokens": 1e11}], "plans": ["auto", "tp=2,pp=1"],
         "keep": ["summary.power_kw", "training.days", "collectives.3.busbw_gb_per_s", "training.plan"],
         "constraints": ["summary.power_kw <= 100"]}


@pytest.fixture(scope="module")
def client():
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as c:
        yield c


def _rows(sweep, client, **options) -> list[dict]:
    rows: list[dict] = []
    run_sweep(sweep, client, rows.append, **options)
    return sorted(rows, key=lambda row: row["point"])


def test_a_sweep_of_a_dozen_points_gives_the_figures_of_each_point_evaluated_alone(client):
    sweep = sweep_from_document(DOZEN, "dozen.sweep.json")
    assert sweep.count() == 12
    rows = _rows(sweep, client)
    assert [row["point"] for row in rows] == list(range(12))
    for row, point in zip(rows, sweep.points()):
        assert row["error"] is None
        alone = figures(evaluate(design_of(point["recipe"]), workload=point["recipe"]["workload"]))
        for path in sweep.figures:
            assert row[path] == figure(alone, path), (row["point"], path)
        assert row["meets"] == (alone["summary"]["power_kw"] <= 100)
        # The row's design rebuilds the same point.
        assert design_of(json.loads(row["design"])).settings["workload"] == point["recipe"]["workload"]
    assert {row["param.nodes"] for row in rows} == {4, 8, 16}
    assert any(not row["meets"] for row in rows) and any(row["meets"] for row in rows)


def test_an_in_process_cluster_and_a_local_cluster_of_processes_give_the_same_rows(client):
    sweep = sweep_from_document({**DOZEN, "params": {"nodes": [4, 8], "oversubscription": [1, 2]}}, "s.sweep.json")
    in_process = _rows(sweep, client)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as processes:
        assert len(processes.nthreads()) == 2
        assert _rows(sweep, processes, batch=1) == in_process


def test_a_stopped_sweep_keeps_the_rows_finished(client, tmp_path):
    sweep = sweep_from_document({**DOZEN, "params": {"nodes": {"from": 2, "to": 40, "step": 2}}}, "s.sweep.json")
    assert sweep.count() == 40
    out = tmp_path / "rows.csv"
    sink = CsvRows(out, columns(sweep))
    stop = threading.Event()
    written: list[int] = []

    def on_row(row):
        sink.write(row)
        written.append(row["point"])
        if len(written) == 10:
            stop.set()

    progress = run_sweep(sweep, client, on_row, stop=stop, batch=2)
    sink.finish()
    with open(out, newline="") as handle:
        kept = list(csv.DictReader(handle))
    assert 10 <= len(kept) < 40
    assert [int(row["point"]) for row in kept] == written
    assert progress.done == len(kept)
    assert all(row["summary.power_kw"] for row in kept)


def test_a_failing_point_records_its_error_and_the_sweep_goes_on(client):
    # 100,000 DGX H100 need 800,000 NIC ports: more than a three-tier QM9700 fabric joins.
    sweep = sweep_from_document({**DOZEN, "params": {"nodes": [4, 100_000]}, "plans": ["auto"]}, "s.sweep.json")
    rows = _rows(sweep, client)
    assert len(rows) == 2
    assert rows[0]["error"] is None
    assert "is the most" in rows[1]["error"] and rows[1]["summary.power_kw"] is None


def test_compare_of_a_design_with_itself_shows_every_difference_zero():
    result = evaluate(load_design(resolve_design_path("nvidia-superpod-h100-4su")))
    comparison = compare([result, result], ["a", "a copy"])
    numeric = [row for row in comparison.rows if row.differences[1] is not None]
    assert len(numeric) > 30
    assert all(row.differences[1] == 0 and row.ratios[1] in (1, None) and row.verdicts[1] == "same" for row in numeric)
    assert comparison.bom == ()
    assert comparison.collectives[0] == comparison.collectives[1] and comparison.collectives[0]


def test_compare_marks_better_and_worse_and_the_bom_change():
    from designer.topologies import generate

    small, big = (evaluate(generate("rail-fat-tree", nodes=n)) for n in (4, 8))
    comparison = compare([small, big], ["4", "8"])
    by_key = {row.key: row for row in comparison.rows}
    assert by_key["power_kw"].verdicts[1] == "worse"
    assert by_key["power_kw"].ratios[1] == pytest.approx(big.power.total_kw / small.power.total_kw)
    assert by_key["power_kw"].ratios[1] > 1
    assert by_key["peak_bf16_fp16_tflops"].verdicts[1] == "better"
    assert by_key["servers"].differences[1] == 4 and by_key["servers"].verdicts[1] == ""
    servers = next(c for c in comparison.bom if c.part == "dgx-h100")
    assert servers.quantities == (4 + 1, 8 + 1) and servers.changes == ("", "changed")  # one hot spare each


def test_cli_compare_prints_json_and_csv(capsys):
    assert main(["compare", "nvidia-superpod-h100-4su", "nvidia-superpod-h100-4su", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["designs"] == ["nvidia-superpod-h100-4su"] * 2
    assert all(d in (0, None) for row in data["summary"] for d in row["differences"])
    assert main(["compare", "nvidia-superpod-h100-4su", "google-tpu-v4-pod", "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("key,metric,unit,nvidia-superpod-h100-4su,google-tpu-v4-pod")
    power = next(line for line in lines if line.startswith("power_kw,"))
    assert power.endswith(("better", "worse"))


@pytest.mark.parametrize("change, where", [
    ({"params": {"nodes": "x", "bogus": [1]}}, "$.params.bogus"),
    ({"params": {"nodes": {"from": 8, "to": 4, "step": 1}}}, "$.params.nodes"),
    ({"plans": ["auto", "tp=8,qq=2"]}, "$.plans[1]"),
    ({"constraints": ["summary.power_kw <= lots"]}, "$.constraints[0]"),
    ({"keep": ["training days"]}, "$.keep[0]"),
    ({"template": "rail-fat-tee"}, "$.template"),
    ({"base": "x.cluster.json"}, "$"),
])
def test_a_bad_sweep_file_is_refused_naming_the_json_path(change, where):
    with pytest.raises(SweepError) as refused:
        sweep_from_document({**DOZEN, **change}, "bad.sweep.json")
    assert f"bad.sweep.json: {where}:" in str(refused.value)


def test_a_base_design_sweep_swaps_parts():
    base = resolve_design_path("nvidia-superpod-h100-4su")
    sweep = sweep_from_document({"format": "cluster-designer-sweep", "version": 1, "base": str(base),
                                 "parts": {"h100-sxm": ["h100-sxm", "h200-sxm"]}}, "b.sweep.json")
    designs = [design_of(p["recipe"]) for p in sweep.points()]
    parts = [{i.part for i in d.items.values() if i.kind == "accelerator"} for d in designs]
    assert parts == [{"h100-sxm"}, {"h200-sxm"}]


OPTIMIZE = {**DOZEN, "params": {"nodes": [2, 4, 8, 16, 32]}, "plans": ["auto"],
            "workloads": [{"model": "megatron-1.7b", "tokens": 3e11}],
            "constraints": ["training.days <= 5", "summary.power_kw <= 300"], "goal": {"minimize": "summary.power_kw"}}


def test_optimize_finds_the_cheapest_design_meeting_the_constraints_and_says_why(client):
    sweep = sweep_from_document(OPTIMIZE, "o.sweep.json")
    answer, _progress = optimize(sweep, client)
    alone = {n: figures(evaluate(design_of(p["recipe"]), workload=p["recipe"]["workload"]))
             for n, p in zip([2, 4, 8, 16, 32], sweep.points())}
    meets = [n for n, f in alone.items() if f["training"]["days"] <= 5 and f["summary"]["power_kw"] <= 300]
    assert answer.best["param.nodes"] == min(meets)
    assert answer.runner_up["param.nodes"] == sorted(meets)[1]
    assert answer.pruned >= 1  # 32 nodes draw more than 300 kW: known without evaluating
    text = answer.explain(sweep)
    assert "runner-up" in text and "ruled out" in text and "training.days <= 5" in text


def test_an_answer_on_cost_names_the_unpriced_parts_its_designs_leave_out(client, tmp_path):
    # A user's file takes the SN5600's shipped price away (a quote pending): on Ethernet the
    # capital of that design leaves the switches out.
    from designer.model.catalog import load_catalog

    switches = json.loads((catalog_dir() / "switches.json").read_text())["parts"]
    unpriced = {key: value for key, value in next(p for p in switches if p["id"] == "sn5600-400g").items()
                if not key.startswith("price_")}
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [unpriced]}))
    sweep = sweep_from_document({**OPTIMIZE, "params": {"nodes": [4], "nic": ["cx7-ndr", "cx7-400gbe"]},
                                 "constraints": [], "goal": {"minimize": "cost.capital_usd"}}, "o.sweep.json",
                                load_catalog(extra, include_user=False))
    answer, _progress = optimize(sweep, client)
    ethernet = answer.best if answer.best["param.nic"] == "cx7-400gbe" else answer.runner_up
    assert "sn5600-400g" in ethernet["unpriced"]
    assert f"leaves out its unpriced parts ({ethernet['unpriced']})" in answer.explain(sweep)


def test_optimize_on_a_figure_not_computed_says_so(client):
    with pytest.raises(SweepError, match=r"\$\.goal\.minimize: figure 'cost.nothing' is not computed"):
        sweep_from_document({**OPTIMIZE, "goal": {"minimize": "cost.nothing"}}, "o.sweep.json")
    # A figure that only some designs have, missing from every point: optimize says so at once.
    sweep = sweep_from_document(OPTIMIZE, "o.sweep.json")
    sweep.goal = ("minimize", "cost.nothing")
    with pytest.raises(OptimizeError, match="figure 'cost.nothing' is not computed"):
        optimize(sweep, client)
    with pytest.raises(FigureError, match="figure 'cost.nothing' is not computed"):
        figure({"cost": {"total_usd": 1}}, "cost.nothing")


def test_cli_sweep_writes_every_row_and_optimize_writes_the_winner(tmp_path, capsys):
    spec = tmp_path / "s.sweep.json"
    spec.write_text(json.dumps({**OPTIMIZE, "params": {"nodes": [2, 4, 8]}}))
    out = tmp_path / "rows.parquet"
    assert main(["sweep", str(spec), "-o", str(out), "--parquet", "--workers", "1"]) == 0
    import pyarrow.parquet as pq

    table = pq.read_table(out).to_pylist()
    assert sorted(row["param.nodes"] for row in table) == [2, 4, 8]
    best = tmp_path / "best.cluster.json"
    assert main(["optimize", str(spec), "-o", str(best), "--workers", "1"]) == 0
    assert "best: nodes=" in capsys.readouterr().out
    assert load_design(best).settings["workload"]["training"]["model"] == "megatron-1.7b"


def test_the_capital_cost_is_known_before_evaluating_and_the_run_cost_bounded_from_below():
    from designer.explore.points import bounds
    from designer.model.catalog import default_catalog
    from designer.topologies import generate

    workload = {"training": {"model": "megatron-1.7b", "tokens": 3e11, "plan": "auto"}}
    design = generate("fat-tree", nodes=12, oversubscription=2)
    known = bounds(design, default_catalog(), workload)
    result = evaluate(design, workload=workload)
    assert known["cost.capital_usd"] == (result.cost.capital_usd, result.cost.capital_usd)
    assert known["summary.capital_cost_usd"] == known["cost.capital_usd"]
    assert known["cost.yearly_usd"][0] == result.cost.yearly_usd
    assert 0 < known["cost.run_usd"][0] <= result.cost.run_usd


COST_SPACE = {**OPTIMIZE, "template": ["rail-fat-tree", "fat-tree"],
              "params": {"platform": ["dgx-h100", "hgx-h100"], "oversubscription": [1, 2],
                         "nodes": [2, 4, 6, 8, 12, 16, 24, 32]},
              "keep": ["cost.capital_usd", "training.days", "summary.power_kw"],
              "constraints": ["training.days <= 5", "summary.power_kw <= 200"],
              "goal": {"minimize": "cost.capital_usd"}}


def test_the_cheapest_design_is_found_pruning_by_cost_and_is_the_one_an_exhaustive_sweep_finds(client):
    sweep = sweep_from_document(COST_SPACE, "cost.sweep.json")
    every = _rows(sweep, client)
    meets = sorted((row["cost.capital_usd"], row["point"]) for row in every if row["meets"])
    answer, _progress = optimize(sweep, client, batch=1)
    assert (answer.best["cost.capital_usd"], answer.best["point"]) == meets[0]
    assert answer.runner_up["cost.capital_usd"] == meets[1][0]
    # Points costing more than the runner-up so far were never evaluated.
    assert answer.pruned_by.get("the best two so far on cost.capital_usd", 0) > 0
    assert answer.pruned_by.get("summary.power_kw", 0) > 0
    assert answer.evaluated < sweep.count() / 2
    text = answer.explain(sweep)
    assert "by the best two so far on cost.capital_usd" in text
    # The nearest miss is cheaper than the winner and fails a constraint, the closest such.
    miss = answer.nearest_miss
    assert miss["cost.capital_usd"] < answer.best["cost.capital_usd"] and not miss["meets"]
    failing = [row["cost.capital_usd"] for row in every if not row["meets"] and row["error"] is None
               and row["cost.capital_usd"] < answer.best["cost.capital_usd"]]
    assert miss["cost.capital_usd"] == max(failing)


def test_a_part_only_in_the_users_catalogue_file_evaluates_the_same_on_worker_processes(client, tmp_path):
    from designer.model.catalog import load_catalog

    servers = json.loads((catalog_dir() / "servers.json").read_text())["parts"]
    discounted = {**next(p for p in servers if p["id"] == "dgx-h100"), "id": "dgx-h100-discounted",
                  "name": "DGX H100 at a negotiated price", "price_usd": 250_000}
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [discounted]}))
    catalog = load_catalog(extra)
    sweep = sweep_from_document({**DOZEN, "params": {"platform": ["dgx-h100-discounted"], "nodes": [4, 8]},
                                 "plans": ["auto"], "keep": ["cost.capital_usd", "training.days"]},
                                "mine.sweep.json", catalog)
    in_process = _rows(sweep, client)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as processes:
        assert _rows(sweep, processes) == in_process
    for row, point in zip(in_process, sweep.points()):
        assert row["error"] is None
        alone = evaluate(design_of(point["recipe"], catalog), catalog, workload=point["recipe"]["workload"])
        assert row["cost.capital_usd"] == alone.cost.capital_usd


def test_the_shipped_sweeps_load():
    from designer.explore.spec import load_sweep
    from designer.paths import resources_dir

    shipped = sorted((resources_dir() / "sweeps").glob("*.sweep.json"))
    assert shipped
    for path in shipped:
        sweep = load_sweep(path)
        assert sweep.goal is not None and sweep.constraints and sweep.count() > 1000


def test_compare_puts_cost_and_goodput_in_blocks_of_their_own_cheaper_and_sooner_better():
    superpod, azure = (evaluate(load_design(resolve_design_path(n))) for n in ("nvidia-superpod-h100-4su",
                                                                               "azure-nd-h100-v5"))
    comparison = compare([superpod, azure], ["superpod", "azure"])
    cost = {row.key: row for row in comparison.cost}
    assert not {row.key for row in comparison.rows} & set(cost)  # each row once
    # Azure: twice the GPUs, so more capital and a larger yearly bill (worse).
    assert cost["capital_cost_usd"].values == (superpod.cost.capital_usd, azure.cost.capital_usd)
    assert cost["capital_cost_usd"].verdicts[1] == "worse" and cost["yearly_cost_usd_year"].verdicts[1] == "worse"
    # Every money figure is lower-is-better, whichever way it goes between these two.
    for key in ("cost_per_accelerator_hour_usd_h", "training_run_cost_usd", "cost_per_million_tokens_usd"):
        difference = cost[key].differences[1]
        assert cost[key].verdicts[1] == ("better" if difference < 0 else "worse" if difference > 0 else "same"), key
    assert cost["training_run_energy_mwh"].verdicts[1] == "worse"
    goodput = {row.key: row for row in comparison.goodput}
    assert goodput["goodput.days"].values == (superpod.goodput.days, azure.goodput.days)
    assert goodput["goodput.days"].verdicts[1] == "better"
    assert goodput["goodput.mtbi_hours"].verdicts[1] == "worse"  # twice the parts fail twice as often
    assert goodput["goodput.checkpoint_interval_s"].verdicts[1] == ""  # neither: it follows from the rest
    text = comparison_table(comparison)
    assert "Days to train with failures" in text and "Cost per million tokens" in text


def test_a_compared_row_names_each_designs_own_algorithm():
    # A rail fat tree of 4 DGX H100 runs its 8 GiB allreduce as a ring; one DGX H100 alone as NVLS.
    from designer.topologies import generate

    tree, server = evaluate(generate("rail-fat-tree", nodes=4)), evaluate(generate("server"))
    chosen = [next(r.chosen for r in result.collectives if r.algorithm == "auto" and r.bytes == 8 * 2 ** 30)
              for result in (tree, server)]
    assert chosen == ["ring", "nvls"]
    comparison = compare([tree, server], ["tree", "server"])
    row = next(r for r in comparison.rows if r.key == "allreduce_8g_busbw_gb_per_s")
    assert row.metric == "allreduce 8G (tree: ring, server: nvls) busbw"
    assert row.values == tuple(next(r.busbw_gb_per_s for r in result.collectives
                                    if r.algorithm == "auto" and r.bytes == 8 * 2 ** 30) for result in (tree, server))
