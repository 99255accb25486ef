"""In-network reduction (NVLS, SHARP) is a fact of the switch parts and a design setting: the CLI
option and the Design menu turn it off, the setting is saved and undoable, and `auto` respects it."""

import json

from designer.cli import main
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate

G = 2 ** 30


def in_switch_rows(result) -> list:
    return [row for row in result.collectives if row.algorithm == "auto" and row.chosen in ("nvls", "sharp")]


def test_cli_option_overrides_the_design_setting(capsys, tmp_path):
    path = tmp_path / "su.cluster.json"
    save_design(generate("rail-fat-tree", default_catalog(), nodes=32), path)

    def chosen(*option):
        assert main(["evaluate", str(path), "--json", "--sizes", "16M,128M", *option]) == 0
        result = json.loads(capsys.readouterr().out)
        tiers = result["network"]["tiers"]
        return ({row["chosen"] for row in result["collectives"] if row["algorithm"] == "auto"},
                tiers["scale-up"]["in_network_reduction"], tiers["scale-out"]["in_network_reduction"])

    algos, up, out = chosen()
    assert "sharp" in algos and (up, out) == ("nvls", "sharp")
    algos, up, out = chosen("--in-network-reduction", "off")
    assert not algos & {"nvls", "sharp"} and (up, out) == (None, None)
    assert chosen("--in-network-reduction", "nvls")[1:] == ("nvls", None)
    assert chosen("--in-network-reduction", "sharp")[1:] == (None, "sharp")


def test_cli_option_refuses_an_unknown_value(capsys, tmp_path):
    path = tmp_path / "s.cluster.json"
    save_design(generate("server", default_catalog()), path)
    assert main(["evaluate", str(path), "--in-network-reduction", "maybe"]) != 0
    assert "--in-network-reduction: expected on, off, nvls or sharp, got \"maybe\"" in capsys.readouterr().err


def test_a_switch_without_sharp_rules_it_out():
    # Ethernet leaves (SN5600) have no SHARP: auto never chooses it, whatever the setting.
    from designer.engine import evaluate

    design = generate("rail-fat-tree", default_catalog(), nodes=32, nic="cx7-400gbe", switch="sn5600")
    result = evaluate(design, default_catalog(), {"collective": {"sizes": [16 * 2 ** 20, G]}})
    assert result.network.scale_out.in_network_reduction is None
    assert all(row.chosen != "sharp" for row in result.collectives if row.algorithm == "auto")


def test_design_menu_turns_sharp_off_saved_and_undoable(make_window, qtbot, tmp_path):
    window = make_window(generate("rail-fat-tree", default_catalog(), nodes=32))
    assert window.scheduler.wait_idle(30_000)
    doc = window.document
    doc.set_setting("workload", {"collective": {"sizes": [128 * 2 ** 20]}}, "Sizes")
    qtbot.waitUntil(lambda: bool(in_switch_rows(window.last_result)), timeout=30_000)
    nvls, sharp = window.in_network_actions["nvls"], window.in_network_actions["sharp"]
    assert nvls.isChecked() and sharp.isChecked()

    sharp.trigger()
    assert doc.design.settings["in_network_reduction"] == {"sharp": False}
    assert doc.undo_stack.undoText() == "Turn InfiniBand SHARP off"
    qtbot.waitUntil(lambda: window.last_result.network.scale_out.in_network_reduction is None, timeout=30_000)
    assert all(row.chosen != "sharp" for row in window.last_result.collectives if row.algorithm == "auto")
    nvls.trigger()
    qtbot.waitUntil(lambda: not in_switch_rows(window.last_result)
                    and window.last_result.network.scale_up.in_network_reduction is None, timeout=30_000)

    path = tmp_path / "no-inr.cluster.json"
    assert window.save_to(str(path))
    assert load_design(path).settings["in_network_reduction"] == {"nvls": False, "sharp": False}

    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert "in_network_reduction" not in doc.design.settings
    assert nvls.isChecked() and sharp.isChecked()
    qtbot.waitUntil(lambda: bool(in_switch_rows(window.last_result)), timeout=30_000)
