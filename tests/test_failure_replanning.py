"""The job a failure leaves, replanned: the healthy plan's layout on fewer data-parallel replicas
(docs/goodput.md). With experts split over `ep` data-parallel ranks, the replicas kept are a
multiple of ep: an expert-parallel group is made of data-parallel ranks, so a plan whose dp ep
does not divide cannot run, and the what-if would otherwise fall back to a different plan."""

import pytest

from designer.engine import evaluate
from designer.model.catalog import default_catalog
from tests.helpers import two_servers_on_a_leaf

# Mixtral's layer shape and 8 experts, cut to 4 layers and 4K sequences so that a plan of tp 2
# fits 80 GiB at every ep below: the replanned figures, not memory, decide.
SMALL_MIXTRAL = {"preset": "mixtral-8x7b", "layers": 4, "seq": 4096}


@pytest.mark.parametrize(("ep", "replicas", "idle"), [
    # 16 H100, tp 2 × pp 1 × cp 1 = 2 per replica, healthy dp 8. One GPU failed: 15 left, room
    # for 15 // 2 = 7 replicas; the largest multiple of ep at most 7 is kept, the rest idle.
    (4, 4, 15 - 4 * 2),  # 7 replicas are not 4-rank expert groups: 4 replicas on 8 GPUs, 7 idle
    (2, 6, 15 - 6 * 2),  # 6 replicas on 12 GPUs, 3 idle
    (1, 7, 15 - 7 * 2),  # ep 1 divides every dp: 7 replicas on 14 GPUs, 1 idle
])
def test_replicas_kept_after_a_failure_are_a_multiple_of_ep(ep, replicas, idle):
    design, _ = two_servers_on_a_leaf()
    plan = {"tp": 2, "pp": 1, "dp": 8, "cp": 1, "ep": ep, "mb": 1, "recompute": "full", "zero": 1}
    workload = {"training": {"model": SMALL_MIXTRAL, "plan": plan}}
    healthy = evaluate(design, default_catalog(), workload)
    assert healthy.training.timed and healthy.training.fits
    assert (healthy.training.plan.dp, healthy.training.plan.ep) == (8, ep)

    design.settings["failures"] = [{"target": "s0.gpu0"}]
    degraded = evaluate(design, default_catalog(), workload).degraded

    assert degraded.accelerators == 15
    assert degraded.plan.dp == replicas
    assert degraded.plan.dp % ep == 0
    # The healthy layout kept, only replicas dropped: not the best plan searched for what is left.
    assert (degraded.plan.tp, degraded.plan.pp, degraded.plan.cp, degraded.plan.ep) == (2, 1, 1, ep)
    assert not degraded.plan.auto
    dropped = 8 - replicas
    assert degraded.why == (f"the healthy plan with {dropped} data-parallel replica{'s' if dropped != 1 else ''} "
                            f"fewer, {idle} accelerator{'s' if idle != 1 else ''} idle")
