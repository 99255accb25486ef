"""Every measured row of docs/calibration.md within ±15 %, with one set of constants."""

import pytest

from designer.engine import training, workloads
from designer.engine.collectives import collective_rows, time_collective
from designer.engine.network import build_fabric
from designer.model.catalog import default_catalog
from designer.topologies import generate

M, G = 2 ** 20, 2 ** 30
TOL = 0.15


def fabric(template, **params):
    return build_fabric(generate(template, default_catalog(), **params), default_catalog())


def busbw(f, size, algorithm="auto", n=None):
    rows, _ = collective_rows(f, "allreduce", [size], algorithm, n)
    return next(r["busbw_gb_per_s"] for r in rows if r["algorithm"] == ("auto" if algorithm == "auto" else algorithm))


A100 = [(1 * M, 36.2), (16 * M, 109.2), (268435456, 213.9), (1 * G, 228.1), (8 * G, 231.6)]
H100_NVLS = [(1 * M, 43.7), (16 * M, 234.5), (134217728, 400.6), (1 * G, 466.4), (8 * G, 478.9)]


@pytest.mark.parametrize("size,measured", A100)
def test_a100_nvswitch_single_node(size, measured):
    got = busbw(fabric("server", platform="dgx-a100"), size)
    assert abs(got - measured) / measured <= TOL, (size, got, measured)


@pytest.mark.parametrize("size,measured", H100_NVLS)
def test_h100_nvls_single_node(size, measured):
    got = busbw(fabric("server", platform="dgx-h100"), size)
    assert abs(got - measured) / measured <= TOL, (size, got, measured)


@pytest.mark.parametrize("size", [2 * G, 4 * G])
def test_h100_ring_forced(size):
    got = busbw(fabric("server", platform="dgx-h100"), size, "ring")
    assert 365 * (1 - TOL) <= got <= 370 * (1 + TOL), got


def test_one_cx7_port_through_nccl():
    # Two DGX H100 on a rail-optimized fabric; one GPU per node (stride 8): a single NIC each way.
    f = fabric("rail-fat-tree", nodes=2)
    t = time_collective(f, "allreduce", "ring", 2, [8 * G], stride=8)
    bus = 8 * G / float(t.time[0]) / 1e9  # 2 ranks: busbw factor 1
    assert 46 * (1 - TOL) <= bus <= 49 * (1 + TOL), bus
    # and the whole-node figure per NIC on a 2-node ring stays in the same range
    per_nic = busbw(f, 8 * G, "ring") / 8
    assert 46 * (1 - TOL) <= per_nic <= 49 * (1 + TOL), per_nic


def test_megatron_1p7b_on_32_a100():
    f = fabric("rail-fat-tree", platform="dgx-a100", switch="qm8700", nodes=4)
    model = workloads.preset("megatron-1.7b")
    result, _ = training.training(f, {"model": model, "plan": {"tp": 1, "pp": 1, "dp": 32, "mb": 1,
                                                                "recompute": "full", "zero": 0}})
    assert result["fits"]
    assert abs(result["tflops_per_gpu"] - 137) / 137 <= TOL, result["tflops_per_gpu"]


# Per-generation constants (docs/calibration.md, "Per generation"): each generation's own table.
H100_MID = [(2 * M, 81.93), (4 * M, 128.73), (8 * M, 172.13), (32 * M, 295.53), (64 * M, 361.78)]
GB200_RING = [(1 * M, 80.48), (4 * M, 146.27), (8 * M, 253.46), (16 * M, 331.09), (64 * M, 550.73), (8 * G, 679.61)]


@pytest.mark.parametrize("size,measured", H100_MID)
def test_h100_mid_size_messages(size, measured):
    got = busbw(fabric("server", platform="dgx-h100"), size)
    assert abs(got - measured) / measured <= TOL, (size, got, measured)


@pytest.mark.parametrize("size,measured", GB200_RING)
def test_gb200_ring_on_four_gpus(size, measured):
    got = busbw(fabric("server", platform="gb200-nvl72"), size, "ring", n=4)
    assert abs(got - measured) / measured <= TOL, (size, got, measured)


def test_protocols_by_size_at_1024_ranks():
    # NCCL's LL bandwidth cap keeps LL to small messages however many steps a ring has: at 1,024
    # H100 ranks a ring uses LL up to a few MB, LL128 above.
    f = fabric("rail-fat-tree", nodes=128)
    sizes = [2 ** k for k in range(12, 32)]
    rows, _ = collective_rows(f, "allreduce", sizes, "ring")
    protocol = {r["bytes"]: r["protocol"] for r in rows if r["algorithm"] == "ring"}
    assert protocol[4096] == "LL"
    assert all(protocol[s] != "LL" for s in sizes if s >= 16 * M), protocol
    assert protocol[2 * G] != "LL"
