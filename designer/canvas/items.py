"""Graphics items for the canvas: one NodeItem per design item (containers hold their contents
as child items), one LinkItem per drawn link. Items only draw and report; they never edit the model.

Drawing is kept cheap for 20,000 items: bounding rects are cached, pens/brushes/fonts are shared,
and text is skipped when zoomed out too far to read it."""

from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPen, QPainterPathStroker
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem, QStyle

GRID = 20
LEAF_W, LEAF_H = 64, 40
HEADER_H = 22
MARGIN = 12
CONTAINER_KINDS = ("rack", "server", "group")

# kind: (fill, border)
COLOURS = {
    "rack": ("#f1f3f5", "#546e7a"),
    "server": ("#e8f1fb", "#1e6fc7"),
    "group": ("#faf5fc", "#8e24aa"),
    "accelerator": ("#e3f4d7", "#3d8b1f"),
    "cpu": ("#fff1e0", "#d9730d"),
    "nic": ("#dff5f7", "#00838f"),
    "switch": ("#ece6f7", "#5e35b1"),
}
_BRUSHES = {k: QBrush(QColor(f)) for k, (f, _) in COLOURS.items()}
_PENS = {k: QPen(QColor(b), 1.2) for k, (_, b) in COLOURS.items()}
_GROUP_PEN = QPen(QColor(COLOURS["group"][1]), 1.4, Qt.PenStyle.DashLine)
_SELECTED_PEN = QPen(QColor("#ff6d00"), 2.6)
_TEXT_PEN = QPen(QColor("#1f2328"))
_DIM_TEXT_PEN = QPen(QColor("#57606a"))
_BADGE_BRUSH = QBrush(QColor("#8e24aa"))
_WHITE_PEN = QPen(QColor("white"))
for _p in list(_PENS.values()) + [_GROUP_PEN, _SELECTED_PEN]:
    _p.setCosmetic(True)

_fonts: dict[str, QFont] = {}


def font(role: str) -> QFont:
    f = _fonts.get(role)
    if f is None:
        f = QFont()
        f.setPointSizeF({"leaf": 7.0, "leafpart": 6.0, "header": 8.5, "badge": 8.0}[role])
        if role in ("header", "badge"):
            f.setBold(True)
        _fonts[role] = f
    return f


_elide_cache: dict[tuple[str, str, int], str] = {}


def elided(text: str, role: str, width: float) -> str:
    key = (text, role, int(width))
    out = _elide_cache.get(key)
    if out is None:
        out = QFontMetricsF(font(role)).elidedText(text, Qt.TextElideMode.ElideRight, width)
        if len(_elide_cache) > 50_000:
            _elide_cache.clear()
        _elide_cache[key] = out
    return out


_NODE_FLAGS = QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable


class NodeItem(QGraphicsItem):
    """A design item. Leaves are fixed-size boxes; containers size themselves around their contents
    (the scene calls `fit_to_children`)."""

    Type = QGraphicsItem.UserType + 1

    def __init__(self, item_id: str, kind: str, label: str, part_name: str = "", count: int = 1):
        super().__init__()
        self.item_id = item_id
        self.kind = kind
        self.label = label
        self.part_name = part_name
        self.count = count
        self.container = kind in CONTAINER_KINDS
        self._rect = QRectF(0, 0, 160, 70) if self.container else QRectF(0, 0, LEAF_W, LEAF_H)
        self.setFlags(_NODE_FLAGS)
        if not self.container:
            self.setZValue(1)

    def type(self) -> int:  # noqa: A003 - Qt API
        return NodeItem.Type

    # --- geometry ---------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return self._rect

    def set_rect(self, rect: QRectF) -> None:
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect

    def fit_to_children(self) -> bool:
        """Grow or shrink around the contents; returns True if the rect changed."""
        if not self.container:
            return False
        children = [c for c in self.childItems() if isinstance(c, NodeItem)]
        if children:
            box = QRectF()
            for child in children:
                box = box.united(child.mapRectToParent(child.boundingRect()))
            rect = box.adjusted(-MARGIN, -MARGIN - HEADER_H, MARGIN, MARGIN)
            rect.setWidth(max(rect.width(), 160))
        else:
            rect = QRectF(0, 0, 160, 70)
        changed = rect != self._rect
        self.set_rect(rect)
        return changed

    def header_rect(self) -> QRectF:
        r = self._rect
        return QRectF(r.left(), r.top(), r.width(), HEADER_H if self.container else r.height())

    # --- drawing ----------------------------------------------------------------------------
    def paint(self, painter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = self._rect
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        kind = self.kind
        painter.setBrush(_BRUSHES[kind])
        painter.setPen(_SELECTED_PEN if selected else (_GROUP_PEN if kind == "group" else _PENS[kind]))
        if lod < 0.15:
            painter.drawRect(rect)
            return
        painter.drawRoundedRect(rect, 5, 5)
        if lod < 0.45:
            return
        if self.container:
            header = QRectF(rect.left() + 8, rect.top() + 2, rect.width() - 16, HEADER_H - 4)
            badge_w = 0.0
            if kind == "group":
                badge = f"×{self.count:,}"
                painter.setFont(font("badge"))
                badge_w = QFontMetricsF(font("badge")).horizontalAdvance(badge) + 12
                badge_rect = QRectF(rect.right() - badge_w - 6, rect.top() + 3, badge_w, HEADER_H - 6)
                painter.setBrush(_BADGE_BRUSH)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.drawRoundedRect(badge_rect, 7, 7)
                painter.setPen(_WHITE_PEN)
                painter.drawText(badge_rect, Qt.AlignmentFlag.AlignCenter, badge)
                badge_w += 8
            painter.setFont(font("header"))
            painter.setPen(_TEXT_PEN)
            text = self.label if not self.part_name or self.part_name == self.label else f"{self.label} · {self.part_name}"
            painter.drawText(header.adjusted(0, 0, -badge_w, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                             elided(text, "header", header.width() - badge_w))
        else:
            painter.setFont(font("leaf"))
            painter.setPen(_TEXT_PEN)
            inner = rect.adjusted(3, 3, -3, -3)
            top = QRectF(inner.left(), inner.top(), inner.width(), inner.height() / 2)
            painter.drawText(top, Qt.AlignmentFlag.AlignCenter, elided(self.label, "leaf", inner.width()))
            if self.part_name:
                painter.setFont(font("leafpart"))
                painter.setPen(_DIM_TEXT_PEN)
                bottom = QRectF(inner.left(), inner.center().y(), inner.width(), inner.height() / 2)
                painter.drawText(bottom, Qt.AlignmentFlag.AlignCenter, elided(self.part_name, "leafpart", inner.width()))


def utilization_colour(u: float) -> QColor:
    """Green (idle) → yellow → red (saturated)."""
    u = max(0.0, min(1.0, float(u)))
    if u < 0.5:
        t = u / 0.5
        return QColor.fromRgbF(0.18 + t * (0.95 - 0.18), 0.65 + t * (0.77 - 0.65), 0.25 * (1 - t) + 0.1 * t)
    t = (u - 0.5) / 0.5
    return QColor.fromRgbF(0.95 - t * 0.1, 0.77 - t * 0.62, 0.1 + t * 0.05)


TIER_COLOURS = {"scale-up": QColor("#7b1fa2"), "scale-out": QColor("#1565c0"), None: QColor("#78909c")}


class LinkItem(QGraphicsItem):
    """A drawn link between two NodeItems; the scene updates its ends when they move."""

    Type = QGraphicsItem.UserType + 2

    def __init__(self, link_id: str, a: str, b: str):
        super().__init__()
        self.link_id, self.a, self.b = link_id, a, b
        self.utilization: float | None = None
        self.bottleneck = False
        self.tier: str | None = None
        self.lanes = 1
        self._line = QLineF()
        self._shape = None
        self._bounds = QRectF()
        self._pen = QPen()
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(5)

    def type(self) -> int:  # noqa: A003
        return LinkItem.Type

    def restyle(self) -> None:
        if self.utilization is not None:
            colour = utilization_colour(self.utilization)
        else:
            colour = TIER_COLOURS.get(self.tier, TIER_COLOURS[None])
        width = 1.3 + min(2.5, math.log2(max(1, self.lanes)) * 0.5)
        if self.bottleneck:
            width = 5.0
            colour = QColor("#d50000")
        pen = QPen(colour, width)
        pen.setCosmetic(True)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        self._pen = pen
        self.setZValue(6 if self.bottleneck else 5)
        self.update()

    def pen(self) -> QPen:
        return self._pen

    def set_line(self, line: QLineF) -> None:
        self.prepareGeometryChange()
        self._line = line
        self._shape = None
        x1, y1, x2, y2 = line.x1(), line.y1(), line.x2(), line.y2()
        self._bounds = QRectF(min(x1, x2) - 4, min(y1, y2) - 4, abs(x2 - x1) + 8, abs(y2 - y1) + 8)

    def line(self) -> QLineF:
        return self._line

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        if self._shape is None:
            path = QPainterPath()
            path.moveTo(self._line.p1())
            path.lineTo(self._line.p2())
            stroker = QPainterPathStroker()
            stroker.setWidth(6)
            self._shape = stroker.createStroke(path)
        return self._shape

    def paint(self, painter, option, widget=None) -> None:
        if option.state & QStyle.StateFlag.State_Selected:
            pen = QPen(QColor("#ff6d00"), self.pen().widthF() + 2.5)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawLine(self._line)
            return
        painter.setPen(self._pen)
        painter.drawLine(self._line)


def clip_to_rect(inside: QPointF, outside: QPointF, rect: QRectF) -> QPointF:
    """Where the segment from `inside` (the rect's centre) towards `outside` leaves the rect."""
    dx, dy = outside.x() - inside.x(), outside.y() - inside.y()
    if dx == 0 and dy == 0:
        return inside
    tx = (rect.width() / 2) / abs(dx) if dx else math.inf
    ty = (rect.height() / 2) / abs(dy) if dy else math.inf
    t = min(1.0, tx, ty)
    return QPointF(inside.x() + dx * t, inside.y() + dy * t)


def link_line(a: NodeItem, b: NodeItem) -> QLineF:
    ra, rb = a.sceneBoundingRect(), b.sceneBoundingRect()
    if a.container:
        ra = QRectF(ra.left(), ra.top(), ra.width(), HEADER_H)
    if b.container:
        rb = QRectF(rb.left(), rb.top(), rb.width(), HEADER_H)
    ca, cb = ra.center(), rb.center()
    return QLineF(clip_to_rect(ca, cb, ra), clip_to_rect(cb, ca, rb))
