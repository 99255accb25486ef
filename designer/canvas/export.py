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

import numpy as np
from PySide6.QtCore import QMarginsF, QObject, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from designer.canvas import colors
from designer.canvas.scene import DesignScene
from designer.document.turns import later
from designer.io.outputs import check_target, move_into_place

MARGIN = 20  # scene units around the drawing
# The largest image side and area: a 20,000-item design at 2× would otherwise need gigabytes.
MAX_SIDE_PX = 16_000
MAX_PIXELS = 64_000_000
# The export runs one step per turn of the event loop. A band's height follows what the last one
# cost, to take about BAND_S. Every band pays for a pass over all the scene's items (10-15 ms on
# 20,000 items) and draws every item it crosses whole (clipped): bands are never very thin.
BAND_S = 0.025
FIRST_BAND_PX = 16
MIN_BAND_PX = 32
# Items whose vertical extent is read per step, for the count of items a band crosses.
EXTENT_STEP = 5000
# The selection is taken out of the picture, and put back, this many items and links per step.
SELECTION_STEP = 2000
JOB = "export"
RESTORE_JOB = "export-selection"
# A scene unit is a pixel at the screen's 96 dpi, so text set in points keeps its size in the
# drawing (a PDF page is 0.75 pt per scene unit).
VECTOR_DPI = 96
POINTS_PER_UNIT = 72 / VECTOR_DPI


def export_rect(scene: DesignScene) -> QRectF:
    """The part of the scene an export shows: the drawing and a margin."""
    rect = scene.content_rect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
    return rect if not rect.isEmpty() else QRectF(0, 0, 200, 100)


def image_size(rect: QRectF, scale: float) -> tuple[int, int, float]:
    """Width, height and the scale actually used (smaller for huge designs)."""
    scale = min(scale, MAX_SIDE_PX / max(rect.width(), rect.height()),
                (MAX_PIXELS / (rect.width() * rect.height())) ** 0.5)
    return max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale)), scale


