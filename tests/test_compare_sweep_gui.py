"""The Compare and Sweep windows as a user drives them: File ▸ Compare with a Copy follows the
copy's edits; File ▸ Compare… adds design files; a sweep run from its window shows its points on
the scatter with the Pareto front, and clicking a point opens its design."""

from __future__ import annotations

import json

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication, QFileDialog

from designer.canvas import colors
from designer.io.examples import resolve_design_path
from designer.topologies import generate
from designer.ui.main_window import MainWindow
from tests.helpers.gui import compare_row, sweep_column

TINY = {"format": "cluster-designer-sweep", "version": 1, "name": "tiny", "template": "rail-fat-tree",
        "params": {"nodes": [2, 4, 8], "oversubscription": [1, 2]},
        "workloads": [{"model": "megatron-1.7b", "tokens": 1e11}], "plans": ["auto"],
        "keep": ["summary.power_kw", "training.days", "summary.accelerators"],
        "constraints": ["summary.power_kw <= 75"], "goal": {"minimize": "summary.power_kw"}}


def _evaluated(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=60_000)


def test_compare_with_a_copy_follows_the_copys_edits(qtbot, make_window):
    window = make_window(generate("rail-fat-tree", nodes=8))
    _evaluated(qtbot, window)
    window.act_compare_copy.trigger()
    copy, compare = window.side_windows[-2], window.side_windows[-1]
    qtbot.addWidget(copy)
    qtbot.addWidget(compare)
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=60_000)
    assert compare.comparison.names[1].endswith("(copy)")
    assert all(row.differences[1] in (0, None) for row in compare.comparison.rows)
    assert compare.summary_cell("power_kw", 4) == "0"
    # The user edits the copy: one rack of servers instead of two (the inspector's Count field makes this edit).
    with qtbot.waitSignal(compare.updated, timeout=60_000):
        assert copy.document.set_item("su.racks", "Count", count=1)
    qtbot.waitUntil(lambda: compare.comparison.rows[0].values[1] == 32, timeout=60_000)
    power = next(row for row in compare.comparison.rows if row.key == "power_kw")
    assert power.ratios[1] < 1 and power.verdicts[1] == "better"
    assert compare.summary_cell("power_kw", 4).startswith("-")
    table = compare.bom_table
    servers = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == "dgx-h100")
    # One hot spare in each (2 % of the servers, at least one).
    assert [table.item(servers, c).text() for c in range(3, 7)] == ["9", "5", "-4", "changed"]
    assert compare.cost_label.text().startswith("Cost:")
    copy.document.undo_stack.setClean()
    compare.close()
    copy.close()


def test_file_compare_adds_design_files(qtbot, make_window, monkeypatch):
    window = make_window(generate("rail-fat-tree", nodes=4))
    _evaluated(qtbot, window)
    path = str(resolve_design_path("nvidia-superpod-h100-4su"))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([path], "")))
    window.act_compare.trigger()
    compare = window.side_windows[-1]
    qtbot.addWidget(compare)
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=60_000)
    assert compare.comparison.names[1] == "nvidia-superpod-h100-4su"
    assert compare.summary_table.horizontalHeaderItem(3).text() == "B"
    assert "<b>B</b>: nvidia-superpod-h100-4su" in compare.state.text()
    accelerators = compare.comparison.rows[0]
    assert accelerators.values == (32, 1024) and accelerators.ratios[1] == 32
    # The cost block under its heading: B's capital is higher, shown red (worse).
    table = compare.summary_table
    headings = [table.item(r, 0).text() for r in range(table.rowCount()) if table.columnSpan(r, 0) > 1]
    assert headings[0] == "Cost (lower is better)"
    assert compare.summary_cell("capital_cost_usd", 4).startswith("+")
    capital = table.item(compare_row(compare, "capital_cost_usd"), 4)
    assert capital.foreground().color().name() == colors.ERROR.lower() and capital.toolTip() == "worse"
    curves = [item for item in compare.busbw_plot.listDataItems()]
    assert len(curves) == 2 and all(len(c.getData()[0]) > 0 for c in curves)
    compare.close()


