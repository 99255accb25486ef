"""The scale-out bisection of a degraded design, whose copies are no longer alike
(docs/goodput.md, "Bisection of a degraded design").
"""

from __future__ import annotations

import math
from collections.abc import Collection

from designer.engine.failures.degrade import SPLIT_TAG
from designer.engine.network import build_fabric, server_paths
from designer.engine.sections import Network
from designer.engine.shapes import classify as classify_shape
from designer.engine.shapes import dragonfly_group
from designer.model.catalog import Catalog
from designer.model.design import Design


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
        base = SPLIT_TAG.sub("", container)
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
    whole = next((a for s, a in servers.items() if not SPLIT_TAG.search(s)), None)
    held: dict[str, int] = {}
    for accelerator in fabric.accelerators:
        held[accelerator.parent] = held.get(accelerator.parent, 0) + fabric.copies[accelerator.id]
    units, covered = [], 0
    for server, accelerator in servers.items():
        if SPLIT_TAG.search(server):
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
    members = variants.get(SPLIT_TAG.sub("", group.item)) or [group.item]
    units = [(1, fabric.copies[c], crossing.get(c, 0.0) / fabric.copies[c]) for c in members]
    drawn = sum(copies for _, copies, _ in units)
    if drawn < groups:
        # Groups drawn apart (a partial group) count like the first, as the engine counts them.
        units.append((1, groups - drawn, units[0][2]))
    return groups / 2 / (groups - 1) * _level_value(units, groups / 2) * group.uniform_share
