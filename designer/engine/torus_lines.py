"""The lines of a torus of blocks that failed circuit switches or links break (docs/goodput.md, "A
failed circuit switch").

A torus drawn from the template with blocks (TPU v4's 4 × 4 × 4 cubes) runs each line of a
dimension through every block it crosses: b − 1 hops inside a block, chip to chip, and one hop into
the next block, through the circuit switch that serves that face position along that axis (a link
from the block's last chip on the line to the switch, one from the switch to the next block's first
chip). A *hop class* is a place along the block (0 … b − 1) of the lines at one face position of one
axis: the blocks' copies of it are alike, so what is left of a hop class is its links' capacity over
what they would have with every present chip's links whole (a failed link's copies spread evenly
over its copies, as everywhere in the engine; a chip missing is a hole, `network._torus`). A failed
circuit switch takes the block-to-block hop of its face positions away in every block: each line
through them breaks into segments of b chips.

What follows (`TorusLines`): the cut across a dimension (its two planes, placed where they cross
the fewest links) and the share of a whole ring's capacity the dimension's rings keep, its broken
lines detouring over neighbouring ones (`factor`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from designer.model import torus as torus_ids
from designer.model.design import Design

_AXIS_NAMES = "xyz"


@dataclass(frozen=True)
class TorusLines:
    """What is left of each hop class of a torus of blocks. `dims` and `block` per dimension of
    more than one chip, `left[a]` an array (face positions along axis a, block[a]) of the share of
    each hop class's capacity left, 1 where whole (the last column the block-to-block hop),
    `link_cap` the whole links' GB/s per direction."""

    dims: tuple[int, ...]
    block: tuple[int, ...]
    left: tuple[np.ndarray, ...]
    link_cap: float

    def lines(self, axis: int) -> int:
        """Lines of the whole torus along `axis`."""
        return math.prod(self.dims) // self.dims[axis]

    def _per_face(self, axis: int) -> int:
        return self.lines(axis) // len(self.left[axis])

    def cut(self, axis: int) -> float:
        """Links across `axis`'s two planes k/2 apart (each crosses every line once), placed where
        they cross the fewest: the whole torus's 2 × N / k less what its hop classes lost."""
        left, k, b = self.left[axis], self.dims[axis], self.block[axis]
        sums = left.sum(axis=0)
        return self._per_face(axis) * min(sums[g % b] + sums[(g + k // 2) % b] for g in range(b))

    def factor(self, axis: int, across_blocks: bool = True) -> float:
        """The share of a whole ring's capacity the rings along `axis` keep: a ring through every
        hop class (`across_blocks`: round the dimension, or a segment longer than a block), else
        one inside a block (its hops between blocks not taken). A ring whose line lost capacity
        runs at what its weakest hop has left, or detours round the hop over a neighbouring line
        whole there (through links of the other dimensions, idle in this dimension's phase), whose
        links then carry two rings' bytes: half a ring's capacity, less where more than half the
        lines lost that hop (1 − their share), none where all did (`split`). The phase waits for
        its slowest ring."""
        left = self.left[axis] if across_blocks else self.left[axis][:, :-1]
        if left.shape[1] == 0:
            return 1.0
        worst = float(left.min())
        if worst >= 1.0:
            return 1.0
        detour = min(0.5, 1.0 - float((left < 1.0).mean(axis=0).max()))
        return max(worst, detour)

    def split(self) -> str | None:
        """Why the torus falls apart, where a hop class of a dimension lost every line: nothing
        joins the chips on its two sides (moving along the other dimensions never crosses it)."""
        for axis, left in enumerate(self.left):
            if bool((left.max(axis=0) <= 0.0).any()):
                name = _AXIS_NAMES[axis] if len(self.dims) <= 3 else f"axis {axis + 1}"
                return (f"every line along {name} lost the same hop of every block: the torus falls apart "
                        f"into slabs across {name}, which the what-if does not evaluate")
        return None

    def factors(self, axis: int) -> tuple[float, float]:
        return self.factor(axis, True), self.factor(axis, False)

    def text(self) -> str:
        """"16 of the 256 lines along x broken, rerouted over neighbouring lines", per axis that
        lost capacity."""
        parts = []
        for axis, left in enumerate(self.left):
            per_line = left.min(axis=1)
            name = _AXIS_NAMES[axis] if len(self.dims) <= 3 else f"axis {axis + 1}"
            of = f"of the {self.lines(axis):,} lines along {name}"
            broken = int((per_line <= 0.0).sum()) * self._per_face(axis)
            if broken:
                parts.append(f"{broken:,} {of} broken, rerouted over neighbouring lines")
            thinned = per_line[(per_line > 0.0) & (per_line < 1.0)]
            if len(thinned):
                parts.append(f"{len(thinned) * self._per_face(axis):,} {of} thinned to "
                             f"{float(thinned.min()):.0%} of their links")
        return "; ".join(parts)


def torus_lines(design: Design, dims: tuple[int, ...], block: tuple[int, ...], links, accelerators,
                copies: dict, scale_up: str, passthrough: Callable[[object], bool]) -> TorusLines | None:
    """What is left of each hop class of a torus of blocks (`dims` and `block` as the template
    drew it, all dimensions); None where every line is whole, or where the chips are not the
    template's (ids `torus_ids.chip_coord` cannot place). `links` and `accelerators` the fabric's,
    `scale_up` their tier's name, `passthrough(item)` whether an item is a circuit switch."""
    axes = [a for a, d in enumerate(dims) if d > 1]
    faces = [math.prod(block) // block[a] for a in axes]
    present = [np.zeros((f, block[a])) for f, a in zip(faces, axes)]
    expected = [np.zeros((f, block[a])) for f, a in zip(faces, axes)]
    # The two sides of a block-to-block hop: the last chip of a face to its switch, the switch to
    # the first chip of the next block's.
    sides = {(end, i): np.zeros(f) for i, f in enumerate(faces) for end in ("last", "first")}
    wanted = {(end, i): np.zeros(f) for i, f in enumerate(faces) for end in ("last", "first")}
    coords: dict[str, tuple[int, ...]] = {}
    for accelerator in accelerators:
        coord = torus_ids.chip_coord(accelerator.id)
        if coord is None or len(coord) != len(dims) or any(c >= b for c, b in zip(coord, block)):
            return None
        coords[accelerator.id] = coord

    def face(coord: tuple[int, ...], axis: int) -> int:
        index = 0
        for i, (c, b) in enumerate(zip(coord, block)):
            if i != axis:
                index = index * b + c
        return index

    for accelerator_id, coord in coords.items():
        tag = accelerator_id[len(torus_ids.chip_id(coord)):]
        count = copies[accelerator_id]
        for i, a in enumerate(axes):
            f, b = face(coord, a), block[a]
            if coord[a] < b - 1:
                nxt = list(coord)
                nxt[a] += 1
                if torus_ids.chip_id(tuple(nxt)) + tag in coords:
                    expected[i][f, coord[a]] += count
            if coord[a] == b - 1:
                wanted["last", i][f] += count
            if coord[a] == 0:
                wanted["first", i][f] += count
    items = design.items
    link_cap = 0.0
    index_of = {a: i for i, a in enumerate(axes)}
    for link in links:
        if link.tier != scale_up:
            continue
        ca, cb = coords.get(link.a), coords.get(link.b)
        if ca is not None and cb is not None:
            apart = [a for a in range(len(dims)) if ca[a] != cb[a]]
            if len(apart) != 1 or abs(ca[apart[0]] - cb[apart[0]]) != 1 or apart[0] not in index_of:
                continue
            a = apart[0]
            present[index_of[a]][face(ca, a), min(ca[a], cb[a])] += link.instances * link.cap
        else:
            chip, other = (link.a, link.b) if ca is not None else (link.b, link.a)
            coord = ca if ca is not None else cb
            if coord is None or not passthrough(items[other]):
                continue
            a = torus_ids.circuit_switch_axis(other)
            if a not in index_of:
                continue
            i = index_of[a]
            if coord[a] == block[a] - 1:
                sides["last", i][face(coord, a)] += link.instances * link.cap
            if coord[a] == 0:
                sides["first", i][face(coord, a)] += link.instances * link.cap
        link_cap = max(link_cap, link.cap)
    if link_cap <= 0.0:
        return None

    def share(have: np.ndarray, want: np.ndarray) -> np.ndarray:
        out = np.ones_like(have)
        np.divide(have, want * link_cap, out=out, where=want > 0)
        out[out > 1.0 - 1e-9] = 1.0  # whole, but for the rounding of the division
        return np.clip(out, 0.0, 1.0)

    left = []
    for i in range(len(axes)):
        hop = share(present[i], expected[i])
        hop[:, -1] = np.minimum(share(sides["last", i], wanted["last", i]),
                                share(sides["first", i], wanted["first", i]))
        left.append(hop)
    if all(bool((hop >= 1.0).all()) for hop in left):
        return None
    return TorusLines(tuple(dims[a] for a in axes), tuple(block[a] for a in axes), tuple(left), link_cap)
