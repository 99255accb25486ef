"""Where items are drawn: the canvas geometry, and a tidy layout that places every container's
contents in compact rows with nothing overlapping.

The canvas draws a leaf item (switch, NIC, accelerator, CPU) as a LEAF_W × LEAF_H box whose top
left is the item's position; a container (rack, server, group) encloses its contents with a
margin on every side and a header above them, and is at least MIN_CONTAINER_W wide. Positions are
in the parent's coordinates, so a container's box is wherever its contents are. `item_rects`
computes every box exactly as the canvas does (`canvas.items` takes these constants from here).

`tidy` arranges siblings in rows, tiers above what they serve: switches in rows above the items
their links reach (a spine above the leaves, a leaf above the racks, a server's NVSwitches above
its GPUs), then the compute, then NICs, then CPUs. Within a tier the rows the items already form
are kept, left to right as they were (so a mesh stays a mesh), and a row of more than
MAX_PER_ROW items is wrapped at the width of the widest other row (or of MIN_WRAP items). Rows
are centred on each other. The result is deterministic and a second tidy changes nothing. A tidy
of a selection places the selected items among their siblings and leaves their insides alone.

New and moved items are kept off their siblings: `clear_spots` finds the nearest place where an
item just added, pasted or moved into a container crowds none of them (inside a container lined
up with its rows, below and right of its contents, so it grows down and right), and `make_room`
moves the neighbours a container that grew would now cover down or right, level by level up to the
top. The document applies both in the step of the edit that caused them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from designer.model.design import Design, Item

GRID = 20
LEAF_W, LEAF_H = 64, 40
HEADER_H = 22
MARGIN = 12
MIN_CONTAINER_W = 160
EMPTY_CONTAINER_H = 70
CONTAINER_KINDS = ("rack", "server", "group")

GAP_X = 16  # between neighbours in a row (a leaf pitch of 80, four grid steps)
GAP_Y = 20  # between rows of one tier (a leaf row pitch of 60)
TIER_GAP = 60  # between tiers, where the links between them fan out
MAX_PER_ROW = 16
MIN_WRAP = 8

# Tiers below the compute: NICs under what they serve, CPUs at the bottom.
_TIERS = {"compute": 0, "nic": -1, "cpu": -2}
_SERVER_TIERS = {"nic": 1, "cpu": -2}  # and switches whose links stay inside: -1


@dataclass(frozen=True)
class Rect:
    left: float
    top: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def moved(self, dx: float, dy: float) -> Rect:
        return Rect(self.left + dx, self.top + dy, self.width, self.height)

    def united(self, other: Rect) -> Rect:
        left, top = min(self.left, other.left), min(self.top, other.top)
        return Rect(left, top, max(self.right, other.right) - left, max(self.bottom, other.bottom) - top)

    def overlaps(self, other: Rect) -> bool:
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)

    def contains(self, other: Rect) -> bool:
        return (self.left <= other.left and other.right <= self.right and self.top <= other.top
                and other.bottom <= self.bottom)


def is_container(item: Item) -> bool:
    return item.kind in CONTAINER_KINDS


def container_rect(contents: Rect | None) -> Rect:
    """A container's box around its contents' bounding box (None: it is empty)."""
    if contents is None:
        return Rect(0, 0, MIN_CONTAINER_W, EMPTY_CONTAINER_H)
    return Rect(contents.left - MARGIN, contents.top - MARGIN - HEADER_H,
                max(contents.width + 2 * MARGIN, MIN_CONTAINER_W), contents.height + 2 * MARGIN + HEADER_H)


def item_rects(design: Design, positions: dict[str, tuple[float, float]] | None = None) -> dict[str, Rect]:
    """Every item's box in its own coordinates (its position is the origin), with the given
    positions in place of the design's."""
    index = design.children_index()
    rects: dict[str, Rect] = {}

    def visit(item: Item) -> Rect:
        if not is_container(item):
            rect = Rect(0, 0, LEAF_W, LEAF_H)
        else:
            contents = None
            for child in index.get(item.id, []):
                box = _in_parent(child, visit(child), positions)
                contents = box if contents is None else contents.united(box)
            rect = container_rect(contents)
        rects[item.id] = rect
        return rect

    for item in index.get(None, []):
        visit(item)
    return rects


