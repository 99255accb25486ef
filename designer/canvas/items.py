"""Graphics items for the canvas: one NodeItem per design item (containers hold their contents
as child items), one LinkItem per drawn link. Items only draw and report; they never edit the model.

Drawing is kept cheap for 20,000 items: bounding rects are cached, pens/brushes/fonts are shared,
and text is skipped when zoomed out too far to read it."""

from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsLineItem, QGraphicsPathItem, QGraphicsScene,
                               QGraphicsSimpleTextItem)

from designer.model.layout import CONTAINER_KINDS, EMPTY_CONTAINER_H, HEADER_H, LEAF_H, LEAF_W, MARGIN, MIN_CONTAINER_W
from designer.style import colors

_BRUSHES = {k: QBrush(QColor(fill)) for k, (fill, _) in colors.KIND.items()}
_PENS = {k: QPen(QColor(border), 1.2) for k, (_, border) in colors.KIND.items()}
_GROUP_PEN = QPen(QColor(colors.KIND["group"][1]), 1.4, Qt.PenStyle.DashLine)
_SELECTED_PEN = QPen(QColor(colors.SELECTION), 2.6)
_FAILED_PEN = QPen(QColor(colors.FAILED), 3.0)
_PARTLY_FAILED_PEN = QPen(QColor(colors.FAILED), 3.0, Qt.PenStyle.DashLine)  # some of its copies
_TEXT_BRUSH = QBrush(QColor(colors.TEXT))
_DIM_TEXT_BRUSH = QBrush(QColor(colors.DIM_TEXT))
_BADGE_BRUSH = QBrush(QColor(colors.GROUP_BADGE))
_BADGE_TEXT_BRUSH = QBrush(QColor(colors.BADGE_TEXT))
for _p in list(_PENS.values()) + [_GROUP_PEN, _SELECTED_PEN]:
    _p.setCosmetic(True)

_fonts: dict[str, QFont] = {}


def font(role: str) -> QFont:
    f = _fonts.get(role)
    if f is None:
        f = QFont()
        f.setPointSizeF({"leaf": 7.0, "leafpart": 6.0, "header": 8.5, "badge": 8.0, "card": 8.0}[role])
        if role in ("header", "badge"):
            f.setBold(True)
        _fonts[role] = f
    return f


def elided(text: str, role: str, width: float) -> str:
    return QFontMetricsF(font(role)).elidedText(text, Qt.TextElideMode.ElideRight, width)


def _rounded(rect: QRectF, radius: float = 5.0) -> QPainterPath:
    path = QPainterPath()
    path.addRoundedRect(rect, radius, radius)
    return path


_factory: QGraphicsScene | None = None


def _plain_child(parent: QGraphicsItem, text: bool) -> QGraphicsItem:
    """A text (or path) child made by Qt itself rather than by Python.

    An item constructed from Python is a PySide wrapper: the first time Qt calls one of its
    virtual methods (paint, when it is first drawn) the wrapper takes Python's GIL to look for an
    override. While the evaluation thread holds the GIL, thousands of such first calls stall the
    UI thread for as long as the evaluation runs. Items that Qt creates have no wrapper and never
    take the GIL, so the children with no Python behaviour of their own are made that way."""
    global _factory
    if _factory is None:
        _factory = QGraphicsScene()
    child = _factory.addSimpleText("") if text else _factory.addPath(QPainterPath())
    _factory.removeItem(child)  # first: setParentItem() across two scenes segfaults
    child.setParentItem(parent)
    child.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # a click on a label is a click on its box
    return child


def label_layer(z: float | None = None) -> QGraphicsItem:
    """A top-level item that only holds others: by default every box's label plate, above every
    link (`LABEL_Z`); during a drag, the dragged boxes or their labels (`LIFTED_Z`, `LIFTED_LABEL_Z`)."""
    layer = QGraphicsPathItem()
    layer.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)
    layer.setZValue(LABEL_Z if z is None else z)
    return layer


