"""Autosaves: a copy of an open design's unsaved changes, kept in the user's state folder (never
beside the user's file) until the design is saved, closed or its recovery declined.

Each open document owns one `AutosaveSlot`: `KEY.autosave.json` (the design and a small record:
the file it came from, its name, when it was written, the process) written atomically, and
`KEY.lock`, locked by the owning process for as long as it runs. The operating system drops the
lock when the process dies, however it dies (kill -9, crash, power cut), which is how the next
start tells the autosaves of a dead instance, offered for recovery, from those of one still
running, left alone. The lock is sturdier than the recorded pid, which another process may reuse.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from designer.io.files import (MAX_FILE_BYTES, design_from_document, design_to_document, document_text,
                               write_text_atomically)
from designer.model.catalog import Catalog
from designer.model.design import Design

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

FORMAT = "cluster-designer-autosave"
VERSION = 1
SUFFIX = ".autosave.json"
LOCK_SUFFIX = ".lock"


@dataclass(frozen=True)
class AutosaveRecord:
    """What an autosave says about itself."""

    original: str | None  # the design file it was opened from or saved to; None if never saved
    name: str  # the name shown for it (the file's stem, or the design's name)
    saved_at: datetime  # when it was written (aware)
    pid: int  # the process that wrote it


class AutosaveSlot:
    """One open document's autosave. Writing and discarding may run on a worker thread, one at a
    time; the slot takes its lock at the first write (or holds it already when recovered)."""

    def __init__(self, folder: str | os.PathLike, key: str | None = None):
        self.folder = Path(folder)
        self.key = key or uuid.uuid4().hex
        self._lock_fd: int | None = None

    @property
    def file(self) -> Path:
        return self.folder / f"{self.key}{SUFFIX}"

    @property
    def lock_file(self) -> Path:
        return self.folder / f"{self.key}{LOCK_SUFFIX}"

    def write(self, design: Design, original: str | None, name: str) -> AutosaveRecord:
        """Write the design atomically (see `files.write_text_atomically`); raises OSError or
        DesignFileError (text that cannot be stored) with the previous autosave intact."""
        if not self.claim():
            raise OSError(f"the autosave {self.lock_file} is held by another process")
        record = AutosaveRecord(original, name, datetime.now().astimezone(), os.getpid())
        document = {"format": FORMAT, "version": VERSION, "original": original, "name": name,
                    "saved_at": record.saved_at.isoformat(timespec="seconds"), "pid": record.pid,
                    "design": design_to_document(design)}
        write_text_atomically(self.file, document_text(document, self.file))
        return record

    def claim(self) -> bool:
        """Take the slot's lock (kept until `discard` or `release`); False if a live process holds it."""
        if self._lock_fd is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o600)
            if not _try_lock(fd):
                os.close(fd)
                return False
            self._lock_fd = fd
        return True

    def discard(self) -> None:
        """Remove the autosave and give up its lock (nothing happens if it was never written)."""
        if self._lock_fd is None:
            return
        for path in (self.file, self.lock_file):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        self.release()

    def release(self) -> None:
        """Give up the lock and keep the autosave, for a later start to offer again."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


@dataclass
class Orphan:
    """The autosave of a process that is gone; its slot's lock is held by whoever found it."""

    slot: AutosaveSlot
    record: AutosaveRecord
    document: dict

    def design(self, catalog: Catalog | None = None) -> Design:
        return design_from_document(self.document, catalog, self.slot.file)


def find_orphans(folder: str | os.PathLike) -> list[Orphan]:
    """The autosaves in `folder` whose process has ended, oldest first, each with its lock now
    held by the caller (discard, adopt or release each). Unreadable ones are left where they are."""
    folder = Path(folder)
    try:
        files = sorted(folder.glob(f"*{SUFFIX}"))
        locks = sorted(folder.glob(f"*{LOCK_SUFFIX}"))
    except OSError:
        return []
    orphans = []
    for file in files:
        slot = AutosaveSlot(folder, file.name[: -len(SUFFIX)])
        try:
            if not slot.claim():
                continue  # its process is still running
        except OSError:
            continue
        try:
            orphans.append(_read(slot))
        except (OSError, ValueError, KeyError, TypeError):
            slot.release()
    # A process killed between taking its lock and its first write leaves the lock alone.
    for lock in locks:
        slot = AutosaveSlot(folder, lock.name[: -len(LOCK_SUFFIX)])
        try:
            if not slot.file.exists() and slot.claim():
                slot.discard()
        except OSError:
            continue
    return sorted(orphans, key=lambda o: o.record.saved_at)


def _read(slot: AutosaveSlot) -> Orphan:
    if slot.file.stat().st_size > MAX_FILE_BYTES:
        raise ValueError("too big to be an autosave")
    raw: Any = json.loads(slot.file.read_text(encoding="utf-8"))
    if raw.get("format") != FORMAT or raw.get("version") != VERSION or not isinstance(raw["design"], dict):
        raise ValueError("not an autosave this release writes")
    original = raw.get("original")
    record = AutosaveRecord(original if isinstance(original, str) else None, str(raw.get("name") or "Untitled"),
                            datetime.fromisoformat(raw["saved_at"]), int(raw["pid"]))
    return Orphan(slot, record, raw["design"])


def _try_lock(fd: int) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True
