"""The inspector: the selected item's or link's properties, editable with validation.

An invalid value is refused in place: the field turns red, the reason shows under it, and the model
is left unchanged. A part change is checked first (`model.part_change`): one that would leave
links or accelerators the new part cannot take is refused with the reasons, and where a
consistent change exists it is offered on a button. Each accepted edit is one undo step. The
part's catalogue figures are read-only, named with their units (`catalog.field_label`).

With several items (or links) selected it shows the fields they share (a group's count, the part
of items of one kind, a link's medium and lanes), each with the value they share or "mixed"; a
value entered is given to all of them as one undo step.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import (QSizePolicy, QComboBox, QFormLayout, QLabel, QLineEdit, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget, QAbstractItemView, QHeaderView)

from designer.document.document import Document
from designer.canvas.tooltips import failure_text
from designer.engine.failures import BlastRadius, blast_radius
from designer.model.edits import Edit, outermost
from designer.model.catalog import field_label
from designer.model.part_change import change_parts, check_part_change

_BAD = "QLineEdit { border: 2px solid #d50000; background: #fff0f0; }"
MIXED = "mixed"  # shown in a field whose selected items hold different values


def _shared(values: set) -> str | None:
    """The one value a selection shares, as text, or None (mixed)."""
    return f"{next(iter(values))}" if len(values) == 1 else None


def _counted(n: int, kind: str) -> str:
    plural = {"switch": "switches", "accelerator": "accelerators"}.get(kind, f"{kind}s")
    return f"{n} {kind if n == 1 else plural}"


def _narrow(combo: QComboBox) -> None:
    """A combo that takes the width the narrow dock gives it (its long part names are elided), so
    the form keeps room for the field's label."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(12)


def _common_media(design, catalog, links) -> list[str]:
    """The media every selected link's two ends support (their current media kept on offer)."""
    media: list[str] | None = None
    for link in links:
        pa, pb = catalog.get(design.items[link.a].part), catalog.get(design.items[link.b].part)
        offered = [m for m in (pa.media if pa else ()) if pb is None or m in pb.media]
        media = offered if media is None else [m for m in media if m in offered]
    for link in links:
        if link.medium not in media:
            media.append(link.medium)
    return media or []


class _WrappingText(QLabel):
    """A read-only value that wraps. The form lays its rows out for the labels' preferred widths,
    not the width they get, and would cut a second line off: the label asks for the height its
    lines need at the width it has."""

    def __init__(self, text: str):
        super().__init__(text)
        self.setWordWrap(True)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        needed = self.heightForWidth(self.width())
        if needed != self.minimumHeight():
            self.setMinimumHeight(needed)


