import pytest

from designer.engine import training, workloads
from designer.engine.network import build_fabric
from designer.model.catalog import default_catalog
from designer.topologies import generate


@pytest.fixture(scope="module")
def fabric():
    return build_fabric(generate("rail-fat-tree", default_catalog(), nodes=32), default_catalog())


@pytest.mark.parametrize("name", list(workloads.PRESETS))
def test_presets_resolve(name):
    model = workloads.preset(name)
    assert workloads.parameters(model) > 1e9


def test_parameter_counts_match_names():
    assert abs(workloads.parameters(workloads.preset("gpt3-175b")) / 175e9 - 1) < 0.05
    assert abs(workloads.parameters(workloads.preset("llama2-70b")) / 70e9 - 1) < 0.05
    assert abs(workloads.parameters(workloads.preset("llama3-405b")) / 405e9 - 1) < 0.05


def test_fixed_plan_breakdown(fabric):
    model = workloads.preset("llama2-70b")
    r, util = training.training(fabric, {"model": model, "plan": {"tp": 8, "pp": 4, "dp": 8, "mb": 1,
                                                                  "recompute": "selective", "zero": 1}})
    assert r["fits"]
    parts = r["compute_s"] + r["exposed_tp_s"] + r["exposed_pp_s"] + r["exposed_dp_s"] + r["bubble_s"]
    assert abs(parts - r["step_time_s"]) / r["step_time_s"] < 1e-3
    assert 0 < r["mfu"] < 1 and r["tokens_per_s"] > 0 and r["days"] > 0
    assert r["exposed_tp_s"] > 0 and r["bubble_s"] > 0
    g = util["gpus"][0]
    assert abs(g["compute"] + g["communication"] + g["idle"] - 1) < 1e-3


def test_plan_that_does_not_fit_says_why(fabric):
    model = workloads.preset("gpt3-175b")
    r, _ = training.training(fabric, {"model": model, "plan": {"tp": 1, "pp": 1, "dp": 256, "mb": 1,
                                                               "recompute": "none", "zero": 0}})
    assert r["fits"] is False and "GiB" in r["why"] and r["step_time_s"] is None


def test_auto_plan_is_no_slower_than_a_fixed_one(fabric):
    model = workloads.preset("llama2-70b")
    auto, _ = training.training(fabric, {"model": model, "plan": "auto"})
    fixed, _ = training.training(fabric, {"model": model, "plan": {"tp": 8, "pp": 4, "dp": 8, "mb": 1,
                                                                   "recompute": "selective", "zero": 1}})
    assert auto["fits"] and auto["plan"]["auto"] and auto["step_time_s"] <= fixed["step_time_s"]


def test_invalid_plan_raises(fabric):
    with pytest.raises(training.PlanError):
        training.training(fabric, {"model": workloads.preset("llama2-70b"), "plan": {"tp": 3, "pp": 1}})


def test_custom_workload(tmp_path):
    from designer.io.files import load_workload

    path = tmp_path / "m.json"
    path.write_text('{"name": "tiny", "layers": 12, "hidden": 768, "heads": 12, "seq": 1024, "global_batch": 64}')
    model = load_workload(path)
    assert model["ffn"] == 3072 and model["name"] == "tiny"
    with pytest.raises(workloads.WorkloadError, match="multiple of heads"):
        workloads.custom({"layers": 2, "hidden": 768, "heads": 7})
