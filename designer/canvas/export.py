"""The canvas as a picture: a PNG drawn in bands over turns of the event loop, so the window keeps
answering and the export can be cancelled; SVG and PDF as vector drawings for slides and papers.

Every export draws the design at full detail, whatever the canvas's zoom (every GPU, NIC, link and
label; no summary card: `DesignScene.force_full_detail`), with the `ExportOptions` the user chose: a
title above the drawing, a legend below it saying what the colours and line styles mean, only the
selection, and the PNG's scale.

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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QLineF, QMarginsF, QObject, QPointF, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import (QBrush, QColor, QFont, QFontMetricsF, QImage, QLinearGradient, QPageLayout, QPageSize,
                           QPainter, QPainterPath, QPdfWriter, QPen)
from PySide6.QtSvg import QSvgGenerator

from designer.canvas.items import LinkItem, NodeItem
from designer.canvas.scene import DesignScene
from designer.document.turns import later
from designer.io.outputs import check_target, move_into_place
from designer.style import colors

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


SCALES = (1.0, 2.0, 4.0)  # the PNG scales offered


@dataclass(frozen=True)
class ExportOptions:
    """What an export shows besides the drawing. The plain default (no title, no legend, the whole
    canvas at 2×) is what a caller naming only a path gets."""

    title: str = ""
    legend: bool = False
    selection_only: bool = False
    scale: float = 2.0  # PNG pixels per scene unit; SVG and PDF are drawn at 1


# The frame around the drawing, in scene units (a pixel at 1×).
TITLE_PT, LEGEND_PT = 15.0, 8.5
FRAME_PAD = 12.0
LEGEND_ROW = 20.0
LEGEND_SWATCH = 26.0
LEGEND_MIN_W = 420.0


def export_rect(scene: DesignScene, only: list | None = None) -> QRectF:
    """The part of the scene an export shows: the drawing (or the items `only`) and a margin."""
    if only is None:
        rect = scene.content_rect()
    else:
        rect = QRectF()
        for element in only:
            rect = rect.united(element.sceneBoundingRect())
    rect = rect.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
    return rect if not rect.isEmpty() else QRectF(0, 0, 200, 100)


@dataclass(frozen=True)
class LegendEntry:
    """One thing the legend explains: a line (`pen`), a box (`fill`, `border`, dashed for groups)
    or the utilization scale (`gradient`)."""

    label: str
    pen: QPen | None = None
    fill: str | None = None
    border: str | None = None
    dashed_box: bool = False
    gradient: bool = False


_KIND_NAMES = {"accelerator": "accelerator", "nic": "NIC", "switch": "switch", "cpu": "CPU",
               "server": "server", "rack": "rack", "group": "group (×N: N copies)"}
_TIER_NAMES = {"scale-up": "scale-up link", "scale-out": "scale-out link", "host": "host link"}


def legend_entries(scene: DesignScene, links: list[LinkItem], nodes: list[NodeItem]) -> list[LegendEntry]:
    """What the colours and line styles of the shown items mean: their kinds of box, their links'
    tiers (or the utilization scale, once evaluated), the bottleneck and what a what-if failed."""
    entries: list[LegendEntry] = []
    kinds = {node.kind for node in nodes}
    for kind in ("accelerator", "nic", "cpu", "switch", "server", "rack", "group"):
        if kind in kinds:
            fill, border = colors.KIND[kind]
            entries.append(LegendEntry(_KIND_NAMES[kind], fill=fill, border=border, dashed_box=kind == "group"))
    coloured = [link for link in links if link.utilization is not None]
    if coloured:
        phase = scene.overlay_phase or "busiest phase"
        entries.append(LegendEntry(f"link utilization ({phase}): 0 % – 100 %", gradient=True))
    for tier in ("scale-up", "scale-out", "host"):
        if any(link.tier == tier and link.utilization is None for link in links):
            entries.append(LegendEntry(_TIER_NAMES[tier], pen=QPen(QColor(colors.tier_color(tier)), 2.5)))
    if any(link.tier not in colors.TIER for link in links):
        entries.append(LegendEntry("other link", pen=QPen(QColor(colors.UNKNOWN_TIER), 2.5)))
    if any(link.bottleneck for link in links):
        entries.append(LegendEntry("bottleneck link", pen=QPen(QColor(colors.BOTTLENECK), 5.0)))
    if links:
        entries.append(LegendEntry("thicker: more lanes", pen=QPen(QColor(colors.DIM_TEXT), 4.0)))
    if any(link.failed for link in links) or any(node.failed for node in nodes):
        entries.append(LegendEntry("failed in the what-if (dotted: some copies)",
                                   pen=QPen(QColor(colors.FAILED), 2.5, Qt.PenStyle.DashLine)))
    return entries


def _font(points: float, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


@dataclass
class Frame:
    """Where the title, the drawing and the legend go, in scene units from the picture's top left."""

    drawing: QRectF  # the part of the scene drawn
    size: QSizeF  # the whole picture
    at: QPointF  # where the drawing's top left lands
    title: str
    legend: list[LegendEntry]
    legend_top: float
    legend_places: list[tuple[float, float, float]]  # (x, y, width) per entry
    shown: ShownPart | None = None  # a selection-only export's hidden rest, to restore