def boxes_in_parent(design: Design, positions: dict[str, tuple[float, float]] | None = None) -> dict[str, Rect]:
    """Every item's box in its parent's coordinates (the scene's for the top level)."""
    rects = item_rects(design, positions)
    return {item_id: _in_parent(design.items[item_id], rect, positions) for item_id, rect in rects.items()}


def _in_parent(item: Item, rect: Rect, positions: dict[str, tuple[float, float]] | None) -> Rect:
    x, y = positions.get(item.id, (item.x, item.y)) if positions else (item.x, item.y)
    return rect.moved(x, y)


def tidy(design: Design, selected: Iterable[str] = (), *, inside: str | None = None) -> dict[str, tuple[float, float]]:
    """New positions (in the parent's coordinates) for the items a tidy moves; the others keep theirs.

    With no selection, every container's contents and the top level are arranged. Otherwise the
    selected items are placed among their siblings and what is inside them stays as it is: those
    that share a parent are arranged in rows among themselves, starting where they were, and the
    rows, as a block, move to the nearest place lined up with the siblings' rows where they crowd
    none of them (nowhere, if they crowd nothing); other items stay put. With `inside`, only that
    item's contents are arranged, all the way down (a server just built from its platform)."""
    index = design.children_index()
    old = boxes_in_parent(design)
    sides = _sibling_links(design)
    outward = _leaving_parent(design)
    positions: dict[str, tuple[float, float]] = {}
    rects: dict[str, Rect] = {}

    def rect_of(item: Item) -> Rect:
        """The item's box in its own coordinates with the positions chosen so far."""
        if item.id not in rects:
            if not is_container(item):
                rects[item.id] = Rect(0, 0, LEAF_W, LEAF_H)
            else:
                contents = None
                for child in index.get(item.id, []):
                    box = _in_parent(child, rect_of(child), positions)
                    contents = box if contents is None else contents.united(box)
                rects[item.id] = container_rect(contents)
        return rects[item.id]

    def arrange_subtree(item: Item) -> None:
        children = index.get(item.id, [])
        for child in children:
            if is_container(child):
                arrange_subtree(child)
        arrange(children)

    def arrange(siblings: list[Item]) -> None:
        if not siblings:
            return
        sizes = {s.id: rect_of(s) for s in siblings}
        parent = siblings[0].parent
        in_server = parent is not None and design.items[parent].kind == "server"
        placed = _rows(siblings, sizes, old, sides, index, outward, in_server)
        start = min(old[s.id].left for s in siblings), min(old[s.id].top for s in siblings)
        for sibling in siblings:
            x, y = placed[sibling.id]
            positions[sibling.id] = (start[0] + x, start[1] + y)
        for sibling in siblings:
            if sibling.parent is not None:
                _forget_upwards(sibling.parent, design, rects)

    def place_among_siblings(parent: str | None, items: list[Item]) -> None:
        """Move the items, as a block, off the siblings they crowd: into the nearest place clear
        of them, lined up with their rows (below and right of the contents' top left inside a
        container, which so grows down and right)."""
        ids = {i.id for i in items}
        block = _block([_in_parent(i, rect_of(i), positions) for i in items])
        siblings = index.get(parent, [])
        others = [old[s.id] for s in siblings if s.id not in ids]
        floor = _contents_corner(old[s.id] for s in siblings) if parent is not None else None
        within = floor is None or (block.left >= floor[0] - _EPSILON and block.top >= floor[1] - _EPSILON)
        if within and not any(too_close(block, other) for other in others):
            return
        dx, dy = clear_offset(block, others, floor, aligned=True)
        for item in items:
            x, y = positions.get(item.id, (item.x, item.y))
            positions[item.id] = (x + dx, y + dy)

    chosen = {i for i in selected if i in design.items}
    if inside is not None:
        arrange_subtree(design.items[inside])
    elif not chosen:
        for item in index.get(None, []):
            if is_container(item):
                arrange_subtree(item)
        arrange(index.get(None, []))
    else:
        tops = [design.items[i] for i in sorted(chosen) if not any(a.id in chosen for a in design.ancestors(i))]
        by_parent: dict[str | None, list[Item]] = {}
        for item in tops:
            by_parent.setdefault(item.parent, []).append(item)
        for parent, items in by_parent.items():
            if len(items) > 1:
                arrange(items)
            place_among_siblings(parent, items)
    return {i: p for i, p in positions.items() if p != (design.items[i].x, design.items[i].y)}


