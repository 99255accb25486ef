"""Autosave in the app, and the recovery offered at start for the autosaves of a crashed run.

The window's `Autosaver` writes the document's unsaved design to its `io.autosave.AutosaveSlot`
every interval (QSettings `autosave/intervalSeconds`, default 60; 0 turns it off). The UI thread
only takes a snapshot (about 1 ms for 20,000 items); turning it into JSON and writing it runs on
the autosaver's worker thread, one job at a time, so a discard always follows the write before it.
The autosave is discarded when the document becomes clean (saved, or undone to the saved state)
and when the window closes. Each autosave records the fingerprint of the file the document was
opened from or last saved to, taken when the app opened or saved it, so that a restored design is
saved over that file without asking only while the file is still the one it was made from.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QStandardPaths, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from designer.document.document import Document
from designer.io.autosave import AutosaveRecord, AutosaveSlot, Fingerprint, Orphan, Unreadable
from designer.model.errors import DesignerError
from designer.paths import examples_dir

DEFAULT_INTERVAL_S = 60
MAX_UNREADABLE_SHOWN = 5  # unreadable autosaves named in the recovery dialog; the rest are counted


def autosave_folder() -> Path:
    """The platform's folder for state kept between runs (`~/.local/state` or `$XDG_STATE_HOME`
    on Linux), never the folder of the user's files."""
    state = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericStateLocation)
    return Path(state) / "cluster-designer" / "autosave"


def interval_ms(settings: QSettings) -> int:
    """The autosave interval the user chose (0: autosave off)."""
    try:
        seconds = float(settings.value("autosave/intervalSeconds", DEFAULT_INTERVAL_S))
    except (TypeError, ValueError):
        seconds = DEFAULT_INTERVAL_S
    return max(0, round(seconds * 1000))


class Autosaver(QObject):
    """Keeps the document's unsaved changes in its autosave slot (see the module's docstring)."""

    written = Signal(object)  # AutosaveRecord, after each write
    failed = Signal(str)  # a write refused (disk full, text that cannot be stored)

    def __init__(self, document: Document, folder: Path, interval: int, parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.slot = AutosaveSlot(folder)
        self.interval = interval  # ms; 0: off
        # The document's file as this app last opened or saved it (None: no file, or unreadable).
        self.original_fingerprint: Fingerprint | None = None
        # A restored design's recorded path while the file there is not the one it was made from:
        # Save asks where (suggesting it) until the document's path is set again.
        self.path_to_confirm: str | None = None
        self._changed = False  # changes since the last write was taken
        self._writing = False
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cluster-designer-autosave")
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.autosave_now)
        if interval > 0:
            self._timer.start(interval)
        document.changed.connect(self._on_changed)
        document.pathChanged.connect(self._on_path_changed)
        document.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.written.connect(self._on_written)
        self.failed.connect(self._on_failed)

    def autosave_now(self) -> None:
        """Write the changes made since the last write, if any (on the worker thread)."""
        if self._closed or self._writing or not self._changed or not self.document.is_modified():
            return
        self._changed, self._writing = False, True
        self._executor.submit(self._write, self.slot, self.document.design.snapshot(), self.document.path,
                              self.document.display_name, self.original_fingerprint)

    def _write(self, slot: AutosaveSlot, design, original: str | None, name: str,
               original_file: Fingerprint | None) -> None:
        try:
            self.written.emit(slot.write(design, original, name, original_file))
        except (OSError, DesignerError) as exc:
            self.failed.emit(f"Autosave failed: {exc}")
        except Exception:  # noqa: BLE001 - a bug: the app's exception hook shows it
            self.failed.emit("Autosave failed")
            sys.excepthook(*sys.exc_info())

    def _on_written(self, _record: AutosaveRecord) -> None:
        self._writing = False

    def _on_failed(self, _message: str) -> None:
        self._writing = False
        self._changed = True  # try again at the next interval

    def _on_changed(self, _change) -> None:
        self._changed = True

    def _on_path_changed(self, path: str) -> None:
        # The document was just opened from, saved to or reset to `path`: that file, as it is
        # now, is the one later autosaves are made from (a restore then says otherwise, in `adopt`).
        self.original_fingerprint = Fingerprint.of(path) if path else None
        self.path_to_confirm = None

    def _on_clean_changed(self, clean: bool) -> None:
        if clean:
            self.discard()

    def discard(self) -> None:
        """Remove the autosave, after any write under way."""
        self._changed = False
        if self._closed:
            return
        try:
            self._executor.submit(self.slot.discard)
        except RuntimeError:
            pass  # the interpreter is exiting with the window still open: the autosave is kept, as after a crash

    def adopt(self, orphan: Orphan) -> bool:
        """Carry on in a recovered autosave's slot: it stays until the design is saved or closed.
        Call it after the document took the restored design and its path. Returns whether the
        original file is unchanged (else Save asks where, `path_to_confirm`)."""
        self.discard()
        self.slot = orphan.slot
        unchanged = orphan.original_unchanged()
        self.original_fingerprint = orphan.record.original_file if unchanged else None
        self.path_to_confirm = None if unchanged else orphan.record.original
        return unchanged

    def close(self) -> None:
        """Discard the autosave and stop the worker (when the window closes)."""
        self._timer.stop()
        self.discard()
        self._closed = True
        self._executor.shutdown(wait=True)