def frame_for(drawing: QRectF, title: str, legend: list[LegendEntry]) -> Frame:
    """Lay out the title above the drawing and the legend below it, wrapping the legend's entries
    into rows as wide as the picture; the picture widens for a title or legend wider than the drawing."""
    width = drawing.width()
    title_h = 0.0
    if title:
        metrics = QFontMetricsF(_font(TITLE_PT, True))
        width = max(width, metrics.horizontalAdvance(title) + 2 * FRAME_PAD)
        title_h = metrics.height() + 2 * FRAME_PAD
    places: list[tuple[float, float, float]] = []
    legend_h = 0.0
    if legend:
        width = max(width, LEGEND_MIN_W)
        metrics = QFontMetricsF(_font(LEGEND_PT))
        x, y = FRAME_PAD, FRAME_PAD
        for entry in legend:
            w = (120.0 if entry.gradient else LEGEND_SWATCH) + 6 + metrics.horizontalAdvance(entry.label) + 18
            if x + w > width - FRAME_PAD and x > FRAME_PAD:
                x, y = FRAME_PAD, y + LEGEND_ROW
            places.append((x, y, w))
            x += w
        legend_h = y + LEGEND_ROW + FRAME_PAD
    at = QPointF((width - drawing.width()) / 2, title_h)
    size = QSizeF(width, title_h + drawing.height() + legend_h)
    return Frame(drawing, size, at, title, legend, title_h + drawing.height(), places)


def paint_frame(painter: QPainter, frame: Frame) -> None:
    """The title and the legend, in scene units (the painter scaled for the picture)."""
    painter.save()
    if frame.title:
        painter.setFont(_font(TITLE_PT, True))
        painter.setPen(QColor(colors.TEXT))
        painter.drawText(QRectF(FRAME_PAD, FRAME_PAD, frame.size.width() - 2 * FRAME_PAD, frame.at.y() - FRAME_PAD),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, frame.title)
    if frame.legend:
        top = frame.legend_top
        painter.setPen(QPen(QColor(colors.LEGEND_BORDER), 1.0))
        painter.drawLine(QLineF(FRAME_PAD, top + 2, frame.size.width() - FRAME_PAD, top + 2))
        font = _font(LEGEND_PT)
        painter.setFont(font)
        text_h = QFontMetricsF(font).height()
        for entry, (x, y, _w) in zip(frame.legend, frame.legend_places):
            y += top
            mid = y + LEGEND_ROW / 2
            swatch_w = 120.0 if entry.gradient else LEGEND_SWATCH
            if entry.gradient:
                gradient = QLinearGradient(x, 0, x + swatch_w, 0)
                for stop in (0.0, 0.25, 0.5, 0.75, 1.0):
                    gradient.setColorAt(stop, QColor.fromRgbF(*colors.utilization_rgb(stop)))
                painter.fillRect(QRectF(x, mid - 4, swatch_w, 8), QBrush(gradient))
            elif entry.pen is not None:
                pen = QPen(entry.pen)
                pen.setCapStyle(Qt.PenCapStyle.FlatCap)
                painter.setPen(pen)
                painter.drawLine(QLineF(x, mid, x + swatch_w, mid))
            else:
                style = Qt.PenStyle.DashLine if entry.dashed_box else Qt.PenStyle.SolidLine
                painter.setPen(QPen(QColor(entry.border), 1.2, style))
                painter.setBrush(QColor(entry.fill))
                box = QPainterPath()
                box.addRoundedRect(QRectF(x + 3, mid - 6, swatch_w - 6, 12), 3, 3)
                painter.drawPath(box)
            painter.setPen(QColor(colors.TEXT))
            painter.drawText(QRectF(x + swatch_w + 6, mid - text_h / 2, frame.size.width(), text_h),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, entry.label)
    painter.restore()


