"""The canvas as an editor, driven as a user drives it: mouse presses, moves and releases on the
view's viewport, key presses on the focused widget, menu actions. Assertions are on the model, the
undo stack and what the window shows."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from designer.canvas import colors
from designer.canvas.items import link_line
from designer.model.layout import GRID
from designer.model.catalog import default_catalog
from designer.model.design import Design, Item, Link
from designer.topologies import generate

NO = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton


# --- gestures -----------------------------------------------------------------------------------------
def vpos(window, item_id: str, where: str = "center") -> QPoint:
    """Viewport position of an item's centre (or its header, for a container)."""
    node = window.scene.nodes[item_id]
    rect = node.mapRectToScene(node.header_rect()) if where == "header" else node.sceneBoundingRect()
    return window.view.mapFromScene(rect.center())


def move_mouse(window, to: QPoint, modifiers=NO) -> None:
    vp = window.view.viewport()
    event = QMouseEvent(QEvent.Type.MouseMove, QPointF(to), QPointF(vp.mapToGlobal(to)), Qt.MouseButton.NoButton,
                        LEFT, modifiers)
    QApplication.sendEvent(vp, event)


def drag(window, start: QPoint, end: QPoint, modifiers=NO, steps: int = 6, halfway=None) -> None:
    """Press, move in steps, release; `halfway()` runs with the button still down."""
    vp = window.view.viewport()
    QTest.mousePress(vp, LEFT, modifiers, start)
    for i in range(1, steps + 1):
        move_mouse(window, start + (end - start) * (i / steps), modifiers)
        if halfway is not None and i == steps // 2:
            halfway()
    QTest.mouseRelease(vp, LEFT, modifiers, end)


def click(window, item_id: str, modifiers=NO, where: str = "center") -> None:
    QTest.mouseClick(window.view.viewport(), LEFT, modifiers, vpos(window, item_id, where))


def drop(window, part_id: str, viewport_pos: QPoint) -> bool:
    """What a drag from the palette delivers to the canvas: enter, move, drop."""
    mime = window.parts_palette.mime_for(part_id)
    vp = window.view.viewport()
    action = Qt.DropAction.CopyAction
    QApplication.sendEvent(vp, QDragEnterEvent(viewport_pos, action, mime, LEFT, NO))
    QApplication.sendEvent(vp, QDragMoveEvent(viewport_pos, action, mime, LEFT, NO))
    event = QDropEvent(QPointF(viewport_pos), action, mime, LEFT, NO)
    QApplication.sendEvent(vp, event)
    return event.isAccepted()


def press_on_canvas(window, key, modifiers=NO) -> None:
    window.view.setFocus()
    QTest.keyClick(window.view, key, modifiers)


def inspector_caught_up(qtbot, window) -> None:
    """Let the inspector's queued refresh run (it raised KeyError on removed ids once)."""
    qtbot.waitUntil(lambda: not window.inspector._refresh_pending, timeout=5_000)


# --- designs ------------------------------------------------------------------------------------------
def two_servers() -> Design:
    """Two DGX H100 servers side by side, and an InfiniBand switch linked to a NIC of each."""
    catalog = default_catalog()
    design = generate("server", catalog, platform="dgx-h100")
    other = generate("server", catalog, platform="dgx-h100")
    for item in other.items.values():
        parent = f"b{item.parent}" if item.parent else None
        design.add_item(Item(f"b{item.id}", item.kind, item.name, item.part, parent,
                             item.x + (900 if parent is None else 0), item.y, item.count))
    for link in other.links.values():
        design.add_link(Link(f"b{link.id}", f"b{link.a}", f"b{link.b}", link.medium, link.lanes))
    design.update_item("bnode", name="Second server")
    design.add_item(Item("leaf", "switch", name="Leaf", part="qm9700", x=400, y=-400))
    design.add_link(Link("leaf--a", "leaf", "node.nic0", "ib-ndr"))
    design.add_link(Link("leaf--b", "leaf", "bnode.nic0", "ib-ndr"))
    return design


