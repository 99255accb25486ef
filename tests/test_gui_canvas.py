"""The canvas driven like a user: real drag-and-drop events with the palette's MIME data, mouse
drags, key presses; assertions on the model, the undo stack and what the scene shows."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.model.layout import GRID
from designer.topologies import generate
from tests.helpers.gui import drop

NO = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier
LEFT = Qt.MouseButton.LeftButton


def vpos(window, item_id: str, where: str = "center") -> QPoint:
    """Viewport position of an item's centre (or its header for containers)."""
    node = window.scene.nodes[item_id]
    rect = node.mapRectToScene(node.header_rect()) if where == "header" else node.sceneBoundingRect()
    return window.view.mapFromScene(rect.center())


def drag(window, start: QPoint, end: QPoint, modifiers=NO, steps: int = 6) -> None:
    vp = window.view.viewport()
    QTest.mousePress(vp, LEFT, modifiers, start)
    for i in range(1, steps + 1):
        p = start + (end - start) * (i / steps)
        QTest.mouseMove(vp, p)
        # QTest.mouseMove carries no modifiers; send a real move event with them.
        from PySide6.QtGui import QMouseEvent
        from PySide6.QtCore import QEvent
        ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(p), QPointF(vp.mapToGlobal(p)), Qt.MouseButton.NoButton,
                         LEFT, modifiers)
        QApplication.sendEvent(vp, ev)
    QTest.mouseRelease(vp, LEFT, modifiers, end)


@pytest.fixture
def empty(make_window):
    window = make_window(Design(name="Empty"))
    window.view.resetTransform()
    window.view.centerOn(0, 0)
    return window


@pytest.fixture
def server_window(make_window):
    design = generate("server", default_catalog(), platform="dgx-h100")
    return make_window(design)


def test_drop_creates_the_part_where_it_is_dropped_one_undo_step(empty):
    window = empty
    view, doc = window.view, window.document
    target = view.mapFromScene(QPointF(200, 100))
    assert drop(window, "qm9700", target)
    switches = [i for i in doc.design.items.values() if i.kind == "switch"]
    assert len(switches) == 1 and switches[0].part == "qm9700" and switches[0].parent is None
    node = window.scene.nodes[switches[0].id]
    assert node.sceneBoundingRect().contains(QPointF(200, 100)) or \
        (node.sceneBoundingRect().center() - QPointF(200, 100)).manhattanLength() <= 2 * GRID
    assert switches[0].x % GRID == 0 and switches[0].y % GRID == 0
    assert doc.undo_stack.count() == 1 and window.isWindowModified()
    QTest.keyClick(view, Qt.Key.Key_Z, CTRL)
    assert doc.design.items == {} and not window.scene.nodes
    assert not window.isWindowModified()


def test_dropping_a_server_into_a_rack_puts_it_inside_fully_populated(empty):
    window = empty
    doc = window.document
    assert drop(window, "rack-48u", window.view.mapFromScene(QPointF(0, 0)))
    rack = next(i for i in doc.design.items.values() if i.kind == "rack")
    assert drop(window, "dgx-h100", vpos(window, rack.id))
    server = next(i for i in doc.design.items.values() if i.kind == "server")
    assert server.parent == rack.id
    inside = doc.design.descendants(server.id)
    assert sum(1 for i in inside if i.kind == "accelerator") == 8
    assert sum(1 for i in inside if i.kind == "nic") >= 8
    assert len(doc.design.links) > 8  # NVSwitch fabric and GPU–NIC links came with it
    assert window.scene.nodes[server.id].parentItem() is window.scene.nodes[rack.id]
    assert doc.undo_stack.count() == 2
    doc.undo_stack.undo()
    assert [i.kind for i in doc.design.items.values()] == ["rack"] and not doc.design.links


def test_shift_drop_asks_for_a_count_and_makes_a_replicated_group(empty):
    window = empty
    asked = []
    window.view.ask_count = lambda part: asked.append(part) or 16
    assert drop(window, "qm9700", window.view.mapFromScene(QPointF(0, 0)), SHIFT)
    assert asked == ["qm9700"]
    group = next(i for i in window.document.design.items.values() if i.kind == "group")
    switch = next(i for i in window.document.design.items.values() if i.kind == "switch")
    assert group.count == 16 and switch.parent == group.id
    assert window.document.design.multiplicity(switch.id) == 16
    assert window.scene.nodes[group.id].count == 16  # the ×16 badge
    assert window.document.undo_stack.count() == 1


