"""Readable drawings (issue 11): a failed box is struck through across its label too, and the
shipped examples' links do not run over boxes they do not join."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest

from designer.canvas import colors
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from designer.model.layout import tidy_in_place
from tests.helpers import two_servers_on_a_leaf, window_settled
from tests.helpers.gui import render, right_click_and_choose


def _failure_pixels(image: QImage) -> int:
    """Pixels of (nearly) the failure colour."""
    red = QColor(colors.FAILED)
    count = 0
    for y in range(image.height()):
        for x in range(image.width()):
            pixel = image.pixelColor(x, y)
            if (abs(pixel.red() - red.red()) + abs(pixel.green() - red.green())
                    + abs(pixel.blue() - red.blue())) < 60:
                count += 1
    return count


def test_a_failed_box_is_struck_through_across_its_label(make_window, qtbot):
    window = make_window(load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog()))
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=60_000)
    window.view.resetTransform()  # 100 %: every label drawn
    qtbot.waitUntil(lambda: window_settled(window) and not window.scene.jobs.running("cards"), timeout=30_000)
    scene = window.scene
    node = scene.nodes["spines.sw"]
    title = node._title.mapRectToScene(node._title.boundingRect())
    assert _failure_pixels(render(scene, title)) == 0

    right_click_and_choose(qtbot, window, "spines.sw", "Fail One Copy")
    assert node.failed
    struck = render(scene, title)
    # The strike crosses the title's plate: a stroke of the failure colour, not a speck...
    assert _failure_pixels(struck) > 40
    # ...and the title still reads: most of its plate keeps the box's colour and the text its own.
    fill = QColor(colors.KIND["switch"][0])
    plain = sum(struck.pixelColor(x, y) == fill for y in range(struck.height()) for x in range(struck.width()))
    assert plain > struck.width() * struck.height() / 2

    window.act_undo.trigger()
    assert not node.failed and _failure_pixels(render(scene, title)) == 0


def _drawn_over(link, node) -> bool:
    """Whether Qt paints the link over the box: siblings stack by their z, and a box inside
    another stacks with that one (Qt paints a subtree as one, at its root's height)."""
    holder, outer = link.parentItem(), node
    while outer.parentItem() is not holder:
        outer = outer.parentItem()
    return link.zValue() > outer.zValue()


def _crosses(p: QPointF, q: QPointF, box: tuple[float, float, float, float]) -> bool:
    """Whether the segment p–q enters the box (left, top, right, bottom): clipped to the box's
    slabs in x and in y, something of it is left."""
    low, high = 0.0, 1.0
    for start, delta, near, far in ((p.x(), q.x() - p.x(), box[0], box[2]), (p.y(), q.y() - p.y(), box[1], box[3])):
        if delta == 0:
            if not near < start < far:
                return False
            continue
        t_near, t_far = sorted(((near - start) / delta, (far - start) / delta))
        low, high = max(low, t_near), min(high, t_far)
    return low < high


def _over_boxes_not_joined(scene) -> list[tuple[str, str]]:
    """(link, box) for every drawn link painted across the inside of a box that is neither of its
    ends nor holds one."""
    found = []
    boxes = []
    for node in scene.nodes.values():
        if node.isVisible():
            rect = node.outline_in_scene().adjusted(2, 2, -2, -2)
            boxes.append((node, (rect.left(), rect.top(), rect.right(), rect.bottom())))
    for link in scene.link_items.values():
        if not link.isVisible():
            continue
        ends, holder = set(), link.parentItem()
        for end in (scene.shown_node(scene.nodes[link.a]), scene.shown_node(scene.nodes[link.b])):
            while end is not None:
                ends.add(id(end))
                end = end.parentItem()
        p, q = link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2())
        span = (min(p.x(), q.x()), min(p.y(), q.y()), max(p.x(), q.x()), max(p.y(), q.y()))
        for node, box in boxes:
            if (box[0] >= span[2] or span[0] >= box[2] or box[1] >= span[3] or span[1] >= box[3]
                    or id(node) in ends or (holder is not None and not holder.isAncestorOf(node))):
                continue
            if _crosses(p, q, box) and _drawn_over(link, node):
                found.append((link.link_id, node.item_id))
    return found


