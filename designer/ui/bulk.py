"""Edit ▸ Replace Part… and Edit ▸ Wire…: changes to many items at once, each one undo step.

Replace Part swaps one catalogue part for another of the same kind everywhere or in the selection
(`model.part_change.change_parts`); a server platform's accelerators and NICs may go with it. Wire
links the selected NICs (or those in the selected servers) to the selected switches by a rule
(`model.wiring`), ports counted before anything is made. Both dialogs say what the change will do,
or why it cannot be made, before the button that makes it is enabled.
"""

from __future__ import annotations

from collections import Counter

import shiboken6
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLayout,
                               QMainWindow, QMenu, QRadioButton, QSpinBox, QVBoxLayout, QWidget)

from designer.document.document import Document
from designer.model import placement, wiring
from designer.model.edits import Edit
from designer.model.errors import DesignerError
from designer.model.part_change import change_parts, using_part

_ERROR_STYLE = "color: #b00020;"


def _plural(n: int, kind: str) -> str:
    words = {"switch": "switches", "accelerator": "accelerators", "nic": "NICs", "cpu": "CPUs", "medium": "media"}
    word = "NIC" if kind == "nic" and n == 1 else ("CPU" if kind == "cpu" and n == 1 else kind)
    return f"{n:,} {word if n == 1 else words.get(kind, f'{kind}s')}"


