"""The canvas view: drops from the palette, link drawing, panning, rubber band, zoom, rename in place.

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

from PySide6.QtCore import QLineF, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem, QGraphicsView, QInputDialog, QLineEdit

from designer.canvas import colors
from designer.canvas.interactions import PART_MIME
from designer.canvas.items import HEADER_H, LinkItem, NodeItem
from designer.model.layout import GRID
from designer.canvas.scene import DesignScene


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
        self._pan_from: QPoint | None = None
        self._space_held = False  # Space down: a left drag pans, even over an item
        self._link_from: NodeItem | None = None
        self._link_preview: QGraphicsLineItem | None = None
        self._rename_editor: QLineEdit | None = None
        self.ask_count = self._ask_count  # tests replace it
        scene.interactions.choose_medium = self._choose_medium
        scene.message.connect(self.message)
        self._showed_empty = not scene.design.items
        scene.document.changed.connect(self._on_design_changed)
        scene.built.connect(self.viewport().update)

    @property
    def design_scene(self) -> DesignScene:
        return self.scene()

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
        if self._rename_editor is not None:
            self._finish_rename(commit=True)
        pos = event.position().toPoint()
        item = self._item_at(pos)
        node = self._node_of(item)
        if isinstance(item, LinkItem) and (self.link_tool or event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
            node = self.design_scene.node_at(self.mapToScene(pos))  # a link starts from the box under a link
        mods = event.modifiers()
        space_pan = self._space_held and event.button() == Qt.MouseButton.LeftButton
        if event.button() == Qt.MouseButton.MiddleButton or space_pan or (
                event.button() == Qt.MouseButton.LeftButton and item is None and not self.link_tool
                and not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)):
            self._pan_from = pos
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            if event.button() == Qt.MouseButton.LeftButton and not space_pan:
                self.scene().clearSelection()
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and node is not None and (
                self.link_tool or mods & Qt.KeyboardModifier.ShiftModifier):
            if node.kind == "group":
                self.message.emit("Links join hardware: start from a switch, NIC, GPU or server, not a group")
                event.accept()
                return
            self._link_from = node
            start = self._link_anchor(node)
            self._link_preview = QGraphicsLineItem(QLineF(start, start))
            pen = QPen(QColor(colors.SELECTION), 2, Qt.PenStyle.DashLine)
            pen.setCosmetic(True)
            self._link_preview.setPen(pen)
            self._link_preview.setZValue(100)
            self.scene().addItem(self._link_preview)
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and item is None:
            self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        pos = event.position().toPoint()
        if self._pan_from is not None:
            delta = pos - self._pan_from
            self._pan_from = pos
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            event.accept()
            return
        if self._link_preview is not None:
            line = self._link_preview.line()
            self._link_preview.setLine(QLineF(line.p1(), self.mapToScene(pos)))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        pos = event.position().toPoint()
        if self._pan_from is not None:
            self._pan_from = None
            self._show_pan_cursor()
            event.accept()
            return
        if self._link_preview is not None:
            self.scene().removeItem(self._link_preview)
            self._link_preview = None
            start, self._link_from = self._link_from, None
            target = self.design_scene.node_at(self.mapToScene(pos))
            if target is None or target is start:
                self.message.emit("Link: release the mouse over the item to connect to")
            else:
                self.design_scene.interactions.request_link(start.item_id, target.item_id)
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self.setDragMode(QGraphicsView.DragMode.NoDrag)

    def mouseDoubleClickEvent(self, event) -> None:
        node = self._node_of(self._item_at(event.position().toPoint()))
        if node is not None:
            self.start_rename(node.item_id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event) -> None:
        """Right-click: the edit actions for the item under the cursor (selecting it first)."""
        from PySide6.QtWidgets import QMenu

        item = self._item_at(event.pos())
        target = self._node_of(item) or (item if isinstance(item, LinkItem) else None)
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

    def _item_at(self, pos) -> QGraphicsItem | None:
        """The item under a view point; labels lie over their boxes but are never what is hit."""
        labels = self.scene().labels
        # Not item.topLevelItem(): PySide makes the item it returns a Python child of the caller, so
        # the label layer would become a child of a plate and be let go, with every label, when that
        # plate is deleted.
        return next((item for item in self.items(pos) if not labels.isAncestorOf(item)), None)

    def _node_of(self, item) -> NodeItem | None:
        if isinstance(item, LinkItem):
            return None  # a link was hit (its hit area runs beside its line), not the container holding it
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return item

    def _link_anchor(self, node: NodeItem) -> QPointF:
        rect = node.sceneBoundingRect()
        if node.container:
            return QRectF(rect.left(), rect.top(), rect.width(), HEADER_H).center()
        return rect.center()

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
        scene = self.design_scene
        node = scene.nodes.get(item_id)
        item = scene.design.items.get(item_id)
        if node is None or item is None:
            return None
        self._finish_rename(commit=False)
        rect = self.mapFromScene(node.mapRectToScene(node.header_rect())).boundingRect()
        editor = QLineEdit(self.viewport())
        editor.setText(item.name or item.label)
        editor.selectAll()
        width = max(140, min(rect.width(), 400))
        top = rect.top() if node.container else rect.top() + max(0, (rect.height() - 24) // 2)
        editor.setGeometry(rect.left(), top, width, 24)
        editor.setProperty("item_id", item_id)
        editor.returnPressed.connect(lambda: self._finish_rename(commit=True))
        editor.editingFinished.connect(lambda: self._finish_rename(commit=True))
        editor.show()
        editor.setFocus()
        self._rename_editor = editor
        return editor

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and self._rename_editor is None:
            if not event.isAutoRepeat():
                self._space_held = True
                self._show_pan_cursor()
            event.accept()
            return
        if self._rename_editor is not None and event.key() == Qt.Key.Key_Escape:
            self._finish_rename(commit=False)
            return
        if self._editor_key(event):
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and self._space_held:
            if not event.isAutoRepeat():
                self._space_held = False
                self._show_pan_cursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def focusOutEvent(self, event) -> None:
        # A Space released in another window never reaches this one.
        self._space_held = False
        self._show_pan_cursor()
        super().focusOutEvent(event)

    def _show_pan_cursor(self) -> None:
        if self._pan_from is not None:
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
        elif self._space_held:
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
            if self._link_preview is not None:
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
        if self._link_preview is not None:
            self.scene().removeItem(self._link_preview)
            self._link_preview = self._link_from = None
            self.message.emit("Link cancelled")

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

    def _finish_rename(self, commit: bool) -> None:
        editor = self._rename_editor
        if editor is None:
            return
        self._rename_editor = None
        item_id, text = editor.property("item_id"), editor.text().strip()
        editor.hide()
        editor.deleteLater()
        self.setFocus()
        if commit and text and item_id in self.design_scene.design.items:
            self.design_scene.document.set_item(item_id, text="Rename", name=text)

    @property
    def rename_editor(self) -> QLineEdit | None:
        return self._rename_editor

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
        scene = self.scene()  # None while the window is torn down
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
