import json

import pytest

from designer.cli import main
from designer.io.files import save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate


@pytest.fixture(scope="module")
def design_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("d") / "rf.cluster.json"
    save_design(generate("rail-fat-tree", default_catalog(), nodes=16), path)
    return str(path)


def run_json(capsys, *argv):
    assert main(["evaluate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_default_json_has_engine_sections(capsys, design_file):
    r = run_json(capsys, design_file)
    assert {"network", "collectives", "training", "utilization"} <= set(r)
    sizes = {row["bytes"] for row in r["collectives"]}
    assert sizes == {2 ** 20, 16 * 2 ** 20, 256 * 2 ** 20, 2 ** 30, 8 * 2 ** 30}
    t = r["training"]
    for key in ("step_time_s", "compute_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s",
                "tflops_per_gpu", "mfu", "tokens_per_s", "days", "memory_per_gpu_gib", "fits", "plan"):
        assert key in t


def test_flags(capsys, design_file):
    r = run_json(capsys, design_file, "--op", "allgather", "--sizes", "1M,1G", "--algorithm", "ring", "--ranks", "8",
                 "--workload", "llama2-70b", "--plan", "tp=8,pp=4,dp=4,mb=1,recompute=selective,zero=1",
                 "--global-batch", "256", "--seq", "2048", "--tokens", "1T")
    rows = r["collectives"]
    assert {row["algorithm"] for row in rows} == {"ring", "auto"}
    assert all(row["op"] == "allgather" and row["ranks"] == 8 for row in rows)
    assert [row["bytes"] for row in rows if row["algorithm"] == "ring"] == [2 ** 20, 2 ** 30]
    assert r["training"]["plan"]["tp"] == 8 and r["training"]["global_batch"] == 256 and r["training"]["seq"] == 2048


@pytest.mark.parametrize("argv", [["--sizes", "1X"], ["--algorithm", "magic"], ["--op", "gather"],
                                  ["--ranks", "0"], ["--plan", "tp=three"], ["--workload", "nope"],
                                  ["--plan", "tp=3,pp=1"], ["--algorithm", "torus"], ["--ranks", "999999"]])
def test_bad_flags_exit_2_with_one_line(capsys, design_file, argv):
    assert main(["evaluate", design_file, "--json", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("cluster-designer: error:") and "\n" not in err
