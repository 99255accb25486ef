"""The canvas view: drops from the palette, zoom, keys, the legend; its mouse gestures (link drawing,
panning, rubber band, rename in place) are `gestures`, behind one handler.

Gestures:
  - drag an item: move it (snaps to a 20 px grid; hold Alt to place freely);
  - drag empty space, the middle button, or hold Space and drag anywhere: pan; Ctrl- or Shift-drag
    on empty space: rubber band;
  - Shift-drag from one item to another, or any drag with the link tool on: draw a link;
  - wheel: zoom around the cursor; F2 or double-click: rename in place;
  - Esc: cancel a link being drawn, else clear the selection; arrow keys: nudge the selection
    one grid step (Shift: five).
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QInputDialog, QLineEdit

from designer.canvas.gestures import ViewGestures
from designer.canvas.interactions import PART_MIME
from designer.canvas.items import LinkItem, NodeItem
from designer.canvas.scene import DesignScene
from designer.model.layout import GRID
from designer.style import colors


class DesignView(QGraphicsView):
    message = Signal(str)
    fileDropped = Signal(str)  # a .cluster.json dropped on the canvas
    linkToolLeft = Signal()  # Esc with the Link tool on and no link being drawn

    def __init__(self, scene: DesignScene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        # One dirty rectangle, grown as items change: the smart and minimal modes keep a region of
        # every changed item, and merging thousands of rectangles (a restyle of every link) into
        # it costs far more than the paint.
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.NoDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)
        self.setAcceptDrops(True)
        self.viewport().setAcceptDrops(True)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.link_tool = False
        self.space_held = False  # Space down: a left drag pans, even over an item
        self.gestures = ViewGestures(self)
        self.ask_count = self._ask_count  # tests replace it
        scene.interactions.choose_medium = self._choose_medium
        scene.message.connect(self.message)
        self._showed_empty = not scene.design.items
        scene.document.changed.connect(self._on_design_changed)
        scene.built.connect(self.viewport().update)

    @property
    def design_scene(self) -> DesignScene:
        return cast(DesignScene, self.scene())  # the scene it was made with (None while torn down)

    # --- zoom ----------------------------------------------------------------------------------------
    def zoom(self, factor: float) -> None:
        current = self.transform().m11()
        factor = max(0.02 / current, min(8.0 / current, factor))
        self.scale(factor, factor)
        self._sync_detail()

    def _sync_detail(self) -> None:
        """Hide text when it would be too small to read (and costly to draw 20,000 times)."""
        detailed = self.transform().m11() >= 0.4
        self.design_scene.set_detail(detailed)
        self.design_scene.set_scale(self.transform().m11())
        # Zoomed out, antialiasing thousands of hairlines costs more than it shows.
        self.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)

    def resetTransform(self) -> None:
        super().resetTransform()
        self._sync_detail()

    def setTransform(self, *args, **kwargs) -> None:  # keep detail in sync
        super().setTransform(*args, **kwargs)
        self._sync_detail()

    def zoom_to_fit(self) -> None:
        rect = self.design_scene.content_rect()
        if rect.isEmpty():
            rect = QRectF(-200, -150, 400, 300)
        self.fitInView(rect.adjusted(-30, -30, 30, 30), Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.5:
            self.resetTransform()
            self.scale(1.5, 1.5)
            self.centerOn(rect.center())
        self._sync_detail()

    def wheelEvent(self, event) -> None:
        """The wheel zooms about the pointer; Shift+wheel (or a sideways wheel or swipe) scrolls
        sideways, as in other editors."""
        across, delta = event.angleDelta().x(), event.angleDelta().y()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier or (across and not delta):
            bar = self.horizontalScrollBar()
            bar.setValue(bar.value() - (across or delta))
        elif delta:
            self.zoom(1.0015 ** delta)
        event.accept()

    # --- mouse ---------------------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        self.gestures.press(event)

    def mouseMoveEvent(self, event) -> None:
        self.gestures.move(event)

    def mouseReleaseEvent(self, event) -> None:
        self.gestures.release(event)

    def mouseDoubleClickEvent(self, event) -> None:
        node = self.node_of(self.item_at(event.position().toPoint()))
        if node is not None:
            self.start_rename(node.item_id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event) -> None:
        """Right-click: the edit actions for the item under the cursor (selecting it first)."""
        from PySide6.QtWidgets import QMenu

        item = self.item_at(event.pos())
        target = self.node_of(item) or (item if isinstance(item, LinkItem) else None)
        if target is not None and not target.isSelected():
            self.scene().clearSelection()
            target.setSelected(True)
        actions = [a for a in self.actions() if a.isEnabled()]
        if all(a.isSeparator() for a in actions):
            return
        menu = QMenu(self)
        for action in actions:
            menu.addAction(action)
        menu.exec(event.globalPos())

    def item_at(self, pos) -> QGraphicsItem | None:
        """The item under a view point; labels lie over their boxes but are never what is hit."""
        labels = self.design_scene.labels
        # Not item.topLevelItem(): PySide makes the item it returns a Python child of the caller, so
        # the label layer would become a child of a plate and be let go, with every label, when that
        # plate is deleted.
        return next((item for item in self.items(pos) if not labels.isAncestorOf(item)), None)

    def node_of(self, item) -> NodeItem | None:
        if isinstance(item, LinkItem):
            return None  # a link was hit (its hit area runs beside its line), not the container holding it
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return item

    # --- drag and drop from the palette ------------------------------------------------------------------
    def _accepts(self, mime) -> bool:
        return mime.hasFormat(PART_MIME) or any(u.toLocalFile().endswith(".json") for u in mime.urls())

    def dragEnterEvent(self, event) -> None:
        if self._accepts(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if self._accepts(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        mime = event.mimeData()
        if mime.hasFormat(PART_MIME):
            part_id = bytes(mime.data(PART_MIME)).decode("utf-8")
            scene_pos = self.mapToScene(event.position().toPoint())
            count = None
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                count = self.ask_count(part_id)
                if not count:
                    event.ignore()
                    return
            self.design_scene.interactions.drop_part(part_id, scene_pos, count)
            self.setFocus()
            event.acceptProposedAction()
            return
        files = [u.toLocalFile() for u in mime.urls() if u.toLocalFile().endswith(".json")]
        if files:
            event.acceptProposedAction()
            self.fileDropped.emit(files[0])
            return
        event.ignore()

    def _ask_count(self, part_id: str) -> int | None:
        part = self.design_scene.document.catalog.get(part_id)
        name = part.name if part else part_id
        count, ok = QInputDialog.getInt(self, "Replicated group", f"How many copies of {name}?", 8, 1, 1_000_000, 1)
        return count if ok else None

    def _choose_medium(self, options: list[tuple[str, str]], what: str) -> str | None:
        names = [f"{name} ({mid})" for mid, name in options]
        choice, ok = QInputDialog.getItem(self, "Choose the link medium", f"Both ends of {what} support:", names, 0,
                                          False)
        if not ok:
            return None
        return options[names.index(choice)][0]

    # --- rename in place -------------------------------------------------------------------------------------
    def start_rename(self, item_id: str) -> QLineEdit | None:
        return self.gestures.rename.start(item_id)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and self.rename_editor is None:
            if not event.isAutoRepeat():
                self.space_held = True
                self.show_pan_cursor()
            event.accept()
            return
        if self.rename_editor is not None and event.key() == Qt.Key.Key_Escape:
            self.gestures.rename.cancel()
            return
        if self._editor_key(event):
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and self.space_held:
            if not event.isAutoRepeat():
                self.space_held = False
                self.show_pan_cursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def focusOutEvent(self, event) -> None:
        # A Space released in another window never reaches this one.
        self.space_held = False
        self.show_pan_cursor()
        super().focusOutEvent(event)

    def show_pan_cursor(self) -> None:
        if self.gestures.pan.under_way():
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
        elif self.space_held:
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        else:
            self.viewport().unsetCursor()

    # --- keys as in other editors -----------------------------------------------------------------------
    NUDGES = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0), Qt.Key.Key_Up: (0, -1), Qt.Key.Key_Down: (0, 1)}
    NUDGE_STEP = GRID
    NUDGE_STEP_SHIFT = 5 * GRID

    def _editor_key(self, event) -> bool:
        """Esc cancels a link being drawn, else leaves the Link tool, else clears the selection; the
        arrow keys nudge the selection by a grid step (Shift: five), and scroll only when nothing is
        selected."""
        key = event.key()
        if key == Qt.Key.Key_Escape:
            if self.gestures.draw_link.under_way():
                self.cancel_link()
            elif self.link_tool:
                self.linkToolLeft.emit()
            else:
                self.scene().clearSelection()
            return True
        if key in self.NUDGES and self.scene().selectedItems():
            step = self.NUDGE_STEP_SHIFT if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else self.NUDGE_STEP
            ux, uy = self.NUDGES[key]
            self.design_scene.interactions.nudge_selection(ux * step, uy * step)
            return True
        return False

    def cancel_link(self) -> None:
        self.gestures.draw_link.cancel()

    # --- the empty canvas ---------------------------------------------------------------------------------
    EMPTY_HINT = ("Drag a part from the palette onto the canvas to begin,\n"
                  "or open a built-in cluster: File ▸ Open Example…")

    def drawBackground(self, painter: QPainter, rect) -> None:
        """On an empty design, say how to begin (in the middle of the viewport)."""
        super().drawBackground(painter, rect)
        scene = self.design_scene
        if scene.nodes or scene.building:
            return
        painter.save()
        painter.resetTransform()
        f = QFont()
        f.setPointSizeF(12)
        painter.setFont(f)
        painter.setPen(QColor(colors.DIM_TEXT))
        painter.drawText(QRectF(self.viewport().rect()), Qt.AlignmentFlag.AlignCenter, self.EMPTY_HINT)
        painter.restore()

    def _on_design_changed(self, _change) -> None:
        """The hint comes and goes with the first and last item: repaint the whole viewport then
        (the usual update covers only the items that changed)."""
        empty = not self.design_scene.design.items
        if empty != self._showed_empty:
            self._showed_empty = empty
            self.viewport().update()

    @property
    def rename_editor(self) -> QLineEdit | None:
        return self.gestures.rename.editor

    LEGEND_W, LEGEND_H = 260, 62

    def legend_rect(self) -> QRectF:
        vp = self.viewport().rect()
        return QRectF(vp.right() - self.LEGEND_W - 12, vp.bottom() - self.LEGEND_H - 12, self.LEGEND_W, self.LEGEND_H)

    def legend_title(self) -> str:
        """The legend's heading: what the link colours show (the phase is chosen in the results'
        Utilization tab)."""
        scene = self.design_scene
        if not scene.utilization:
            return "Links (utilization after evaluation)"
        return f"Link utilization: {scene.overlay_phase or 'busiest of all phases'}"

    def update_legend(self) -> None:
        self.viewport().update(self._legend_area())

    def _legend_area(self):
        return self.legend_rect().toAlignedRect().adjusted(-2, -2, 2, 2)

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        """The legend stays put in the viewport while the scene scrolls under it: Qt scrolls by
        moving the painted pixels, which would carry the legend along (a trail) and leave its
        place showing the strip just uncovered; repaint both places."""
        super().scrollContentsBy(dx, dy)
        scene: DesignScene | None = self.design_scene  # None while the window is torn down
        if scene is not None and scene.link_items:
            area = self._legend_area()
            self.viewport().update(area)
            self.viewport().update(area.translated(dx, dy))

    # --- legend ------------------------------------------------------------------------------------------
    def drawForeground(self, painter: QPainter, rect) -> None:
        scene = self.design_scene
        if not scene.link_items:
            return
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        f = QFont()
        f.setPointSizeF(8.5)
        painter.setFont(f)
        box = self.legend_rect()
        w = box.width()
        painter.setPen(QPen(QColor(colors.LEGEND_BORDER)))
        background = QColor(colors.CANVAS_BACKGROUND)
        background.setAlpha(235)  # the links under the legend show through a little
        painter.setBrush(background)
        painter.drawRoundedRect(box, 6, 6)
        painter.setPen(QColor(colors.TEXT))
        if scene.utilization:
            title = painter.fontMetrics().elidedText(self.legend_title(), Qt.TextElideMode.ElideRight, int(w - 20))
            painter.drawText(QRectF(box.left() + 10, box.top() + 4, w - 20, 18), Qt.AlignmentFlag.AlignLeft, title)
            grad = QLinearGradient(box.left() + 10, 0, box.right() - 10, 0)
            for stop in (0.0, 0.25, 0.5, 0.75, 1.0):
                grad.setColorAt(stop, QColor.fromRgbF(*colors.utilization_rgb(stop)))
            bar = QRectF(box.left() + 10, box.top() + 24, w - 20, 10)
            painter.fillRect(bar, grad)
            painter.drawText(QRectF(bar.left(), bar.bottom() + 2, 40, 16), Qt.AlignmentFlag.AlignLeft, "0%")
            painter.drawText(QRectF(bar.right() - 40, bar.bottom() + 2, 40, 16), Qt.AlignmentFlag.AlignRight, "100%")
            if scene.bottleneck:
                pen = QPen(QColor(colors.BOTTLENECK), 4)
                painter.setPen(pen)
                painter.drawLine(QPointF(bar.center().x() - 40, bar.bottom() + 10),
                                 QPointF(bar.center().x() - 20, bar.bottom() + 10))
                painter.setPen(QColor(colors.TEXT))
                painter.drawText(QRectF(bar.center().x() - 14, bar.bottom() + 2, 70, 16), Qt.AlignmentFlag.AlignLeft,
                                 "bottleneck")
        else:
            painter.drawText(QRectF(box.left() + 10, box.top() + 4, w - 20, 18), Qt.AlignmentFlag.AlignLeft,
                             self.legend_title())
            y = box.top() + 30
            for i, (label, tier) in enumerate((("scale-up", "scale-up"), ("scale-out", "scale-out"))):
                x = box.left() + 10 + i * 105
                pen = QPen(QColor(colors.tier_color(tier)), 3)
                painter.setPen(pen)
                painter.drawLine(QPointF(x, y + 8), QPointF(x + 24, y + 8))
                painter.setPen(QColor(colors.TEXT))
                painter.drawText(QRectF(x + 30, y, 80, 18), Qt.AlignmentFlag.AlignLeft, label)
        painter.restore()