def pods(count: int = 4) -> Design:
    """A spine above a group of `count` copies of a server, each server's NICs linked to the spine."""
    catalog = default_catalog()
    server = generate("server", catalog, platform="dgx-h100")
    design = Design(name="pods")
    design.add_item(Item("spine", "switch", name="Spine", part="qm9700", x=0, y=-300))
    design.add_item(Item("pod", "group", name="Pod", count=count, x=0, y=0))
    for item in server.ordered_items():
        design.add_item(Item(item.id, item.kind, item.name, item.part, item.parent or "pod", item.x + 20, item.y + 60))
    for link in server.links.values():
        design.add_link(link)
    for nic in [i for i in server.items.values() if i.kind == "nic"][:2]:
        design.add_link(Link(f"{nic.id}--spine", nic.id, "spine", "ib-ndr"))
    return design


@pytest.fixture
def servers(make_window, qtbot):
    """At 100 % zoom, where a user works on single GPUs (zoomed out, a server is a summary card)."""
    window = make_window(two_servers())
    window.view.resetTransform()
    qtbot.waitUntil(lambda: not window.scene.jobs.holding, timeout=10_000)
    window.scene.settle_styles()
    return window


def counts(design: Design) -> tuple[int, int]:
    return len(design.items), len(design.links)


# --- selection and deletion ---------------------------------------------------------------------------
def select_server_then_gpu(window):
    click(window, "node", where="header")
    click(window, "node.gpu3", CTRL)


def select_gpu_then_server(window):
    click(window, "node.gpu3")
    click(window, "node", CTRL, where="header")


def rubber_band_around_first_server(window):
    rect = window.scene.nodes["node"].sceneBoundingRect().adjusted(-30, -30, 30, 30)
    start, end = window.view.mapFromScene(rect.topLeft()), window.view.mapFromScene(rect.bottomRight())
    drag(window, start, end, CTRL)


def select_everything(window):
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key.Key_A, CTRL)


def select_a_gpu_its_server_and_a_link(window):
    click(window, "node.gpu3")
    click(window, "node", CTRL, where="header")
    window.scene.link_items["leaf--b"].setSelected(True)  # as a Ctrl-click on it would


SELECTIONS = {
    "server then its GPU": (select_server_then_gpu, {"node"}, set()),
    "GPU then its server": (select_gpu_then_server, {"node"}, set()),
    "rubber band": (rubber_band_around_first_server, {"node"}, set()),
    "select all": (select_everything, None, None),
    "with a link": (select_a_gpu_its_server_and_a_link, {"node"}, {"leaf--b"}),
}


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_any_selection_deletes_in_one_undo_step_whatever_its_order(servers, qtbot, name):
    window = servers
    doc = window.document
    select, roots, links = SELECTIONS[name]
    before_items, before_links = dict(doc.design.items), dict(doc.design.links)
    select(window)
    inspector_caught_up(qtbot, window)
    assert window.scene.selected_ids()
    roots = roots if roots is not None else {i.id for i in before_items.values() if i.parent is None}
    gone = set(roots) | {d.id for r in roots for d in doc.design.descendants(r)}
    press_on_canvas(window, Qt.Key.Key_Delete)
    inspector_caught_up(qtbot, window)
    assert set(doc.design.items) == set(before_items) - gone
    assert not any(link.a in gone or link.b in gone for link in doc.design.links.values())
    assert not set(links or ()) & set(doc.design.links)
    assert doc.undo_stack.count() == 1
    assert set(window.scene.nodes) == set(doc.design.items)
    assert window.inspector.title.text() == "Nothing selected"
    press_on_canvas(window, Qt.Key.Key_Z, CTRL)
    qtbot.waitUntil(lambda: not window.scene.building, timeout=10_000)
    assert doc.design.items == before_items and doc.design.links == before_links
    assert set(window.scene.nodes) == set(before_items) and set(window.scene.link_items) == set(before_links)


