"""Bulk editing as a user does it: select several items with Ctrl+click or a rubber band, change a
field they share in the inspector, Edit ▸ Replace Part…, Edit ▸ Wire…; each is one undo step.
Also the catalogue's figures in the inspector, named with their units."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QPushButton

from designer.model.catalog import default_catalog
from designer.model.design import Design
from designer.topologies.base import Builder

NO = Qt.KeyboardModifier.NoModifier
CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton
SERVERS = ("s0", "s1", "s2")


def three_servers_and_leaves(leaves: int = 8, grouped: bool = False) -> Design:
    """Three DGX H100 side by side (each in a group of one, if `grouped`), eight NDR leaves below."""
    design = Design(name="Three servers")
    builder = Builder(design, default_catalog())
    for k in range(len(SERVERS)):
        parent = None
        if grouped:
            parent = builder.item(f"g{k}", "group", None, None, name=f"Pod {k}", x=760 * k, y=0)
        builder.server(f"s{k}", "dgx-h100", parent, x=760 * k if parent is None else 20, y=0 if parent is None else 40)
    for k in range(leaves):
        builder.item(f"leaf{k}", "switch", "qm9700", None, name=f"Leaf {k}", x=260 * k, y=900)
    return design


# --- gestures ---------------------------------------------------------------------------------------
def _point(window, item_id: str) -> QPoint:
    node = window.scene.nodes[item_id]
    rect = node.mapRectToScene(node.header_rect()) if node.container else node.sceneBoundingRect()
    window.view.ensureVisible(rect, 20, 20)
    return window.view.mapFromScene(rect.center())


def click(window, item_id: str, modifiers=NO) -> None:
    QTest.mouseClick(window.view.viewport(), LEFT, modifiers, _point(window, item_id))


def rubber_band(window, item_ids) -> None:
    """Ctrl+drag over empty canvas around the items."""
    rect = window.scene.nodes[item_ids[0]].sceneBoundingRect()
    for item_id in item_ids[1:]:
        rect = rect.united(window.scene.nodes[item_id].sceneBoundingRect())
    rect = rect.adjusted(-30, -30, 30, 30)
    window.view.fitInView(rect.adjusted(-60, -60, 60, 60), Qt.AspectRatioMode.KeepAspectRatio)
    viewport = window.view.viewport()
    start, end = window.view.mapFromScene(rect.topLeft()), window.view.mapFromScene(rect.bottomRight())
    QTest.mousePress(viewport, LEFT, CTRL, start)
    for i in range(1, 7):
        at = start + (end - start) * (i / 6)
        move = QMouseEvent(QEvent.Type.MouseMove, QPointF(at), QPointF(viewport.mapToGlobal(at)),
                           Qt.MouseButton.NoButton, LEFT, CTRL)
        QApplication.sendEvent(viewport, move)
    QTest.mouseRelease(viewport, LEFT, CTRL, end)


def choose(qtbot, combo: QComboBox, data) -> None:
    """Open the combo's list, move to the entry and press Enter."""
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    view.setCurrentIndex(combo.model().index(combo.findData(data), 0))
    QTest.keyClick(view, Qt.Key.Key_Return)


def inspector_field(qtbot, window, kind, name: str):
    qtbot.waitUntil(lambda: not window.inspector._refresh_pending, timeout=5_000)
    return window.inspector.findChild(kind, name)


def type_into(field: QLineEdit, text: str) -> None:
    field.setFocus()
    QTest.keyClick(field, Qt.Key.Key_A, CTRL)
    QTest.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key.Key_Return)


# --- multi-selection in the inspector --------------------------------------------------------------------
def ctrl_click_each(window, item_ids) -> None:
    click(window, item_ids[0])
    for item_id in item_ids[1:]:
        click(window, item_id, CTRL)


