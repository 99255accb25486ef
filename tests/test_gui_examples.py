"""Every example opens from the gallery, evaluates and renders. (How long the UI thread is held
while it does is measured by `benchmarks/bench_gui.py`.)"""

from __future__ import annotations

import pytest
from PySide6.QtTest import QTest

from designer.io.examples import example_paths, example_summaries
from designer.model.catalog import default_catalog
from tests.helpers import window_settled
from tests.helpers.gui import choose_example

EXAMPLES = example_paths()


@pytest.fixture(scope="module")
def gallery_window(app_process):
    """One window that opens the examples one after another, as a user browsing the gallery."""
    from designer.ui.main_window import MainWindow

    window = MainWindow(default_catalog())
    window.resize(1600, 1000)
    window.show()
    assert QTest.qWaitForWindowExposed(window)
    yield window
    window.document.undo_stack.setClean()
    window.scheduler.shutdown(timeout_s=10)
    window.close()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name.split(".")[0] for p in EXAMPLES])
def test_example_opens_evaluates_and_renders(gallery_window, qtbot, path):
    """From the click that opens it to the last tab redrawn: reading the file (on a helper
    thread), building the canvas, evaluating, the results and the link overlay."""
    window = gallery_window
    evaluations = window.evaluations
    assert window.open_path(path)
    qtbot.waitUntil(lambda: window.evaluations > evaluations and window_settled(window), timeout=120_000)
    design = window.document.design
    expected = next(r for r in example_summaries() if r["path"] == str(path))
    assert window.last_result.inventory.accelerators == expected["accelerators"]
    assert window.results.result() is window.last_result
    assert len(window.scene.nodes) == len(design.items)
    assert window.windowTitle().startswith(path.name[: -len(".cluster.json")])
    # The view shows the whole design, painted (a canvas grabbed while its painting is held is black).
    visible = window.view.mapToScene(window.view.viewport().rect()).boundingRect()
    assert visible.contains(window.scene.content_rect().adjusted(20, 20, -20, -20))
    assert window.view.viewport().updatesEnabled()
    image = window.view.viewport().grab().toImage()
    samples = [image.pixelColor(x, y) for x in range(0, image.width(), 16) for y in range(0, image.height(), 16)]
    black = sum(1 for c in samples if c.red() == c.green() == c.blue() == 0) / len(samples)
    drawn = sum(1 for c in samples if c.name() != samples[0].name()) / len(samples)
    assert black < 0.05, f"{black:.0%} of the canvas is black"
    assert drawn > 0, "nothing drawn on the canvas"
    # Zoom to Fit shows text large enough to read (a summary card's, where the contents are too small).
    assert readable_labels(window), "no label on the canvas is large enough to read"


def readable_labels(window, min_px: float = 9.0) -> list[str]:
    """The texts drawn at least `min_px` tall on screen."""
    from PySide6.QtWidgets import QGraphicsSimpleTextItem

    view, out = window.view, []
    for node in window.scene.nodes.values():
        if not node.isVisible():
            continue
        for child in node.plate.childItems():
            if isinstance(child, QGraphicsSimpleTextItem) and child.isVisible() and child.text():
                if view.mapFromScene(child.mapToScene(child.boundingRect())).boundingRect().height() >= min_px:
                    out.append(child.text())
    return out


def test_open_example_menu_shows_the_gallery_and_opens_the_choice(make_window, qtbot, monkeypatch):
    from designer.ui import dialogs

    window = make_window()
    chosen = EXAMPLES[0]

    def accept(dialog):
        assert dialog.table.rowCount() == len(EXAMPLES)
        names = [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())]
        sizes = [dialog.table.item(r, 1).text() for r in range(dialog.table.rowCount())]
        summaries = [dialog.table.item(r, 2).text() for r in range(dialog.table.rowCount())]
        assert all(names) and all(s.replace(",", "").isdigit() for s in sizes) and all(summaries)
        choose_example(dialog, 0)
        return dialog.result()

    monkeypatch.setattr(dialogs.ExampleGallery, "exec", accept)
    window.act_open_example.trigger()
    qtbot.waitUntil(lambda: window.document.path is not None and str(window.document.path) == str(chosen),
                    timeout=10_000)