class _BulkDialog(QDialog):
    """A form, a line saying what the change does (or why not), and the button that makes it."""

    def __init__(self, document: Document, title: str, button: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.document = document
        self.edit: Edit | None = None
        layout = QVBoxLayout(self)
        # The dialog grows with its summary (a refusal may take three lines) rather than squeeze the form.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        self.form = QFormLayout()
        layout.addLayout(self.form)
        self.summary = QLabel()
        self.summary.setObjectName("bulk_summary")
        self.summary.setWordWrap(True)
        self.summary.setMinimumWidth(460)
        layout.addWidget(self.summary)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.addButton(button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok_button.setObjectName("bulk_ok")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def _show(self, edit: Edit | None, text: str) -> None:
        self.edit = edit
        self.summary.setText(text)
        self.summary.setStyleSheet("" if edit is not None else _ERROR_STYLE)
        self.ok_button.setEnabled(edit is not None)
        # Grow for a longer summary (never shrink what the user widened): wrapped labels do not
        # raise a dialog's minimum height themselves.
        needed = self.layout().totalHeightForWidth(self.width())
        if needed > self.height():
            self.resize(self.width(), needed)

    def accept(self) -> None:
        if self.edit is not None and self.document.apply(self.edit):
            super().accept()


class ReplacePartDialog(_BulkDialog):
    """Replace [part used in the design] with [another of its kind], everywhere or in the selection."""

    def __init__(self, document: Document, selection: list[str], parent: QWidget | None = None):
        super().__init__(document, "Replace Part", "Replace", parent)
        self.selection = [i for i in selection if i in document.design.items]
        design, catalog = document.design, document.catalog
        used = Counter(i.part for i in design.items.values() if i.part is not None and catalog.get(i.part))
        # Offered first: the part of the selected items themselves, else the commonest inside them.
        chosen = Counter(design.items[i].part for i in self.selection if design.items[i].part in used) \
            or Counter(design.items[i].part for i in using_part_ids(design, self.selection))
        self.old = QComboBox()
        self.old.setObjectName("replace_old")
        for part_id, _ in sorted(used.items(), key=lambda kv: (catalog[kv[0]].kind, catalog[kv[0]].name)):
            part = catalog[part_id]
            self.old.addItem(f"{part.name} ({part.kind}, {used[part_id]:,} in the design)", part_id)
        if chosen:
            self.old.setCurrentIndex(self.old.findData(chosen.most_common(1)[0][0]))
        self.new = QComboBox()
        self.new.setObjectName("replace_new")
        self.everywhere = QRadioButton("Everywhere in the design")
        self.in_selection = QRadioButton("In the selection only")
        self.in_selection.setEnabled(bool(self.selection))
        (self.in_selection if self.selection else self.everywhere).setChecked(True)
        self.with_contents = QCheckBox("Also change their accelerators and NICs to the new platform's")
        self.with_contents.setObjectName("replace_with_contents")
        self.with_contents.setChecked(True)
        self.form.addRow("Replace", self.old)
        self.form.addRow("With", self.new)
        self.form.addRow("Where", self.everywhere)
        self.form.addRow("", self.in_selection)
        self.form.addRow("", self.with_contents)
        self.old.currentIndexChanged.connect(self._fill_new)
        self.new.currentIndexChanged.connect(self._update)
        self.everywhere.toggled.connect(self._update)
        self.with_contents.toggled.connect(self._update)
        self._fill_new()

    def _fill_new(self) -> None:
        catalog = self.document.catalog
        old = catalog.get(self.old.currentData())
        self.new.blockSignals(True)
        self.new.clear()
        if old is not None:
            for part in catalog.of_kind(old.kind):
                if part.id != old.id:
                    self.new.addItem(part.name, part.id)
        self.new.blockSignals(False)
        self.with_contents.setVisible(old is not None and old.kind == "server")
        self._update()

    def _update(self) -> None:
        design, catalog = self.document.design, self.document.catalog
        old, new = catalog.get(self.old.currentData()), catalog.get(self.new.currentData())
        if old is None or new is None:
            return self._show(None, "Nothing to replace: the design holds no catalogue part with another of its kind")
        if old.kind == "server":
            contents = [catalog.get(new.get(k)) for k in ("default_accelerator", "default_nic")]
            names = " and ".join(p.name for p in contents if p is not None)
            self.with_contents.setText("Also change their accelerators and NICs to the new platform's"
                                       + (f" ({names})" if names else ""))
        within = None if self.everywhere.isChecked() else self.selection
        ids = using_part(design, old.id, within)
        if not ids:
            return self._show(None, f"No {old.name} in the selection" if within is not None
                              else f"No {old.name} in the design")
        change = change_parts(design, catalog, ids, new.id, with_contents=self.with_contents.isChecked()
                              and old.kind == "server",
                              text=f"Replace {old.name} with {new.name} ({_plural(len(ids), old.kind)})")
        if change.edit is None:
            hint = ""
            if old.kind == "server" and not self.with_contents.isChecked() and change_parts(
                    design, catalog, ids, new.id, with_contents=True).edit is not None:
                hint = " Tick “Also change their accelerators and NICs” to swap them with the platform."
            return self._show(None, "Cannot replace: " + "; ".join(change.problems[:3]) + "." + hint)
        with_them = Counter(design.items[i].kind for i in change.contents)
        extra = " and ".join(_plural(n, kind) for kind, n in sorted(with_them.items()))
        self._show(change.edit, f"Changes {_plural(len(ids), old.kind)} from {old.name} to {new.name}"
                   + (f", and {extra} with them" if extra else "") + ", as one undo step.")


def using_part_ids(design, selection: list[str]) -> list[str]:
    """The selected items and everything inside them that has a part."""
    index = design.children_index()
    ids = dict.fromkeys(selection)
    for item_id in selection:
        ids.update(dict.fromkeys(d.id for d in design.descendants(item_id, index)))
    return [i for i in ids if design.items[i].part is not None]


class WireDialog(_BulkDialog):
    """Wire the selected NICs (or those in the selected servers) to the selected switches."""

    def __init__(self, document: Document, selection: list[str], parent: QWidget | None = None):
        super().__init__(document, "Wire NICs to Switches", "Wire", parent)
        design, catalog = document.design, document.catalog
        self.nics = wiring.nics_of(design, selection)
        self.switches = wiring.switches_of(design, selection)
        servers = {s.id for n in self.nics if (s := design.enclosing(n, "server")) is not None}
        names = [design.items[s].label for s in self.switches]
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]}, {names[1]} … {names[-1]}"
        where = f" in {_plural(len(servers), 'server')}" if servers else ""
        ends = QLabel(f"{_plural(len(self.nics), 'nic')}{where} → {_plural(len(self.switches), 'switch')}"
                      + (f" ({shown})" if names else ""))
        ends.setWordWrap(True)
        self.form.addRow("Wiring", ends)
        self.rule = QComboBox()
        self.rule.setObjectName("wire_rule")
        for rule, words in wiring.RULES.items():
            self.rule.addItem(words, rule)
        self.medium = QComboBox()
        self.medium.setObjectName("wire_medium")
        for medium in wiring.common_media(design, catalog, self.nics, self.switches):
            part = catalog.get(medium)
            self.medium.addItem(part.name if part else medium, medium)
        self.lanes = QSpinBox()
        self.lanes.setObjectName("wire_lanes")
        self.lanes.setRange(1, 4096)
        self.form.addRow("Rule", self.rule)
        self.form.addRow("Medium", self.medium)
        self.form.addRow("Lanes per link", self.lanes)
        self.rule.currentIndexChanged.connect(self._update)
        self.medium.currentIndexChanged.connect(self._on_medium)
        self.lanes.valueChanged.connect(self._update)
        self._on_medium()

    def _on_medium(self) -> None:
        medium = self.medium.currentData()
        if medium is not None:
            self.lanes.blockSignals(True)
            self.lanes.setValue(placement.default_lanes(self.document.catalog, medium))
            self.lanes.blockSignals(False)
        self._update()

    def _update(self) -> None:
        design, catalog = self.document.design, self.document.catalog
        medium = self.medium.currentData()
        try:
            plan = wiring.plan(design, self.nics, self.switches, self.rule.currentData())
            if medium is None:
                return self._show(None, "Cannot wire: the NICs and switches share no medium")
            edit = wiring.wire(design, catalog, plan, medium, self.lanes.value())
        except DesignerError as exc:
            return self._show(None, str(exc))
        kept = len(plan.already_linked)
        self._show(edit, f"Makes {_plural(len(plan.pairs), 'link')}"
                   + (f" ({kept:,} NIC–switch pair{'s are' if kept > 1 else ' is'} already linked and left as is)"
                      if kept else "") + ", as one undo step.")


