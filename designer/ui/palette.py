"""The palette: catalogue parts by category with a search box; drag a part onto the canvas. Each
entry's tooltip holds its whole name (the column may cut it) and the part's key figures."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QDrag, QIcon
from PySide6.QtWidgets import QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget, QAbstractItemView

from designer.canvas.interactions import PART_MIME
from designer.model.catalog import Catalog, Part
from designer.paths import icons_dir
from designer.ui.results.formatting import compute_text

CATEGORIES = (("rack", "Racks"), ("server", "Servers"), ("accelerator", "Accelerators"), ("cpu", "CPUs"),
              ("nic", "NICs"), ("switch", "Switches"))
PART_ROLE = Qt.ItemDataRole.UserRole + 1


def kind_icon(kind: str) -> QIcon:
    path = icons_dir() / f"{kind}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def _watts(watts: float) -> str:
    return f"{watts / 1000:,.3g} kW" if watts >= 1000 else f"{watts:,.0f} W"


def part_specs(part: Part, catalog: Catalog) -> str:
    """A part's key figures in one line: "989 TFLOPS BF16, 80 GiB HBM3, 700 W" (an accelerator),
    "8 × NVIDIA H100 SXM5 80GB, 10.2 kW, 8U" (a server), "64 × 400 Gb/s, 6.4 TB/s, 1.72 kW" (a switch)."""
    figures: list[str] = []
    if part.kind == "accelerator":
        if "bf16" in part.peak_tflops:
            figures.append(f"{compute_text(part.peak_tflops['bf16'])} BF16")
        if part.get("memory_gib") is not None:
            figures.append(f"{part.number('memory_gib'):,g} GiB {str(part.get('memory_type', '')).upper()}".rstrip())
    elif part.kind == "server":
        slots, accelerator = part.get("accelerator_slots"), catalog.get(part.get("default_accelerator"))
        if slots:
            figures.append(f"{slots} × {accelerator.name if accelerator else 'accelerator'}")
        if part.get("default_nics"):
            figures.append(f"{part.get('default_nics')} NICs")
    elif part.kind in ("switch", "nic"):
        if part.get("ports") and part.get("port_gbps"):
            figures.append(f"{part.get('ports'):,} × {part.number('port_gbps'):,g} Gb/s")
        if part.get("bandwidth_tb_per_s"):
            figures.append(f"{part.number('bandwidth_tb_per_s'):,g} TB/s")
    elif part.kind == "cpu" and part.get("cores"):
        figures.append(f"{part.get('cores')} cores")
    elif part.kind == "rack" and part.get("power_budget_kw") is not None:
        figures.append(f"{part.number('power_budget_kw'):,g} kW budget")
    power = part.get("system_power_w", part.get("power_w"))
    if power and part.kind != "rack":
        figures.append(_watts(float(power)))
    if part.get("height_u"):
        figures.append(f"{part.get('height_u')}U")
    return ", ".join(figures)


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
                specs = part_specs(part, self.catalog)
                child.setToolTip(0, f"{part.name}{' — ' + specs if specs else ''}\n{part.id}\nSource: {part.source}")
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
