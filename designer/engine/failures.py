"""Failure what-ifs: take parts out of service and evaluate what is left.

A failure names an item, a link or a link medium, and how many of its physical copies fail: all
of them, a count ("1 of 16 spines": `spines.sw:1`) or a percentage ("2 % of the NDR optics":
`ib-ndr:2%`). The design's `settings["failures"]` holds them (`{"target": ID, "copies": N}` or
`{"target": ID, "percent": P}`; neither means every copy); the CLI adds `--fail ID[:copies]`.

The degraded design is built on a copy, never the user's design:

- a failed copy of an item inside replicated groups is split out: the outermost replicated group
  above it loses a copy, and a copy of its own (ids suffixed ":f1", ":f2"...) holds the failure, so
  one NIC of one server fails without touching the other 127; where a matched link joins that
  group copy for copy to others (a core group to each block's spines), the same copy of each is
  split out with it, the split-out copies joined to each other as before;
- every copy of an item failed removes it, with what it holds and its links;
- failed copies of a link take their share of its lanes away (the engine spreads traffic evenly
  over a link's copies), all of them remove it; a medium's failed copies are counted over all its
  links left (its marks add up, as an item's do) and spread evenly over them, all of them remove
  every link of it;
- accelerators no longer connected to the largest set are cut off: the job shrinks to that set.

`degraded()` evaluates what is left with the same model (and plan where it still fits; else the
best plan that does) and returns each figure next to the healthy one (`sections.Degraded`).
`blast_radius()` says, from the drawn graph alone, how many accelerators one failed copy of an item
cuts off and how many more lose bandwidth.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from collections.abc import Collection
from dataclasses import dataclass, replace

import networkx as nx

from designer.engine.network import build_fabric, is_passthrough, server_paths
from designer.engine.result import Result, rounded
from designer.engine.sections import Comparison, Degraded, Network, Plan
from designer.engine.shapes import classify as classify_shape
from designer.engine.shapes import dragonfly_group
from designer.engine.torus_lines import TorusLines
from designer.engine.workloads import WorkloadError
from designer.model.catalog import Catalog
from designer.model import torus as torus_ids
from designer.model.design import MAX_TOTAL_COPIES, Design, Link
from designer.model.errors import DesignError

_FAILURE_TEXT = re.compile(
    r"^(?P<target>[A-Za-z0-9][A-Za-z0-9_.:-]*?)(?::(?P<amount>[0-9]+(?:\.[0-9]+)?)(?P<percent>%)?)?$")


@dataclass(frozen=True)
class Failure:
    """`target` out of service: every copy (copies and percent None), `copies` of them, or
    `percent` of them (at least one)."""

    target: str
    copies: int | None = None
    percent: float | None = None

    def text(self) -> str:
        if self.copies is not None:
            return f"{self.target}:{self.copies}"
        if self.percent is not None:
            return f"{self.target}:{self.percent:g}%"
        return self.target

    def setting(self) -> dict:
        """The entry of `settings["failures"]`."""
        out: dict = {"target": self.target}
        if self.copies is not None:
            out["copies"] = self.copies
        if self.percent is not None:
            out["percent"] = self.percent
        return out

    def failed_of(self, total: int) -> int:
        """How many of `total` physical copies fail."""
        if self.copies is not None:
            return min(total, self.copies)
        if self.percent is not None:
            return min(total, max(1, round(total * self.percent / 100)))
        return total


def parse_failure(text: str) -> Failure:
    """"ID", "ID:3" or "ID:2%" (the CLI's --fail); a bad text raises ValueError saying what fits."""
    match = _FAILURE_TEXT.match(text.strip())
    if match is None:
        raise ValueError(f"expected ID, ID:COPIES or ID:PERCENT% (like spines.sw:1 or ib-ndr:2%), got '{text}'")
    amount = match.group("amount")
    if amount is None:
        return Failure(match.group("target"))
    if match.group("percent"):
        percent = float(amount)
        if not 0 < percent <= 100:
            raise ValueError(f"a percentage of copies is above 0 and at most 100, got '{text}'")
        return Failure(match.group("target"), percent=percent)
    # Digits are counted before converting: Python refuses to convert thousands of them.
    digits = amount.lstrip("0")
    if "." in amount or len(digits) > len(str(MAX_TOTAL_COPIES)) or not 1 <= int(amount) <= MAX_TOTAL_COPIES:
        raise ValueError(f"a count of copies is a whole number from 1 to {MAX_TOTAL_COPIES:,}, got '{text}'")
    return Failure(match.group("target"), copies=int(amount))


def failures_of(design: Design) -> list[Failure]:
    """The failures a design's settings mark."""
    return [Failure(entry["target"], entry.get("copies"), entry.get("percent"))
            for entry in design.settings.get("failures") or ()]


@dataclass(frozen=True)
class MediumFailure:
    """Some of a link medium's physical links out of service, from every mark of it: the marks'
    counts add up (two of 50 % are every link), each counted over the links of it left when it
    applies (`_Degrader.apply`: after the failures of every copy), capped at all of them."""

    target: str
    marks: tuple[Failure, ...]

    def text(self) -> str:
        return ", ".join(mark.text() for mark in self.marks)

    def failed_of(self, total: int) -> int:
        """How many of `total` physical links fail."""
        return min(total, sum(mark.failed_of(total) for mark in self.marks))


def medium_links(design: Design, medium: str) -> int:
    """Physical links of `medium` in the design, over all its links: the pool a count or a share
    of the medium is taken from."""
    return sum(design.link_copies(link).instances for link in design.links.values() if link.medium == medium)


def merged_failures(design: Design, catalog: Catalog,
                    failures: list[Failure]) -> tuple[list[Failure | MediumFailure], list[str]]:
    """The failures to apply, one per item, link or link medium, and notes on what they asked for.

    Marks of one target add up (one copy marked twice is two copies; a mark of every copy wins),
    capped at the copies there are; a medium's copies are its physical links over all its links
    (`medium_links`): marks adding up to all of them (50 % twice) fail the medium, exactly as its
    mark of every copy does, fewer are one `MediumFailure`. Failures of every copy come first: a
    failure of something inside one of them finds it gone, and no copy split out by a partial
    failure (`su:f1`) is left standing by a later failure of the whole. One pass over the marks,
    and one over the links per medium marked.
    Notes: a count above the copies there are, a medium no link of the design uses."""
    notes: list[str] = []
    by_target: dict[str, list[Failure]] = {}
    for failure in failures:
        by_target.setdefault(failure.target, []).append(failure)
    whole: list[Failure] = []
    partial: list[Failure | MediumFailure] = []
    for target, marks in by_target.items():
        every = any(m.copies is None and m.percent is None for m in marks)
        noun = "copies"
        if target in design.items:
            total = design.multiplicity(target)
        elif target in design.links:
            total = design.link_copies(design.links[target]).instances
        elif target in catalog and catalog[target].kind == "medium":
            total, noun = medium_links(design, target), "physical links"
            if not total:  # nothing to fail; the CLI refuses such a mark, a file's is only noted
                notes.append(f"no link of the design uses medium '{target}': nothing of it failed")
                continue
        else:
            (whole if every else partial).extend(marks)  # `_Degrader.apply` says what is unknown
            continue
        asked = sum(m.copies for m in marks if m.copies is not None)
        if not every and asked > total:
            notes.append(f"{asked:,} {noun} of '{target}' marked failed, the design has {total:,}: every copy failed")
        failed = total if every else min(total, sum(m.failed_of(total) for m in marks))
        if failed >= total:
            whole.append(Failure(target))
        elif target in design.items or target in design.links:
            partial.append(Failure(target, copies=failed))
        else:
            # Counted again over the links left when it applies: a switch failed with it takes
            # its links first, and 5 % is then 5 % of the rest.
            partial.append(MediumFailure(target, tuple(marks)))
    return whole + partial, notes


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
            item, outer, inner, link_id = (_SPLIT_TAG.sub("", i) for i in (item_id, holder, group, by.id))
            return (f"failure of '{item}': groups '{outer}' and '{inner}' are matched copy for copy "
                    f"(link '{link_id}') and '{outer}' holds '{inner}', so no copy can be split out of both; "
                    "fail every copy")
    return None


def failed_targets(design: Design) -> set[str]:
    """Ids of the items and links a design marks failed (whole or in part)."""
    return {entry["target"] for entry in design.settings.get("failures") or ()}


# -- the degraded design --------------------------------------------------------------------------

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
    level = {i: healthy_level[_SPLIT_TAG.sub("", i)] for i in items if _SPLIT_TAG.sub("", i) in healthy_level}
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


# -- comparison -------------------------------------------------------------------------------

_SPLIT_TAG = re.compile(r"(?::f[0-9]+)+$")


def _level_value(units: list[tuple[float, float, float]], half: float) -> float:
    """Bisection across one containment level whose copies differ: `units` are (accelerators per
    copy, copies, raw GB/s leaving one copy). The worst balanced split puts the copies with the
    least bandwidth per accelerator on one side (a share of a copy where half falls inside it),
    and what leaves that side bounds the cut."""
    value, need = 0.0, half
    for accelerators, copies, cut in sorted(units, key=lambda u: u[2] / u[0]):
        taken = min(copies, need / accelerators)
        value += taken * cut
        need -= taken * accelerators
        if need <= 1e-9:
            break
    return value


def uneven_bisection(design: Design, catalog: Catalog, healthy: Network, degraded: Network,
                     weakened: Collection[str] = ()) -> float | None:
    """The scale-out bisection of a degraded design, computed on its fabric where its copies are
    no longer alike (docs/goodput.md, "Bisection of a degraded design").

    The engine's bisection (network.network_summary) is the smallest, over the containment levels
    around its representative accelerator, of half the copies times what leaves one copy: exact
    when every copy is alike. A failure that splits one copy out of a group (one leaf of one
    scalable unit) leaves copies that differ, so each level is taken here over every copy of it
    — the original items and the split-out ones (ids suffixed ":f1"...) — and the worst balanced
    split weighs the weakest ones (`_level_value`). The levels are the healthy design's
    (`healthy.boundaries`); the injection bound (`_injection_limit`) and a dragonfly's limit
    (`_dragonfly_limit`) weigh the weakest half of the servers and of the groups alike.
    `weakened` (`weakened_accelerators`) adds, to each level, the container at its depth in their
    chains: a copy drawn apart that a failure touched (a switch of the partial Frontier group)."""
    if degraded.scale_out is None or healthy.scale_out is None or healthy.scale_out.bisection_gb_per_s is None:
        return degraded.scale_out.bisection_gb_per_s if degraded.scale_out else None
    fabric = build_fabric(design, catalog)
    total = fabric.total_accelerators
    if fabric.rep is None or total < 2:
        return None
    chains = design.chains()
    inside: dict[str, list[str]] = {}
    for accelerator in fabric.accelerators:
        for container in chains[accelerator.id][1:]:
            inside.setdefault(container, []).append(accelerator.id)
    domain = healthy.scale_up.domain_accelerators if healthy.scale_up else 1
    levels = {b.item for b in healthy.boundaries
              if b.item is not None and b.copies >= 2 and b.accelerators >= max(1, domain)
              and healthy.accelerators / b.accelerators >= 2}
    if not levels:
        return degraded.scale_out.bisection_gb_per_s
    variants: dict[str, list[str]] = {}
    for container in inside:
        base = _SPLIT_TAG.sub("", container)
        if base in levels:
            variants.setdefault(base, []).append(container)
    present = {a.id for a in fabric.accelerators}
    for members in variants.values():
        first = members[0]
        depth = len(chains[inside[first][0]]) - len(chains[first])
        for accelerator in weakened:
            chain = chains.get(accelerator)
            if accelerator not in present or depth >= len(chain):
                continue
            counterpart = chain[depth]
            if (design.items[counterpart].kind == design.items[first].kind
                    and not any(m in chains[counterpart] or counterpart in chains[m] for m in members)):
                members.append(counterpart)
    crossing: dict[str, float] = {}
    for link in fabric.links:
        ends_a, ends_b = set(chains[link.a]), set(chains[link.b])
        for container in ends_a ^ ends_b:
            if container in inside:
                crossing[container] = crossing.get(container, 0.0) + link.cap * link.instances
    best = None
    for level in levels:
        units, covered = [], 0
        for container in variants.get(level, ()):
            copies = fabric.copies[container]
            accelerators = sum(fabric.copies[a] for a in inside[container])
            covered += accelerators
            units.append((accelerators / copies, copies, crossing.get(container, 0.0) / copies))
        if not units or covered < total / 2:
            continue
        if covered < total:
            # Accelerators outside every copy of the level (a partial unit beside the full ones)
            # count as their share of a copy like the first, as the engine counts them.
            accelerators, _, cut = units[0]
            units.append((accelerators, (total - covered) / accelerators, cut))
        value = _level_value(units, total / 2)
        best = value if best is None else min(best, value)
    if best is None:
        return degraded.scale_out.bisection_gb_per_s
    injection = _injection_limit(fabric, chains)
    if injection:
        best = min(best, injection)
    dragonfly = _dragonfly_limit(fabric, variants, crossing)
    if dragonfly is not None:
        best = min(best, dragonfly)
    return best


def _injection_limit(fabric, chains: dict) -> float:
    """What the weakest half of the accelerators can inject into the scale-out network: the
    servers split out by a failure at their own injection (one NIC fewer: 7/8), every other one
    at the injection of a server no failure split."""
    items = fabric.design.items
    servers: dict[str, str] = {}  # server → one of its accelerators
    for accelerator in fabric.accelerators:
        server = next((i for i in chains[accelerator.id] if items[i].kind == "server"), accelerator.id)
        servers.setdefault(server, accelerator.id)
    whole = next((a for s, a in servers.items() if not _SPLIT_TAG.search(s)), None)
    held: dict[str, int] = {}
    for accelerator in fabric.accelerators:
        held[accelerator.parent] = held.get(accelerator.parent, 0) + fabric.copies[accelerator.id]
    units, covered = [], 0
    for server, accelerator in servers.items():
        if _SPLIT_TAG.search(server):
            per_copy = held[items[accelerator].parent] / fabric.copies[server]
            units.append((per_copy, fabric.copies[server], per_copy * server_paths(fabric, accelerator)[2]))
            covered += per_copy * fabric.copies[server]
    total = fabric.total_accelerators
    if covered < total:
        raw = server_paths(fabric, whole)[2] if whole is not None else fabric.out_raw
        units.append((1, total - covered, raw))
    return _level_value(units, total / 2)


def _dragonfly_limit(fabric, variants: dict[str, list[str]], crossing: dict) -> float | None:
    """A dragonfly's bisection with groups that differ: between two groups run
    global links as many as the weaker of the two has per other group (its global bandwidth ÷
    (groups − 1)), so the worst even split puts the weakest half of the groups on one side and
    every one of them meets each of the G/2 groups across: (G/2) / (G − 1) × the weakest half's
    global bandwidth (× ½ under forced Valiant routing, as the engine's figure). With every group
    alike it is the engine's (G/2)² × global / (G − 1)."""
    classify_shape(fabric)
    k = dragonfly_group(fabric)
    if k is None or k == 0:
        return None
    group = fabric.boundaries[k]
    groups = math.ceil(fabric.total_accelerators / group.accelerators)
    if groups < 2:
        return None
    members = variants.get(_SPLIT_TAG.sub("", group.item)) or [group.item]
    units = [(1, fabric.copies[c], crossing.get(c, 0.0) / fabric.copies[c]) for c in members]
    drawn = sum(copies for _, copies, _ in units)
    if drawn < groups:
        # Groups drawn apart (a partial group) count like the first, as the engine counts them.
        units.append((1, groups - drawn, units[0][2]))
    return groups / 2 / (groups - 1) * _level_value(units, groups / 2) * group.uniform_share


def _worst_oversubscription(network: Network) -> float | None:
    if network.scale_out is None:
        return None
    ratios = [level.oversubscription for level in network.scale_out.oversubscription if level.oversubscription]
    return max(ratios) if ratios else None


def _largest_collective(result: Result):
    rows = [r for r in result.collectives if r.algorithm == "auto"] or list(result.collectives)
    return max(rows, key=lambda r: r.bytes) if rows else None


def comparisons(healthy: Result, degraded: Result, degraded_bisection: float | None) -> tuple[Comparison, ...]:
    """Each compared figure, healthy next to degraded; `degraded_bisection` is the degraded
    design's scale-out bisection (`uneven_bisection`)."""
    h_net, d_net = healthy.network, degraded.network
    h_bis = h_net.scale_out.bisection_gb_per_s if h_net.scale_out else None
    h_row, d_row = _largest_collective(healthy), _largest_collective(degraded)
    h_tr, d_tr = healthy.training, degraded.training
    # With no accelerator left no job runs: what is left still fails, but interrupts nothing.
    h_gp, d_gp = healthy.goodput, degraded.goodput if d_net.accelerators else None

    def out_of(network: Network, name: str):
        return getattr(network.scale_out, name) if network.scale_out else None

    rows = [
        ("Accelerators in the job", "", h_net.accelerators, d_net.accelerators),
        ("Scale-out bisection", "GB/s", h_bis, rounded(degraded_bisection)),
        ("Scale-up domain bisection", "GB/s", h_net.scale_up.bisection_gb_per_s if h_net.scale_up else None,
         d_net.scale_up.bisection_gb_per_s if d_net.scale_up else None),
        ("Worst oversubscription", ":1", _worst_oversubscription(h_net), _worst_oversubscription(d_net)),
        ("Scale-out injection per accelerator (achieved)", "GB/s", out_of(h_net, "achieved_injection_gb_per_s"),
         out_of(d_net, "achieved_injection_gb_per_s")),
    ]
    if h_row is not None:
        label = f"{h_row.op} {h_row.bytes / 2 ** 30:g} GiB time"
        rows.append((label, "s", h_row.time_s, d_row.time_s if d_row is not None else None))
        rows.append((f"{h_row.op} {h_row.bytes / 2 ** 30:g} GiB bus bandwidth", "GB/s", h_row.busbw_gb_per_s,
                     d_row.busbw_gb_per_s if d_row is not None else None))
    rows += [
        ("Training step time", "s", h_tr.step_time_s, d_tr.step_time_s),
        ("Tokens per second", "tokens/s", h_tr.tokens_per_s, d_tr.tokens_per_s),
        ("MFU", "", h_tr.mfu, d_tr.mfu),
        ("Days to train (no failures)", "days", h_tr.days, d_tr.days),
        ("Interruptions per day", "/day", h_gp.interruptions_per_day if h_gp else None,
         d_gp.interruptions_per_day if d_gp else None),
        ("Effective training time ratio", "", h_gp.effective_ratio if h_gp else None,
         d_gp.effective_ratio if d_gp else None),
        ("Days to train (with failures)", "days", h_gp.days if h_gp else None, d_gp.days if d_gp else None),
    ]
    return tuple(Comparison(name, unit, h, d) for name, unit, h, d in rows)


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


@dataclass(frozen=True)
class DegradedRun:
    """The degraded design evaluated: `result` (its own Result, every collective row and size),
    its scale-out bisection weighed over copies that differ (`uneven_bisection`), the accelerators
    cut off, what could not be evaluated, and where the job runs (`placement`: on a torus of
    reconfigurable blocks, in place or moved to a slice of intact blocks, and why; else None)."""

    result: Result | None
    bisection: float | None
    cut_off: int
    plan: Plan | str | None
    why: str | None
    placement: str | None = None


def run_degraded(design: Design, catalog: Catalog, workload: dict, healthy: Result, evaluate,
                 model: dict) -> DegradedRun:
    """Evaluate the design with its failures (`settings["failures"]`) applied. `evaluate` is the
    engine's entry point (passed in: it calls this module); `model` the healthy job's model, kept (a
    preset sized to the design would change with its size). On a torus whose blocks meet through
    circuit switches (`reconfigurable_blocks`) the job may instead move to the largest slice of
    intact blocks (`largest_slice`): the faster of the two is kept (docs/goodput.md, "A torus of
    reconfigurable blocks")."""
    failures = failures_of(design)
    try:
        broken, cut_off, note = degraded_design(design, catalog, failures)
    except DesignError as exc:
        return DegradedRun(None, None, 0, None, str(exc))
    lines = _torus_lines(broken, catalog)
    if lines is not None and lines.split() is not None:
        return DegradedRun(None, None, 0, None, lines.split())
    training = {**(workload.get("training") or {}), "model": model}
    slowest = weakened_accelerators(design, broken, failures)
    left = sum(size * islands for size, islands, _ in components(broken))
    result, plan_note = _run_job(broken, catalog, workload, training, healthy, evaluate, slowest, left)
    placement = None
    blocks = reconfigurable_blocks(design, catalog)
    if blocks is not None:
        moved, placement = _slice_or_in_place(design, broken, lines, blocks, catalog, workload, training, healthy,
                                              evaluate, result)
        if moved is not None:
            (result, plan_note), broken, slowest, note = moved, None, (), None
    plan = result.training.plan if isinstance(result.training.plan, Plan | str) else None
    untimed = None if result.training.timed or not result.network.accelerators else result.training.why
    why = "; ".join(filter(None, (note, plan_note, untimed))) or None
    bisection = (uneven_bisection(broken, catalog, healthy.network, result.network, slowest) if broken is not None
                 else result.network.scale_out.bisection_gb_per_s if result.network.scale_out else None)
    return DegradedRun(result, bisection, cut_off, plan, why, placement)


def _run_job(design: Design, catalog: Catalog, workload: dict, training: dict, healthy: Result, evaluate,
             slowest: Collection[str], left: int) -> tuple[Result, str | None]:
    """`design` (what is left, or a slice of it) evaluated with the healthy job on its `left`
    accelerators (`_fewer_replicas`), else the best plan that fits; (result, what changed of the
    plan, or None)."""
    plan_note, result = None, None
    kept = _fewer_replicas(healthy.training, left) if left < healthy.network.accelerators else None
    if kept is not None:
        plan, working = kept
        result = _timed(evaluate, design, catalog, {**workload, "training": {**training, "plan": plan,
                                                                               "accelerators": working}}, slowest)
        dropped, idle = healthy.training.plan.dp - plan["dp"], left - working
        if result is not None and (dropped or idle):
            plan_note = (f"the healthy plan with {dropped:,} data-parallel replica{'s' if dropped != 1 else ''} fewer"
                         + (f", {idle:,} accelerator{'s' if idle != 1 else ''} idle" if idle else ""))
    elif training.get("plan") not in (None, "auto"):
        result = _timed(evaluate, design, catalog, {**workload, "training": training}, slowest)
    if result is None:
        # No healthy plan to keep, or it no longer fits: the best plan for what is left.
        result = evaluate(design, catalog, {**workload, "training": {**training, "plan": "auto"}}, slowest_of=slowest)
        if kept is not None or training.get("plan") not in (None, "auto"):
            plan_note = "the healthy plan no longer fits: the best plan that does"
    return result, plan_note


def _timed(evaluate, design: Design, catalog: Catalog, workload: dict, slowest: list[str]) -> Result | None:
    """The evaluation of `workload`'s plan, or None where it does not fit or cannot be timed."""
    try:
        result = evaluate(design, catalog, workload, slowest_of=slowest)
    except WorkloadError:
        return None
    return result if result.training.timed and result.training.fits else None


def _fewer_replicas(healthy, accelerators: int) -> tuple[dict, int] | None:
    """The healthy job's plan on `accelerators` (the degraded design's), as a job restarted after a
    failure runs it: the same tensor, pipeline and context layout, as many data-parallel replicas as
    the accelerators hold (a multiple of ep), the rest idle; with the global batch fixed each
    replica runs more micro-batches (a searched plan's micro-batch, ZeRO stage and recomputation
    are chosen again, a given plan's kept). (plan, accelerators it works on), or None without a timed
    healthy plan or room for one replica. Searching the degraded job's best plan instead can find a
    faster one than the healthy search did (9,984 GPUs divide as pp 13 where 10,000 do not), which
    the healthy cluster could have run on 9,984 of its GPUs: the failure would look like a gain."""
    plan = healthy.plan
    if not healthy.timed or not isinstance(plan, Plan):
        return None
    replica = plan.tp * plan.pp * plan.cp
    dp = min(plan.dp, accelerators // replica)
    dp -= dp % plan.ep
    if dp < 1:
        return None
    return {**plan.as_dict(), "dp": dp}, dp * replica


def degraded(design: Design, catalog: Catalog, workload: dict, healthy: Result, evaluate, model: dict) -> Degraded:
    """The degraded design's figures next to `healthy`'s (`run_degraded`)."""
    texts = tuple(f.text() for f in failures_of(design))
    run = run_degraded(design, catalog, workload, healthy, evaluate, model)
    if run.result is None:
        return Degraded(texts, healthy.network.accelerators, 0, (), None, why=run.why)
    figures = comparisons(healthy, run.result, run.bisection)
    return Degraded(texts, run.result.network.accelerators, run.cut_off, figures, run.plan, why=run.why,
                    placement=run.placement)


# -- a torus of reconfigurable blocks -----------------------------------------------------------

@dataclass(frozen=True)
class Blocks:
    """A torus drawn from the template whose blocks meet through circuit switches an operator can
    set up again (TPU v4's 4×4×4 cubes and optical circuit switches): `group` the replicated group
    of blocks, `block` a block's chips per dimension, `counts` blocks per dimension of the torus."""

    group: str
    block: tuple[int, ...]
    counts: tuple[int, ...]

    def text(self) -> str:
        return " × ".join(map(str, self.block))


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in str(text).lower().split("x"))


def reconfigurable_blocks(design: Design, catalog: Catalog) -> Blocks | None:
    """The blocks of a one-pod torus drawn from the torus template with blocks joined through
    circuit switches (`network.is_passthrough`: the template's `switch`), or None. A mesh or torus
    wired directly (Tesla Dojo's tiles, one block) and several pods are not reconfigurable here."""
    template = design.settings.get("template") or {}
    params = template.get("params") or {}
    if template.get("name") != "torus" or not params.get("block") or not params.get("dims") \
            or int(params.get("pods") or 1) != 1 or not is_passthrough(catalog.get(params.get("switch"))):
        return None
    dims, block = _dims(params["dims"]), _dims(params["block"])
    if len(dims) != len(block) or any(d % b for d, b in zip(dims, block)):
        return None
    counts = tuple(d // b for d, b in zip(dims, block))
    blocks = math.prod(counts)
    chip = next((i for i in design.items.values() if i.kind == "accelerator"), None)
    if blocks < 2 or chip is None:
        return None
    group = next((a.id for a in design.ancestors(chip.id) if a.count == blocks), None)
    return Blocks(group, block, counts) if group is not None else None


def largest_slice(counts: tuple[int, ...], intact: int) -> tuple[int, ...] | None:
    """Blocks per dimension of the largest slice `intact` blocks make, each dimension at most the
    torus's (`counts`): a box of whole blocks, as TPU v4 slices above one cube are (every
    dimension a multiple of 4 chips; Cloud TPU "TPU types and topologies"). Of equal sizes the
    most cube-like, then the smallest counts first (3 × 4 × 4). None without an intact block."""
    best, best_key = None, None
    for shape in itertools.product(*(range(1, c + 1) for c in counts)):
        size = math.prod(shape)
        if size > intact:
            continue
        key = (size, -(max(shape) - min(shape)), tuple(-c for c in shape))
        if best_key is None or key > best_key:
            best, best_key = shape, key
    return best


def intact_blocks(healthy: Design, broken: Design, group: str) -> int | None:
    """Blocks of the degraded design left as they were, where every failure went into copies of
    the group split out (`block:f1`) or removed: 0 where a failure reached every block (a part of
    the drawn block failed in all its copies, a medium thinned everywhere); None where it reached
    what the blocks share outside them (a circuit switch): no slice of blocks avoids it."""
    inside = {group} | {i.id for i in healthy.descendants(group)}
    every_block = False
    for item_id, item in healthy.items.items():
        if item_id != group and broken.items.get(item_id) != item:
            if item_id not in inside:
                return None
            every_block = True
    for link_id, link in healthy.links.items():
        if broken.links.get(link_id) != link:
            if link.a not in inside and link.b not in inside:
                return None
            every_block = True
    return 0 if every_block or group not in broken.items else broken.items[group].count


def slice_design(design: Design, blocks: Blocks, shape: tuple[int, ...]) -> Design:
    """The healthy design cut to a slice of `shape` blocks per dimension, its torus closed again
    through the circuit switches (the template's dims set to the slice's)."""
    settings = {k: copy.deepcopy(v) for k, v in design.settings.items() if k != "failures"}
    template = settings["template"]
    dims = "x".join(str(b * c) for b, c in zip(blocks.block, shape))
    settings["template"] = {**template, "params": {**template["params"], "dims": dims}}
    items = dict(design.items)
    items[blocks.group] = replace(items[blocks.group], count=math.prod(shape))
    return Design(design.name, design.description, items, dict(design.links), settings)


def _tokens(result: Result) -> float | None:
    t = result.training
    return t.tokens_per_s if t.timed and t.fits else None


def _torus_lines(design: Design, catalog: Catalog) -> TorusLines | None:
    """The lines of a torus of blocks that failures broke or thinned (`engine.torus_lines`)."""
    if (design.settings.get("template") or {}).get("name") != "torus":
        return None
    return build_fabric(design, catalog).torus_lines


def _slice_or_in_place(design: Design, broken: Design, lines: TorusLines | None, blocks: Blocks, catalog: Catalog,
                       workload: dict, training: dict, healthy: Result, evaluate, in_place: Result):
    """The job on the largest slice of intact blocks, where it trains faster (tokens/s) than in
    place (`lines` the in-place torus's broken lines): ((result, plan note) or None, the placement
    text saying which and why)."""
    missing = healthy.network.accelerators - in_place.network.accelerators
    where = f"in place around {missing:,} missing chip{'s' if missing != 1 else ''}" if missing \
        else "in place on the degraded torus"
    here = _tokens(in_place)
    here_text = f"{here:,.0f} tokens/s" if here is not None else "no plan timed"
    # Lines a failed circuit switch or link broke (`torus_lines`): what the job in place runs on.
    damage = f"; {lines.text()}" if lines is not None else ""
    intact = intact_blocks(design, broken, blocks.group)
    if intact is None:
        return None, (f"runs {where} ({here_text}){damage}: the failure reaches what every block shares, "
                      "no slice avoids it")
    shape = largest_slice(blocks.counts, intact)
    if shape is None:
        return None, f"runs {where} ({here_text}){damage}: no block is left intact for a slice"
    dims = " × ".join(str(b * c) for b, c in zip(blocks.block, shape))
    count, chips = math.prod(shape), math.prod(b * c for b, c in zip(blocks.block, shape))
    what = f"a {dims} slice of {count:,} intact {blocks.text()} block{'s' if count != 1 else ''} ({chips:,} chips)"
    sliced = slice_design(design, blocks, shape)
    result, plan_note = _run_job(sliced, catalog, workload, training, healthy, evaluate, (), chips)
    there = _tokens(result)
    if there is not None and (here is None or there > here):
        return (result, plan_note), (f"job moved to {what}, its torus closed again through the circuit switches: "
                                     f"{there:,.0f} tokens/s against {here_text} {where}")
    there_text = f"{there:,.0f} tokens/s" if there is not None else "no plan that fits"
    return None, f"runs {where} ({here_text}){damage}: faster than on {what}, {there_text}"


# -- blast radius -----------------------------------------------------------------------------

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
        dims, block = _dims(params["dims"]), _dims(params["block"])
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