def test_drop_of_something_else_is_refused(empty):
    from PySide6.QtCore import QMimeData

    mime = QMimeData()
    mime.setText("hello")
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, LEFT, NO)
    QApplication.sendEvent(empty.view.viewport(), enter)
    assert not enter.isAccepted()


def test_dragging_two_selected_items_is_one_undo_step_and_snaps(server_window):
    window = server_window
    doc, view = window.document, window.view
    a, b = "node.gpu0", "node.gpu1"
    before = {i: (doc.design.items[i].x, doc.design.items[i].y) for i in (a, b)}
    QTest.mouseClick(view.viewport(), LEFT, NO, vpos(window, a))
    QTest.mouseClick(view.viewport(), LEFT, CTRL, vpos(window, b))
    assert set(window.scene.selected_ids()) == {a, b}
    count = doc.undo_stack.count()
    start = vpos(window, a)
    scale = view.transform().m11()
    end = start + QPoint(int(47 * scale), int(83 * scale))
    drag(window, start, end)
    assert doc.undo_stack.count() == count + 1
    moved = doc.design.items[a]
    assert (moved.x, moved.y) != before[a]
    assert moved.x % GRID == 0 and moved.y % GRID == 0, (moved.x, moved.y)  # the dragged one snaps
    delta = (moved.x - before[a][0], moved.y - before[a][1])
    other = doc.design.items[b]
    # The other keeps its offset (Qt moves both by a delta mapped from the view's zoom: floats).
    assert (other.x - before[b][0], other.y - before[b][1]) == pytest.approx(delta)
    # The links attached to the moved GPU follow it.
    link_id = next(iter(window.scene.links_by_item[a]))
    link_item = window.scene.link_items[link_id]
    p1, p2 = link_item.mapToScene(link_item.line().p1()), link_item.mapToScene(link_item.line().p2())
    rect = window.scene.nodes[a].sceneBoundingRect().adjusted(-1, -1, 1, 1)
    assert rect.contains(p1) or rect.contains(p2)
    doc.undo_stack.undo()
    assert {i: (doc.design.items[i].x, doc.design.items[i].y) for i in (a, b)} == before
    assert window.scene.nodes[a].pos() == QPointF(*before[a])


def test_alt_drag_bypasses_the_grid(server_window):
    window = server_window
    doc = window.document
    item_id = "node.nic3"
    QTest.mouseClick(window.view.viewport(), LEFT, NO, vpos(window, item_id))
    start = vpos(window, item_id)
    scale = window.view.transform().m11()
    drag(window, start, start + QPoint(int(13 * scale) + 1, int(7 * scale) + 1), ALT)
    item = doc.design.items[item_id]
    assert doc.undo_stack.count() == 1
    assert (item.x % GRID, item.y % GRID) != (0, 0)


def test_delete_key_removes_the_item_its_contents_and_links_then_undo(server_window):
    window = server_window
    doc = window.document
    items, links = len(doc.design.items), len(doc.design.links)
    QTest.mouseClick(window.view.viewport(), LEFT, NO, vpos(window, "node", "header"))
    assert window.scene.selected_ids() == ["node"]
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key.Key_Delete)
    assert doc.design.items == {} and doc.design.links == {}
    assert not window.scene.nodes and not window.scene.link_items
    QTest.keyClick(window.view, Qt.Key.Key_Z, CTRL)
    assert (len(doc.design.items), len(doc.design.links)) == (items, links)
    assert len(window.scene.nodes) == items and len(window.scene.link_items) == links
    QTest.keyClick(window.view, Qt.Key.Key_Z, CTRL | SHIFT)  # redo
    assert doc.design.items == {}


def test_copy_paste_and_duplicate_bring_internal_links(server_window):
    window = server_window
    doc = window.document
    items, links = len(doc.design.items), len(doc.design.links)
    window.scene.select_ids(["node"])
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key.Key_C, CTRL)
    QTest.keyClick(window.view, Qt.Key.Key_V, CTRL)
    assert len(doc.design.items) == 2 * items and len(doc.design.links) == 2 * links
    new_root = window.scene.selected_ids()[0]
    assert new_root != "node" and doc.design.items[new_root].kind == "server"
    new_ids = {new_root} | {d.id for d in doc.design.descendants(new_root)}
    assert all(l.a in new_ids and l.b in new_ids for l in doc.design.links.values() if l.a in new_ids or l.b in new_ids)
    assert doc.undo_stack.count() == 1
    window.act_duplicate.trigger()
    assert len(doc.design.items) == 3 * items and len(doc.design.links) == 3 * links
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert len(doc.design.items) == items


