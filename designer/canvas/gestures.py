"""The view's mouse gestures, one class each, behind one handler (`ViewGestures`): panning, the
rubber band, drawing a link and renaming in place. Each takes a press or leaves it to the next,
then sees the moves and the release of the press it took, and can be cancelled. Dragging items
is the scene's gesture (`interactions.DragItems`): Qt hands a press on an item to the scene; the
press no view gesture takes goes there, through Qt.

A gesture reads the view that owns it for what is under a point and for its modes (the Link
tool, Space held)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QLineF, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem, QGraphicsView, QLineEdit

from designer.canvas.items import HEADER_H, LinkItem, NodeItem
from designer.style import colors

if TYPE_CHECKING:  # the view owns these; they name its type, not a run-time dependency
    from designer.canvas.view import DesignView


class Gesture:
    """One gesture of the mouse, from the press it takes to its release (or a cancel)."""

    def __init__(self, view: DesignView):
        self.view = view

    def press(self, event, item: QGraphicsItem | None) -> bool:
        """Whether this gesture takes the press (a view mouse event on `item`, None: empty space)."""
        return False

    def under_way(self) -> bool:
        """Whether a press taken has started something the moves and the release continue."""
        return False

    def move(self, event) -> None:
        pass

    def release(self, event) -> None:
        pass

    def cancel(self) -> None:
        pass


class Pan(Gesture):
    """Drag empty space, the middle button, or hold Space and drag anywhere: the canvas follows."""

    def __init__(self, view: DesignView):
        super().__init__(view)
        self._from: QPoint | None = None  # where the mouse was at the last move

    def press(self, event, item: QGraphicsItem | None) -> bool:
        view = self.view
        pos = event.position().toPoint()
        left = event.button() == Qt.MouseButton.LeftButton
        space_pan = view.space_held and left
        if not (event.button() == Qt.MouseButton.MiddleButton or space_pan or (
                left and item is None and not view.link_tool
                and not event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier))):
            return False
        self._from = pos
        view.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
        if left and not space_pan:
            view.scene().clearSelection()
        event.accept()
        return True

    def under_way(self) -> bool:
        return self._from is not None

    def move(self, event) -> None:
        pos = event.position().toPoint()
        delta = pos - self._from
        self._from = pos
        bars = self.view.horizontalScrollBar(), self.view.verticalScrollBar()
        bars[0].setValue(bars[0].value() - delta.x())
        bars[1].setValue(bars[1].value() - delta.y())
        event.accept()

    def release(self, event) -> None:
        self.cancel()
        event.accept()

    def cancel(self) -> None:
        self._from = None
        self.view.show_pan_cursor()


class DrawLink(Gesture):
    """Shift-drag from one item to another, or any drag with the Link tool on: a dashed line
    follows the mouse, and the release over another item asks for the link."""

    def __init__(self, view: DesignView):
        super().__init__(view)
        self._from: NodeItem | None = None
        self._preview: QGraphicsLineItem | None = None

    def press(self, event, item: QGraphicsItem | None) -> bool:
        view = self.view
        pos = event.position().toPoint()
        node = view.node_of(item)
        wanted = view.link_tool or event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if isinstance(item, LinkItem) and wanted:
            node = view.design_scene.node_at(view.mapToScene(pos))  # a link starts from the box under a link
        if not (event.button() == Qt.MouseButton.LeftButton and node is not None and wanted):
            return False
        if node.kind == "group":
            view.message.emit("Links join hardware: start from a switch, NIC, GPU or server, not a group")
            event.accept()
            return True
        self._from = node
        start = self._anchor(node)
        self._preview = QGraphicsLineItem(QLineF(start, start))
        pen = QPen(QColor(colors.SELECTION), 2, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self._preview.setPen(pen)
        self._preview.setZValue(100)
        view.scene().addItem(self._preview)
        event.accept()
        return True

    @staticmethod
    def _anchor(node: NodeItem) -> QPointF:
        rect = node.sceneBoundingRect()
        if node.container:
            return QRectF(rect.left(), rect.top(), rect.width(), HEADER_H).center()
        return rect.center()

    def under_way(self) -> bool:
        return self._preview is not None

    def move(self, event) -> None:
        preview = self._preview
        if preview is not None:
            preview.setLine(QLineF(preview.line().p1(), self.view.mapToScene(event.position().toPoint())))
        event.accept()

    def release(self, event) -> None:
        view = self.view
        start = self._from
        self._drop_preview()
        target = view.design_scene.node_at(view.mapToScene(event.position().toPoint()))
        if start is None or target is None or target is start:
            view.message.emit("Link: release the mouse over the item to connect to")
        else:
            view.design_scene.interactions.request_link(start.item_id, target.item_id)
        event.accept()

    def cancel(self) -> None:
        if self._preview is not None:
            self._drop_preview()
            self.view.message.emit("Link cancelled")

    def _drop_preview(self) -> None:
        if self._preview is not None:
            self.view.scene().removeItem(self._preview)
        self._preview = self._from = None


class RubberBand(Gesture):
    """Ctrl- or Shift-drag on empty space (a left press no other gesture took): Qt's rubber band
    selects what it touches. The handler passes the press, moves and release on to Qt, which
    draws the band in this mode; the release ends the mode."""

    def press(self, event, item: QGraphicsItem | None) -> bool:
        view = self.view
        if event.button() == Qt.MouseButton.LeftButton and item is None:
            view.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        return False  # the press goes on to Qt either way (on an item: the scene's drag of items)

    def release(self, event) -> None:
        self.cancel()

    def cancel(self) -> None:
        self.view.setDragMode(QGraphicsView.DragMode.NoDrag)


class Rename(Gesture):
    """F2 or a double-click: a line editor over the item's title; Return, leaving it or a press
    elsewhere renames (one edit), Esc cancels."""

    def __init__(self, view: DesignView):
        super().__init__(view)
        self.editor: QLineEdit | None = None

    def start(self, item_id: str) -> QLineEdit | None:
        view = self.view
        scene = view.design_scene
        node = scene.nodes.get(item_id)
        item = scene.design.items.get(item_id)
        if node is None or item is None:
            return None
        self.cancel()
        rect = view.mapFromScene(node.mapRectToScene(node.header_rect())).boundingRect()
        editor = QLineEdit(view.viewport())
        editor.setText(item.name or item.label)
        editor.selectAll()
        width = max(140, min(rect.width(), 400))
        top = rect.top() if node.container else rect.top() + max(0, (rect.height() - 24) // 2)
        editor.setGeometry(rect.left(), top, width, 24)
        editor.setProperty("item_id", item_id)
        editor.returnPressed.connect(lambda: self.finish(commit=True))
        editor.editingFinished.connect(lambda: self.finish(commit=True))
        editor.show()
        editor.setFocus()
        self.editor = editor
        return editor

    def press(self, event, item: QGraphicsItem | None) -> bool:
        """A press anywhere ends a rename under way with the text typed; the press goes on."""
        self.finish(commit=True)
        return False

    def under_way(self) -> bool:
        return self.editor is not None

    def cancel(self) -> None:
        self.finish(commit=False)

    def finish(self, commit: bool) -> None:
        editor = self.editor
        if editor is None:
            return
        self.editor = None
        item_id, text = editor.property("item_id"), editor.text().strip()
        editor.hide()
        editor.deleteLater()
        view = self.view
        view.setFocus()
        if commit and text and item_id in view.design_scene.design.items:
            view.design_scene.document.set_item(item_id, text="Rename", name=text)


class ViewGestures:
    """The one handler of the view's mouse presses, moves and releases: the first gesture to take
    a press gets the moves and the release while it is under way; a press none takes goes on to Qt
    (the rubber band, the scene's drag of items, a click that selects), and so do the moves and
    the release when no gesture is under way."""

    def __init__(self, view: DesignView):
        self.view = view
        self.pan = Pan(view)
        self.draw_link = DrawLink(view)
        self.rubber_band = RubberBand(view)
        self.rename = Rename(view)

    def _under_way(self) -> Gesture | None:
        # A pan started with the middle button while a link is drawn comes first, and the link
        # goes on once it ends.
        return next((g for g in (self.pan, self.draw_link) if g.under_way()), None)

    def press(self, event) -> None:
        self.rename.press(event, None)  # first: the rename it ends may change what is under the press
        item = self.view.item_at(event.position().toPoint())
        for gesture in (self.pan, self.draw_link, self.rubber_band):
            if gesture.press(event, item):
                return
        QGraphicsView.mousePressEvent(self.view, event)

    def move(self, event) -> None:
        gesture = self._under_way()
        if gesture is not None:
            gesture.move(event)
        else:
            QGraphicsView.mouseMoveEvent(self.view, event)

    def release(self, event) -> None:
        gesture = self._under_way()
        if gesture is not None:
            gesture.release(event)
            return
        QGraphicsView.mouseReleaseEvent(self.view, event)
        self.rubber_band.release(event)
