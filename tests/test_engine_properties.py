"""Property tests: more bandwidth never slower; more ranks never shrink ring's bandwidth term;
no time beats its lower bound."""

from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from designer.engine.collectives import OPS, applicable, layout, phases, time_collective
from designer.engine.network import build_fabric
from designer.model.catalog import Catalog, Part, default_catalog
from designer.topologies import generate

DESIGN = generate("rail-fat-tree", default_catalog(), nodes=64)
BASE = build_fabric(DESIGN, default_catalog())


def scaled_catalog(factors: dict) -> Catalog:
    parts = []
    for p in default_catalog():
        if p.id in factors:
            data = dict(p.data)
            if p.kind == "medium":
                data["lane_gb_per_s"] = p.number("lane_gb_per_s") * factors[p.id]
            else:
                data["achieved_gb_per_s"] = p.number("achieved_gb_per_s") * factors[p.id]
            p = Part(p.id, p.kind, p.name, p.source, MappingProxyType(data))
        parts.append(p)
    return Catalog(parts)


sizes = st.integers(min_value=1, max_value=2 ** 34)
ranks = st.integers(min_value=2, max_value=BASE.total_accelerators)


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(OPS), n=ranks, size=sizes,
       up=st.floats(1.0, 4.0), out=st.floats(1.0, 4.0))
def test_more_bandwidth_never_slower(op, n, size, up, out):
    faster = build_fabric(DESIGN, scaled_catalog({"nvlink4": up, "ib-ndr": out, "cx7-ndr": out, "pcie-gen5": out}))
    for algo in applicable(BASE, op, n):
        slow = float(time_collective(BASE, op, algo, n, [size]).time[0])
        fast = float(time_collective(faster, op, algo, n, [size]).time[0])
        assert fast <= slow * (1 + 1e-9), (algo, slow, fast)


@settings(max_examples=60, deadline=None)
@given(n=ranks, extra=st.integers(1, 256))
def test_more_ranks_never_shrink_ring_bandwidth_term(n, extra):
    m = min(BASE.total_accelerators, n + extra)

    def bw_term(k):
        ph = phases(BASE, "allreduce", "ring", layout(BASE, k))
        return max(t.seconds_per_byte for t in ph[0].terms if t.traffic > 0)

    assert bw_term(m) >= bw_term(n) * (1 - 1e-12)


@settings(max_examples=80, deadline=None)
@given(op=st.sampled_from(OPS), n=ranks, size=sizes, stride=st.sampled_from([1, 2, 8]))
def test_no_time_beats_its_bound(op, n, size, stride):
    n = max(2, min(n, BASE.total_accelerators // stride))
    for algo in applicable(BASE, op, n, stride):
        t = time_collective(BASE, op, algo, n, [size], stride)
        assert float(t.time[0]) >= float(t.bound[0]) * (1 - 1e-9), (algo, t.time, t.bound)
