"""A rack's front view: what fills which U, the power it draws against its budget, what does not fit.

Each item directly inside a rack that has height (a server or switch with `height_u` in the
catalogue, or a group of them: N copies stacked as one block) is a `Slot`, stacked from U1 at the
bottom. An item's `rack_u` (saved in the file) asks for its lowest U; items without one go above the
placed ones, in natural id order, and an item asking for a U already filled goes to the next free one.
Items without height (a zero-U switch, an accelerator mounted in the rack) count in the power only.
A rack drawn inside groups stands for several identical racks: it is shown once, with its copies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from designer.model.catalog import Catalog
from designer.model.design import Design, Item, _natural_key
from designer.model.edits import Edit, UpdateItem
from designer.model.errors import DesignError
from designer.model.power import item_power_w

HEIGHT_KINDS = ("server", "switch")


@dataclass(frozen=True)
class Slot:
    """One item (or a group's copies) in the rack: U `first_u` to `top_u`, both included."""

    item_id: str
    label: str  # the item as the canvas names it
    contents: str  # what it is, e.g. "NVIDIA DGX H100" or "4 × NVIDIA DGX H100"
    first_u: int
    height_u: int
    power_w: float  # of the whole slot, all its copies and everything inside
    copies: int = 1  # a group's count: as many identical units stacked
    requested_u: int | None = None  # the item's `rack_u`, when it could not be honoured
    unit_contents: str = ""  # what one of a group's copies is ("NVIDIA DGX H100")

    @property
    def top_u(self) -> int:
        return self.first_u + self.height_u - 1

    @property
    def unit_u(self) -> int:
        """Height of one copy."""
        return self.height_u // self.copies


@dataclass(frozen=True)
class Unslotted:
    """Something inside the rack that fills no U of it (its power still counts)."""

    item_id: str
    label: str
    power_w: float


@dataclass(frozen=True)
class RackElevation:
    rack_id: str
    label: str
    part_name: str
    height_u: int  # the rack's own
    budget_w: float | None  # None: the rack part states none
    copies: int  # identical racks this drawn one stands for
    slots: tuple[Slot, ...]  # bottom first
    unslotted: tuple[Unslotted, ...]

    @property
    def used_u(self) -> int:
        return sum(slot.height_u for slot in self.slots)

    @property
    def free_u(self) -> int:
        """U left empty (negative: more U stacked than the rack has)."""
        return self.height_u - self.used_u

    @property
    def top_u(self) -> int:
        return max((slot.top_u for slot in self.slots), default=0)

    @property
    def overflow_u(self) -> int:
        """How many U stick out above the rack."""
        return max(0, self.top_u - self.height_u)

    @property
    def power_w(self) -> float:
        return sum(slot.power_w for slot in self.slots) + sum(other.power_w for other in self.unslotted)

    @property
    def over_budget_w(self) -> float:
        return max(0.0, self.power_w - self.budget_w) if self.budget_w is not None else 0.0

    def fits(self, slot: Slot) -> bool:
        return slot.top_u <= self.height_u


def racks(design: Design) -> list[Item]:
    """Every drawn rack, in natural id order."""
    return sorted((item for item in design.items.values() if item.kind == "rack"), key=lambda i: _natural_key(i.id))


def rack_elevations(design: Design, catalog: Catalog) -> list[RackElevation]:
    return [rack_elevation(design, catalog, rack.id) for rack in racks(design)]


def rack_elevation(design: Design, catalog: Catalog, rack_id: str) -> RackElevation:
    rack = design.item(rack_id)
    if rack.kind != "rack":
        raise DesignError(f"item '{rack_id}' is a {rack.kind}, not a rack")
    part = catalog.get(rack.part)
    index = design.children_index()
    budget_kw = part.get("power_budget_kw") if part is not None else None
    wanted: list[tuple[Item, int, float, int, str, str]] = []
    unslotted: list[Unslotted] = []
    for child in sorted(index.get(rack_id, []), key=_stacking_key):
        height, power = _fill(design, catalog, index, child)
        if height:
            copies = child.count if child.kind == "group" and height % child.count == 0 else 1
            wanted.append((child, height, power, copies, _contents(catalog, index, child, child.count),
                           _contents(catalog, index, child, 1)))
        else:
            unslotted.append(Unslotted(child.id, child.label, power))
    slots, next_free = [], 1
    for child, height, power, copies, contents, unit_contents in wanted:
        first = max(next_free, child.rack_u or next_free)
        requested = child.rack_u if child.rack_u is not None and child.rack_u != first else None
        slots.append(Slot(child.id, child.label, contents, first, height, power, copies, requested, unit_contents))
        next_free = first + height
    return RackElevation(
        rack_id=rack.id, label=rack.label, part_name=part.name if part is not None else (rack.part or ""),
        height_u=int(part.number("height_u")) if part is not None else 0,
        budget_w=float(budget_kw) * 1000 if budget_kw is not None else None,
        copies=design.multiplicity(rack.id), slots=tuple(slots), unslotted=tuple(unslotted))


def reorder(design: Design, catalog: Catalog, rack_id: str, order: list[str], text: str | None = None) -> Edit:
    """The edit that stacks the rack's slots in `order` (item ids, bottom first), packed from U1:
    each item gets the `rack_u` it then starts at, all in one edit. Items not named keep their
    place in the stack after the named ones."""
    elevation = rack_elevation(design, catalog, rack_id)
    heights = {slot.item_id: slot.height_u for slot in elevation.slots}
    unknown = [item_id for item_id in order if item_id not in heights]
    if unknown:
        raise DesignError(f"item '{unknown[0]}' fills no U of rack '{rack_id}'")
    ops, next_free = [], 1
    for item_id in list(dict.fromkeys(order)) + [i for i in heights if i not in order]:
        old = design.items[item_id]
        if old.rack_u != next_free:
            ops.append(UpdateItem(old, replace(old, rack_u=next_free)))
        next_free += heights[item_id]
    return Edit(tuple(ops), text or f"Reorder rack {elevation.label}")


def _stacking_key(item: Item) -> tuple:
    return (item.rack_u is None, item.rack_u or 0, _natural_key(item.id))


def _fill(design: Design, catalog: Catalog, index: dict, top: Item) -> tuple[int, float]:
    """U and watts of one rack child with everything inside it (all its copies). A part of less
    than a whole U still fills the U it sits in; a switch inside a server is in the server's U."""
    height = 0.0
    power = 0.0
    stack: list[tuple[Item, int, bool]] = [(top, top.count, False)]
    while stack:
        item, copies, in_server = stack.pop()
        part = catalog.get(item.part)
        if item.kind in HEIGHT_KINDS and not in_server and part is not None and part.kind == item.kind:
            height += math.ceil(part.number("height_u")) * copies
        power += item_power_w(design, item, catalog) * copies
        for child in index.get(item.id, []):
            stack.append((child, copies * child.count, in_server or item.kind == "server"))
    return int(height), power


def _contents(catalog: Catalog, index: dict, top: Item, copies: int) -> str:
    """What a slot is: the part's name, or for a group the parts with height it holds, counted over
    `copies` of it ("4 × NVIDIA DGX H100", "1 × Slingshot switch + 4 × MI250X node")."""
    def part_name(item: Item) -> str:
        part = catalog.get(item.part)
        return part.name if part is not None else (item.part or item.kind)

    if top.kind != "group":
        return part_name(top)
    counts: dict[str, int] = {}
    stack = [(top, copies)]
    while stack:
        item, n = stack.pop()
        if item.kind in HEIGHT_KINDS:
            counts[part_name(item)] = counts.get(part_name(item), 0) + n
            continue  # what is inside a server is in its U
        stack.extend((child, n * child.count) for child in index.get(item.id, []))
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if len(ranked) == 1 and ranked[0][1] == 1:
        return ranked[0][0]
    return " + ".join(f"{n} × {name}" for name, n in ranked) or "empty"
