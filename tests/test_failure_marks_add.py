"""Failure marks on a link medium add up as marks on an item do (docs/goodput.md, "Failure
what-ifs"): two marks of 50 % are every physical link of the medium, exactly as failing it
outright, and no pile of small marks leaves the accelerators in the job over a fabric that carries
next to nothing.

The small designs, figured by hand:

- `two_servers_on_a_leaf` (tests/helpers.py): 2 DGX H100 drawn side by side, each GPU's NDR NIC
  linked to one leaf by one lane of 50 GB/s: 16 physical `ib-ndr` links. The scale-out bisection
  is what one server sends: 8 × 50 = 400 GB/s. Inside a server the GPUs meet over NVLink, so
  without the leaf each server is an island of 8 and the job shrinks to one of them (8 cut off).
- `four_racks_on_a_leaf`: a replicated group of 4 racks of one DGX H100, its 8 NIC links drawn
  once to a leaf outside the group: 8 drawn links × 4 copies = 32 physical links. Bisection: 2
  servers' 16 × 50 = 800 GB/s.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from designer.cli import _failure_flags, main
from designer.engine import evaluate
from designer.engine.failures import degraded_design, parse_failure
from designer.io.files import save_design
from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.topologies.base import Builder
from tests.helpers import two_servers_on_a_leaf

CATALOG = default_catalog()


def four_racks_on_a_leaf() -> Design:
    design = Design(name="Four racks on a leaf")
    b = Builder(design, CATALOG)
    b.group("rack", 4)
    server = b.server("rack.node", "dgx-h100", "rack")
    b.item("leaf", "switch", "qm9700", None)
    for nic in server["nics"]:
        b.link(nic, "leaf", "ib-ndr")
    return design


def degraded_with(design: Design, *texts: str):
    design.settings["failures"] = [parse_failure(text).setting() for text in texts]
    return evaluate(design, CATALOG).degraded


def same_but_marks(first, second) -> bool:
    """The two degraded results alike in every field but the marks they list."""
    return replace(first, failures=()) == replace(second, failures=())


def bisection(degraded) -> float | None:
    return degraded.figure("Scale-out bisection").degraded


def test_two_halves_of_a_medium_fail_it_exactly_as_failing_it_outright():
    for build, accelerators in ((lambda: two_servers_on_a_leaf()[0], 16), (four_racks_on_a_leaf, 32)):
        halves = degraded_with(build(), "ib-ndr:50%", "ib-ndr:50%")
        outright = degraded_with(build(), "ib-ndr")
        # Every NIC link gone: each server is an island of 8 GPUs, the job runs on one of them.
        assert (halves.accelerators, halves.cut_off) == (8, accelerators - 8)
        assert same_but_marks(halves, outright)
        assert halves.failures == ("ib-ndr:50%", "ib-ndr:50%") and outright.failures == ("ib-ndr",)


def test_shares_of_a_medium_add_up():
    # 30 % of 16 links is 4.8, rounded to 5, twice: 10 of 16 fail and each link keeps 6/16 of its
    # lanes: 400 × 6/16 = 150 GB/s (multiplied, 400 × (11/16)² = 189 GB/s).
    twice = degraded_with(two_servers_on_a_leaf()[0], "ib-ndr:30%", "ib-ndr:30%")
    assert (twice.accelerators, twice.cut_off) == (16, 0)
    assert bisection(twice) == pytest.approx(150.0)
    assert same_but_marks(twice, degraded_with(two_servers_on_a_leaf()[0], "ib-ndr:10"))
    # The replicated racks: 25 % of 32 is 8, twice 16 of 32: 800 × 1/2 = 400 GB/s (not 800 × 9/16).
    racks = degraded_with(four_racks_on_a_leaf(), "ib-ndr:25%", "ib-ndr:25%")
    assert (racks.accelerators, racks.cut_off) == (32, 0)
    assert bisection(racks) == pytest.approx(400.0)


def test_counts_and_shares_of_a_medium_add_up():
    # 3 links and 25 % of 16 (4): 7 of 16 fail, each link keeps 9/16: 400 × 9/16 = 225 GB/s.
    mixed = degraded_with(two_servers_on_a_leaf()[0], "ib-ndr:3", "ib-ndr:25%")
    assert bisection(mixed) == pytest.approx(225.0)
    assert same_but_marks(mixed, degraded_with(two_servers_on_a_leaf()[0], "ib-ndr:7"))


def test_marks_past_every_link_fail_the_medium_and_say_so():
    # 10 + 10 of 16 links: every link fails, capped, as a count above an item's copies does.
    over = degraded_with(two_servers_on_a_leaf()[0], "ib-ndr:10", "ib-ndr:10")
    outright = degraded_with(two_servers_on_a_leaf()[0], "ib-ndr")
    assert (over.accelerators, over.cut_off) == (8, 8)
    assert over.why.startswith("20 physical links of 'ib-ndr' marked failed, the design has 16: every copy failed")
    assert replace(over, failures=(), why=None) == replace(outright, failures=(), why=None)


def test_many_small_marks_cut_off_what_the_fabric_no_longer_joins():
    # 100 marks of 1 % (0.16 of a link each, at least one): 100 of 16 links, all of them. Multiplied,
    # the 16 GPUs stayed in the job over 400 × (15/16)^100 = 0.6 GB/s.
    many = degraded_with(two_servers_on_a_leaf()[0], *["ib-ndr:1%"] * 100)
    assert (many.accelerators, many.cut_off) == (8, 8)
    assert same_but_marks(many, degraded_with(two_servers_on_a_leaf()[0], "ib-ndr"))
    broken, cut_off, _ = degraded_design(two_servers_on_a_leaf()[0], CATALOG, [parse_failure("ib-ndr:1%")] * 100)
    assert cut_off == 8 and not any(link.medium == "ib-ndr" for link in broken.links.values())


def test_a_medium_share_is_counted_over_the_links_left_by_whole_failures():
    # s1.nic0 failed takes its link: 15 left, 3 + 2 of them fail, each keeps 10/15. The weaker
    # server sends 7 × 50 × 2/3 = 233.3 GB/s.
    d = degraded_with(two_servers_on_a_leaf()[0], "s1.nic0", "ib-ndr:3", "ib-ndr:2")
    assert (d.accelerators, d.cut_off) == (16, 0)
    assert bisection(d) == pytest.approx(7 * 50 * 2 / 3, rel=1e-5)


def test_a_mediums_links_are_visited_once_however_many_marks_it_has(monkeypatch):
    calls = {"link_copies": 0}
    link_copies = Design.link_copies

    def counted(self, link):
        calls["link_copies"] += 1
        return link_copies(self, link)

    monkeypatch.setattr(Design, "link_copies", counted)

    def visits(failures):
        calls["link_copies"] = 0
        broken, _, _ = degraded_design(two_servers_on_a_leaf()[0], CATALOG, failures)
        return calls["link_copies"], broken

    one_mark, one_broken = visits([parse_failure("ib-ndr:15")])
    many_marks, many_broken = visits([parse_failure("ib-ndr:1")] * 15)
    assert many_marks == one_mark
    assert many_broken.links == one_broken.links
    assert all(link.lanes == pytest.approx(1 / 16) for link in many_broken.links.values() if link.medium == "ib-ndr")


def run_cli(capsys, path, *fails: str) -> dict:
    args = ["evaluate", str(path), "--json"]
    for fail in fails:
        args += ["--fail", fail]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)["degraded"]


def test_cli_fail_twice_on_a_medium_adds_up(tmp_path, capsys):
    path = tmp_path / "two-servers.cluster.json"
    save_design(two_servers_on_a_leaf()[0], path)
    halves = run_cli(capsys, path, "ib-ndr:50%", "ib-ndr:50%")
    outright = run_cli(capsys, path, "ib-ndr")
    assert halves["failures"] == ["ib-ndr:50%", "ib-ndr:50%"]
    assert (halves["accelerators"], halves["cut_off"]) == (8, 8)
    assert {**halves, "failures": None} == {**outright, "failures": None}
    thirties = run_cli(capsys, path, "ib-ndr:30%", "ib-ndr:30%")
    figure = next(f for f in thirties["figures"] if f["figure"] == "Scale-out bisection")
    assert (thirties["accelerators"], figure["healthy"], figure["degraded"]) == (16, 400.0, 150.0)


def test_fail_flags_are_taken_in_order_and_nothing_after_a_double_dash():
    rest, failures = _failure_flags(["evaluate", "x", "--fail", "a:1", "--json", "--fail=b:2%", "--fail", "c",
                                     "--", "--fail", "d"])
    assert failures == ["a:1", "b:2%", "c"]
    assert rest == ["evaluate", "x", "--json", "--", "--fail", "d"]
    # A --fail with no value is argparse's to refuse.
    assert _failure_flags(["evaluate", "x", "--fail"]) == (["evaluate", "x", "--fail"], [])


def test_fifty_thousand_fail_flags_are_all_marked(tmp_path, capsys):
    path = tmp_path / "two-servers.cluster.json"
    save_design(two_servers_on_a_leaf()[0], path)
    args = ["evaluate", str(path), "--json"]
    for index in range(50_000):
        args += ["--fail", "ib-ndr:1" if index % 2 else "ib-ndr:0.001%"]
    assert main(args) == 0
    degraded = json.loads(capsys.readouterr().out)["degraded"]
    assert len(degraded["failures"]) == 50_000
    assert (degraded["accelerators"], degraded["cut_off"]) == (8, 8)  # every one of the 16 links: the medium is gone