def _temporary_beside(path: str, suffix: str) -> str:
    """A new temporary file in the target's folder, after the target passed `check_target` (only a
    regular file or a new name is written; raises OSError naming what stands there)."""
    target = check_target(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(handle)
    return temporary


def save_image(image: QImage, path: str | os.PathLike, kind: str = "PNG") -> None:
    """Write `image` as the one checked writer does: beside the target, renamed into place.
    Raises OSError; a failure leaves whatever was at `path` as it was."""
    temporary = _temporary_beside(os.fspath(path), f".{kind.lower()}")
    try:
        if not image.save(temporary, kind):
            raise OSError(f"cannot write {os.fspath(path)}")
        move_into_place(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class PngExport(QObject):
    """One PNG export under way. `start()` begins it; `progress(done, total)` reports image rows
    rendered; it ends with exactly one of `finished(path)`, `failed(message)` or `cancelled()`.

    Every step runs in a slice of `scene.jobs`: waiting for restyles under way to end, taking the
    selection out of the picture (quietly: for the inspector and the actions it stays as it was),
    the bands, and putting the selection back. An edit or a new selection while the bands are
    drawn cancels it: the picture would show two states of the design."""

    progress = Signal(int, int)
    finished = Signal(str)
    failed = Signal(str)
    cancelled = Signal()
    _encoded = Signal(str)  # from the encoding thread: "" or the error

    def __init__(self, scene: DesignScene, path: str, scale: float = 2.0, parent: QObject | None = None):
        super().__init__(parent)
        self.scene, self.path, self.scale = scene, str(path), scale
        self.image: QImage | None = None
        self._temporary: str | None = None  # the file being encoded, while the encoding thread runs
        self._unselected: list = []  # what the picture shows unselected, to select again afterwards
        self._cancelled = False
        self._watching = False
        self.done = False
        self._encoded.connect(self._on_encoded, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        self._watch(True)
        self._start_when_settled()

    def _start_when_settled(self) -> None:
        """Restyles under way (a zoom, a new result, the last export's selection coming back) end in
        their own slices first: the picture shows them done."""
        if self._cancelled:
            return
        scene = self.scene
        if scene.building or scene.restyling() or scene.jobs.running(RESTORE_JOB):
            later(self._start_when_settled, self)
            return
        scene.jobs.start(JOB, self._steps(), slice_steps=1)

    def _watch(self, on: bool) -> None:
        """Cancel on a change of the design or of the selection while drawing."""
        if on != self._watching:
            connect = "connect" if on else "disconnect"
            getattr(self.scene.document.changed, connect)(self.cancel)
            getattr(self.scene.selectionChanged, connect)(self._on_selection_chosen)
            self._watching = on

    def _on_selection_chosen(self) -> None:
        self._unselected = []  # the user chose another selection: it stays
        self.cancel()

    def cancel(self, *_why) -> None:
        """Stop; nothing is written (a file being encoded is deleted when the encoder ends)."""
        if self.done:
            return
        self._cancelled = True
        if self._temporary is None:
            self.scene.jobs.stop(JOB)
            self._end(self.cancelled)

    def _steps(self) -> Iterator[None]:
        scene = self.scene
        selected = scene.selectedItems()
        if selected:
            # Held: a canvas half deselected is not worth a paint.
            scene.jobs.hold_painting(JOB, True)
            for first in range(0, len(selected), SELECTION_STEP):
                chunk = selected[first:first + SELECTION_STEP]
                scene.show_selected_quietly(chunk, False)
                self._unselected += chunk
                yield None
            scene.jobs.hold_painting(JOB, False)
        rect = export_rect(scene)  # unselected: the selection's wider outline takes no room
        yield None
        width, height, scale = image_size(rect, self.scale)
        self.image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        if self.image.isNull():
            self._end(self.failed, f"cannot make a {width} × {height} image for {self.path}")
            return
        extents = _Extents()
        items = scene.items()
        for first in range(0, len(items), EXTENT_STEP):
            extents.add(items[first:first + EXTENT_STEP], rect.top(), scale)
            yield None
        extents.index()
        yield from self._bands(rect, scale, extents)
        self._watch(False)
        self._select_again()
        self._encode()

    def _bands(self, rect: QRectF, scale: float, extents: _Extents) -> Iterator[None]:
        image = self.image
        width, height = image.width(), image.height()
        band, top = FIRST_BAND_PX, 0
        background = QColor(colors.CANVAS_BACKGROUND)
        line = image.bytesPerLine()
        pixels = image.bits()
        while top < height:
            rows = min(band, height - top)
            started = time.thread_time()  # the UI thread's own work: a loaded machine makes waits longer, not bands
            # Each band is drawn on an image of its own, then copied into place: drawn on the whole
            # image, every box and link crossing the band was rasterized over its full height
            # before the clip (60 ms a band on Frontier, however thin the band).
            strip = QImage(width, rows, QImage.Format.Format_ARGB32_Premultiplied)
            strip.fill(background)
            painter = QPainter(strip)
            painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
            source = QRectF(rect.left(), rect.top() + top / scale, rect.width(), rows / scale)
            self.scene.render(painter, QRectF(0, 0, width, rows), source, Qt.AspectRatioMode.IgnoreAspectRatio)
            painter.end()
            pixels[top * line:(top + rows) * line] = strip.constBits()
            top += rows
            self.progress.emit(top, height)
            spent = time.thread_time() - started
            budget = BAND_S / max(spent, 1e-4)  # how much more this band could have done
            band = max(MIN_BAND_PX, min(4 * band, int(rows * budget)))
            # As many rows, but no more items crossed than the time allows: a dense stretch (a row
            # of racks and their links) below a sparse one took 137 ms in one band on AWS P5.
            allowed = max(1.0, extents.crossed(top - rows, top)) * min(4.0, max(1.0, budget))
            while band > MIN_BAND_PX and extents.crossed(top, top + band) > allowed:
                band = max(MIN_BAND_PX, band // 2)
            yield None

    def _select_again(self) -> None:
        """Select again what the picture showed unselected, a slice at a time (painted once, at the
        end); a selection the user makes meanwhile stays instead."""
        unselected, self._unselected = self._unselected, []
        if not unselected:
            return
        scene = self.scene

        def steps() -> Iterator[None]:
            for first in range(0, len(unselected), SELECTION_STEP):
                scene.show_selected_quietly(unselected[first:first + SELECTION_STEP], True)
                yield None
            scene.selectionChanged.disconnect(chosen)

        def chosen() -> None:
            scene.selectionChanged.disconnect(chosen)
            scene.jobs.stop(RESTORE_JOB)

        scene.selectionChanged.connect(chosen)
        scene.jobs.start(RESTORE_JOB, steps(), slice_steps=1, hold=True)

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
        # A written export leaves the selection as it was; encoding takes far longer than the slices
        # putting it back, so this runs only what a tiny picture left no time for.
        self.scene.jobs.finish(RESTORE_JOB)
        self._end(self.finished, self.path)

    def _end(self, signal, *args) -> None:
        self._watch(False)
        self._select_again()
        self.done = True
        signal.emit(*args)


def export_vector(scene: DesignScene, path: str, kind: str, title: str) -> None:
    """The drawing as an SVG or PDF (`kind`), at the canvas's size at 100 %. Raises OSError."""
    scene.settle_styles()
    scene.jobs.finish(RESTORE_JOB)  # a PNG export's selection, still coming back
    selected = scene.selectedItems()
    scene.show_selected_quietly(selected, False)
    temporary = None
    try:
        rect = export_rect(scene)
        temporary = _temporary_beside(path, f".{kind}")
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
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        scene.show_selected_quietly(selected, True)


class _Extents:
    """The image rows each item of the scene spans, to count the items a band crosses: drawing a
    band costs about as many items as it crosses, whatever its height."""

    def __init__(self) -> None:
        self._tops: list[float] = []
        self._bottoms: list[float] = []

    def add(self, items, top: float, scale: float) -> None:
        for item in items:
            box = item.sceneBoundingRect()
            self._tops.append((box.top() - top) * scale)
            self._bottoms.append((box.bottom() - top) * scale)

    def index(self) -> None:
        self.tops = np.sort(np.asarray(self._tops))
        self.bottoms = np.sort(np.asarray(self._bottoms))
        del self._tops, self._bottoms

    def crossed(self, first_row: float, end_row: float) -> int:
        """Items that reach into rows [first_row, end_row): those starting above its end, less
        those ending at or above its start."""
        return int(np.searchsorted(self.tops, end_row, "left") - np.searchsorted(self.bottoms, first_row, "right"))
