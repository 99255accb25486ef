"""The scale-out bisection of a degraded design, computed on its fabric where a failure split one
copy out of a group (failures.uneven_bisection, docs/goodput.md), against hand-computed cases on
the default example: 4 scalable units of 32 DGX H100, 8 rail leaves per unit, each leaf with 32
NDR ports (50 GB/s) down to its rail's NICs and 2 up to each of 16 spines."""

import pytest

from designer.engine import evaluate
from designer.engine.failures import _level_value, uneven_bisection
from designer.io.examples import example_paths, resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog

DEFAULT = "nvidia-superpod-h100-4su"
NDR = 50.0  # GB/s per direction of one NDR port


@pytest.fixture
def superpod():
    return load_design(resolve_design_path(DEFAULT), default_catalog())


def degraded_bisection(design, *failures):
    design.settings["failures"] = list(failures)
    return evaluate(design).degraded.figure("Scale-out bisection")


def test_healthy_bisection_by_hand(superpod):
    # A unit sends 8 leaves × 16 spines × 2 ports × 50 GB/s = 12,800 GB/s up; half of 4 units.
    assert evaluate(superpod).network.scale_out.bisection_gb_per_s == 4 / 2 * 8 * 16 * 2 * NDR == 25_600


def test_one_leaf_of_one_scalable_unit(superpod):
    # The unit that lost its rail-3 leaf sends 7 × 16 × 2 × 50 = 11,200 GB/s up, the other three
    # 12,800 each. The worst even split puts it with one whole unit: 11,200 + 12,800 = 24,000
    # (the fabric's cut is the lesser of what leaves each half). Its 256 GPUs stay connected:
    # rail 3 sends over NVLink to the other rails' NICs.
    bisection = degraded_bisection(superpod, {"target": "su.leaf3", "copies": 1})
    assert bisection.degraded == 7 * 16 * 2 * NDR + 8 * 16 * 2 * NDR == 24_000
    assert evaluate(superpod).degraded.cut_off == 0


def test_one_leaf_of_one_unit_and_one_spine(superpod):
    # 15 spines: a whole unit sends 8 × 15 × 2 × 50 = 12,000, the broken one 7 × 15 × 2 × 50 =
    # 10,500; the weakest half is 22,500. Scaling the healthy figure by both losses (25,600 ×
    # 15/16 × 7/8 = 21,000) would charge the lost leaf to every unit.
    bisection = degraded_bisection(superpod, {"target": "spines.sw", "copies": 1},
                                   {"target": "su.leaf3", "copies": 1})
    assert bisection.degraded == 7 * 15 * 2 * NDR + 8 * 15 * 2 * NDR == 22_500


def test_the_leaf_in_every_unit_is_the_symmetric_case(superpod):
    assert degraded_bisection(superpod, {"target": "su.leaf3"}).degraded == 25_600 * 7 / 8


def test_one_nic_of_one_server(superpod):
    # The server level: 127 servers send 8 × 50 = 400 GB/s, one 350. Half the GPUs are 64
    # servers; the weakest 64 send 350 + 63 × 400 = 25,550.
    bisection = degraded_bisection(superpod, {"target": "su.node.nic3", "copies": 1})
    assert bisection.degraded == 350 + 63 * 400 == 25_550


def test_a_level_whose_copies_differ_weighs_the_weakest_half():
    # Units of (accelerators per copy, copies, GB/s leaving one copy).
    assert _level_value([(256, 3, 12_800), (256, 1, 11_200)], 512) == 24_000
    # Half falls inside a copy: its share of that copy's cut.
    assert _level_value([(100, 1, 10), (100, 2, 40)], 150) == 10 + 0.5 * 40


def test_on_a_healthy_design_it_is_the_engines_bisection():
    # With every copy alike the computation reduces to the engine's (half the copies × the cut of
    # one, bounded by injection and a dragonfly's limit): every example.
    catalog = default_catalog()
    for path in example_paths():
        design = load_design(path, catalog)
        network = evaluate(design, catalog).network
        expected = network.scale_out.bisection_gb_per_s if network.scale_out else None
        got = uneven_bisection(design, catalog, network, network)
        assert got == pytest.approx(expected), path.name
