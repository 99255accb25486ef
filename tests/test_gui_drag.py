"""While a drag is under way, the dragged boxes and their labels draw above every other box and
label (issue 11): a box dragged across another box's title is not hidden under that title."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtTest import QTest

from designer.canvas import interactions
from tests.helpers import two_servers_on_a_leaf, window_settled


def _title_rect(node) -> QRectF:
    return node._title.mapRectToScene(node._title.boundingRect())


def _shown_at_100_percent(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    window.view.resetTransform()  # 100 %: every label drawn
    window.view.zoom(1.0)
    qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
    return window


def _belongs_to(item, node) -> bool:
    """The item is the box itself, one of its labels or something inside it."""
    return item is node or node.isAncestorOf(item) or item is node.plate or node.plate.isAncestorOf(item)


def _drag_over(view, node, target, steps: int = 6) -> QPoint:
    """Press on the box's centre and move the mouse until that centre is over `target` (scene
    coordinates), keeping the button down. Returns where the mouse is."""
    start = view.mapFromScene(node.sceneBoundingRect().center())
    end = view.mapFromScene(target)
    QTest.mouseMove(view.viewport(), start)
    QTest.mousePress(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    at = start
    for step in range(1, steps + 1):
        at = start + (end - start) * step / steps
        QTest.mouseMove(view.viewport(), at)
    return at


def test_a_dragged_box_and_its_label_draw_above_another_box_s_title(make_window, qtbot):
    window = _shown_at_100_percent(make_window, qtbot)
    scene, view, doc = window.scene, window.view, window.document
    nic = scene.nodes[next(i for i, item in doc.design.items.items() if item.kind == "nic" and item.parent == "s1")]
    other = scene.nodes["s0"]
    steps = doc.undo_stack.index()
    start = view.mapFromScene(nic.sceneBoundingRect().center())

    at = _drag_over(view, nic, _title_rect(other).center())
    # The NIC now lies across the other server's title: wherever they overlap, the NIC (its box
    # or its own label) is on top and the other server's title is under it.
    overlap = nic.sceneBoundingRect().intersected(_title_rect(other))
    assert not overlap.isEmpty()
    for point in (overlap.center(), overlap.topLeft() + (overlap.bottomRight() - overlap.topLeft()) * 0.25):
        under = scene.items(point)
        assert _belongs_to(under[0], nic), f"{under[0]} is drawn over the dragged box"
        assert any(_belongs_to(item, other) for item in under[1:])
    # Its own name stays readable on it: its label is above its box.
    title = _title_rect(nic).center()
    assert scene.items(title)[0] is nic._title

    # Released where it started (at most snapped to the grid): the NIC is back inside its server,
    # its label among the labels again.
    QTest.mouseMove(view.viewport(), start)
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    assert at != start
    assert doc.undo_stack.index() == steps or doc.undo_stack.undoText() == "Move item"
    item = doc.design.items[nic.item_id]
    assert item.parent == "s1" and (nic.pos().x(), nic.pos().y()) == (item.x, item.y)
    assert nic.parentItem() is scene.nodes["s1"]
    assert scene.labels.isAncestorOf(nic.plate) and nic.plate.parentItem() is scene.nodes["s1"].plate
    assert _belongs_to(scene.items(_title_rect(other).center())[0], other)


@pytest.mark.parametrize("lift_at_most", [interactions.LIFT_AT_MOST, 0], ids=["lifted", "moved one by one"])
def test_a_drag_of_everything_lands_every_box_link_and_label_where_it_was_dropped(make_window, qtbot, monkeypatch,
                                                                                  lift_at_most):
    monkeypatch.setattr(interactions, "LIFT_AT_MOST", lift_at_most)
    window = _shown_at_100_percent(make_window, qtbot)
    scene, view, doc = window.scene, window.view, window.document
    window.act_select_all.trigger()
    leaf = scene.nodes["leaf"]
    before = {i: (item.x, item.y) for i, item in doc.design.items.items()}
    titles = {i: _title_rect(node) for i, node in scene.nodes.items()}
    lines = {i: (link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2()))
             for i, link in scene.link_items.items()}

    start = view.mapFromScene(leaf.sceneBoundingRect().center())
    at = _drag_over(view, leaf, leaf.sceneBoundingRect().center() + QPointF(100, 60))
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert at != start
    assert doc.undo_stack.undoText().startswith("Move")
    # The top-level items moved by the drag, their contents with them; in the scene as in the model.
    after = doc.design.items
    dx, dy = after["leaf"].x - before["leaf"][0], after["leaf"].y - before["leaf"][1]
    assert (dx, dy) != (0, 0)
    for item_id, item in after.items():
        expected = (before[item_id][0] + dx, before[item_id][1] + dy) if item.parent is None else before[item_id]
        assert (item.x, item.y) == expected
        node = scene.nodes[item_id]
        assert (node.parentItem().item_id if node.parentItem() is not None else None) == item.parent
        assert _title_rect(node).translated(-dx, -dy) == titles[item_id]
        assert scene.labels.isAncestorOf(node.plate)
    for link_id, link in scene.link_items.items():
        p1, p2 = link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2())
        assert (p1.x() - dx, p1.y() - dy, p2.x() - dx, p2.y() - dy) == (
            lines[link_id][0].x(), lines[link_id][0].y(), lines[link_id][1].x(), lines[link_id][1].y())

    window.act_undo.trigger()
    assert {i: (item.x, item.y) for i, item in doc.design.items.items()} == before
    assert _title_rect(leaf) == titles["leaf"]
