"""Accelerator memory is counted in GiB, capacity and need alike (calibration.GIB): an H100's
"80 GB" are 80 GiB, so a plan needing more than 80e9 bytes can fit in it. Hand-computed at that
boundary, and every figure shown with the unit it is in."""

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from designer import cli
from designer.engine import calibration as cal
from designer.engine.evaluate import evaluate
from designer.engine.summary import format_value, summary_rows
from designer.io.files import save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate
from designer.ui.results import ResultsPanel

GIB = 2 ** 30
H, HEADS, FFN, VOCAB, SEQ = 4096, 32, 16384, 32000, 2048
# Every GPU holds the whole model (no TP, PP or ZeRO) and recomputes everything: the memory is
# mostly the 16 bytes per parameter of mixed-precision Adam.
PLAN = {"tp": 1, "pp": 1, "mb": 1, "recompute": "full", "zero": 0}


def boundary_model(layers: int) -> dict:
    """A GPT block (4h MLP, dropout) of `layers` layers on 8 sequences: one per GPU of a DGX H100."""
    return {"name": f"boundary-{layers}", "layers": layers, "hidden": H, "heads": HEADS, "ffn": FFN,
            "vocab": VOCAB, "seq": SEQ, "global_batch": 8}


def hand_bytes(layers: int) -> float:
    """The bytes one GPU needs, by hand (docs/training.md, "Memory per accelerator")."""
    per_layer = 4 * H * H + 4 * H + 2 * H * FFN  # QKV and output projections, two norms, the MLP
    parameters = layers * per_layer + VOCAB * H  # tied embedding
    states = (2 + 2 + 12) * parameters  # bf16 weights and gradients, fp32 master, momentum, variance
    # Full recompute stashes each layer's input (2h per token) and rebuilds one layer at a time: a
    # GPT block's 34h per token, plus flash attention's fp32 log-sum-exp per head.
    activations = SEQ * (layers * 2 * H + 34 * H + 4 * HEADS)
    logits = 4 * SEQ * VOCAB  # fp32 logits of the micro-batch
    return states + activations + logits


def click_tab(panel, page) -> None:
    bar = panel.tabs.tabBar()
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(panel.tabs.indexOf(page)).center())
    assert panel.tabs.currentWidget() is page


@pytest.fixture(scope="module")
def dgx():
    return generate("rail-fat-tree", nodes=1)


def test_a_plan_needing_more_than_80e9_bytes_fits_in_an_h100s_80_gib(dgx):
    need = hand_bytes(23)
    overhead = cal.MEMORY_OVERHEAD_GIB * GIB
    assert need + overhead > 80e9  # more than the H100 holds if its "80 GB" were 80e9 bytes
    assert (need + overhead) / GIB <= 0.95 * 80  # within the usable 95 % of 80 GiB
    assert need / 1e9 + 3 > 0.95 * 80  # the old count (bytes ÷ 1e9 against 80) refused it

    training = evaluate(dgx, workload={"training": {"model": boundary_model(23), "plan": PLAN}}).training
    assert training.fits is True and training.step_time_s is not None
    assert training.memory_capacity_gib == 80
    assert training.memory_per_gpu_gib.total == pytest.approx(need / GIB + 3, rel=1e-5)  # 74.83 GiB
    assert training.memory_per_gpu_gib.optimizer == pytest.approx(12 * (23 * (12 * H * H + 4 * H) + VOCAB * H) / GIB,
                                                                  rel=1e-5)


def test_one_layer_more_does_not_fit_and_says_so_in_gib(dgx):
    need = (hand_bytes(24) + cal.MEMORY_OVERHEAD_GIB * GIB) / GIB
    assert need > 0.95 * 80
    training = evaluate(dgx, workload={"training": {"model": boundary_model(24), "plan": PLAN}}).training
    assert training.fits is False and training.step_time_s is None
    optimizer = 12 * (24 * (12 * H * H + 4 * H) + VOCAB * H) / GIB
    assert training.why == (f"needs {need:.1f} GiB per GPU (largest: optimizer {optimizer:.1f} GiB) but "
                            "76.0 GiB are usable of 80 GiB")
    assert training.why == "needs 77.8 GiB per GPU (largest: optimizer 55.5 GiB) but 76.0 GiB are usable of 80 GiB"


