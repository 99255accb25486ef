"""Where new and moved things land, driven as a user drives the window (issue 24): parts dropped
from the palette and pasted copies never land on a sibling; a container that grows pushes its
neighbours down or right instead of covering them, in the same undo step; Tidy Layout with a
selection places the selected items among their siblings and leaves their insides alone."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from designer.model.design import Design, Item, Link
from designer.model.layout import boxes_in_parent

NO = Qt.KeyboardModifier.NoModifier
CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
LEFT = Qt.MouseButton.LeftButton
SHOTS = Path("/tmp/w/placement")


# --- gestures -----------------------------------------------------------------------------------------
def drop(window, part_id: str, scene_pos: QPointF, modifiers=NO) -> None:
    """What a drag from the palette delivers to the canvas at a scene point: enter, move, drop
    (with Shift: a replicated group)."""
    mime = window.parts_palette.mime_for(part_id)
    viewport = window.view.viewport()
    at = window.view.mapFromScene(scene_pos)
    action = Qt.DropAction.CopyAction
    QApplication.sendEvent(viewport, QDragEnterEvent(at, action, mime, LEFT, modifiers))
    QApplication.sendEvent(viewport, QDragMoveEvent(at, action, mime, LEFT, modifiers))
    event = QDropEvent(QPointF(at), action, mime, LEFT, modifiers)
    QApplication.sendEvent(viewport, event)
    assert event.isAccepted()


def keys(window, key, modifiers=NO) -> None:
    window.view.setFocus()
    QTest.keyClick(window.view, key, modifiers)


def click_header(window, item_id: str, modifiers=NO) -> None:
    """Click the item's title, at 100 % (zoomed out, a rack is drawn as one card)."""
    window.view.resetTransform()
    window.view.centerOn(centre_of(window, item_id))
    node = window.scene.nodes[item_id]
    header = window.view.mapFromScene(node.mapRectToScene(node.header_rect()).center())
    QTest.mouseClick(window.view.viewport(), LEFT, modifiers, header)


def centre_of(window, item_id: str) -> QPointF:
    return window.scene.nodes[item_id].sceneBoundingRect().center()


def show_at_half_size(window, item_id: str) -> None:
    window.view.resetTransform()
    window.view.zoom(0.5)
    window.view.centerOn(centre_of(window, item_id))


def shot(window, name: str) -> None:
    """The window, its canvas showing everything, saved to look at."""
    window.view.zoom_to_fit()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / f"{name}.png"))


# --- what is checked ----------------------------------------------------------------------------------
def model_overlaps(design: Design) -> list[tuple[str, str]]:
    """Siblings whose boxes (positions and sizes, as the layout computes them) overlap."""
    boxes = boxes_in_parent(design)
    return [(a.id, b.id) for siblings in design.children_index().values()
            for a, b in itertools.combinations(siblings, 2) if boxes[a.id].overlaps(boxes[b.id])]


def drawn_overlaps(scene) -> list[tuple[str, str]]:
    """Siblings whose boxes on the canvas (sceneBoundingRect) intersect."""
    by_parent: dict = {}
    for node in scene.nodes.values():
        by_parent.setdefault(node.parentItem(), []).append(node)
    return [(a.item_id, b.item_id) for siblings in by_parent.values() for a, b in itertools.combinations(siblings, 2)
            if a.sceneBoundingRect().intersects(b.sceneBoundingRect())]


def no_overlap_anywhere(window) -> None:
    assert model_overlaps(window.document.design) == []
    assert drawn_overlaps(window.scene) == []


def servers_in(design: Design, rack_id: str) -> list[str]:
    return sorted(i.id for i in design.children(rack_id) if i.kind == "server")


def positions(design: Design) -> dict[str, tuple[float, float]]:
    return {i.id: (i.x, i.y) for i in design.items.values()}


# --- designs ------------------------------------------------------------------------------------------
def racks(layout: str) -> Design:
    """Two empty racks, side by side ("beside") or one above the other ("above"), and a third
    one further on, as a user lays them out by hand."""
    design = Design(name=f"racks {layout}")
    second = (300, 0) if layout == "beside" else (0, 200)
    design.add_item(Item("A", "rack", name="Rack A", part="rack-48u"))
    design.add_item(Item("B", "rack", name="Rack B", part="rack-48u", x=second[0], y=second[1]))
    design.add_item(Item("C", "rack", name="Rack C", part="rack-48u", x=600, y=400))
    return design