def install_bulk_actions(window: QMainWindow, edit_menu: QMenu) -> None:
    """Edit ▸ Replace Part… and Wire…, also on the canvas's right-click menu."""
    from PySide6.QtGui import QAction

    def selection() -> list[str]:
        return [i for i in window.scene.selection()[0] if i in window.document.design.items]

    def open_dialog(kind) -> None:
        dialog = kind(window.document, selection(), window)
        window.bulk_dialog = dialog
        dialog.open()

    replace = QAction("Replace &Part…", window)
    replace.setObjectName("replace_part")
    replace.setStatusTip("Swap one catalogue part for another everywhere, or in the selection, as one step")
    replace.triggered.connect(lambda: open_dialog(ReplacePartDialog))
    wire = QAction("&Wire…", window)
    wire.setObjectName("wire")
    wire.setStatusTip("Link the selected NICs (or those in the selected servers) to the selected switches by a rule")
    wire.triggered.connect(lambda: open_dialog(WireDialog))
    window.act_replace_part, window.act_wire = replace, wire
    window.bulk_dialog = None
    edit_menu.addAction(replace)
    edit_menu.addAction(wire)
    # In the right-click menu beside the editing actions, above the what-if ones.
    view_actions = window.view.actions()
    after = view_actions.index(window.act_tidy) + 1 if window.act_tidy in view_actions else len(view_actions)
    before = view_actions[after] if after < len(view_actions) else None
    for action in (replace, wire):
        window.view.insertAction(before, action)

    def follow_selection() -> None:
        # The scene signals its selection emptied while it is torn down, after its C++ side is gone.
        if shiboken6.isValid(window.scene):
            wire.setEnabled(bool(selection()))

    window.scene.selectionChanged.connect(follow_selection)
    follow_selection()
