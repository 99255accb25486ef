"""Canvas exports a slide or a build team can use, as a user makes them (File ▸ Export Canvas, the
options dialog filled in, the file dialog answered): every GPU, NIC and link drawn whatever the
canvas's zoom, the title and legend drawn in, only the selection when asked, the choices
remembered; and a link selected by a click a few pixels off its line."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import replace

import pytest
from PySide6.QtCore import QLineF, QPointF, QSettings, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QMessageBox

from designer.canvas import colors
from designer.canvas.items import LINK_HIT_HALF_WIDTH, LinkItem, NodeItem
from designer.model.catalog import default_catalog
from designer.model.layout import tidy_in_place
from designer.topologies import generate
from designer.ui.export_dialog import SETTINGS_GROUP, ExportOptionsDialog
from tests.helpers import two_servers_on_a_leaf, window_settled


@pytest.fixture
def user(monkeypatch, qtbot):
    """Answers the save dialog with `user["save"]`; fills the export options dialog as
    `user["fill"](dialog)` says, through its widgets, and presses Export (records each dialog)."""
    seen: dict = {"dialogs": [], "warnings": [], "fill": lambda dialog: None}
    QSettings("cluster-designer", "Cluster Designer").remove(SETTINGS_GROUP)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *args: (seen["save"], "")))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text: seen["warnings"].append(text)))

    def run(dialog) -> int:
        with qtbot.waitExposed(dialog):
            dialog.show()
        seen["dialogs"].append(dialog)
        seen["fill"](dialog)
        qtbot.mouseClick(dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok),
                         Qt.MouseButton.LeftButton)
        return dialog.result()

    monkeypatch.setattr(ExportOptionsDialog, "exec", run)
    yield seen
    QSettings("cluster-designer", "Cluster Designer").remove(SETTINGS_GROUP)


def _type_title(qtbot, dialog, text: str) -> None:
    dialog.title.selectAll()
    qtbot.keyClicks(dialog.title, text)


def _superpod(make_window, qtbot):
    window = make_window(generate("rail-fat-tree", default_catalog(), nodes=8))
    qtbot.waitUntil(lambda: window_settled(window) and window.last_result is not None, timeout=60_000)
    return window


def _zoomed_out(window, qtbot) -> None:
    """Zoomed out until the servers are summary cards (their GPUs hidden) and text is off."""
    window.view.zoom_to_fit()
    window.view.zoom(0.2)
    scene = window.scene
    qtbot.waitUntil(lambda: not scene.restyling() and not scene.detail
                    and any(node.card for node in scene.nodes.values()), timeout=30_000)


def _gpus(scene) -> list[NodeItem]:
    return [node for node in scene.nodes.values() if node.kind == "accelerator"]


def _colour_near(image: QImage, x: float, y: float, colour: str, spread: int = 3) -> bool:
    """Whether some pixel within `spread` of (x, y) has the colour (within a shade)."""
    want = QColor(colour)
    for dx in range(-spread, spread + 1):
        for dy in range(-spread, spread + 1):
            got = image.pixelColor(int(x) + dx, int(y) + dy)
            if max(abs(got.red() - want.red()), abs(got.green() - want.green()), abs(got.blue() - want.blue())) <= 3:
                return True
    return False


def test_a_png_of_a_zoomed_out_canvas_draws_every_gpu_and_the_canvas_stays_zoomed_out(make_window, qtbot, user,
                                                                                        tmp_path):
    window = _superpod(make_window, qtbot)
    scene = window.scene
    _zoomed_out(window, qtbot)
    assert not any(gpu.isVisible() for gpu in _gpus(scene))  # on the canvas: the servers' cards
    user["save"] = str(tmp_path / "pod.png")

    def fill(dialog) -> None:
        dialog.scale.setCurrentIndex(dialog.scale.findText("1×"))

    user["fill"] = fill
    shown_during: list[int] = []
    window.act_export_canvas.trigger()
    export = window.canvas_export
    export.progress.connect(lambda *_: shown_during.append(sum(g.isVisible() for g in _gpus(scene))))
    with qtbot.waitSignal(export.finished, timeout=60_000):
        pass
    assert shown_during and min(shown_during) == len(_gpus(scene))  # every GPU drawn while the bands ran
    image = QImage(user["save"])
    frame = export.frame
    # At each GPU's place in the picture: its own green box, not the server card's blue.
    for gpu in _gpus(scene)[:8]:
        box = gpu.outline_in_scene()
        x = (box.left() + 3 - frame.drawing.left() + frame.at.x()) * export.scale
        y = (box.top() + 3 - frame.drawing.top() + frame.at.y()) * export.scale
        assert _colour_near(image, x, y, colors.KIND["accelerator"][0]), gpu.item_id
    # The canvas goes back to its own level of detail.
    qtbot.waitUntil(lambda: not scene.restyling() and window_settled(window), timeout=30_000)
    assert not scene.detail and any(node.card for node in scene.nodes.values())
    assert not any(gpu.isVisible() for gpu in _gpus(scene))


def test_the_title_and_legend_are_drawn_into_the_svg_and_the_png(make_window, qtbot, user, tmp_path):
    window = _superpod(make_window, qtbot)
    _zoomed_out(window, qtbot)
    user["fill"] = lambda dialog: _type_title(qtbot, dialog, "Build sheet: pod 7")
    user["save"] = str(tmp_path / "pod.svg")
    window.act_export_canvas_svg.trigger()
    texts = {t.text.strip() for t in ElementTree.parse(user["save"]).getroot().iter()
             if t.tag.endswith("text") and t.text}
    assert "Build sheet: pod 7" in texts
    # Evaluated: the links' colours are their utilization, and the bottleneck stands out.
    assert {"accelerator", "NIC", "switch", "bottleneck link"} <= texts
    assert any(t.startswith("link utilization") for t in texts)
    # Every GPU's label is in the drawing, though the canvas shows cards.
    assert sum(1 for t in texts if t.startswith("GPU ")) >= 8
    # The PNG: the title's dark text above the drawing, the legend's swatches below it.
    user["fill"] = lambda dialog: None  # remembered: the same title and legend
    user["save"] = str(tmp_path / "pod.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    with qtbot.waitSignal(export.finished, timeout=60_000):
        pass
    assert export.options.title == "Build sheet: pod 7" and export.options.legend
    image = QImage(user["save"])
    frame, scale = export.frame, export.scale
    title_rows = range(0, int(frame.at.y() * scale))
    dark = [(x, y) for y in title_rows[::2] for x in range(0, min(image.width(), int(300 * scale)), 2)
            if image.pixelColor(x, y).lightness() < 90]
    assert dark, "the title is drawn above the drawing"
    legend_top = int(frame.legend_top * scale)
    legend = image.copy(0, legend_top, image.width(), image.height() - legend_top)
    assert any(_colour_near(legend, x, y, colors.KIND["accelerator"][0], 0)
               for y in range(0, legend.height(), 2) for x in range(0, min(legend.width(), 80), 2))


def test_export_options_are_remembered_between_exports(make_window, qtbot, user, tmp_path):
    window = _superpod(make_window, qtbot)

    def first(dialog) -> None:
        assert dialog.title.text() == window.document.title  # the default title: the design's name
        _type_title(qtbot, dialog, "Hall B")
        qtbot.mouseClick(dialog.legend, Qt.MouseButton.LeftButton)
        dialog.scale.setCurrentIndex(dialog.scale.findText("4×"))

    user["fill"] = first
    user["save"] = str(tmp_path / "a.pdf")
    window.act_export_canvas_pdf.trigger()
    assert not user["dialogs"][0].legend.isChecked()
    assert (tmp_path / "a.pdf").read_bytes().startswith(b"%PDF")
    seen: dict = {}

    def second(dialog) -> None:
        seen.update(title=dialog.title.text(), legend=dialog.legend.isChecked(), scale=dialog.scale.currentText())

    user["fill"] = second
    user["save"] = str(tmp_path / "b.svg")
    window.act_export_canvas_svg.trigger()
    assert seen["title"] == "Hall B" and seen["legend"] is False
    assert seen["scale"] == "2×"  # the PDF does not choose a PNG's scale
    svg = (tmp_path / "b.svg").read_text()
    assert "Hall B" in svg and "bottleneck link" not in svg


def test_a_selection_only_export_has_only_the_selected_items_and_their_links(make_window, qtbot, user, tmp_path):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    scene = window.scene
    scene.select_ids(["s0"])
    qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
    shown_before = {element: element.isVisible() for element in [*scene.nodes.values(), *scene.link_items.values()]}

    def fill(dialog) -> None:
        assert dialog.selection_only.isEnabled()
        qtbot.mouseClick(dialog.selection_only, Qt.MouseButton.LeftButton)
        _type_title(qtbot, dialog, "Server 0")

    user["fill"] = fill
    user["save"] = str(tmp_path / "s0.svg")
    window.act_export_canvas_svg.trigger()
    texts = [t.text.strip() for t in ElementTree.parse(user["save"]).getroot().iter()
             if t.tag.endswith("text") and t.text]
    design = window.document.design
    inside = [item for item in design.items.values() if item.parent == "s0"]
    assert inside and all(item.label in texts for item in inside if item.kind in ("accelerator", "nic"))
    assert "Leaf" not in texts  # the leaf is not selected
    assert texts.count("GPU 0") == 1  # s1's GPUs are not drawn
    # Everything is back on the canvas as it was shown, still selected as it was.
    qtbot.waitUntil(lambda: window_settled(window) and not scene.restyling(), timeout=10_000)
    assert {element: element.isVisible() for element in shown_before} == shown_before
    assert scene.selected_ids() == ["s0"]


def _link_far_from_boxes(scene) -> tuple[LinkItem, QLineF]:
    """A link and its line in the scene whose middle lies on no box but its container's fill."""
    for link in scene.link_items.values():
        line = QLineF(link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2()))
        if line.length() < 80:
            continue
        mid = line.center()
        leaves = [i for i in scene.items(mid) if isinstance(i, NodeItem) and not i.container]
        if not leaves:
            return link, line
    raise AssertionError("no link with a clear middle")