def piled_servers_in_a_rack() -> Design:
    """A rack holding two servers piled on each other (as an old version dropped them), each with
    four GPUs on an NVSwitch, and a second rack beside it."""
    design = Design(name="piled")
    design.add_item(Item("R", "rack", name="Rack 1", part="rack-48u"))
    for s in range(2):
        design.add_item(Item(f"s{s}", "server", name=f"Server {s}", part="dgx-h100", parent="R", x=20 + s * 30,
                             y=40 + s * 20))
        design.add_item(Item(f"s{s}.sw", "switch", part="nvswitch-gen4", parent=f"s{s}", x=15, y=15))
        for g in range(4):
            design.add_item(Item(f"s{s}.g{g}", "accelerator", part="h100-sxm", parent=f"s{s}", x=g * 10, y=g * 10))
            design.add_link(Link(f"s{s}.l{g}", f"s{s}.g{g}", f"s{s}.sw", "nvlink4", 4))
    design.add_item(Item("R2", "rack", name="Rack 2", part="rack-48u", x=260, y=40))
    return design


def insides(design: Design, item_id: str) -> dict[str, tuple[float, float]]:
    return {d.id: (d.x, d.y) for d in design.descendants(item_id)}


# --- drops --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["beside", "above"])
def test_two_servers_dropped_into_one_rack_land_apart_and_the_rack_pushes_its_neighbour(make_window, layout):
    window = make_window(racks(layout))
    doc, scene = window.document, window.scene
    show_at_half_size(window, "A")
    drop(window, "dgx-h100", centre_of(window, "A"))
    first_state = positions(doc.design)
    no_overlap_anywhere(window)
    # The same point again: the second server goes beside or under the first, not on it.
    drop(window, "dgx-h100", centre_of(window, "A"))
    design = doc.design
    servers = servers_in(design, "A")
    assert len(servers) == 2 and doc.undo_stack.count() == 2
    boxes = boxes_in_parent(design)
    assert not boxes[servers[0]].overlaps(boxes[servers[1]])
    first, second = (scene.nodes[s].sceneBoundingRect() for s in servers)
    assert not first.intersects(second)
    # Rack A grew; the rack next to it (right or below) moved out of its way, keeping its side.
    a, b = scene.nodes["A"].sceneBoundingRect(), scene.nodes["B"].sceneBoundingRect()
    assert not a.intersects(b)
    assert (b.left() > a.right()) if layout == "beside" else (b.top() > a.bottom())
    no_overlap_anywhere(window)
    shot(window, f"two-servers-in-a-rack-{layout}")
    # One Undo takes back the second server and the neighbours' moves together.
    keys(window, Qt.Key.Key_Z, CTRL)
    assert positions(doc.design) == first_state
    assert scene.nodes["B"].pos() == QPointF(*first_state["B"])


def test_a_rack_grows_down_never_up_into_the_rack_above(make_window):
    window = make_window(racks("above"))
    doc, scene = window.document, window.scene
    show_at_half_size(window, "B")
    above = scene.nodes["A"].sceneBoundingRect()
    top = scene.nodes["B"].sceneBoundingRect().top()
    for _ in range(2):
        drop(window, "dgx-h100", centre_of(window, "B"))
    assert len(servers_in(doc.design, "B")) == 2
    assert scene.nodes["A"].sceneBoundingRect() == above  # the rack above stays where it was
    assert scene.nodes["B"].sceneBoundingRect().top() == top  # and the lower one keeps its top
    no_overlap_anywhere(window)


def test_place_part_twice_into_the_rack_in_view_overlaps_nothing(make_window):
    window = make_window(racks("beside"))
    doc = window.document
    show_at_half_size(window, "A")
    window.place_part("dgx-h100")
    window.view.centerOn(centre_of(window, "A"))
    window.place_part("dgx-h100")
    assert len(servers_in(doc.design, "A")) == 2
    no_overlap_anywhere(window)


def test_switches_dropped_on_one_spot_of_a_hand_drawn_design_land_apart(make_window):
    design = Design(name="hand drawn")
    design.add_item(Item("gpu", "accelerator", name="GPU 0", part="h100-sxm", x=200, y=200))
    window = make_window(design)
    show_at_half_size(window, "gpu")
    spot = centre_of(window, "gpu")
    for _ in range(3):
        drop(window, "qm9700", spot)
    design = window.document.design
    assert len(design.items) == 4 and all(i.parent is None for i in design.items.values())
    no_overlap_anywhere(window)
    assert window.document.undo_stack.count() == 3


