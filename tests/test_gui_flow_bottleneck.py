"""A 16:1 oversubscribed tree built from an empty canvas the way a user builds it, and the flow
model's answer read where the user reads it: the canvas overlay and the Collectives tab.

Driven by real events, every step:
  - the seven parts (three QM9700 switches, four DGX H100 servers, all at the top level) are
    dropped from the palette with real drag-and-drop events (`tests.test_gui_canvas.drop`);
  - the switches are renamed "Leaf 0", "Leaf 1" and "Spine" by double-click, typing and Return;
  - all 34 cables are drawn with the mouse, link tool on (the L key): a press on one end, moves,
    a release on the other. Each server's 8 NICs to its leaf (2 servers a leaf), one cable from
    each leaf to the spine. A NIC and a QM9700 share one medium (ib-ndr), so no question is asked;
  - the view is zoomed by two wheel notches; between gestures it is scrolled (`centerOn`, what the
    scroll bars do) so that both ends of the next gesture are on screen;
  - the Collectives tab is opened with a mouse click on its tab.

Then the model (7 top-level boxes, 34 cables), the result (the largest allreduce is limited by a
leaf–spine cable), the Collectives tab's caption and the canvas overlay (that cable marked, the
busiest of all; no NIC uplink marked) are checked."""

from __future__ import annotations

import re

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from designer.canvas import colors
from designer.canvas.items import LINK_TOP_Z, UTIL_LEVELS
from designer.model.design import Design
from tests.helpers import window_settled
from tests.helpers.gui import drop

NO = Qt.KeyboardModifier.NoModifier
CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton

# Where each part is dropped (scene coordinates; a dropped box is centred there): the servers in a
# row, the leaves under the gaps between the pairs they serve, the spine under the middle. All of
# it within the ±2000 the empty canvas can scroll over: a box dropped further out widens the scene
# rect, but the view's scroll bars do not follow (the scene grows it while its signals are
# blocked, `DesignScene.on_changed`).
SERVERS_AT = [QPointF(640 * k - 1000, 250) for k in range(4)]
LEAVES_AT = [QPointF(-690, 520), QPointF(590, 520)]
SPINE_AT = QPointF(-50, 820)


def _settle(window, qtbot) -> None:
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    QApplication.processEvents()


def _show(window, *points: QPointF) -> None:
    """Scroll the view so that every point is on screen (each gesture's ends)."""
    view = window.view
    centre = QPointF(sum(p.x() for p in points) / len(points), sum(p.y() for p in points) / len(points))
    view.centerOn(centre)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert all(shown.contains(p) for p in points), "a gesture's ends do not fit on screen together"


def _centre(window, item_id: str) -> QPointF:
    return window.scene.nodes[item_id].sceneBoundingRect().center()


def _drop_new(window, part_id: str, at: QPointF) -> str:
    """Drop a part from the palette at `at`; the id of the top-level item it made."""
    before = set(window.document.design.items)
    _show(window, at)
    assert drop(window, part_id, window.view.mapFromScene(at))
    (made,) = [i for i in window.document.design.items.values() if i.id not in before and i.parent is None]
    return made.id


def _wheel(window, notches: int) -> None:
    vp = window.view.viewport()
    pos = QPointF(vp.rect().center())
    event = QWheelEvent(pos, vp.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 120 * notches), Qt.MouseButton.NoButton,
                        NO, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(vp, event)


def _rename(window, item_id: str, name: str) -> None:
    view = window.view
    _show(window, _centre(window, item_id))
    QTest.mouseDClick(view.viewport(), LEFT, NO, view.mapFromScene(_centre(window, item_id)))
    editor = view.rename_editor
    assert editor is not None and editor.isVisible()
    QTest.keyClick(editor, Qt.Key.Key_A, CTRL)
    QTest.keyClicks(editor, name)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.document.design.items[item_id].name == name


