"""The parts catalogue: hardware figures loaded from JSON data files, never from code.

The shipped files live in `resources/catalog/`; a user's own file may add or override parts by id.
Every file is checked against CATALOG_SCHEMA (docs/catalog.md describes it; every figure carries its
unit in the field name) and every reference between parts is resolved before a catalogue is used;
a refusal names the file the problem is in (the user's own, for the user's parts) and its JSON path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from designer.model.errors import CatalogError
from designer.model.validation import check, parse_json, read_json
from designer.paths import catalog_dir, user_config_dir

CATALOG_FORMAT = "cluster-designer-catalog"
CATALOG_VERSION = 1
KINDS = ("accelerator", "cpu", "nic", "switch", "server", "rack", "medium", "storage")
PRECISIONS = (
    "fp64", "fp64_tensor", "fp32", "tf32", "tf32_sparse", "bf16", "bf16_sparse",
    "fp8", "fp8_sparse", "int8", "int8_sparse",
)
_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

MEMORY_TYPES = ("hbm2", "hbm2e", "hbm3", "hbm3e", "sram")
FAMILIES = ("nvlink", "pcie", "infiniband", "ethernet", "ici", "fabrex", "infinity-fabric", "efa", "ipu", "wse")
TIERS = ("scale-up", "scale-out")
# Where a price or power figure comes from (`price_basis`, `power_basis`; absent means published):
# "published" for a figure published for the part itself (a list price, a press estimate, a
# datasheet), "derived" for an estimate this catalogue computes by a stated rule from published
# figures of comparable parts or of the part's constituents (docs/costs.md).
BASES = ("published", "derived")
# The user's file and the shipped ones are a few hundred kilobytes; this is a hundred times that.
MAX_CATALOG_BYTES = 16 * 2 ** 20
MAX_PARTS = 10_000
# Parts inside one server: the generators draw each (a mesh joins every pair of accelerators), so
# these bound what one `new` can make. The largest shipped platform, GB200 NVL72, has 72 slots.
MAX_ACCELERATOR_SLOTS = 256
MAX_SERVER_NICS = 256
MAX_SERVER_CPUS = 16
MAX_SCALE_UP_SWITCHES = 64


def _figure(maximum: float, unit: str) -> dict:
    return {"type": "number", "minimum": 0, "maximum": maximum,
            "x-expected": f"a figure from 0 to {maximum:,g} {unit}"}


def _positive(maximum: float, unit: str) -> dict:
    return {"type": "number", "exclusiveMinimum": 0, "maximum": maximum,
            "x-expected": f"a figure above 0 and at most {maximum:,g} {unit}"}


def _count(low: int, high: int) -> dict:
    return {"type": "integer", "minimum": low, "maximum": high, "x-expected": f"a whole number from {low} to {high:,}"}


def _text(max_chars: int, required: bool = False) -> dict:
    return {"type": "string", "maxLength": max_chars, "minLength": 1 if required else 0,
            "pattern": r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]*$",
            "x-expected": f"a text of at most {max_chars:,} characters, valid Unicode, no control characters"}


_ID = {"type": "string", "maxLength": 64, "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$",
       "x-expected": "a kebab-case part id like \"h100-sxm\""}
_MEDIA = {"type": "array", "maxItems": 64, "items": _ID}
_COMMON = {
    "id": _ID, "kind": {"enum": list(KINDS)}, "name": _text(200, True), "vendor": _text(200),
    "source": _text(2000, True), "notes": _text(10_000),
    "price_usd": _figure(1e9, "USD"), "price_source": _text(2000, True),
    "price_date": {"type": "string", "pattern": r"^[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?$",
                   "x-expected": "the month or day of the price, like \"2024-01\" or \"2024-01-31\""},
    "price_basis": {"enum": list(BASES)},
}
# How a power figure was found (`power_basis`, beside `power_w` or a platform's `system_power_w`).
_POWER_BASIS = {"enum": list(BASES)}
# What a price needs beside it: when it was quoted and where.
_PRICE_NEEDS = ["price_source", "price_date"]
_PRICE_FIGURES = ("price_usd", "copper_cable_price_usd", "optical_cable_price_usd", "transceiver_price_usd")
_PRICE_FIELDS = (*_PRICE_FIGURES, "price_basis")
# Every field of every kind (docs/catalog.md), with its unit and a bound far above any real part.
_FIELDS: dict[str, dict[str, dict]] = {
    "accelerator": {
        "peak_tflops": {"type": "object", "additionalProperties": False,
                        "properties": {p: _figure(1e7, "TFLOPS") for p in PRECISIONS}},
        "memory_gib": _figure(1e6, "GiB"), "memory_type": {"enum": list(MEMORY_TYPES)},
        "memory_bw_tb_per_s": _figure(1e6, "TB/s"), "power_w": _figure(1e6, "W"), "media": _MEDIA,
        "power_basis": _POWER_BASIS,
        "scale_up_medium": _ID, "scale_up_lanes": _count(0, 4096), "host_medium": _ID, "host_lanes": _count(0, 4096),
    },
    "cpu": {"cores": _count(0, 10_000), "power_w": _figure(1e5, "W"), "power_basis": _POWER_BASIS, "media": _MEDIA},
    "nic": {
        "port_gbps": _figure(1e6, "Gb/s"), "ports": _count(1, 64), "media": _MEDIA, "host_medium": _ID,
        "host_lanes": _count(1, 4096), "power_w": _figure(1e5, "W"), "achieved_gb_per_s": _figure(1e5, "GB/s"),
        "power_basis": _POWER_BASIS,
    },
    "switch": {
        "ports": _count(1, 1_000_000), "port_lanes": _count(1, 1024), "port_gbps": _figure(1e6, "Gb/s"),
        "media": _MEDIA,
        "bandwidth_tb_per_s": _figure(1e5, "TB/s"), "height_u": _figure(100, "U"), "power_w": _figure(1e6, "W"),
        "power_basis": _POWER_BASIS,
        "latency_ns": _figure(1e9, "ns"), "in_network_reduction": {"enum": ["nvls", "sharp"]},
        "circuit": {"type": "boolean"}, "cable_bundle": {"type": "boolean"},
    },
    "server": {
        "height_u": _figure(100, "U"), "system_power_w": _figure(1e7, "W"),
        "power_basis": _POWER_BASIS,
        "accelerator_slots": _count(0, MAX_ACCELERATOR_SLOTS), "nic_slots": _count(0, 1024),
        "default_accelerator": _ID, "default_nic": _ID, "default_nics": _count(0, MAX_SERVER_NICS),
        "default_cpu": _ID, "default_cpus": _count(0, MAX_SERVER_CPUS), "media": _MEDIA,
        "scale_up": {"type": "object", "additionalProperties": False, "properties": {
            "switch": _ID, "pcie_switch": _ID, "switches": _count(1, MAX_SCALE_UP_SWITCHES),
            "mesh": {"type": "boolean"}, "domain_servers": _count(1, 1_000_000)}},
    },
    # 200 U: a supercomputer cabinet (Cray EX) has no rack units and is counted in node and switch slots.
    "rack": {"height_u": _positive(200, "U"), "power_budget_kw": _positive(10_000, "kW")},
    # A parallel file system or object store the cluster checkpoints to (a design's `storage` setting).
    "storage": {
        "read_gb_per_s": _positive(1e6, "GB/s"), "write_gb_per_s": _positive(1e6, "GB/s"),
        "capacity_tb": _figure(1e7, "TB"), "height_u": _figure(100, "U"), "power_w": _figure(1e6, "W"),
        "power_basis": _POWER_BASIS,
    },
    "medium": {
        "family": {"enum": list(FAMILIES)}, "tier": {"enum": list(TIERS)}, "lane_gb_per_s": _positive(1e5, "GB/s"),
        "latency_ns": _figure(1e9, "ns"), "lanes_per_cable": _count(0, 4096), "transceivers_per_cable": _count(0, 16),
        # One cable by where its ends sit: passive copper (DAC) within a rack, fibre beyond (with
        # `transceivers_per_cable` transceivers at `transceiver_price_usd` each).
        "copper_cable_price_usd": _figure(1e7, "USD"), "optical_cable_price_usd": _figure(1e7, "USD"),
        "transceiver_price_usd": _figure(1e7, "USD"),
    },
}
# Fields each kind must have.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "accelerator": ("memory_gib", "power_w"),
    "cpu": ("cores", "power_w"),
    "nic": ("port_gbps", "ports"),
    "switch": ("ports", "port_gbps"),
    "server": ("height_u", "system_power_w", "accelerator_slots"),
    "rack": ("height_u", "power_budget_kw"),
    "medium": ("lane_gb_per_s", "latency_ns", "tier"),
    "storage": ("read_gb_per_s", "write_gb_per_s"),
}
CATALOG_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Cluster Designer parts catalogue",
    "type": "object",
    "required": ["format", "version", "parts"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": CATALOG_FORMAT},
        "version": {"const": CATALOG_VERSION},
        "parts": {"type": "array", "maxItems": MAX_PARTS, "items": {
            "type": "object",
            "required": ["id", "kind"],
            "properties": {"id": _ID, "kind": _COMMON["kind"]},
            "allOf": [{"if": {"properties": {"kind": {"const": kind}}},
                       "then": {"required": ["name", "source", *_REQUIRED[kind]],
                                "dependentRequired": {key: _PRICE_NEEDS for key in _PRICE_FIELDS},
                                "additionalProperties": False,
                                "properties": {**_COMMON, **fields}}}
                      for kind, fields in _FIELDS.items()],
        }},
    },
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
    where: str = field(default="$", compare=False)  # its JSON path in `origin`

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

    @property
    def price_derived(self) -> bool:
        """Its prices are an estimate derived from other parts' published figures, not published for it."""
        return self.data.get("price_basis") == "derived"

    @property
    def power_derived(self) -> bool:
        """Its power figure is an estimate derived from other parts' published figures."""
        return self.data.get("power_basis") == "derived"

    def __reduce__(self) -> tuple[Any, ...]:
        # A mapping proxy does not pickle: a part travels (to a sweep's Dask workers) as its plain entry.
        return (part_of_entry, (_thaw(self.data), self.origin, self.where))


