"""Design files: `NAME.cluster.json`, read with validation and migration, written atomically.

Reading is read (a regular file, its size checked first) → parse → migrate version by version →
validate against the format's schema (`designer.io.schemas`), then what a schema cannot say →
build the model. Every refusal is one line naming the file and the JSON path. Nothing in a file is
executed, no other file is ever opened because of what a design says, and nothing is built until
the whole file has been checked, so a bad file never half-loads.
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
from typing import Any, NoReturn

try:
    import fcntl
except ImportError:  # Windows: a file open elsewhere cannot be removed, which keeps live saves safe
    fcntl = None  # type: ignore[assignment]  # checked before each use

import contextlib

from designer.engine import workloads
from designer.engine.collectives import parse_size
from designer.engine.workloads import ModelFieldError
from designer.io import schemas
from designer.io.outputs import check_target, existing_mode, fsync_folder
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design, Item, Link
from designer.model.errors import DesignError, InputError
from designer.model.validation import check, parse_json, read_json, read_text, show

FORMAT = "cluster-designer"
VERSION = 1
SUFFIX = ".cluster.json"
# The largest shipped example is 1.4 MB and a design at the item and link limits (designer.io.schemas)
# 38 MB; a file above this is not read at all (docs/limits.md).
MAX_FILE_BYTES = 64 * 2 ** 20
MAX_WORKLOAD_BYTES = 2 ** 20  # one model's figures are a few hundred bytes
# Containment depth (cluster ⊃ pods ⊃ racks ⊃ servers ⊃ parts is 6 to 8 levels); bounds every walk
# up an item's ancestors.
MAX_DEPTH = 32


class DesignFileError(InputError):
    """A design file refused: `FILE: $.json.path: problem`."""


# Each entry upgrades a document from version N to N+1. Version 1 is the first; the table is where
# later formats add their step.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}


def design_from_document(document: Any, catalog: Catalog | None = None,
                         path: str | os.PathLike | None = None) -> Design:
    """Validate, migrate and build a design from parsed JSON: the whole document is checked (its
    schema, then what a schema cannot say) before anything is built."""
    catalog = catalog or default_catalog()
    source = path or "<design>"

    def fail(json_path: str, problem: str) -> NoReturn:
        raise DesignFileError(source, json_path, problem)

    if not isinstance(document, dict):
        fail("$", f"expected an object, got {show(document)}")
    if document.get("format") != FORMAT:
        fail("$.format", f"expected \"{FORMAT}\" — this is not a Cluster Designer file")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        fail("$.version", f"expected a whole number of at least 1, got {show(version)}")
    if version > VERSION:
        fail("$.version", f"the file is version {version}, written by a newer Cluster Designer; "
                          f"this release reads up to version {VERSION}")
    while version < VERSION:
        document = MIGRATIONS[version](document)
        version += 1
    check(document, schemas.DESIGN, source, DesignFileError)
    settings = document.get("settings", {})
    check_workload_setting(settings.get("workload"), source, "$.settings.workload", DesignFileError)

    raw_items = document["items"]
    where_of: dict[str, str] = {}
    for index, raw in enumerate(raw_items):
        where = f"$.items[{index}]"
        if raw["id"] in where_of:
            fail(f"{where}.id", f"id '{raw['id']}' is used twice (also at {where_of[raw['id']]})")
        where_of[raw["id"]] = where
        part = raw.get("part")
        if part is not None:
            known = catalog.get(part)
            if known is None:
                fail(f"{where}.part", f"unknown part '{part}' (not in the catalogue)")
            if known.kind != raw["kind"]:
                fail(f"{where}.part", f"part '{part}' is a {known.kind}, but the item is a {raw['kind']}")

    design = Design(name=document.get("name", "Untitled"), description=document.get("description", ""),
                    settings=settings, notes=document.get("notes", ""))
    for index in _parents_first(raw_items, where_of, fail):
        raw = raw_items[index]
        try:
            design.add_item(Item(id=raw["id"], kind=raw["kind"], part=raw.get("part"), name=raw.get("name", ""),
                                 parent=raw.get("parent"), x=float(raw.get("x", 0.0)), y=float(raw.get("y", 0.0)),
                                 count=raw.get("count", 1), rack_u=raw.get("rack_u")))
        except DesignError as exc:
            fail(f"$.items[{index}]", str(exc))

    for index, raw in enumerate(document.get("links", [])):
        where = f"$.links[{index}]"
        for end in ("a", "b"):
            if raw[end] not in design.items:
                fail(f"{where}.{end}", f"link end '{raw[end]}' is not an item of this design (dangling link)")
        medium = catalog.get(raw["medium"])
        if medium is None or medium.kind != "medium":
            fail(f"{where}.medium", f"unknown medium '{raw['medium']}' (not in the catalogue)")
        match = raw.get("match")
        try:
            design.add_link(Link(id=raw["id"], a=raw["a"], b=raw["b"], medium=raw["medium"], lanes=raw.get("lanes", 1),
                                 match=tuple(match) if match is not None else None))
        except DesignError as exc:
            fail(where, str(exc))
    storage = settings.get("storage")
    if storage is not None:
        known = catalog.get(storage["part"])
        if known is None or known.kind != "storage":
            fail("$.settings.storage.part", f"unknown storage part '{storage['part']}' (not in the catalogue)")
    for index, failure in enumerate(settings.get("failures") or ()):
        target = failure["target"]
        if target not in design.items and target not in design.links and not (
                target in catalog and catalog[target].kind == "medium"):
            fail(f"$.settings.failures[{index}].target", f"no item, link or link medium '{target}' in the design")
    return design


def _parents_first(raw_items: list[dict], where_of: dict[str, str],
                   fail: Callable[[str, str], NoReturn]) -> list[int]:
    """Item indices with every parent before its children, whatever order the file lists them in
    (one pass: linear in items). A missing parent, a cycle or containment deeper than MAX_DEPTH
    is refused with the item's JSON path."""
    children: dict[str | None, list[int]] = {}
    for index, raw in enumerate(raw_items):
        parent = raw.get("parent")
        if parent is not None and parent not in where_of:
            fail(f"$.items[{index}].parent", f"parent '{parent}' does not exist")
        children.setdefault(parent, []).append(index)
    order: list[int] = []
    level, depth = children.get(None, []), 1
    while level:
        if depth > MAX_DEPTH:
            fail(f"$.items[{level[0]}].parent",
                 f"containment is nested more than {MAX_DEPTH} levels deep (see docs/limits.md)")
        order.extend(level)
        level = [child for index in level for child in children.get(raw_items[index]["id"], ())]
        depth += 1
    if len(order) < len(raw_items):
        placed = set(order)
        index = next(i for i in range(len(raw_items)) if i not in placed)
        raw = raw_items[index]
        fail(f"$.items[{index}].parent", f"parent '{raw['parent']}' is inside '{raw['id']}' (a containment cycle)")
    return order


