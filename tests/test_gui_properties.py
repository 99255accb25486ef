"""Design ▸ Properties… driven as a user drives it: the menu action, typing into the fields, OK;
then the title, a save and reload, one undo."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from designer.io.files import load_design
from designer.model.design import Design, Item

OUT = Path("/tmp/w/elevation")


def open_properties(window, qtbot):
    design_menu = next(m for m in window.menuBar().actions() if m.text() == "&Design").menu()
    action = next(a for a in design_menu.actions() if a.objectName() == "design_properties")
    assert action.text() == "&Properties…"
    action.trigger()
    dialog = window.properties_dialog
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def type_into(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def press_ok(qtbot, dialog) -> None:
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)


def small_design() -> Design:
    design = Design()
    design.add_item(Item("rack", "rack", part="rack-42u"))
    return design


def test_name_description_and_notes_are_typed_saved_reloaded_and_undone_in_one_step(make_window, qtbot, tmp_path):
    window = make_window(small_design())
    path = tmp_path / "hall.cluster.json"
    assert window.save_to(str(path))
    assert window.windowTitle() == "hall[*] — Cluster Designer"
    steps = window.document.undo_stack.count()

    dialog = open_properties(window, qtbot)
    assert dialog.name_edit.text() == "" and dialog.name_edit.placeholderText() == "Untitled"
    type_into(qtbot, dialog.name_edit, "Hall 1 training cluster")
    type_into(qtbot, dialog.description_edit, "Two rows of DGX H100.")
    type_into(qtbot, dialog.notes_edit, "Ask facilities about 40 kW feeds")
    qtbot.keyClick(dialog.notes_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(dialog.notes_edit, "Row C is reserved")
    OUT.mkdir(parents=True, exist_ok=True)
    dialog.grab().save(str(OUT / "properties-dialog.png"))
    press_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())

    design = window.document.design
    assert design.name == "Hall 1 training cluster"
    assert design.description == "Two rows of DGX H100."
    assert design.notes == "Ask facilities about 40 kW feeds\nRow C is reserved"
    assert window.document.undo_stack.count() == steps + 1
    assert window.document.undo_stack.undoText() == "Edit design properties"
    # The file is still named, with the design's own name beside it.
    assert window.windowTitle() == "hall[*] — Hall 1 training cluster — Cluster Designer"
    assert window.isWindowModified()

    assert window.save_to(str(path))
    again = load_design(path)
    assert (again.name, again.description, again.notes) == (
        "Hall 1 training cluster", "Two rows of DGX H100.", "Ask facilities about 40 kW feeds\nRow C is reserved")
    assert window.open_path(path)
    qtbot.waitUntil(lambda: not window.scene.building)
    assert window.document.design.notes.endswith("Row C is reserved")
    dialog = open_properties(window, qtbot)
    assert dialog.notes_edit.toPlainText() == "Ask facilities about 40 kW feeds\nRow C is reserved"
    dialog.reject()

    window.document.set_design_text(name="Renamed")  # then one undo brings back the name
    window.act_undo.trigger()
    assert window.document.design.name == "Hall 1 training cluster"


def test_one_undo_restores_all_three_fields(make_window, qtbot):
    window = make_window(small_design())
    dialog = open_properties(window, qtbot)
    type_into(qtbot, dialog.name_edit, "Pod A")
    type_into(qtbot, dialog.description_edit, "desc")
    type_into(qtbot, dialog.notes_edit, "notes")
    press_ok(qtbot, dialog)
    assert window.windowTitle() == "Pod A[*] — Cluster Designer"
    window.act_undo.trigger()
    design = window.document.design
    assert (design.name, design.description, design.notes) == ("Untitled", "", "")
    assert window.windowTitle() == "Untitled[*] — Cluster Designer"


def test_cancel_and_an_unchanged_ok_add_no_step(make_window, qtbot):
    window = make_window(small_design())
    steps = window.document.undo_stack.count()
    dialog = open_properties(window, qtbot)
    type_into(qtbot, dialog.name_edit, "Not kept")
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert window.document.design.name == "Untitled"
    dialog = open_properties(window, qtbot)
    press_ok(qtbot, dialog)
    assert window.document.undo_stack.count() == steps


def test_a_refused_description_is_shown_in_the_dialog_and_nothing_typed_is_lost(make_window, qtbot):
    window = make_window(small_design())
    dialog = open_properties(window, qtbot)
    type_into(qtbot, dialog.name_edit, "Pod B")
    dialog.description_edit.setPlainText("x" * 10_001)  # a paste of a very long text
    press_ok(qtbot, dialog)
    assert dialog.isVisible() and dialog.problem.isVisible()
    assert "description is text of at most 10,000 characters" in dialog.problem.text()
    assert dialog.name_edit.text() == "Pod B" and window.document.design.name == "Untitled"


def test_the_compare_copy_and_the_export_title_take_the_name(make_window, qtbot, tmp_path, monkeypatch):
    window = make_window(small_design())
    dialog = open_properties(window, qtbot)
    type_into(qtbot, dialog.name_edit, "Pod C")
    press_ok(qtbot, dialog)
    # The Compare window itself is tested with the compare feature; here only the copy's name counts.
    monkeypatch.setattr(window, "compare_with", lambda windows=(): windows)
    copy, [same] = window.compare_with_copy()
    qtbot.addWidget(copy)
    assert same is copy and copy.document.design.name == "Pod C (copy)"
    assert copy.windowTitle().startswith("Pod C (copy)[*]")
    svg = tmp_path / "pod.svg"
    assert window.export_canvas_vector("svg", str(svg))
    assert "<title>Pod C</title>" in svg.read_text()
    copy.document.undo_stack.setClean()
