"""Polish a user meets in the side windows and dialogs: the Sweep window's point tooltips and axis
names; a design closed with Discard leaving the Compare window; compute figures in the unit of
their size (EFLOPS) while the CSV keeps TFLOPS; palette tooltips with a part's key figures; the
New from Template dialog's part pickers."""

from __future__ import annotations

import csv
import io
import json

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QComboBox, QToolTip

from designer.io.exports import summary_csv
from designer.topologies import generate
from designer.ui.palette import PART_ROLE
from tests.helpers import window_settled
from tests.helpers.gui import compare_row

TINY = {"format": "cluster-designer-sweep", "version": 1, "name": "tiny", "template": "rail-fat-tree",
        "params": {"nodes": [2, 4, 8], "oversubscription": [1, 2]},
        "workloads": [{"model": "megatron-1.7b", "tokens": 1e11}], "plans": ["auto"],
        "keep": ["summary.power_kw", "training.days", "cost.capital_usd", "training.plan"],
        "constraints": ["summary.power_kw <= 75"], "goal": {"minimize": "summary.power_kw"}}


def _evaluated(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=60_000)


# -- the Sweep window -------------------------------------------------------------------------------

def test_sweep_points_say_what_they_are_and_the_axes_name_their_figures(qtbot, make_window):
    window = make_window(generate("rail-fat-tree", nodes=4))
    window.act_sweep.trigger()
    sweep = window.side_windows[-1]
    qtbot.addWidget(sweep)
    sweep.processes = False  # an in-process Dask cluster: the same runner, no worker processes to start
    sweep.scheduler_field.clear()  # a scheduler an earlier sweep named (and closed) is offered again
    sweep.editor.setPlainText(json.dumps(TINY))
    with qtbot.waitSignal(sweep.finished, timeout=120_000) as done:
        qtbot.mouseClick(sweep.run_button, Qt.MouseButton.LeftButton)
    assert done.args[0] == "6 of 6 points evaluated"
    with qtbot.waitExposed(sweep):  # a context manager: it waits on leaving the block
        sweep.show()
    # The user picks capital cost for x by typing in the combo box.
    sweep.x_combo.setFocus()
    with qtbot.waitSignal(sweep.pointsShown, timeout=10_000):
        qtbot.keyClicks(sweep.x_combo, "cost.cap")
    assert sweep.x_combo.currentText() == "cost.capital_usd"
    assert "colour: nodes from 2 (dark) to 8 (yellow)" in sweep.legend.text()
    sweep.color_combo.setFocus()
    with qtbot.waitSignal(sweep.pointsShown, timeout=10_000):
        qtbot.keyClicks(sweep.color_combo, "summary.p")
    plot = sweep.plot.getPlotItem()
    bottom, left = plot.getAxis("bottom"), plot.getAxis("left")
    # Named as the summary names the figures, money in US$ millions (not pyqtgraph's "M$" or "x1e+06").
    assert (bottom.labelText, bottom.labelUnits) == ("Capital cost", "US$ million")
    assert bottom.labelString().endswith("(US$ million)</span>") and bottom.scale == 1e-6
    assert (left.labelText, left.labelUnits) == ("Days to train", "")
    assert "colour: Power from" in sweep.legend.text() and "kW (dark)" in sweep.legend.text()
    assert sweep.x_combo.itemData(sweep.x_combo.currentIndex(), Qt.ItemDataRole.ToolTipRole) == \
        "Capital cost (USD)"

    # Hovering a point shows which point it is, its parameters and its figures in words.
    row = next(r for r in sweep.rows if r["param.nodes"] == 8 and r["param.oversubscription"] == 1)
    plot.vb.autoRange()
    QApplication.processEvents()  # the view box applies the new range before the point is mapped
    where = sweep.plot.mapFromScene(plot.vb.mapViewToScene(QPointF(row["cost.capital_usd"], row["training.days"])))
    # Through the window, as the window system delivers it (one move: pyqtgraph drops moves closer than 1/60 s).
    qtbot.mouseMove(sweep.windowHandle(), sweep.plot.viewport().mapTo(sweep, where))
    qtbot.waitUntil(lambda: plot.vb.toolTip() != "", timeout=5_000)
    tip = plot.vb.toolTip()
    capital = row["cost.capital_usd"] / 1e6
    assert tip.startswith(f"Point {row['point']}: nodes 8, oversubscription 1\n")
    assert f"Capital cost: ${capital:,.3g} million" in tip
    assert f"Days to train: {row['training.days']:,.4g} days" in tip
    assert "Plan: TP " in tip and "Power: " in tip and "kW" in tip
    assert "misses a constraint" in tip  # 8 nodes draw more than 75 kW
    assert "data=" not in tip and "e+" not in tip
    sweep.close()