# Leaves and summary cards stack over the links beside them (links 5; a selected, failed or
# bottleneck link 6): a link passing a box goes behind it. Open containers stay under the links,
# which run over their backgrounds to the contents, unless a link would run over a box it does not
# join on its way: such a link goes beneath the open containers beside it too (-1) and shows only
# between boxes.
BOX_Z = 7
LINK_Z, LINK_TOP_Z, BENEATH_Z = 5, 6, -1
# A link still crosses the boxes it runs to: into a container over its header, or over leaves of
# a container it passes. So each box's texts lie on a plate of the box's colour in a layer of their
# own above every link: the plates mirror the boxes' tree (a child's plate is a child of its
# parent's plate, placed where the child is), so a move carries the labels along as it carries
# the contents.
LABEL_Z = 10
# While dragged, boxes are lifted above every other box and label, and their own labels above them.
LIFTED_Z, LIFTED_LABEL_Z = LABEL_Z + 1, LABEL_Z + 2
_NODE_FLAGS = QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
# A container encloses its contents (their links too), so Qt may skip a container off screen
# without visiting its contents, on every paint and every look-up of what lies under a point.
_CONTAINER_FLAGS = _NODE_FLAGS | QGraphicsItem.GraphicsItemFlag.ItemContainsChildrenInShape