class Inspector(QWidget):
    # Where the blast radius comes from: the scene's cache (None: computed here, on the UI thread).
    blast_source: Callable[[str], BlastRadius | None] | None = None

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.document = document
        self.item_id: str | None = None
        self.link_id: str | None = None
        # A selection of several: the fields they share are edited for all of them at once.
        self.item_ids: list[str] = []
        self.link_ids: list[str] = []
        self._selected = 0  # as selected, contents riding along included
        self.fields: dict[str, QWidget] = {}
        self._refresh_pending = False
        self._refreshing = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        self.title = QLabel("Nothing selected")
        self.title.setWordWrap(True)
        self.title.setStyleSheet("font-weight: bold;")
        outer.addWidget(self.title)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        outer.addWidget(self.form_host)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        outer.addWidget(self.error)
        # The consistent change offered when a part change alone is refused (a platform's own
        # accelerators with the platform, say): one click, one undo step.
        self.fix_button = QPushButton()
        self.fix_button.setObjectName("inspector_fix")
        self.fix_button.hide()
        self.fix_button.clicked.connect(self._apply_fix)
        self._fix: Edit | None = None
        outer.addWidget(self.fix_button)
        self.figures = QTableWidget(0, 2)
        self.figures.setHorizontalHeaderLabels(["Catalogue figure", "Value"])
        self.figures.verticalHeader().setVisible(False)
        self.figures.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.figures.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.figures.horizontalHeader().setStretchLastSection(True)
        self.figures.setWordWrap(True)
        self.figures.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        outer.addWidget(self.figures, 1)
        document.changed.connect(self._on_changed)

    def sizeHint(self) -> QSize:  # a steady width: selecting must not resize the dock
        return QSize(270, 420)

    # --- showing ---------------------------------------------------------------------------
    def show_selection(self, item_ids: list[str], link_ids: list[str]) -> None:
        # What is inside a selected item rides along with it (a rubber band catches both): the
        # fields shown are the outermost items'.
        self._selected = len(item_ids) + len(link_ids)
        item_ids = outermost(self.document.design, item_ids)
        self.item_id = item_ids[0] if len(item_ids) == 1 and not link_ids else None
        self.link_id = link_ids[0] if len(link_ids) == 1 and not item_ids else None
        self.item_ids, self.link_ids = list(item_ids), list(link_ids)
        self.refresh()

    def _on_changed(self, change) -> None:
        design = self.document.design
        if (self.item_id and self.item_id not in design.items) or (self.link_id and self.link_id not in design.links):
            self.item_id = self.link_id = None
        self.item_ids = [i for i in self.item_ids if i in design.items]
        self.link_ids = [i for i in self.link_ids if i in design.links]
        # Deferred: the change may come from a field of this form, still inside its signal.
        if not self._refresh_pending:
            self._refresh_pending = True
            QTimer.singleShot(0, self.refresh)

    def _clear_form(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        self.error.hide()
        self._offer(None)
        self.figures.setRowCount(0)

    def refresh(self) -> None:
        self._refresh_pending = False
        self._refreshing = True
        try:
            self._refresh()
        finally:
            self._refreshing = False

    def _refresh(self) -> None:
        self._clear_form()
        design, catalog = self.document.design, self.document.catalog
        # A selection shown just before an edit removed it (a refresh is queued by both) shows nothing.
        if self.item_id not in design.items:
            self.item_id = None
        if self.link_id not in design.links:
            self.link_id = None
        if self.item_id:
            item = design.items[self.item_id]
            self.title.setText(f"{item.label}  ({item.kind})")
            self._readonly("Id", item.id)
            self._line("name", "Name", item.name, "Display name; F2 on the canvas renames in place")
            if item.kind == "group":
                self._line("count", "Count", str(item.count), "Copies this group stands for (1 – 1,000,000)")
                self._readonly("Copies in total", f"{design.multiplicity(item.id):,}")
            else:
                self._readonly("Copies in total", f"{design.multiplicity(item.id):,}")
            if item.part is not None:
                combo = QComboBox()
                parts = catalog.of_kind(item.kind)
                for part in parts:
                    combo.addItem(part.name, part.id)
                if catalog.get(item.part) is None:
                    combo.addItem(f"{item.part} (not in the catalogue)", item.part)
                combo.setCurrentIndex(max(0, combo.findData(item.part)))
                combo.setObjectName("inspector_part")
                combo.activated.connect(lambda _i, c=combo: self._commit_part(c.currentData()))
                self.form.addRow("Part", combo)
                self.fields["part"] = combo
                self._show_figures(item.part)
            self._readonly("Position", f"{item.x:g}, {item.y:g}")
            self._readonly("Links", str(len(design.links_of(item.id))))
            self._failure_rows(design, item.id)
        elif self.link_id:
            link = design.links[self.link_id]
            a, b = design.items[link.a], design.items[link.b]
            self.title.setText(f"Link {a.label} — {b.label}")
            self._readonly("Id", link.id)
            combo = QComboBox()
            pa, pb = catalog.get(a.part), catalog.get(b.part)
            media = [m for m in (pa.media if pa else ()) if pb is None or m in pb.media]
            if link.medium not in media:
                media.append(link.medium)
            for m in media:
                part = catalog.get(m)
                combo.addItem(part.name if part else f"{m} (not in the catalogue)", m)
            combo.setCurrentIndex(max(0, combo.findData(link.medium)))
            combo.activated.connect(lambda _i, c=combo: self._commit_link("medium", c.currentData()))
            self.form.addRow("Medium", combo)
            self.fields["medium"] = combo
            self._line("lanes", "Lanes", str(link.lanes), "Medium units bundled in this link (1 – 4096)")
            self._match_field(link)
            self._readonly("Physical links", f"{design.link_copies(link).instances:,}")
            self._what_if_row(design, link.id)
            self._show_figures(link.medium)
        elif len(self.item_ids) + len(self.link_ids) > 1:
            self._shared_fields()
        else:
            self.title.setText("Nothing selected")

    def _shared_fields(self) -> None:
        """A selection of several: the fields they all have, each showing the value they share or
        "mixed"; a value entered is given to all of them as one undo step."""
        design, catalog = self.document.design, self.document.catalog
        items = [design.items[i] for i in self.item_ids]
        links = [design.links[i] for i in self.link_ids]
        kinds = sorted({i.kind for i in items})
        if items and links:
            self.title.setText(f"{self._selected:,} selected — select only items, or only links, to edit them "
                               f"together")
            return
        what = _counted(len(items), kinds[0] if len(kinds) == 1 else "item") if items else _counted(len(links), "link")
        self.title.setText(f"{what} selected")
        if items:
            if kinds == ["group"]:
                counts = {i.count for i in items}
                self._line("count", "Count", _shared(counts), "Copies each selected group stands for (1 – 1,000,000)")
            if len(kinds) == 1 and all(i.part is not None for i in items):
                self._part_combo(kinds[0], {i.part for i in items})
            if "count" not in self.fields and "part" not in self.fields:
                self._readonly("Shared fields", "none: select items of one kind to change their part together")
            return
        media = _common_media(design, catalog, links)
        combo = QComboBox()
        combo.setObjectName("inspector_medium")
        for m in media:
            part = catalog.get(m)
            combo.addItem(part.name if part else m, m)
        used = {link.medium for link in links}
        _narrow(combo)
        combo.setPlaceholderText(MIXED)
        combo.setCurrentIndex(combo.findData(next(iter(used))) if len(used) == 1 else -1)
        if len(used) == 1:
            self._show_figures(next(iter(used)))
        combo.activated.connect(lambda _i, c=combo: self._commit_links("medium", c.currentData()))
        self.form.addRow("Medium", combo)
        self.fields["medium"] = combo
        self._line("lanes", "Lanes", _shared({link.lanes for link in links}), "Medium units bundled in each link")

    def _part_combo(self, kind: str, current: set[str]) -> None:
        catalog = self.document.catalog
        combo = QComboBox()
        for part in catalog.of_kind(kind):
            combo.addItem(part.name, part.id)
        for part_id in sorted(current):
            if catalog.get(part_id) is None:
                combo.addItem(f"{part_id} (not in the catalogue)", part_id)
        _narrow(combo)
        combo.setPlaceholderText(MIXED)
        combo.setCurrentIndex(combo.findData(next(iter(current))) if len(current) == 1 else -1)
        combo.setObjectName("inspector_part")
        combo.activated.connect(lambda _i, c=combo: self._commit_part(c.currentData()))
        self.form.addRow("Part", combo)
        self.fields["part"] = combo
        if len(current) == 1:
            self._show_figures(next(iter(current)))

    def _match_field(self, link) -> None:
        """How the copies of the two ends are joined: every to every, or copy i to copy i of two
        groups of equal count (offered only where such groups exist)."""
        design = self.document.design
        candidates = design.match_candidates(link)
        if not candidates and link.match is None:
            self._readonly("Copies joined", "every copy to every copy")
            return
        combo = QComboBox()
        combo.setObjectName("inspector_match")
        combo.setToolTip("Copy i of one group joined only to copy i of the other (e.g. spine j of every pod "
                         "to core group j)")
        choices: list = [None, *candidates]
        combo.addItem("every copy to every copy")
        for ga, gb in candidates:
            combo.addItem(f"copy i of {design.items[ga].label} ↔ copy i of {design.items[gb].label}")
        if link.match is not None and link.match not in candidates:
            choices.append(link.match)
            combo.addItem(f"{' ↔ '.join(link.match)} (does not hold: {design.match_problem(link)})")
        combo.setCurrentIndex(choices.index(link.match))
        combo.activated.connect(lambda index: self._commit_link("match", choices[index]))
        self.form.addRow("Copies joined", combo)
        self.fields["match"] = combo

    def _failure_rows(self, design, item_id: str) -> None:
        """What failing one copy of the item would do, and whether a what-if marks it failed."""
        radius = self.blast_source(item_id) if self.blast_source is not None else blast_radius(design, item_id)
        # Of one copy: a group of 16 spines that loses one cuts nothing off; losing all 16 would.
        self._readonly("Blast radius\n(one copy)", radius.text() if radius is not None else "computing…")
        self.fields["blast_radius"] = self.form.itemAt(self.form.rowCount() - 1,
                                                       QFormLayout.ItemRole.FieldRole).widget()
        self.fields["blast_radius"].setToolTip("If one copy of this item fails: the accelerators left with no path "
                                               "to the others (cut off) and those left with less bandwidth (slowed)")
        self._what_if_row(design, item_id)

    def _what_if_row(self, design, target: str) -> None:
        """How much of the item or link a what-if marks failed, and how to undo it."""
        failure = failure_text(design, target, self.document.catalog)
        if failure:
            self._readonly("What-if", f"{failure} (right-click ▸ Restore)")
            self.fields["what_if"] = self.form.itemAt(self.form.rowCount() - 1,
                                                      QFormLayout.ItemRole.FieldRole).widget()

    def _readonly(self, label: str, text: str) -> None:
        value = _WrappingText(text)
        value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.form.addRow(label, value)

    def _line(self, key: str, label: str, text: str | None, tip: str) -> QLineEdit:
        """A text field; `text` None: the selected items' values differ ("mixed" shown greyed)."""
        edit = QLineEdit(text or "")
        if text is None:
            edit.setPlaceholderText(MIXED)
        edit.setToolTip(tip)
        edit.setObjectName(f"inspector_{key}")
        edit.editingFinished.connect(lambda k=key, e=edit: self._commit_text(k, e))
        self.form.addRow(label, edit)
        self.fields[key] = edit
        return edit

    def _show_figures(self, part_id: str) -> None:
        part = self.document.catalog.get(part_id)
        if part is None:
            return
        rows = []
        for key, value in part.data.items():
            if key in ("id", "kind"):
                continue
            if hasattr(value, "items"):
                rows.extend((field_label(key, k), self._figure_text(v)) for k, v in value.items())
                continue
            rows.append((field_label(key), self._figure_text(value)))
        self.figures.setRowCount(len(rows))
        for r, (k, v) in enumerate(rows):
            self.figures.setItem(r, 0, QTableWidgetItem(k))
            cell = QTableWidgetItem(v)
            cell.setToolTip(v)
            self.figures.setItem(r, 1, cell)
        self.figures.resizeRowsToContents()

    def _figure_text(self, value) -> str:
        """A figure as a user reads it: numbers without trailing zeros, parts and media by name."""
        catalog = self.document.catalog
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, (int, float)):
            return f"{value:,g}"
        if isinstance(value, tuple):
            return ", ".join(self._figure_text(v) for v in value)
        part = catalog.get(value) if isinstance(value, str) else None
        return part.name if part is not None else str(value)

    # --- editing ------------------------------------------------------------------------------
    def _refuse(self, key: str, reason: str) -> None:
        field = self.fields.get(key)
        if isinstance(field, QLineEdit):
            field.setStyleSheet(_BAD)
        self.error.setText(reason)
        self.error.show()

    def _accept_field(self, key: str) -> None:
        field = self.fields.get(key)
        if isinstance(field, QLineEdit):
            field.setStyleSheet("")
        self.error.hide()
        self._offer(None)

    def _offer(self, fix: Edit | None, text: str = "") -> None:
        """Show the consistent change under the refusal (its words wrap in the label above; the
        button stays short in a narrow dock)."""
        self._fix = fix
        self.fix_button.setText("Make both changes" if fix is not None else "")
        self.fix_button.setToolTip(text)
        self.fix_button.setVisible(fix is not None)

    def _apply_fix(self) -> None:
        fix, self._fix = self._fix, None
        self.fix_button.hide()
        if fix is not None and self.document.apply(fix):
            self.error.hide()

    def _commit_part(self, part_id: str) -> None:
        """A part change the design would not survive is refused with the reasons (and the
        consistent change offered, where there is one) before anything changes."""
        if self.item_id is None and len(self.item_ids) > 1:
            return self._commit_parts(part_id)
        item = self.document.design.items.get(self.item_id)
        if item is None or item.part == part_id:
            return self._accept_field("part")
        check = check_part_change(self.document.design, self.document.catalog, item.id, part_id)
        if not check.problems:
            return self._commit_item("part", part_id)
        combo = self.fields["part"]
        combo.setCurrentIndex(max(0, combo.findData(item.part)))
        offer = f"\n{check.fix_text}?" if check.fix is not None else ""
        self._refuse("part", "Part not changed: " + "; ".join(check.problems) + "." + offer)
        self._offer(check.fix, check.fix_text)

    def _commit_parts(self, part_id: str) -> None:
        """The selected items all made one part, as one step; refused whole with the reasons, and
        for servers the platform change with their accelerators and NICs offered."""
        document, ids = self.document, self.item_ids
        change = change_parts(document.design, document.catalog, ids, part_id, with_contents=False)
        if not change.changed:
            return self._accept_field("part")
        if change.edit is not None:
            self._accept_field("part")
            document.apply(change.edit)
            return
        whole = change_parts(document.design, document.catalog, ids, part_id, with_contents=True)
        self._refuse("part", "Parts not changed: " + "; ".join(change.problems[:3]) + ".")
        if whole.edit is not None:
            self._offer(whole.edit, f"Also change their {len(whole.contents)} accelerators and NICs to the new "
                                    f"platform's")
        combo = self.fields["part"]
        parts = {document.design.items[i].part for i in ids}
        combo.setCurrentIndex(combo.findData(next(iter(parts))) if len(parts) == 1 else -1)

    def _commit_text(self, key: str, edit: QLineEdit) -> None:
        if self._refreshing:
            return
        text = edit.text().strip()
        if self.item_id is None and self.link_id is None and (self.item_ids or self.link_ids):
            return self._commit_shared_text(key, text)
        if self.item_id and key in ("name", "count"):
            if key == "name":
                if not text:
                    return self._refuse(key, "A name cannot be empty")
                self._commit_item("name", text)
            else:
                try:
                    value = int(text.replace(",", "").replace("_", ""))
                except ValueError:
                    return self._refuse(key, f"Count must be a whole number, got '{text}'")
                self._commit_item("count", value)
        elif self.link_id and key == "lanes":
            try:
                value = int(text.replace(",", ""))
            except ValueError:
                return self._refuse(key, f"Lanes must be a whole number, got '{text}'")
            self._commit_link("lanes", value)

    def _commit_shared_text(self, key: str, text: str) -> None:
        if not text:  # left empty: the values stay as they are ("mixed")
            return self._accept_field(key)
        try:
            value = int(text.replace(",", "").replace("_", ""))
        except ValueError:
            return self._refuse(key, f"{key.capitalize()} must be a whole number, got '{text}'")
        if key == "count":
            self._commit_items("count", value)
        elif key == "lanes":
            self._commit_links("lanes", value)

    def _commit_items(self, key: str, value) -> None:
        design = self.document.design
        ids = [i for i in self.item_ids if getattr(design.items[i], key) != value]
        for item_id in ids:
            reason = self.document.validate_item(item_id, **{key: value})
            if reason:
                return self._refuse(key, f"{design.items[item_id].label}: {reason}")
        self._accept_field(key)
        if ids:
            self.document.set_items(ids, f"Set {key} of {_counted(len(ids), design.items[ids[0]].kind)} to {value:,}",
                                    **{key: value})

    def _commit_links(self, key: str, value) -> None:
        design = self.document.design
        ids = [i for i in self.link_ids if getattr(design.links[i], key) != value]
        for link_id in ids:
            reason = self.document.validate_link(link_id, **{key: value})
            if reason:
                return self._refuse(key, reason)
        self._accept_field(key)
        if ids:
            self.document.set_links(ids, f"Set {key} of {_counted(len(ids), 'link')}", **{key: value})

    def _commit_item(self, key: str, value) -> None:
        item = self.document.design.items.get(self.item_id)
        if item is None or getattr(item, key) == value:
            self._accept_field(key)
            return
        reason = self.document.validate_item(self.item_id, **{key: value})
        if reason:
            return self._refuse(key, reason)
        self._accept_field(key)
        self.document.set_item(self.item_id, text=f"Set {key}", **{key: value})

    def _commit_link(self, key: str, value) -> None:
        link = self.document.design.links.get(self.link_id)
        if link is None or getattr(link, key) == value:
            self._accept_field(key)
            return
        reason = self.document.validate_link(self.link_id, **{key: value})
        if reason:
            return self._refuse(key, reason)
        self._accept_field(key)
        self.document.set_link(self.link_id, text=f"Set link {key}", **{key: value})
