"""Autosaves: a copy of an open design's unsaved changes, kept in the user's state folder (never
beside the user's file) until the design is saved, closed or its recovery declined.

Each open document owns one `AutosaveSlot`: `KEY.autosave.json` (the design and a small record:
the file it came from and that file's fingerprint, its name, when it was written, the process)
written atomically, and `KEY.lock`, locked by the owning process for as long as it runs. The
operating system drops the lock when the process dies, however it dies (kill -9, crash, power
cut), which is how the next start tells the autosaves of a dead instance, offered for recovery,
from those of one still running, left alone. The lock is sturdier than the recorded pid, which
another process may reuse.

An autosave is read as a design file is (`designer.model.validation`): a regular file only, its
size checked before reading, its record checked against `schemas.AUTOSAVE` and its design by
`files.design_from_document`, all before it is offered. One that fails is reported with a
one-line reason and left where it is; the others are offered all the same.

The recorded original path is only a suggestion: whoever wrote the autosave (or edited it since)
chose it. `Orphan.original_unchanged` tells whether the file there is still, byte for byte, the
one the autosave was made from (its `Fingerprint`, taken when the app opened or saved it); only
then may a restored design be saved over it without asking.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from designer.io import schemas
from designer.io.files import (
    MAX_FILE_BYTES,
    DesignFileError,
    design_from_document,
    design_to_document,
    document_text,
    write_text_atomically,
)
from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.model.errors import InputError
from designer.model.validation import check, read_json, show

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]  # checked before each use
    import msvcrt

FORMAT = "cluster-designer-autosave"
VERSION = 1
SUFFIX = ".autosave.json"
LOCK_SUFFIX = ".lock"
# The design nests one level deeper than in its file (two more spaces a line), beside a record of
# a few hundred bytes: a design at the model's limits (about 38 MB as a file) stays well below.
MAX_AUTOSAVE_BYTES = MAX_FILE_BYTES + MAX_FILE_BYTES // 4
# Times a record may hold: within these, converting to any local time zone cannot overflow.
EARLIEST_SAVED_AT = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_SAVED_AT = datetime(9000, 1, 1, tzinfo=UTC)
_HASH_CHUNK_BYTES = 2 ** 20

_log = logging.getLogger(__name__)


class AutosaveError(InputError):
    """An autosave refused: `FILE: $.json.path: problem`."""


@dataclass(frozen=True)
class Fingerprint:
    """A design file as the app opened or last saved it. Its contents decide whether a file is
    still that one: a copy touched since (same bytes, another mtime) loses nothing when saved over."""

    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, path: str | os.PathLike) -> Fingerprint | None:
        """The file's fingerprint; None unless it is a readable regular file of at most
        MAX_FILE_BYTES (a pipe or device is never read: it could block or never end)."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(path, flags)
        except (OSError, ValueError):  # ValueError: a NUL character in the name
            return None
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
                return None
            digest, size = hashlib.sha256(), 0
            while size <= MAX_FILE_BYTES:
                chunk = os.read(fd, _HASH_CHUNK_BYTES)
                if not chunk:
                    break
                digest.update(chunk)
                size += len(chunk)
            if size > MAX_FILE_BYTES:  # it grew while being read
                return None
        except OSError:
            return None
        finally:
            os.close(fd)
        return cls(size, status.st_mtime_ns, digest.hexdigest())

    def matches(self, path: str | os.PathLike) -> bool:
        """Whether the file at `path` now holds exactly the bytes this fingerprint was taken of."""
        now = Fingerprint.of(path)
        return now is not None and (now.size, now.sha256) == (self.size, self.sha256)

    def to_document(self) -> dict:
        return {"size": self.size, "mtime_ns": str(self.mtime_ns), "sha256": self.sha256}

    @classmethod
    def from_document(cls, document: dict) -> Fingerprint:
        """From a record already checked against `schemas.AUTOSAVE`."""
        return cls(document["size"], int(document["mtime_ns"]), document["sha256"])


