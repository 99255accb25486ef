"""Goodput and failure what-ifs in the engine: each formula against a hand-computed case, the
default example's figures from its parts, and degraded designs (docs/goodput.md)."""

import json
import math

import pytest

from designer.cli import main
from designer.engine import evaluate
from designer.engine.failures import blast_radius, degraded_design, parse_failure
from designer.engine.goodput import effective_ratio, reliability, spare_available, young_daly_interval
from designer.io.examples import default_example_path, example_paths, resolve_design_path
from designer.io.files import DesignFileError, load_design, save_design
from designer.model.catalog import default_catalog
from tests.helpers import two_servers_on_a_leaf

DEFAULT = "nvidia-superpod-h100-4su"


@pytest.fixture
def superpod():
    return load_design(resolve_design_path(DEFAULT), default_catalog())


@pytest.fixture(scope="module")
def healthy():
    return evaluate(load_design(resolve_design_path(DEFAULT), default_catalog()))


# -- formulas ---------------------------------------------------------------------------------

def test_young_daly_interval_by_hand():
    # δ = 60 s, M = 10 h: sqrt(2 × 60 × 36,000) − 60 = 2,078.46 − 60
    assert young_daly_interval(60, 36_000) == pytest.approx(2018.46, abs=0.01)
    # A checkpoint slower than half the MTBI: checkpoint once per MTBI.
    assert young_daly_interval(2_000, 3_000) == 3_000


def test_effective_ratio_by_hand():
    # τ = 1,000 s, δ = 100 s, R = 500 s, λ = 1 / 10 h: lost = (500 + 550) / 36,000 = 0.0291667;
    # ratio = (1 − 0.0291667) / (1 + 100 / 1,000) = 0.882576
    assert effective_ratio(1_000, 100, 500, 1 / 36_000) == pytest.approx(0.882576, rel=1e-6)
    # Failures faster than progress: nothing trains.
    assert effective_ratio(1_000, 100, 50_000, 1 / 36_000) == 0.0


def test_spare_available_is_poisson_by_hand():
    assert spare_available(0, 0.5) == 0.0
    assert spare_available(1, 0.5) == pytest.approx(math.exp(-0.5))
    assert spare_available(2, 0.5) == pytest.approx(math.exp(-0.5) * 1.5)
    assert spare_available(50, 0.5) == pytest.approx(1.0)


def test_interruptions_are_the_sum_of_part_counts_times_rates(healthy):
    g = healthy.goodput
    rates = {name: entry["failures_per_year"] for name, entry in reliability()["classes"].items()}
    # 1,024 H100, 128 DGX, 1,024 NICs, 48 QM9700 (the 4 NVSwitch chips per DGX are the server's),
    # 4,096 transceivers and 2,048 cables of the NDR fabric, 4 AI400X2 (one per 256 GPUs).
    assert dict(g.parts) == {"accelerator": 1024, "server": 128, "nic": 1024, "switch": 48, "transceiver": 4096,
                             "cable": 2048, "storage": 4}
    by_hand = (1024 * rates["accelerator"] + 128 * rates["server"] + 1024 * rates["nic"] + 48 * rates["switch"]
               + 4096 * rates["transceiver"] + 2048 * rates["cable"] + 4 * rates["storage"]) / 365
    assert g.interruptions_per_day == pytest.approx(by_hand, rel=1e-5)
    assert g.mtbi_hours == pytest.approx(24 / by_hand, rel=1e-5)


def test_checkpoint_and_interval_from_the_model_and_storage(healthy):
    g, t = healthy.goodput, healthy.training
    state_gb = t.parameters * 14 / 1e9  # bf16 weights + fp32 master + Adam moments
    assert g.checkpoint_gb == pytest.approx(state_gb, rel=1e-5)
    assert g.checkpoint_write_s == pytest.approx(state_gb / (4 * 65), rel=1e-5)
    assert g.checkpoint_read_s == pytest.approx(state_gb / (4 * 90), rel=1e-5)
    mtbi_s = g.mtbi_hours * 3600
    assert g.checkpoint_interval_s == pytest.approx(math.sqrt(2 * g.checkpoint_write_s * mtbi_s)
                                                    - g.checkpoint_write_s, rel=1e-4)
    assert g.days == pytest.approx(t.days / g.effective_ratio, rel=1e-5)
    assert 0 < g.effective_ratio < 1