def test_the_catalogue_keeps_the_vendors_figures_in_gib():
    catalog = default_catalog()
    vendor = {"v100-sxm2-32gb": 32, "a100-sxm-80gb": 80, "h100-sxm": 80, "h100-pcie": 80, "h800-sxm": 80,
              "h200-sxm": 141, "b200": 180, "gb200": 186, "mi250x": 128, "mi300x": 192, "tpu-v4": 32}
    for part, gib in vendor.items():
        assert catalog[part].number("memory_gib") == gib, part
        # nvidia-smi shows an H100 81,559 MiB: more than 80e9 bytes, less than 80 GiB
    assert 80e9 < 81_559 * 2 ** 20 < 80 * GIB
    assert catalog["dojo-d1"].number("memory_gib") == pytest.approx(354 * 1.25 / 1024, abs=1e-4)  # 442.5 MiB
    assert catalog["cs-2"].number("memory_gib") == pytest.approx(40e9 / GIB, abs=0.005)  # Cerebras' 40 GB, decimal


def test_a_user_part_without_memory_gib_is_refused_by_name(tmp_path):
    from designer.model.catalog import load_catalog
    from designer.model.errors import CatalogError

    mine = tmp_path / "catalog.json"
    mine.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [
        {"id": "my-gpu", "kind": "accelerator", "name": "My GPU", "source": "datasheet", "memory_gb": 96,
         "power_w": 700}]}))
    with pytest.raises(CatalogError, match=r"\$.parts\[0\]: missing field 'memory_gib' \(part 'my-gpu'\)"):
        load_catalog(mine, include_user=False)


def test_shown_memory_figures_carry_gib(make_window, qtbot, dgx, tmp_path, capsys):
    design = dgx.snapshot()
    design.settings["workload"] = {"training": {"model": boundary_model(23), "plan": PLAN}}
    window = make_window(design)
    qtbot.waitUntil(lambda: window.last_result is not None and window.last_result.training.model == "boundary-23",
                    timeout=60_000)
    panel = window.results
    click_tab(panel, panel.training_page)
    labels = panel.training.labels
    assert labels["memory_per_gpu_gib"].text() == ("74.8 GiB of 80 GiB (weights 8.9, gradients 8.9, optimizer 53.2, "
                                                   "activations 0.6, logits 0.2, overhead 3.0)")
    assert labels["fits"].text() == "yes"

    rows = {metric: (value, unit) for metric, value, unit in panel.summary_table_rows()}
    assert rows["HBM capacity"] == ("640", "GiB")  # 8 × 80 GiB, the DGX H100's "640 GB"
    assert rows["Memory per GPU"] == (format_value(window.last_result.training.memory_per_gpu_gib.total), "GiB")
    units = {metric: unit for metric, _, unit in summary_rows(window.last_result)}
    assert units["HBM capacity"] == units["Memory per GPU"] == "GiB"

    assert "Memory: 80 GiB" in window.scene.tooltip_for("su.node.gpu0")

    path = tmp_path / "boundary.cluster.json"
    save_design(design, path)
    assert cli.main(["evaluate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "memory per GPU weights 8.9 GiB, gradients 8.9 GiB, optimizer 53.2 GiB" in out
    assert " GB" not in "".join(line for line in out.splitlines() if "memory" in line.lower() or "HBM" in line)


def test_a_plan_that_does_not_fit_is_shown_in_gib(qtbot, dgx):
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.show_result(evaluate(dgx, workload={"training": {"model": boundary_model(24), "plan": PLAN}}))
    click_tab(panel, panel.training_page)
    assert panel.training.labels["fits"].text() == (
        "NO — needs 77.8 GiB per GPU (largest: optimizer 55.5 GiB) but 76.0 GiB are usable of 80 GiB")
    assert panel.training.labels["memory_per_gpu_gib"].text().startswith("77.8 GiB of 80 GiB (")


def test_the_examples_list_pools_memory_in_tib(capsys):
    assert cli.main(["examples"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("tensorwave-tensornode"))
    assert " 1,080.0 TiB " in line  # 5,760 MI300X × 192 GiB
