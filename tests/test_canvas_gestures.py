"""The canvas's gestures are one class each with press, move, release and cancel (issue 25): a
cancelled drag of items puts them back as if it had not begun, and a pan started with the middle
button while a link is drawn hands the mouse back to the link when it ends."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from tests.helpers import two_servers_on_a_leaf, window_settled


def _window(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    window.view.resetTransform()
    window.view.zoom(1.0)
    qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
    return window


def test_a_cancelled_drag_of_items_puts_them_back_and_edits_nothing(make_window, qtbot):
    window = _window(make_window, qtbot)
    scene, view, doc = window.scene, window.view, window.document
    nic = scene.nodes[next(i for i, item in doc.design.items.items() if item.kind == "nic" and item.parent == "s1")]
    steps = doc.undo_stack.index()
    start = view.mapFromScene(nic.sceneBoundingRect().center())
    QTest.mouseMove(view.viewport(), start)
    QTest.mousePress(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for step in range(1, 5):
        QTest.mouseMove(view.viewport(), start + QPoint(30 * step, 20 * step))
    assert nic.scenePos() != scene.nodes["s1"].mapToScene(doc.design.items[nic.item_id].x,
                                                          doc.design.items[nic.item_id].y)

    scene.interactions.drag.cancel()
    item = doc.design.items[nic.item_id]
    assert nic.parentItem() is scene.nodes["s1"] and (nic.pos().x(), nic.pos().y()) == (item.x, item.y)
    assert scene.labels.isAncestorOf(nic.plate)
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       start + QPoint(120, 80))
    assert doc.undo_stack.index() == steps
    assert (nic.pos().x(), nic.pos().y()) == (item.x, item.y)


def test_a_middle_button_pan_during_a_link_hands_the_mouse_back_to_the_link(make_window, qtbot):
    window = _window(make_window, qtbot)
    scene, view = window.scene, window.view
    gestures = view.gestures
    start = view.mapFromScene(scene.nodes["s0"].sceneBoundingRect().center())
    QTest.mouseMove(view.viewport(), start)
    QTest.mousePress(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, start)
    assert gestures.draw_link.under_way()

    QTest.mousePress(view.viewport(), Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier, start)
    assert gestures.pan.under_way()
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier, start)
    assert not gestures.pan.under_way() and gestures.draw_link.under_way()

    messages: list[str] = []
    view.message.connect(messages.append)
    QTest.keyClick(view, Qt.Key.Key_Escape)
    assert not gestures.draw_link.under_way() and messages[-1] == "Link cancelled"
