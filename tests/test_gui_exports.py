"""Saving and exporting as a user does: examples stay read-only, and the canvas exports (PNG in
slices with progress and Cancel, SVG, PDF) go through the menu actions with the file dialog
answered by the test."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.canvas import colors
from designer.canvas.export import MARGIN, ExportOptions, export_rect, image_size
from designer.io.examples import default_example_path, example_paths
from designer.model.catalog import default_catalog
from designer.paths import examples_dir
from designer.topologies import generate
from designer.ui.export_dialog import ExportOptionsDialog
from tests.helpers import flat_grid, window_settled


@pytest.fixture
def dialogs(monkeypatch):
    """Answers the save dialog with `answers["save"]` and records what it was offered and every
    warning shown."""
    seen: dict = {"offered": [], "warnings": []}

    def save_name(parent, title, suggested, filter_):
        seen["offered"].append(suggested)
        return seen["save"], filter_

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text: seen["warnings"].append(text)))
    # The canvas export's options dialog answers the plain picture (no title, no legend, 2×).
    monkeypatch.setattr(ExportOptionsDialog, "ask", staticmethod(lambda *args: ExportOptions()))
    return seen


def _open_example(window, qtbot, path: Path) -> None:
    assert window.open_path_interactive(str(path))
    qtbot.waitUntil(lambda: not window.scene.building, timeout=60_000)


def _examples_unchanged():
    return {p: p.read_bytes() for p in example_paths()}


def test_ctrl_s_on_an_opened_example_asks_for_a_new_file(make_window, qtbot, dialogs, tmp_path):
    before = _examples_unchanged()
    window = make_window()
    example = default_example_path()  # the design the app opens with
    _open_example(window, qtbot, example)
    assert "(example)" in window.windowTitle()
    window.document.set_item(next(iter(window.document.design.items)), name="Renamed")
    dialogs["save"] = str(tmp_path / "mine.cluster.json")
    # Ctrl+S is a window shortcut: it reaches the action only while the window is active.
    with qtbot.waitActive(window):
        window.activateWindow()
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert _examples_unchanged() == before
    assert Path(dialogs["save"]).exists()
    # Offered under the example's own name, away from the examples folder.
    offered = Path(dialogs["offered"][0])
    assert offered.name == example.name and not offered.resolve().is_relative_to(examples_dir().resolve())
    assert window.document.path == dialogs["save"] and not window.document.is_modified()
    assert "(example)" not in window.windowTitle()
    # From now on Ctrl+S saves the user's file without asking.
    window.document.set_item(next(iter(window.document.design.items)), name="Renamed again")
    window.act_save.trigger()
    assert len(dialogs["offered"]) == 1 and "Renamed again" in Path(dialogs["save"]).read_text()


def test_save_as_into_the_examples_folder_is_refused(make_window, qtbot, dialogs):
    before = _examples_unchanged()
    window = make_window()
    _open_example(window, qtbot, example_paths()[0])
    dialogs["save"] = str(examples_dir() / "mine.cluster.json")
    window.act_save_as.trigger()
    assert dialogs["warnings"] and "read-only" in dialogs["warnings"][0]
    assert not (examples_dir() / "mine.cluster.json").exists()
    dialogs["save"] = str(example_paths()[0])  # over an example: refused as well
    window.act_save.trigger()
    assert len(dialogs["warnings"]) == 2 and _examples_unchanged() == before
    assert window.document.path == str(example_paths()[0])


@pytest.fixture
def fat_tree(make_window):
    window = make_window(generate("rail-fat-tree", default_catalog(), nodes=8))
    assert window.scheduler.wait_idle(30_000)
    return window


def test_canvas_png_export_reports_progress_and_writes_the_image(fat_tree, qtbot, dialogs, tmp_path):
    window = fat_tree
    dialogs["save"] = str(tmp_path / "canvas.png")
    window.scene.select_ids(["su.leaf0"])
    steps: list[tuple[int, int]] = []
    window.act_export_canvas.trigger()
    export = window.canvas_export
    export.progress.connect(lambda done, total: steps.append((done, total)))
    assert window.export_progress.isVisible()  # in the status bar, with Cancel
    with qtbot.waitSignal(export.finished, timeout=60_000):
        pass
    image = QImage(dialogs["save"])
    rect = window.scene.content_rect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
    assert (image.width(), image.height()) == (int(2 * rect.width()), int(2 * rect.height()))
    assert steps and steps[-1] == (image.height(), image.height())
    assert [done for done, _ in steps] == sorted(done for done, _ in steps)
    assert not window.export_progress.isVisible()
    assert window.scene.selected_ids() == ["su.leaf0"]
    assert [p.name for p in tmp_path.iterdir()] == ["canvas.png"]  # no temporary file left


def _selected(scene) -> tuple[set[str], set[str]]:
    items, links = scene.selection()
    return set(items), set(links)


def _pixels(image: QImage) -> np.ndarray:
    """Height × width × (R, G, B, A) as ints."""
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return rows[:, :image.width()].astype(int)


def _rendered_at_once(scene, scale: float = 2.0) -> QImage:
    """The canvas drawn in one go, as the export's bands together should draw it."""
    rect = export_rect(scene)
    width, height, scale = image_size(rect, scale)
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(colors.CANVAS_BACKGROUND))
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    source = QRectF(rect.left(), rect.top(), rect.width(), height / scale)  # rows of 1 / scale, as the bands'
    scene.render(painter, QRectF(0, 0, width, height), source, Qt.AspectRatioMode.IgnoreAspectRatio)
    painter.end()
    return image


