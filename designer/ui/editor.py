"""The design editor: the document with its undo stack, the canvas (scene and view), and the
actions that edit them — clipboard, duplicate, delete, group, rename, the link tool, tidy, zoom
and the failure what-if (whose rules are `model.failure_marks`). The main window owns one and
keeps what is about files and windows: opening, saving, recent files, exports, recovery, compare
and sweep, the docks, the title and the status bar."""

from __future__ import annotations

import atexit
import json
from dataclasses import dataclass

from PySide6.QtCore import QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget

from designer.canvas.scene import DesignScene
from designer.canvas.view import DesignView
from designer.document.document import Document
from designer.engine.failures import Failure, unbuildable
from designer.model import failure_marks
from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.ui.actions import ActionSpec, make_actions

ITEMS_MIME = "application/x-cluster-designer-items"


@dataclass(frozen=True)
class EditorActions:
    """The editor's actions (`DesignEditor.actions`), one field per row of `DesignEditor._action_table`."""

    undo: QAction
    redo: QAction
    cut: QAction
    copy: QAction
    paste: QAction
    duplicate: QAction
    delete: QAction
    select_all: QAction
    group: QAction
    ungroup: QAction
    rename: QAction
    link_tool: QAction
    zoom_in: QAction
    zoom_out: QAction
    zoom_fit: QAction
    tidy: QAction
    fail: QAction
    fail_one: QAction
    fail_some: QAction
    restore: QAction
    restore_all: QAction

    def canvas_editing(self) -> tuple[QAction, ...]:
        """The editing keys that act only when the canvas has focus: Delete in the palette, a
        table or an inspector field is theirs (the menus still reach every action)."""
        return (self.rename, self.duplicate, self.delete, self.group, self.ungroup, self.cut, self.copy,
                self.paste, self.select_all)

    def what_if(self) -> tuple[QAction, ...]:
        """The right-click menu's failure actions (Restore All is in the menu bar only)."""
        return (self.fail, self.fail_one, self.fail_some, self.restore)