def _draw_link(window, a: str, b: str) -> str:
    """Press on `a`, move in steps, release on `b` (the link tool is on); the new link's id."""
    view, vp = window.view, window.view.viewport()
    before = set(window.document.design.links)
    _show(window, _centre(window, a), _centre(window, b))
    start, end = view.mapFromScene(_centre(window, a)), view.mapFromScene(_centre(window, b))
    assert window.scene.node_at(view.mapToScene(start)).item_id == a
    assert window.scene.node_at(view.mapToScene(end)).item_id == b
    QTest.mousePress(vp, LEFT, NO, start)
    for i in range(1, 5):
        QTest.mouseMove(vp, start + (end - start) * (i / 4))
    QTest.mouseRelease(vp, LEFT, NO, end)
    (made,) = set(window.document.design.links) - before
    return made


def _percent(tooltip: str) -> int:
    match = re.search(r"Utilization: (\d+)%", tooltip)
    assert match, tooltip
    return int(match.group(1))


def test_a_16_to_1_tree_drawn_by_hand_names_the_leaf_spine_cable_as_the_bottleneck(make_window, qtbot):
    window = make_window(Design(name="Empty"))
    window.view.resetTransform()
    window.view.centerOn(0, 0)
    doc, scene, view = window.document, window.scene, window.view
    _wheel(window, -2)  # two notches out: all of a server on screen, still drawn whole (no card)
    assert 0.6 <= view.transform().m11() < 0.75

    # --- the parts, dropped from the palette -------------------------------------------------------
    servers = [_drop_new(window, "dgx-h100", at) for at in SERVERS_AT]
    leaves = [_drop_new(window, "qm9700", at) for at in LEAVES_AT]
    spine = _drop_new(window, "qm9700", SPINE_AT)
    boxes = [scene.nodes[i].sceneBoundingRect() for i in [*servers, *leaves, spine]]
    assert not any(r.intersects(s) for k, r in enumerate(boxes) for s in boxes[k + 1:])  # nothing on top of another
    for k, leaf in enumerate(leaves):
        _rename(window, leaf, f"Leaf {k}")
    _rename(window, spine, "Spine")

    # --- the cables, drawn with the mouse ------------------------------------------------------------
    scene.interactions.choose_medium = lambda options, what: (_ for _ in ()).throw(
        AssertionError(f"asked for a medium for {what}: {options}"))  # one shared medium: never asked
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_L)
    assert window.act_link_tool.isChecked() and view.link_tool
    design = doc.design
    nics = {s: sorted((i.id for i in design.descendants(s) if i.kind == "nic"), key=lambda n: design.items[n].x)
            for s in servers}
    uplinks: dict[str, str] = {}  # NIC → its link
    for k, server in enumerate(servers):
        assert len(nics[server]) == 8
        for nic in nics[server]:
            uplinks[nic] = _draw_link(window, nic, leaves[k // 2])
    leaf_spine = [_draw_link(window, leaf, spine) for leaf in leaves]
    _settle(window, qtbot)

    # --- the model ---------------------------------------------------------------------------------
    design = doc.design
    top = [i for i in design.items.values() if i.parent is None]
    assert len(top) == 7
    assert sorted((i.kind, i.part) for i in top) == [("server", "dgx-h100")] * 4 + [("switch", "qm9700")] * 3
    for server in servers:
        inside = design.descendants(server)
        assert sum(1 for i in inside if i.kind == "accelerator") == 8
        assert sum(1 for i in inside if i.kind == "nic") == 8
    switch_ids = {*leaves, spine}
    cables = [l for l in design.links.values() if l.a in switch_ids or l.b in switch_ids]
    assert len(cables) == 34 and {l.id for l in cables} == set(uplinks.values()) | set(leaf_spine)
    assert all(l.medium == "ib-ndr" and l.lanes == 1 for l in cables)
    for k, leaf in enumerate(leaves):
        down = [l for l in cables if leaf in (l.a, l.b) and spine not in (l.a, l.b)]
        assert len(down) == 16
        assert {design.items[l.a].parent for l in down} == set(servers[2 * k:2 * k + 2])
    assert [(design.links[i].a, design.links[i].b) for i in leaf_spine] == [(leaf, spine) for leaf in leaves]
    # Every other link came inside a dropped server (its NVSwitch fabric, GPU–NIC links).
    assert all(design.items[l.a].parent in servers and design.items[l.a].parent == design.items[l.b].parent
               for l in design.links.values() if l not in cables)
    assert doc.undo_stack.count() == 7 + 3 + 34  # a drop, a rename, a link: one step each

    # --- the result: the largest allreduce is limited by a leaf–spine cable ------------------------
    result = window.last_result
    assert result is not None
    auto = [r for r in result.collectives if r.op == "allreduce" and r.algorithm == "auto"]
    largest = max(auto, key=lambda r: r.bytes)
    neck = largest.bottleneck
    assert neck is not None and neck.link in leaf_spine and neck.tier == "scale-out"
    link = design.links[neck.link]
    assert neck.name == f"{design.items[link.a].name} – {design.items[link.b].name}"
    assert re.fullmatch(r"Leaf [01] – Spine", neck.name)
    # Auto picks SHARP here (the QM9700s reduce in the network); the ring is held by the same cable.
    rings = [r for r in result.collectives
             if r.op == "allreduce" and r.algorithm == "ring" and r.bytes == largest.bytes]
    assert rings and all(r.bottleneck is not None and r.bottleneck.link in leaf_spine for r in rings)

    # --- the Collectives tab says so ----------------------------------------------------------------
    panel = window.results
    bar = panel.tabs.tabBar()
    index = list(panel.sections).index("collectives")
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(index).center())
    assert panel.tabs.currentIndex() == index
    _settle(window, qtbot)
    tab = panel.sections["collectives"]
    assert tab.op_combo.currentData() == ("allreduce", largest.ranks)
    info = tab.info
    assert info.isVisible()
    assert f"Bottleneck: {neck.name}" in info.text(), info.text()

    # --- the canvas overlay marks that cable, the busiest drawn -------------------------------------
    assert scene.bottleneck == neck.link
    marked = [i for i, item in scene.link_items.items() if item.bottleneck]
    assert marked == [neck.link]
    item = scene.link_items[neck.link]
    assert item.pen().color().name() == QColor(colors.BOTTLENECK).name()
    assert item.zValue() == LINK_TOP_Z
    assert "Bottleneck link" in scene.tooltip_for(neck.link)
    loads = {i: it.utilization for i, it in scene.link_items.items() if it.utilization is not None}
    busiest = max(loads.values())
    assert all(loads[i] == busiest for i in leaf_spine)  # both leaves' uplinks carry the same
    assert all(loads.get(i, 0.0) < busiest for i in uplinks.values())
    # The other leaf–spine cable wears the busiest colour of the utilization scale.
    other = next(i for i in leaf_spine if i != neck.link)
    level = round(busiest * UTIL_LEVELS) / UTIL_LEVELS
    assert scene.link_items[other].pen().color().name() == QColor.fromRgbF(*colors.utilization_rgb(level)).name()
    # ... and its tooltip's figure is the highest of all 34 cables'.
    shown = {i: _percent(scene.tooltip_for(i)) for i in [*uplinks.values(), *leaf_spine]}
    assert shown[neck.link] == shown[other] == max(shown.values())
    assert max(shown[i] for i in uplinks.values()) < shown[neck.link]
    # A server's NIC uplink is not the one marked.
    nic_link = uplinks[nics[servers[0]][0]]
    assert not scene.link_items[nic_link].bottleneck
    assert "Bottleneck link" not in scene.tooltip_for(nic_link)
    assert scene.link_items[nic_link].pen().color().name() != QColor(colors.BOTTLENECK).name()
