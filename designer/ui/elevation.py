"""View ▸ Rack Elevation: a dock showing one rack's front view, U by U, following the selection.

The stacking, power and fit come from `designer.model.elevation`; this module only draws them. A
slot dragged up or down the rack is restacked there by `Document.reorder_rack` (one undo step,
saved as each item's `rack_u`). What does not fit (U above the rack's top, power over its budget)
is drawn and worded in red with the numbers.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (QApplication, QComboBox, QLabel, QScrollArea, QSizePolicy, QToolTip, QVBoxLayout,
                               QWidget)

from designer.document.document import Document
from designer.model import elevation
from designer.model.elevation import RackElevation, Slot
from designer.style import colors

MIN_U_PX, MAX_U_PX = 10, 22  # one rack unit on screen: the whole rack fits the dock's height where it can
NUMBERS_PX = 34  # the U numbers left of the rack
MIN_RACK_PX, MAX_RACK_PX = 240, 420  # the rack's width follows the dock's
MARGIN_PX = 10


def kw(watts: float) -> str:
    return f"{watts / 1000:,.1f} kW"


def summary_html(rack: RackElevation) -> str:
    """The rack's fill and power in words, what does not fit in red with the numbers."""
    red = f"<span style='color:{colors.ERROR}; font-weight:600'>"
    copies = f" × {rack.copies:,}" if rack.copies > 1 else ""
    part = f" — {_esc(rack.part_name)}" if rack.part_name != rack.label else ""
    lines = [f"<b>{_esc(rack.label)}</b>{copies}{part}"]
    if rack.free_u >= 0 and not rack.overflow_u:
        lines.append(f"{rack.used_u}U used, {rack.free_u}U free of {rack.height_u}U")
    else:
        over = max(rack.overflow_u, -rack.free_u)
        lines.append(f"{red}{rack.used_u}U needed, {over}U more than the {rack.height_u}U rack has</span>")
    if rack.budget_w is None:
        lines.append(f"{kw(rack.power_w)} (the rack states no power budget)")
    elif rack.over_budget_w > 0:
        lines.append(f"{red}{kw(rack.power_w)} of a {kw(rack.budget_w)} budget: "
                     f"{kw(rack.over_budget_w)} over</span>")
    else:
        lines.append(f"{kw(rack.power_w)} of a {kw(rack.budget_w)} budget, "
                     f"{kw(rack.budget_w - rack.power_w)} to spare")
    return "<br>".join(lines)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class RackFrontView(QWidget):
    """One rack drawn from the front, U1 at the bottom. Drag a slot to move it in the stack."""

    reorderRequested = Signal(str, list)  # rack id, slot item ids bottom first

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rack: RackElevation | None = None
        self.kinds: dict[str, str] = {}  # slot item id → its kind, for the colour
        self._pressed: tuple[str, QPoint] | None = None
        self._drop_y: int | None = None  # where a dragged slot would go, while dragging
        self.u_px = MAX_U_PX
        self.rack_px = MAX_RACK_PX
        self._room = QSize(0, 0)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Esc cancels a drag
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def show_rack(self, rack: RackElevation | None, kinds: dict[str, str]) -> None:
        self.rack, self.kinds = rack, kinds
        self._pressed = self._drop_y = None
        self.fit(self._room)

    def fit(self, room: QSize) -> None:
        """Scale the rack to fill `room`: a U within MIN_U_PX and MAX_U_PX high, the rack within
        MIN_RACK_PX and MAX_RACK_PX wide."""
        self._room = room
        rows = max(1, self.shown_u())
        self.u_px = max(MIN_U_PX, min(MAX_U_PX, (room.height() - 2 * MARGIN_PX) // rows))
        self.rack_px = max(MIN_RACK_PX, min(MAX_RACK_PX, room.width() - NUMBERS_PX - 2 * MARGIN_PX - 20))
        self.updateGeometry()
        self.resize(self.sizeHint())
        self.update()

    # --- geometry ---------------------------------------------------------------------------------
    def shown_u(self) -> int:
        """Rows drawn: the rack's U, and the U stacked above its top when too much is in it."""
        return max(self.rack.height_u, self.rack.top_u) if self.rack else 0

    def sizeHint(self) -> QSize:
        return QSize(NUMBERS_PX + self.rack_px + 2 * MARGIN_PX, self.shown_u() * self.u_px + 2 * MARGIN_PX)

    def u_top_y(self, u: int) -> int:
        """Screen y of the top edge of U `u`."""
        return MARGIN_PX + (self.shown_u() - u) * self.u_px

    def slot_rect(self, item_id: str) -> QRect:
        slot = next(s for s in self.rack.slots if s.item_id == item_id)
        top = self.u_top_y(slot.top_u)
        return QRect(MARGIN_PX + NUMBERS_PX, top, self.rack_px, slot.height_u * self.u_px)

    def slot_at(self, pos: QPoint) -> Slot | None:
        if self.rack is None:
            return None
        return next((s for s in self.rack.slots if self.slot_rect(s.item_id).contains(pos)), None)

    def u_at(self, y: float) -> float:
        """The U (fractional, 1 = the bottom row's lower edge) at screen y."""
        return self.shown_u() - (y - MARGIN_PX) / self.u_px + 1

    # --- dragging -----------------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        slot = self.slot_at(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and slot is not None:
            self._pressed = (slot.item_id, event.position().toPoint())
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        pos = event.position().toPoint()
        if self._pressed is not None:
            if (pos - self._pressed[1]).manhattanLength() >= QApplication.startDragDistance():
                self._drop_y = pos.y()
                self.update()
            return
        self.setCursor(Qt.CursorShape.OpenHandCursor if self.slot_at(pos) else Qt.CursorShape.ArrowCursor)

    def mouseReleaseEvent(self, event) -> None:
        if self._pressed is None or event.button() != Qt.MouseButton.LeftButton:
            return super().mouseReleaseEvent(event)
        dragged, _start = self._pressed
        drop_y = self._drop_y
        self._pressed = self._drop_y = None
        self.setCursor(Qt.CursorShape.OpenHandCursor)
        self.update()
        if drop_y is None or self.rack is None:
            return
        order = self.order_after_drop(dragged, self.u_at(drop_y))
        if order != [s.item_id for s in self.rack.slots]:
            self.reorderRequested.emit(self.rack.rack_id, order)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape and self._pressed is not None:
            self._pressed = self._drop_y = None
            self.update()
            return
        super().keyPressEvent(event)

    def order_after_drop(self, dragged: str, drop_u: float) -> list[str]:
        """The stack with `dragged` moved to where it was dropped: below every other slot whose
        middle is above the drop point."""
        others = [s for s in self.rack.slots if s.item_id != dragged]
        below = sum(1 for s in others if (s.first_u + s.top_u + 1) / 2 < drop_u)
        ids = [s.item_id for s in others]
        return ids[:below] + [dragged] + ids[below:]

    def event(self, event) -> bool:
        if event.type() == event.Type.ToolTip:
            slot = self.slot_at(event.pos())
            if slot is not None:
                QToolTip.showText(event.globalPos(), self.slot_text(slot), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    def slot_text(self, slot: Slot) -> str:
        where = f"U{slot.first_u}" if slot.height_u == 1 else f"U{slot.first_u}–U{slot.top_u}"
        text = f"{slot.label}: {slot.contents}\n{where} ({slot.height_u}U), {kw(slot.power_w)}"
        if self.rack and not self.rack.fits(slot):
            text += f"\nDoes not fit: the rack ends at U{self.rack.height_u}"
        if slot.requested_u is not None:
            text += f"\nAsked for U{slot.requested_u}, which is taken"
        return text + "\nDrag to move it up or down the rack"

    # --- drawing --------------------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:
        if self.rack is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rack = self.rack
        left = MARGIN_PX + NUMBERS_PX
        rack_fill, rack_border = (QColor(c) for c in colors.KIND["rack"])
        body = QRect(left, self.u_top_y(rack.height_u), self.rack_px, rack.height_u * self.u_px)
        painter.fillRect(body, rack_fill)
        small = QFont(self.font())
        small.setPointSizeF(max(6.0, small.pointSizeF() * 0.8))
        painter.setFont(small)
        every = 1 if self.u_px >= 13 else 2  # numbers that would touch are thinned out
        for u in range(1, self.shown_u() + 1):
            top = self.u_top_y(u)
            above = u > rack.height_u
            painter.setPen(QColor(colors.ERROR) if above else QColor("#90A4AE"))
            if u % every == 0 or u == 1:
                painter.drawText(QRect(MARGIN_PX, top, NUMBERS_PX - 6, self.u_px),
                                 Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(u))
            painter.setPen(QPen(QColor("#DDE3E8"), 1))
            painter.drawLine(left, top, left + self.rack_px, top)
        if rack.top_u > rack.height_u:  # the U above the rack's top: what does not fit
            spill = QRect(left, self.u_top_y(rack.top_u), self.rack_px, (rack.top_u - rack.height_u) * self.u_px)
            painter.fillRect(spill, QColor(176, 0, 32, 40))
        painter.setPen(QPen(rack_border, 2))
        painter.drawRect(body)
        dragged = self._pressed[0] if self._pressed and self._drop_y is not None else None
        for slot in rack.slots:
            self._paint_slot(painter, slot, faded=slot.item_id == dragged)
        if dragged is not None:
            self._paint_drop_line(painter, dragged)
        painter.end()

    def _paint_slot(self, painter: QPainter, slot: Slot, faded: bool) -> None:
        outer = QRectF(self.slot_rect(slot.item_id)).adjusted(1, 0, -1, 0)
        fits = self.rack.fits(slot)
        if slot.copies > 1:  # a group: its copies stacked, each drawn as the unit it is
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(QColor(colors.ERROR if not fits else colors.KIND["group"][1]), 1.5))
            painter.drawRect(outer)
            unit_px = slot.unit_u * self.u_px
            for n in range(slot.copies):
                box = QRectF(outer.left() + 3, outer.bottom() - (n + 1) * unit_px, outer.width() - 6, unit_px)
                self._paint_box(painter, box, "server", f"{slot.label} ({n + 1} of {slot.copies})",
                                slot.unit_contents, slot.power_w / slot.copies, fits, faded)
        else:
            self._paint_box(painter, outer, self.kinds.get(slot.item_id, "server"), slot.label, slot.contents,
                            slot.power_w, fits, faded)

    def _paint_box(self, painter: QPainter, rect: QRectF, kind: str, label: str, contents: str, power_w: float,
                   fits: bool, faded: bool) -> None:
        rect = rect.adjusted(1, 1, -1, -1)
        fill, border = (QColor(c) for c in colors.KIND.get(kind, colors.KIND["server"]))
        if not fits:
            fill, border = QColor("#FDECEE"), QColor(colors.ERROR)
        if faded:
            fill.setAlpha(90)
        painter.setBrush(fill)
        painter.setPen(QPen(border, 2 if fits else 2.5))
        painter.drawRoundedRect(rect, 3, 3)
        painter.setPen(QColor(colors.ERROR) if not fits else QColor("#1F2933"))
        text = QRectF(rect).adjusted(6, 0, -6, 0)
        font = QFont(self.font())
        font.setPixelSize(max(8, min(13, int(rect.height()) - 2)))  # a 1U slot is a thin line of text
        painter.setFont(font)
        metrics = QFontMetrics(font)
        power = kw(power_w)
        name = f"{label} — {contents}" if contents and contents != label else label
        if not fits:
            name = f"Does not fit: {name}"
        room = int(text.width()) - metrics.horizontalAdvance(power) - 10
        painter.drawText(text, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(name, Qt.TextElideMode.ElideRight, room))
        painter.drawText(text, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, power)

    def _paint_drop_line(self, painter: QPainter, dragged: str) -> None:
        order = self.order_after_drop(dragged, self.u_at(self._drop_y))
        heights = {s.item_id: s.height_u for s in self.rack.slots}
        first = 1 + sum(heights[i] for i in order[:order.index(dragged)])
        y = self.u_top_y(first) + self.u_px
        painter.setPen(QPen(QColor(colors.TIER["scale-out"]), 3))
        painter.drawLine(MARGIN_PX + NUMBERS_PX - 4, y, MARGIN_PX + NUMBERS_PX + self.rack_px + 4, y)


class RackElevationPanel(QWidget):
    """The dock's contents: which rack, its summary, its front view, what fills no U."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.rack_id: str | None = None
        self.rack_choice = QComboBox()
        self.rack_choice.setObjectName("rackChoice")
        self.rack_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.rack_choice.setMinimumContentsLength(24)
        self.rack_choice.activated.connect(lambda index: self.show_rack(self.rack_choice.itemData(index)))
        self.summary = QLabel()
        self.summary.setObjectName("rackSummary")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.front = RackFrontView()
        self.front.reorderRequested.connect(self.document.reorder_rack)
        scroll = QScrollArea()
        scroll.setWidget(self.front)
        scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the rack narrows instead
        scroll.setMinimumWidth(MIN_RACK_PX + NUMBERS_PX + 2 * MARGIN_PX + 24)
        self.unslotted = QLabel()
        self.unslotted.setObjectName("rackUnslotted")
        self.unslotted.setWordWrap(True)
        self.empty = QLabel("This design has no racks. Place a rack from the palette and drop servers and "
                            "switches into it to see its front view here.")
        self.empty.setWordWrap(True)
        layout = QVBoxLayout(self)
        for widget in (self.rack_choice, self.summary, scroll, self.unslotted, self.empty):
            layout.addWidget(widget)
        layout.setStretchFactor(scroll, 1)
        self.scroll = scroll
        scroll.viewport().installEventFilter(self)
        # Edits come in bursts (a drag on the canvas): redraw once per turn of the event loop.
        self._refresh_timer = QTimer(self, singleShot=True, interval=0)
        self._refresh_timer.timeout.connect(self.refresh)
        self._stale = True
        document.changed.connect(lambda _change: self._refresh_timer.start())
        self.refresh()

    def follow(self, item_ids: list[str]) -> None:
        """Show the rack the selection is in (or the first rack inside it); keep the rack shown
        when the selection has none."""
        design = self.document.design
        for item_id in item_ids:
            if item_id not in design.items:
                continue
            rack = design.enclosing(item_id, "rack")
            if rack is None:
                rack = next((d for d in design.descendants(item_id) if d.kind == "rack"), None)
            if rack is not None:
                self.show_rack(rack.id)
                return

    def show_rack(self, rack_id: str | None) -> None:
        self.rack_id = rack_id
        self.refresh()

    def eventFilter(self, watched, event) -> bool:
        if watched is self.scroll.viewport() and event.type() == event.Type.Resize:
            self.front.fit(event.size())
        return super().eventFilter(watched, event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Redraw from the document; while the dock is closed, only note that it must."""
        self._stale = not self.isVisible()
        if self._stale:
            return
        design, catalog = self.document.design, self.document.catalog
        racks = elevation.racks(design)
        if self.rack_id not in design.items or design.items[self.rack_id].kind != "rack":
            self.rack_id = racks[0].id if racks else None
        self.rack_choice.blockSignals(True)
        self.rack_choice.clear()
        for rack in racks:
            copies = design.multiplicity(rack.id)
            self.rack_choice.addItem(f"{rack.label} × {copies:,}" if copies > 1 else rack.label, rack.id)
        self.rack_choice.setCurrentIndex(self.rack_choice.findData(self.rack_id))
        self.rack_choice.blockSignals(False)
        for widget in (self.rack_choice, self.summary, self.scroll, self.unslotted):
            widget.setVisible(bool(racks))
        self.empty.setVisible(not racks)
        if self.rack_id is None:
            self.front.show_rack(None, {})
            return
        rack = elevation.rack_elevation(design, catalog, self.rack_id)
        self.summary.setText(summary_html(rack))
        another = self.front.rack is None or self.front.rack.rack_id != rack.rack_id
        self.front.show_rack(rack, {s.item_id: design.items[s.item_id].kind for s in rack.slots})
        if another:  # a rack fills from U1: start at the bottom (a rack edited keeps where the user scrolled)
            bar = self.scroll.verticalScrollBar()
            QTimer.singleShot(0, self, lambda: bar.setValue(bar.maximum()))
        self.unslotted.setText("Also in the rack, filling no U: " + ", ".join(
            f"{u.label} ({kw(u.power_w)})" for u in rack.unslotted) if rack.unslotted else "")
        self.unslotted.setVisible(bool(rack.unslotted))
