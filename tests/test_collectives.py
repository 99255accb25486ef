import math

import pytest

from designer.engine.collectives import BUS_FACTOR, OPS, CollectiveError, collective_rows, parse_size
from designer.engine.network import build_fabric
from designer.engine.workloads import WorkloadError
from designer.model.catalog import default_catalog
from designer.topologies import generate

M, G = 2 ** 20, 2 ** 30


@pytest.fixture(scope="module")
def cluster():
    return build_fabric(generate("rail-fat-tree", default_catalog(), nodes=16), default_catalog())


def test_parse_size_binary_suffixes():
    assert parse_size("1M") == 2 ** 20 and parse_size("8G") == 8 * 2 ** 30 and parse_size("4K") == 4096
    with pytest.raises(CollectiveError):
        parse_size("abc")


@pytest.mark.parametrize("op", OPS)
def test_rows_shape_and_auto(cluster, op):
    rows, util = collective_rows(cluster, op, [M, G])
    autos = [r for r in rows if r["algorithm"] == "auto"]
    assert len(autos) == 2
    for r in rows:
        assert set(r) >= {"op", "algorithm", "ranks", "bytes", "time_s", "algbw_gb_per_s", "busbw_gb_per_s",
                          "bound_time_s", "bottleneck"}
        assert r["time_s"] >= r["bound_time_s"] * (1 - 1e-9)
        assert math.isclose(r["busbw_gb_per_s"], r["algbw_gb_per_s"] * BUS_FACTOR[op](r["ranks"]), rel_tol=1e-3)
    for a in autos:
        same = [r for r in rows if r["bytes"] == a["bytes"] and r["algorithm"] != "auto"]
        assert a["time_s"] == min(r["time_s"] for r in same)
        assert a["chosen"] in {r["algorithm"] for r in same}
    assert util["util"].any()  # some link carries the collective


def test_algorithms_offered(cluster):
    rows, _ = collective_rows(cluster, "allreduce", [G])
    algos = {r["algorithm"] for r in rows}
    assert {"ring", "tree", "hierarchical", "nvls", "sharp", "auto"} <= algos


def test_subset_inside_one_server_uses_scale_up(cluster):
    rows, _ = collective_rows(cluster, "allreduce", [G], "ring", 8)
    assert rows[0]["bottleneck"]["tier"] == "scale-up"
    rows, _ = collective_rows(cluster, "allreduce", [G], "ring", 16)
    assert rows[0]["ranks"] == 16


def test_algorithm_and_ranks_that_do_not_fit_the_design_name_their_setting(cluster):
    with pytest.raises(WorkloadError, match="does not apply") as caught:
        collective_rows(cluster, "allreduce", [M], "torus")
    assert caught.value.setting == "collective.algorithm"
    with pytest.raises(WorkloadError, match="expected 1 to 128 ranks") as caught:
        collective_rows(cluster, "allreduce", [M], "auto", 10 ** 9)
    assert caught.value.setting == "collective.ranks"


def test_torus_algorithm():
    f = build_fabric(generate("torus", default_catalog(), dims="4x4x4"), default_catalog())
    rows, _ = collective_rows(f, "allreduce", [G])
    assert "torus" in {r["algorithm"] for r in rows}