def test_select_all_selects_items_and_links(servers):
    window = servers
    window.act_select_all.trigger()
    assert set(window.scene.selected_ids()) == set(window.document.design.items)
    assert set(window.scene.selected_link_ids()) == set(window.document.design.links)
    assert "selected" in window.inspector.title.text()


@pytest.mark.parametrize("name", ["server then its GPU", "GPU then its server", "with a link"])
def test_cut_and_paste_copy_and_duplicate_any_selection_in_one_step_each(servers, qtbot, name):
    window = servers
    doc = window.document
    original = counts(doc.design)
    server_size = 1 + len(doc.design.descendants("node"))
    inside = len([l for l in doc.design.links.values() if l.a.startswith("node.") and l.b.startswith("node.")])
    SELECTIONS[name][0](window)
    press_on_canvas(window, Qt.Key.Key_X, CTRL)
    inspector_caught_up(qtbot, window)
    assert "node" not in doc.design.items and doc.undo_stack.count() == 1
    if name == "with a link":
        assert "leaf--b" not in doc.design.links  # the selected link goes with the cut
    press_on_canvas(window, Qt.Key.Key_V, CTRL)
    assert len(doc.design.items) == original[0] and doc.undo_stack.count() == 2
    (pasted,) = window.scene.selected_ids()
    assert doc.design.items[pasted].kind == "server"
    pasted_ids = {pasted} | {d.id for d in doc.design.descendants(pasted)}
    assert len([l for l in doc.design.links.values() if l.a in pasted_ids and l.b in pasted_ids]) == inside
    press_on_canvas(window, Qt.Key.Key_C, CTRL)
    press_on_canvas(window, Qt.Key.Key_V, CTRL)
    window.act_duplicate.trigger()
    inspector_caught_up(qtbot, window)
    assert len(doc.design.items) == original[0] + 2 * server_size and doc.undo_stack.count() == 4


# --- speed-critical paths still select and move everything (figures: benchmarks/bench_gui.py) -----------
def test_select_all_then_drag_moves_everything_in_one_step(servers):
    window = servers
    doc = window.document
    before = {i.id: (i.x, i.y) for i in doc.design.items.values() if i.parent is None}
    window.act_select_all.trigger()
    start = vpos(window, "node.gpu0")
    scale = window.view.transform().m11()
    drag(window, start, start + QPoint(round(3 * GRID * scale), round(2 * GRID * scale)))
    assert doc.undo_stack.count() == 1
    after = {i: (doc.design.items[i].x, doc.design.items[i].y) for i in before}
    shifts = {(round(after[i][0] - before[i][0], 6), round(after[i][1] - before[i][1], 6)) for i in before}
    assert len(shifts) == 1 and shifts != {(0, 0)}
    assert set(window.scene.selected_link_ids()) == set(doc.design.links)
    assert_links_join_their_ends(window)


def assert_links_join_their_ends(window) -> None:
    """Every drawn link runs between its ends' outlines as they are drawn now."""
    scene = window.scene
    for link in scene.link_items.values():
        expected = link_line(scene.nodes[link.a], scene.nodes[link.b], link.parentItem())
        drawn = link.line()
        assert (drawn.p1() - expected.p1()).manhattanLength() < 0.01, link.link_id
        assert (drawn.p2() - expected.p2()).manhattanLength() < 0.01, link.link_id


# --- moving between containers --------------------------------------------------------------------------
def test_dragging_a_gpu_onto_another_server_moves_it_there_without_stretching_its_server(servers):
    window = servers
    doc = window.document
    server = window.scene.nodes["node"]
    rect_before = server.sceneBoundingRect()
    click(window, "node.gpu3")
    during: list[QRectF] = []
    drag(window, vpos(window, "node.gpu3"), vpos(window, "bnode", "header") + QPoint(0, 40),
         halfway=lambda: during.append(server.sceneBoundingRect()))
    assert during == [rect_before]  # the GPU is far outside by then; its server kept its size
    gpu = doc.design.items["node.gpu3"]
    assert gpu.parent == "bnode" and doc.undo_stack.count() == 1
    assert window.scene.nodes["node.gpu3"].parentItem() is window.scene.nodes["bnode"]
    assert "Moved 1 item into Second server" in window.statusBar().currentMessage()
    assert_links_join_their_ends(window)
    doc.undo_stack.undo()
    assert doc.design.items["node.gpu3"].parent == "node"


