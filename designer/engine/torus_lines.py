"""The lines of a torus or mesh drawn from the template that failed circuit switches or links
break (docs/goodput.md, "A failed circuit switch").

A torus drawn from the template with blocks (TPU v4's 4 × 4 × 4 cubes) runs each line of a
dimension through every block it crosses: b − 1 hops inside a block, chip to chip, and one hop into
the next block, through the circuit switch that serves that face position along that axis (a link
from the block's last chip on the line to the switch, one from the switch to the next block's first
chip). A *hop class* is a place along the block (0 … b − 1) of the lines at one face position of one
axis: the blocks' copies of it are alike, so what is left of a hop class is its links' capacity over
what they would have with every present chip's links whole (a failed link's copies spread evenly
over its copies, as everywhere in the engine; a chip missing is a hole, `network._torus`). A failed
circuit switch takes the block-to-block hop of its face positions away in every block: each line
through them breaks into segments of b chips. A torus drawn as one block (`block` = `dims`) has
one copy of each hop class, its last the wrap-around link of a line (none on an open mesh, as
Tesla Dojo's: its lines end at the edges).

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
    """What is left of each hop class of a torus or mesh. `dims` and `block` per dimension of
    more than one chip, `left[a]` an array (face positions along axis a, hop classes) of the share
    of each hop class's capacity left, 1 where whole: block[a] classes where the lines close (the
    last the block-to-block or wrap-around hop, `ring[a]`), block[a] − 1 on an open mesh's.
    `link_cap` the whole links' GB/s per direction."""

    dims: tuple[int, ...]
    block: tuple[int, ...]
    left: tuple[np.ndarray, ...]
    ring: tuple[bool, ...]
    link_cap: float

    def lines(self, axis: int) -> int:
        """Lines of the whole torus along `axis`."""
        return math.prod(self.dims) // self.dims[axis]

    def _per_face(self, axis: int) -> int:
        return self.lines(axis) // len(self.left[axis])

    def cut(self, axis: int) -> float:
        """Links across `axis`'s two planes k/2 apart (each crosses every line once), placed where
        they cross the fewest: the whole torus's 2 × N / k less what its hop classes lost. An open
        mesh's lines are cut once: one plane."""
        left, k, b = self.left[axis], self.dims[axis], self.block[axis]
        sums = left.sum(axis=0)
        if not self.ring[axis]:
            return self._per_face(axis) * float(sums.min())
        return self._per_face(axis) * min(sums[g % b] + sums[(g + k // 2) % b] for g in range(b))

    def factor(self, axis: int, across_blocks: bool = True) -> float:
        """The share of a whole ring's capacity the rings along `axis` keep: a ring through every
        hop class (`across_blocks`: round the dimension, or a segment longer than a block), else
        one inside a block (its hops between blocks not taken). A ring whose line lost capacity
        runs at what its weakest hop has left, or detours round the hop over a neighbouring line
        whole there (through links of the other dimensions, idle in this dimension's phase), whose
        links then carry two rings' bytes: half a ring's capacity, less where more than half the
        lines lost that hop (1 − their share). Where every line lost it, a ring of one block whose
        lines lost only that hop runs open, as a line (one direction of each link: half); else
        there is none (`split`, or rings too broken to model: the torus algorithm is not
        offered). The phase waits for its slowest ring."""
        left = self.left[axis] if across_blocks or not self.ring[axis] else self.left[axis][:, :-1]
        if left.shape[1] == 0:
            return 1.0
        worst = float(left.min())
        if worst >= 1.0:
            return 1.0
        damaged = left < 1.0
        lost = float(damaged.mean(axis=0).max())
        if lost < 1.0:
            detour = min(0.5, 1.0 - lost)
        else:
            one_hop = self.ring[axis] and self.dims[axis] == self.block[axis] and int(damaged.sum(axis=1).max()) == 1
            detour = 0.5 if one_hop else 0.0
        return max(worst, detour)

    def split(self) -> str | None:
        """Why the torus falls apart: a hop class of a dimension lost on every line, where that
        cuts each line in two pieces or more (a ring lost it in two blocks or more, or two hop
        classes; an open line once). Nothing then joins the chips on the two sides (moving along
        the other dimensions never crosses it)."""
        for axis, left in enumerate(self.left):
            gone = int((left.max(axis=0) <= 0.0).sum())
            cuts = gone * (self.dims[axis] // self.block[axis]) if self.ring[axis] else 2 * gone
            if cuts >= 2:
                name = _AXIS_NAMES[axis] if len(self.dims) <= 3 else f"axis {axis + 1}"
                return (f"every line along {name} lost its hop at the same place: the torus falls apart into "
                        f"pieces across {name}, which the what-if does not evaluate")
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


def torus_lines(design: Design, dims: tuple[int, ...], block: tuple[int, ...], wrap: bool, links, accelerators,
                copies: dict, scale_up: str, passthrough: Callable[[object], bool]) -> TorusLines | None:
    """What is left of each hop class of a torus (`dims`, `block` and `wrap` as the template drew
    it, all dimensions); None where every line is whole, or where the chips are not the
    template's (ids `torus_ids.chip_coord` cannot place). `links` and `accelerators` the fabric's,
    `scale_up` their tier's name, `passthrough(item)` whether an item is a circuit switch."""
    axes = [a for a, d in enumerate(dims) if d > 1]
    switched = block != dims
    # Where a line's last hop is a wrap-around link inside the one block (the template draws one
    # where a dimension has more than 2 chips), else none.
    wrapped = [not switched and wrap and dims[a] > 2 for a in axes]
    faces = [math.prod(block) // block[a] for a in axes]
    present = [np.zeros((f, block[a])) for f, a in zip(faces, axes)]
    expected = [np.zeros((f, block[a])) for f, a in zip(faces, axes)]
    # The two sides of a block-to-block hop: the last chip of a face to its switch, the switch to
    # the first chip of the next block's.
    sides = {(end, i): np.zeros(f) for i, f in enumerate(faces) for end in ("last", "first")}
    wanted = {(end, i): np.zeros(f) for i, f in enumerate(faces) for end in ("last", "first")}
    row: dict[str, int] = {}
    places = []
    for accelerator in accelerators:
        coord = torus_ids.chip_coord(accelerator.id)
        if coord is None or len(coord) != len(dims) or any(c >= b for c, b in zip(coord, block)):
            return None
        row[accelerator.id] = len(places)
        places.append(coord)
    if not places:
        return None
    place = np.array(places)
    count = np.array([copies[a.id] for a in accelerators], dtype=float)
    # A copy split out by a failure (":f1") is a block of its own: chips meet only in their copy.
    copy_of = {tag: k for k, tag in enumerate(dict.fromkeys(a.id[a.id.find(":"):] if ":" in a.id else ""
                                                           for a in accelerators))}
    copy = np.array([copy_of[a.id[a.id.find(":"):] if ":" in a.id else ""] for a in accelerators])
    strides = [math.prod(block[i + 1:]) for i in range(len(block))]
    flat = place @ np.array(strides)
    drawn = np.zeros((len(copy_of), math.prod(block)), dtype=bool)
    drawn[copy, flat] = True
    # Each chip's face position along each axis: its place without that axis, as an index.
    face = []
    for a in axes:
        others = [i for i in range(len(block)) if i != a]
        face.append(place[:, others] @ np.array([math.prod(block[j] for j in others[k + 1:])
                                                 for k in range(len(others))], dtype=int)
                    if others else np.zeros(len(places), dtype=int))
    for i, a in enumerate(axes):
        b, along = block[a], place[:, a]
        step = np.where(along < b - 1, strides[a], -(b - 1) * strides[a])
        has_next = (along < b - 1) | wrapped[i]
        has_next[has_next] &= drawn[copy[has_next], (flat + step)[has_next]]
        np.add.at(expected[i], (face[i][has_next], along[has_next]), count[has_next])
        if switched:
            np.add.at(wanted["last", i], face[i][along == b - 1], count[along == b - 1])
            np.add.at(wanted["first", i], face[i][along == 0], count[along == 0])
    items = design.items
    link_cap = 0.0
    index_of = {a: i for i, a in enumerate(axes)}
    for link in links:
        if link.tier != scale_up:
            continue
        ra, rb = row.get(link.a), row.get(link.b)
        if ra is not None and rb is not None:
            ca, cb = places[ra], places[rb]
            apart = [a for a in range(len(dims)) if ca[a] != cb[a]]
            if len(apart) != 1 or apart[0] not in index_of:
                continue
            a = apart[0]
            i, distance = index_of[a], abs(ca[a] - cb[a])
            if distance == 1:
                present[i][face[i][ra], min(ca[a], cb[a])] += link.instances * link.cap
            elif wrapped[i] and distance == block[a] - 1:
                present[i][face[i][ra], block[a] - 1] += link.instances * link.cap
            else:
                continue
        else:
            r, other = (ra, link.b) if ra is not None else (rb, link.a)
            if r is None or not passthrough(items[other]):
                continue
            a = torus_ids.circuit_switch_axis(other)
            if a not in index_of:
                continue
            i, coord = index_of[a], places[r]
            if coord[a] == block[a] - 1:
                sides["last", i][face[i][r]] += link.instances * link.cap
            if coord[a] == 0:
                sides["first", i][face[i][r]] += link.instances * link.cap
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
        if switched:
            hop[:, -1] = np.minimum(share(sides["last", i], wanted["last", i]),
                                    share(sides["first", i], wanted["first", i]))
        elif not wrapped[i]:
            hop = hop[:, :-1]  # an open line: no hop after its last chip
        left.append(hop)
    if all(bool((hop >= 1.0).all()) for hop in left):
        return None
    return TorusLines(tuple(dims[a] for a in axes), tuple(block[a] for a in axes), tuple(left),
                      tuple(switched or w for w in wrapped), link_cap)