def tidy_in_place(design: Design) -> Design:
    """Tidy the whole design, changing its items' positions (for designs built in code)."""
    for item_id, (x, y) in tidy(design).items():
        design.update_item(item_id, x=x, y=y)
    return design


def _forget_upwards(item_id: str, design: Design, rects: dict[str, Rect]) -> None:
    """Drop the cached boxes of a container whose contents moved, and of its ancestors."""
    current: str | None = item_id
    while current is not None and current in rects:
        del rects[current]
        current = design.items[current].parent


def _sibling_links(design: Design) -> dict[str, set[str]]:
    """For each item, the siblings whose subtree a link joins to its subtree."""
    parent = {i: item.parent for i, item in design.items.items()}
    sides: dict[str, set[str]] = {}
    for link in design.links.values():
        chain_a, chain_b = _chain(link.a, parent), _chain(link.b, parent)
        on_b = set(chain_b)
        lca = next((i for i in chain_a if i in on_b), None)
        a_side = chain_a[chain_a.index(lca) - 1] if lca is not None else chain_a[-1]
        b_side = chain_b[chain_b.index(lca) - 1] if lca is not None else chain_b[-1]
        if lca in (link.a, link.b) or a_side == b_side:
            continue  # one end holds the other
        sides.setdefault(a_side, set()).add(b_side)
        sides.setdefault(b_side, set()).add(a_side)
    return sides


def _leaving_parent(design: Design) -> set[str]:
    """The items with a link to something outside their parent (a NIC's uplink, not an NVLink)."""
    items = design.items
    out: set[str] = set()
    for link in design.links.values():
        for end, other in ((link.a, link.b), (link.b, link.a)):
            parent = items[end].parent
            if parent is None or other == parent:
                continue
            current = items[other].parent
            while current is not None and current != parent:
                current = items[current].parent
            if current is None:
                out.add(end)
    return out


def _chain(item_id: str, parent: dict[str, str | None]) -> list[str]:
    """The item and its ancestors, innermost first."""
    chain = [item_id]
    up = parent.get(item_id)
    while up is not None:
        chain.append(up)
        up = parent.get(up)
    return chain


def _role(item: Item, index: dict[str | None, list[Item]]) -> str:
    """switch, nic, cpu or compute; a rack or group by what it holds (a group of spines is a switch)."""
    if item.kind == "switch":
        return "switch"
    if item.kind in ("nic", "cpu"):
        return item.kind
    if item.kind in ("rack", "group"):
        roles = {_role(child, index) for child in index.get(item.id, [])}
        if len(roles) == 1 and roles != {"compute"}:
            return roles.pop()
    return "compute"


def _tiers(siblings: list[Item], sides: dict[str, set[str]], index: dict[str | None, list[Item]],
           outward: AbstractSet[str] = frozenset(),
           in_server: bool = False) -> dict[str, int]:
    """Each sibling's tier, higher drawn above: compute 0, NICs -1, CPUs -2, and a switch one
    above the nearest sibling it links to that is not a switch, counting through other switches
    (a leaf 1, its spine 2). A switch linked to no such sibling is tier 1.

    Inside a server the links that leave it go up, crossing nothing: its NICs (cabled to leaves
    above) sit above the accelerators, and switches whose links all stay inside (NVSwitches)
    below them, over the CPUs — so a leaf's link to a NIC never runs over an accelerator's label,
    nor a GPU's PCIe link to its NIC over a switch's."""
    ids = {s.id for s in siblings}
    roles = {s.id: _role(s, index) for s in siblings}
    tier = {i: _TIERS[r] for i, r in roles.items() if r != "switch"}
    if in_server:
        tier.update({i: _SERVER_TIERS[r] for i, r in roles.items() if r in _SERVER_TIERS})
        tier.update({i: -1 for i, r in roles.items() if r == "switch" and i not in outward})
    frontier, distance = sorted(tier), 0
    while frontier:
        distance += 1
        following = []
        for i in frontier:
            for other in sorted(sides.get(i, set()) & ids):
                if other not in tier:
                    tier[other] = distance
                    following.append(other)
        frontier = following
    return {s.id: tier.get(s.id, 1) for s in siblings}