def test_dragging_a_switch_out_of_its_rack_to_empty_canvas_moves_it_to_the_top_level(make_window):
    design = Design(name="rack")
    design.add_item(Item("rack", "rack", name="Rack 1", part="rack-48u"))
    design.add_item(Item("tor", "switch", name="ToR", part="qm9700", parent="rack", x=20, y=40))
    window = make_window(design)
    window.view.resetTransform()
    window.view.centerOn(window.scene.nodes["rack"].sceneBoundingRect().center())
    click(window, "tor")
    rack_rect = window.scene.nodes["rack"].sceneBoundingRect()
    end = window.view.mapFromScene(rack_rect.bottomRight() + QPointF(200, 100))
    drag(window, vpos(window, "tor"), end)
    assert window.document.design.items["tor"].parent is None
    assert window.scene.nodes["tor"].parentItem() is None


def test_a_refused_move_puts_the_item_back_and_says_why(make_window):
    window = make_window(pods(4))
    doc = window.document
    gpu = "node.gpu0"
    before = doc.design.items[gpu]
    scene_before = window.scene.nodes[gpu].scenePos()
    pod_rect = window.scene.nodes["pod"].sceneBoundingRect()
    click(window, gpu)
    drag(window, vpos(window, gpu), window.view.mapFromScene(pod_rect.bottomRight() + QPointF(150, 150)))
    assert doc.design.items[gpu] == before and doc.undo_stack.count() == 0
    assert window.scene.nodes[gpu].scenePos() == scene_before
    assert_links_join_their_ends(window)
    message = window.statusBar().currentMessage()
    assert "copies" in message and "GPU 0" in message


# --- ungroup --------------------------------------------------------------------------------------------
def test_ungroup_draws_every_copy_and_keeps_the_hardware(make_window, qtbot):
    window = make_window(pods(4))
    doc = window.document
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=60_000)
    before = window.last_result
    assert before.inventory.accelerators == 32
    click(window, "pod", where="header")
    window.act_ungroup.trigger()
    assert "pod" not in doc.design.items and doc.undo_stack.count() == 1
    servers = [i for i in doc.design.items.values() if i.kind == "server"]
    assert len(servers) == 4 and len(window.scene.selected_ids()) == 4
    # Side by side, clear of each other.
    rects = [window.scene.nodes[s.id].sceneBoundingRect() for s in servers]
    assert not any(a.intersects(b) for n, a in enumerate(rects) for b in rects[n + 1:])
    qtbot.waitUntil(lambda: window.last_result is not before and not window.scheduler.busy, timeout=60_000)
    after = window.last_result
    assert after.inventory.accelerators == 32 and after.inventory.links == before.inventory.links
    assert dict(after.bom.links_by_medium) == dict(before.bom.links_by_medium)
    window.act_undo.trigger()
    assert doc.design.items["pod"].count == 4 and len([i for i in doc.design.items.values() if i.kind == "server"]) == 1


def test_ungroup_of_more_copies_than_can_be_drawn_is_refused_with_the_reason(make_window):
    window = make_window(pods(1000))
    doc = window.document
    click(window, "pod", where="header")
    window.act_ungroup.trigger()
    assert doc.design.items["pod"].count == 1000 and doc.undo_stack.count() == 0
    message = window.statusBar().currentMessage()
    assert "1,000 copies of Pod" in message and "limit" in message