@dataclass(frozen=True)
class AutosaveRecord:
    """What an autosave says about itself."""

    original: str | None  # the design file it was opened from or saved to; None if never saved
    name: str  # the name shown for it (the file's stem, or the design's name)
    saved_at: datetime  # when it was written (aware)
    pid: int  # the process that wrote it
    original_file: Fingerprint | None = None  # `original` as last opened or saved; None: unknown


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

    def write(self, design: Design, original: str | None, name: str,
              original_file: Fingerprint | None = None) -> AutosaveRecord:
        """Write the design atomically (see `files.write_text_atomically`); raises OSError or
        DesignFileError (text that cannot be stored) with the previous autosave intact."""
        if not self.claim():
            raise OSError(f"the autosave {self.lock_file} is held by another process")
        record = AutosaveRecord(original, name, datetime.now().astimezone(), os.getpid(), original_file)
        document = {"format": FORMAT, "version": VERSION, "original": original,
                    "original_file": original_file.to_document() if original_file is not None else None,
                    "name": name, "saved_at": record.saved_at.isoformat(timespec="seconds"), "pid": record.pid,
                    "design": design_to_document(design)}
        write_text_atomically(self.file, document_text(document, self.file))
        return record

    def claim(self) -> bool:
        """Take the slot's lock (kept until `discard` or `release`); False if a live process holds it."""
        if self._lock_fd is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # O_NONBLOCK: a FIFO planted under the lock's name must not hang the start.
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o600)
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
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.release()

    def release(self) -> None:
        """Give up the lock and keep the autosave, for a later start to offer again."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


@dataclass
class Orphan:
    """The autosave of a process that is gone, checked whole; its slot's lock is held by whoever
    found it."""

    slot: AutosaveSlot
    record: AutosaveRecord
    document: dict  # the design's document, as the autosave holds it
    _design: Design | None = field(default=None, repr=False)  # built when offered
    _catalog: Catalog | None = field(default=None, repr=False)  # the catalogue it was built with

    def design(self, catalog: Catalog | None = None) -> Design:
        """The design (the one built when offered, handed over once), else built anew."""
        built, self._design = self._design, None
        if built is not None and (catalog is None or catalog is self._catalog):
            return built
        return design_from_document(self.document, catalog, self.slot.file)

    def original_unchanged(self) -> bool:
        """Whether the file at the recorded original path holds exactly the bytes the autosave's
        design was opened from or last saved to (checked now, by SHA-256). False for an autosave
        that records no fingerprint (an older release's): Save must ask before writing there."""
        fingerprint = self.record.original_file
        return self.record.original is not None and fingerprint is not None and fingerprint.matches(
            self.record.original)


@dataclass(frozen=True)
class Unreadable:
    """An autosave that was not offered, and why (it stays on disk as it is)."""

    file: Path
    reason: str  # the JSON path, if any, and the problem

    def __str__(self) -> str:
        return f"Autosave {self.file} could not be read: {self.reason}"


@dataclass
class FoundAutosaves:
    orphans: list[Orphan]  # oldest first, each lock held by the caller
    unreadable: list[Unreadable]  # refused, left where they are (and logged)


def find_orphans(folder: str | os.PathLike, catalog: Catalog | None = None) -> FoundAutosaves:
    """The autosaves in `folder` whose process has ended, checked whole (their designs built with
    `catalog`), oldest first, each with its lock now held by the caller (discard, adopt or release
    each), and those that cannot be read, each with its reason; those are left where they are."""
    folder = Path(folder)
    try:
        files = sorted(folder.glob(f"*{SUFFIX}"))
        locks = sorted(folder.glob(f"*{LOCK_SUFFIX}"))
    except OSError:
        return FoundAutosaves([], [])
    orphans: list[Orphan] = []
    unreadable: list[Unreadable] = []
    for file in files:
        slot = AutosaveSlot(folder, file.name[: -len(SUFFIX)])
        try:
            if not slot.claim():
                continue  # its process is still running
        except OSError as exc:
            unreadable.append(Unreadable(file, f"its lock {slot.lock_file.name} cannot be taken "
                                               f"({exc.strerror or exc})"))
            continue
        try:
            orphans.append(_read(slot, catalog))
        except InputError as exc:
            slot.release()
            reason = f"{exc.json_path}: {exc.problem}" if exc.json_path else exc.problem
            unreadable.append(Unreadable(file, reason))
        except (OSError, RecursionError, ValueError, OverflowError) as exc:  # beyond what the checks foresee
            slot.release()
            unreadable.append(Unreadable(file, f"{type(exc).__name__}: {exc}"[:200]))
    for refused in unreadable:
        _log.warning("%s", refused)
    # A process killed between taking its lock and its first write leaves the lock alone.
    for lock in locks:
        slot = AutosaveSlot(folder, lock.name[: -len(LOCK_SUFFIX)])
        try:
            if not os.path.lexists(slot.file) and slot.claim():  # a dangling symlink is not ours to remove
                slot.discard()
        except OSError:
            continue
    orphans.sort(key=lambda o: o.record.saved_at)  # all aware and within range (`_saved_at`)
    return FoundAutosaves(orphans, unreadable)


def _read(slot: AutosaveSlot, catalog: Catalog | None) -> Orphan:
    file = slot.file
    raw: Any = read_json(file, MAX_AUTOSAVE_BYTES, "design autosave", AutosaveError)
    if not isinstance(raw, dict):
        raise AutosaveError(file, "$", f"expected an object, got {show(raw)}")
    if raw.get("format") != FORMAT:
        raise AutosaveError(file, "$.format", f"expected \"{FORMAT}\"; this is not a Cluster Designer autosave")
    version = raw.get("version")
    if type(version) is int and version > VERSION:
        raise AutosaveError(file, "$.version", f"version {version}, written by a newer Cluster Designer; "
                                               f"this release reads version {VERSION}")
    check(raw, schemas.AUTOSAVE, file, AutosaveError)
    saved_at = _saved_at(raw["saved_at"], file)
    try:
        design = design_from_document(raw["design"], catalog, file)
    except DesignFileError as exc:  # its JSON paths start at the design: name them in the autosave
        raise AutosaveError(file, f"$.design{(exc.json_path or '$')[1:]}", exc.problem) from None
    fingerprint = raw.get("original_file")
    record = AutosaveRecord(raw.get("original"), raw["name"] or "Untitled", saved_at, raw["pid"],
                            Fingerprint.from_document(fingerprint) if fingerprint is not None else None)
    return Orphan(slot, record, raw["design"], design, catalog)


def _saved_at(text: str, file: Path) -> datetime:
    """The record's time (the schema made sure it has an offset), if converting and comparing it
    cannot overflow."""
    try:
        when = datetime.fromisoformat(text)
        in_utc = when.astimezone(UTC)
    except (ValueError, OverflowError):
        raise AutosaveError(file, "$.saved_at", f"{show(text)} is not a time") from None
    if when.tzinfo is None or not EARLIEST_SAVED_AT <= in_utc < LATEST_SAVED_AT:
        raise AutosaveError(file, "$.saved_at", f"{show(text)} is not a time from {EARLIEST_SAVED_AT.year} "
                                                f"to {LATEST_SAVED_AT.year - 1}")
    return when


def _try_lock(fd: int) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True