def test_hot_spares_shorten_recovery(superpod):
    superpod.settings["spares"] = 0
    without = evaluate(superpod).goodput
    superpod.settings["spares"] = 3
    with_spares = evaluate(superpod).goodput
    repair_s = reliability()["recovery"]["repair_hours"] * 3600
    # Without a spare, an interruption of a server class waits for the repair.
    assert without.restart_s > repair_s * 0.5
    assert with_spares.restart_s < without.restart_s / 10
    assert with_spares.effective_ratio > without.effective_ratio
    assert with_spares.days < without.days


def test_no_storage_says_why(superpod):
    del superpod.settings["storage"]
    g = evaluate(superpod).goodput
    assert g.interruptions_per_day > 0
    assert g.checkpoint_write_s is None and g.days is None
    assert "storage" in g.why


def test_every_example_names_a_catalogued_storage_part():
    catalog = default_catalog()
    for path in example_paths():
        design = load_design(path, catalog)
        assert catalog[design.settings["storage"]["part"]].kind == "storage", path
        assert design.settings["spares"] >= 1


# -- failures ---------------------------------------------------------------------------------

def test_failure_texts():
    assert parse_failure("spines.sw:1").copies == 1
    assert parse_failure("ib-ndr:2%").percent == 2
    whole = parse_failure("su.leaf0")
    assert whole.copies is None and whole.percent is None
    for bad in ("spines.sw:0", "x:150%", "x:1.5", ":3"):
        with pytest.raises(ValueError):
            parse_failure(bad)


def test_one_of_sixteen_spines_lowers_bisection_by_a_sixteenth(superpod, healthy):
    assert superpod.items["spines"].count == 16 and superpod.items["spines.sw"].kind == "switch"
    superpod.settings["failures"] = [{"target": "spines.sw", "copies": 1}]
    d = evaluate(superpod).degraded
    bisection = d.figure("Scale-out bisection")
    assert bisection.healthy == healthy.network.scale_out.bisection_gb_per_s
    assert bisection.degraded == pytest.approx(bisection.healthy * 15 / 16)
    assert d.cut_off == 0 and d.accelerators == 1024
    assert d.figure("Accelerators in the job").degraded == 1024
    # Each leaf keeps 32 ports down and 30 up.
    assert d.figure("Worst oversubscription").degraded == pytest.approx(32 / 30, rel=1e-4)


def test_failing_a_servers_only_nic_removes_exactly_its_accelerators():
    design, _ = two_servers_on_a_leaf()
    catalog = default_catalog()
    for server in ("s0", "s1"):  # one NIC per server: its GPUs reach it over the NVSwitches
        for k in range(1, 8):
            design.remove_item(f"{server}.nic{k}")
    design.settings["failures"] = [{"target": "s0.nic0"}]
    result = evaluate(design, catalog)
    assert result.degraded.cut_off == 8
    assert result.degraded.accelerators == 8
    broken, cut_off, _ = degraded_design(design, catalog, [parse_failure("s0.nic0")])
    left = sorted(i for i, item in broken.items.items() if item.kind == "accelerator")
    assert left == sorted(f"s1.gpu{k}" for k in range(8)) and cut_off == 8


def test_failing_one_copy_in_a_replicated_group_splits_that_copy_out(superpod):
    for k in range(1, 8):  # every server keeps one NIC
        superpod.remove_item(f"su.node.nic{k}")
    superpod.settings["failures"] = [{"target": "su.node.nic0", "copies": 1}]
    d = evaluate(superpod).degraded
    assert (d.cut_off, d.accelerators) == (8, 1016)


def test_every_spine_failed_leaves_one_scalable_unit(superpod):
    superpod.settings["failures"] = [{"target": "spines"}]
    d = evaluate(superpod).degraded
    assert (d.accelerators, d.cut_off) == (256, 768)


def test_a_share_of_a_mediums_links_takes_its_share_of_bandwidth(superpod, healthy):
    superpod.settings["failures"] = [{"target": "ib-ndr", "percent": 50}]
    d = evaluate(superpod).degraded
    assert d.figure("Scale-out bisection").degraded == pytest.approx(healthy.network.scale_out.bisection_gb_per_s / 2)
    assert d.figure("Training step time").change > 0