def part_of_entry(entry: Mapping[str, Any], origin: str, where: str) -> Part:
    """The part of one checked catalogue entry, its fields made read-only."""
    return Part(id=entry["id"], kind=entry["kind"], name=entry["name"], source=entry["source"],
                data=_freeze(entry), origin=origin, where=where)


class Catalog:
    """All parts by id, with the file each came from."""

    def __init__(self, parts: Iterable[Part] = ()):
        self._parts: dict[str, Part] = {}
        for part in parts:
            self._parts[part.id] = part

    def __contains__(self, part_id: object) -> bool:
        return part_id in self._parts

    def __getitem__(self, part_id: str | None) -> Part:
        # An item without a part (`Item.part` is None) is missing from the catalogue like an unknown id.
        if part_id is None:
            raise KeyError(part_id)
        return self._parts[part_id]

    def __iter__(self) -> Iterator[Part]:
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
        """A new catalogue: this one with `other`'s parts added or overriding by id. An override
        keeps the kind of the part it replaces (other parts refer to it as that kind), so a
        problem is always blamed on the file that has it."""
        merged = Catalog(self)
        for part in other:
            replaced = merged._parts.get(part.id)
            if replaced is not None and replaced.kind != part.kind:
                raise CatalogError(part.origin, f"{part.where}.kind",
                                   f"'{part.id}' overrides a {replaced.kind}; an override keeps the kind of the part "
                                   f"it replaces, got {part.kind} (give the new part an id of its own)")
            merged._parts[part.id] = part if replaced is None else _own_figures(part, replaced)
        merged._check_references(other)
        return merged

    def _check_references(self, parts: Iterable[Part]) -> None:
        """Every part id that `parts` name exists in this catalogue, of the kind the field needs."""
        for part in parts:
            for key, kind in _REFERENCE_FIELDS.items():
                if key in part.data:
                    self._expect(part, key, part.data[key], kind)
            for index, ref in enumerate(part.media):
                self._expect(part, f"media[{index}]", ref, "medium")
            scale_up = part.data.get("scale_up", {})
            for key in ("switch", "pcie_switch"):
                if key in scale_up:
                    self._expect(part, f"scale_up.{key}", scale_up[key], "switch")
            if part.kind == "server" and part.data.get("default_nics", 0) and "default_nic" not in part.data:
                raise CatalogError(part.origin, f"{part.where}.default_nics",
                                   f"{part.data['default_nics']} default NICs but no default_nic names the part "
                                   f"(part '{part.id}')")

    def _expect(self, part: Part, key: str, ref: str, kind: str) -> None:
        target = self._parts.get(ref)
        if target is None or target.kind != kind:
            problem = f"refers to unknown {kind} '{ref}'" if target is None else \
                f"refers to '{ref}', a {target.kind}, where a {kind} belongs"
            raise CatalogError(part.origin, f"{part.where}.{key}", f"{problem} (part '{part.id}')")


