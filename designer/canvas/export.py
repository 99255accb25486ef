"""The canvas as a picture: a PNG drawn in bands over turns of the event loop, so the window keeps
answering and the export can be cancelled; SVG and PDF as vector drawings for slides and papers.

Qt paints a scene only on the UI thread, so the PNG is cut into horizontal bands of the image,
each rendered in a slice of `scene.jobs`, with the band height adjusted to keep every slice short.
Encoding the finished image runs on a helper thread. Every export writes a temporary file next to
the target and renames it over the target at the end: a cancelled or failed export leaves no file
behind."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QMarginsF, QObject, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from designer.canvas import colors
from designer.canvas.scene import DesignScene
from designer.io.files import move_into_place

MARGIN = 20  # scene units around the drawing
# The largest image side and area: a 20,000-item design at 2× would otherwise need gigabytes.
MAX_SIDE_PX = 16_000
MAX_PIXELS = 64_000_000
# Each slice renders bands for about this long; a band's height follows what the last one cost.
# Every band pays for a pass over all the scene's items, so bands are never very thin.
SLICE_S = 0.03
FIRST_BAND_PX = MIN_BAND_PX = 64
JOB = "export"
# A scene unit is a pixel at the screen's 96 dpi, so text set in points keeps its size in the
# drawing (a PDF page is 0.75 pt per scene unit).
VECTOR_DPI = 96
POINTS_PER_UNIT = 72 / VECTOR_DPI


def export_rect(scene: DesignScene) -> QRectF:
    """The part of the scene an export shows: the drawing and a margin."""
    # Every item lies within the top-level ones (scene.content_rect()); Qt's own pass over them
    # is several times quicker than that Python loop on a 20,000-item design.
    rect = scene.itemsBoundingRect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
    return rect if not rect.isEmpty() else QRectF(0, 0, 200, 100)


def image_size(rect: QRectF, scale: float) -> tuple[int, int, float]:
    """Width, height and the scale actually used (smaller for huge designs)."""
    scale = min(scale, MAX_SIDE_PX / max(rect.width(), rect.height()),
                (MAX_PIXELS / (rect.width() * rect.height())) ** 0.5)
    return max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale)), scale


def _temporary_beside(path: str, suffix: str) -> str:
    handle, temporary = tempfile.mkstemp(prefix=f".{Path(path).name}.", suffix=suffix, dir=Path(path).parent or ".")
    os.close(handle)
    return temporary


def _hide_selection(scene: DesignScene) -> list[str]:
    """Deselect everything for the picture, in one selection change; returns the ids to select
    again afterwards."""
    items, links = scene.selection()
    if items or links:
        scene.select_ids([])
    return items + links


def _restore_selection(scene: DesignScene, selected: list[str]) -> None:
    if selected:
        scene.select_ids(selected)


class PngExport(QObject):
    """One PNG export under way. `start()` begins it; `progress(done, total)` reports image rows
    rendered; it ends with exactly one of `finished(path)`, `failed(message)` or `cancelled()`.
    An edit or a new selection while the bands are drawn cancels it: the picture would show two
    states of the design."""

    progress = Signal(int, int)
    finished = Signal(str)
    failed = Signal(str)
    cancelled = Signal()
    _encoded = Signal(str)  # from the encoding thread: "" or the error

    def __init__(self, scene: DesignScene, path: str, scale: float = 2.0, parent: QObject | None = None):
        super().__init__(parent)
        self.scene, self.path, self.scale = scene, str(path), scale
        self.image: QImage | None = None
        self._temporary: str | None = None
        self._selected: list = []
        self._cancelled = False
        self._watching = False
        self.done = False
        self._encoded.connect(self._on_encoded, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        scene = self.scene
        scene.settle_styles()
        rect = export_rect(scene)
        width, height, scale = image_size(rect, self.scale)
        self.image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        if self.image.isNull():
            self._end(self.failed, f"cannot make a {width} × {height} image for {self.path}")
            return
        self._selected = _hide_selection(scene)
        self._watch(True)
        scene.jobs.start(JOB, self._bands(rect, scale), slice_s=SLICE_S)

    def _watch(self, on: bool) -> None:
        """Cancel on a change of the design or of the selection while drawing."""
        signals = (self.scene.document.changed, self.scene.selectionChanged)
        if on != self._watching:
            for signal in signals:
                (signal.connect if on else signal.disconnect)(self.cancel)
            self._watching = on

    def cancel(self, *_why) -> None:
        """Stop; nothing is written (a file being encoded is deleted when the encoder ends)."""
        if self.done:
            return
        self._cancelled = True
        if self.scene.jobs.running(JOB):
            self.scene.jobs.stop(JOB)
            self._end(self.cancelled)

    def _bands(self, rect: QRectF, scale: float) -> Iterator[None]:
        image = self.image
        width, height = image.width(), image.height()
        band, top = FIRST_BAND_PX, 0
        background = QColor(colors.CANVAS_BACKGROUND)
        while top < height:
            rows = min(band, height - top)
            started = time.perf_counter()
            painter = QPainter(image)
            painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
            target = QRectF(0, top, width, rows)
            painter.fillRect(target, background)  # band by band: filling 64 Mpixels at once takes 0.3 s
            source = QRectF(rect.left(), rect.top() + top / scale, rect.width(), rows / scale)
            self.scene.render(painter, target, source, Qt.AspectRatioMode.IgnoreAspectRatio)
            painter.end()
            top += rows
            self.progress.emit(top, height)
            spent = time.perf_counter() - started
            band = max(MIN_BAND_PX, min(4 * band, int(rows * SLICE_S / max(spent, 1e-4))))
            yield None
        self._watch(False)
        _restore_selection(self.scene, self._selected)
        self._selected = []
        self._encode()

    def _encode(self) -> None:
        """Write the PNG on a helper thread (a large image takes seconds to compress)."""
        try:
            self._temporary = _temporary_beside(self.path, ".png")
        except OSError as exc:
            self._end(self.failed, f"cannot write {self.path}: {exc.strerror or exc}")
            return
        image, temporary = self.image, self._temporary

        def encode() -> None:
            self._encoded.emit("" if image.save(temporary, "PNG") else f"cannot write {self.path}")

        threading.Thread(target=encode, name="export-png", daemon=True).start()

    def _on_encoded(self, error: str) -> None:
        temporary, self._temporary = self._temporary, None
        if self._cancelled or error:
            Path(temporary).unlink(missing_ok=True)
            if self._cancelled:
                self._end(self.cancelled)
            else:
                self._end(self.failed, error)
            return
        try:
            move_into_place(temporary, self.path)
        except OSError as exc:
            Path(temporary).unlink(missing_ok=True)
            self._end(self.failed, f"cannot write {self.path}: {exc.strerror or exc}")
            return
        self._end(self.finished, self.path)

    def _end(self, signal, *args) -> None:
        self._watch(False)
        _restore_selection(self.scene, self._selected)
        self._selected = []
        self.done = True
        signal.emit(*args)


def export_vector(scene: DesignScene, path: str, kind: str, title: str) -> None:
    """The drawing as an SVG or PDF (`kind`), at the canvas's size at 100 %. Raises OSError."""
    scene.settle_styles()
    rect = export_rect(scene)
    temporary = _temporary_beside(path, f".{kind}")
    selected = _hide_selection(scene)
    try:
        if kind == "svg":
            device = QSvgGenerator()
            device.setFileName(temporary)
            device.setSize(rect.size().toSize())
            device.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
            device.setResolution(VECTOR_DPI)
            device.setTitle(title)
            device.setDescription("Drawn by Cluster Designer")
        else:
            device = QPdfWriter(temporary)
            device.setTitle(title)
            device.setCreator("Cluster Designer")
            device.setResolution(VECTOR_DPI)
            device.setPageLayout(QPageLayout(QPageSize(QSizeF(rect.width(), rect.height()) * POINTS_PER_UNIT,
                                                       QPageSize.Unit.Point),
                                             QPageLayout.Orientation.Portrait, QMarginsF()))
        painter = QPainter()
        if not painter.begin(device):
            raise OSError(f"cannot write {path}")
        painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        painter.fillRect(QRectF(0, 0, rect.width(), rect.height()), QColor(colors.CANVAS_BACKGROUND))
        scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
        painter.end()
        del device  # flushes the file
        move_into_place(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        _restore_selection(scene, selected)
