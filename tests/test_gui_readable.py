"""Readable drawings (issue 11): a failed box is struck through across its label too, and the
shipped examples' links do not run over boxes they do not join."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from designer.canvas import colors
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from tests.helpers import window_settled
from tests.test_gui_failures import right_click_and_choose


def _render(scene, rect: QRectF) -> QImage:
    image = QImage(int(rect.width() * 4), int(rect.height() * 4), QImage.Format.Format_ARGB32)
    image.fill(QColor(colors.CANVAS_BACKGROUND))
    painter = QPainter(image)
    scene.render(painter, QRectF(image.rect()), rect)
    painter.end()
    return image


def _failure_pixels(image: QImage) -> int:
    """Pixels of (nearly) the failure colour."""
    red = QColor(colors.FAILED)
    count = 0
    for y in range(image.height()):
        for x in range(image.width()):
            pixel = image.pixelColor(x, y)
            if (abs(pixel.red() - red.red()) + abs(pixel.green() - red.green())
                    + abs(pixel.blue() - red.blue())) < 60:
                count += 1
    return count


def test_a_failed_box_is_struck_through_across_its_label(make_window, qtbot):
    window = make_window(load_design(resolve_design_path("nvidia-superpod-h100-4su"), default_catalog()))
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=60_000)
    window.view.resetTransform()  # 100 %: every label drawn
    qtbot.waitUntil(lambda: window_settled(window) and not window.scene.jobs.running("cards"), timeout=30_000)
    scene = window.scene
    node = scene.nodes["spines.sw"]
    title = node._title.mapRectToScene(node._title.boundingRect())
    assert _failure_pixels(_render(scene, title)) == 0

    right_click_and_choose(qtbot, window, "spines.sw", "Fail One Copy")
    assert node.failed
    struck = _render(scene, title)
    # The strike crosses the title's plate: a stroke of the failure colour, not a speck...
    assert _failure_pixels(struck) > 40
    # ...and the title still reads: most of its plate keeps the box's colour and the text its own.
    fill = QColor(colors.KIND["switch"][0])
    plain = sum(struck.pixelColor(x, y) == fill for y in range(struck.height()) for x in range(struck.width()))
    assert plain > struck.width() * struck.height() / 2

    window.act_undo.trigger()
    assert not node.failed and _failure_pixels(_render(scene, title)) == 0
