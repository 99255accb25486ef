"""The design: items in a containment tree, links between them, replicated groups.

Items and links are immutable values; the `Design` holds them by id and is the only thing that
changes. A `group` item with `count = N` stands for N copies of everything inside it. A link whose
ends sit in different copies' subtrees is replicated per copy on each side: a link from an item in
a group of 32 to an item outside becomes 32 links; a link between two sibling groups of 8 and 4
becomes 32 links, every copy on one side to every copy on the other (how a fat tree's leaf–spine
mesh is drawn as one line). The engine works on this hierarchy and never needs one object per GPU;
`expand()` gives the flat graph when it is small enough.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx

from designer.model.errors import DesignError

ITEM_KINDS = ("rack", "server", "accelerator", "cpu", "nic", "switch", "group")
HARDWARE_KINDS = ("rack", "server", "accelerator", "cpu", "nic", "switch")
# Which kinds may hold which: a rack holds servers and switches, a server holds its parts.
ALLOWED_PARENTS: Mapping[str, tuple[str, ...]] = {
    "rack": ("group",),
    "server": ("rack", "group"),
    "switch": ("rack", "group", "server"),
    "accelerator": ("server", "group", "rack"),
    "cpu": ("server",),
    "nic": ("server", "group"),
    "group": ("group", "rack", "server"),
}
MAX_GROUP_COUNT = 1_000_000
MAX_TOTAL_COPIES = 100_000_000  # of any one item through the hierarchy
MAX_LANES = 4096
MAX_COORDINATE = 1e9
MAX_NAME_CHARS = 200  # an item's or a design's name: what a file may hold (designer.io.schemas)
MAX_TEXT_CHARS = 10_000  # a design's description or notes
MAX_RACK_U = 200  # the tallest rack the catalogue's schema allows
DEFAULT_EXPAND_LIMIT = 200_000
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
_ID_PATTERN = re.compile(ID_PATTERN)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # a name is printed on terminals


@dataclass(frozen=True)
class Item:
    id: str
    kind: str
    name: str = ""
    part: str | None = None
    parent: str | None = None
    x: float = 0.0
    y: float = 0.0
    count: int = 1  # copies; only a group may have more than one
    # The lowest U (1 = bottom) this item fills in its rack's front view; None: stacked above the
    # placed ones (designer.model.elevation).
    rack_u: int | None = None

    @property
    def label(self) -> str:
        return self.name or self.id


@dataclass(frozen=True)
class Link:
    id: str
    a: str
    b: str
    medium: str
    lanes: int = 1
    # Copies are joined every-to-every by default. `match` = (group above a, group above b), two
    # groups with the same count: copy i of the first is joined only to copy i of the second
    # (spine j of every pod to core group j of a fat tree, drawn once).
    match: tuple[str, str] | None = None


@dataclass
class Design:
    name: str = "Untitled"
    description: str = ""
    items: dict[str, Item] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    # Free-form, engine-facing settings saved with the design (workload, in-network reduction...).
    settings: dict[str, Any] = field(default_factory=dict)
    notes: str = ""  # the user's own, never read by the engine

    # --- reading -------------------------------------------------------------------------
    def item(self, item_id: str) -> Item:
        try:
            return self.items[item_id]
        except KeyError:
            raise DesignError(f"no item with id '{item_id}'") from None

    def children(self, item_id: str | None) -> list[Item]:
        return [i for i in self.items.values() if i.parent == item_id]

    def children_index(self) -> dict[str | None, list[Item]]:
        index: dict[str | None, list[Item]] = {}
        for item in self.items.values():
            index.setdefault(item.parent, []).append(item)
        return index

    def ancestors(self, item_id: str) -> list[Item]:
        """Parent first, root last."""
        chain = []
        parent = self.item(item_id).parent
        while parent is not None:
            item = self.items[parent]
            chain.append(item)
            parent = item.parent
        return chain

    def descendants(self, item_id: str, index: dict[str | None, list[Item]] | None = None) -> list[Item]:
        """Everything inside an item; pass `index` (children_index()) when asking for many items."""
        index = index if index is not None else self.children_index()
        out, stack = [], [item_id]
        while stack:
            for child in index.get(stack.pop(), []):
                out.append(child)
                stack.append(child.id)
        return out

    def multiplicity(self, item_id: str) -> int:
        """How many copies of this item the hierarchy stands for."""
        item = self.item(item_id)
        total = item.count
        for ancestor in self.ancestors(item_id):
            total *= ancestor.count
        return total

    def links_of(self, item_id: str) -> list[Link]:
        return [l for l in self.links.values() if item_id in (l.a, l.b)]

    def enclosing(self, item_id: str, kind: str) -> Item | None:
        """The nearest ancestor of the given kind (or the item itself)."""
        item = self.item(item_id)
        if item.kind == kind:
            return item
        return next((a for a in self.ancestors(item_id) if a.kind == kind), None)

    def link_copies(self, link: Link) -> LinkCopies:
        """How a link is replicated: copies of each end relative to their common ancestor."""
        chain_a = [link.a] + [a.id for a in self.ancestors(link.a)]
        chain_b = [link.b] + [a.id for a in self.ancestors(link.b)]
        common = set(chain_a) & set(chain_b)
        lca = next((i for i in chain_a if i in common), None)

        def copies_below(chain: list[str]) -> int:
            total = 1
            for item_id in chain:
                if item_id == lca:
                    break
                total *= self.items[item_id].count
            return total

        above = self.multiplicity(lca) if lca is not None else 1
        below_a = chain_a[:chain_a.index(lca)] if lca is not None else chain_a
        below_b = chain_b[:chain_b.index(lca)] if lca is not None else chain_b
        matched = self._matched_count(link, below_a, below_b)
        return LinkCopies(a_side=copies_below(chain_a) // matched, b_side=copies_below(chain_b) // matched,
                          context=above * matched)

    def _matched_count(self, link: Link, below_a: Sequence[str], below_b: Sequence[str]) -> int:
        """The count of the matched groups (1 for an every-to-every link, or a match that no
        longer holds: `match_problem` says why, and lint reports it)."""
        if link.match is None:
            return 1
        ga, gb = link.match
        if ga in below_a and gb in below_b and ga != link.a and gb != link.b:
            count = self.items[ga].count
            if count == self.items[gb].count:
                return count
        return 1

    def match_candidates(self, link: Link) -> list[tuple[str, str]]:
        """The (group above a, group above b) pairs this link could match: groups of equal count
        (over 1), each holding one end and not the other."""
        chain_a = [g.id for g in self.ancestors(link.a)]
        chain_b = [g.id for g in self.ancestors(link.b)]
        shared = set(chain_a) & set(chain_b)
        return [(ga, gb) for ga in chain_a if ga not in shared for gb in chain_b if gb not in shared
                if self.items[ga].count == self.items[gb].count > 1]

    def matched_groups(self, group_id: str) -> list[str]:
        """The other groups whose copies links match one to one with this group's, directly or
        through each other: their counts must move together."""
        partners: dict[str, set[str]] = {}
        for link in self.links.values():
            if link.match is not None:
                ga, gb = link.match
                partners.setdefault(ga, set()).add(gb)
                partners.setdefault(gb, set()).add(ga)
        seen, stack = {group_id}, [group_id]
        while stack:
            for other in partners.get(stack.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        return sorted(g for g in seen - {group_id} if g in self.items)

    def match_problem(self, link: Link) -> str | None:
        """Why the link's `match` cannot hold (None: it holds, or the link has none)."""
        if link.match is None:
            return None
        if not (isinstance(link.match, tuple) and len(link.match) == 2 and all(isinstance(g, str) for g in link.match)):
            return "match must name two groups"
        chains = {end: [a.id for a in self.ancestors(end)] for end in (link.a, link.b) if end in self.items}
        if len(chains) < 2:
            return None  # a missing end is reported on its own
        shared = set(chains[link.a]) & set(chains[link.b])
        for end, group in zip((link.a, link.b), link.match):
            if group not in self.items or self.items[group].kind != "group":
                return f"match names '{group}', which is not a group of this design"
            if group not in chains[end]:
                return f"match names '{group}', which does not contain end '{end}'"
            if group in shared:
                return f"match names '{group}', which contains both ends (its copies are joined anyway)"
        ga, gb = (self.items[g] for g in link.match)
        if ga.count != gb.count:
            return (f"match pairs the copies of '{ga.id}' (×{ga.count:,}) with those of '{gb.id}' "
                    f"(×{gb.count:,}); the counts must be equal")
        if ga.count < 2:
            return f"match pairs single copies of '{ga.id}' and '{gb.id}'; leave match out"
        return None

    def chains(self) -> dict[str, tuple[str, ...]]:
        """Every item's id followed by its ancestors' ids (parent first, root last), computed in
        one pass: `chains()[i][1:]` are the ids of `ancestors(i)`."""
        items = self.items
        out: dict[str, tuple[str, ...]] = {}
        for item_id in items:
            if item_id in out:
                continue
            path = []
            cur: str | None = item_id
            while cur is not None and cur not in out:
                path.append(cur)
                cur = items[cur].parent
            tail = out[cur] if cur is not None else ()
            for i in reversed(path):
                tail = (i,) + tail
                out[i] = tail
        return out

    def all_link_copies(self, chains: dict[str, tuple[str, ...]] | None = None,
                        skip_unknown_ends: bool = False) -> dict[str, LinkCopies]:
        """`link_copies(link)` of every link by id, from one set of parent chains (`chains()`).
        A link to an unknown item raises as `link_copies` does, or is left out with
        `skip_unknown_ends`."""
        chains = chains if chains is not None else self.chains()
        items = self.items
        mult: dict[str, int] = {}

        def multiplicity(item_id: str) -> int:
            hit = mult.get(item_id)
            if hit is None:
                chain = chains[item_id]  # item first, root last: multiply down from the nearest known
                known = next((i for i, ancestor in enumerate(chain) if ancestor in mult), len(chain))
                hit = mult[chain[known]] if known < len(chain) else 1
                for ancestor in reversed(chain[:known]):
                    hit *= items[ancestor].count
                    mult[ancestor] = hit
            return hit

        out: dict[str, LinkCopies] = {}
        shared: dict[tuple, LinkCopies] = {}  # LinkCopies are immutable values: one per distinct figure
        for link in self.links.values():
            ca, cb = chains.get(link.a), chains.get(link.b)
            if ca is None or cb is None:
                if not skip_unknown_ends:
                    out[link.id] = self.link_copies(link)
                continue
            i, j = len(ca) - 1, len(cb) - 1
            while i >= 0 and j >= 0 and ca[i] == cb[j]:
                i -= 1
                j -= 1
            # Copies below the common ancestor: the ends' multiplicities over its own.
            context = multiplicity(ca[i + 1]) if i + 1 < len(ca) else 1
            a_side = multiplicity(link.a) // context
            b_side = multiplicity(link.b) // context
            if link.match is not None:
                matched = self._matched_count(link, ca[:i + 1], cb[:j + 1])
                a_side, b_side, context = a_side // matched, b_side // matched, context * matched
            key = (a_side, b_side, context)
            value = shared.get(key)
            if value is None:
                value = shared[key] = LinkCopies(a_side=a_side, b_side=b_side, context=context)
            out[link.id] = value
        return out

    def graph(self) -> nx.MultiGraph:
        """The design as drawn: one node per item, one edge per link (key = link id)."""
        graph = nx.MultiGraph()
        for item in self.items.values():
            graph.add_node(item.id, item=item)
        for link in self.links.values():
            graph.add_edge(link.a, link.b, key=link.id, link=link)
        return graph

    def ordered_items(self, within: set[str] | None = None) -> list[Item]:
        """Items in topology order: depth first through containment, siblings in natural id order.
        `within`: visit only these ids (a set closed under parents), in the order they hold in the
        whole design (filtering siblings before their stable sort keeps their order)."""
        return list(self.walk_ordered_items(within))

    def walk_ordered_items(self, within: set[str] | None = None) -> Iterator[Item]:
        """`ordered_items` one at a time, each container's contents sorted when it is reached (the
        canvas builds a big design over several turns of the event loop from this)."""
        index: dict[str | None, list[Item]] = {}
        for item in self.items.values():
            if within is None or item.id in within:
                index.setdefault(item.parent, []).append(item)
        stack = [iter(sorted(index.get(None, []), key=_topology_key))]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                continue
            yield child
            stack.append(iter(sorted(index.get(child.id, []), key=_topology_key)))

    # --- snapshots ----------------------------------------------------------------------
    def snapshot(self) -> Design:
        """A copy the engine can read while the original keeps changing (items are immutable)."""
        return Design(self.name, self.description, dict(self.items), dict(self.links), _deep_copy(self.settings),
                      self.notes)

    # --- changing -----------------------------------------------------------------------
    def new_id(self, prefix: str) -> str:
        prefix = re.sub(r"[^A-Za-z0-9_.:-]", "-", prefix) or "item"
        for n in itertools.count(1):
            candidate = f"{prefix}-{n}"
            if candidate not in self.items and candidate not in self.links:
                return candidate
        raise AssertionError("unreachable")

    def add_item(self, item: Item) -> Item:
        if item.id in self.items or item.id in self.links:
            raise DesignError(f"id '{item.id}' is already used")
        self._check_item(item)
        self.items[item.id] = item
        return item

    def update_item(self, item_id: str, **changes: Any) -> Item:
        return self.replace_item(replace(self.item(item_id), **changes))

    def replace_item(self, new: Item) -> Item:
        """Put `new` in the place of the item with its id (an edit that already holds the changed
        value stores it as is, rather than rebuilding it field by field)."""
        old = self.item(new.id)
        self._check_item(new, replacing=old)
        self.items[new.id] = new
        return new

    def remove_item(self, item_id: str) -> tuple[list[Item], list[Link]]:
        """Remove an item with everything inside it and every link touching them.

        Returns what was removed (items parent-first) so an undo can put it back."""
        return self.remove_items([item_id])[0]

    def remove_items(self, item_ids: list[str]) -> list[tuple[list[Item], list[Link]]]:
        """`remove_item` of each of these items (none inside another), in one pass over the design:
        deleting thousands of top-level items costs one look at every item and link, not one each."""
        for item_id in item_ids:
            self.item(item_id)
        items, links = self.items, self.links
        index = self.children_index()
        removed: list[tuple[list[Item], list[Link]]] = []
        root_of: dict[str, int] = {}
        for k, item_id in enumerate(item_ids):
            doomed = [items[item_id], *self.descendants(item_id, index)]
            removed.append((doomed, []))
            root_of.update(dict.fromkeys([item.id for item in doomed], k))
        root = root_of.get
        for link in links.values():
            # A link between two removed items goes with the first removed, as one by one.
            ka, kb = root(link.a), root(link.b)
            if ka is None and kb is None:
                continue
            removed[min(k for k in (ka, kb) if k is not None)][1].append(link)
        for doomed, taken in removed:
            for link in taken:
                del links[link.id]
            for item in doomed:
                del items[item.id]
        return removed

    def add_link(self, link: Link) -> Link:
        if link.id in self.links or link.id in self.items:
            raise DesignError(f"id '{link.id}' is already used")
        self._check_link(link)
        self.links[link.id] = link
        return link

    def update_link(self, link_id: str, **changes: Any) -> Link:
        old = self.links.get(link_id)
        if old is None:
            raise DesignError(f"no link with id '{link_id}'")
        new = replace(old, **changes)
        self._check_link(new, previous=old)
        self.links[link_id] = new
        return new

    def remove_link(self, link_id: str) -> Link:
        try:
            return self.links.pop(link_id)
        except KeyError:
            raise DesignError(f"no link with id '{link_id}'") from None

    # --- rules --------------------------------------------------------------------------
    def _check_item(self, item: Item, replacing: Item | None = None) -> None:
        # Runs for every item added or changed (thousands in one Delete's undo or drag): the
        # common case (an exact int count, int or float coordinates) is tested first, then the full rule.
        item_id, kind, count, name = item.id, item.kind, item.count, item.name
        if not _ID_PATTERN.fullmatch(item_id):
            raise DesignError(f"item id '{item_id}' must be 1–128 letters, digits, '-', '_', '.' or ':'")
        if kind not in ITEM_KINDS:
            raise DesignError(f"item '{item_id}': unknown kind '{kind}'; expected one of {', '.join(ITEM_KINDS)}")
        if type(count) is not int and (isinstance(count, bool) or not isinstance(count, int)) or count < 1:
            raise DesignError(f"item '{item_id}': count must be a whole number of at least 1, got {count!r}")
        if count > 1 and kind != "group":
            raise DesignError(f"item '{item_id}': only a group may have a count above 1 (wrap it in a group)")
        if count > MAX_GROUP_COUNT:
            raise DesignError(f"item '{item_id}': count {count:,} is above the limit of {MAX_GROUP_COUNT:,}")
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or _CONTROL.search(name):
            raise DesignError(f"item '{item_id}': a name is printable text of at most {MAX_NAME_CHARS} characters")
        if item.rack_u is not None and (type(item.rack_u) is not int or not 1 <= item.rack_u <= MAX_RACK_U):
            raise DesignError(f"item '{item_id}': a rack position is a U from 1 to {MAX_RACK_U}, got {item.rack_u!r}")
        if kind in HARDWARE_KINDS and not item.part:
            raise DesignError(f"item '{item_id}': a {kind} needs a catalogue part")
        for axis, value in (("x", item.x), ("y", item.y)):
            if (type(value) is float or type(value) is int) and abs(value) <= MAX_COORDINATE:
                continue
            if (not isinstance(value, (int, float)) or isinstance(value, bool) or value != value
                    or abs(value) > MAX_COORDINATE):
                raise DesignError(f"item '{item_id}': {axis} must be a finite number")
        items = self.items
        copies = count
        ancestor = item.parent
        if ancestor is not None:
            parent = items.get(ancestor)
            if parent is None:
                raise DesignError(f"item '{item_id}': parent '{ancestor}' does not exist")
            if parent.kind not in ALLOWED_PARENTS[kind]:
                raise DesignError(f"item '{item_id}': a {kind} cannot be placed inside a {parent.kind}")
        while ancestor is not None:
            if ancestor == item_id:  # only an item being replaced is in the design already
                raise DesignError(f"item '{item_id}' cannot be placed inside itself")
            parent = items[ancestor]
            copies *= parent.count
            ancestor = parent.parent
        if copies > MAX_TOTAL_COPIES:
            raise DesignError(f"item '{item_id}': its groups make {copies:,} copies, above the limit of "
                              f"{MAX_TOTAL_COPIES:,}")
        if replacing is not None and item.count != replacing.count:
            for child in self.descendants(item.id):
                if self.multiplicity(child.id) // replacing.count * item.count > MAX_TOTAL_COPIES:
                    raise DesignError(f"item '{item.id}': count {item.count:,} would make more than "
                                      f"{MAX_TOTAL_COPIES:,} copies of '{child.id}'")

    def _check_link(self, link: Link, previous: Link | None = None) -> None:
        """`previous`: the link being edited. A match that stopped holding (lint says so) does not
        block edits of its other fields."""
        link_id, a, b, lanes, medium = link.id, link.a, link.b, link.lanes, link.medium
        if not _ID_PATTERN.fullmatch(link_id):
            raise DesignError(f"link id '{link_id}' must be 1–128 letters, digits, '-', '_', '.' or ':'")
        end_a, end_b = self.items.get(a), self.items.get(b)
        if end_a is None or end_b is None:
            raise DesignError(f"link '{link_id}': end '{a if end_a is None else b}' does not exist")
        if a == b:
            raise DesignError(f"link '{link_id}' connects '{a}' to itself")
        if end_a.kind == "group" or end_b.kind == "group":
            raise DesignError(f"link '{link_id}': a link joins hardware, not the group "
                              f"'{a if end_a.kind == 'group' else b}'")
        if type(lanes) is not int and (isinstance(lanes, bool) or not isinstance(lanes, int)) \
                or not 1 <= lanes <= MAX_LANES:
            raise DesignError(f"link '{link_id}': lanes must be a whole number from 1 to {MAX_LANES}, got {lanes!r}")
        if not isinstance(medium, str) or not medium:
            raise DesignError(f"link '{link_id}': a link needs a medium")
        if link.match is None:
            return
        problem = self.match_problem(link) if previous is None or (previous.match, previous.a, previous.b) != \
            (link.match, a, b) else None
        if problem:
            raise DesignError(f"link '{link_id}': {problem}")

    # --- flat view ------------------------------------------------------------------------
    def expand(self, limit: int = DEFAULT_EXPAND_LIMIT) -> nx.MultiGraph:
        """The flat graph with one node per physical item copy. Refused above `limit` nodes.

        Node names are `item_id` followed by `#i` for each enclosing replicated group (outermost
        first), e.g. `gpu0#3#12`."""
        total = sum(self.multiplicity(i.id) for i in self.items.values())
        if total > limit:
            raise DesignError(
                f"expanding '{self.name}' would create {total:,} nodes, above the limit of {limit:,}; "
                "the engine works on the hierarchy instead")
        graph = nx.MultiGraph()
        copy_paths: dict[str, list[tuple[int, ...]]] = {}
        for item in self.ordered_items():
            counts = [a.count for a in reversed(self.ancestors(item.id)) if a.count > 1]
            if item.count > 1:
                counts.append(item.count)
            paths = list(itertools.product(*(range(c) for c in counts)))
            copy_paths[item.id] = paths
            for path in paths:
                graph.add_node(_copy_name(item.id, path), item=item.id, copy=path)
        for link in self.links.values():
            self._expand_link(graph, link)
        return graph

    def _expand_link(self, graph: nx.MultiGraph, link: Link) -> None:
        groups_a = [a for a in reversed(self.ancestors(link.a)) if a.count > 1]
        groups_b = [b for b in reversed(self.ancestors(link.b)) if b.count > 1]
        shared = 0
        while shared < min(len(groups_a), len(groups_b)) and groups_a[shared].id == groups_b[shared].id:
            shared += 1
        common = [range(g.count) for g in groups_a[:shared]]
        own_a = [range(g.count) for g in groups_a[shared:]]
        own_b = [range(g.count) for g in groups_b[shared:]]
        ids_a, ids_b = [g.id for g in groups_a[shared:]], [g.id for g in groups_b[shared:]]
        pair = None
        if link.match is not None and self._matched_count(link, ids_a, ids_b) > 1:
            pair = (ids_a.index(link.match[0]), ids_b.index(link.match[1]))
        for prefix in itertools.product(*common):
            for tail_a in itertools.product(*own_a):
                for tail_b in itertools.product(*own_b):
                    if pair is not None and tail_a[pair[0]] != tail_b[pair[1]]:
                        continue
                    graph.add_edge(_copy_name(link.a, prefix + tail_a), _copy_name(link.b, prefix + tail_b),
                                   link=link.id, lanes=link.lanes, medium=link.medium)


@dataclass(frozen=True)
class LinkCopies:
    a_side: int  # copies of end a per copy of the common ancestor (per matched pair of copies)
    b_side: int
    context: int  # copies of the common ancestor itself (times the matched pairs in each)

    @property
    def instances(self) -> int:
        return self.a_side * self.b_side * self.context

    def degree_at(self, end: str) -> int:
        """Physical links each copy of end 'a' or 'b' gets from this drawn link."""
        return self.b_side if end == "a" else self.a_side


def _copy_name(item_id: str, path: tuple[int, ...]) -> str:
    return item_id + "".join(f"#{i}" for i in path)


def _topology_key(item: Item) -> tuple:
    return _natural_key(item.id)


@functools.lru_cache(maxsize=1 << 16)
def _natural_key(item_id: str) -> tuple:
    digits = re.findall(r"\d+|\D+", item_id)
    natural = tuple((0, int(d)) if d.isdigit() else (1, d) for d in digits)
    return natural


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value