@pytest.mark.parametrize("select", [ctrl_click_each, rubber_band])
def test_three_servers_selected_get_a_new_platform_in_one_undo_step(make_window, qtbot, select):
    window = make_window(three_servers_and_leaves())
    doc = window.document
    before = dict(doc.design.items)
    select(window, list(SERVERS))
    assert set(SERVERS) <= set(window.scene.selected_ids())
    assert not [i for i in window.scene.selected_ids() if i.startswith("leaf")]
    combo = inspector_field(qtbot, window, QComboBox, "inspector_part")
    assert combo.currentData() == "dgx-h100"  # the part all three share
    assert window.inspector.title.text() == "3 servers selected"
    choose(qtbot, combo, "hgx-h200")
    assert [doc.design.items[s].part for s in SERVERS] == ["hgx-h200"] * 3
    assert doc.undo_stack.count() == 1
    window.act_undo.trigger()
    assert [doc.design.items[s].part for s in SERVERS] == ["dgx-h100"] * 3
    assert doc.design.items == before


def test_values_that_differ_show_mixed_and_one_count_typed_sets_all_three(make_window, qtbot):
    design = three_servers_and_leaves(leaves=1, grouped=True)
    design.update_item("g1", count=4)
    window = make_window(design)
    doc = window.document
    rubber_band(window, ["g0", "g1", "g2"])
    assert {"g0", "g1", "g2"} <= set(window.scene.selected_ids())  # with their contents, which ride along
    assert window.inspector.title.text() == "3 groups selected"
    count = inspector_field(qtbot, window, QLineEdit, "inspector_count")
    assert count.text() == "" and count.placeholderText() == "mixed"
    type_into(count, "16")
    assert [doc.design.items[g].count for g in ("g0", "g1", "g2")] == [16, 16, 16]
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Set count of 3 groups to 16"
    window.act_undo.trigger()
    assert [doc.design.items[g].count for g in ("g0", "g1", "g2")] == [1, 4, 1]
    count = inspector_field(qtbot, window, QLineEdit, "inspector_count")
    assert count.placeholderText() == "mixed" and count.text() == ""


def test_a_rubber_band_over_servers_and_switches_edits_nothing_they_do_not_share(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=2))
    rubber_band(window, ["s0", "leaf0"])
    assert "s0" in window.scene.selected_ids() and "leaf0" in window.scene.selected_ids()
    qtbot.waitUntil(lambda: not window.inspector._refresh_pending, timeout=5_000)
    assert window.inspector.findChild(QComboBox, "inspector_part") is None
    assert "selected" in window.inspector.title.text()


def test_a_platform_the_accelerators_do_not_fit_is_refused_for_all_and_the_swap_offered(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=0))
    doc = window.document
    before = dict(doc.design.items)
    click(window, "s0")
    click(window, "s1", CTRL)
    choose(qtbot, inspector_field(qtbot, window, QComboBox, "inspector_part"), "mi300x-platform")
    error = window.inspector.error
    assert error.isVisible() and "cannot join the AMD Instinct MI300X 8-GPU platform's scale-up fabric" in error.text()
    assert doc.design.items == before and doc.undo_stack.count() == 0
    fix = window.inspector.findChild(QPushButton, "inspector_fix")
    assert fix.isVisible()
    QTest.mouseClick(fix, LEFT)
    design = doc.design
    assert design.items["s0"].part == design.items["s1"].part == "mi300x-platform"
    assert design.items["s2"].part == "dgx-h100"
    assert {i.part for i in design.items.values() if i.kind == "accelerator" and i.parent in ("s0", "s1")} == {"mi300x"}
    assert doc.undo_stack.count() == 1
    window.act_undo.trigger()
    assert doc.design.items == before