# The figures a basis (`price_basis`, `power_basis`) speaks for.
_BASIS_FIGURES = {"price_basis": _PRICE_FIGURES, "power_basis": ("power_w", "system_power_w")}


def _own_figures(part: Part, replaced: Part) -> Part:
    """An override whose price (or power) differs from the part it replaces gives the user's own
    figure, a quote: a `price_basis` (`power_basis`) it carried over unchanged from the shipped
    part, as a copied entry does, no longer describes it and is dropped."""
    stale = [basis for basis, figures in _BASIS_FIGURES.items()
             if basis in part.data and part.get(basis) == replaced.get(basis)
             and any(part.get(key) != replaced.get(key) for key in figures)]
    if not stale:
        return part
    entry = {key: value for key, value in _thaw(part.data).items() if key not in stale}
    return part_of_entry(entry, part.origin, part.where)


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def parse_catalog_document(document: Any, origin: str) -> list[Part]:
    """The parts of one catalogue file's parsed JSON, checked against CATALOG_SCHEMA, then for ids
    used twice in the file. Every refusal names `origin` and the JSON path."""
    try:
        check(document, CATALOG_SCHEMA, origin, CatalogError)
    except CatalogError as exc:
        raise CatalogError(origin, exc.json_path, exc.problem + _part_hint(document, exc.json_path)) from None
    parts: list[Part] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(document["parts"]):
        where = f"$.parts[{index}]"
        if entry["id"] in seen:
            raise CatalogError(origin, f"{where}.id", f"'{entry['id']}' is also the id at {seen[entry['id']]}")
        seen[entry["id"]] = where
        if "price_date" in entry:
            _check_date(entry["price_date"], origin, f"{where}.price_date", entry["id"])
        parts.append(part_of_entry(entry, origin, where))
    return parts


