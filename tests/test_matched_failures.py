"""Failing some copies of a group that a matched link joins copy for copy to another group
(docs/goodput.md, "Copies joined copy for copy"): copy i of every group so matched is split out
together, the split-out copies joined to each other as before, and the figures follow.

The small design (`two_pods_matched_core`): 2 pods of 2 DGX H100 (8 GPUs, 8 NDR NICs of 50 GB/s
each), 32 GPUs. A pod's 16 NICs go to its leaf; the leaf to each of the pod's 2 spines
(`pod.spines` ×2) with 8 lanes; 2 core groups (`core` ×2) of 2 switches (`core.group` ×2); spine j
of every pod to each switch of core group j with 2 lanes (`match: ["pod.spines", "core"]`).

Healthy: each pod sends 2 spines × 2 switches × 2 lanes × 50 GB/s = 400 GB/s out; the bisection is
one pod's: 400 GB/s (injection, 16 × 50 = 800 GB/s, is above it). A spine has 8 lanes down and 4
up: 2:1. An all-to-all of S bytes per rank sends 16 × S/2 = 8 S out of each pod.

`core.sw:1`, one of the 4 core switches: core group 0 keeps 1 of its 2 switches, so spine 0 of each
pod keeps 2 of its 4 up-lanes: each pod sends 300 GB/s out, the bisection is 300 GB/s (the failed
switch carried 2 of each pod's 8 up-lanes: a quarter), the 8 GiB all-to-all's 8 S take 4/3 as long,
spine 0 is 4:1 (8 lanes down, 2 up) and every GPU still reaches every other: nothing is cut off.
"""

from __future__ import annotations

import json

import pytest

from designer.cli import main
from designer.engine import evaluate
from designer.engine.failures import Failure, degraded_design, unbuildable
from designer.io.files import save_design
from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.model.errors import DesignError
from designer.topologies.base import Builder
from tests.helpers import nested_matched_groups, refusal

CATALOG = default_catalog()
ALLTOALL = {"collective": {"op": "alltoall", "sizes": ["8G"]}}


def two_pods_matched_core() -> Design:
    design = Design(name="Two pods, matched core")
    b = Builder(design, CATALOG)
    b.group("pod", 2)
    b.group("pod.servers", 2, "pod")
    server = b.server("pod.node", "dgx-h100", "pod.servers")
    b.item("pod.leaf", "switch", "qm9700", "pod")
    for nic in server["nics"]:
        b.link(nic, "pod.leaf", "ib-ndr")
    b.group("pod.spines", 2, "pod")
    b.item("pod.spine", "switch", "qm9700", "pod.spines")
    b.link("pod.leaf", "pod.spine", "ib-ndr", 8)
    b.group("core", 2)
    b.group("core.group", 2, "core")
    b.item("core.sw", "switch", "qm9700", "core.group")
    b.link("pod.spine", "core.sw", "ib-ndr", 2, match=("pod.spines", "core"))
    return design


def figures_of(design: Design, *failures: Failure, workload=None) -> tuple[dict, object]:
    design.settings["failures"] = [failure.setting() for failure in failures]
    degraded = evaluate(design, CATALOG, workload or ALLTOALL).degraded
    return {f.figure: (f.healthy, f.degraded) for f in degraded.figures}, degraded


def test_one_of_four_core_switches_lowers_the_cut_by_its_share_and_cuts_nothing_off():
    figures, degraded = figures_of(two_pods_matched_core(), Failure("core.sw", 1))
    assert degraded.why is None and degraded.cut_off == 0 and degraded.accelerators == 32
    assert figures["Accelerators in the job"] == (32, 32)
    assert figures["Scale-out bisection"] == (400.0, 300.0)
    assert figures["Worst oversubscription"] == (2.0, 4.0)
    # The cut is 300 GB/s, but ECMP does not weigh it: each pod's leaf splits what leaves the pod
    # evenly over its 2 spines, and spine 0 sends its half up through the one core switch left in
    # its group, where it had two. That link carries twice what a core link did: twice the time
    # (a fluid min cut, or adaptive routing, would give 4/3).
    healthy, broken = figures["alltoall 8 GiB time"]
    assert broken / healthy == pytest.approx(2, rel=1e-3)
    healthy, broken = figures["alltoall 8 GiB bus bandwidth"]
    assert broken / healthy == pytest.approx(1 / 2, rel=1e-3)


def test_the_split_out_core_copy_stays_joined_to_the_split_out_spine_copy():
    design = two_pods_matched_core()
    broken, cut_off, note = degraded_design(design, CATALOG, [Failure("core.sw", 1)])
    assert cut_off == 0 and note is None
    items, links = broken.items, broken.links
    # Copy 0 of both matched groups drawn on its own, one copy each; copy 1 stays as drawn.
    core_copy = next(i for i in items if i.startswith("core:f"))
    spine_copy = next(i for i in items if i.startswith("pod.spines:f"))
    assert items[core_copy].count == items[spine_copy].count == items["core"].count == items["pod.spines"].count == 1
    chains = broken.chains()
    up = [link for link in links.values() if spine_copy in chains[link.a]]
    assert len(up) == 1 and up[0].lanes == 2 and up[0].match is None
    assert chains[up[0].b][-1] == core_copy  # the split-out spine copy goes up to the split-out core copy
    assert all(chains[link.b][-1] == "core" for link in links.values() if "pod.spines" in chains[link.a])
    # In the split-out core group, one of its 2 switches is left; every copy keeps the leaf's 8 lanes.
    assert sum(broken.multiplicity(i) for i, item in items.items() if item.part == "qm9700" and
               core_copy in chains[i]) == 1
    assert sorted(broken.link_copies(link).instances * link.lanes for link in links.values()
                  if link.a == "pod.leaf") == [16, 16]
    # The match still pairing copy 1 of each is dropped: one copy of each is left, nothing to pair.
    assert links["pod.spine--core.sw"].match is None
    assert not evaluate(broken, CATALOG, ALLTOALL).lint