class ShownPart:
    """While an export runs: only the chosen items drawn (selection only), the rest hidden and
    the containers around the chosen ones hollow; `restore()` puts everything back as it was.
    Nothing here is an edit: the document never hears of it."""

    def __init__(self, scene: DesignScene, item_ids: list[str], link_ids: list[str]):
        nodes, links = scene.nodes, scene.link_items
        kept: set[int] = set()
        roots = [nodes[i] for i in item_ids if i in nodes]
        stack = list(roots)
        kept_ids: set[str] = set()
        while stack:
            node = stack.pop()
            if id(node) in kept:
                continue
            kept.add(id(node))
            kept_ids.add(node.item_id)
            stack.extend(child for child in node.childItems() if isinstance(child, NodeItem))
        self.links = [links[i] for i in link_ids if i in links]
        self.links += [link for link in links.values()
                       if link.a in kept_ids and link.b in kept_ids and link.link_id not in link_ids]
        kept |= {id(link) for link in self.links}
        self.hollow: list[NodeItem] = []
        around: set[int] = set()
        for element in [*roots, *self.links]:
            parent = element.parentItem()
            while isinstance(parent, NodeItem) and id(parent) not in kept and id(parent) not in around:
                around.add(id(parent))
                self.hollow.append(parent)
                parent = parent.parentItem()
        self.hidden: list = []
        for element in [*nodes.values(), *links.values()]:
            if id(element) in kept or id(element) in around or not element.isVisible():
                continue
            parent = element.parentItem()
            if isinstance(parent, NodeItem) and id(parent) not in kept and id(parent) not in around:
                continue  # hidden with its container
            element.setVisible(False)
            self.hidden.append(element)
        for node in self.hollow:
            node.set_hollow(True)
        self.shown: list = [*(n for n in roots), *self.links]
        self.nodes = [nodes[i] for i in kept_ids]

    def restore(self) -> None:
        for node in self.hollow:
            node.set_hollow(False)
        for element in self.hidden:
            element.setVisible(True)
        self.hollow, self.hidden = [], []


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

    def __init__(self, scene: DesignScene, path: str, scale: float = 2.0, parent: QObject | None = None,
                 options: ExportOptions | None = None):
        super().__init__(parent)
        self.options = options if options is not None else ExportOptions(scale=scale)
        self.scene, self.path, self.scale = scene, str(path), self.options.scale
        self.frame: Frame | None = None  # where the title, drawing and legend went
        self._shown: ShownPart | None = None  # a selection-only export's hidden rest
        self._holding_detail = False  # whether this export holds the scene at full detail
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
        """Restyles under way (a zoom, a new result, the last export's selection coming back, the
        switch to full detail) end in their own slices first: the picture shows them done."""
        if self._cancelled:
            return
        scene = self.scene
        if scene.building or scene.restyling() or scene.jobs.running(RESTORE_JOB):
            later(self._start_when_settled, self)
            return
        if not self._holding_detail:
            # Opening summary cards selects what a selected card hid: that is not the user choosing.
            self._watch(False)
            self._holding_detail = True
            scene.force_full_detail(True)
            self._watch(True)
            if scene.restyling():
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
        chosen = scene.selection() if self.options.selection_only else None
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
        self.frame = frame = _frame_of(scene, self.options, chosen)
        self._shown = frame.shown
        rect = frame.drawing  # unselected: the selection's wider outline takes no room
        yield None
        full_w, full_h, scale = image_size(QRectF(QPointF(0, 0), frame.size), self.scale)
        width, height = max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale))
        self.image = QImage(full_w, full_h, QImage.Format.Format_ARGB32_Premultiplied)
        if self.image.isNull():
            self._end(self.failed, f"cannot make a {full_w} × {full_h} image for {self.path}")
            return
        self.image.fill(QColor(colors.CANVAS_BACKGROUND))
        extents = _Extents()
        items = scene.items()
        for first in range(0, len(items), EXTENT_STEP):
            extents.add(items[first:first + EXTENT_STEP], rect.top(), scale)
            yield None
        extents.index()
        yield from self._bands(rect, scale, extents, width, height,
                               (int(frame.at.x() * scale), min(int(frame.at.y() * scale), full_h - height)))
        if frame.title or frame.legend:
            painter = QPainter(self.image)
            painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
            painter.scale(scale, scale)
            paint_frame(painter, frame)
            painter.end()
        self._restore_shown()
        self._watch(False)
        self._select_again()
        self._encode()

    def _restore_shown(self) -> None:
        if self._shown is not None:
            self._shown.restore()
            self._shown = None

    def _bands(self, rect: QRectF, scale: float, extents: _Extents, width: int | None = None,
               height: int | None = None, at: tuple[int, int] = (0, 0)) -> Iterator[None]:
        """Draw the scene's `rect` as `width` × `height` pixels (the whole image's by default) into
        the image, with its top left at `at`, a band of rows at a time."""
        image = self.image
        width = image.width() if width is None else width
        height = image.height() if height is None else height
        left, offset = at
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
            strip = QImage(image.width(), rows, QImage.Format.Format_ARGB32_Premultiplied)
            strip.fill(background)
            painter = QPainter(strip)
            painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
            source = QRectF(rect.left(), rect.top() + top / scale, rect.width(), rows / scale)
            self.scene.render(painter, QRectF(left, 0, width, rows), source, Qt.AspectRatioMode.IgnoreAspectRatio)
            painter.end()
            first = (offset + top) * line
            pixels[first:first + rows * line] = strip.constBits()
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
        scene = self.scene
        if not unselected:
            if not scene.jobs.running(RESTORE_JOB):
                self._release_detail()
            return

        # The canvas's own level of detail comes back once the selection is back: a summary card
        # closing over a selected item keeps it selected only if it is selected by then.
        def steps() -> Iterator[None]:
            for first in range(0, len(unselected), SELECTION_STEP):
                scene.show_selected_quietly(unselected[first:first + SELECTION_STEP], True)
                yield None
            scene.selectionChanged.disconnect(chosen)
            self._release_detail()

        def chosen() -> None:
            scene.selectionChanged.disconnect(chosen)
            scene.jobs.stop(RESTORE_JOB)
            self._release_detail()

        scene.selectionChanged.connect(chosen)
        scene.jobs.start(RESTORE_JOB, steps(), slice_steps=1, hold=True)

    def _release_detail(self) -> None:
        """The canvas's own level of detail may come back (once: this export's hold ends)."""
        if self._holding_detail:
            self._holding_detail = False
            self.scene.force_full_detail(False)

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
        self._restore_shown()
        self._watch(False)
        self._select_again()
        self.done = True
        signal.emit(*args)