# -- Compare ----------------------------------------------------------------------------------------

def test_a_copy_closed_with_discard_leaves_the_compare_window_and_compute_reads_in_eflops(qtbot, make_window):
    window = make_window(generate("rail-fat-tree", nodes=128))  # 1,024 H100: about 1 EFLOPS of BF16
    _evaluated(qtbot, window)
    window.act_compare_copy.trigger()
    copy, compare = window.side_windows[-2], window.side_windows[-1]
    qtbot.addWidget(copy)
    qtbot.addWidget(compare)
    qtbot.waitUntil(lambda: compare.comparison is not None and len(compare.comparison.names) == 2, timeout=60_000)
    table = compare.summary_table
    assert [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())] == \
        ["Metric", "Unit", "A", "B", "Δ B", "× B"]
    peak = compare_row(compare, "peak_bf16_fp16_tflops")
    assert table.item(peak, 1).text() == "EFLOPS"
    peak_tflops = window.last_result.compute.peak_tflops["bf16"]
    assert table.item(peak, 2).text() == f"{peak_tflops / 1e6:,.4g}"
    # The user edits the copy, then closes it and discards the edit (the fixture answers Discard).
    assert copy.document.set_item("su.racks", "Count", count=1)
    assert copy.document.is_modified()
    copy.close()
    qtbot.waitUntil(lambda: compare.comparison is None, timeout=10_000)
    assert not copy.isVisible()
    # No column, curve or heading is left of the copy: one design is left, nothing to compare.
    assert table.columnCount() == 0 and compare.bom_table.columnCount() == 0
    assert compare.busbw_plot.listDataItems() == []
    assert "(copy)" not in compare.state.text() and "<b>B</b>" not in compare.state.text()
    assert "closed" in compare.state.text() and "nothing to compare" in compare.state.text()
    assert "(copy) was closed" in compare.statusBar().currentMessage()
    # The design left is edited: the Compare window stays as it is, without errors.
    assert window.document.set_item("su", "Count", count=2)
    qtbot.waitUntil(lambda: window.last_result.inventory.accelerators == 512, timeout=60_000)
    assert compare.comparison is None and table.columnCount() == 0

    # The summary tab shows the peak in EFLOPS, its exact TFLOPS in the tooltip; the CSV keeps TFLOPS.
    window.document.undo_stack.undo()
    qtbot.waitUntil(lambda: window.last_result.inventory.accelerators == 1024 and window_settled(window),
                    timeout=60_000)
    rows = {metric: (value, unit) for metric, value, unit in window.results.summary_table_rows()}
    peak_tflops = window.last_result.compute.peak_tflops["bf16"]
    assert rows["Peak BF16/FP16"] == (f"{peak_tflops / 1e6:,.4g}", "EFLOPS")
    assert rows["Peak FP64"][1] == "PFLOPS" and rows["Peak INT8"][1] == "EOPS"
    summary = window.results.summary.table
    cell = next(summary.item(r, 1) for r in range(summary.rowCount()) if summary.item(r, 0).text() == "Peak BF16/FP16")
    assert cell.toolTip() == f"{peak_tflops:,.0f} TFLOPS"
    exported = {row[0]: row for row in csv.reader(io.StringIO(summary_csv(window.last_result)))}
    assert "TFLOPS" in exported["Peak BF16/FP16"] and "EFLOPS" not in str(exported)
    compare.close()


# -- the palette ------------------------------------------------------------------------------------

def test_palette_entries_have_their_whole_name_and_key_figures_as_tooltip(qtbot, make_window):
    window = make_window()
    palette = window.parts_palette
    qtbot.keyClicks(palette.search, "h100 sxm5")
    tree = palette.tree
    entry = next(tree.topLevelItem(i).child(j) for i in range(tree.topLevelItemCount())
                 for j in range(tree.topLevelItem(i).childCount())
                 if tree.topLevelItem(i).child(j).data(0, PART_ROLE) == "h100-sxm")
    tip = entry.data(0, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("NVIDIA H100 SXM5 80GB — 989.4 TFLOPS BF16, 80 GiB HBM3, 700 W\nh100-sxm\n")
    # The user rests the mouse on the entry: Qt shows that tooltip.
    tree.scrollToItem(entry)
    rect = tree.visualItemRect(entry)
    assert rect.isValid()
    event = QHelpEvent(QHelpEvent.Type.ToolTip, rect.center(), tree.viewport().mapToGlobal(rect.center()))
    QApplication.sendEvent(tree.viewport(), event)
    qtbot.waitUntil(QToolTip.isVisible, timeout=5_000)
    assert QToolTip.text() == tip
    QToolTip.hideText()
    servers = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                   if tree.topLevelItem(i).text(0).startswith("Servers"))
    dgx = next(servers.child(j) for j in range(servers.childCount())
               if servers.child(j).data(0, PART_ROLE) == "dgx-h100")
    assert dgx.toolTip(0).startswith("NVIDIA DGX H100 — 8 × NVIDIA H100 SXM5 80GB, 8 NICs, 10.2 kW, 8U\n")