def test_lanes_typed_for_several_links_are_given_to_all_in_one_step(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=1))
    doc = window.document
    ids = [doc.add_link(f"s{k}.nic0", "leaf0", "ib-ndr") for k in range(3)]
    doc.set_link(ids[0], lanes=2)
    window.scene.select_ids(ids)  # as Ctrl+clicks on the three lines would
    lanes = inspector_field(qtbot, window, QLineEdit, "inspector_lanes")
    assert window.inspector.title.text() == "3 links selected"
    assert lanes.placeholderText() == "mixed" and lanes.text() == ""
    assert inspector_field(qtbot, window, QComboBox, "inspector_medium").currentData() == "ib-ndr"
    steps = doc.undo_stack.count()
    type_into(lanes, "4")
    assert [doc.design.links[i].lanes for i in ids] == [4, 4, 4]
    assert doc.undo_stack.count() == steps + 1
    window.act_undo.trigger()
    assert [doc.design.links[i].lanes for i in ids] == [2, 1, 1]


# --- Edit ▸ Replace Part… --------------------------------------------------------------------------------
def _open(window, action):
    window.findChild(type(action), action.objectName())  # the window owns it
    action.trigger()
    dialog = window.bulk_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_replace_part_everywhere_swaps_the_platform_and_its_accelerators_in_one_step(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=0))
    doc = window.document
    before = dict(doc.design.items)
    assert window.act_replace_part in window.view.actions()  # on the right-click menu too
    menu_texts = [a.text() for a in window.menuBar().actions()[1].menu().actions()]
    assert "Replace &Part…" in menu_texts and "&Wire…" in menu_texts
    dialog = _open(window, window.act_replace_part)
    assert dialog.everywhere.isChecked()  # nothing selected
    dialog.old.setCurrentIndex(dialog.old.findData("dgx-h100"))
    assert dialog.new.findData("qm9700") == -1 and dialog.new.findData("dgx-h100") == -1  # servers only, not itself
    choose(qtbot, dialog.new, "hgx-h200")
    assert dialog.with_contents.isVisible() and dialog.with_contents.isChecked()
    assert dialog.summary.text() == ("Changes 3 servers from NVIDIA DGX H100 to HGX H200 8-GPU server, and "
                                     "24 accelerators with them, as one undo step.")
    QTest.mouseClick(dialog.ok_button, LEFT)
    assert not dialog.isVisible()
    design = doc.design
    assert {design.items[s].part for s in SERVERS} == {"hgx-h200"}
    assert {i.part for i in design.items.values() if i.kind == "accelerator"} == {"h200-sxm"}
    assert doc.undo_stack.count() == 1
    window.act_undo.trigger()
    assert doc.design.items == before


def test_replace_part_in_the_selection_only_and_without_the_accelerators(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=0))
    doc = window.document
    click(window, "s1")
    dialog = _open(window, window.act_replace_part)
    assert dialog.in_selection.isChecked() and dialog.old.currentData() == "dgx-h100"
    choose(qtbot, dialog.new, "hgx-h200")
    QTest.mouseClick(dialog.with_contents, LEFT)
    assert not dialog.with_contents.isChecked()
    assert dialog.summary.text() == "Changes 1 server from NVIDIA DGX H100 to HGX H200 8-GPU server, as one undo step."
    QTest.mouseClick(dialog.ok_button, LEFT)
    design = doc.design
    assert [design.items[s].part for s in SERVERS] == ["dgx-h100", "hgx-h200", "dgx-h100"]
    assert {i.part for i in design.items.values() if i.kind == "accelerator"} == {"h100-sxm"}


def test_replace_part_that_would_break_links_is_refused_before_anything_changes(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=1))
    doc = window.document
    doc.add_link("s0.nic0", "leaf0", "ib-ndr")
    dialog = _open(window, window.act_replace_part)
    dialog.old.setCurrentIndex(dialog.old.findData("qm9700"))
    choose(qtbot, dialog.new, "sn5600")
    assert dialog.summary.text().startswith("Cannot replace: NVIDIA Spectrum-4 SN5600")
    assert "does not support InfiniBand NDR" in dialog.summary.text()
    assert not dialog.ok_button.isEnabled()
    dialog.reject()
    assert doc.design.items["leaf0"].part == "qm9700" and doc.undo_stack.count() == 1


