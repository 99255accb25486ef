"""What every topology generator shares: parameter specs, validation by name, server building."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from designer.engine.budget import MAX_WORK
from designer.model import placement
from designer.model.catalog import Catalog, Part
from designer.model.design import Design, Item, Link
from designer.model.errors import DesignerError, DesignError, printable

MAX_TEXT_CHARS = 200  # a text parameter (the design's name) is saved in the file, where names are this long


class TopologyError(DesignerError):
    """A generator parameter that cannot be used; the message names the parameter."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: type  # int, float or str
    default: Any
    help: str
    part_kind: str | None = None  # for str parameters naming a catalogue part
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | None = None


@dataclass(frozen=True)
class Generator:
    name: str
    summary: str
    params: tuple[Param, ...]
    build: Callable[[dict, Catalog], Design]

    def resolve(self, given: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
        known = {p.name: p for p in self.params}
        for key in given:
            if key not in known:
                raise TopologyError(f"{self.name}: unknown parameter '{key}'; it takes {', '.join(known)}")
        values = {}
        for param in self.params:
            raw = given.get(param.name, param.default)
            values[param.name] = _coerce(self.name, param, raw, catalog)
        return values

    def __call__(self, catalog: Catalog, **given: Any) -> Design:
        try:
            design = self.build(self.resolve(given, catalog), catalog)
        except (DesignError, TopologyError) as exc:
            if str(exc).startswith(f"{self.name}: "):
                raise
            raise TopologyError(f"{self.name}: {exc}") from None
        drawn = len(design.items) + len(design.links)
        if drawn > MAX_WORK:
            raise TopologyError(f"{self.name}: these parameters draw {len(design.items):,} items and "
                                f"{len(design.links):,} links, more than can be evaluated ({MAX_WORK:,} in all); "
                                "use smaller blocks or fewer parts per server (docs/limits.md)")
        return design


def _shown(value: Any) -> str:
    """A parameter's value as a refusal quotes it: short, printable."""
    text = printable(repr(value))
    return text if len(text) <= 40 else text[:39] + "…"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate: a non-UTF-8 byte from the command line
        return False
    return True


def _coerce(generator: str, param: Param, raw: Any, catalog: Catalog) -> Any:
    where = f"{generator}: parameter '{param.name}'"
    if raw is None:
        return None
    if param.kind in (int, float):
        try:
            value = param.kind(raw) if not isinstance(raw, str) else param.kind(raw.strip())
        except (TypeError, ValueError):
            raise TopologyError(f"{where} must be {'a whole number' if param.kind is int else 'a number'}, "
                                f"got {_shown(raw)}") from None
        if isinstance(raw, float) and param.kind is int and not raw.is_integer():
            raise TopologyError(f"{where} must be a whole number, got {_shown(raw)}")
        if param.kind is float and not math.isfinite(value):
            raise TopologyError(f"{where} must be finite, got {_shown(raw)}")
        if param.minimum is not None and value < param.minimum:
            raise TopologyError(f"{where} must be at least {param.minimum:g}, got {_shown(value)}")
        if param.maximum is not None and value > param.maximum:
            raise TopologyError(f"{where} must be at most {param.maximum:g}, got {_shown(value)}")
        return value
    text = str(raw)
    if len(text) > MAX_TEXT_CHARS or not text.isprintable() or not _encodable(text):
        raise TopologyError(f"{where} must be printable text of at most {MAX_TEXT_CHARS} characters, "
                            f"got {_shown(text)}")
    if param.choices is not None and text not in param.choices:
        raise TopologyError(f"{where} must be one of {', '.join(map(str, param.choices))}, got {_shown(text)}")
    if param.part_kind is not None:
        part = catalog.get(text)
        if part is None or part.kind != param.part_kind:
            options = ", ".join(p.id for p in catalog.of_kind(param.part_kind))
            kind = param.part_kind
            raise TopologyError(f"{where}: '{text}' is not {_article(kind)} {kind} in the catalogue; "
                                f"choose from {options}")
    return text


def common_medium(catalog: Catalog, a: Part, b: Part, prefer_family: tuple[str, ...] = ()) -> str:
    """The fastest medium both parts support (preferring the given families)."""
    shared = [m for m in a.media if m in b.media]
    if not shared:
        raise TopologyError(f"{a.name} and {b.name} share no link medium "
                            f"({', '.join(a.media)} vs {', '.join(b.media)})")

    def rank(medium_id: str) -> tuple[bool, float]:
        medium = catalog[medium_id]
        preferred = medium.get("family") in prefer_family
        return (preferred, medium.number("lane_gb_per_s"))

    return max(shared, key=rank)


class Builder:
    """Adds items and links to a design with readable, unique ids."""

    def __init__(self, design: Design, catalog: Catalog):
        self.design, self.catalog = design, catalog

    def item(self, item_id: str, kind: str, part: str | None = None, parent: str | None = None,
             name: str = "", x: float = 0, y: float = 0, count: int = 1) -> str:
        self.design.add_item(Item(item_id, kind, name=name, part=part, parent=parent, x=x, y=y, count=count))
        return item_id

    def link(self, a: str, b: str, medium: str, lanes: int = 1, match: tuple[str, str] | None = None) -> str:
        link_id = f"{a}--{b}"
        if link_id in self.design.links:
            link_id = self.design.new_id(link_id)
        self.design.add_link(Link(link_id, a, b, medium, lanes, match))
        return link_id

    def group(self, item_id: str, count: int, parent: str | None = None, name: str = "", x: float = 0,
              y: float = 0) -> str:
        return self.item(item_id, "group", parent=parent, name=name, x=x, y=y, count=count)

    def server(self, prefix: str, platform_id: str, parent: str | None, *, gpu: str | None = None,
               gpus: int | None = None, nic: str | None = None, nics: int | None = None,
               x: float = 0, y: float = 0, name: str = "") -> dict:
        """One server of a platform with its accelerators, CPUs, NICs and scale-up fabric wired.

        Returns the ids: {"server", "gpus": [...], "nics": [...], "switches": [...]}."""
        catalog = self.catalog
        platform = catalog[platform_id]
        gpu = gpu or platform.get("default_accelerator")
        gpus = int(gpus if gpus is not None else platform.number("accelerator_slots"))
        nic = nic or platform.get("default_nic")
        nics = int(nics if nics is not None else platform.number("default_nics"))
        server_id = self.item(f"{prefix}", "server", platform_id, parent, name=name or platform.name, x=x, y=y)
        gpu_part = catalog[gpu]
        ids: dict[str, Any] = {"server": server_id, "gpus": [], "nics": [], "switches": []}
        for g in range(gpus):
            ids["gpus"].append(self.item(f"{prefix}.gpu{g}", "accelerator", gpu, server_id, name=f"GPU {g}",
                                         x=20 + 70 * (g % 8), y=30 + 60 * (g // 8)))
        cpu = platform.get("default_cpu")
        for c in range(int(platform.number("default_cpus"))):
            if cpu:
                self.item(f"{prefix}.cpu{c}", "cpu", cpu, server_id, name=f"CPU {c}", x=20 + 70 * c, y=-30)
        if nic and nics:
            nic_part = catalog[nic]
            host = common_medium(catalog, gpu_part, nic_part, ("pcie",
                                                               )) if set(gpu_part.media) & set(nic_part.media) else None
            for n in range(nics):
                nic_id = self.item(f"{prefix}.nic{n}", "nic", nic, server_id, name=f"NIC {n}",
                                   x=20 + 70 * (n % 8), y=30 + 60 * (gpus // 8 + 1) + 50 * (n // 8))
                ids["nics"].append(nic_id)
                if host and gpus:
                    # NICs spread over the GPUs; each GPU reaches its own NIC over PCIe (GPUDirect).
                    gpu_id = ids["gpus"][n * gpus // nics]
                    self.link(gpu_id, nic_id, host, int(nic_part.number("host_lanes", 16)))
        self._scale_up(prefix, platform, gpu_part, ids)
        return ids

    def _scale_up(self, prefix: str, platform: Part, gpu_part: Part, ids: dict) -> None:
        scale_up = platform.get("scale_up") or {}
        gpus = ids["gpus"]
        if len(gpus) < 2 or not scale_up:
            return
        medium = gpu_part.get("scale_up_medium")
        lanes = int(gpu_part.number("scale_up_lanes", 1))
        switch_id = scale_up.get("switch") or scale_up.get("pcie_switch")
        if switch_id:
            switch = self.catalog[switch_id]
            count = int(scale_up.get("switches", 1))
            if medium not in switch.media:
                medium = common_medium(self.catalog, gpu_part, switch)
                lanes = (int(gpu_part.number("host_lanes", 16))
                         if self.catalog[medium].get("family") in ("pcie", "fabrex") else lanes)
            for s in range(count):
                ids["switches"].append(self.item(f"{prefix}.sw{s}", "switch", switch_id, ids["server"],
                                                 name=f"{switch.name} {s}", x=20 + 140 * s, y=-80))
            if self.catalog[medium].get("family") in ("pcie", "fabrex"):
                # A PCIe device hangs off one switch port; the switches are joined to each other.
                for g, gpu_id in enumerate(gpus):
                    self.link(gpu_id, ids["switches"][g * count // len(gpus)], medium, lanes)
                port_lanes = int(switch.number("port_lanes", 16))
                for i, a in enumerate(ids["switches"]):
                    for b in ids["switches"][i + 1:]:
                        self.link(a, b, medium, 2 * port_lanes)
                return
            for g, gpu_id in enumerate(gpus):
                for s, switch_item in enumerate(ids["switches"]):
                    share = placement.switch_lanes(lanes, count, g, s)
                    if share:
                        self.link(gpu_id, switch_item, medium, share)
        elif scale_up.get("mesh"):
            per_pair = placement.mesh_lanes(lanes, len(gpus))
            for i, a in enumerate(gpus):
                for b in gpus[i + 1:]:
                    self.link(a, b, medium, per_pair)


def new_design(name: str, description: str, template: str, params: dict) -> Design:
    return Design(name=name, description=description,
                  settings={"template": {"name": template, "params": {k: v for k,
                                                                      v in params.items() if v is not None}}})


def with_storage_and_spares(design: Design, resize: bool = False) -> Design:
    """Give a design checkpoint storage and hot spares for the goodput model (docs/goodput.md),
    unless it names its own (`resize`: size them again for a design changed since): one DDN
    AI400X2 (65 GB/s write) per 256 accelerators, at least one, as NVIDIA sizes DGX SuperPOD storage
    per scalable unit of 32 DGX; hot spare servers 2 % of the servers, at least one where there are
    servers."""
    if resize:
        design.settings.pop("storage", None)
        design.settings.pop("spares", None)
    accelerators = sum(design.multiplicity(i.id) for i in design.items.values() if i.kind == "accelerator")
    servers = sum(design.multiplicity(i.id) for i in design.items.values() if i.kind == "server")
    if accelerators and "storage" not in design.settings:
        design.settings["storage"] = {"part": "ddn-ai400x2", "count": max(1, -(-accelerators // 256))}
    if servers and "spares" not in design.settings:
        design.settings["spares"] = max(1, -(-servers * 2 // 100))
    return design


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
