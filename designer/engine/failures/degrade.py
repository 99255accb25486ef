"""The degraded design: failures applied to a copy, never the user's design.

- a failed copy of an item inside replicated groups is split out: the outermost replicated group
  above it loses a copy, and a copy of its own (ids suffixed ":f1", ":f2"...: `SPLIT_TAG`) holds
  the failure, so one NIC of one server fails without touching the other 127; where a matched link
  joins that group copy for copy to others (a core group to each block's spines), the same copy of
  each is split out with it, the split-out copies joined to each other as before;
- every copy of an item failed removes it, with what it holds and its links;
- failed copies of a link take their share of its lanes away (the engine spreads traffic evenly
  over a link's copies), all of them remove it; a medium's failed copies are counted over all its
  links left (its marks add up, as an item's do) and spread evenly over them, all of them remove
  every link of it;
- switches and NICs left as dead ends are dropped (`_drop_dead_ends`);
- accelerators no longer connected to the largest set are cut off: the job shrinks to that set.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection
from dataclasses import replace

import networkx as nx

from designer.engine.failures.marks import Failure, MediumFailure, merged_failures
from designer.model.catalog import Catalog
from designer.model.design import Design, Link
from designer.model.errors import DesignError


# The suffix of a copy split out by a failure (`su:f1`, `su.node:f1:f2`): stripped, it names the
# item as the user drew it.
SPLIT_TAG = re.compile(r"(?::f[0-9]+)+$")


def unbuildable(design: Design, catalog: Catalog, failures: list[Failure]) -> str | None:
    """Why the degraded design cannot be built with `failures`, or None: some copies of an item
    fail (not all) and a replicated group the split reaches is joined copy for copy, by matched
    links, to groups one of which holds another (`_nested_match`), so no copy can be split out of
    all of them (`_Degrader.fail_item` refuses the same). The CLI's --fail and the canvas's Fail
    One Copy refuse such a mark before making it; one pass over the links and a walk up from each
    item partly failed, splitting as `_Degrader.fail_item` does."""
    partners = _match_partners(design)
    if not partners:
        return None
    for failure in merged_failures(design, catalog, failures)[0]:
        if failure.target not in design.items or failure.copies is None:
            continue  # every copy, or a link's lanes: nothing is split out
        chain = [failure.target, *(a.id for a in design.ancestors(failure.target))]
        total, failed = design.multiplicity(failure.target), failure.copies
        for group in reversed(chain):
            count = design.items[group].count
            if count == 1:
                continue
            if group in partners:
                problem = _nested_match(design, failure.target, *_matched_closure(partners, group))
                if problem:
                    return problem
            total //= count
            failed %= total  # the copies left to fail inside one split-out copy of `group`
            if not failed:
                break
    return None


def _match_partners(design: Design) -> dict[str, list[tuple[str, Link]]]:
    """group → [(group matched copy for copy with it, the link matching them)], over the links
    whose match holds (a match that no longer holds joins every copy to every copy)."""
    partners: dict[str, list[tuple[str, Link]]] = {}
    for link in design.links.values():
        if link.match is not None and design.match_problem(link) is None:
            ga, gb = link.match
            partners.setdefault(ga, []).append((gb, link))
            partners.setdefault(gb, []).append((ga, link))
    return partners


def _matched_closure(partners: dict[str, list[tuple[str, Link]]], group: str) -> tuple[list[str], list[Link]]:
    """The groups whose copies move with `group`'s, joined copy for copy to it directly or through
    each other (`group` first), and the matched links among them: copy i of each is one unit."""
    groups, stack = [group], [group]
    links: dict[str, Link] = {}
    while stack:
        for other, link in partners.get(stack.pop(), ()):
            links[link.id] = link
            if other not in groups:
                groups.append(other)
                stack.append(other)
    return groups, list(links.values())


def _nested_match(design: Design, item_id: str, groups: list[str], links: list[Link]) -> str | None:
    """Why copies of `groups` (a matched closure) cannot be split out together, or None: one of
    them holds another, so copy i of the outer holds every copy of the inner, copy i among them."""
    members = set(groups)
    for group in groups:
        holder = next((a.id for a in design.ancestors(group) if a.id in members), None)
        if holder is not None:
            by = next(link for link in links if group in link.match)
            # Named as the user drew them, not as copies split out by an earlier step (":f1").
            item, outer, inner, link_id = (SPLIT_TAG.sub("", i) for i in (item_id, holder, group, by.id))
            return (f"failure of '{item}': groups '{outer}' and '{inner}' are matched copy for copy "
                    f"(link '{link_id}') and '{outer}' holds '{inner}', so no copy can be split out of both; "
                    "fail every copy")
    return None


class _Degrader:
    """Applies failures to a private copy of a design's items and links."""

    def __init__(self, design: Design, catalog: Catalog):
        self.healthy = design
        settings = {k: copy.deepcopy(v) for k, v in design.settings.items() if k != "failures"}
        self.design = Design(design.name, design.description, dict(design.items), dict(design.links), settings)
        self.catalog = catalog
        self.splits = 0

    def apply(self, failure: Failure | MediumFailure) -> None:
        d = self.design
        if failure.target in d.items:
            item = d.items[failure.target]
            self.fail_item(item.id, failure.failed_of(d.multiplicity(item.id)))
        elif failure.target in d.links:
            link = d.links[failure.target]
            self.fail_link(link, failure.failed_of(d.link_copies(link).instances))
        elif failure.target in self.catalog and self.catalog[failure.target].kind == "medium":
            # A medium's physical links are one pool: a count or a share of them fails spread
            # evenly over all of them, so a link drawn once among thousands (a mesh's) is thinned
            # with the rest, not taken away whole.
            links = [link for link in d.links.values() if link.medium == failure.target]
            pool = sum(d.link_copies(link).instances for link in links)
            failed = failure.failed_of(pool)
            for link in links:
                self.keep_share(link, (pool - failed) / pool)
        elif failure.target in self.healthy.items or failure.target in self.healthy.links:
            pass  # it went with something failed before it (its container, a link's end)
        else:
            raise DesignError(f"failure '{failure.text()}': no item, link or link medium '{failure.target}' "
                              "in the design")

    def fail_link(self, link: Link, failed: int) -> None:
        total = self.design.link_copies(link).instances
        self.keep_share(link, (total - failed) / total)

    def keep_share(self, link: Link, share: float) -> None:
        """`link` keeps `share` of its lanes: fractional lanes, as the engine spreads a link's
        traffic evenly over its copies. A link left with no lane is removed, not kept at 0 GB/s:
        the accelerators only it joined are cut off and the job shrinks to what is still connected."""
        lanes = link.lanes * share
        if lanes > 0:
            self.design.links[link.id] = replace(link, lanes=lanes)
        else:
            del self.design.links[link.id]

    def fail_item(self, item_id: str, failed: int) -> None:
        d = self.design
        total = d.multiplicity(item_id)
        if failed >= total:
            self.remove(item_id)
            return
        chain = [item_id] + [a.id for a in d.ancestors(item_id)]
        outer = next(i for i in reversed(chain) if d.items[i].count > 1)
        groups, links = _matched_closure(_match_partners(d), outer)
        count = d.items[outer].count
        if outer == item_id and not links:
            d.items[outer] = replace(d.items[outer], count=count - failed)
            return
        problem = _nested_match(d, item_id, groups, links)
        if problem:
            raise DesignError(problem)
        whole, rest = divmod(failed, total // count)
        if whole:
            self.remove(self.split(groups, links, whole)[item_id])
        if rest:
            self.fail_item(self.split(groups, links, 1)[item_id], rest)
        left = count - whole - (1 if rest else 0)
        for group in groups:
            if left:
                d.items[group] = replace(d.items[group], count=left)
            else:
                self.remove(group)
        if left == 1:
            for link in links:  # one copy of each left: nothing to pair
                d.links[link.id] = replace(d.links[link.id], match=None)

    def split(self, groups: list[str], links: list[Link], count: int) -> dict[str, str]:
        """`count` copies of `groups[0]` split out as a sibling group (`clone`), and with them the
        same copies of every group matched copy for copy with it (`groups`, joined by `links`):
        the split-out copies are joined to each other by copies of `links` as the copies they
        come from were (a split-out core group to the split-out spines, one of each: no match
        left to state). Old id → new id, over every group split."""
        ids: dict[str, str] = {}
        skip = {link.id for link in links}
        for group in groups:
            ids.update(self.clone(group, count, skip))
        for link in links:
            ga, gb = link.match
            new = replace(link, id=link.id + ids[ga][len(ga):], a=ids[link.a], b=ids[link.b],
                          match=(ids[ga], ids[gb]) if count > 1 else None)
            self.design.links[new.id] = new
        return ids

    def clone(self, root: str, count: int, skip: Collection[str] = ()) -> dict[str, str]:
        """A sibling copy of `root`'s subtree with `count` copies, and its links but those in
        `skip`; old id → new id."""
        d = self.design
        self.splits += 1
        tag = f":f{self.splits}"
        index = d.children_index()
        inside = [d.items[root]] + d.descendants(root, index)
        ids = {item.id: item.id + tag for item in inside}
        for item in inside:
            d.items[ids[item.id]] = replace(item, id=ids[item.id], parent=ids.get(item.parent, item.parent),
                                            count=count if item.id == root else item.count)
        for link in [l for l in d.links.values() if (l.a in ids or l.b in ids) and l.id not in skip]:
            match = tuple(ids.get(g, g) for g in link.match) if link.match is not None else None
            new = replace(link, id=link.id + tag, a=ids.get(link.a, link.a), b=ids.get(link.b, link.b), match=match)
            d.links[new.id] = new
        return ids

    def remove(self, item_id: str) -> None:
        d = self.design
        gone = {item_id} | {i.id for i in d.descendants(item_id)}
        for i in gone:
            del d.items[i]
        for link_id in [l.id for l in d.links.values() if l.a in gone or l.b in gone]:
            del d.links[link_id]


def components(design: Design) -> list[tuple[int, int, set[str]]]:
    """Connected sets of accelerators: (accelerators in one physical copy, physical copies, drawn
    items), largest first. A drawn set inside a replicated group with no link out of it stands for
    one island per copy of the group."""
    items = design.items
    links = [(link.a, link.b) for link in design.links.values() if link.a in items and link.b in items
             and "cpu" not in (items[link.a].kind, items[link.b].kind)]
    linked = {end for pair in links for end in pair}
    graph = nx.Graph()
    # In the design's order: of two sets of one size, the one drawn first comes first.
    graph.add_nodes_from(item_id for item_id, item in items.items() if item.kind == "accelerator" or item_id in linked)
    graph.add_edges_from(links)
    chains = design.chains()
    mult: dict[str, int] = {}

    def multiplicity(item_id: str) -> int:
        hit = mult.get(item_id)
        if hit is None:
            hit = mult[item_id] = items[item_id].count * (multiplicity(items[item_id].parent)
                                                          if items[item_id].parent else 1)
        return hit

    out = []
    for group in nx.connected_components(graph):
        accelerators = sum(multiplicity(i) for i in group if items[i].kind == "accelerator")
        if not accelerators:
            continue
        common = None
        for i in group:
            chain = chains[i]
            common = list(chain) if common is None else [c for c in common if c in chain]
        # The lowest container holding the whole set: its copies are separate islands.
        islands = multiplicity(common[0]) if common else 1
        out.append((accelerators // islands, islands, group))
    out.sort(key=lambda c: -c[0])
    return out


def _hop_levels(design: Design) -> dict[str, int]:
    """Drawn hops from the nearest accelerator, for every linked item."""
    neighbours: dict[str, set[str]] = {}
    for link in design.links.values():
        neighbours.setdefault(link.a, set()).add(link.b)
        neighbours.setdefault(link.b, set()).add(link.a)
    level = {i: 0 for i, it in design.items.items() if it.kind == "accelerator"}
    frontier = list(level)
    while frontier:
        nxt = []
        for node in frontier:
            for other in neighbours.get(node, ()):
                if other not in level:
                    level[other] = level[node] + 1
                    nxt.append(other)
        frontier = nxt
    return level


def _drop_dead_ends(design: Design, healthy_level: dict[str, int]) -> None:
    """Remove switches left with no link down towards the accelerators (a leaf whose NICs all
    failed) and NICs left with only links up (the NIC of a failed GPU, whose host link it was):
    traffic never climbs through them, and left in they would count one level higher in the
    oversubscription table (rail leaf k of every server's failed GPU k as a tier above the
    spines). One pass per tier that empties. A copy split out by a failure (`su.leaf0:f1`) sits at
    the level of the item it copies."""
    items = design.items
    level = {i: healthy_level[SPLIT_TAG.sub("", i)] for i in items if SPLIT_TAG.sub("", i) in healthy_level}
    while True:
        down, linked = set(), set()
        for link in design.links.values():
            linked.update((link.a, link.b))
            for end, other in ((link.a, link.b), (link.b, link.a)):
                if level.get(other, 1 << 30) < level.get(end, 0) or (
                        items[end].kind == "nic" and items[other].kind != "switch"):
                    down.add(end)
        dead = [i for i in linked - down if items[i].kind in ("switch", "nic") and level.get(i, 0) > 0]
        if not dead:
            return
        gone = set(dead)
        for i in dead:
            del items[i]
        for link_id in [l.id for l in design.links.values() if l.a in gone or l.b in gone]:
            del design.links[link_id]


def degraded_design(design: Design, catalog: Catalog, failures: list[Failure]) -> tuple[Design, int, str | None]:
    """The design with `failures` applied and the job shrunk to the largest connected set of
    accelerators: (design, accelerators cut off by the failures, a note or None)."""
    healthy = components(design)
    total = sum(size * islands for size, islands, _ in healthy)
    degrader = _Degrader(design, catalog)
    merged, notes = merged_failures(design, catalog, failures)
    for failure in merged:
        drawn = failure.target in design.items or failure.target in design.links
        if drawn and failure.target not in degrader.design.items and failure.target not in degrader.design.links:
            continue  # gone with an earlier failure: a link with its end, a NIC with its server
        degrader.apply(failure)
    d = degrader.design
    _drop_dead_ends(d, _hop_levels(design))
    left = components(d)
    remaining = sum(size * islands for size, islands, _ in left)
    if not left:
        return d, total, "; ".join([*notes, "no accelerator is left: nothing trains"])
    if not healthy or healthy[0][0] < total:
        notes.append("the healthy design's accelerators are not all connected: only those of failed parts leave "
                     "the job, none for a lost path")
        return d, total - remaining, "; ".join(notes)
    size = _keep_largest(degrader, left)
    return d, total - size, "; ".join(notes) or None


def _keep_largest(degrader: _Degrader, sets: list[tuple[int, int, set[str]]]) -> int:
    """Leave only the largest connected set's accelerators (`components`, largest first) in the
    degrader's design, one copy of it where it is an island of a replicated group; its size."""
    d = degrader.design
    size, islands, keep = sets[0]
    # Accelerators hold nothing: taken out together, in one pass over the links.
    gone = {item_id for _, _, group in sets[1:] for item_id in group
            if d.items.get(item_id) is not None and d.items[item_id].kind == "accelerator"}
    for item_id in gone:
        del d.items[item_id]
    for link_id in [l.id for l in d.links.values() if l.a in gone or l.b in gone]:
        del d.links[link_id]
    if islands > 1:
        # One island runs the job: the containers that replicate it keep one copy.
        chains = d.chains()
        common = None
        for i in keep:
            common = list(chains[i]) if common is None else [c for c in common if c in chains[i]]
        for container in common or ():
            if d.items[container].count > 1:
                d.items[container] = replace(d.items[container], count=1)
    return size


def connected_job(design: Design, catalog: Catalog) -> tuple[Design, int, int] | None:
    """Where not every accelerator is joined to the others by links: the design with only the
    largest connected set's accelerators, which a collective or training job runs on, with (its
    accelerators, all accelerators). None when they are all joined."""
    items = design.items
    chains = design.chains()
    # Accelerators in no server are left out by the network model (lint names them), not a set.
    sets = [c for c in components(design) if any(
        items[i].kind == "accelerator" and any(items[a].kind == "server" for a in chains[i][1:]) for i in c[2])]
    total = sum(size * islands for size, islands, _ in sets)
    if not sets or sets[0][0] >= total:
        return None
    degrader = _Degrader(design, catalog)
    size = _keep_largest(degrader, sets)
    return degrader.design, size, total


def weakened_accelerators(healthy: Design, broken: Design, failures: list[Failure]) -> list[str]:
    """The accelerators of the degraded design whose surroundings a failure may have left weaker
    than the representative's: those in copies a failure split out (an item of their chain is
    not in the healthy design: `su:f1`, `su.node:f1:f2`) and those inside a container that held a
    failed item or a failed link's end (a switch drawn once in one group of a flat drawing). The
    degraded evaluation times collectives and the step on the slowest of them
    (`network.build_fabric`'s `slowest_of`). A failed medium thins every link of it alike."""
    healthy_chains = healthy.chains()
    touched: set[str] = set()
    for failure in failures:
        if failure.target in healthy.items:
            ends = (failure.target,)
        elif failure.target in healthy.links:
            ends = (healthy.links[failure.target].a, healthy.links[failure.target].b)
        else:
            ends = ()
        for end in ends:
            touched.update(c for c in healthy_chains[end][1:] if c in broken.items)
    chains = broken.chains()
    return [item_id for item_id, item in broken.items.items() if item.kind == "accelerator"
            and any(i not in healthy.items or i in touched for i in chains[item_id])]
