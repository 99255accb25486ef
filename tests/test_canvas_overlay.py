"""The canvas overlay reads the engine's answer (`designer.engine.views`), and the sliced jobs
that restyle a big canvas run, replace and finish as they promise."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from designer.model.catalog import default_catalog
from designer.canvas import colors
from designer.canvas.items import UTIL_LEVELS
from designer.canvas.jobs import SlicedJobs
from designer.canvas.scene import DesignScene
from designer.document.document import Document
from designer.engine import views
from designer.engine.evaluate import evaluate
from designer.topologies import generate
from tests.helpers import two_servers_on_a_leaf, window_settled


def _utilization_colour(u: float) -> str:
    return QColor.fromRgbF(*colors.utilization_rgb(round(u * UTIL_LEVELS) / UTIL_LEVELS)).name()


def test_overlay_colours_every_link_the_engine_reports_and_marks_its_bottleneck(qtbot):
    catalog = default_catalog()
    document = Document(generate("rail-fat-tree", catalog, nodes=16), catalog)
    scene = DesignScene(document)
    result = evaluate(document.design, catalog)
    utilization, bottleneck = views.link_utilization(result), views.bottleneck_link(result)
    assert utilization and bottleneck in scene.link_items
    assert set(utilization) <= set(scene.link_items)
    for link_id, item in scene.link_items.items():  # before a result: by tier
        assert item.pen().color().name() == QColor(colors.tier_color(item.tier)).name(), link_id

    scene.apply_result(result)
    scene.settle_styles()

    for link_id, item in scene.link_items.items():
        colour = item.pen().color().name()
        if link_id == bottleneck:
            assert colour == QColor(colors.BOTTLENECK).name()
        elif link_id in utilization:
            assert item.utilization == utilization[link_id]
            assert colour == _utilization_colour(utilization[link_id]), link_id
        else:
            assert item.utilization is None
            assert colour == QColor(colors.tier_color(item.tier)).name(), link_id
    loaded = next(i for i in utilization if i != bottleneck)
    assert f"Utilization: {utilization[loaded] * 100:.0f}%" in scene.tooltip_for(loaded)
    assert "Bottleneck link" in scene.tooltip_for(bottleneck)


def _jobs_on_a_view(qtbot):
    scene = QGraphicsScene()
    view = QGraphicsView(scene)
    qtbot.addWidget(view)
    return scene, view, SlicedJobs(scene)


def _counting(log: list, name: str, n: int):
    for i in range(n):
        log.append((name, i))
        yield


def test_a_sliced_job_runs_a_slice_per_turn_holding_painting_until_it_ends(qtbot):
    scene, view, jobs = _jobs_on_a_view(qtbot)
    log: list = []
    slices: list = []
    jobs.start("restyle", _counting(log, "a", 5), slice_steps=2, hold=True, after_slice=lambda: slices.append(len(log)))
    assert log == [] and jobs.holding == {"restyle"} and not view.viewport().updatesEnabled()
    qtbot.waitUntil(lambda: not jobs.running("restyle"), timeout=5_000)
    assert log == [("a", i) for i in range(5)]
    assert slices == [2, 4]  # two steps per slice, the last slice ends the job
    assert not jobs.holding and view.viewport().updatesEnabled()


def test_starting_a_job_again_drops_the_run_under_way(qtbot):
    scene, view, jobs = _jobs_on_a_view(qtbot)
    log: list = []
    jobs.start("restyle", _counting(log, "old", 100), slice_steps=10, hold=True)
    jobs.start("restyle", _counting(log, "new", 3), slice_steps=10)
    assert not jobs.holding  # the new run does not hold painting
    qtbot.waitUntil(lambda: not jobs.running("restyle"), timeout=5_000)
    assert log == [("new", i) for i in range(3)]


def test_finishing_a_job_runs_the_rest_now(qtbot):
    scene, view, jobs = _jobs_on_a_view(qtbot)
    log: list = []
    jobs.start("detail", _counting(log, "a", 7), slice_steps=2, hold=True)
    jobs.finish("detail")
    assert log == [("a", i) for i in range(7)]
    assert not jobs.running("detail") and not jobs.holding and view.viewport().updatesEnabled()


def test_a_job_without_slices_runs_at_once(qtbot):
    scene, view, jobs = _jobs_on_a_view(qtbot)
    log: list = []
    jobs.start("build", _counting(log, "a", 4))
    assert log == [("a", i) for i in range(4)] and not jobs.running("build")


def test_two_identical_servers_read_the_same_on_the_canvas_in_every_phase_chosen(make_window, qtbot):
    """The user picks the phase in the Utilization tab; the canvas recolours its links for it, the
    legend names it, and the links of two identical servers read alike whatever the phase."""
    design, counterpart = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=30_000)
    result, scene = window.last_result, window.scene
    window.results.tabs.setCurrentWidget(window.results.utilization.page)
    combo = window.results.utilization.phase_combo
    choices = [combo.itemText(i) for i in range(combo.count())]
    assert choices[1:] == sorted(views.phase_names(result)) and len(choices) > 2
    for index, choice in enumerate(choices):
        combo.setCurrentIndex(index)
        qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
        phase = None if index == 0 else choice
        assert scene.overlay_phase == phase
        assert window.view.legend_title() == f"Link utilization: {phase or 'busiest of all phases'}"
        expected = views.link_utilization(result, phase)
        for first, second in counterpart.items():
            shown = scene.link_items[first].utilization
            assert shown == expected[first] and scene.link_items[second].utilization == shown, (choice, first)
        assert all(scene.link_items[i].utilization > 0 for i in counterpart if ".sw" in i)  # every NVLink


def test_a_server_outside_a_smaller_communicator_is_drawn_idle_and_a_busy_nics_pcie_link_loaded(qtbot):
    """Allreduce over the first server's 8 GPUs: its NVLinks are coloured by their load, the second
    server's links (copies of the first's by symmetry, but no rank uses them) read 0 %. Over all 16
    GPUs, each GPU↔NIC link shows the load of the NIC uplink it feeds."""
    catalog = default_catalog()
    design, counterpart = two_servers_on_a_leaf()
    design.settings["workload"] = {"collective": {"op": "allreduce", "sizes": ["1G"], "ranks": 8}}
    scene = DesignScene(Document(design, catalog))
    result = evaluate(design, catalog)
    scene.apply_result(result, views.phase_names(result)[0])
    scene.settle_styles()
    nvlink = next(i for i in counterpart if ".sw" in i)
    assert scene.link_items[nvlink].utilization > 0.3
    assert scene.link_items[nvlink].pen().color().name() != _utilization_colour(0.0)
    for second in counterpart.values():
        assert scene.link_items[second].utilization == 0
        assert scene.link_items[second].pen().color().name() == _utilization_colour(0.0), second

    design.settings["workload"] = {"collective": {"op": "allreduce", "sizes": ["1G"]}}
    result = evaluate(design, catalog)
    scene.apply_result(result, views.phase_names(result)[0])
    scene.settle_styles()
    pcie = [i for i in design.links if design.items[design.links[i].b].kind == "nic"]
    assert pcie and all(scene.link_items[i].utilization > 0.1 for i in pcie)
