"""The main window driven through its menus, inspector and dialogs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from designer.io.exports import bom_csv, summary_csv
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate


@pytest.fixture
def fat_tree(make_window):
    design = generate("rail-fat-tree", default_catalog(), nodes=64)
    window = make_window(design)
    assert window.scheduler.wait_idle(30_000)
    return window


def test_first_evaluation_fills_results_and_status_bar(fat_tree):
    window = fat_tree
    assert window.last_result is not None
    assert window.results.result() is window.last_result
    assert window.last_result.inventory.accelerators == 64 * 8
    assert window.eval_label.text().startswith("Evaluated in")
    rows = window.results.summary_table_rows()
    assert any(r[0] == "Accelerators" for r in rows)


def test_an_edit_is_re_evaluated(fat_tree):
    window = fat_tree
    group = window.document.design.items["su"]
    n = window.evaluations
    window.document.set_item("su", count=group.count * 2)
    assert window.scheduler.wait_idle(30_000)
    assert window.evaluations > n
    assert window.last_result.inventory.accelerators == 2 * 64 * 8


def test_inspector_refuses_an_invalid_count_in_place(fat_tree):
    window = fat_tree
    doc = window.document
    window.scene.select_ids(["su"])
    field = window.inspector.fields["count"]
    steps = doc.undo_stack.count()
    for bad, reason in (("0", "at least 1"), ("-3", "at least 1"), ("lots", "whole number"), ("2000000", "limit")):
        field.setText(bad)
        field.editingFinished.emit()
        assert window.inspector.error.isVisible() and reason in window.inspector.error.text(), bad
        assert "border" in field.styleSheet()
        assert doc.design.items["su"].count == 2 and doc.undo_stack.count() == steps
    field.setText("4")
    field.editingFinished.emit()
    assert doc.design.items["su"].count == 4 and doc.undo_stack.count() == steps + 1
    assert not window.inspector.error.isVisible()
    # A switch cannot have a count: the inspector shows none; the model's rule is reported if forced.
    window.scene.select_ids(["su.leaf0"])
    QApplication.processEvents()
    assert "count" not in window.inspector.fields
    assert "only a group" in doc.validate_item("su.leaf0", count=3)


def test_inspector_shows_catalogue_figures_read_only_and_edits_a_link(fat_tree):
    window = fat_tree
    window.scene.select_ids(["su.leaf0"])
    table = window.inspector.figures
    keys = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert "Ports" in keys and "Source" in keys and "Switching bandwidth (TB/s)" in keys
    assert not table.editTriggers() & table.EditTrigger.AllEditTriggers
    link_id = next(iter(window.scene.links_by_item["su.leaf0"]))
    window.scene.select_ids([link_id])
    lanes = window.inspector.fields["lanes"]
    lanes.setText("0")
    lanes.editingFinished.emit()
    assert "lanes" in window.inspector.error.text()
    before = window.document.design.links[link_id].lanes
    lanes.setText(str(before + 1))
    lanes.editingFinished.emit()
    assert window.document.design.links[link_id].lanes == before + 1


def test_title_mark_follows_the_undo_stack_clean_state(fat_tree, tmp_path):
    window = fat_tree
    assert not window.isWindowModified()
    assert "Cluster Designer" in window.windowTitle()
    window.document.set_item("su.leaf0", name="Renamed")
    assert window.isWindowModified()
    window.act_undo.trigger()
    assert not window.isWindowModified()
    window.act_redo.trigger()
    assert window.isWindowModified()
    path = tmp_path / "saved.cluster.json"
    assert window.save_to(str(path))
    assert not window.isWindowModified() and window.windowTitle().startswith("saved[*]")
    assert load_design(path).items["su.leaf0"].name == "Renamed"


def test_save_as_menu_action_and_open_recent(fat_tree, tmp_path, monkeypatch):
    window = fat_tree
    target = tmp_path / "mine.cluster.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    window.act_save_as.trigger()
    assert target.exists() and not window.isWindowModified()
    assert str(target.resolve()) == window.recent_files()[0]
    window.recent_menu.aboutToShow.emit()  # as opening the menu does
    assert any(a.text() == "mine.cluster.json" for a in window.recent_menu.actions())


def test_failed_open_shows_the_loaders_message_and_keeps_the_design(fat_tree, tmp_path, monkeypatch):
    window = fat_tree
    bad = tmp_path / "broken.cluster.json"
    bad.write_text('{"format": "cluster-designer", "version": 99}')
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text, *a: shown.append(text)))
    items = dict(window.document.design.items)
    window.document.set_item("su.leaf0", name="Edited")
    assert window.open_path(str(bad)) is False
    assert shown and "broken.cluster.json" in shown[0] and "99" in shown[0]
    assert window.document.design.items["su.leaf0"].name == "Edited"
    assert set(window.document.design.items) == set(items)
    assert window.document.undo_stack.count() == 1 and window.isWindowModified()


def test_closing_with_unsaved_changes_asks(fat_tree, monkeypatch):
    window = fat_tree
    window.document.set_item("su.leaf0", name="Edited")
    answers = [QMessageBox.StandardButton.Cancel]
    asked = []

    def question(*args, **kwargs):
        asked.append(args[1])
        return answers[0]

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    assert not window.close() and window.isVisible() and asked
    answers[0] = QMessageBox.StandardButton.Discard
    assert window.close()


def test_export_canvas_png_is_white_and_twice_the_size(fat_tree, qtbot, tmp_path):
    window = fat_tree
    path = tmp_path / "canvas.png"
    window.scene.select_ids(["su.leaf0"])
    with qtbot.waitSignal(window.export_canvas_png(str(path)).finished, timeout=30_000) as written:
        pass
    assert written.args == [str(path)]
    image = QImage(str(path))
    rect = window.scene.content_rect().adjusted(-20, -20, 20, 20)
    assert abs(image.width() - 2 * rect.width()) <= 2 and abs(image.height() - 2 * rect.height()) <= 2
    assert image.pixelColor(0, 0) == QColor("white")
    assert image.pixelColor(image.width() - 1, image.height() - 1) == QColor("white")
    assert window.scene.selected_ids() == ["su.leaf0"]  # selection restored after export


def test_csv_and_plot_exports(fat_tree, tmp_path):
    window = fat_tree
    summary = window.export_summary_csv(str(tmp_path / "s.csv"))
    bom = window.export_bom_csv(str(tmp_path / "b.csv"))
    assert Path(summary).read_text() == summary_csv(window.last_result)
    assert Path(bom).read_text() == bom_csv(window.last_result)
    for name in window.results.plot_names():
        out = window.export_plot_png(name, str(tmp_path / f"{name}.png"))
        assert out and QImage(out).width() > 100
    assert set(window.plot_actions) == set(window.results.plot_names())


def test_lint_finding_click_selects_the_item(fat_tree):
    window = fat_tree
    window.results.findingActivated.emit("su.leaf3")
    assert window.scene.selected_ids() == ["su.leaf3"]
    assert window.inspector.item_id == "su.leaf3"


def test_dropping_a_design_file_on_the_window_opens_it(fat_tree, tmp_path, qtbot):
    window = fat_tree
    path = tmp_path / "other.cluster.json"
    save_design(generate("server", default_catalog(), platform="dgx-h100"), path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    vp = window.view.viewport()
    enter = QDragEnterEvent(QPoint(40, 40), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(vp, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(vp, QDropEvent(QPointF(40, 40), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                          Qt.KeyboardModifier.NoModifier))
    qtbot.waitUntil(lambda: window.document.path == str(path), timeout=5000)
    assert "node" in window.document.design.items and len(window.scene.nodes) == len(window.document.design.items)
    assert window.document.undo_stack.count() == 0


def test_new_and_menus_exist(fat_tree):
    window = fat_tree
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles == ["File", "Edit", "View", "Design", "Help"]
    window.act_new.trigger()
    assert window.document.design.items == {} and not window.scene.nodes
    for name in ("undo", "redo", "cut", "copy", "paste", "duplicate", "delete", "select_all", "group", "ungroup",
                 "rename", "zoom_in", "zoom_out", "zoom_fit", "export_canvas", "export_summary", "export_bom", "about"):
        assert getattr(window, f"act_{name}") is not None
    assert window.act_undo.shortcut().toString() == "Ctrl+Z"


def test_palette_search_filters_parts(fat_tree):
    palette = fat_tree.parts_palette
    palette.search.setText("h100")
    visible = palette.visible_part_ids()
    assert visible and all("h100" in (p + default_catalog()[p].name.lower()) for p in visible)
    palette.search.setText("")
    assert len(palette.visible_part_ids()) > len(visible)


def test_example_gallery_lists_examples(qtbot):
    from designer.io.examples import example_paths, example_summaries
    from designer.ui.dialogs import ExampleGallery

    rows = example_summaries(default_catalog())
    dialog = ExampleGallery(rows)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == len(rows) == len(example_paths()) > 0
    assert dialog.table.item(0, 0).text()


def test_double_click_in_the_palette_places_the_part(fat_tree):
    window = fat_tree
    palette = window.parts_palette
    item = next(palette.tree.topLevelItem(i).child(j) for i in range(palette.tree.topLevelItemCount())
                for j in range(palette.tree.topLevelItem(i).childCount())
                if palette.tree.topLevelItem(i).child(j).data(0, Qt.ItemDataRole.UserRole + 1) == "sn5600")
    before = len(window.document.design.items)
    palette.tree.itemActivated.emit(item, 0)
    assert len(window.document.design.items) == before + 1
    new = window.scene.selected_ids()[0]
    assert window.document.design.items[new].part == "sn5600"


def test_multi_selection_says_so_in_the_inspector(fat_tree):
    window = fat_tree
    window.scene.select_ids(["su.leaf0", "su.leaf1"])
    assert window.inspector.title.text() == "2 switches selected"


def test_workload_panel_choice_is_evaluated_saved_and_undoable(fat_tree, qtbot, tmp_path):
    window = fat_tree
    doc = window.document
    assert window.scheduler.wait_idle(30_000)
    panel = window.results
    panel.tabs.setCurrentWidget(panel.training_page)
    before = window.evaluations
    panel.model_combo.setCurrentText("gpt3-175b")
    assert doc.design.settings["workload"] == {"training": {"model": "gpt3-175b", "plan": "auto"}}
    assert doc.undo_stack.undoText() == "Change workload"
    qtbot.waitUntil(lambda: window.evaluations > before and window.last_result.training.model == "gpt3-175b",
                    timeout=30_000)
    path = tmp_path / "with-workload.cluster.json"
    assert window.save_to(str(path))
    from designer.io.files import load_design

    assert load_design(path).settings["workload"]["training"]["model"] == "gpt3-175b"
    doc.undo_stack.undo()
    assert "workload" not in doc.design.settings
    # Back to the engine's own choice for this design, shown in the panel.
    qtbot.waitUntil(lambda: window.last_result.training.model != "gpt3-175b", timeout=30_000)
    assert panel.model_combo.currentText() == window.last_result.training.model


def test_select_all_delete_and_undo_on_a_nested_design(fat_tree, qtbot):
    """The selection lists contents and their containers in any order; all of it goes in one step."""
    window = fat_tree
    doc = window.document
    items, links = dict(doc.design.items), dict(doc.design.links)
    window.act_select_all.trigger()
    assert len(window.scene.selected_ids()) == len(items)
    window.act_delete.trigger()
    assert doc.design.items == {} and doc.design.links == {} and doc.undo_stack.count() == 1
    qtbot.waitUntil(lambda: not window.scene.nodes, timeout=10_000)
    window.act_undo.trigger()
    assert doc.design.items == items and doc.design.links == links
    qtbot.waitUntil(lambda: len(window.scene.nodes) == len(items), timeout=10_000)