def _rows(siblings: list[Item], sizes: dict[str, Rect], old: dict[str, Rect], sides: dict[str, set[str]],
          index: dict[str | None, list[Item]], outward: AbstractSet[str] = frozenset(),
          in_server: bool = False) -> dict[str, tuple[float, float]]:
    """Positions relative to the arrangement's top left, rows centred on the widest."""
    tiers = _tiers(siblings, sides, index, outward, in_server)
    bands: list[tuple[int, list[Item]]] = []
    for tier in sorted(set(tiers.values()), reverse=True):
        members = sorted((s for s in siblings if tiers[s.id] == tier), key=lambda s: (old[s.id].top, old[s.id].left))
        for band in _bands(members, old):
            bands.append((tier, sorted(band, key=lambda s: (old[s.id].left, old[s.id].top))))
    # A row too long (more than MAX_PER_ROW items) wraps at the width of the widest row that is
    # not, or of MIN_WRAP of its items if that is wider.
    widest_short = max((_width(band, sizes) for _, band in bands if len(band) <= MAX_PER_ROW), default=0.0)
    rows: list[tuple[int, list[Item]]] = []
    for tier, band in bands:
        if len(band) <= MAX_PER_ROW:
            rows.append((tier, band))
            continue
        target = max(widest_short, _width(band[:MIN_WRAP], sizes))
        row: list[Item] = []
        for item in band:
            if row and (len(row) == MAX_PER_ROW or _width(row + [item], sizes) > target):
                rows.append((tier, row))
                row = []
            row.append(item)
        rows.append((tier, row))
    widths = [_width(row, sizes) for _, row in rows]
    widest = max(widths)
    placed: dict[str, tuple[float, float]] = {}
    top, previous = 0.0, None
    for (tier, row), width in zip(rows, widths):
        if previous is not None:
            top += GAP_Y if tier == previous else TIER_GAP
        left = (widest - width) // 2
        for item in row:
            size = sizes[item.id]
            placed[item.id] = (left - size.left, top - size.top)
            left += size.width + GAP_X
        top += max(sizes[s.id].height for s in row)
        previous = tier
    return placed


def _width(row: list[Item], sizes: dict[str, Rect]) -> float:
    return sum(sizes[s.id].width for s in row) + GAP_X * (len(row) - 1)


def _bands(members: list[Item], old: dict[str, Rect]) -> list[list[Item]]:
    """The rows the items form where they are now: an item joins the row above when its top is
    within half a height of that row's first item's top (members sorted by top)."""
    bands: list[list[Item]] = []
    for item in members:
        box = old[item.id]
        if bands:
            first = old[bands[-1][0].id]
            if box.top - first.top < min(first.height, box.height) / 2:
                bands[-1].append(item)
                continue
        bands.append([item])
    return bands


# --- placing new and moved items clear of their siblings ---------------------------------------------
_EPSILON = 1e-6
_NEAREST = 32  # the siblings nearest a block whose edges offer it places (more when none is clear)


class _Boxes:
    """Items' boxes with some positions replaced, computed only where asked and forgotten upwards
    when something inside moves."""

    def __init__(self, design: Design, positions: dict[str, tuple[float, float]] | None = None,
                 earlier: _Boxes | None = None, changed: Iterable[str] = ()):
        """`earlier`: the boxes of the design before an edit, whose sizes hold for every item but
        the `changed` ones (what the edit touched and the containers around it)."""
        self.design, self.index = design, design.children_index()
        self.positions: dict[str, tuple[float, float]] = dict(positions or {})
        self._rects: dict[str, Rect] = {}
        self._earlier, self._changed = earlier, set(changed)

    def own(self, item_id: str) -> Rect:
        """The item's box in its own coordinates."""
        rect = self._rects.get(item_id)
        if rect is None:
            item = self.design.items[item_id]
            earlier = self._earlier
            if earlier is not None and item_id not in self._changed and item_id in earlier.design.items:
                rect = earlier.own(item_id)  # its contents are as they were
            elif not is_container(item):
                rect = Rect(0, 0, LEAF_W, LEAF_H)
            else:
                contents = None
                for child in self.index.get(item_id, []):
                    box = self.in_parent(child.id)
                    contents = box if contents is None else contents.united(box)
                rect = container_rect(contents)
            self._rects[item_id] = rect
        return rect

    def in_parent(self, item_id: str) -> Rect:
        item = self.design.items[item_id]
        x, y = self.positions.get(item_id, (item.x, item.y))
        return self.own(item_id).moved(x, y)

    def move(self, item_id: str, dx: float, dy: float) -> None:
        item = self.design.items[item_id]
        x, y = self.positions.get(item_id, (item.x, item.y))
        self.positions[item_id] = (x + dx, y + dy)
        if item.parent is not None:
            _forget_upwards(item.parent, self.design, self._rects)


