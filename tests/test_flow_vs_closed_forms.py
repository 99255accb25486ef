"""The hierarchy's closed forms, kept for designs above the flow model's limit, against the flow
model on the same design (docs/calibration.md, "Between scale-up domains"): every collective and
algorithm within 2 % on templates whose units are whole, parameters drawn at random; and the case
where they part, a partial scalable unit behind oversubscribed leaves, where the flows are right."""

from __future__ import annotations

import random

import pytest

from designer.engine import calibration as cal
from designer.engine import flows
from designer.engine.evaluate import evaluate
from designer.model.catalog import default_catalog
from designer.topologies import generate


def _both(design, op: str, sizes=("16M", "1G")):
    workload = {"collective": {"op": op, "sizes": list(sizes), "algorithm": "auto"}}
    catalog = default_catalog()
    by_flows = evaluate(design, catalog, workload)
    saved = flows.FLOW_ACCELERATORS
    flows.FLOW_ACCELERATORS = 0  # the closed forms
    try:
        closed = evaluate(design, catalog, workload)
    finally:
        flows.FLOW_ACCELERATORS = saved
    return by_flows, closed


def _cases(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        template = rng.choice(["rail-fat-tree", "fat-tree", "rail-only", "multi-plane", "nvl72"])
        if template == "rail-fat-tree":
            su = rng.choice([4, 8])
            params = dict(nodes=su * rng.choice([1, 2, 4]), nodes_per_su=su, oversubscription=rng.choice([1, 2]),
                          nics_per_node=rng.choice([4, 8]))
        elif template == "fat-tree":
            params = dict(nodes=rng.choice([4, 16, 32, 64]), nics_per_node=rng.choice([2, 8]))
        elif template in ("rail-only", "multi-plane"):
            params = dict(nodes=rng.choice([4, 8, 16]), **({"nics_per_node": 1} if template == "multi-plane" else {}))
        else:
            params = dict(nodes=rng.choice([2, 3]))
        yield template, params


@pytest.mark.parametrize("template,params", list(_cases(seed=22, count=8)), ids=str)
def test_closed_forms_equal_the_flow_model_on_whole_units(template, params):
    design = generate(template, default_catalog(), **params)
    for op in ("allreduce", "alltoall", "allgather", "reduce-scatter"):
        by_flows, closed = _both(design, op)
        assert len(by_flows.collectives) == len(closed.collectives)
        for a, b in zip(by_flows.collectives, closed.collectives):
            assert (a.op, a.algorithm, a.bytes) == (b.op, b.algorithm, b.bytes)
            assert a.busbw_gb_per_s == pytest.approx(b.busbw_gb_per_s, rel=0.02), (op, a.algorithm, a.bytes)
        assert by_flows.network.scale_out.bisection_gb_per_s == pytest.approx(
            closed.network.scale_out.bisection_gb_per_s, rel=0.02)


def test_a_partial_unit_behind_oversubscribed_leaves_is_bound_by_its_leaf_uplinks():
    """6 DGX H100 with 4 NICs each (2 GPUs a NIC: 25 GB/s of injection each), 4 servers a unit,
    4:1 leaves: each of unit 0's 4 rail leaves has 4 NICs down and one 50 GB/s cable up. All-to-all
    over 48 ranks: unit 0's 32 ranks send 16/48 of S each to unit 1, 32 × 16/48 = 10.67 S over 4
    uplinks, 2.67 S each, against 40/48 S per rank through 25 GB/s: the uplink binds,
    t = 2.67 S / (50 GB/s × efficiency). The closed form spreads the cut over both units' leaves and
    reads the injection instead; the flows see the uplink."""
    design = generate("rail-fat-tree", default_catalog(), nodes=6, nodes_per_su=4, oversubscription=4,
                      nics_per_node=4)
    by_flows, closed = _both(design, "alltoall", ("1G",))
    row = next(r for r in by_flows.collectives if r.algorithm == "ring")
    per_uplink = 32 * 16 / 48 / 4
    expected_busbw = 47 / 48 * 50 * cal.NET_EFFICIENCY / per_uplink
    assert row.busbw_gb_per_s == pytest.approx(expected_busbw, rel=0.03)
    assert "leaf" in row.bottleneck.where and "Spine" in row.bottleneck.where
    closed_row = next(r for r in closed.collectives if r.algorithm == "ring")
    assert closed_row.busbw_gb_per_s > 1.4 * row.busbw_gb_per_s  # the gap the flows close