def test_a_part_dropped_into_a_server_in_a_rack_makes_room_at_every_level(make_window):
    window = make_window(racks("beside"))
    doc = window.document
    show_at_half_size(window, "A")
    drop(window, "dgx-h100", centre_of(window, "A"))
    (server,) = servers_in(doc.design, "A")
    before = positions(doc.design)
    window.view.resetTransform()  # 100 %: the server is drawn with its parts, not as a card
    window.view.centerOn(centre_of(window, server))
    nics = {i.id for i in doc.design.children(server) if i.kind == "nic"}
    drop(window, "cx7-ndr", centre_of(window, f"{server}.nic7"))  # onto the last NIC of the top row
    (nic,) = {i.id for i in doc.design.children(server) if i.kind == "nic"} - nics
    no_overlap_anywhere(window)
    a, b = window.scene.nodes["A"].sceneBoundingRect(), window.scene.nodes["B"].sceneBoundingRect()
    assert b.left() > a.right() and not a.intersects(b)
    moved = {i for i in before if before[i] != positions(doc.design)[i]}
    assert "B" in moved and moved <= {"B", "C"}  # the server and its rack grew; nothing else inside moved
    shot(window, "nic-dropped-into-a-server")
    window.act_undo.trigger()
    assert positions(doc.design) == before


def test_a_replicated_group_dropped_with_shift_on_a_server_lands_beside_it(make_window):
    window = make_window(racks("beside"))
    doc = window.document
    show_at_half_size(window, "A")
    drop(window, "dgx-h100", centre_of(window, "A"))
    window.view.ask_count = lambda part_id: 4  # what the user types in the count dialog
    drop(window, "dgx-h100", centre_of(window, "A"), Qt.KeyboardModifier.ShiftModifier)
    (group,) = (i for i in doc.design.children("A") if i.kind == "group")
    assert group.count == 4 and doc.undo_stack.count() == 2
    no_overlap_anywhere(window)


# --- paste --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["in a rack", "at the top level"])
def test_paste_twice_lands_clear_of_everything(make_window, where):
    window = make_window(racks("above"))
    doc = window.document
    show_at_half_size(window, "A")
    inside = where == "in a rack"
    drop(window, "dgx-h100", centre_of(window, "A") if inside else QPointF(1500, 0))  # there: empty canvas
    (server,) = (i.id for i in doc.design.items.values() if i.kind == "server")
    assert doc.design.items[server].parent == ("A" if inside else None)
    click_header(window, server)
    assert window.scene.selected_ids() == [server]
    keys(window, Qt.Key.Key_C, CTRL)
    keys(window, Qt.Key.Key_V, CTRL)
    after_first_paste = positions(doc.design)
    keys(window, Qt.Key.Key_V, CTRL)
    parent = doc.design.items[server].parent
    copies = [i for i in doc.design.children(parent) if i.kind == "server"]
    assert len(copies) == 3
    no_overlap_anywhere(window)
    if inside:
        shot(window, "pasted-twice-in-a-rack")
        # The rack grew down or right and pushed the rack below it down, in the paste's own step.
        a, b = window.scene.nodes["A"].sceneBoundingRect(), window.scene.nodes["B"].sceneBoundingRect()
        assert b.top() > a.bottom()
    keys(window, Qt.Key.Key_Z, CTRL)  # the second paste and whatever it pushed, in one step
    assert positions(doc.design) == after_first_paste


def test_duplicate_inside_a_rack_stays_clear_and_the_rack_neighbour_moves(make_window):
    window = make_window(racks("beside"))
    doc = window.document
    show_at_half_size(window, "A")
    drop(window, "dgx-h100", centre_of(window, "A"))
    (server,) = servers_in(doc.design, "A")
    before = positions(doc.design)
    click_header(window, server)
    window.act_duplicate.trigger()
    assert len(servers_in(doc.design, "A")) == 2
    no_overlap_anywhere(window)
    assert doc.design.items["B"].x > before["B"][0]  # pushed right by the wider rack
    window.act_undo.trigger()
    assert positions(doc.design) == before