def export_vector(scene: DesignScene, path: str, kind: str, title: str,
                  options: ExportOptions | None = None) -> None:
    """The drawing as an SVG or PDF (`kind`), at the canvas's size at 100 %, at full detail, with
    the `options`' title (else `title` names the file only), legend and selection. Raises OSError."""
    options = options if options is not None else ExportOptions()
    scene.jobs.finish(RESTORE_JOB)  # a PNG export's selection, still coming back
    scene.force_full_detail(True)
    scene.settle_styles()
    chosen = scene.selection() if options.selection_only else None
    selected = scene.selectedItems()
    scene.show_selected_quietly(selected, False)
    temporary = None
    frame = None
    try:
        frame = _frame_of(scene, options, chosen)
        rect, size = frame.drawing, frame.size
        temporary = _temporary_beside(path, f".{kind}")
        if kind == "svg":
            device = QSvgGenerator()
            device.setFileName(temporary)
            device.setSize(size.toSize())
            device.setViewBox(QRectF(0, 0, size.width(), size.height()))
            device.setResolution(VECTOR_DPI)
            device.setTitle(options.title or title)
            device.setDescription("Drawn by Cluster Designer")
        else:
            device = QPdfWriter(temporary)
            device.setTitle(options.title or title)
            device.setCreator("Cluster Designer")
            device.setResolution(VECTOR_DPI)
            device.setPageLayout(QPageLayout(QPageSize(size * POINTS_PER_UNIT, QPageSize.Unit.Point),
                                             QPageLayout.Orientation.Portrait, QMarginsF()))
        painter = QPainter()
        if not painter.begin(device):
            raise OSError(f"cannot write {path}")
        painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        painter.fillRect(QRectF(0, 0, size.width(), size.height()), QColor(colors.CANVAS_BACKGROUND))
        scene.render(painter, QRectF(frame.at, rect.size()), rect)
        paint_frame(painter, frame)
        painter.end()
        del device  # flushes the file
        move_into_place(temporary, path)
    except BaseException:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        if frame is not None and frame.shown is not None:
            frame.shown.restore()
        scene.show_selected_quietly(selected, True)
        scene.force_full_detail(False)