def describe(record: AutosaveRecord, now: datetime | None = None) -> tuple[str, str]:
    """What an autosave is of ("pod.cluster.json in /home/me", "the example …", "“X”, never
    saved") and when it was written ("today 14:03, 5 minutes ago")."""
    if record.original is None:
        what = f"“{record.name}”, never saved"
    elif Path(record.original).parent == examples_dir():
        what = f"the example “{record.name}”"
    else:
        what = f"{Path(record.original).name} in {Path(record.original).parent}"
    now = now or datetime.now().astimezone()
    when = record.saved_at.astimezone()
    day = "today" if when.date() == now.date() else when.strftime("%Y-%m-%d")
    minutes = max(0, int((now - when).total_seconds() // 60))
    ago = ("less than a minute ago" if minutes < 1 else f"{minutes} minute{'s' if minutes != 1 else ''} ago"
           if minutes < 120 else f"{minutes // 60} hours ago")
    return what, f"{day} {when:%H:%M}, {ago}"


class RecoveryDialog(QDialog):
    """Lists the autosaves of a run that ended without closing them. Restore or Discard act on
    the selected rows (all, at first); Later keeps the rest for the next start. `restored` and
    `discarded` hold the user's choices."""

    def __init__(self, orphans: list[Orphan], parent: QWidget | None = None, unreadable: Sequence[Unreadable] = ()):
        super().__init__(parent)
        self.setWindowTitle("Recover Unsaved Designs")
        self.resize(760, 300)
        self.orphans = list(orphans)
        self.restored: list[Orphan] = []
        self.discarded: list[Orphan] = []
        layout = QVBoxLayout(self)
        intro = QLabel("Cluster Designer did not close properly last time. These designs had changes that "
                       "were not saved; their last autosave can be restored.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Design", "Of", "Last autosaved"])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.table)
        # Autosaves that could not be read are named with the reason, and stay on disk as they are.
        self.unreadable = QLabel("\n".join(str(u) for u in unreadable[:MAX_UNREADABLE_SHOWN])
                                 + (f"\n… and {len(unreadable) - MAX_UNREADABLE_SHOWN} more"
                                    if len(unreadable) > MAX_UNREADABLE_SHOWN else ""))
        self.unreadable.setWordWrap(True)
        self.unreadable.setTextFormat(Qt.TextFormat.PlainText)  # file names are not markup
        self.unreadable.setVisible(bool(unreadable))
        layout.addWidget(self.unreadable)
        buttons = QDialogButtonBox()
        self.restore_button = QPushButton("Restore")
        self.restore_button.setDefault(True)
        self.discard_button = QPushButton("Discard")
        self.later_button = QPushButton("Later")
        self.later_button.setToolTip("Keep these autosaves and ask again at the next start")
        for button, role in ((self.restore_button, QDialogButtonBox.ButtonRole.AcceptRole),
                             (self.discard_button, QDialogButtonBox.ButtonRole.DestructiveRole),
                             (self.later_button, QDialogButtonBox.ButtonRole.RejectRole)):
            buttons.addButton(button, role)
        self.restore_button.clicked.connect(lambda: self._decide(self.restored))
        self.discard_button.clicked.connect(lambda: self._decide(self.discarded))
        self.later_button.clicked.connect(self.reject)
        layout.addWidget(buttons)
        self._fill()

    def _fill(self) -> None:
        self.table.setRowCount(len(self.orphans))
        for row, orphan in enumerate(self.orphans):
            what, when = describe(orphan.record)
            for column, text in enumerate((orphan.record.name, what, when)):
                cell = QTableWidgetItem(text)
                cell.setToolTip(orphan.record.original or "")
                self.table.setItem(row, column, cell)
        self.table.selectAll()
        self.restore_button.setEnabled(bool(self.orphans))
        self.discard_button.setEnabled(bool(self.orphans))

    def _decide(self, into: list[Orphan]) -> None:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        into.extend(self.orphans[r] for r in rows)
        self.orphans = [o for r, o in enumerate(self.orphans) if r not in rows]
        self._fill()
        if not self.orphans:
            self.accept()

    @property
    def later(self) -> list[Orphan]:
        """The autosaves neither restored nor discarded (kept for the next start)."""
        return self.orphans

