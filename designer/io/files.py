"""Design files: `NAME.cluster.json`, read with validation and migration, written atomically.

Reading is parse → validate (every problem named by file and JSON path) → migrate version by
version → build the model. Nothing in a file is executed, and nothing is built until the whole
file has been checked, so a bad file never half-loads.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: a file open elsewhere cannot be removed, which keeps live saves safe
    fcntl = None

from designer.model.catalog import Catalog, default_catalog
from designer.model.design import ITEM_KINDS, MAX_GROUP_COUNT, Design, Item, Link
from designer.model.errors import DesignError, DesignerError

FORMAT = "cluster-designer"
VERSION = 1
SUFFIX = ".cluster.json"
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_ITEMS = 200_000
MAX_LINKS = 400_000


class DesignFileError(DesignerError):
    def __init__(self, path: str | os.PathLike | None, json_path: str | None, problem: str):
        self.path, self.json_path, self.problem = str(path) if path else "<design>", json_path, problem
        where = self.path + (f" at {json_path}" if json_path else "")
        super().__init__(f"{where}: {problem}")


# Each entry upgrades a document from version N to N+1. Version 1 is the first; the table is where
# later formats add their step.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a text", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")


class _Reader:
    def __init__(self, path):
        self.path = path

    def fail(self, json_path: str, problem: str):
        raise DesignFileError(self.path, json_path, problem)

    def field(self, obj: dict, key: str, where: str, kind: str, *, required=True, default=None):
        """obj[key], checked to be of `kind`: "text", "whole number", "number", "object" or "list"."""
        if key not in obj:
            if required:
                self.fail(where, f"missing field '{key}'")
            return default
        value = obj[key]
        if not _CHECKS[kind](value):
            self.fail(f"{where}.{key}", f"expected {'an' if kind[0] in 'o' else 'a'} {kind}, found {_type_name(value)}")
        return value


_CHECKS = {
    "text": lambda v: isinstance(v, str),
    "whole number": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) < 1e12,
    "object": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
}


def design_from_document(document: Any, catalog: Catalog | None = None, path=None) -> Design:
    """Validate, migrate and build a design from parsed JSON."""
    catalog = catalog or default_catalog()
    read = _Reader(path)
    if not isinstance(document, dict):
        read.fail("$", f"expected an object, found {_type_name(document)}")
    if document.get("format") != FORMAT:
        read.fail("$.format", f"expected \"{FORMAT}\" — this is not a Cluster Designer file")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        read.fail("$.version", f"expected a whole number of at least 1, found {json.dumps(version)}")
    if version > VERSION:
        read.fail("$.version",
                  f"the file is version {version}, written by a newer Cluster Designer; "
                  f"this release reads up to version {VERSION}")
    while version < VERSION:
        document = MIGRATIONS[version](document)
        version += 1

    name = read.field(document, "name", "$", "text", required=False, default="Untitled")
    description = read.field(document, "description", "$", "text", required=False, default="")
    settings = read.field(document, "settings", "$", "object", required=False, default={})
    raw_items = read.field(document, "items", "$", "list")
    raw_links = read.field(document, "links", "$", "list", required=False, default=[])
    if len(raw_items) > MAX_ITEMS:
        read.fail("$.items", f"{len(raw_items):,} items is above the limit of {MAX_ITEMS:,}")
    if len(raw_links) > MAX_LINKS:
        read.fail("$.links", f"{len(raw_links):,} links is above the limit of {MAX_LINKS:,}")

    items: list[tuple[str, Item]] = []
    seen: dict[str, str] = {}
    for index, raw in enumerate(raw_items):
        where = f"$.items[{index}]"
        if not isinstance(raw, dict):
            read.fail(where, f"expected an object, found {_type_name(raw)}")
        item_id = read.field(raw, "id", where, "text")
        if item_id in seen:
            read.fail(f"{where}.id", f"id '{item_id}' is used twice (also at {seen[item_id]})")
        seen[item_id] = where
        kind = read.field(raw, "kind", where, "text")
        if kind not in ITEM_KINDS:
            read.fail(f"{where}.kind", f"unknown kind '{kind}'; expected one of {', '.join(ITEM_KINDS)}")
        part = read.field(raw, "part", where, "text", required=False)
        if part is not None:
            known = catalog.get(part)
            if known is None:
                read.fail(f"{where}.part", f"unknown part '{part}' (not in the catalogue)")
            if known.kind != kind:
                read.fail(f"{where}.part", f"part '{part}' is a {known.kind}, but the item is a {kind}")
        count = read.field(raw, "count", where, "whole number", required=False, default=1)
        if count < 1 or count > MAX_GROUP_COUNT:
            read.fail(f"{where}.count", f"count {count:,} is outside 1 to {MAX_GROUP_COUNT:,}")
        items.append((where, Item(
            id=item_id, kind=kind, part=part,
            name=read.field(raw, "name", where, "text", required=False, default=""),
            parent=read.field(raw, "parent", where, "text", required=False),
            x=float(read.field(raw, "x", where, "number", required=False, default=0.0)),
            y=float(read.field(raw, "y", where, "number", required=False, default=0.0)),
            count=count)))

    design = Design(name=name, description=description, settings=settings)
    # Parents first, whatever order the file lists them in; a parent that never appears is named.
    pending = items
    while pending:
        deferred = [(w, i) for w, i in pending if i.parent is not None and i.parent not in design.items]
        placed = [(w, i) for w, i in pending if not (i.parent is not None and i.parent not in design.items)]
        if not placed:
            where, item = deferred[0]
            problem = (f"parent '{item.parent}' does not exist" if item.parent not in seen
                       else f"parent '{item.parent}' is inside '{item.id}' (a containment cycle)")
            read.fail(f"{where}.parent", problem)
        for where, item in placed:
            try:
                design.add_item(item)
            except DesignError as exc:
                read.fail(where, str(exc))
        pending = deferred

    for index, raw in enumerate(raw_links):
        where = f"$.links[{index}]"
        if not isinstance(raw, dict):
            read.fail(where, f"expected an object, found {_type_name(raw)}")
        link = Link(
            id=read.field(raw, "id", where, "text"),
            a=read.field(raw, "a", where, "text"),
            b=read.field(raw, "b", where, "text"),
            medium=read.field(raw, "medium", where, "text"),
            lanes=read.field(raw, "lanes", where, "whole number", required=False, default=1),
            match=_read_match(read, raw, where))
        for end in ("a", "b"):
            if getattr(link, end) not in design.items:
                read.fail(f"{where}.{end}",
                          f"link end '{getattr(link, end)}' is not an item of this design (dangling link)")
        medium = catalog.get(link.medium)
        if medium is None or medium.kind != "medium":
            read.fail(f"{where}.medium", f"unknown medium '{link.medium}' (not in the catalogue)")
        try:
            design.add_link(link)
        except DesignError as exc:
            read.fail(where, str(exc))
    return design


def design_to_document(design: Design) -> dict:
    items = []
    for item in sorted(design.items.values(), key=lambda i: i.id):
        entry: dict[str, Any] = {"id": item.id, "kind": item.kind, "x": _number(item.x), "y": _number(item.y)}
        if item.name:
            entry["name"] = item.name
        if item.part:
            entry["part"] = item.part
        if item.parent:
            entry["parent"] = item.parent
        if item.count != 1:
            entry["count"] = item.count
        items.append(entry)
    links = []
    for link in sorted(design.links.values(), key=lambda l: l.id):
        entry = {"id": link.id, "a": link.a, "b": link.b, "medium": link.medium, "lanes": link.lanes}
        if link.match is not None:
            entry["match"] = list(link.match)
        links.append(entry)
    document = {"format": FORMAT, "version": VERSION, "name": design.name, "items": items, "links": links}
    if design.description:
        document["description"] = design.description
    if design.settings:
        document["settings"] = design.settings
    return document


def _read_match(read, raw: dict, where: str) -> tuple[str, str] | None:
    value = raw.get("match")
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        read.fail(f"{where}.match", f"expected two group ids, found {json.dumps(value)[:80]}")
    return (value[0], value[1])


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 3)


def dumps(design: Design) -> str:
    return _document_text(design_to_document(design))


def _document_text(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def loads(text: str, catalog: Catalog | None = None, path=None) -> Design:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DesignFileError(path, None,
                              f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise DesignFileError(path, None, "nested too deeply to be a design") from None
    return design_from_document(document, catalog, path)


def load_design(path: str | os.PathLike, catalog: Catalog | None = None) -> Design:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise DesignFileError(path, None,
                                  f"the file is {size / 2**20:.0f} MiB, "
                                  f"above the limit of {MAX_FILE_BYTES // 2**20} MiB")
        raw = path.read_bytes()
    except OSError as exc:
        raise DesignFileError(path, None, f"cannot be read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DesignFileError(path, None, f"not UTF-8 text (byte {exc.start})") from None
    return loads(text, catalog, path)


# A save writes `.NAME.<random>.cluster-designer.tmp` beside the target and renames it over the
# target. A save killed before the rename leaves that file behind; the next save into the folder
# removes the ones older than STALE_TEMPORARY_S that no live save holds locked.
TEMPORARY_SUFFIX = ".cluster-designer.tmp"
STALE_TEMPORARY_S = 300
BACKUP_SUFFIX = "~"


def write_text_atomically(path: str | os.PathLike, text: str, *, backup: bool = False) -> None:
    """Write to a temporary file beside the target, flush it to disk, rename it over the target
    and flush the folder, so that after a crash or a power cut the file is either the old or the
    new version, whole.

    A symbolic link is followed: its target is written and the link stays. A read-only target is
    refused (PermissionError), never replaced. With `backup`, the version replaced is kept as
    `NAME~` beside the target. If anything fails the old file is left as it was and the temporary
    file is removed. Raises UnicodeEncodeError, before touching the disk, for text that UTF-8
    cannot encode."""
    data = text.encode("utf-8")
    target = Path(os.path.realpath(path))
    folder = target.parent
    existing = _existing_mode(target)
    if existing is not None and not _writable(target, existing):
        raise PermissionError(errno.EACCES, "it is read-only", str(path))
    _remove_stale_temporaries(folder)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMPORARY_SUFFIX, dir=folder)
    try:
        _lock(fd)  # held until closed: tells other saves that this temporary file is live
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.chmod(temporary, existing if existing is not None else 0o644)
            if backup and existing is not None:
                _keep_backup(target)
            os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _fsync_folder(folder)


def move_into_place(temporary: str | os.PathLike, path: str | os.PathLike) -> None:
    """Rename a finished temporary file (made beside the target) over `path`: through a symbolic
    link to its target, with the old file's permissions (a new one gets the usual rw-r--r--, not
    the temporary file's private rw-------), and flush the folder."""
    target = Path(os.path.realpath(path))
    existing = _existing_mode(target)
    os.chmod(temporary, existing if existing is not None else 0o644)
    os.replace(temporary, target)
    _fsync_folder(target.parent)


