"""The palette: catalogue parts by category with a search box; drag a part onto the canvas."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QDrag, QIcon
from PySide6.QtWidgets import QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget, QAbstractItemView

from designer.canvas.interactions import PART_MIME
from designer.model.catalog import Catalog
from designer.paths import icons_dir

CATEGORIES = (("rack", "Racks"), ("server", "Servers"), ("accelerator", "Accelerators"), ("cpu", "CPUs"),
              ("nic", "NICs"), ("switch", "Switches"))
PART_ROLE = Qt.ItemDataRole.UserRole + 1


def kind_icon(kind: str) -> QIcon:
    path = icons_dir() / f"{kind}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def part_mime(part_id: str) -> QMimeData:
    mime = QMimeData()
    mime.setData(PART_MIME, part_id.encode("utf-8"))
    mime.setText(part_id)
    return mime


class _PartTree(QTreeWidget):
    def startDrag(self, actions) -> None:
        item = self.currentItem()
        part_id = item.data(0, PART_ROLE) if item is not None else None
        if not part_id:
            return
        drag = QDrag(self)
        drag.setMimeData(part_mime(part_id))
        drag.setPixmap(item.icon(0).pixmap(32, 32))
        drag.exec(Qt.DropAction.CopyAction)

    def mimeData(self, items):
        part_id = items[0].data(0, PART_ROLE) if items else None
        return part_mime(part_id) if part_id else None


class Palette(QWidget):
    # Double-click or Enter on a part: place it at the canvas centre.
    partActivated = Signal(str)

    def __init__(self, catalog: Catalog, parent=None):
        super().__init__(parent)
        self.catalog = catalog
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search parts…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.filter)
        layout.addWidget(self.search)
        self.tree = _PartTree()
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setIconSize(QSize(18, 18))
        self.tree.setToolTip("Drag a part onto the canvas (into a rack or server to put it inside);\n"
                             "hold Shift while dropping to create a replicated group.\n"
                             "Double-click (or Enter) places it in the middle of the canvas.")
        layout.addWidget(self.tree, 1)
        self.tree.itemActivated.connect(self._activated)
        self.populate()

    def _activated(self, item, _column=0) -> None:
        part_id = item.data(0, PART_ROLE)
        if part_id:
            self.partActivated.emit(part_id)

    def populate(self) -> None:
        self.tree.clear()
        for kind, title in CATEGORIES:
            parts = self.catalog.of_kind(kind)
            category = QTreeWidgetItem([f"{title} ({len(parts)})"])
            category.setIcon(0, kind_icon(kind))
            category.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(category)
            for part in parts:
                child = QTreeWidgetItem([part.name])
                child.setIcon(0, kind_icon(kind))
                child.setData(0, PART_ROLE, part.id)
                child.setToolTip(0, f"{part.name}\n{part.id}\n{part.source}")
                category.addChild(child)
            category.setExpanded(kind in ("server", "switch"))

    def filter(self, text: str) -> None:
        words = text.lower().split()
        for i in range(self.tree.topLevelItemCount()):
            category = self.tree.topLevelItem(i)
            visible = 0
            for j in range(category.childCount()):
                child = category.child(j)
                hay = f"{child.text(0)} {child.data(0, PART_ROLE)}".lower()
                show = all(w in hay for w in words)
                child.setHidden(not show)
                visible += show
            category.setHidden(visible == 0)
            if words:
                category.setExpanded(True)

    def visible_part_ids(self) -> list[str]:
        out = []
        for i in range(self.tree.topLevelItemCount()):
            category = self.tree.topLevelItem(i)
            for j in range(category.childCount()):
                child = category.child(j)
                if not child.isHidden() and not category.isHidden():
                    out.append(child.data(0, PART_ROLE))
        return out

    def mime_for(self, part_id: str) -> QMimeData:
        """The MIME data a drag of this part carries (what a drop on the canvas reads)."""
        for i in range(self.tree.topLevelItemCount()):
            category = self.tree.topLevelItem(i)
            for j in range(category.childCount()):
                child = category.child(j)
                if child.data(0, PART_ROLE) == part_id:
                    return self.tree.mimeData([child])
        raise KeyError(part_id)