def test_a_link_that_would_cross_another_server_goes_beneath_it_until_the_way_is_clear(make_window, qtbot):
    design = tidy_in_place(two_servers_on_a_leaf()[0])  # the leaf above, each server's NICs on top
    design.items["leaf"] = replace(design.items["leaf"], x=0)  # s1's links leave the leaf across s0
    window = make_window(design)
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=30_000)
    window.view.resetTransform()
    qtbot.waitUntil(lambda: window_settled(window) and not window.scene.jobs.running("cards"), timeout=10_000)
    scene, view = window.scene, window.view
    s0 = scene.nodes["s0"]
    inside = s0.outline_in_scene().adjusted(2, 2, -2, -2)
    crossing = {}
    for link in scene.link_items.values():
        if link.b == "leaf" and link.a.startswith("s1."):
            p, q = link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2())
            points = [point for point in (p + (q - p) * (k / 400) for k in range(401)) if inside.contains(point)]
            if points:
                crossing[link] = points[len(points) // 2]
    assert len(crossing) >= 2, "s1's nearer NICs' links leave the leaf across s0"
    # Where a link to s1 passes over s0, what shows is s0, not the link.
    for link, point in crossing.items():
        under = scene.items(point)
        assert under.index(s0) < under.index(link)
    assert _over_boxes_not_joined(scene) == []
    # Selected, a link is drawn whole, over what it passes, and goes back beneath after.
    link, point = next(iter(crossing.items()))
    scene.select_ids([link.link_id])
    qtbot.waitUntil(lambda: link.selected_look, timeout=5_000)
    under = scene.items(point)
    assert under.index(link) < under.index(s0)
    # Failed (right-click ▸ Fail, or the Fail action on the selection), it stays whole too.
    window.act_fail.trigger()
    scene.select_ids([])
    qtbot.waitUntil(lambda: link.failed and not link.selected_look, timeout=5_000)
    assert scene.items(point).index(link) < scene.items(point).index(s0)
    window.act_undo.trigger()
    qtbot.waitUntil(lambda: not link.failed, timeout=5_000)
    assert scene.items(point).index(s0) < scene.items(point).index(link)

    # Dragged over the gap between the servers, the leaf reaches both with nothing in the way:
    # every link is drawn on top again.
    leaf = scene.nodes["leaf"]
    gap = (s0.outline_in_scene().right() + scene.nodes["s1"].outline_in_scene().left()) / 2
    view.centerOn(leaf.sceneBoundingRect().center())
    start = view.mapFromScene(leaf.sceneBoundingRect().center())
    end = view.mapFromScene(QPointF(gap, leaf.sceneBoundingRect().center().y()))
    QTest.mousePress(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for step in range(1, 7):
        QTest.mouseMove(view.viewport(), start + (end - start) * (step / 6))
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
    assert window.document.design.items["leaf"].x > 300
    assert not any(link.over_boxes for link in scene.link_items.values())
    assert all(link.zValue() > 0 for link in crossing)
    assert _over_boxes_not_joined(scene) == []


@pytest.mark.parametrize("name", ["frontier-mi250x", "google-tpu-v4-pod", "aws-p5-ultracluster", "google-a3",
                                  "tesla-h100-2023"])
def test_no_link_of_an_example_is_drawn_over_a_box_it_does_not_join(make_window, qtbot, name):
    """With every link drawn on top, as before, this finds 11,858 (link, box) pairs in Frontier
    (its dragonfly groups' switch mesh over the other switches' blocks and everything in them),
    474 in the TPU v4 pod (links between hosts over the other chips, OCS links over hosts), 116
    in AWS P5 (rail leaves' links over the NICs above theirs, spine-to-core links over other
    spines), 2 in Google A3 and 4 in Tesla H100 2023 (spine-to-core links over other spines' groups)."""
    window = make_window(load_design(resolve_design_path(name), default_catalog()))
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)
    window.view.resetTransform()  # 100 %: no summary card, every box drawn
    qtbot.waitUntil(lambda: window_settled(window) and not window.scene.jobs.running("cards"), timeout=60_000)
    assert _over_boxes_not_joined(window.scene) == []