def check_workload_setting(workload: Any, source: object, base: str, error: type[InputError]) -> None:
    """A design's `settings.workload` (or the one the command-line options make): its schema, then
    what the schema cannot say (an inline model's shape, message sizes in bytes)."""
    if workload is None:
        return
    check(workload, schemas.WORKLOAD_SETTING, source, error, base)
    for index, size in enumerate(workload.get("collective", {}).get("sizes", ())):
        if isinstance(size, str) and parse_size(size) > schemas.MAX_SIZE_BYTES:
            raise error(source, f"{base}.collective.sizes[{index}]",
                        f"expected a positive size of at most 1P, got {show(size)}")
    model = workload.get("training", {}).get("model")
    if isinstance(model, dict):
        try:
            workloads.custom(model)
        except ModelFieldError as exc:
            raise error(source, f"{base}.training.model.{exc.field}", exc.problem) from None


def load_workload(path: str | os.PathLike) -> dict:
    """A workload file the user named (`--workload FILE`): one inline model, checked."""
    document = read_json(path, MAX_WORKLOAD_BYTES, "workload file")
    check(document, schemas.WORKLOAD_FILE, path)
    try:
        return workloads.custom({"name": Path(path).stem, **document})
    except ModelFieldError as exc:
        raise InputError(path, f"$.{exc.field}", exc.problem) from None


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
        if item.rack_u is not None:
            entry["rack_u"] = item.rack_u
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
    if design.notes:
        document["notes"] = design.notes
    if design.settings:
        document["settings"] = design.settings
    return document


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 3)


def dumps(design: Design) -> str:
    return _document_text(design_to_document(design))


def _document_text(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def loads(text: str, catalog: Catalog | None = None, path: str | os.PathLike | None = None) -> Design:
    if len(text) > MAX_FILE_BYTES:
        raise DesignFileError(path or "<design>", None, f"{len(text):,} characters is above the limit of "
                                                        f"{MAX_FILE_BYTES // 2 ** 20} MiB for a design file")
    return design_from_document(parse_json(text, path or "<design>", DesignFileError), catalog, path)


def short_names(paths: list[str]) -> list[str]:
    """Each path's file name, and where two different files share it, with as many parent folders
    as tell them apart (`a/pod.cluster.json`, `b/pod.cluster.json`); the same file twice keeps its
    plain name. For columns and menus that name files."""
    parts = [os.path.normpath(os.path.abspath(path)).split(os.sep) for path in paths]
    whole = [os.sep.join(p) for p in parts]

    def name(index: int, folders: int) -> str:
        return "/".join(parts[index][-1 - folders:])

    names = []
    for i in range(len(parts)):
        others = [j for j in range(len(parts)) if whole[j] != whole[i] and parts[j][-1] == parts[i][-1]]
        folders = 0
        while any(name(i, folders) == name(j, folders) for j in others) and folders < len(parts[i]) - 2:
            folders += 1
        names.append(name(i, folders))
    return names


def load_design(path: str | os.PathLike, catalog: Catalog | None = None) -> Design:
    """A design file: a regular file of at most MAX_FILE_BYTES, checked completely, then built."""
    return loads(read_text(path, MAX_FILE_BYTES, "design file", DesignFileError), catalog, path)


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
    target = check_target(path)
    folder = target.parent
    existing = existing_mode(target)
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
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_folder(folder)


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
        with contextlib.suppress(OSError):
            os.unlink(staged)
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
