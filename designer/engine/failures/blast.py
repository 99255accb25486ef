"""Blast radius: from the drawn graph alone, how many accelerators one failed copy of an item cuts
off and how many more lose bandwidth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from designer.engine.failures.degrade import components
from designer.engine.failures.slices import torus_dims
from designer.model import torus as torus_ids
from designer.model.design import Design


# Above this many drawn items the connectivity check (a pass over the design per item asked) is
# skipped; what the item holds and what it serves are still counted.
BLAST_CONNECTIVITY_MAX_ITEMS = 5_000


@dataclass(frozen=True)
class BlastRadius:
    """What one failed copy of an item does: accelerators cut off (inside it, or left with no path
    to the others) and accelerators that stay connected but lose bandwidth (those it serves: what
    a switch reaches going down towards the accelerators). `checked` is False when the design was
    too big to check connectivity."""

    cut_off: int
    slowed: int
    checked: bool = True

    def text(self) -> str:
        out = f"{self.cut_off:,} accelerator{'s' if self.cut_off != 1 else ''} cut off, {self.slowed:,} slowed"
        return out if self.checked else out + " (connectivity not checked: design too big)"


class BlastIndex:
    """What `blast_radius` needs of a whole design, built once (one pass over items and links):
    the app builds it off the UI thread for a big design, then asks per item."""

    def __init__(self, design: Design):
        self.design = design
        items = design.items
        self.chains = design.chains()
        self.children = design.children_index()
        self.mult: dict[str, int] = {}
        self.neighbours: dict[str, set[str]] = {}
        for link in design.links.values():
            self.neighbours.setdefault(link.a, set()).add(link.b)
            self.neighbours.setdefault(link.b, set()).add(link.a)
        # Hops from the nearest accelerator: "down" is towards a lower level.
        self.level = {i: 0 for i, it in items.items() if it.kind == "accelerator"}
        frontier = list(self.level)
        while frontier:
            nxt = []
            for node in frontier:
                for other in self.neighbours.get(node, ()):
                    if other not in self.level:
                        self.level[other] = self.level[node] + 1
                        nxt.append(other)
            frontier = nxt
        self.checked = len(items) <= BLAST_CONNECTIVITY_MAX_ITEMS
        self.healthy = components(design) if self.checked else []

    def multiplicity(self, item_id: str) -> int:
        hit = self.mult.get(item_id)
        if hit is None:
            item = self.design.items[item_id]
            hit = self.mult[item_id] = item.count * (self.multiplicity(item.parent) if item.parent else 1)
        return hit

    def nic_sharers(self, accelerator: str) -> set[str]:
        """The accelerators whose scale-out traffic shares `accelerator`'s NICs: as the engine
        routes it (network.server_paths, NCCL's PXN), the accelerators of one server joined by links
        inside it through accelerators and on-board switches send over all the server's NICs."""
        items = self.design.items
        server = next((i for i in self.chains[accelerator] if items[i].kind == "server"), None)
        if server is None:
            return {accelerator}
        joined, stack = {accelerator}, [accelerator]
        while stack:
            node = stack.pop()
            for other in self.neighbours.get(node, ()):
                if (other not in joined and items[other].kind in ("accelerator", "switch")
                        and server in self.chains[other]):
                    joined.add(other)
                    stack.append(other)
        return {i for i in joined if items[i].kind == "accelerator"}

    def radius(self, item_id: str) -> BlastRadius:
        items, chains = self.design.items, self.chains
        own = self.multiplicity(item_id)
        inside = {item_id} | {i.id for i in self.design.descendants(item_id, self.children)}
        held = sum(self.multiplicity(i) for i in inside if items[i].kind == "accelerator") // own
        cut = held
        if self.checked and self.healthy:
            total = sum(size * islands for size, islands, _ in self.healthy)
            if self.healthy[0][0] == total:
                links = self.design.links
                rest = Design(self.design.name, "", {i: it for i, it in items.items() if i not in inside},
                              {k: l for k, l in links.items() if l.a not in inside and l.b not in inside})
                left = components(rest)
                lost = total - (left[0][0] if left else 0) - held * own
                outer = next((i for i in reversed(chains[item_id]) if items[i].count > 1), None)
                holds_compute = outer is not None and any(
                    items[i].kind == "accelerator" and outer in chains[i] for i in items)
                if own == 1:
                    cut += lost
                elif holds_compute:
                    cut += round(lost / own)
                # Otherwise its copies are parallel paths (a spine of 16): one failing cuts nothing.
        served: set[str] = set()
        through_nic: set[str] = set()
        level = self.level
        stack = [i for i in inside if i in level and items[i].kind != "accelerator"]
        seen = set(stack)
        while stack:
            node = stack.pop()
            for other in self.neighbours.get(node, ()):
                if other in seen or level.get(other, 1 << 30) >= level[node]:
                    continue
                seen.add(other)
                if items[other].kind == "accelerator":
                    served.add(other)
                    if items[node].kind == "nic":
                        through_nic.add(other)
                else:
                    stack.append(other)
        for accelerator in through_nic:
            served |= self.nic_sharers(accelerator)
        item_chain = set(chains[item_id])

        def per_copy(accelerator: str) -> int:
            """Copies of an accelerator in one copy of what it shares with the failed item."""
            common = next((c for c in chains[accelerator] if c in item_chain), None)
            return self.multiplicity(accelerator) // (self.multiplicity(common) if common else 1)

        slowed = sum(per_copy(a) for a in served if a not in inside)
        on_lines = self.on_switched_lines(item_id)
        if on_lines is not None:
            slowed = max(slowed, on_lines)
        return BlastRadius(cut, max(0, slowed - (cut - held)), self.checked)

    def on_switched_lines(self, item_id: str) -> int | None:
        """The chips on the torus lines a circuit switch of the torus template joins between
        blocks (docs/goodput.md, "A failed circuit switch"): failed, every one of those lines
        breaks, not only the chips linked to it (TPU v4 pod: 16 lines of 16 chips, 256, where 128
        are linked to it). None for any other item."""
        params = (self.design.settings.get("template") or {}).get("params") or {}
        axis = torus_ids.circuit_switch_axis(item_id)
        if (self.design.settings.get("template") or {}).get("name") != "torus" or axis is None \
                or not params.get("block") or not params.get("dims"):
            return None
        dims, block = torus_dims(params["dims"]), torus_dims(params["block"])
        if len(dims) != len(block) or axis >= len(dims) or dims == block:
            return None
        faces = set()
        for other in self.neighbours.get(item_id, ()):
            coord = torus_ids.chip_coord(other)
            if coord is not None and len(coord) == len(dims):
                faces.add(coord[:axis] + coord[axis + 1:])
        blocks_across = math.prod(d // b for i, (d, b) in enumerate(zip(dims, block)) if i != axis)
        return len(faces) * blocks_across * dims[axis]


def blast_radius(design: Design, item_id: str) -> BlastRadius:
    """What one failed copy of an item does (`BlastIndex(design).radius(item_id)`)."""
    return BlastIndex(design).radius(item_id)