class DesignEditor(QObject):
    """The document, its canvas and the actions that edit them, in `host` (the main window: it
    owns the actions, the document and the scene, and parents the dialogs)."""

    message = Signal(str, int)  # a status-bar message and how long it shows (ms)

    def __init__(self, catalog: Catalog, host: QWidget):
        super().__init__(host)
        self.catalog = catalog
        self.host = host
        self.document = Document(Design(), catalog, parent=host)
        self.scene = DesignScene(self.document, host)
        self.view = DesignView(self.scene)
        self._paste_count = 0

    def _say(self, text: str, timeout_ms: int = 8000) -> None:
        self.message.emit(text, timeout_ms)

    # --- actions -------------------------------------------------------------------------------
    def _action_table(self) -> list[ActionSpec]:
        keys = QKeySequence.StandardKey
        stack = self.document.undo_stack
        return [
            # The menu item names the step ("Undo Add Server"); the toolbar button keeps a fixed
            # icon text, so the toolbar never reflows.
            ActionSpec("undo", "&Undo", stack.undo, keys.Undo),
            # Both redo keys everywhere: a platform's standard binding holds only one of them (Ctrl+Y
            # offscreen and on Windows, Ctrl+Shift+Z on X11), and users reach for either.
            ActionSpec("redo", "&Redo", stack.redo,
                       [*QKeySequence.keyBindings(keys.Redo), QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")]),
            ActionSpec("cut", "Cu&t", self.cut, keys.Cut),
            ActionSpec("copy", "&Copy", self.copy, keys.Copy),
            ActionSpec("paste", "&Paste", self.paste, keys.Paste),
            ActionSpec("duplicate", "D&uplicate", self.duplicate, "Ctrl+D",
                       "Copy the selection with its internal links"),
            ActionSpec("delete", "&Delete", self.delete_selection,
                       [QKeySequence(keys.Delete), QKeySequence("Backspace")],
                       "Delete the selection with its contents and links"),
            ActionSpec("select_all", "Select &All", self.select_all, keys.SelectAll),
            ActionSpec("group", "&Group", self.group_selection, "Ctrl+G", "Wrap the selection in a group",
                       icon="group"),
            ActionSpec("ungroup", "U&ngroup", self.ungroup_selection, "Ctrl+Shift+G", "Dissolve the selected groups"),
            ActionSpec("rename", "&Rename", self.rename_selection, "F2", "Rename the selected item in place"),
            ActionSpec("link_tool", "&Link Tool", self._set_link_tool, "L",
                       "Drag from one item to another to link them (or Shift-drag without the tool)", icon="link",
                       checkable=True),
            ActionSpec("zoom_in", "Zoom &In", lambda: self.view.zoom(1.25),
                       [QKeySequence(keys.ZoomIn), QKeySequence("Ctrl+=")]),
            ActionSpec("zoom_out", "Zoom &Out", lambda: self.view.zoom(0.8), keys.ZoomOut),
            ActionSpec("zoom_fit", "Zoom to &Fit", self.view.zoom_to_fit, "Ctrl+0", "Show the whole design"),
            ActionSpec("tidy", "&Tidy Layout", self.tidy_layout, "Ctrl+Shift+L",
                       "Arrange the selected containers' contents (or the whole design) in rows, nothing overlapping"),
            # Right-click ▸ Fail / Fail One Copy / Restore: marks in `settings["failures"]`, one undo
            # step each; the engine then adds the degraded figures (Goodput tab).
            ActionSpec("fail", "&Fail", lambda: self.mark_failed(None), None,
                       "What-if: take the selection (every copy) out of service and compare with the healthy design"),
            ActionSpec("fail_one", "Fail &One Copy", lambda: self.mark_failed(1), None,
                       "What-if: take one copy of the selected item out of service"),
            ActionSpec("fail_some", "Fail &Some Copies…", self.fail_some_copies, None,
                       "What-if: take a number or a share of the selected item's copies (or link's physical links) "
                       "out of service"),
            ActionSpec("restore", "&Restore", self.restore_failed, None, "Put the selection back in service"),
            ActionSpec("restore_all", "Restore &All",
                       lambda: self.document.set_setting("failures", None, "Restore All"), None,
                       "Put every part marked failed back in service"),
        ]

    def build_actions(self) -> EditorActions:
        """Make the actions (on the host), wire them to the undo stack, the canvas and the
        selection, and put the canvas's own on its right-click menu."""
        self.actions = acts = EditorActions(**make_actions(self.host, self._action_table()))
        stack = self.document.undo_stack
        stack.canUndoChanged.connect(acts.undo.setEnabled)
        stack.canRedoChanged.connect(acts.redo.setEnabled)
        stack.undoTextChanged.connect(lambda text: self.tell_step(acts.undo, "Undo", text))
        stack.redoTextChanged.connect(lambda text: self.tell_step(acts.redo, "Redo", text))
        for action, what in ((acts.undo, "Undo"), (acts.redo, "Redo")):
            self.tell_step(action, what, "")
            action.setEnabled(False)
        for action in (*acts.canvas_editing(), acts.undo, acts.redo, acts.tidy):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.view.addAction(action)
        for action in acts.canvas_editing():
            self.host.removeAction(action)
        # In the right-click menu the what-if stands apart from the editing actions above it.
        separator = QAction(self.host)
        separator.setSeparator(True)
        self.view.addAction(separator)
        for action in acts.what_if():
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.host.removeAction(action)
            self.view.addAction(action)
        acts.restore_all.setEnabled(False)
        self.view.linkToolLeft.connect(lambda: acts.link_tool.setChecked(False))
        self.scene.selectionChanged.connect(self._on_selection)
        self.document.changed.connect(self._on_failures_changed)
        self._on_selection()
        return acts

    @staticmethod
    def tell_step(action: QAction, what: str, step: str) -> None:
        """Undo/Redo named after the step they take ("Undo Add Server"); the icon text stays fixed."""
        tip = f"{what} {step}" if step else f"Nothing to {what.lower()}"
        action.setText(f"&{what} {step.replace('&', '&&')}" if step else f"&{what}")
        action.setIconText(what)
        action.setToolTip(tip)
        action.setStatusTip(tip)

    # --- selection -----------------------------------------------------------------------------
    def selection(self) -> tuple[list[str], list[str]]:
        """The selected items and links still in the design (while the scene mirrors a removal,
        nodes of items already gone may still be selected)."""
        items, links = self.scene.selection()
        return failure_marks.known(self.document.design, items, links)

    def _on_selection(self) -> None:
        items, links = self.selection()
        acts = self.actions
        for action in (acts.cut, acts.copy, acts.duplicate):
            action.setEnabled(bool(items))
        acts.delete.setEnabled(bool(items or links))
        acts.group.setEnabled(bool(items))
        acts.rename.setEnabled(len(items) == 1)
        acts.ungroup.setEnabled(any(self.document.design.items[i].kind == "group" for i in items))
        self._update_failure_actions(items, links)

    def select_finding(self, item_id: str) -> None:
        """A lint finding's item or link selected and scrolled into view."""
        target = self.scene.nodes.get(item_id) or self.scene.link_items.get(item_id)
        if target is None:
            self._say("That finding's item is no longer on the canvas")
            return
        self.scene.select_ids([item_id])
        self.view.ensureVisible(target.sceneBoundingRect(), 60, 60)

    # --- editing -------------------------------------------------------------------------------
    def delete_selection(self) -> None:
        items, links = self.scene.selection()
        if not items and not links:
            return
        n = len(items) + len(links)
        self.document.remove(items, links, text=f"Delete {n} items" if n > 1 else "Delete")

    def copy(self) -> bool:
        items = self.scene.selected_ids()
        if not items:
            return False
        fragment = self.document.fragment(items)
        mime = QMimeData()
        mime.setData(ITEMS_MIME, json.dumps(fragment).encode("utf-8"))
        mime.setText(", ".join(self.document.design.items[r].label for r in fragment["roots"]))
        QApplication.clipboard().setMimeData(mime)
        _release_clipboard_at_exit()
        self._paste_count = 0
        self._say(f"Copied {len(fragment['items'])} items and {len(fragment['links'])} links")
        return True

    def cut(self) -> None:
        """Copy the selected items, then delete them and the selected links, as one undo step."""
        if self.copy():
            self.document.remove(self.scene.selected_ids(), self.scene.selected_link_ids(), text="Cut")

    def paste(self) -> list[str]:
        mime = QApplication.clipboard().mimeData()
        if mime is None or not mime.hasFormat(ITEMS_MIME):
            self._say("Nothing to paste")
            return []
        fragment = json.loads(mime.data(ITEMS_MIME).data().decode("utf-8"))
        self._paste_count += 1
        offset = 40.0 * self._paste_count
        new = self.document.paste(fragment, (offset, offset))
        self.scene.select_ids(new)
        return new

    def duplicate(self) -> list[str]:
        """A copy of the selection beside it (to the right, clear of other items)."""
        items = self.scene.selected_ids()
        if not items:
            return []
        fragment = self.document.fragment(items)
        offset = self.scene.interactions.free_offset_beside(fragment["roots"])
        new = self.document.paste(fragment, offset, text="Duplicate")
        self.scene.select_ids(new)
        return new

    def select_all(self) -> None:
        self.scene.select_all()

    def group_selection(self) -> None:
        group_id = self.document.group(self.scene.selected_ids())
        if group_id:
            self.scene.select_ids([group_id])

    def ungroup_selection(self) -> None:
        """Each selected group becomes as many drawn copies as it stands for, side by side."""
        design = self.document.design
        groups = [i for i in self.scene.selected_ids() if i in design.items and design.items[i].kind == "group"]
        sizes = {g: (self.scene.nodes[g].rect().width(), self.scene.nodes[g].rect().height())
                 for g in groups if g in self.scene.nodes}
        placed = self.document.ungroup(groups, sizes)
        if placed:
            self.scene.select_ids(placed)
            self._say(f"Ungrouped into {len(placed):,} item{'s' if len(placed) != 1 else ''}")

    def rename_selection(self) -> None:
        items = self.scene.selected_ids()
        if len(items) == 1:
            self.view.start_rename(items[0])

    def tidy_layout(self) -> None:
        selected = self.scene.selected_ids()
        if not self.document.tidy_layout(selected):
            self._say("Already tidy: nothing to move")

    def place_part(self, part_id: str) -> list[str]:
        """Place a part in the middle of the visible canvas (inside the rack/server there)."""
        centre = self.view.mapToScene(self.view.viewport().rect().center())
        return self.scene.interactions.drop_part(part_id, centre)

    def _set_link_tool(self, on: bool) -> None:
        self.view.link_tool = bool(on)
        self._say("Link tool: drag from one item to another" if on else "Link tool off", 4000)

    # --- failure what-if -----------------------------------------------------------------------
    def _on_failures_changed(self, change) -> None:
        """A mark made or taken back (Fail, Restore, their undo) changes what the selection can do
        at once: Restore is offered for what was just failed without selecting it again."""
        if not (change.reset or "failures" in change.settings_changed):
            return
        self.actions.restore_all.setEnabled(bool(self.document.design.settings.get("failures")))
        self._update_failure_actions(*self.selection())

    def _update_failure_actions(self, items: list[str], links: list[str]) -> None:
        offer = failure_marks.offer(self.document.design, items, links)
        acts = self.actions
        acts.fail.setEnabled(offer.fail)
        acts.fail_one.setEnabled(offer.fail_one)
        acts.restore.setEnabled(offer.restore)
        acts.fail_some.setEnabled(offer.fail_some)

    def mark_failed(self, copies: int | None) -> None:
        """Fail (`copies` None: every copy) or Fail One Copy (`copies` 1) of the selection, one undo step."""
        design = self.document.design
        items, links = self.scene.selection()
        chosen = failure_marks.targets_to_fail(design, items, links, copies)
        if not chosen:
            return
        failures = [Failure(i, copies) for i in chosen]
        text = "Fail" if copies is None else "Fail One Copy"
        # A copy of matched groups one of which holds another cannot be split out: said now,
        # rather than marked and shown as a what-if without figures. (A chosen item has no mark
        # yet, so the new marks alone decide.)
        problem = unbuildable(design, self.catalog, failures)
        if problem:
            self._say(f"{text}: {problem}")
            return
        self.document.set_setting("failures", failure_marks.with_marks(design, [f.setting() for f in failures]), text)

    def fail_some_copies(self) -> None:
        """Ask how many of the selected item's copies (or link's physical links) fail, and mark them."""
        from designer.ui.dialogs import FailCopiesDialog

        design = self.document.design
        items, links = self.scene.selection()
        chosen = failure_marks.copies_to_fail(design, items, links)
        if chosen is None:
            return
        medium = None
        if links:
            # A link can also stand for its medium: a share of every link on it ("2 % of the optics").
            medium_id = design.links[chosen.target].medium
            part = self.catalog.get(medium_id)
            medium = (medium_id, part.name if part is not None else medium_id,
                      failure_marks.copies_on_medium(design, medium_id))
        dialog = FailCopiesDialog(chosen.name, chosen.total, chosen.what, self.host, medium)
        if dialog.exec() != FailCopiesDialog.DialogCode.Accepted:
            return
        failure = dialog.failure(chosen.target)
        design = self.document.design
        # As Fail One Copy: copies the engine cannot split out are refused before marking.
        problem = unbuildable(design, self.catalog, [failure])
        if problem:
            self._say(f"Fail Some Copies: {problem}")
            return
        self.document.set_setting("failures", failure_marks.with_marks(design, [failure.setting()]),
                                  "Fail Some Copies")

    def restore_failed(self) -> None:
        """Put the selection (and the media of its links) back in service, one undo step."""
        items, links = self.scene.selection()
        self.document.set_setting("failures", failure_marks.after_restore(self.document.design, items, links),
                                  "Restore")


def _release_clipboard_at_exit() -> None:
    """The clipboard owns the QMimeData made here; left there, Qt deletes it after Python has shut
    down and the process crashes on exit. Clearing it while Python still runs avoids that."""
    global _clipboard_release_registered
    if not _clipboard_release_registered:
        _clipboard_release_registered = True
        atexit.register(_clear_clipboard)


def _clear_clipboard() -> None:
    if QApplication.instance() is not None:
        QApplication.clipboard().clear()


_clipboard_release_registered = False
