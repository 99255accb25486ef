"""What a new user found wrong checking issue 15 in the app, each driven as the user did it: the
Cost tab of a design with many unpriced parts on a laptop-sized window, the inspector's blast
radius and what-if rows, failing some of a group's copies, and the cost assumptions' defaults."""

from __future__ import annotations

from helpers import window_settled
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog


def _open_example(make_window, qtbot, name: str, size: tuple[int, int] = (1400, 900)):
    window = make_window(load_design(resolve_design_path(name), default_catalog()))
    window.resize(*size)
    assert window.scheduler.wait_idle(30_000)
    return window


def _click_tab(window, qtbot, name: str):
    panel = window.results
    bar = panel.tabs.tabBar()
    index = list(panel.sections).index(name)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert panel.tabs.currentIndex() == index
    return panel.sections[name]


def _settle(window, qtbot) -> None:
    """Wait until the window has caught up, then let Qt run the layouts that posted."""
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    for _ in range(3):
        QApplication.processEvents()


def _click_item(window, qtbot, item_id: str) -> None:
    view = window.view
    node = window.scene.nodes[item_id]
    view.ensureVisible(node.sceneBoundingRect())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.mapFromScene(node.sceneBoundingRect().center()))
    assert window.scene.selection() == ([item_id], [])


# -- the Cost tab --------------------------------------------------------------------------------

def test_cost_plots_fit_the_panel_of_a_1280_window_with_many_unpriced_parts(make_window, qtbot):
    # The TPU v4 pod leaves four capital categories unpriced. Naming their parts in the legend made
    # it wider than the panel, and the plots were widened with it and cut off on the right.
    window = _open_example(make_window, qtbot, "google-tpu-v4-pod", (1280, 800))
    tab = _click_tab(window, qtbot, "cost")
    cost = window.last_result.cost
    assert len(cost.unpriced_parts) >= 4
    view = tab.view
    _settle(window, qtbot)
    assert view.ci.geometry().width() <= view.viewport().width()
    assert tab.capital_legend["accelerators_and_servers"].text == "Accelerators and servers (unpriced)"
    # The parts are named in the figures under the plots, every one of them.
    assert all(part in tab.labels["unpriced_parts"].text() for part in cost.unpriced_parts)
    # One legend column holds more rows: the view grows by them, and the yearly plot keeps its height.
    qtbot.waitUntil(lambda: tab.yearly_plot.geometry().height() >= 150, timeout=10_000)

    # A wider results dock (the user drags its edge) gives the legend back its two columns.
    window.resizeDocks([window.results_dock], [900], Qt.Orientation.Horizontal)
    _settle(window, qtbot)
    assert tab.capital_legend_item.columnCount == 2
    assert view.ci.geometry().width() <= view.viewport().width()


# -- the inspector -------------------------------------------------------------------------------

def test_the_inspectors_blast_radius_and_what_if_rows_show_every_line(make_window, qtbot):
    # A long part name in the Part box made the form lay its wrapping rows out for a width it did
    # not have: the blast radius's second line was cut off.
    window = _open_example(make_window, qtbot, "nvidia-superpod-h100-4su")
    _click_item(window, qtbot, "spines.sw")
    window.act_fail_one.trigger()
    qtbot.waitUntil(lambda: "what_if" in window.inspector.fields, timeout=10_000)
    for key in ("blast_radius", "what_if"):
        label = window.inspector.fields[key]
        qtbot.waitUntil(lambda label=label: label.height() >= label.heightForWidth(label.width()), timeout=10_000)
        assert label.heightForWidth(label.width()) > label.fontMetrics().height() * 1.5, "expected a wrapped row"
    assert window.inspector.fields["blast_radius"].text() == "0 accelerators cut off, 1,024 slowed"