@pytest.mark.parametrize("failure, bisection, worst", [
    (Failure("core.sw", 2), 200.0, 2.0),  # a whole core group: spine 0 of each pod has no way up
    (Failure("core.sw", 3), 100.0, 4.0),  # that and one of the other group's 2
    (Failure("core", 1), 200.0, 2.0),  # the same core group, marked as the group
    (Failure("pod.spines", 1), 200.0, 2.0),  # spine 0 of every pod: core group 0 has nothing below
    # One spine of one pod: that pod is split out first, then its spine's copy with core group 0.
    (Failure("pod.spine", 1), 200.0, 2.0),
])
def test_counts_up_to_the_copies_and_the_matched_group_itself(failure, bisection, worst):
    figures, degraded = figures_of(two_pods_matched_core(), failure)
    assert degraded.why is None and degraded.cut_off == 0
    assert figures["Scale-out bisection"] == (400.0, bisection)
    assert figures["Worst oversubscription"] == (2.0, worst)
    healthy, broken = figures["alltoall 8 GiB time"]
    assert broken / healthy == pytest.approx(400 / bisection, rel=1e-3)


def test_every_core_switch_failed_leaves_the_pods_apart():
    figures, degraded = figures_of(two_pods_matched_core(), Failure("core.sw", 4))
    assert degraded.cut_off == 16 and figures["Accelerators in the job"] == (32, 16)
    assert degraded.why == "the healthy plan with 16 data-parallel replicas fewer"


def test_one_core_switch_of_meta_rsc_phase2_is_a_what_if_with_figures(capsys):
    # 5 blocks; in each, 8 rails of 20 spines, spine j of rail r joined to each of the 20 switches
    # of core group j (8 links matched copy for copy onto the one core group): 3,200 HDR links of
    # 25 GB/s leave a block, 80,000 GB/s; the bisection is 2.5 blocks' worth, 200,000 GB/s (the
    # injection bound, 16,000 × 25 / 2, is the same). One of the 400 core switches carries one link
    # from each rail of each block, 40 of the 16,000: the bisection loses 1/400, 500 GB/s. Its
    # spines keep 19 of 20 ways up: 20:19.
    assert main(["evaluate", "meta-rsc-phase2", "--fail", "core.sw:1", "--json"]) == 0
    degraded = json.loads(capsys.readouterr().out)["degraded"]
    figures = {f["figure"]: (f["healthy"], f["degraded"]) for f in degraded["figures"]}
    assert degraded["cut_off"] == 0 and degraded["accelerators"] == 16_000 and degraded.get("why") is None
    assert figures["Scale-out bisection"] == (200_000.0, 199_500.0)
    assert figures["Worst oversubscription"] == (1.0, pytest.approx(20 / 19, abs=1e-5))
    assert figures["Tokens per second"][1] == figures["Tokens per second"][0]


@pytest.mark.parametrize("text, bisection", [
    ("core:1", 190_000.0),  # a core group of 20 switches: 1/20
    ("blk.spine0:1", 199_500.0),  # a rail-0 spine of one block: that block's 3,200 ways out lose 20
    ("core.sw:399", 500.0),  # one core switch left: 8 links of 25 GB/s per block
])
def test_meta_rsc_phase2_nested_and_large_counts(capsys, text, bisection):
    assert main(["evaluate", "meta-rsc-phase2", "--fail", text, "--json"]) == 0
    degraded = json.loads(capsys.readouterr().out)["degraded"]
    assert degraded["cut_off"] == 0
    assert {f["figure"]: f["degraded"] for f in degraded["figures"]}["Scale-out bisection"] == bisection


def test_matched_groups_one_inside_the_other_are_still_refused_in_one_voice(tmp_path, capsys):
    design = nested_matched_groups()
    assert unbuildable(design, CATALOG, [Failure("x", 1)]) == refusal("x")
    with pytest.raises(DesignError) as refused:
        degraded_design(design, CATALOG, [Failure("x", 1)])
    assert str(refused.value) == refusal("x")
    # Every copy splits nothing out.
    assert unbuildable(design, CATALOG, [Failure("x")]) is None
    path = tmp_path / "nested.cluster.json"
    save_design(design, path)
    assert main(["evaluate", str(path), "--fail", "x:1"]) == 2
    assert f"--fail x:1: {refusal('x')}" in capsys.readouterr().err


def test_a_matched_group_left_nested_elsewhere_is_not_refused():
    # y2 sits in B, which is matched with A and C; failing a copy of y fails B's copy i, which is
    # still refused (A holds C); failing every copy of C's switch is fine.
    design = nested_matched_groups()
    assert unbuildable(design, CATALOG, [Failure("y", 1)]) is not None
    assert unbuildable(design, CATALOG, [Failure("c")]) is None