def own_rect(design: Design, item_id: str) -> Rect:
    """An item's box in its own coordinates, computed from its subtree alone."""
    return _Boxes(design).own(item_id)


def too_close(a: Rect, b: Rect) -> bool:
    """Whether two sibling boxes overlap or come closer than a row's gaps (GAP_X beside, GAP_Y
    above or below)."""
    return (a.left < b.right + GAP_X - _EPSILON and b.left < a.right + GAP_X - _EPSILON
            and a.top < b.bottom + GAP_Y - _EPSILON and b.top < a.bottom + GAP_Y - _EPSILON)


def clear_offset(block: Rect, others: list[Rect], floor: tuple[float, float] | None = None,
                 aligned: bool = False) -> tuple[float, float]:
    """How far to move `block` to the nearest place where it keeps a row's gap from every box of
    `others`: (0, 0) where it already does. The places tried are lined up with the others' edges
    (in a row beside one, at the gap; in a column under one) and, unless `aligned`, level with
    where the block is. With a `floor` (left, top) no place above or left of it is taken: a
    container grows down and right, never over what lies above or left of it."""
    lefts: set[float] = set() if aligned else {block.left}
    tops: set[float] = set() if aligned else {block.top}
    if not others:
        if floor is None or not aligned:
            return (0.0, 0.0)
        return (floor[0] - block.left, floor[1] - block.top)

    def distance(box: Rect) -> float:
        dx = max(box.left - block.right, block.left - box.right, 0.0)
        dy = max(box.top - block.bottom, block.top - box.bottom, 0.0)
        return dx * dx + dy * dy

    by_distance = sorted(others, key=distance)
    near = _NEAREST
    while True:
        for box in by_distance[:near]:
            lefts.update((box.left, box.right + GAP_X, box.left - GAP_X - block.width))
            tops.update((box.top, box.bottom + GAP_Y, box.top - GAP_Y - block.height))
        spots = [(left, top) for left in lefts for top in tops
                 if floor is None or (left >= floor[0] - _EPSILON and top >= floor[1] - _EPSILON)]
        spots.sort(key=lambda s: ((s[0] - block.left) ** 2 + (s[1] - block.top) ** 2, s[1], s[0]))
        for left, top in spots:
            spot = Rect(left, top, block.width, block.height)
            if not any(too_close(spot, box) for box in by_distance):
                return (left - block.left, top - block.top)
        if near >= len(by_distance):
            break
        near *= 4
    # Below everything there is always room.
    left = floor[0] if floor is not None else block.left
    return (left - block.left, max(box.bottom for box in others) + GAP_Y - block.top)


def _block(boxes: list[Rect]) -> Rect:
    block = boxes[0]
    for box in boxes[1:]:
        block = block.united(box)
    return block


def _contents_corner(boxes: Iterable[Rect]) -> tuple[float, float]:
    """The top left of a container's contents, or where its first contents go when it has none
    (its box then keeps its top left)."""
    boxes = list(boxes)
    if not boxes:
        return (MARGIN, MARGIN + HEADER_H)
    return (min(b.left for b in boxes), min(b.top for b in boxes))


def clear_spots(design: Design, item_ids: Iterable[str]) -> dict[str, tuple[float, float]]:
    """New positions for items just placed (added, pasted or moved into another container) that
    would cover a sibling: those sharing a parent move together, keeping their arrangement, to the
    nearest clear place (`clear_offset`). Inside a container that place is lined up with its
    contents' rows and columns below and right of their top left, so the container grows down and
    right (an empty one's first contents go at its top left, where its box stays); at the top level
    the nearest clear place is taken as it is."""
    boxes = _Boxes(design)
    by_parent: dict[str | None, list[str]] = {}
    for item_id in dict.fromkeys(item_ids):
        if item_id in design.items:
            by_parent.setdefault(design.items[item_id].parent, []).append(item_id)
    positions: dict[str, tuple[float, float]] = {}
    for parent, placed in by_parent.items():
        chosen = set(placed)
        others = [boxes.in_parent(s.id) for s in boxes.index.get(parent, []) if s.id not in chosen]
        block = _block([boxes.in_parent(i) for i in placed])
        inside = parent is not None
        floor = _contents_corner(others) if inside else None
        dx, dy = clear_offset(block, others, floor, aligned=inside)
        if (dx, dy) != (0.0, 0.0):
            for item_id in placed:
                item = design.items[item_id]
                positions[item_id] = (item.x + dx, item.y + dy)
    return positions


