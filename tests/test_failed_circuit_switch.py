"""A failed circuit switch of a torus of blocks breaks the lines it joins (docs/goodput.md, "A failed
circuit switch"): each switch serves one face position along one axis of every block, so when it
fails, every line of the torus through that face position along that axis loses its
block-to-block hops and breaks into segments of one block's length.

By hand, with TPU v4's ICI links (23.44 GB/s per direction, one per neighbour):

- an 8 × 8 torus of 4 × 4 blocks (2 × 2 blocks, 8 switches: 4 face positions per axis), switch
  ocs0-0 failed: 2 of the 8 lines along x broken (one per row of blocks). The cut across x, its two
  planes 4 apart both between blocks, crosses 2 × (8 − 2) = 12 links where it crossed 16:
  12 × 23.44 × 2 = 562.56 GB/s, from 750.08 (the cut across y keeps its 16). The torus allreduce of
  S = 1 GiB over the 64 chips runs a ring of 8 along each dimension: the y ring whole, 2 × 23.44
  GB/s, while the message is whole; the x ring, its broken lines detouring over whole neighbours
  (2 of 8 lines broken, so each detour shares one: half a ring's capacity), on the 1/8 left. Each
  half of the allreduce then moves 7/8 × S / 8 at half the capacity: 2 × 7/64 × S × (1/c − 1/(2c))
  = 7/64 × S / c more, c = 23.44 × TORUS_EFFICIENCY GB/s; the steps are the same.
- the TPU v4 pod (16 × 16 × 16 of 4 × 4 × 4 cubes, 48 switches), ocs0-0 failed: 16 of the 256 lines
  along x broken, the cut across x (512 links) loses 2 × 16: 480 × 23.44 × 2 = 22,502.4 GB/s, 15/16
  of 24,002.56. The 8 GiB allreduce runs the x rings last (at half a ring, on 1/256 of the message):
  15/4096 × S / c more. No chip is cut off and every cube uses the switch: no slice avoids it.
"""

import pytest

from designer.engine import calibration as cal
from designer.engine import evaluate
from designer.engine.failures import Failure, parse_failure
from designer.engine.network import build_fabric
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from designer.topologies.generators import generate
from tests.failure_monotonicity import healthy_of, violations

ICI = 23.44
POD_BISECTION = 2 * 4096 / 16 * ICI * 2


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def _with(design, *failures: str):
    design.settings["failures"] = [parse_failure(text).setting() for text in failures]
    return design


def _small(catalog, *failures: str):
    return _with(generate("torus", catalog, dims="8x8", block="4x4"), *failures)


def _pod(catalog, *failures: str):
    return _with(load_design(resolve_design_path("google-tpu-v4-pod"), catalog), *failures)


def test_a_failed_switch_of_a_small_torus_by_hand(catalog):
    size = 2 ** 30
    workload = {"collective": {"sizes": [size], "algorithm": "torus"}}
    d = evaluate(_small(catalog, "ocs0-0"), catalog, workload).degraded
    assert d.accelerators == 64 and d.cut_off == 0
    bisection = d.figure("Scale-up domain bisection")
    assert bisection.healthy == pytest.approx(16 * ICI * 2)
    assert bisection.degraded == pytest.approx(12 * ICI * 2)
    time = d.figure("allreduce 1 GiB time")
    assert time.degraded - time.healthy == pytest.approx(7 / 64 * size / (ICI * cal.TORUS_EFFICIENCY * 1e9), rel=1e-4)
    assert "2 of the 8 lines along x broken, rerouted over neighbouring lines" in d.placement


