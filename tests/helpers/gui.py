"""GUI gestures and looks shared by several GUI test files: a drop from the palette, a right-click
menu choice, the Goodput tab's what-if as shown, the Fail Some Copies dialog answered, a scene
rendered to an image, a failed item's strike-through line."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QImage, QPainter
from PySide6.QtWidgets import (QAbstractSpinBox, QApplication, QCheckBox, QGraphicsLineItem, QLabel,
                               QPushButton)

NO_MODIFIER = Qt.KeyboardModifier.NoModifier
LEFT = Qt.MouseButton.LeftButton


def drop(window, part_id: str, viewport_pos: QPoint, modifiers=NO_MODIFIER) -> bool:
    """What a drag from the palette delivers to the canvas: enter, move, drop."""
    mime = window.parts_palette.mime_for(part_id)
    vp = window.view.viewport()
    action = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(viewport_pos, action, mime, LEFT, modifiers)
    QApplication.sendEvent(vp, enter)
    if not enter.isAccepted():
        return False
    move = QDragMoveEvent(viewport_pos, action, mime, LEFT, modifiers)
    QApplication.sendEvent(vp, move)
    event = QDropEvent(QPointF(viewport_pos), action, mime, LEFT, modifiers)
    QApplication.sendEvent(vp, event)
    return event.isAccepted()


def right_click_and_choose(qtbot, window, item_id: str, text: str) -> None:
    """Right-click the item on the canvas and click `text` in the menu that opens."""
    node = window.scene.nodes[item_id]
    window.view.ensureVisible(node.sceneBoundingRect())
    right_click_at_and_choose(qtbot, window, node.sceneBoundingRect().center(), text)


def right_click_at_and_choose(qtbot, window, scene_point, text: str) -> None:
    """Right-click the canvas at a scene point and click `text` in the menu that opens."""
    view = window.view
    pos = view.mapFromScene(scene_point)
    chosen = []

    def choose():
        menu = QApplication.activePopupWidget()
        if menu is None:
            QTimer.singleShot(10, choose)
            return
        action = next(a for a in menu.actions() if a.text().replace("&", "") == text)
        chosen.append(action.isEnabled())
        qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())

    QTimer.singleShot(0, choose)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    assert chosen == [True]


def show_what_if(window, qtbot):
    """Wait for the what-if's figures, then click the Goodput tab as a user would; its page."""
    assert window.scheduler.wait_idle(30_000)
    qtbot.waitUntil(lambda: window.last_result is not None and window.last_result.degraded is not None,
                    timeout=30_000)
    panel = window.results
    bar = panel.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(panel.tabs.indexOf(panel.goodput.page)).center())
    assert panel.tabs.currentWidget() is panel.goodput.page
    return panel.goodput


def what_if_rows(window, qtbot) -> dict[str, tuple[str, ...]]:
    """The Goodput tab's what-if table as shown, by figure."""
    return {row[0]: row for row in show_what_if(window, qtbot).rows_shown()}


def answer_fail_copies(qtbot, type_into: str, text: str, seen: list, every_link: bool = False) -> None:
    """When the Fail Some Copies dialog opens, (tick "every link on its medium",) type `text`
    into its count or percent box, note what it says will fail, and click Fail."""
    from designer.ui.dialogs import FailCopiesDialog

    dialog = QApplication.activeModalWidget()
    if not isinstance(dialog, FailCopiesDialog):
        QTimer.singleShot(10, lambda: answer_fail_copies(qtbot, type_into, text, seen, every_link))
        return
    if every_link:
        box = dialog.findChild(QCheckBox, "failEveryLink")
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
        assert box.isChecked() and not dialog.findChild(QAbstractSpinBox, "failCount").isEnabled()
    spin = dialog.findChild(QAbstractSpinBox, type_into)
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    seen.append(dialog.findChild(QLabel, "failOutcome").text())
    fail = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Fail")
    qtbot.mouseClick(fail, Qt.MouseButton.LeftButton)


def render(scene, rect: QRectF) -> QImage:
    """The scene's `rect` painted at 4× into a transparent image, as the screen would show it."""
    image = QImage(int(rect.width() * 4), int(rect.height() * 4), QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    scene.render(painter, QRectF(image.rect()), rect)
    painter.end()
    return image


def strike_of(node):
    """The line striking a failed item through, or None when it is not struck."""
    lines = [child for child in node.plate.childItems() if isinstance(child, QGraphicsLineItem)]
    return lines[0] if lines else None


def compare_row(compare, key: str) -> int:
    """The Compare window's summary-table row of the figure `key` (`engine.figures.summary_key`),
    found by the metric name the user reads in its first column."""
    comparison = compare.comparison
    metric = next(line.metric for line in (*comparison.rows, *comparison.cost, *comparison.goodput) if line.key == key)
    table = compare.summary_table
    return next(r for r in range(table.rowCount()) if table.item(r, 0) is not None and table.columnSpan(r, 0) == 1
                and table.item(r, 0).text() == metric)


def sweep_column(sweep, path: str) -> int:
    """The sweep window's table column headed `path` (`summary.power_kw`, `param.nodes`)."""
    model = sweep.model
    return next(c for c in range(model.columnCount()) if model.headerData(c, Qt.Orientation.Horizontal) == path)


def choose_example(dialog, row: int) -> None:
    """In the example gallery, click the row, then Open."""
    from PySide6.QtWidgets import QDialogButtonBox

    dialog.table.setCurrentCell(row, 0)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Open).click()