def test_a_png_export_of_a_selected_canvas_draws_it_unselected_and_leaves_the_selection_alone(
        fat_tree, qtbot, dialogs, tmp_path):
    window = fat_tree
    scene = window.scene
    window.act_select_all.trigger()
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    everything = _selected(scene)
    announced: list[bool] = []
    scene.selectionChanged.connect(lambda: announced.append(True))
    dialogs["save"] = str(tmp_path / "canvas.png")
    window.act_export_canvas.trigger()
    with qtbot.waitSignal(window.canvas_export.finished, timeout=60_000):
        pass
    # For the inspector and the actions the selection never changed, and it is all there again.
    assert not announced and _selected(scene) == everything
    assert all(node.isSelected() for node in scene.nodes.values() if node.isVisible())
    exported = QImage(dialogs["save"])
    scene.select_ids([])
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    direct = _pixels(_rendered_at_once(scene))
    exported = _pixels(exported)
    # The bands make the picture of the canvas drawn at once with nothing selected (antialiased
    # edges may differ by a shade where a band cuts them), with not one pixel of the selection's colour.
    assert exported.shape == direct.shape
    assert np.abs(exported - direct).mean() < 1.0
    selection = QColor(colors.SELECTION)
    selection_rgb = np.array([selection.red(), selection.green(), selection.blue()])
    assert not (np.abs(exported[:, :, :3] - selection_rgb).max(axis=2) < 8).any()


def test_a_selection_made_during_a_png_export_cancels_it_and_stays(make_window, qtbot, dialogs, tmp_path):
    window = make_window(flat_grid(40, wrap=False))
    scene, view = window.scene, window.view
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    window.act_select_all.trigger()
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    chosen = scene.nodes["c3-5"]
    dialogs["save"] = str(tmp_path / "canvas.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    clicked: list[bool] = []

    def click_once(*_rows) -> None:  # a click between two bands
        if not clicked:
            clicked.append(True)
            at = view.mapFromScene(chosen.sceneBoundingRect().center())
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)

    export.progress.connect(click_once)
    with qtbot.waitSignal(export.cancelled, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    assert scene.selection() == (["c3-5"], [])
    assert [n for n in scene.nodes.values() if n.isSelected()] == [chosen]
    assert list(tmp_path.iterdir()) == []


def test_cancelling_a_png_export_selects_again_what_was_selected(make_window, qtbot, dialogs, tmp_path):
    window = make_window(flat_grid(40, wrap=False))
    scene = window.scene
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    window.act_select_all.trigger()
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    everything = _selected(scene)
    dialogs["save"] = str(tmp_path / "canvas.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    with qtbot.waitSignal(export.progress, timeout=30_000):
        pass
    assert not scene.selectedItems()  # the picture shows no selection
    with qtbot.waitSignal(export.cancelled, timeout=30_000):
        qtbot.mouseClick(window.export_progress.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window_settled(window), timeout=30_000)
    assert _selected(scene) == everything
    assert all(node.isSelected() for node in scene.nodes.values())


def test_cancelling_a_canvas_png_export_leaves_no_file(make_window, qtbot, dialogs, tmp_path):
    window = make_window(flat_grid(40, wrap=False))
    dialogs["save"] = str(tmp_path / "canvas.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    with qtbot.waitSignal(export.progress, timeout=30_000):
        pass
    with qtbot.waitSignal(export.cancelled, timeout=30_000):
        qtbot.mouseClick(window.export_progress.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.export_progress.isVisible())
    assert list(tmp_path.iterdir()) == []
    assert "cancelled" in window.statusBar().currentMessage()


def test_an_edit_during_a_canvas_png_export_cancels_it(make_window, qtbot, dialogs, tmp_path):
    window = make_window(flat_grid(40, wrap=False))
    dialogs["save"] = str(tmp_path / "canvas.png")
    window.act_export_canvas.trigger()
    export = window.canvas_export
    edited: list[bool] = []

    def edit_once(*_progress) -> None:  # an edit between two bands, as a key press would make
        if not edited:
            edited.append(window.document.set_item("c0-0", name="Moved on"))

    export.progress.connect(edit_once)
    with qtbot.waitSignal(export.cancelled, timeout=30_000):
        pass
    assert edited == [True] and list(tmp_path.iterdir()) == []


def test_canvas_svg_and_pdf_exports_are_vector_files(fat_tree, dialogs, tmp_path):
    window = fat_tree
    dialogs["save"] = str(tmp_path / "canvas.svg")
    window.act_export_canvas_svg.trigger()
    root = ElementTree.parse(dialogs["save"]).getroot()
    assert root.tag.endswith("svg")
    labels = {t.text.strip() for t in root.iter() if t.tag.endswith("text") and t.text}
    assert window.document.design.items["su.leaf0"].label in labels  # text, not pixels
    dialogs["save"] = str(tmp_path / "canvas.pdf")
    window.act_export_canvas_pdf.trigger()
    assert Path(dialogs["save"]).read_bytes().startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canvas.pdf", "canvas.svg"]


def test_no_export_is_written_into_the_examples_folder(fat_tree, dialogs):
    window = fat_tree
    for action, name in ((window.act_export_canvas, "x.png"), (window.act_export_canvas_svg, "x.svg"),
                         (window.act_export_summary, "x.csv")):
        dialogs["save"] = str(examples_dir() / name)
        action.trigger()
        assert not (examples_dir() / name).exists()
    assert len(dialogs["warnings"]) == 3