def make_room(before: Design, after: Design, changed: Iterable[str]) -> dict[str, tuple[float, float]]:
    """New positions, in `after`, for the neighbours that the containers holding the `changed`
    items (added or moved there since `before`) would now cover or crowd: each moves down if it lay
    below the container that grew, right if it lay right of it (else the shorter way of the two),
    and what it then covers in turn moves on, so the order of things is kept. Then the same one
    level up, for the container that grew by those moves, up to the top level. A neighbour that was
    already that close before is left where it is (a hand-drawn overlap stays)."""
    containers: set[str] = set()
    touched: set[str] = set()  # what the edit may have resized: the changed items, and around them then and now
    for item_id in changed:
        touched.add(item_id)
        if item_id in after.items:
            containers.update(a.id for a in after.ancestors(item_id))
        if item_id in before.items:
            touched.update(a.id for a in before.ancestors(item_id))
    touched |= containers
    old = _Boxes(before)
    boxes = _Boxes(after, earlier=old, changed=touched)
    levels: dict[str | None, list[str]] = {}
    for container in containers:
        levels.setdefault(after.items[container].parent, []).append(container)
    # Innermost first: a container's growth is known once what grew inside it made room.
    for parent in sorted(levels, key=lambda p: -len(after.ancestors(p)) if p is not None else 1):
        now = {s.id: boxes.in_parent(s.id) for s in boxes.index.get(parent, [])}
        was = {i: old.in_parent(i) for i in levels[parent] if i in before.items}
        grown = [c for c in sorted(levels[parent]) if was.get(c) != now[c]]
        if not grown:
            continue
        for item_id, (dx, dy) in _push_aside(grown, now, lambda i: old.in_parent(i) if i in before.items else None):
            boxes.move(item_id, dx, dy)
    return {i: p for i, p in boxes.positions.items() if p != (after.items[i].x, after.items[i].y)}


def _push_aside(grown: list[str], boxes: dict[str, Rect],
                before: Callable[[str], Rect | None]) -> list[tuple[str, tuple[float, float]]]:
    """The moves of the siblings (`boxes`, by id) the grown ones now crowd, and of those the moved
    ones crowd in turn (a bounded number: each is down or right, by at least one box's overlap);
    `before`: a sibling's box before the edit (None: it is new)."""
    order = sorted(boxes, key=lambda i: (boxes[i].top, boxes[i].left, i))
    earlier: dict[str, Rect | None] = {}

    def then(item_id: str) -> Rect | None:
        if item_id not in earlier:
            earlier[item_id] = before(item_id)
        return earlier[item_id]

    moves: list[tuple[str, tuple[float, float]]] = []
    queue = list(grown)
    moves_left = 4 * len(order) + 16
    while queue and moves_left > 0:
        pusher = queue.pop(0)
        pushing, was = boxes[pusher], then(pusher)
        for sibling in order:
            if sibling == pusher or moves_left <= 0:
                continue
            box = boxes[sibling]
            if not too_close(pushing, box):
                continue
            other_then = then(sibling)
            if was is not None and other_then is not None and too_close(was, other_then) and (
                    not pushing.overlaps(box) or was.overlaps(other_then)):
                continue  # already that close before: not this edit's doing
            reference = was or pushing
            down = pushing.bottom + GAP_Y - box.top
            right = pushing.right + GAP_X - box.left
            start = other_then or box
            if start.top >= reference.bottom - _EPSILON:
                dx, dy = 0.0, down
            elif start.left >= reference.right - _EPSILON:
                dx, dy = right, 0.0
            else:
                dx, dy = (0.0, down) if down <= right else (right, 0.0)
            boxes[sibling] = box.moved(dx, dy)
            moves.append((sibling, (dx, dy)))
            moves_left -= 1
            if sibling not in queue:
                queue.append(sibling)
    return moves