def test_a_healthy_plan_keeps_its_layout_or_is_replaced(superpod):
    # One GPU fewer: the given plan keeps tp 8 and drops a data-parallel replica, the rest idle.
    superpod.settings["workload"] = {"training": {"model": "llama2-70b",
                                                  "plan": {"tp": 8, "pp": 1, "dp": 128, "mb": 1}}}
    superpod.settings["failures"] = [{"target": "su.node.gpu0", "copies": 1}]
    d = evaluate(superpod).degraded
    assert d.accelerators == 1023
    assert (d.plan.tp, d.plan.pp, d.plan.dp, d.plan.mb) == (8, 1, 127, 1)
    assert d.why == "the healthy plan with 1 data-parallel replica fewer, 7 accelerators idle"
    # Three units of four gone: 256 GPUs hold no replica of tp 8 × pp 64, the best plan that fits runs.
    superpod.settings["workload"] = {"training": {"model": "llama2-70b",
                                                  "plan": {"tp": 8, "pp": 64, "dp": 2, "mb": 1}}}
    superpod.settings["failures"] = [{"target": "su", "copies": 3}]
    d = evaluate(superpod).degraded
    assert d.accelerators == 256
    assert "no longer fits" in d.why and d.plan.tp * d.plan.pp * d.plan.dp == 256


def test_blast_radius():
    design = load_design(resolve_design_path(DEFAULT), default_catalog())
    assert (blast_radius(design, "spines.sw").cut_off, blast_radius(design, "spines.sw").slowed) == (0, 1024)
    assert blast_radius(design, "su.node").cut_off == 8
    assert blast_radius(design, "su.node.gpu3").cut_off == 1
    # A rail leaf carries one NIC of each of its scalable unit's 32 servers; every GPU of those
    # servers sends over all its server's NICs (PXN), so all 256 lose bandwidth.
    leaf = blast_radius(design, "su.leaf0")
    assert (leaf.cut_off, leaf.slowed) == (0, 256)


def test_a_nics_blast_radius_counts_every_accelerator_sharing_its_servers_nics():
    design, _ = two_servers_on_a_leaf()
    nic = blast_radius(design, "s0.nic3")
    assert (nic.cut_off, nic.slowed) == (0, 8)
    # Without the NVSwitch chips no GPU reaches another's NIC: the NIC's own GPU is cut off, no
    # other slowed.
    for switch in [i for i in design.items if i.startswith("s0.sw")]:
        design.remove_item(switch)
    nic = blast_radius(design, "s0.nic3")
    assert (nic.cut_off, nic.slowed) == (1, 0)


# -- file and command line --------------------------------------------------------------------

def test_failures_are_saved_and_checked_on_load(tmp_path, superpod):
    superpod.settings["failures"] = [{"target": "spines.sw", "copies": 1}, {"target": "ib-ndr", "percent": 2}]
    path = tmp_path / "whatif.cluster.json"
    save_design(superpod, path)
    assert load_design(path, default_catalog()).settings["failures"] == superpod.settings["failures"]
    document = json.loads(path.read_text())
    document["settings"]["failures"].append({"target": "nowhere"})
    path.write_text(json.dumps(document))
    with pytest.raises(DesignFileError, match=r"\$\.settings\.failures\[2\]\.target.*nowhere"):
        load_design(path, default_catalog())
    document["settings"]["failures"][2] = {"target": "spines.sw", "copies": 1, "percent": 3}
    path.write_text(json.dumps(document))
    with pytest.raises(DesignFileError, match=r"\$\.settings\.failures\[2\]"):
        load_design(path, default_catalog())


def test_cli_fail_option(capsys):
    assert main(["evaluate", DEFAULT, "--fail", "spines.sw:1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["degraded"]["failures"] == ["spines.sw:1"]
    bisection = next(f for f in out["degraded"]["figures"] if f["figure"] == "Scale-out bisection")
    assert bisection["change"] == pytest.approx(-bisection["healthy"] / 16)
    assert set(out["goodput"]) >= {"interruptions_per_day", "mtbi_hours", "checkpoint_write_s",
                                   "checkpoint_interval_s", "restart_s", "effective_ratio", "days"}
    assert main(["evaluate", DEFAULT, "--fail", "nowhere:1"]) == 2
    assert "no item, link or link medium 'nowhere'" in capsys.readouterr().err
    assert main(["evaluate", str(default_example_path())]) == 0
    assert "degraded" not in capsys.readouterr().out


def test_a_leaf_left_without_nics_is_no_extra_switch_level(superpod):
    superpod.settings["failures"] = [{"target": "su.node.nic0"}]  # rail 0 of every server
    d = evaluate(superpod).degraded
    assert d.figure("Scale-out bisection").degraded == pytest.approx(25_600 * 7 / 8)
    # Rail 0's leaves carry nothing now: not a spine-above-spine level with a 7:1 ratio.
    assert d.figure("Worst oversubscription").degraded == 1.0
    assert d.cut_off == 0
