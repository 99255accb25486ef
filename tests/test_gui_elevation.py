"""View ▸ Rack Elevation driven as a user drives it: the menu action, a click on a rack on the
canvas, a drag in the front view; assertions on the model, the undo stack and what is shown."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from designer.canvas import colors
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.design import Design, Item

LEFT = Qt.MouseButton.LeftButton
NO = Qt.KeyboardModifier.NoModifier
OUT = Path("/tmp/w/elevation")


def dgx_rack(servers: int = 4) -> Design:
    """A rack drawn by hand at the top level: DGX H100s (8U, 10.2 kW with their GPUs) and a 1U
    QM9700 switch (1.72 kW) in the 42U, 40.8 kW SuperPOD rack."""
    design = Design(name="Two racks by hand")
    design.add_item(Item("rack", "rack", name="Rack A", part="rack-42u-superpod", x=0, y=0))
    for n in range(servers):
        design.add_item(Item(f"srv{n}", "server", name=f"DGX {n}", part="dgx-h100", parent="rack",
                             x=20, y=40 + 300 * n))
        for g in range(8):
            design.add_item(Item(f"srv{n}.gpu{g}", "accelerator", part="h100-sxm", parent=f"srv{n}",
                                 x=10 + 30 * g, y=30))
    design.add_item(Item("leaf", "switch", name="Leaf", part="qm9700", parent="rack", x=20, y=40 + 300 * servers))
    design.add_item(Item("spare-rack", "rack", name="Rack B", part="rack-42u", x=900, y=0))
    return design


def open_elevation(window):
    action = next(a for a in window.findChildren(type(window.act_undo)) if a.objectName() == "rack_elevation")
    view_menu = next(m for m in window.menuBar().actions() if m.text() == "&View").menu()
    assert action in view_menu.actions() and action.text() == "Rack &Elevation"
    action.trigger()
    assert window.elevation_dock.isVisible()
    return window.elevation


def click_rack(window, item_id: str) -> None:
    node = window.scene.nodes[item_id]
    header = node.mapRectToScene(node.header_rect()).center()
    QTest.mouseClick(window.view.viewport(), LEFT, NO, window.view.mapFromScene(header))


def drag_in(widget, start: QPoint, end: QPoint, steps: int = 6) -> None:
    QTest.mousePress(widget, LEFT, NO, start)
    for i in range(1, steps + 1):
        to = start + (end - start) * (i / steps)
        QApplication.sendEvent(widget, QMouseEvent(QEvent.Type.MouseMove, QPointF(to), QPointF(widget.mapToGlobal(to)),
                                                   Qt.MouseButton.NoButton, LEFT, NO))
    QTest.mouseRelease(widget, LEFT, NO, end)


def order(panel) -> list[tuple[str, int]]:
    return [(s.item_id, s.first_u) for s in panel.front.rack.slots]


def test_a_hand_drawn_rack_shows_its_u_and_power_and_a_drag_restacks_it_in_one_undo_step(make_window, qtbot,
                                                                                          tmp_path):
    window = make_window(dgx_rack())
    panel = open_elevation(window)
    click_rack(window, "spare-rack")
    qtbot.waitUntil(lambda: panel.rack_id == "spare-rack")
    assert "0U used, 42U free of 42U" in panel.summary.text()
    click_rack(window, "rack")
    qtbot.waitUntil(lambda: panel.rack_id == "rack")
    assert panel.rack_choice.currentText() == "Rack A"
    summary = panel.summary.text()
    assert "33U used, 9U free of 42U" in summary
    assert "42.5 kW of a 40.8 kW budget: 1.7 kW over" in summary and colors.ERROR in summary
    assert order(panel) == [("leaf", 1), ("srv0", 2), ("srv1", 10), ("srv2", 18), ("srv3", 26)]
    OUT.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(OUT / "window-with-elevation.png"))
    panel.grab().save(str(OUT / "elevation-hand-drawn.png"))

    # Drag DGX 3 (the top) down to the bottom of the rack.
    steps = window.document.undo_stack.count()
    front = panel.front
    start = front.slot_rect("srv3").center()
    end = QPoint(start.x(), front.slot_rect("leaf").bottom() - 2)
    drag_in(front, start, end)
    qtbot.waitUntil(lambda: order(panel)[0] == ("srv3", 1))
    assert order(panel) == [("srv3", 1), ("leaf", 9), ("srv0", 10), ("srv1", 18), ("srv2", 26)]
    design = window.document.design
    assert [design.items[i].rack_u for i in ("srv3", "leaf", "srv0", "srv1", "srv2")] == [1, 9, 10, 18, 26]
    assert window.document.undo_stack.count() == steps + 1
    assert window.document.undo_stack.undoText() == "Reorder rack Rack A"

    path = tmp_path / "racks.cluster.json"
    assert window.save_to(str(path))
    assert load_design(path).items["srv3"].rack_u == 1
    window.act_undo.trigger()
    qtbot.waitUntil(lambda: order(panel)[0] == ("leaf", 1))
    assert all(window.document.design.items[i].rack_u is None for i in ("srv3", "leaf", "srv0"))
    window.act_redo.trigger()
    assert window.open_path(path)
    qtbot.waitUntil(lambda: not window.scene.building)
    qtbot.waitUntil(lambda: panel.rack_id == "rack" and order(panel)[0] == ("srv3", 1))


def test_a_short_click_or_a_drop_in_place_changes_nothing(make_window, qtbot):
    window = make_window(dgx_rack())
    panel = open_elevation(window)
    panel.show_rack("rack")
    steps = window.document.undo_stack.count()
    front = panel.front
    QTest.mouseClick(front, LEFT, NO, front.slot_rect("srv1").center())
    start = front.slot_rect("srv1").center()
    drag_in(front, start, start + QPoint(0, 3))
    assert window.document.undo_stack.count() == steps
    assert order(panel)[2] == ("srv1", 10)
    # Esc while dragging puts the slot back.
    QTest.mousePress(front, LEFT, NO, start)
    QApplication.sendEvent(front, QMouseEvent(QEvent.Type.MouseMove, QPointF(start.x(), 5.0),
                                              QPointF(front.mapToGlobal(QPoint(start.x(), 5))),
                                              Qt.MouseButton.NoButton, LEFT, NO))
    QTest.keyClick(front, Qt.Key.Key_Escape)
    QTest.mouseRelease(front, LEFT, NO, QPoint(start.x(), 5))
    assert window.document.undo_stack.count() == steps and order(panel)[2] == ("srv1", 10)


def test_what_does_not_fit_is_red_with_the_numbers_and_follows_edits(make_window, qtbot):
    window = make_window(dgx_rack(servers=5))
    panel = open_elevation(window)
    panel.show_rack("rack")
    assert "41U used, 1U free of 42U" in panel.summary.text()
    # A sixth DGX added to the rack: the view follows the document.
    window.document.add_items([Item("srv5", "server", name="DGX 5", part="dgx-h100", parent="rack", x=20, y=2000)],
                              text="Add server")
    qtbot.waitUntil(lambda: "srv5" in [s.item_id for s in panel.front.rack.slots])
    summary = panel.summary.text()
    assert "49U needed, 7U more than the 42U rack has" in summary
    assert "4.6 kW" not in summary and colors.ERROR in summary
    assert "srv5" in [s.item_id for s in panel.front.rack.slots if not panel.front.rack.fits(s)]
    image = panel.front.grab().toImage()
    rect = panel.front.slot_rect("srv5")
    border = QColor(colors.ERROR)
    reds = sum(1 for x in range(rect.left(), rect.right()) for y in (rect.top() + 1, rect.top() + 2)
               if _near(QColor(image.pixel(x, y)), border))
    assert reds > rect.width() // 2, "the slot that does not fit is outlined in red"
    ok = panel.front.slot_rect("srv0")
    assert not any(_near(QColor(image.pixel(x, ok.top() + 1)), border) for x in range(ok.left(), ok.right()))
    OUT.mkdir(parents=True, exist_ok=True)
    panel.grab().save(str(OUT / "elevation-overflow.png"))


def test_a_template_rack_in_a_group_is_shown_once_with_its_copies(make_window, qtbot):
    window = make_window()
    assert window.open_path(resolve_design_path("nvidia-superpod-h100-4su"))
    qtbot.waitUntil(lambda: not window.scene.building, timeout=60_000)
    panel = open_elevation(window)
    qtbot.waitUntil(lambda: panel.rack_choice.count() == 1)
    assert panel.rack_choice.currentText() == "42U rack for 4 DGX H100 (40.8 kW) × 32"
    summary = panel.summary.text()
    assert "× 32" in summary and "32U used, 10U free of 42U" in summary
    assert "40.8 kW of a 40.8 kW budget, 0.0 kW to spare" in summary and colors.ERROR not in summary
    [slot] = panel.front.rack.slots
    assert (slot.copies, slot.contents) == (4, "4 × NVIDIA DGX H100")
    OUT.mkdir(parents=True, exist_ok=True)
    panel.grab().save(str(OUT / "elevation-superpod.png"))


def test_a_design_without_racks_says_how_to_get_one(make_window):
    window = make_window(Design())
    panel = open_elevation(window)
    assert panel.empty.isVisible() and "no racks" in panel.empty.text()
    assert not panel.rack_choice.isVisible()


def _near(a: QColor, b: QColor, tolerance: int = 40) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) <= tolerance
