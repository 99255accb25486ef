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
                copies: dict, scale_up: str, passthrough: Callable[[object], bool],
                coord_of: Callable[[str], tuple[int, ...] | None] = torus_ids.chip_coord) -> TorusLines | None:
    """What is left of each hop class of a torus (`dims`, `block` and `wrap` as the template drew
    it, all dimensions); None where every line is whole, or where the chips cannot be placed
    (`coord_of` a chip's place in its block: the template's ids by default, a torus drawn by hand's
    places from `drawn_torus`). `links` and `accelerators` the fabric's, `scale_up` their tier's
    name, `passthrough(item)` whether an item is a circuit switch."""
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
        coord = coord_of(accelerator.id)
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


# A drawn graph missing more of a torus's links than this is not read as that torus with lines broken,
# nor one missing more of its chips as that torus with holes.
MOST_MISSING = 0.25
MOST_DIMENSIONS = 3
# Holes read into a drawn torus: a few failed hosts' chips.
MOST_HOLES = 64


@dataclass(frozen=True)
class DrawnTorus:
    """A torus or open mesh found in links drawn by hand: `dims` (each of 2 chips or more), whether
    its lines wrap round, each chip's place (C order, the last dimension fastest, as the template's
    chips are numbered), how many of its chips are not there (`holes`: a failed host's) and how many
    links between chips that are there are not drawn (`missing`)."""

    dims: tuple[int, ...]
    wrap: bool
    coords: dict[str, tuple[int, ...]]
    holes: int
    missing: int


def drawn_torus(chips: list[str], pairs: list[tuple[str, str]]) -> DrawnTorus | None:
    """The torus (or open mesh) of up to three dimensions that chip-to-chip links drawn by hand
    make, the chips taken in rank order; None where they make none. The places keep the rank order
    (a chip's place is after the one before it), so a torus is found as a user draws one, row by
    row; a graph that is a torus only under some other numbering is read as the mesh it is drawn
    as (searching every numbering is graph isomorphism, and near-misses make that explode).
    Chips may be missing (holes: a failed host taken out of a torus drawn by hand, up to
    `MOST_HOLES`) and links between chips that are there (a failed or forgotten cable, whose lines
    `torus_lines` counts as broken), each up to `MOST_MISSING` of the torus's; a link no torus of that numbering has (a
    diagonal, a chip's link to itself) means no torus. Of the readings, the one with the fewest
    holes, then the fewest links undrawn (a 4 × 4 torus that lost a row of chips reads as the
    3 × 4 torus it now is, with its wrap-around links in the short dimension missing)."""
    n = len(chips)
    if n < 3:
        return None
    index = {chip: i for i, chip in enumerate(chips)}
    earlier: list[list[int]] = [[] for _ in range(n)]
    drawn: set[tuple[int, int]] = set()
    degree = [0] * n
    for a, b in pairs:
        i, j = index.get(a), index.get(b)
        if i is None or j is None or i == j:
            return None
        i, j = min(i, j), max(i, j)
        if (i, j) not in drawn:
            drawn.add((i, j))
            earlier[j].append(i)
            degree[i] += 1
            degree[j] += 1
    if max(degree) > 2 * MOST_DIMENSIONS:
        return None
    best: DrawnTorus | None = None
    for full in range(n, min(int(n / (1 - MOST_MISSING)), n + MOST_HOLES) + 1):
        if best is not None:
            break  # the fewest holes that explain the drawing
        for dims in _ordered_factorisations(full, MOST_DIMENSIONS):
            for wrap in (False, True):
                places = _place(dims, wrap, n, earlier)
                if places is None:
                    continue
                expected = _pairs_among(dims, wrap, places)
                missing = expected - len(drawn)
                if missing > MOST_MISSING * expected:
                    continue
                if best is None or missing < best.missing:
                    coords = [_coord(p, dims) for p in places]
                    best = DrawnTorus(dims, wrap, dict(zip(chips, coords)), full - n, missing)
    return best


def _coord(place: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for k in reversed(dims):
        place, c = divmod(place, k)
        out.append(c)
    return tuple(reversed(out))


def _adjacent(p: int, q: int, dims: tuple[int, ...], wrap: bool) -> bool:
    """Whether places p and q of a torus (or open mesh) of `dims` are neighbours: one step apart
    along one dimension, or its two ends where the lines wrap (a line of 2 has one link)."""
    a, b = _coord(p, dims), _coord(q, dims)
    apart = [(x, y, k) for x, y, k in zip(a, b, dims) if x != y]
    if len(apart) != 1:
        return False
    x, y, k = apart[0]
    return abs(x - y) == 1 or (wrap and k > 2 and abs(x - y) == k - 1)


def _place(dims: tuple[int, ...], wrap: bool, n: int, earlier: list[list[int]]) -> list[int] | None:
    """Places for ranks 0 … n − 1, increasing, in a torus of `dims`, such that every drawn link
    joins neighbours: each rank at the first place after the one before it that its links to
    earlier ranks allow (a hole is skipped where they say so). None where some rank has no such
    place. Greedy, so a rank with no link to an earlier one right after a hole can be placed
    early and the reading fail: such a design is read as the mesh it is drawn as."""
    spare = math.prod(dims) - n
    places: list[int] = []
    for rank in range(n):
        first = places[-1] + 1 if places else 0
        place = next((p for p in range(first, rank + spare + 1)
                      if all(_adjacent(places[j], p, dims, wrap) for j in earlier[rank])), None)
        if place is None:
            return None
        places.append(place)
    return places


def _pairs_among(dims: tuple[int, ...], wrap: bool, places: list[int]) -> int:
    """How many links a torus of `dims` has between the chips at `places`."""
    present = set(places)
    strides = [math.prod(dims[a + 1:]) for a in range(len(dims))]
    count = 0
    for p in places:
        for s, k in zip(strides, dims):
            along = (p // s) % k
            if along + 1 < k:
                count += (p + s) in present
            elif wrap and k > 2:
                count += (p - (k - 1) * s) in present
    return count


def _ordered_factorisations(n: int, most: int) -> list[tuple[int, ...]]:
    """Every way to write n as a product of at most `most` factors of 2 or more, in each order."""
    if most == 0:
        return []
    out = [(n,)] if n >= 2 else []
    for first in range(2, n // 2 + 1):
        if n % first == 0:
            out.extend((first, *rest) for rest in _ordered_factorisations(n // first, most - 1))
    return out