def _existing_mode(target: Path) -> int | None:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return None


def _writable(target: Path, mode: int) -> bool:
    # The mode bits as well as access(): the superuser may write anything, but a file nobody may
    # write was made read-only on purpose.
    return bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) and os.access(target, os.W_OK)


def _keep_backup(target: Path) -> None:
    """Make `NAME~` the current version of `target` (replaced in one rename, like the target)."""
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    fd, staged = tempfile.mkstemp(prefix=f".{backup.name}.", suffix=TEMPORARY_SUFFIX, dir=target.parent)
    try:
        _lock(fd)
        with os.fdopen(fd, "wb") as handle, open(target, "rb") as current:
            shutil.copyfileobj(current, handle, 1 << 20)
            handle.flush()
            os.fsync(handle.fileno())
            shutil.copymode(target, staged)
            os.replace(staged, backup)
    except BaseException:
        try:
            os.unlink(staged)
        except OSError:
            pass
        raise


def _lock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _remove_stale_temporaries(folder: Path) -> None:
    """Remove temporary files of saves killed before their rename: hidden, ours by name, older
    than STALE_TEMPORARY_S and not locked by a save under way (where locks exist)."""
    oldest = time.time() - STALE_TEMPORARY_S
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(".") and entry.name.endswith(TEMPORARY_SUFFIX)):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_mtime > oldest:
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            _lock(fd)
            os.unlink(entry.path)
        except OSError:
            pass  # a live save holds it, or it went away meanwhile
        finally:
            os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Flush the folder's entry for the renamed file: without it a power cut can undo the rename.
    Where folders cannot be opened or flushed (Windows, some network file systems) the rename is
    all there is."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def document_text(document: dict, path: str | os.PathLike | None = None) -> str:
    """A file's text: sorted keys, two-space indentation. Text UTF-8 cannot store (a lone
    surrogate, which a JSON file may hold as an escape and Python reads as it is) is refused,
    naming its JSON path, before anything is written."""
    text = _document_text(document)
    if _encodable(text):
        return text
    pending: list[tuple[str, Any]] = [("$", document)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, str) and not _encodable(value):
            character = next(c for c in value if not _encodable(c))
            raise DesignFileError(path, where,
                                  f"cannot be saved: the text holds U+{ord(character):04X}, half of a character "
                                  f"pair that UTF-8 cannot store; rename it and save again (nothing was written)")
        if isinstance(value, dict):
            pending.extend((f"{where}.{key}", child) for key, child in sorted(value.items(), reverse=True,
                                                                             key=lambda pair: str(pair[0])))
            pending.extend((f"{where} (a key)", key) for key in value)
        elif isinstance(value, list):
            pending.extend((f"{where}[{index}]", child) for index, child in reversed(list(enumerate(value))))
    raise AssertionError("unreachable: the text failed to encode, so one of its strings must")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def save_design(design: Design, path: str | os.PathLike, *, backup: bool = True) -> None:
    """Write the design to `path` atomically (see `write_text_atomically`); with `backup` the
    version it replaces is kept as `NAME.cluster.json~`. Refuses, naming the field and before
    writing anything, text that cannot be saved."""
    text = document_text(design_to_document(design), path)
    try:
        write_text_atomically(path, text, backup=backup)
    except OSError as exc:
        raise DesignFileError(path, None,
                              f"cannot be written ({exc.strerror or exc}); the previous file is unchanged") from None