# --- desktop conventions ----------------------------------------------------------------------------------
def test_escape_cancels_a_link_being_drawn_then_clears_the_selection(servers):
    window = servers
    doc = window.document
    links = dict(doc.design.links)
    window.scene.interactions.choose_medium = lambda options, what: options[0][0]  # were the link not cancelled
    vp = window.view.viewport()
    start, end = vpos(window, "node.gpu0"), vpos(window, "bnode.gpu0")
    QTest.mousePress(vp, LEFT, SHIFT, start)
    move_mouse(window, (start + end) / 2, SHIFT)
    move_mouse(window, end, SHIFT)
    QTest.keyClick(window.view, Qt.Key.Key_Escape)
    QTest.mouseRelease(vp, LEFT, SHIFT, end)
    assert doc.design.links == links and doc.undo_stack.count() == 0
    assert window.statusBar().currentMessage() == "Link cancelled"
    click(window, "node.gpu1")
    assert window.scene.selected_ids() == ["node.gpu1"]
    press_on_canvas(window, Qt.Key.Key_Escape)
    assert window.scene.selectedItems() == []


def test_arrow_keys_nudge_the_selection_one_undo_step_per_run(servers):
    window = servers
    doc = window.document
    click(window, "node.gpu1")
    click(window, "node.gpu2", CTRL)
    before = {i: (doc.design.items[i].x, doc.design.items[i].y) for i in ("node.gpu1", "node.gpu2")}
    press_on_canvas(window, Qt.Key.Key_Right)
    press_on_canvas(window, Qt.Key.Key_Right)
    press_on_canvas(window, Qt.Key.Key_Down, SHIFT)
    for item_id, (x, y) in before.items():
        assert (doc.design.items[item_id].x, doc.design.items[item_id].y) == (x + 2 * GRID, y + 5 * GRID)
        assert window.scene.nodes[item_id].pos() == QPointF(x + 2 * GRID, y + 5 * GRID)
    assert doc.undo_stack.count() == 1
    press_on_canvas(window, Qt.Key.Key_Z, CTRL)
    assert {i: (doc.design.items[i].x, doc.design.items[i].y) for i in before} == before
    # Nothing selected: the arrows scroll the view as before.
    press_on_canvas(window, Qt.Key.Key_Escape)
    press_on_canvas(window, Qt.Key.Key_Left)
    assert {i: (doc.design.items[i].x, doc.design.items[i].y) for i in before} == before


def test_delete_acts_only_when_the_canvas_has_focus(servers):
    window = servers
    doc = window.document
    items = len(doc.design.items)
    click(window, "node.gpu1")
    window.parts_palette.tree.setFocus()
    QTest.keyClick(window.parts_palette.tree, Qt.Key.Key_Delete)
    window.inspector.fields["name"].setFocus()
    QTest.keyClick(window.inspector.fields["name"], Qt.Key.Key_Delete)
    assert len(doc.design.items) == items and doc.undo_stack.count() == 0
    press_on_canvas(window, Qt.Key.Key_Delete)
    assert len(doc.design.items) == items - 1


def test_duplicate_lands_beside_the_original_clear_of_everything(servers):
    window = servers
    click(window, "node", where="header")
    window.act_duplicate.trigger()
    (copy,) = window.scene.selected_ids()
    original, new = window.scene.nodes["node"].sceneBoundingRect(), window.scene.nodes[copy].sceneBoundingRect()
    assert new.left() > original.right() and abs(new.top() - original.top()) < 2  # (the selection's pen is wider)
    others = [n.sceneBoundingRect() for i, n in window.scene.nodes.items() if n.parentItem() is None and i != copy]
    assert not any(new.intersects(rect) for rect in others)


def toolbar_layout(window) -> list:
    return [(a.objectName(), window.toolbar.widgetForAction(a).geometry()) for a in window.toolbar.actions()
            if not a.isSeparator()]