def test_group_and_ungroup_from_the_keyboard(server_window):
    window = server_window
    doc = window.document
    window.scene.select_ids(["node.gpu0", "node.gpu1"])
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key.Key_G, CTRL)
    group = next(i for i in doc.design.items.values() if i.kind == "group")
    assert doc.design.items["node.gpu0"].parent == group.id and group.parent == "node"
    assert window.scene.nodes["node.gpu0"].parentItem() is window.scene.nodes[group.id]
    scene_pos = window.scene.nodes["node.gpu0"].scenePos()
    assert window.scene.selected_ids() == [group.id]
    QTest.keyClick(window.view, Qt.Key.Key_G, CTRL | SHIFT)
    assert group.id not in doc.design.items and doc.design.items["node.gpu0"].parent == "node"
    assert window.scene.nodes["node.gpu0"].scenePos() == scene_pos  # stays where it was drawn
    assert doc.undo_stack.count() == 2


def test_f2_renames_in_place(server_window):
    window = server_window
    window.scene.select_ids(["node.gpu3"])
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key.Key_F2)
    editor = window.view.rename_editor
    assert editor is not None and editor.isVisible() and editor.text() == "GPU 3"
    editor.selectAll()
    QTest.keyClicks(editor, "Hopper three")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.document.design.items["node.gpu3"].name == "Hopper three"
    assert window.scene.nodes["node.gpu3"].label == "Hopper three"
    window.document.undo_stack.undo()
    assert window.document.design.items["node.gpu3"].name == "GPU 3"


def test_double_click_renames_and_escape_cancels(server_window):
    window = server_window
    QTest.mouseDClick(window.view.viewport(), LEFT, NO, vpos(window, "node.nic0"))
    editor = window.view.rename_editor
    assert editor is not None
    QTest.keyClicks(editor, "zzz")
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    assert window.document.design.items["node.nic0"].name == "NIC 0"


def test_drawing_links_chooses_asks_or_refuses(empty):
    window = empty
    doc, scene = window.document, window.scene
    for part, x in (("qm9700", -300), ("h100-sxm", 0), ("h100-sxm", 200)):
        assert drop(window, part, window.view.mapFromScene(QPointF(x, 0)))
    switch = next(i.id for i in doc.design.items.values() if i.kind == "switch")
    gpu_a, gpu_b = sorted(i.id for i in doc.design.items.values() if i.kind == "accelerator")
    # Incompatible: refused with a status-bar message, nothing added.
    drag(window, vpos(window, switch), vpos(window, gpu_a), SHIFT)
    assert doc.design.links == {}
    assert "no common medium" in window.statusBar().currentMessage()
    # Two GPUs share NVLink and PCIe: the user is asked, and the choice is used.
    asked = []
    scene.interactions.choose_medium = lambda options, what: asked.append([m for m, _ in options]) or "nvlink4"
    window.act_link_tool.setChecked(True)
    drag(window, vpos(window, gpu_a), vpos(window, gpu_b))
    assert asked and set(asked[0]) >= {"nvlink4", "pcie-gen5"}
    (link,) = doc.design.links.values()
    assert {link.a, link.b} == {gpu_a, gpu_b} and link.medium == "nvlink4"
    assert link.id in scene.link_items
    assert doc.undo_stack.count() == 4


def test_single_shared_medium_needs_no_question(server_window):
    window = server_window
    doc, scene = window.document, window.scene
    scene.interactions.choose_medium = lambda *a: pytest.fail("should not ask")
    n = len(doc.design.links)
    link_id = scene.interactions.request_link("node.sw0", "node.gpu0")  # NVSwitch: NVLink only
    assert link_id and doc.design.links[link_id].medium == "nvlink4" and len(doc.design.links) == n + 1


def test_rubber_band_with_ctrl_on_empty_space_selects(empty):
    window = empty
    for x in (0, 200):
        drop(window, "qm9700", window.view.mapFromScene(QPointF(x, 0)))
    window.scene.clearSelection()
    start = window.view.mapFromScene(QPointF(-100, -100))
    end = window.view.mapFromScene(QPointF(320, 100))
    drag(window, start, end, CTRL)
    assert len(window.scene.selected_ids()) == 2
    assert window.document.undo_stack.count() == 2  # selecting is not an edit


