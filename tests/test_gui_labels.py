"""Labels lie above the links: a link running into a container crosses its header under the
title's plate, so the title stays readable (issue 11: no label is covered)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtTest import QTest

from tests.helpers import two_servers_on_a_leaf, window_settled
from tests.helpers.gui import render


def _title_rect(node) -> QRectF:
    title = node._title
    return title.mapRectToScene(title.boundingRect())


def _crossing(scene, node):
    """A link drawn across `node`'s title, and the point where it crosses it."""
    rect = _title_rect(node)
    for link in scene.link_items.values():
        line = link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2())
        for k in range(1, 200):
            point = line[0] + (line[1] - line[0]) * (k / 200)
            if rect.adjusted(2, 2, -2, -2).contains(point):
                return link, point
    return None, None


def test_a_link_crossing_a_server_header_passes_under_its_title(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    design.items["leaf"] = replace(design.items["leaf"], x=0)  # links fan out across s0.s title
    window = make_window(design)
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=30_000)
    window.view.resetTransform()  # 100 %: every label drawn
    window.view.zoom(1.0)
    qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
    scene = window.scene
    server = scene.nodes["s0"]
    link, point = _crossing(scene, server)
    assert link is not None, "the leaf's links run into the server across its title"
    # Stacking: what lies on top at the crossing is the label, the link below it.
    under = scene.items(point)
    assert scene.labels.isAncestorOf(under[0])
    assert under.index(link) > 0
    # Pixels: where the title is, the link draws nothing.
    rect = _title_rect(server)
    with_link = render(scene, rect)
    link.setVisible(False)
    without_link = render(scene, rect)
    link.setVisible(True)
    assert with_link == without_link
    # A click on the title selects the server under it.
    QTest.mouseClick(window.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     window.view.mapFromScene(rect.center()))
    assert scene.selected_ids() == ["s0"]


def test_labels_follow_moves_renames_and_summary_cards(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    window.view.resetTransform()
    window.view.zoom(1.0)
    qtbot.waitUntil(lambda: window_settled(window), timeout=10_000)
    scene, view = window.scene, window.view
    server = scene.nodes["s0"]
    before = _title_rect(server)
    scene.select_ids(["s0"])
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Right)
    assert window.document.design.items["s0"].x > 0
    moved = _title_rect(server)
    assert moved.left() - before.left() == window.document.design.items["s0"].x
    assert server.plate.sceneBoundingRect().contains(moved)

    QTest.keyClick(view, Qt.Key.Key_F2)
    editor = view.rename_editor
    editor.selectAll()
    QTest.keyClicks(editor, "Renamed box")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert server._title.text().startswith("Renamed box")
    assert server.plate.sceneBoundingRect().contains(_title_rect(server))

    view.zoom(0.05)  # the servers become summary cards: their title plate shows the card's text
    qtbot.waitUntil(lambda: server.card and window_settled(window), timeout=10_000)
    nic = scene.nodes[next(i for i in scene.nodes if i.startswith("s0.") and "nic" in i)]
    assert not nic.plate.isVisible()
    assert server.plate.isVisible() and server._card_title.isVisible() and not server._title.isVisible()


def test_dragging_by_a_label_then_opening_another_design_leaves_the_new_labels_alive(make_window, qtbot):
    """A press over a label looks up the box under it (the label layer must stay the labels'
    holder); the design then replaced, its old labels go and the new design's stay: renaming each
    new box lays out its title, with no error."""
    from designer.io.examples import resolve_design_path

    window = make_window()
    window.document.undo_stack.setClean()
    assert window.open_path_interactive(str(resolve_design_path("google-tpu-v4-pod")))
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)
    scene, view = window.scene, window.view
    view.resetTransform()  # every label shown
    qtbot.waitUntil(lambda: window_settled(window) and not scene.jobs.running("cards"), timeout=60_000)
    window.act_select_all.trigger()
    node = next(n for n in scene.nodes.values() if n.isVisible() and n._title.isVisible() and n._title.text())
    view.centerOn(node)
    title = node._title.mapRectToScene(node._title.boundingRect()).center()
    start = view.mapFromScene(title)
    del node  # the old boxes go with the old design
    QTest.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    for step in range(1, 4):
        QTest.mouseMove(view.viewport(), start + QPoint(10 * step, 0))
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=start + QPoint(30, 0))
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)

    window.document.undo_stack.setClean()
    assert window.open_path_interactive(str(resolve_design_path("aws-p4de")))
    qtbot.waitUntil(lambda: window_settled(window) and not scene.jobs.running("discard"), timeout=60_000)
    for item in list(window.document.design.items.values()):
        window.document.set_item(item.id, name=f"{item.label} (renamed)")
        assert scene.nodes[item.id]._title.text().startswith(item.label[:3])
