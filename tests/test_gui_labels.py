"""Labels lie above the links: a link running into a container crosses its header under the
title's plate, so the title stays readable (issue 11: no label is covered)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtTest import QTest

from tests.helpers import two_servers_on_a_leaf, window_settled


def _render(scene, rect: QRectF) -> QImage:
    image = QImage(int(rect.width() * 4), int(rect.height() * 4), QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    scene.render(painter, QRectF(image.rect()), rect)
    painter.end()
    return image


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
    assert under[0].topLevelItem() is scene.labels
    assert under.index(link) > 0
    # Pixels: where the title is, the link draws nothing.
    rect = _title_rect(server)
    with_link = _render(scene, rect)
    link.setVisible(False)
    without_link = _render(scene, rect)
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
    editor = view._rename_editor
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