def test_a_sweep_runs_from_its_window_and_a_click_opens_a_point(qtbot, make_window):
    window = make_window(generate("rail-fat-tree", nodes=4))
    window.act_sweep.trigger()
    sweep = window.side_windows[-1]
    qtbot.addWidget(sweep)
    sweep.processes = False  # an in-process Dask cluster: the same runner, no worker processes to start
    sweep.editor.setPlainText(json.dumps(TINY))
    with qtbot.waitSignal(sweep.finished, timeout=120_000):
        qtbot.mouseClick(sweep.run_button, Qt.MouseButton.LeftButton)
    assert len(sweep.rows) == 6 and sweep.model.rowCount() == 6
    qtbot.waitUntil(lambda: len(sweep.scatter.points()) == 6)
    assert sweep.x_combo.currentText() == "summary.power_kw" and sweep.y_combo.currentText() == "training.days"
    assert sweep.pareto  # the cheapest point and the fastest are on it
    # The table sorts and filters.
    sweep.table.sortByColumn(sweep_column(sweep, "summary.power_kw"), Qt.SortOrder.DescendingOrder)
    assert float(sweep.proxy.index(0, sweep_column(sweep, "summary.power_kw")).data()) > 75
    qtbot.keyClicks(sweep.filter, "false")  # the points that miss a constraint: the two of 8 nodes
    assert sweep.proxy.rowCount() == 2
    assert {row["param.nodes"] for row in sweep.rows if row["summary.power_kw"] > 75} == {8}
    sweep.filter.clear()
    # A click on the point of 8 nodes opens its design.
    row = next(r for r in sweep.rows if r["param.nodes"] == 8)
    view = sweep.plot
    with qtbot.waitExposed(sweep):  # a context manager: it waits on leaving the block
        sweep.show()
    view.getPlotItem().vb.autoRange()
    QApplication.processEvents()  # the view box applies the new range before the point is mapped
    scene_pos = view.getPlotItem().vb.mapViewToScene(QPointF(row["summary.power_kw"], row["training.days"]))
    opened = len(window.side_windows)
    where = view.mapFromScene(scene_pos)
    qtbot.mouseMove(view.viewport(), where)
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=where, delay=20)
    qtbot.waitUntil(lambda: len(window.side_windows) > opened)
    design_window = window.side_windows[-1]
    qtbot.addWidget(design_window)
    assert isinstance(design_window, MainWindow)
    _evaluated(qtbot, design_window)
    assert design_window.last_result.inventory.servers == 8
    # Find best: the cheapest point within 75 kW, starred, with why it won.
    with qtbot.waitSignal(sweep.finished, timeout=120_000) as done:
        qtbot.mouseClick(sweep.best_button, Qt.MouseButton.LeftButton)
    assert "best: nodes=2" in done.args[0] and "runner-up" in done.args[0]
    assert len(sweep.best_mark.points()) == 1
    design_window.document.undo_stack.setClean()
    design_window.close()
    sweep.close()


def test_a_sweep_runs_on_the_dask_scheduler_named_in_its_window(qtbot, make_window):
    from dask.distributed import LocalCluster

    window = make_window(generate("rail-fat-tree", nodes=4))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        window.act_sweep.trigger()
        sweep = window.side_windows[-1]
        qtbot.addWidget(sweep)
        sweep.editor.setPlainText(json.dumps(TINY))
        qtbot.keyClicks(sweep.scheduler_field, cluster.scheduler_address)
        with qtbot.waitSignal(sweep.finished, timeout=120_000) as done:
            qtbot.mouseClick(sweep.run_button, Qt.MouseButton.LeftButton)
        assert done.args[0] == "6 of 6 points evaluated" and len(sweep.rows) == 6
        assert "evaluate_points" in cluster.scheduler.task_prefixes  # the points ran there
        with qtbot.waitSignal(sweep.finished, timeout=120_000) as done:
            qtbot.mouseClick(sweep.best_button, Qt.MouseButton.LeftButton)
        assert "best: nodes=2" in done.args[0]
        sweep.close()
    # The address is offered again in the next Sweep window.
    window.act_sweep.trigger()
    again = window.side_windows[-1]
    qtbot.addWidget(again)
    assert again.scheduler_field.text() == cluster.scheduler_address
    again.close()