def test_pan_by_dragging_empty_space_and_wheel_zoom(server_window):
    window = server_window
    view = window.view
    view.resetTransform()
    h, v = view.horizontalScrollBar().value(), view.verticalScrollBar().value()
    corner = QPoint(5, 5)
    assert view.itemAt(corner) is None
    drag(window, corner, corner + QPoint(120, 90))
    assert (view.horizontalScrollBar().value(), view.verticalScrollBar().value()) == (h - 120, v - 90)
    assert window.document.undo_stack.count() == 0
    scale = view.transform().m11()
    pos = QPointF(300, 300)
    wheel = QWheelEvent(pos, view.viewport().mapToGlobal(pos), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                        NO, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), wheel)
    assert view.transform().m11() > scale * 1.2
    window.act_zoom_fit.trigger()
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(window.scene.content_rect())


def test_tooltips_show_figures(server_window):
    scene = server_window.scene
    assert "TFLOPS" in scene.tooltip_for("node.gpu0") and "GiB" in scene.tooltip_for("node.gpu0")
    link_id = next(iter(scene.links_by_item["node.gpu0"]))
    assert "GB/s per direction" in scene.tooltip_for(link_id)


def test_dragging_a_server_onto_a_rack_puts_it_inside_in_one_step(empty):
    window = empty
    doc = window.document
    assert drop(window, "rack-48u", window.view.mapFromScene(QPointF(-400, 0)))
    assert drop(window, "qm9700", window.view.mapFromScene(QPointF(200, 0)))
    rack = next(i for i in doc.design.items.values() if i.kind == "rack")
    switch = next(i for i in doc.design.items.values() if i.kind == "switch")
    QTest.mouseClick(window.view.viewport(), LEFT, NO, vpos(window, switch.id))
    steps = doc.undo_stack.count()
    drag(window, vpos(window, switch.id), vpos(window, rack.id))
    moved = doc.design.items[switch.id]
    assert moved.parent == rack.id and doc.undo_stack.count() == steps + 1
    assert window.scene.nodes[switch.id].parentItem() is window.scene.nodes[rack.id]
    doc.undo_stack.undo()
    assert doc.design.items[switch.id].parent is None
    assert window.scene.nodes[switch.id].parentItem() is None


def test_dragging_into_a_replicated_group_is_refused_with_a_reason(empty):
    window = empty
    doc = window.document
    window.view.ask_count = lambda part: 4
    assert drop(window, "rack-48u", window.view.mapFromScene(QPointF(-400, 0)), SHIFT)  # 4 × rack
    assert drop(window, "qm9700", window.view.mapFromScene(QPointF(300, 0)))
    rack = next(i for i in doc.design.items.values() if i.kind == "rack")
    switch = next(i for i in doc.design.items.values() if i.kind == "switch")
    QTest.mouseClick(window.view.viewport(), LEFT, NO, vpos(window, switch.id))
    drag(window, vpos(window, switch.id), vpos(window, rack.id))
    assert doc.design.items[switch.id].parent is None  # moved, but not into the ×4 rack
    assert "copies" in window.statusBar().currentMessage()


def test_shift_wheel_scrolls_sideways_and_esc_leaves_the_link_tool(server_window, qtbot):
    window = server_window
    view = window.view
    view.resetTransform()
    view.scale(3, 3)  # zoomed in: there is room to scroll sideways
    bar = view.horizontalScrollBar()
    bar.setValue((bar.minimum() + bar.maximum()) // 2)
    before, scale = bar.value(), view.transform().m11()
    pos = QPointF(300, 300)
    for modifiers, delta in ((Qt.KeyboardModifier.ShiftModifier, QPoint(0, -120)), (NO, QPoint(-120, 0))):
        wheel = QWheelEvent(pos, view.viewport().mapToGlobal(pos), QPoint(0, 0), delta, Qt.MouseButton.NoButton,
                            modifiers, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(view.viewport(), wheel)
    assert bar.value() == before + 240 and view.transform().m11() == scale  # scrolled, not zoomed
    # L turns the Link tool on; Esc, with no link being drawn, turns it off again.
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_L)
    assert window.act_link_tool.isChecked() and view.link_tool
    QTest.keyClick(view, Qt.Key.Key_Escape)
    assert not window.act_link_tool.isChecked() and not view.link_tool