# --- Edit ▸ Wire… ------------------------------------------------------------------------------------------
def test_wire_by_rail_links_nic_i_of_each_server_to_leaf_i_in_one_step(make_window, qtbot):
    window = make_window(three_servers_and_leaves())
    doc = window.document
    click(window, "s0")
    for item_id in ("s1", *(f"leaf{k}" for k in range(8))):
        click(window, item_id, CTRL)
    dialog = _open(window, window.act_wire)
    assert dialog.rule.currentData() == "rail" and dialog.medium.currentData() == "ib-ndr"
    assert dialog.summary.text() == "Makes 16 links, as one undo step."
    QTest.mouseClick(dialog.ok_button, LEFT)
    made = sorted((l.a, l.b, l.medium, l.lanes) for l in doc.design.links.values() if l.b.startswith("leaf"))
    assert made == sorted((f"s{s}.nic{k}", f"leaf{k}", "ib-ndr", 1) for s in (0, 1) for k in range(8))
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Wire 16 NICs to 8 switches"
    window.act_undo.trigger()
    assert not [l for l in doc.design.links.values() if l.b.startswith("leaf")]


def test_wire_every_to_every_is_refused_with_the_ports_it_needs(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=2))
    doc = window.document
    click(window, "s0")
    click(window, "leaf0", CTRL)
    click(window, "leaf1", CTRL)
    dialog = _open(window, window.act_wire)
    choose(qtbot, dialog.rule, "rail")
    assert dialog.summary.text().startswith("Wire by rail: NVIDIA DGX H100 has 8 NICs but 2 switches are selected")
    choose(qtbot, dialog.rule, "every")
    assert dialog.summary.text().startswith("Wire: NIC 0 in NVIDIA DGX H100, a NVIDIA ConnectX-7")
    assert dialog.summary.text().endswith("has 1 free port of 1; this wiring needs 2")
    assert not dialog.ok_button.isEnabled()
    choose(qtbot, dialog.rule, "round-robin")
    assert dialog.ok_button.isEnabled() and dialog.summary.text() == "Makes 8 links, as one undo step."
    n = len(doc.design.links)
    QTest.mouseClick(dialog.ok_button, LEFT)
    assert len(doc.design.links) == n + 8
    assert sorted(l.b for l in doc.design.links.values() if l.b.startswith("leaf")) == ["leaf0"] * 4 + ["leaf1"] * 4


# --- catalogue fields --------------------------------------------------------------------------------------
@pytest.mark.parametrize("item_id,shown", [
    ("s0.gpu0", ["Memory bandwidth (TB/s)", "Memory (GiB)", "Peak BF16 (TFLOPS)", "Power (W)"]),
    ("leaf0", ["Ports", "Port rate (Gb/s)", "Switching bandwidth (TB/s)", "Height (U)"]),
])
def test_the_inspector_names_catalogue_figures_with_their_units(make_window, qtbot, item_id, shown):
    window = make_window(three_servers_and_leaves(leaves=1))
    window.view.resetTransform()  # at full size, where a GPU is drawn inside its server
    click(window, item_id)
    assert window.scene.selected_ids() == [item_id]
    qtbot.waitUntil(lambda: not window.inspector._refresh_pending, timeout=5_000)
    table = window.inspector.figures
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert set(shown) <= set(names)
    assert not [n for n in names if "_" in n or " per s" in n or n != n[:1].upper() + n[1:]]


def test_a_links_medium_shows_its_lane_rate_with_the_unit(make_window, qtbot):
    window = make_window(three_servers_and_leaves(leaves=1))
    link_id = window.document.add_link("s0.nic0", "leaf0", "ib-ndr")
    window.scene.select_ids([link_id])
    qtbot.waitUntil(lambda: not window.inspector._refresh_pending, timeout=5_000)
    table = window.inspector.figures
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert "Lane rate (GB/s)" in names and "Latency (ns)" in names
