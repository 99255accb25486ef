"""The parts catalogue: hardware figures loaded from JSON data files, never from code.

The shipped files live in `resources/catalog/`; a user's own file may add or override parts by id.
The schema is described in docs/catalog.md; every figure carries its unit in the field name.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from designer.model.errors import CatalogError
from designer.paths import catalog_dir, user_config_dir

CATALOG_FORMAT = "cluster-designer-catalog"
CATALOG_VERSION = 1
KINDS = ("accelerator", "cpu", "nic", "switch", "server", "rack", "medium")
PRECISIONS = (
    "fp64", "fp64_tensor", "fp32", "tf32", "tf32_sparse", "bf16", "bf16_sparse",
    "fp8", "fp8_sparse", "int8", "int8_sparse",
)
_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# Numeric fields per kind that must be present. Other numeric fields are optional but, where
# present, must be finite and non-negative.
_REQUIRED_NUMBERS: dict[str, tuple[str, ...]] = {
    "accelerator": ("memory_gb", "power_w"),
    "cpu": ("cores", "power_w"),
    "nic": ("port_gbps", "ports"),
    "switch": ("ports", "port_gbps"),
    "server": ("height_u", "system_power_w", "accelerator_slots"),
    "rack": ("height_u", "power_budget_kw"),
    "medium": ("lane_gb_per_s", "latency_ns"),
}
_REFERENCE_FIELDS = {
    "scale_up_medium": "medium", "host_medium": "medium", "default_accelerator": "accelerator",
    "default_nic": "nic", "default_cpu": "cpu",
}


@dataclass(frozen=True)
class Part:
    """One catalogue entry. `data` holds every field of the entry, read-only."""

    id: str
    kind: str
    name: str
    source: str
    data: Mapping[str, Any] = field(repr=False, compare=False)
    origin: str = field(default="", compare=False)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def number(self, key: str, default: float = 0.0) -> float:
        value = self.data.get(key)
        return float(value) if value is not None else default

    @property
    def media(self) -> tuple[str, ...]:
        return tuple(self.data.get("media", ()))

    @property
    def peak_tflops(self) -> Mapping[str, float]:
        return self.data.get("peak_tflops", MappingProxyType({}))


class Catalog:
    """All parts by id, with the file each came from."""

    def __init__(self, parts: Iterable[Part] = ()):
        self._parts: dict[str, Part] = {}
        for part in parts:
            self._parts[part.id] = part

    def __contains__(self, part_id: object) -> bool:
        return part_id in self._parts

    def __getitem__(self, part_id: str) -> Part:
        return self._parts[part_id]

    def __iter__(self):
        return iter(self._parts.values())

    def __len__(self) -> int:
        return len(self._parts)

    def get(self, part_id: str | None) -> Part | None:
        return self._parts.get(part_id) if part_id else None

    def of_kind(self, kind: str) -> list[Part]:
        return sorted((p for p in self._parts.values() if p.kind == kind), key=lambda p: p.name)

    def medium(self, medium_id: str) -> Part:
        part = self._parts.get(medium_id)
        if part is None or part.kind != "medium":
            raise KeyError(medium_id)
        return part

    def merged(self, other: Catalog) -> Catalog:
        """A new catalogue: this one with `other`'s parts added or overriding by id."""
        merged = Catalog(self)
        for part in other:
            merged._parts[part.id] = part
        merged._check_references(origin_of=lambda p: p.origin)
        return merged

    def _check_references(self, origin_of) -> None:
        for part in self._parts.values():
            for key, kind in _REFERENCE_FIELDS.items():
                ref = part.data.get(key)
                if ref is not None:
                    self._expect(part, key, ref, kind, origin_of(part))
            for ref in part.media:
                self._expect(part, "media", ref, "medium", origin_of(part))
            scale_up = part.data.get("scale_up") or {}
            for key in ("switch", "pcie_switch"):
                if key in scale_up:
                    self._expect(part, f"scale_up.{key}", scale_up[key], "switch", origin_of(part))

    def _expect(self, part: Part, key: str, ref: Any, kind: str, origin: str) -> None:
        target = self._parts.get(ref) if isinstance(ref, str) else None
        if target is None or target.kind != kind:
            raise CatalogError(origin, part.id, key, f"refers to unknown {kind} '{ref}'")