def _frame_of(scene: DesignScene, options: ExportOptions, chosen: tuple[list[str], list[str]] | None) -> Frame:
    """The picture's layout for these options; with `chosen` (the selection's item and link ids),
    everything else hidden until the frame's `shown.restore()`."""
    shown = ShownPart(scene, *chosen) if chosen is not None and (chosen[0] or chosen[1]) else None
    if shown is not None and shown.shown:
        drawing = export_rect(scene, shown.shown)
        nodes, links = shown.nodes, shown.links
    else:
        drawing = export_rect(scene)
        nodes, links = list(scene.nodes.values()), list(scene.link_items.values())
    legend = legend_entries(scene, [link for link in links if link.isVisible()],
                            [node for node in nodes if node.isVisible()]) if options.legend else []
    frame = frame_for(drawing, options.title, legend)
    frame.shown = shown
    return frame


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


def render_image(scene: DesignScene, options: ExportOptions, max_width_px: int = 2400) -> QImage:
    """The canvas as an image at once (a report's picture): at full detail, unselected, with the
    options' title and legend, at the options' scale or less, so it is at most `max_width_px` wide."""
    scene.jobs.finish(RESTORE_JOB)
    scene.force_full_detail(True)
    scene.settle_styles()
    chosen = scene.selection() if options.selection_only else None
    selected = scene.selectedItems()
    scene.show_selected_quietly(selected, False)
    frame = None
    try:
        frame = _frame_of(scene, options, chosen)
        scale = min(options.scale, max_width_px / max(1.0, frame.size.width()))
        width, height, scale = image_size(QRectF(QPointF(0, 0), frame.size), scale)
        image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(colors.CANVAS_BACKGROUND))
        painter = QPainter(image)
        painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        painter.scale(scale, scale)
        scene.render(painter, QRectF(frame.at, frame.drawing.size()), frame.drawing)
        paint_frame(painter, frame)
        painter.end()
        return image
    finally:
        if frame is not None and frame.shown is not None:
            frame.shown.restore()
        scene.show_selected_quietly(selected, True)
        scene.force_full_detail(False)