def test_a_click_a_few_pixels_off_a_link_selects_it(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    view, scene = window.view, window.scene
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    view.resetTransform()  # 100 %: a scene unit is a pixel
    qtbot.waitUntil(lambda: window_settled(window) and not scene.restyling(), timeout=10_000)
    link, line = _link_far_from_boxes(scene)
    view.centerOn(line.center())
    normal = line.normalVector().unitVector()
    off = QPointF(normal.dx(), normal.dy())
    drawn_half = link.pen().widthF() / 2
    assert drawn_half < 3  # a thin line: a click 5 px away misses what is drawn
    at = view.mapFromScene(line.center() + off * 5)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert scene.selected_link_ids() == [link.link_id]
    assert window.document.design.links[link.link_id] is not None
    # Clearly beside it, a click does not take the link.
    scene.select_ids([])
    at = view.mapFromScene(line.center() + off * (LINK_HIT_HALF_WIDTH + 8))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert link.link_id not in scene.selected_link_ids()


def test_a_link_beneath_the_boxes_it_passes_is_seen_reaching_its_nic_inside_the_server(make_window, qtbot, user,
                                                                                        tmp_path):
    """The leaf sits left of both servers, so the second server's NIC links pass over the first
    server and are drawn beneath its boxes: inside their own server they still run over its fill
    to the NIC, on the canvas and in the export, instead of stopping at the server's border."""
    design = tidy_in_place(two_servers_on_a_leaf()[0])
    design.items["leaf"] = replace(design.items["leaf"], x=0)
    window = make_window(design)
    scene = window.scene
    window.view.resetTransform()
    qtbot.waitUntil(lambda: window_settled(window) and not scene.restyling(), timeout=30_000)
    beneath = [link for link in scene.link_items.values()
               if link.b == "leaf" and link.a.startswith("s1.") and link.zValue() < 0]
    assert beneath, "s1's links to the leaf pass over s0"
    server = scene.nodes["s1"]
    user["fill"] = lambda dialog: dialog.title_shown.setChecked(False)
    user["save"] = str(tmp_path / "two.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    with qtbot.waitSignal(export.finished, timeout=60_000):
        pass
    image, frame, scale = QImage(user["save"]), export.frame, export.scale
    fill = QColor(colors.KIND["server"][0])
    checked = 0
    for link in beneath:
        nic = scene.nodes[link.a].outline_in_scene()
        p, q = link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2())
        inside = server.outline_in_scene()
        # Just outside the NIC's box, inside the server, on no other box: the link's colour shows.
        start = p if nic.adjusted(-2, -2, 2, 2).contains(p) else q
        toward = q if start is p else p
        step = (toward - start) / QLineF(start, toward).length()
        spot = start + step * 8
        assert inside.contains(spot)
        others = [i for i in scene.items(spot) if isinstance(i, NodeItem) and i is not server
                  and not i.isAncestorOf(server)]
        if others:
            continue
        x = (spot.x() - frame.drawing.left() + frame.at.x()) * scale
        y = (spot.y() - frame.drawing.top() + frame.at.y()) * scale
        assert not _colour_near(image, x, y, fill.name(), spread=0), link.link_id
        pen = link.pen().color()
        got = image.pixelColor(int(x), int(y))
        near_pen = abs(got.red() - pen.red()) + abs(got.green() - pen.green()) + abs(got.blue() - pen.blue())
        near_fill = abs(got.red() - fill.red()) + abs(got.green() - fill.green()) + abs(got.blue() - fill.blue())
        assert near_pen < near_fill, link.link_id
        # On the canvas: the link's tail in the server lies over its fill there.
        tail = next(t for t in link.tail_items() if t.parentItem() is server)
        under = scene.items(spot)
        assert tail in under and under.index(tail) < under.index(server)
        checked += 1
    assert checked >= 2


def test_an_svg_made_while_a_png_is_drawn_leaves_the_png_at_full_detail(make_window, qtbot, user, tmp_path):
    window = _superpod(make_window, qtbot)
    scene = window.scene
    _zoomed_out(window, qtbot)
    user["save"] = str(tmp_path / "pod.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    made: list[str] = []
    during: list[bool] = []

    def svg_once(*_rows) -> None:  # File ▸ Export Canvas ▸ SVG between two bands of the PNG
        if not made:
            made.append(window.export_canvas_vector("svg", str(tmp_path / "pod.svg")))
        during.append(all(gpu.isVisible() for gpu in _gpus(scene)))

    export.progress.connect(svg_once)
    with qtbot.waitSignal(export.finished, timeout=60_000):
        pass
    assert made == [str(tmp_path / "pod.svg")] and during and all(during)
    qtbot.waitUntil(lambda: not scene.restyling() and window_settled(window), timeout=30_000)
    assert not scene.detail and any(node.card for node in scene.nodes.values())