def _check_number(origin: str, part_id: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CatalogError(origin, part_id, key, f"expected a number, got {json.dumps(value)}")
    if not math.isfinite(value) or value < 0:
        raise CatalogError(origin, part_id, key, f"expected a finite non-negative number, got {value}")
    return float(value)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def parse_part(entry: Any, origin: str, index: int) -> Part:
    """Validate one catalogue entry and return it as a Part."""
    if not isinstance(entry, dict):
        raise CatalogError(origin, f"#{index}", None, "expected an object")
    part_id = entry.get("id")
    label = part_id if isinstance(part_id, str) and part_id else f"#{index}"
    if not isinstance(part_id, str) or not _ID_PATTERN.match(part_id):
        raise CatalogError(origin, label, "id", f"expected a kebab-case id, got {json.dumps(part_id)}")
    kind = entry.get("kind")
    if kind not in KINDS:
        raise CatalogError(origin, part_id, "kind", f"expected one of {', '.join(KINDS)}, got {json.dumps(kind)}")
    for key in ("name", "source"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(origin, part_id, key, "expected a non-empty text")
    for key in _REQUIRED_NUMBERS[kind]:
        if key not in entry:
            raise CatalogError(origin, part_id, key, "is missing")
    for key, value in entry.items():
        if key.endswith(("_w", "_gb", "_kw", "_u", "_ns", "_gbps", "_per_s", "_usd", "_lanes", "_slots")) or key in (
            "ports", "cores", "switches", "lanes_per_cable", "transceivers_per_cable", "default_nics", "default_cpus",
            "scale_up_lanes", "host_lanes", "port_lanes",
        ):
            _check_number(origin, part_id, key, value)
    peaks = entry.get("peak_tflops", {})
    if not isinstance(peaks, dict):
        raise CatalogError(origin, part_id, "peak_tflops", "expected an object of precision → TFLOPS")
    for precision, value in peaks.items():
        if precision not in PRECISIONS:
            raise CatalogError(origin, part_id, f"peak_tflops.{precision}",
                               f"unknown precision; expected one of {', '.join(PRECISIONS)}")
        _check_number(origin, part_id, f"peak_tflops.{precision}", value)
    media = entry.get("media", [])
    if not isinstance(media, list) or not all(isinstance(m, str) for m in media):
        raise CatalogError(origin, part_id, "media", "expected a list of medium ids")
    if "price_usd" in entry and not entry.get("price_source"):
        raise CatalogError(origin, part_id, "price_source", "a price needs its source")
    return Part(id=part_id, kind=kind, name=entry["name"], source=entry["source"], data=_freeze(entry), origin=origin)


def parse_catalog_text(text: str, origin: str) -> list[Part]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(origin, None, None,
                           f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(document, dict) or document.get("format") != CATALOG_FORMAT:
        raise CatalogError(origin, None, "format", f"expected \"format\": \"{CATALOG_FORMAT}\"")
    if document.get("version") != CATALOG_VERSION:
        raise CatalogError(origin, None, "version",
                           f"unsupported catalogue version {json.dumps(document.get('version'))}; "
                           f"this release reads version {CATALOG_VERSION}")
    entries = document.get("parts")
    if not isinstance(entries, list):
        raise CatalogError(origin, None, "parts", "expected a list of parts")
    parts = [parse_part(entry, origin, index) for index, entry in enumerate(entries)]
    seen: set[str] = set()
    for part in parts:
        if part.id in seen:
            raise CatalogError(origin, part.id, "id", "appears twice in this file")
        seen.add(part.id)
    return parts


def read_catalog_file(path: Path) -> list[Part]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(str(path), None, None, f"cannot be read ({exc.strerror or exc})") from None
    return parse_catalog_text(text, str(path))


def default_user_catalog_path() -> Path:
    return user_config_dir() / "catalog.json"


def load_catalog(extra: Path | str | None = None, *, include_user: bool = True) -> Catalog:
    """The shipped catalogue, plus the user's catalogue file and `extra` (each overriding by id)."""
    parts: list[Part] = []
    for path in sorted(catalog_dir().glob("*.json")):
        parts.extend(read_catalog_file(path))
    catalog = Catalog()
    seen: dict[str, str] = {}
    for part in parts:
        if part.id in seen:
            raise CatalogError(part.origin, part.id, "id", f"also defined in {seen[part.id]}")
        seen[part.id] = part.origin
        catalog._parts[part.id] = part
    catalog._check_references(origin_of=lambda p: p.origin)
    overlays = []
    user_path = default_user_catalog_path()
    if include_user and user_path.is_file():
        overlays.append(user_path)
    if extra is not None:
        overlays.append(Path(extra))
    for path in overlays:
        catalog = catalog.merged(Catalog(read_catalog_file(path)))
    return catalog


_default: Catalog | None = None


def default_catalog() -> Catalog:
    """The shipped catalogue plus the user's file, loaded once per process."""
    global _default
    if _default is None:
        _default = load_catalog()
    return _default


def set_default_catalog(catalog: Catalog) -> None:
    global _default
    _default = catalog