def test_the_toolbar_keeps_its_layout_while_editing(servers):
    window = servers
    layout = toolbar_layout(window)
    click(window, "node.gpu1")
    press_on_canvas(window, Qt.Key.Key_Right)
    step = "Rename a GPU to something with a very long name indeed"
    window.document.set_item("node.gpu2", text=step, name="A GPU with a very long name")
    QApplication.processEvents()
    assert toolbar_layout(window) == layout
    assert window.toolbar.widgetForAction(window.act_undo).text() == "Undo"
    assert window.act_undo.toolTip() == f"Undo {step}"


def test_new_items_take_the_next_free_name_of_their_kind(make_window):
    window = make_window(generate("rail-fat-tree", default_catalog(), nodes=64))
    before = set(window.document.design.items)
    assert drop(window, "qm9700", QPoint(40, 40))
    (new,) = [i for i in window.document.design.items.values() if i.id not in before]
    assert new.name == "Switch 1"


def test_missing_recent_files_drop_out_of_the_list(make_window, tmp_path, monkeypatch):

    window = make_window(two_servers())
    kept, gone = tmp_path / "kept.cluster.json", tmp_path / "gone.cluster.json"
    for path in (kept, gone):
        assert window.save_to(str(path))
    gone.unlink()
    window.recent_menu.aboutToShow.emit()
    shown = [a.text() for a in window.recent_menu.actions()]
    assert shown == ["kept.cluster.json"]
    # A file that disappears while listed goes when opening it fails.
    warnings = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a: warnings.append(a[2])))
    action = window.recent_menu.actions()[0]
    kept.unlink()
    action.trigger()
    assert warnings and window.recent_files() == []


def test_status_messages_name_items_by_their_label(make_window):
    design = generate("rail-fat-tree", default_catalog(), nodes=400, nodes_per_su=4, switch="qm9700",
                      platform="dgx-h100", nic="cx7-ndr", nics_per_node=2)
    window = make_window(design)
    doc = window.document
    group = "blk.spines0"
    window.scene.select_ids([group])
    window.act_ungroup.trigger()
    message = window.statusBar().currentMessage()
    matched = next(l for l in doc.design.links.values() if l.match and group in l.match)
    assert doc.undo_stack.count() == 0 and "Ungroup" in message
    assert f"'{matched.id}'" not in message
    assert doc.design.items[matched.a].label in message and doc.design.items[matched.b].label in message


def hint_pixels(window) -> int:
    """Non-background pixels in the middle of the viewport, where the empty canvas's hint is."""
    image = window.view.viewport().grab().toImage()
    background = QColor(colors.CANVAS_BACKGROUND).rgb()
    middle = image.rect().center()
    return sum(image.pixel(x, y) != background for x in range(middle.x() - 150, middle.x() + 150, 2)
               for y in range(middle.y() - 30, middle.y() + 30, 2))


def test_the_empty_canvas_says_how_to_begin(make_window, qtbot):
    window = make_window()
    window.act_new.trigger()
    qtbot.waitUntil(lambda: not window.scene.building)
    assert hint_pixels(window) > 50
    assert "palette" in window.view.EMPTY_HINT and "Open Example" in window.view.EMPTY_HINT
    window.view.resetTransform()
    window.view.centerOn(0, 0)
    assert drop(window, "qm9700", QPoint(30, 30))  # a corner, away from the hint
    assert hint_pixels(window) == 0
    window.act_undo.trigger()
    assert hint_pixels(window) > 50


def test_recent_files_of_one_name_show_the_folders_that_tell_them_apart(make_window, tmp_path):

    window = make_window(two_servers())
    paths = [tmp_path / folder / name for folder, name in (("a", "pod.cluster.json"), ("b", "pod.cluster.json"),
                                                           ("c", "x.cluster.json"))]
    for path in paths:
        path.parent.mkdir()
        assert window.save_to(str(path))
    window.recent_menu.aboutToShow.emit()
    shown = {a.text(): a.toolTip() for a in window.recent_menu.actions()}
    assert shown == {"x.cluster.json": str(paths[2]), "b/pod.cluster.json": str(paths[1]),
                     "a/pod.cluster.json": str(paths[0])}
