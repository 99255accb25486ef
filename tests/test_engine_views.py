"""The typed sections of a Result and the engine's views of it, without Qt."""

import dataclasses
import json

import pytest

from designer.engine import views
from designer.engine.evaluate import evaluate
from designer.engine.sections import LinkLoad, LinkPhase, Plan, Training, Utilization
from designer.io.exports import result_json
from designer.model.design import Design
from designer.topologies import generate


@pytest.fixture(scope="module")
def result():
    return evaluate(generate("rail-fat-tree", nodes=16))


def test_sections_are_typed_and_frozen(result):
    assert result.inventory.accelerators == 128
    assert isinstance(result.training.plan, Plan) and result.training.plan.auto
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.training.fits = False
    with pytest.raises(TypeError):
        result.inventory.accelerator_models["h100-sxm"] = 1
    assert isinstance(result.utilization.phases[0].links[0], LinkLoad)


def test_as_dict_is_the_json_shape(result):
    data = result.as_dict()
    assert json.loads(result_json(result)) == data
    assert list(data) == ["design", "inventory", "bom", "compute", "memory", "power", "cost", "lint", "network",
                          "collectives", "training", "utilization", "goodput", "part_names"]
    auto = [row for row in data["collectives"] if row["algorithm"] == "auto"]
    assert auto and all("chosen" in row for row in auto)
    assert not any("chosen" in row for row in data["collectives"] if row["algorithm"] != "auto")
    assert not any("why" in row for row in data["collectives"])  # every rank is reachable
    assert data["training"]["why"] is None and data["training"]["plan"]["auto"] is True


def test_a_design_without_accelerators_reports_so():
    data = evaluate(Design(name="empty")).as_dict()
    assert data["training"] == {"fits": False, "why": "the design has no accelerators"}
    assert data["network"] == {"tiers": {}, "boundaries": [], "note": "no accelerators"}
    assert data["collectives"] == [] and data["utilization"] == {"gpus": [], "phases": []}


def test_training_keys_follow_how_far_evaluation_got():
    untimed = Training(fits=None, why="no path", plan="auto", model="m", timed=False)
    assert set(untimed.as_dict()) == {"fits", "why", "plan", "model", "timed", "step_time_s", "compute_s",
                                      "exposed_tp_s", "exposed_cp_s", "exposed_ep_s", "exposed_pp_s",
                                      "exposed_dp_s", "exposed_memory_s", "bubble_s",
                                      "tflops_per_gpu", "mfu", "tokens_per_s", "days", "memory_per_gpu_gib"}


def test_views_read_the_sections(result):
    names = views.phase_names(result)
    assert names == [phase.phase for phase in result.utilization.phases] and names[1:] and \
        names[0].startswith("allreduce")
    peak = views.link_utilization(result)
    assert peak and all(0 <= u <= 1 for u in peak.values())
    auto = [row for row in result.collectives if row.algorithm == "auto"]
    assert views.bottleneck_link(result) == max(auto, key=lambda row: row.bytes).bottleneck.link
    split = views.gpu_time_split(result)
    assert sum(split.values()) == pytest.approx(1, abs=1e-3)
    assert views.communicators(result) == [("allreduce", 128)]
    by_algorithm = views.collective_rows(result, "allreduce", 128)
    assert "auto" in by_algorithm and len(by_algorithm) > 2


PHASES = (
    LinkPhase("tp", (LinkLoad("a", "scale-up", 0.9, 1), LinkLoad("b", "scale-up", 0.3, 3)), {}),
    LinkPhase("dp", (LinkLoad("c", "scale-out", 0.5, 4), LinkLoad("b", "scale-up", 0.6, 3)), {}),
)


def test_tier_link_loads_take_each_link_at_its_busiest_phase(result):
    hand_made = dataclasses.replace(result, utilization=Utilization(gpus=(), phases=PHASES))
    busiest = views.tier_link_loads(hand_made)
    assert busiest == {"scale-up": [LinkLoad("a", "scale-up", 0.9, 1), LinkLoad("b", "scale-up", 0.6, 3)],
                       "scale-out": [LinkLoad("c", "scale-out", 0.5, 4)]}
    assert views.tier_link_loads(hand_made, "tp") == {"scale-up": list(PHASES[0].links)}
    assert views.link_utilization(hand_made) == {"a": 0.9, "b": 0.6, "c": 0.5}
    assert views.link_utilization(hand_made, "tp") == {"a": 0.9, "b": 0.3}
    assert views.gpu_time_split(hand_made) is None


def test_the_bottleneck_falls_back_to_the_rows_timed_and_then_to_the_busiest_link(result):
    ring = tuple(row for row in result.collectives if row.algorithm == "ring")
    only_ring = dataclasses.replace(result, collectives=ring)
    assert views.bottleneck_link(only_ring) == max(ring, key=lambda row: row.bytes).bottleneck.link
    without_collectives = dataclasses.replace(result, collectives=(), utilization=Utilization(gpus=(), phases=PHASES))
    assert views.bottleneck_link(without_collectives) == "a"
    idle = dataclasses.replace(without_collectives, utilization=Utilization(gpus=(), phases=()))
    assert views.bottleneck_link(idle) is None