def test_a_failed_switch_of_the_tpu_pod(catalog):
    size = 8 * 2 ** 30
    d = evaluate(_pod(catalog, "ocs0-0"), catalog).degraded
    assert d.accelerators == 4096 and d.cut_off == 0
    assert d.figure("Scale-up domain bisection").healthy == pytest.approx(POD_BISECTION, rel=1e-5)
    assert d.figure("Scale-up domain bisection").degraded == pytest.approx(POD_BISECTION * 15 / 16, rel=1e-5)
    time = d.figure("allreduce 8 GiB time")
    detour = 15 / 4096 * size / (ICI * cal.TORUS_EFFICIENCY * 1e9)
    assert time.degraded - time.healthy == pytest.approx(detour, rel=2e-3)
    step = d.figure("Training step time")
    assert step.degraded >= step.healthy
    assert d.figure("Tokens per second").degraded < d.figure("Tokens per second").healthy
    tokens = f"{d.figure('Tokens per second').degraded:,.0f}"
    assert d.placement == (f"runs in place on the degraded torus ({tokens} tokens/s); 16 of the 256 lines along x "
                           "broken, rerouted over neighbouring lines: the failure reaches what every block shares, "
                           "no slice avoids it")


def test_a_failed_link_to_a_switch_or_inside_every_cube_breaks_its_lines_alike(catalog):
    # Both ends' links of a switch's face position, or a link inside the cube, in every cube.
    for failure, axis in (("chip0-0-0--ocs0-0", "x"), ("chip3-0-0--ocs0-0", "x"), ("chip0-0-0--chip0-0-1", "z")):
        d = evaluate(_pod(catalog, failure), catalog).degraded
        assert d.figure("Scale-up domain bisection").degraded == pytest.approx(POD_BISECTION * 15 / 16, rel=1e-5)
        assert f"16 of the 256 lines along {axis} broken" in d.placement, failure


def test_some_copies_of_a_link_thin_its_lines_wherever_it_is(catalog):
    # 5 of the 64 copies (one per cube) of one chip's link to its switch: that hop keeps 59/64 of
    # its capacity on each of its 16 lines; both cut planes cross it: 512 − 2 × 16 × 5/64 links.
    # The representative chip's link (chip0-0-0) and another's give the same figure.
    for failure in ("chip0-0-0--ocs0-0:5", "chip0-1-1--ocs0-5:5"):
        d = evaluate(_pod(catalog, failure), catalog).degraded
        assert d.figure("Scale-up domain bisection").degraded == pytest.approx(POD_BISECTION * (512 - 2.5) / 512,
                                                                               rel=1e-5)
        assert "16 of the 256 lines along x thinned to 92% of their links" in d.placement


def test_a_thinned_medium_thins_every_line_and_adds_to_a_failed_switch(catalog):
    # 5 % of the pod's 15,360 ICI links (240 a cube: 144 inside, 96 to the switches): 768 fail,
    # spread evenly over them (the model's even spread), so every link keeps 95 %.
    alone = evaluate(_pod(catalog, "tpu-ici:5%"), catalog).degraded
    assert alone.figure("Scale-up domain bisection").degraded == pytest.approx(POD_BISECTION * 0.95, rel=1e-5)
    # Whole failures go first: the switch takes its 128 links, and 5 % of the 15,232 left is 762.
    both = evaluate(_pod(catalog, "tpu-ici:5%", "ocs0-0"), catalog).degraded
    assert both.figure("Scale-up domain bisection").degraded == pytest.approx(
        POD_BISECTION * (1 - 762 / 15_232) * 15 / 16, rel=1e-5)


def test_a_share_of_a_mesh_drawn_link_by_link_thins_it_and_cuts_nothing_off(catalog):
    # Tesla Dojo's 50 × 60 mesh draws each of its 5,890 links once: 5 % of them used to fail every
    # link (one copy of each, at least one), cutting off 2,999 of the 3,000 chips. Now 294 of them
    # (5 % of 5,890 is 294.5, rounded to even) spread over all: each keeps 1 − 294/5,890.
    dojo = load_design(resolve_design_path("tesla-dojo-exapod"), catalog)
    d = evaluate(_with(dojo, "dojo-mesh:5%"), catalog).degraded
    assert (d.accelerators, d.cut_off) == (3000, 0)
    bisection = d.figure("Scale-up domain bisection")
    assert bisection.degraded == pytest.approx(bisection.healthy * (1 - 294 / 5890), rel=1e-5)


