"""Design files: `NAME.cluster.json`, read with validation and migration, written atomically.

Reading is parse → validate (every problem named by file and JSON path) → migrate version by
version → build the model. Nothing in a file is executed, and nothing is built until the whole
file has been checked, so a bad file never half-loads.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    return json.dumps(design_to_document(design), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


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


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """Write to a temporary file beside the target, flush it to disk, then rename it over the target.

    If anything fails the old file is left as it was and the temporary file is removed."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        move_into_place(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def move_into_place(temporary: str | os.PathLike, path: str | os.PathLike) -> None:
    """Rename a finished temporary file over `path`, with the old file's permissions (a new one
    gets the usual rw-r--r--, not the temporary file's private rw-------)."""
    path = Path(path)
    os.chmod(temporary, path.stat().st_mode & 0o7777 if path.exists() else 0o644)
    os.replace(temporary, path)


def save_design(design: Design, path: str | os.PathLike) -> None:
    try:
        write_text_atomically(path, dumps(design))
    except OSError as exc:
        raise DesignFileError(path, None,
                              f"cannot be written ({exc.strerror or exc}); the previous file is unchanged") from None