# -- New from Template ------------------------------------------------------------------------------

def test_template_parts_are_picked_from_the_catalogue(make_window, qtbot, monkeypatch):
    from designer.ui.templates import TemplateDialog

    window = make_window()
    seen = {}

    def run(dialog):
        with qtbot.waitExposed(dialog):  # a context manager: it waits on leaving the block
            dialog.show()
        row = next(r for r in range(dialog.templates.count()) if dialog.templates.item(r).text() == "rail-fat-tree")
        rect = dialog.templates.visualItemRect(dialog.templates.item(row))
        qtbot.mouseClick(dialog.templates.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        platform, gpu, switch = (dialog.fields[name] for name in ("platform", "gpu", "switch"))
        seen["pickers"] = all(isinstance(f, QComboBox) for f in (platform, gpu, switch))
        seen["platform default"] = platform.currentData()
        seen["switch default"] = switch.currentData()
        seen["rack default"] = dialog.fields["rack"].currentData()
        seen["gpu default"] = gpu.currentText()
        seen["platforms"] = [platform.itemData(i) for i in range(platform.count())]
        # The user opens the platform list with the mouse, moves down to the HGX H200 with the keys.
        qtbot.mouseClick(platform, Qt.MouseButton.LeftButton)
        popup = platform.view()
        qtbot.waitUntil(popup.isVisible, timeout=5_000)
        while popup.currentIndex().data(Qt.ItemDataRole.UserRole) != "hgx-h200":
            qtbot.keyClick(popup, Qt.Key.Key_Down)
        qtbot.keyClick(popup, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: not popup.isVisible(), timeout=5_000)
        seen["chosen"] = platform.currentData()
        qtbot.keyClicks(dialog.fields["nodes"], "4")
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
        return dialog.result()

    monkeypatch.setattr(TemplateDialog, "exec", run)
    window.act_new_from_template.trigger()
    # Where the template's default follows from other parts, the first entry leaves it to them.
    assert seen["pickers"] and seen["platform default"] == "" and seen["switch default"] == ""
    assert seen["rack default"] == "rack-48u"  # the template's own default, chosen
    assert seen["gpu default"] == "Default: as said below"
    assert "hgx-h200" in seen["platforms"] and "qm9700" not in seen["platforms"]  # servers only
    assert seen["chosen"] == "hgx-h200"
    design = window.document.design
    assert design.settings["template"]["params"]["platform"] == "hgx-h200"
    servers = {item.part for item in design.items.values() if item.kind == "server"}
    accelerators = {item.part for item in design.items.values() if item.kind == "accelerator"}
    assert servers == {"hgx-h200"} and accelerators == {"h200-sxm"}  # the GPU followed the platform


# -- the words the figures are shown in -------------------------------------------------------------

def test_figures_read_in_the_unit_of_their_size():
    from designer.ui.results.formatting import axis_scale, compute_text, figure_text, money_text

    assert compute_text(19_788_000) == "19.8 EFLOPS" and compute_text(15_830.4) == "15.8 PFLOPS"
    assert compute_text(989.4) == "989.4 TFLOPS" and compute_text(39_580_000, "TOPS") == "39.6 EOPS"
    assert money_text(1.44e8) == "$144 million" and money_text(2.1e9) == "$2.1 billion"
    assert money_text(52_400) == "$52,400" and money_text(2.2539, "USD/h") == "$2.25/h"
    assert figure_text(0.4197, "fraction") == "42 %" and figure_text(109.3, "kW") == "109.3 kW"
    assert axis_scale(1.44e8, "USD") == (1e-6, "US$ million")
    assert axis_scale(3e9, "USD/year") == (1e-9, "US$ billion/year")
    assert axis_scale(20_000, "kW") == (1e-3, "MW") and axis_scale(16, "count") == (1.0, "")