def test_every_switch_of_an_axis_failed_splits_the_torus(catalog):
    d = evaluate(_small(catalog, *(f"ocs0-{slot}" for slot in range(4))), catalog).degraded
    assert d.figures == ()
    assert d.why == ("every line along x lost its hop at the same place: the torus falls apart into pieces across x, "
                     "which the what-if does not evaluate")


def test_a_healthy_torus_has_no_broken_lines(catalog):
    for design in (_pod(catalog), _small(catalog), load_design(resolve_design_path("tesla-dojo-exapod"), catalog)):
        assert build_fabric(design, catalog).torus_lines is None


def test_no_failure_of_a_switch_or_its_links_helps(catalog):
    healthy = healthy_of(_pod(catalog), catalog)
    for failure in (Failure("ocs0-0"), Failure("ocs2-15"), Failure("chip0-0-0--ocs0-0", copies=5),
                    Failure("chip0-0-0--chip0-0-1"), Failure("tpu-ici", percent=5)):
        assert violations(healthy, catalog, failure) == [], failure


def test_a_failed_link_of_a_torus_or_mesh_drawn_as_one_block(catalog):
    # A 4 × 4 × 4 torus drawn whole: the wrap-around link of one z line gone, the cut across z (its
    # planes 2 apart, one through the wrap-around hop) crosses 2 × 16 − 1 = 31 links of 32.
    d = evaluate(_with(generate("torus", catalog, dims="4x4x4"), "chip0-0-3--chip0-0-0"), catalog).degraded
    assert d.figure("Scale-up domain bisection").degraded == pytest.approx(31 * ICI * 2, rel=1e-5)
    # Tesla Dojo's open 50 × 60 mesh: one plane across the 60-chip dimension cuts its 50 lines, one
    # of which lost a hop: 49 of 50 links (before, a failed mesh link changed no figure).
    dojo = load_design(resolve_design_path("tesla-dojo-exapod"), catalog)
    d = evaluate(_with(dojo, "chip10-10--chip10-11"), catalog).degraded
    bisection = d.figure("Scale-up domain bisection")
    assert bisection.degraded == pytest.approx(bisection.healthy * 49 / 50, rel=1e-5)
    assert d.figure("allreduce 8 GiB time").change > 0


def test_a_switch_serving_several_face_positions_breaks_all_their_lines(catalog):
    # Four switches per axis instead of 16: ocs0-0 joins 4 face positions, 64 of the 256 x lines:
    # the cut across x keeps 2 × (256 − 64) = 384 links of 512.
    design = generate("torus", catalog, dims="16x16x16", block="4x4x4", ocs_per_axis=4)
    d = evaluate(_with(design, "ocs0-0"), catalog).degraded
    assert d.figure("Scale-up domain bisection").degraded == pytest.approx(POD_BISECTION * 384 / 512, rel=1e-5)
    assert "64 of the 256 lines along x broken" in d.placement


def test_the_blast_radius_of_a_circuit_switch_is_the_chips_on_its_lines(catalog):
    from designer.engine.failures import blast_radius

    # 16 lines of 16 chips on the pod (128 of them linked to the switch); 2 lines of 8 on the small
    # torus; 64 lines of 16 where a switch serves 4 face positions.
    assert blast_radius(_pod(catalog), "ocs0-0").text() == "0 accelerators cut off, 256 slowed"
    assert blast_radius(_small(catalog), "ocs1-3").text() == "0 accelerators cut off, 16 slowed"
    fewer = generate("torus", catalog, dims="16x16x16", block="4x4x4", ocs_per_axis=4)
    assert blast_radius(fewer, "ocs2-1").text() == "0 accelerators cut off, 1,024 slowed"