class NodeItem(QGraphicsPathItem):
    """A design item: a rounded box with its name (and part) as text items on its label plate.

    Nothing here overrides paint/boundingRect/shape: Qt draws these items in C++ without taking
    Python's GIL, so the canvas repaints smoothly while the engine evaluates on its thread.
    Containers (rack, server, group) size themselves around their contents (`fit_to_children`)."""

    def __init__(self, item_id: str, kind: str, label: str, part_name: str = "", count: int = 1):
        super().__init__()
        self.item_id = item_id
        self.kind = kind
        self.label = label
        self.part_name = part_name
        self.count = count
        self.container = kind in CONTAINER_KINDS
        self._rect = (QRectF(0, 0, MIN_CONTAINER_W, EMPTY_CONTAINER_H) if self.container
                      else QRectF(0, 0, LEAF_W, LEAF_H))
        self.setFlags(_CONTAINER_FLAGS if self.container else _NODE_FLAGS)
        self.setBrush(_BRUSHES[kind])
        self.setPen(_GROUP_PEN if kind == "group" else _PENS[kind])
        if not self.container:
            self.setZValue(BOX_Z)
        # Made from Python, unlike the texts on it: Qt tells PySide when it deletes a Python-made item,
        # so the texts' wrappers are let go with it (a Qt-made parent deleted by Qt leaves them
        # dangling). Staged with the box, so its first paint does not wait for the GIL either.
        self.plate = QGraphicsPathItem()
        self.plate.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.plate.setBrush(_BRUSHES[kind])
        self.plate.setPen(QPen(Qt.PenStyle.NoPen))
        self._title = _plain_child(self.plate, text=True)
        self._title.setFont(font("header" if self.container else "leaf"))
        self._title.setBrush(_TEXT_BRUSH)
        self._sub: QGraphicsSimpleTextItem | None = None
        self._badge: QGraphicsPathItem | None = None
        self._badge_text: QGraphicsSimpleTextItem | None = None
        self.card = False  # drawn as a summary card, contents hidden
        self._text_on = True
        self._card_title: QGraphicsSimpleTextItem | None = None
        self._card_text: QGraphicsSimpleTextItem | None = None
        self._card_key: tuple | None = None  # what the card's texts were last laid out for
        if not self.container and part_name:
            self._add_part_text()
        self.setPath(_rounded(self._rect))
        self.refresh_text()

    def _add_part_text(self) -> None:
        self._sub = _plain_child(self.plate, text=True)
        self._sub.setFont(font("leafpart"))
        self._sub.setBrush(_DIM_TEXT_BRUSH)

    def rect(self) -> QRectF:
        return QRectF(self._rect)

    def set_rect(self, rect: QRectF) -> None:
        if rect != self._rect:
            self._rect = QRectF(rect)
            self.setPath(_rounded(rect))
            self.refresh_text()
            if self.failed:
                self._place_strike()

    def set_selected_look(self, selected: bool) -> None:
        self.setPen(_SELECTED_PEN if selected else (_GROUP_PEN if self.kind == "group" else _PENS[self.kind]))

    # -- failure what-if ------------------------------------------------------------------------
    @property
    def failed(self) -> bool:
        return getattr(self, "_strike", None) is not None

    def set_failed(self, on: bool, partly: bool = False) -> None:
        """Struck through (a line corner to corner, in the failure colour) while marked failed:
        solid when every copy is, dashed when only some of them are (`partly`).

        The strike lies on the box's label plate, above every plate and link, so it runs across the
        whole box, its own label included; it is thin and the text is drawn on an opaque plate, so
        the label still reads."""
        if on:
            if not self.failed:
                self._strike = QGraphicsLineItem(self.plate)
                self._strike.setZValue(20)
                self._place_strike()
            self._strike.setPen(_PARTLY_FAILED_PEN if partly else _FAILED_PEN)
        elif self.failed:
            strike, self._strike = self._strike, None
            strike.setParentItem(None)
            if strike.scene() is not None:
                strike.scene().removeItem(strike)

    def _place_strike(self) -> None:
        r = self._rect
        self._strike.setLine(QLineF(r.left() + 2, r.bottom() - 2, r.right() - 2, r.top() + 2))

    def refresh_text(self) -> None:
        """Lay out the label (and badge or part name) for the current rect and values."""
        rect = self._rect
        if self.container:
            badge_w = 0.0
            if self.kind == "group":
                text = f"×{self.count:,}"
                badge_w = QFontMetricsF(font("badge")).horizontalAdvance(text) + 12
                box = QRectF(rect.right() - badge_w - 6, rect.top() + 3, badge_w, HEADER_H - 6)
                if self._badge is None:
                    self._badge = _plain_child(self.plate, text=False)
                    self._badge.setBrush(_BADGE_BRUSH)
                    self._badge.setPen(QPen(Qt.PenStyle.NoPen))
                    self._badge_text = _plain_child(self.plate, text=True)
                    self._badge_text.setFont(font("badge"))
                    self._badge_text.setBrush(_BADGE_TEXT_BRUSH)
                self._badge.setPath(_rounded(box, 7))
                self._badge_text.setText(text)
                tb = self._badge_text.boundingRect()
                self._badge_text.setPos(box.center().x() - tb.width() / 2, box.center().y() - tb.height() / 2)
                badge_w += 8
            text = (self.label if not self.part_name or self.part_name == self.label
                    else f"{self.label} · {self.part_name}")
            self._title.setText(elided(text, "header", rect.width() - 16 - badge_w))
            tb = self._title.boundingRect()
            self._title.setPos(rect.left() + 8, rect.top() + (HEADER_H - tb.height()) / 2)
        else:
            inner = rect.adjusted(3, 3, -3, -3)
            self._title.setText(elided(self.label, "leaf", inner.width()))
            tb = self._title.boundingRect()
            top = inner.top() + (inner.height() / 2 - tb.height()) / 2 + (0 if self._sub else inner.height() / 4)
            self._title.setPos(inner.center().x() - tb.width() / 2, top)
            if self._sub is not None:
                self._sub.setText(elided(self.part_name, "leafpart", inner.width()))
                sb = self._sub.boundingRect()
                self._sub.setPos(inner.center().x() - sb.width() / 2,
                                 inner.center().y() + (inner.height() / 2 - sb.height()) / 2)
        self._shape_plate()

    def _shape_plate(self) -> None:
        """The plate under the texts shown: a link passing under them is hidden, not drawn across."""
        texts = [self._card_title, self._card_text] if self.card else (
            [self._title, self._sub] if self._text_on else [])
        box = QRectF()
        for text in texts:
            if text is not None and text.text():
                box = box.united(text.mapRectToParent(text.boundingRect()))
        self.plate.setPath(_rounded(box.adjusted(-2, -1, 2, 1), 3) if not box.isNull() else QPainterPath())

    # The plate follows the box: these are the only ways the canvas places or shows a box.
    def setPos(self, *pos) -> None:
        super().setPos(*pos)
        self.plate.setPos(self.pos())

    def setVisible(self, visible: bool) -> None:
        super().setVisible(visible)
        self.plate.setVisible(visible)

    def join_labels(self, holder: QGraphicsItem | None) -> None:
        if holder is None:
            if self.plate.scene() is not None:
                self.plate.scene().removeItem(self.plate)
            return
        if self.plate.scene() not in (None, holder.scene()):
            self.plate.scene().removeItem(self.plate)  # setParentItem() across two scenes segfaults
        self.plate.setParentItem(holder)

    def set_values(self, label: str, part_name: str, count: int) -> None:
        if (label, part_name, count) != (self.label, self.part_name, self.count):
            self.label, self.part_name, self.count = label, part_name, count
            if self._sub is None and part_name and not self.container:
                self._add_part_text()
            self.refresh_text()

    def set_text_visible(self, visible: bool) -> None:
        self._text_on = visible
        shown = visible and not self.card
        for child in (self._title, self._sub, self._badge_text):
            if child is not None:
                child.setVisible(shown)
        if self._badge is not None:
            self._badge.setVisible(not self.card)
        self._shape_plate()

    # --- summary card: a container too small on screen to show its contents ----------------------
    def set_card(self, on: bool, contents_changed: bool = False) -> None:
        """Hide the contents (items and links) and show the summary instead, or the reverse;
        `contents_changed`: hide or show the contents again (some may be new)."""
        if on == self.card and not contents_changed:
            return
        for child in self.childItems():
            if isinstance(child, (NodeItem, LinkItem)) or child.data(0) == TAIL:
                child.setVisible(not on)
        if on != self.card:
            self.card = on
            self.setZValue(BOX_Z if on else 0)
            self.set_text_visible(self._text_on)
            for child in (self._card_title, self._card_text):
                if child is not None:
                    child.setVisible(on)

    def set_card_text(self, title: str, lines: list[str], scale: float) -> None:
        """The summary at a constant size on screen (`scale`: the view's zoom), elided to the box
        and with as many detail lines as fit."""
        key = (title, tuple(lines), scale, self._rect)
        if key == self._card_key:
            return  # laid out for this text, zoom and size already (cards are refreshed after every edit)
        self._card_key = key
        if self._card_title is None:
            self._card_title = _plain_child(self.plate, text=True)
            self._card_title.setFont(font("header"))
            self._card_title.setBrush(_TEXT_BRUSH)
            self._card_text = _plain_child(self.plate, text=True)
            self._card_text.setFont(font("card"))
            self._card_text.setBrush(_TEXT_BRUSH)
        pad = 6.0
        width, height = self._rect.width() * scale - 2 * pad, self._rect.height() * scale - pad
        title_h = QFontMetricsF(font("header")).height()
        line_h = QFontMetricsF(font("card")).height()
        self._card_title.setText(elided(title, "header", width) if height >= title_h else "")
        fit = max(0, int((height - title_h) // line_h))
        self._card_text.setText("\n".join(elided(line, "card", width) for line in lines[:fit]))
        for child, dy in ((self._card_title, 0.0), (self._card_text, title_h)):
            child.setScale(1 / scale)
            child.setPos(self._rect.left() + pad / scale, self._rect.top() + (pad / 2 + dy) / scale)
            child.setVisible(self.card)
        self._shape_plate()

    def fit_to_children(self) -> bool:
        """Grow or shrink around the contents; returns True if the rect changed."""
        if not self.container:
            return False
        box = QRectF()
        for child in self.childItems():
            if isinstance(child, NodeItem):
                box = box.united(child.mapRectToParent(child.rect()))
        if box.isNull():
            rect = QRectF(0, 0, MIN_CONTAINER_W, EMPTY_CONTAINER_H)
        else:
            rect = box.adjusted(-MARGIN, -MARGIN - HEADER_H, MARGIN, MARGIN)
            rect.setWidth(max(rect.width(), MIN_CONTAINER_W))
        changed = rect != self._rect
        self.set_rect(rect)
        return changed

    def header_rect(self) -> QRectF:
        r = self._rect
        return QRectF(r.left(), r.top(), r.width(), HEADER_H if self.container else r.height())

    def outline_in_scene(self) -> QRectF:
        return self.mapRectToScene(self._rect)

    def set_hollow(self, on: bool) -> None:
        """Drawn as nothing of its own (box, fill, label), its contents as they are: a
        selection-only export shows the selected items inside it without the rest of it."""
        if on == (getattr(self, "_solid", None) is not None):
            return
        own = [c for c in (self._title, self._sub, self._badge, self._badge_text, self._card_title, self._card_text,
                           getattr(self, "_strike", None)) if c is not None]
        if on:
            self._solid = (self.brush(), self.pen(), self.plate.brush(), [c.isVisible() for c in own])
            self.setBrush(QBrush(Qt.BrushStyle.NoBrush))
            self.setPen(QPen(Qt.PenStyle.NoPen))
            self.plate.setBrush(QBrush(Qt.BrushStyle.NoBrush))
            for child in own:
                child.setVisible(False)
        else:
            (brush, pen, plate_brush, shown), self._solid = self._solid, None
            self.setBrush(brush)
            self.setPen(pen)
            self.plate.setBrush(plate_brush)
            for child, visible in zip(own, shown):
                child.setVisible(visible)


TAIL = "link-tail"  # the data(0) of a link's tail (`LinkItem._update_tails`)
# A click this far (scene units: pixels at 100 %) to either side of a link's line selects it: a
# 1-3 px line is not a target a hand can hit.
LINK_HIT_HALF_WIDTH = 6.0


class LinkItem(QGraphicsPathItem):
    """A drawn link between two NodeItems; the scene updates its ends when they move. Painted by
    Qt in C++, like NodeItem. Its one Python override, `shape`, widens what a click hits; a path
    item asks for its shape only when its path or pen changes (its bounding rect is cached) and
    on a look-up of what lies under a point, never on a paint."""

    def __init__(self, link_id: str, a: str, b: str):
        super().__init__()
        self._line = QLineF()
        # A link beneath the boxes beside it still runs, inside each container around an end, over
        # that container's fill to the end: drawn there by a tail, a line of its own in that
        # container beneath its contents (`_place_tails`).
        self._ends: tuple[NodeItem, ...] = ()  # the boxes the line is drawn to
        self._tails: list[tuple[NodeItem, QGraphicsPathItem]] = []
        self.link_id, self.a, self.b = link_id, a, b
        self.utilization: float | None = None
        self.bottleneck = False
        self.tier: str | None = None
        self.lanes = 1
        self.selected_look = False
        self.failed = False  # marked failed in a what-if: dashed in the failure colour
        self.failed_partly = False  # only some of its physical links: dotted
        self.detail = True  # False when zoomed out: hairlines, which Qt draws several times faster
        self.over_boxes = False  # drawn on top, it would run over boxes it does not join: drawn beneath
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(LINK_Z)

    def line(self) -> QLineF:
        return QLineF(self._line)

    def setLine(self, line: QLineF) -> None:  # noqa: N802 - QGraphicsLineItem's name, which callers use
        self._line = QLineF(line)
        path = QPainterPath(line.p1())
        path.lineTo(line.p2())
        self.setPath(path)
        if self._tails:
            self._place_tails()

    def set_line(self, line: QLineF) -> None:
        self.setLine(line)

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(max(2 * LINK_HIT_HALF_WIDTH, self.pen().widthF()))
        stroker.setCapStyle(Qt.PenCapStyle.FlatCap)
        return stroker.createStroke(self.path())

    def style_key(self) -> tuple:
        level = None if self.utilization is None else int(round(max(0.0, min(1.0, self.utilization)) * UTIL_LEVELS))
        return (level, self.tier, min(12, max(1, self.lanes).bit_length()), self.bottleneck, self.selected_look,
                self.detail, self.failed, self.failed_partly)

    def restyle(self) -> bool:
        """Apply the pen for the current state; returns False if nothing visible changed."""
        key = self.style_key()
        if key == getattr(self, "_style", None):
            return False
        self._style = key
        self.setPen(_link_pen(key))
        self._restack()
        return True

    def set_over_boxes(self, over: bool, ends: tuple[NodeItem, NodeItem] | None = None) -> None:
        """Whether the link would run over boxes it does not join; `ends`: the boxes it is drawn
        to (an end, or the summary card showing it), inside whose containers its tails run."""
        if ends is not None:
            self._ends = ends
        self.over_boxes = over
        self._restack()

    def tail_items(self) -> list[QGraphicsPathItem]:
        return [tail for _, tail in self._tails]

    def drop_tails(self) -> None:
        """Take the tails out of their containers (the link is removed, or drawn on top again)."""
        for _, tail in self._tails:
            tail.setParentItem(None)
            if tail.scene() is not None:
                tail.scene().removeItem(tail)
        self._tails = []

    def _containers_around_ends(self) -> list[NodeItem]:
        """The containers around either end below the one holding the link, where its line runs
        over their fills to the end."""
        holder, out = self.parentItem(), []
        for end in self._ends:
            node = end.parentItem()
            while isinstance(node, NodeItem) and node is not holder:
                if node not in out:
                    out.append(node)
                node = node.parentItem()
        return out

    def _place_tails(self) -> None:
        """Lay each tail along the part of the line inside its container."""
        p, q = self.mapToScene(self._line.p1()), self.mapToScene(self._line.p2())
        for container, tail in self._tails:
            a, b = container.mapFromScene(p), container.mapFromScene(q)
            clipped = _clip_segment(a, b, container.rect())
            path = QPainterPath()
            if clipped is not None:
                path.moveTo(clipped[0])
                path.lineTo(clipped[1])
            tail.setPath(path)

    def _update_tails(self, beneath: bool) -> None:
        wanted = self._containers_around_ends() if beneath and self.isVisible() else []
        if [c for c, _ in self._tails] != wanted:
            self.drop_tails()
            for container in wanted:
                tail = _plain_child(container, text=False)
                tail.setZValue(BENEATH_Z)
                tail.setData(0, TAIL)
                self._tails.append((container, tail))
        for _, tail in self._tails:
            tail.setPen(self.pen())
            tail.setVisible(not any(c.card for c, _ in self._tails))
        if self._tails:
            self._place_tails()

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt's name
        super().setVisible(visible)
        for _, tail in self._tails:
            tail.setVisible(visible)

    def _restack(self) -> None:
        """The bottleneck, a selected and a failed link on top of the others, drawn whole; a link
        that would run over boxes it does not join beneath every box beside it (`runs_over_boxes`)."""
        z = (LINK_TOP_Z if self.bottleneck or self.selected_look or self.failed
             else BENEATH_Z if self.over_boxes else LINK_Z)
        if self.zValue() != z:
            self.setZValue(z)
        if z == BENEATH_Z or self._tails:
            self._update_tails(z == BENEATH_Z)


def _clip_segment(p: QPointF, q: QPointF, rect: QRectF) -> tuple[QPointF, QPointF] | None:
    """The part of the segment p–q inside the rect (Liang–Barsky), or None."""
    t0, t1 = 0.0, 1.0
    dx, dy = q.x() - p.x(), q.y() - p.y()
    for step, room in ((-dx, p.x() - rect.left()), (dx, rect.right() - p.x()),
                       (-dy, p.y() - rect.top()), (dy, rect.bottom() - p.y())):
        if step == 0:
            if room < 0:
                return None
        elif step < 0:
            t0 = max(t0, room / step)
        else:
            t1 = min(t1, room / step)
        if t0 >= t1:
            return None
    return QPointF(p.x() + dx * t0, p.y() + dy * t0), QPointF(p.x() + dx * t1, p.y() + dy * t1)


UTIL_LEVELS = 20
_link_pens: dict[tuple, QPen] = {}


def _link_pen(key: tuple) -> QPen:
    """Shared pens: links are coloured in 5% steps of utilization."""
    pen = _link_pens.get(key)
    if pen is None:
        level, tier, lanes_bits, bottleneck, selected, detail, failed, failed_partly = key
        colour = (QColor.fromRgbF(*colors.utilization_rgb(level / UTIL_LEVELS)) if level is not None
                  else QColor(colors.tier_color(tier)))
        width = 1.3 + min(2.5, (lanes_bits - 1) * 0.5) if detail else 0.0
        if bottleneck:
            width, colour = (5.0 if detail else 3.0), QColor(colors.BOTTLENECK)
        if selected:
            colour, width = QColor(colors.SELECTION), (width + 2.0 if detail else 0.0)
        if failed:
            colour = QColor(colors.FAILED)
        pen = QPen(colour, width)
        if failed:
            pen.setStyle(Qt.PenStyle.DotLine if failed_partly else Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        # Flat caps keep Qt's raster engine on its line rasterizer, which clips a line to the
        # viewport; a round cap makes it stroke each line whole into a path and fill that, several
        # times the cost for long links (the 1,000-2,000 px switch mesh of a dragonfly cabinet).
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        _link_pens[key] = pen
    return pen


def clip_to_rect(inside: QPointF, outside: QPointF, rect: QRectF) -> QPointF:
    """Where the segment from `inside` (the rect's centre) towards `outside` leaves the rect."""
    dx, dy = outside.x() - inside.x(), outside.y() - inside.y()
    if dx == 0 and dy == 0:
        return inside
    tx = (rect.width() / 2) / abs(dx) if dx else math.inf
    ty = (rect.height() / 2) / abs(dy) if dy else math.inf
    t = min(1.0, tx, ty)
    return QPointF(inside.x() + dx * t, inside.y() + dy * t)


def depth(node: NodeItem) -> int:
    """How many boxes hold this one (0: a top-level box)."""
    count, parent = 0, node.parentItem()
    while parent is not None:
        count, parent = count + 1, parent.parentItem()
    return count


def common_ancestor(a: NodeItem, b: NodeItem) -> NodeItem | None:
    """The innermost NodeItem holding both ends (either end itself if it holds the other)."""
    seen = set()
    node = a
    while node is not None:
        seen.add(id(node))
        node = node.parentItem()
    node = b
    while node is not None:
        if id(node) in seen:
            return node
        node = node.parentItem()
    return None


def link_line(a: NodeItem, b: NodeItem, ref: NodeItem | None = None) -> QLineF:
    """The link's line between the ends' borders, in `ref`'s coordinates (the scene's if None)."""
    ra, rb = a.outline_in_scene(), b.outline_in_scene()
    if ref is not None:
        ra, rb = ref.mapRectFromScene(ra), ref.mapRectFromScene(rb)
    # An open container's links meet its header (its contents lie below); a summary card is one box.
    if a.container and not a.card:
        ra = QRectF(ra.left(), ra.top(), ra.width(), HEADER_H)
    if b.container and not b.card:
        rb = QRectF(rb.left(), rb.top(), rb.width(), HEADER_H)
    # One end above the other: from the middle of the upper one's bottom to the middle of the lower
    # one's top, so a row's links fan out between the rows rather than through their neighbours.
    if ra.bottom() <= rb.top():
        return QLineF(QPointF(ra.center().x(), ra.bottom()), QPointF(rb.center().x(), rb.top()))
    if rb.bottom() <= ra.top():
        return QLineF(QPointF(ra.center().x(), ra.top()), QPointF(rb.center().x(), rb.bottom()))
    ca, cb = ra.center(), rb.center()
    return QLineF(clip_to_rect(ca, cb, ra), clip_to_rect(cb, ca, rb))


class BoxIndex:
    """The boxes drawn, bucketed by where they lie in the scene, to find the boxes a line crosses
    without visiting every box for every link."""

    CELL = 400.0

    def __init__(self) -> None:
        self._cells: dict[tuple[int, int], list[tuple[int, NodeItem, float, float, float, float]]] = {}

    def add(self, node: NodeItem) -> None:
        if not node.isVisible():
            return
        rect = node.outline_in_scene()
        # Shrunk by a pixel: a line along a border touches the box, it does not cross it.
        entry = (id(node), node, rect.left() + 1, rect.top() + 1, rect.right() - 1, rect.bottom() - 1)
        for cell in self._cells_of(rect.left(), rect.top(), rect.right(), rect.bottom()):
            self._cells.setdefault(cell, []).append(entry)

    def _cells_of(self, left: float, top: float, right: float, bottom: float):
        size = self.CELL
        for cx in range(math.floor(left / size), math.floor(right / size) + 1):
            for cy in range(math.floor(top / size), math.floor(bottom / size) + 1):
                yield cx, cy

    def crossed(self, p: QPointF, q: QPointF, skip: set[int]):
        """The boxes the segment p–q passes through, but those whose id() is in `skip`."""
        px, py, qx, qy = p.x(), p.y(), q.x(), q.y()
        left, right, top, bottom = min(px, qx), max(px, qx), min(py, qy), max(py, qy)
        seen = set(skip)
        for cell in self._cells_of(left, top, right, bottom):
            for key, node, x0, y0, x1, y1 in self._cells.get(cell, ()):
                if key in seen:
                    continue
                seen.add(key)
                if x0 < right and left < x1 and y0 < bottom and top < y1 and _segment_crosses(
                        px, py, qx, qy, x0, y0, x1, y1):
                    yield node


def _segment_crosses(px: float, py: float, qx: float, qy: float, x0: float, y0: float, x1: float, y1: float) -> bool:
    """Whether the segment (px, py)–(qx, qy) passes through the inside of the box x0..x1 × y0..y1
    (Liang–Barsky clipping)."""
    t0, t1 = 0.0, 1.0
    dx, dy = qx - px, qy - py
    for step, room in ((-dx, px - x0), (dx, x1 - px), (-dy, py - y0), (dy, y1 - py)):
        if step == 0:
            if room < 0:
                return False
        elif step < 0:
            t0 = max(t0, room / step)
        else:
            t1 = min(t1, room / step)
        if t0 >= t1:
            return False
    return True


def runs_over_boxes(link: LinkItem, a: NodeItem, b: NodeItem, boxes: BoxIndex) -> bool:
    """Whether the link, drawn at its usual height, would run over a box that is neither of its
    ends (`a`, `b`: the boxes it is drawn to) nor holds one: a box inside a container it passes
    (an open container is stacked under the links in it), or a container it crosses on the way
    to another. A leaf or summary card beside the link, in the same holder, lies over it anyway."""
    holder = link.parentItem()
    ends: set[int] = set()
    for end in (a, b):
        node = end
        while node is not None:
            ends.add(id(node))
            node = node.parentItem()
    line = link.line()
    for node in boxes.crossed(link.mapToScene(line.p1()), link.mapToScene(line.p2()), ends):
        if holder is not None and not holder.isAncestorOf(node):
            continue
        if node.parentItem() is holder and node.zValue() > LINK_Z:
            continue
        return True
    return False