def _check_date(text: str, origin: str, json_path: str, part_id: str) -> None:
    """A price's date, already shaped like "2024-01" or "2024-01-31" by the schema, is a real one
    (the schema's pattern lets "2024-02-31" through), and not after today: a price is dated when
    it was quoted (a month counts from its first day)."""
    try:
        day = date.fromisoformat(text if len(text) > 7 else f"{text}-01")
    except ValueError:
        raise CatalogError(origin, json_path, f"'{text}' is not a date on the calendar (part '{part_id}')") from None
    today = date.today()
    if day > today:
        raise CatalogError(origin, json_path, f"'{text}' is after today ({today.isoformat()}); a price is dated "
                                              f"when it was quoted (part '{part_id}')")


def _part_hint(document: Any, json_path: str | None) -> str:
    """" (part 'dgx-h100')" for a problem inside a part that has a usable id."""
    match = re.match(r"^\$\.parts\[(\d+)\]", json_path or "")
    if not match:
        return ""
    entry = document["parts"][int(match.group(1))]
    part_id = entry.get("id") if isinstance(entry, dict) else None
    return f" (part '{part_id}')" if isinstance(part_id, str) and _ID_PATTERN.match(part_id) else ""


def parse_catalog_text(text: str, origin: str) -> list[Part]:
    return parse_catalog_document(parse_json(text, origin, CatalogError), origin)


def read_catalog_file(path: Path) -> list[Part]:
    """One catalogue file: a regular file of at most MAX_CATALOG_BYTES, checked completely."""
    return parse_catalog_document(read_json(path, MAX_CATALOG_BYTES, "catalogue file", CatalogError), str(path))


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
            raise CatalogError(part.origin, f"{part.where}.id", f"'{part.id}' is also defined in {seen[part.id]}")
        seen[part.id] = part.origin
        catalog._parts[part.id] = part
    catalog._check_references(catalog)
    overlays = []
    user_path = default_user_catalog_path()
    if include_user and os.path.lexists(user_path):
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