# --- moves --------------------------------------------------------------------------------------------
def test_a_server_dragged_into_another_rack_lands_clear_and_makes_room(make_window):
    window = make_window(piled_servers_in_a_rack())
    doc, scene = window.document, window.scene
    window.act_tidy.trigger()  # the whole design, as before: nothing piled
    no_overlap_anywhere(window)
    show_at_half_size(window, "R")
    before = positions(doc.design)
    click_header(window, "s1")
    start = window.view.mapFromScene(scene.nodes["s1"].mapRectToScene(scene.nodes["s1"].header_rect()).center())
    end = window.view.mapFromScene(centre_of(window, "R2"))
    viewport = window.view.viewport()
    QTest.mousePress(viewport, LEFT, NO, start)
    for step in range(1, 7):
        QTest.mouseMove(viewport, start + (end - start) * step / 6)
    QTest.mouseRelease(viewport, LEFT, NO, end)
    assert doc.design.items["s1"].parent == "R2" and doc.undo_stack.count() == 2
    no_overlap_anywhere(window)
    window.act_undo.trigger()
    assert positions(doc.design) == before


# --- tidy layout --------------------------------------------------------------------------------------
def test_tidy_layout_of_a_selected_server_places_it_among_its_siblings_and_keeps_its_insides(make_window):
    window = make_window(piled_servers_in_a_rack())
    doc, scene = window.document, window.scene
    design = doc.design
    assert ("s0", "s1") in model_overlaps(design)
    show_at_half_size(window, "R")
    before = positions(design)
    inside = insides(design, "s1")
    click_header(window, "s1")
    assert scene.selected_ids() == ["s1"]
    keys(window, Qt.Key.Key_L, CTRL_SHIFT)
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Tidy layout"
    design = doc.design
    assert insides(design, "s1") == inside  # its GPUs and NVSwitch stay as they were
    assert insides(design, "s0") == insides(piled_servers_in_a_rack(), "s0")
    boxes = boxes_in_parent(design)
    assert not boxes["s0"].overlaps(boxes["s1"])
    assert not scene.nodes["s0"].sceneBoundingRect().intersects(scene.nodes["s1"].sceneBoundingRect())
    # In a row with the first server (level with it), or under it.
    assert boxes["s1"].top == boxes["s0"].top or boxes["s1"].left == boxes["s0"].left
    # Its rack grew and pushed the rack beside it; the whole step is one Undo.
    assert not scene.nodes["R"].sceneBoundingRect().intersects(scene.nodes["R2"].sceneBoundingRect())
    moved = {i for i in before if before[i] != positions(design)[i]}
    assert moved <= {"s1", "R2"} and "s1" in moved
    shot(window, "tidy-selected-server")
    keys(window, Qt.Key.Key_L, CTRL_SHIFT)  # placed already: nothing more to do
    assert doc.undo_stack.count() == 1 and "Already tidy" in window.statusBar().currentMessage()
    keys(window, Qt.Key.Key_Z, CTRL)
    assert positions(doc.design) == before


def test_tidy_layout_of_selected_top_level_items_puts_them_in_rows_among_the_others(make_window):
    design = Design(name="hand drawn")
    for n, (x, y) in enumerate([(0, 0), (40, 10), (80, 18), (400, 0)]):  # three piled up, one apart
        design.add_item(Item(f"sw{n}", "switch", name=f"Switch {n}", part="qm9700", x=x, y=y))
    window = make_window(design)
    doc = window.document
    window.view.resetTransform()
    window.view.centerOn(centre_of(window, "sw1"))
    for n, spot in enumerate([QPointF(74, 14), QPointF(136, 52)]):  # on sw1, then sw2, where no other box is
        QTest.mouseClick(window.view.viewport(), LEFT, CTRL if n else NO, window.view.mapFromScene(spot))
    assert sorted(window.scene.selected_ids()) == ["sw1", "sw2"]
    window.act_tidy.trigger()
    design = doc.design
    assert (design.items["sw0"].x, design.items["sw0"].y) == (0, 0)
    assert (design.items["sw3"].x, design.items["sw3"].y) == (400, 0)
    assert design.items["sw1"].y == design.items["sw2"].y  # one row
    no_overlap_anywhere(window)


def test_tidy_layout_with_nothing_selected_tidies_the_whole_design(make_window):
    window = make_window(piled_servers_in_a_rack())
    doc = window.document
    window.scene.clearSelection()
    window.act_tidy.trigger()
    assert doc.undo_stack.count() == 1
    assert insides(doc.design, "s0") != insides(piled_servers_in_a_rack(), "s0")  # their insides too
    no_overlap_anywhere(window)
