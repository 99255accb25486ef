"""Several TPU pods joined over the data-centre network (torus template, pods > 1): the pod is the
scale-up domain, the DCN the slow tier; allreduce reduces inside each pod over ICI, crosses the DCN,
and gathers back; data parallel across pods pays for the DCN."""

import math

import pytest

from designer.engine import evaluate
from designer.engine.collectives import time_collective
from designer.engine.network import build_fabric
from designer.model.catalog import default_catalog
from designer.topologies import generate
from designer.topologies.base import TopologyError

G = 2 ** 30


def pods(count: int):
    return generate("torus", default_catalog(), platform="tpu-v4-host-dcn", dims="8x8x8", block="4x4x4", pods=count)


def test_pods_are_copies_of_one_pod_joined_by_the_dcn():
    design = pods(2)
    items = design.items
    assert items["pod"].kind == "group" and items["pod"].count == 2
    assert items["dcn"].part == "dcn-fabric-200g" and items["dcn"].parent is None
    hosts = [i for i in items.values() if i.kind == "server"]
    assert all(f"{h.id}-nic" in items for h in hosts)
    result = evaluate(design, default_catalog())
    assert result.inventory.accelerators == 2 * 512
    assert not [f for f in result.lint if f.severity == "error"]
    assert result.network.scale_up.domain_accelerators == 512
    assert result.network.scale_out.injection_gb_per_s == pytest.approx(200 / 8 / 4)


def test_allreduce_over_all_pods_crosses_the_dcn_after_reducing_in_each_pod():
    catalog = default_catalog()
    one, two = build_fabric(pods(1), catalog), build_fabric(pods(2), catalog)
    assert one.torus_dims == two.torus_dims == (8, 8, 8)
    single = time_collective(one, "allreduce", "torus", 512, [G])
    double = time_collective(two, "allreduce", "torus", 1024, [G])
    assert len(double.phases) == len(single.phases) + 1
    across = double.phases[len(single.phases) // 2]
    assert across.terms[0].where == "accelerator scale-out injection"
    # Each chip sends its 1/512 share over the DCN: a little slower than one pod, never faster.
    assert float(single.time[0]) < float(double.time[0]) < 1.5 * float(single.time[0])


def test_data_parallel_across_pods_pays_for_the_dcn():
    plan = {"tp": 8, "pp": 1, "dp": 128, "mb": 1, "recompute": "full", "zero": 1}
    workload = {"training": {"model": "megatron-1.7b", "plan": plan, "global_batch": 1024}}
    across = evaluate(pods(2), default_catalog(), workload).training
    # The same data-parallel group size per pod, inside one pod: ICI only.
    inside = evaluate(pods(1), default_catalog(), {"training": {**workload["training"], "plan": {**plan, "dp": 64},
                                                                "global_batch": 512}}).training
    assert math.isfinite(across.step_time_s) and across.exposed_dp_s > inside.exposed_dp_s


def test_pods_need_hosts_with_a_nic():
    with pytest.raises(TopologyError, match="parameter 'pods' \\(2\\).*tpu-v4-host-dcn"):
        generate("torus", default_catalog(), dims="4x4x4", pods=2)