# --- field names as a user reads them ---------------------------------------------------------------
# Every figure carries its unit in its field name (docs/catalog.md), so the unit shown is read from
# the name's ending; the name itself comes from this one table (the inspector's figures and any
# other list of part fields use `field_label`).
FIELD_NAMES: dict[str, str] = {
    "id": "Id", "kind": "Kind", "name": "Name", "vendor": "Vendor", "source": "Source", "notes": "Notes",
    "price_usd": "Price", "price_source": "Price source", "price_date": "Price date", "price_basis": "Price basis",
    "peak_tflops": "Peak", "memory_gib": "Memory", "memory_type": "Memory type",
    "memory_bw_tb_per_s": "Memory bandwidth", "power_w": "Power", "media": "Media", "power_basis": "Power basis",
    "scale_up_medium": "Scale-up medium", "scale_up_lanes": "Scale-up lanes", "host_medium": "Host medium",
    "host_lanes": "Host lanes", "cores": "Cores", "port_gbps": "Port rate", "ports": "Ports",
    "achieved_gb_per_s": "Achieved bandwidth", "port_lanes": "Lanes per port",
    "bandwidth_tb_per_s": "Switching bandwidth",
    "height_u": "Height", "latency_ns": "Latency", "in_network_reduction": "In-network reduction",
    "circuit": "Circuit switch", "cable_bundle": "Cable bundle", "system_power_w": "System power",
    "accelerator_slots": "Accelerator slots", "nic_slots": "NIC slots", "default_accelerator": "Default accelerator",
    "default_nic": "Default NIC", "default_nics": "Default NICs", "default_cpu": "Default CPU",
    "default_cpus": "Default CPUs", "scale_up": "Scale-up", "power_budget_kw": "Power budget",
    "read_gb_per_s": "Read bandwidth", "write_gb_per_s": "Write bandwidth", "capacity_tb": "Capacity",
    "family": "Family", "tier": "Tier", "lane_gb_per_s": "Lane rate", "lanes_per_cable": "Lanes per cable",
    "transceivers_per_cable": "Transceivers per cable", "copper_cable_price_usd": "Copper cable price",
    "optical_cable_price_usd": "Optical cable price", "transceiver_price_usd": "Transceiver price",
    # inside `scale_up`
    "switch": "switch", "pcie_switch": "PCIe switch", "switches": "switches", "mesh": "mesh",
    "domain_servers": "servers per domain",
}
# The unit a field name ends in, tried in order (`_tb_per_s` before `_tb`).
UNIT_ENDINGS: tuple[tuple[str, str], ...] = (
    ("_tb_per_s", "TB/s"), ("_gb_per_s", "GB/s"), ("_gbps", "Gb/s"), ("_tflops", "TFLOPS"), ("_gib", "GiB"),
    ("_kw", "kW"), ("_usd", "USD"), ("_ns", "ns"), ("_tb", "TB"), ("_w", "W"), ("_u", "U"),
)
_PRECISION_WORDS = {"fp64_tensor": "FP64 Tensor", "tf32_sparse": "TF32 sparse", "bf16_sparse": "BF16 sparse",
                    "fp8_sparse": "FP8 sparse", "int8_sparse": "INT8 sparse"}


def field_unit(key: str) -> str | None:
    """The unit a catalogue field's figure is in, from its name ("memory_bw_tb_per_s": "TB/s")."""
    return next((unit for ending, unit in UNIT_ENDINGS if key.endswith(ending)), None)


def field_label(key: str, sub_key: str | None = None) -> str:
    """A catalogue field as a user reads it: "Memory bandwidth (TB/s)", "Peak BF16 (TFLOPS)",
    "Scale-up switches" (a `sub_key` is a key inside an object field)."""
    name = FIELD_NAMES.get(key) or key.replace("_", " ").capitalize()
    unit = field_unit(key)
    if sub_key is not None:
        if key == "peak_tflops":
            name = f"{name} {_PRECISION_WORDS.get(sub_key, sub_key.upper())}"
        else:
            name = f"{name} {FIELD_NAMES.get(sub_key) or sub_key.replace('_', ' ')}"
            unit = field_unit(sub_key)
    return f"{name} ({unit})" if unit else name
