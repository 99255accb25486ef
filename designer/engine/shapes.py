"""The scale-out fabric's shape where it is not a tree: dragonfly, rail-only, multi-plane.

Found from the fabric itself, not from the template a design came from:

- **multi-plane / rail-only**: the scale-out switches fall into parts that no switch-to-switch
  link joins. A NIC whose ports reach several parts reaches several *planes*; their bandwidth
  adds up (the boundaries already sum every link). A server whose NICs reach disjoint parts is
  *rail-only*: GPU i's traffic to GPU j ≠ i of another server crosses the scale-up fabric once
  (to the GPU on j's rail, as NCCL's PXN does), which the all-to-all pays on the scale-up links.
- **dragonfly**: a boundary of the representative's chain whose every crossing link goes to a
  pass-through item on the scale-out tier (the `dragonfly-global-links` bundle) is a dragonfly
  group; the boundary below it, with switch-to-switch links, is one switch of the group.

Routing in a dragonfly (Kim et al., ISCA 2008; De Sensi et al., SC20 for Slingshot's adaptive
routing): minimal routing sends a packet over the direct global links to its destination group;
Valiant routing sends it through a random intermediate group, so every packet crosses two global
links and a group's effective global bandwidth is halved, but adversarial patterns (all of a
group's traffic to one other group, as a ring's) spread over all its global links. Uniform
all-to-all uses every global link minimally; a ring between groups has only the links to its
neighbour group (the cut ÷ (groups − 1)) minimally, and half the cut with Valiant. The engine
times each collective with the better of the two for its pattern (as adaptive routing picks):
minimal for all-to-all, Valiant for rings and trees once the groups number more than three, and
reports both. The design setting `dragonfly_routing` ("minimal" or "valiant"; absent: adaptive)
forces one routing for every pattern, as a fabric manager can.
"""

from __future__ import annotations

import math

from designer.engine.network import SCALE_OUT, Fabric, _chains, _neighbours, _passthrough_item
from designer.engine.result import rounded
from designer.engine.sections import Dragonfly, FabricShape, Routing


def classify(fabric: Fabric) -> FabricShape | None:
    """The fabric's shape; sets what the collectives read (`Fabric.rails`, the dragonfly
    boundaries' `neighbour_share`, `Fabric.bisection_cap`)."""
    if fabric.rep is None:
        return None
    dragonfly = _dragonfly(fabric)
    if dragonfly is not None:
        return FabricShape("dragonfly", dragonfly=dragonfly)
    rails, planes, per_plane = _rails_and_planes(fabric)
    if rails > 1:
        fabric.rails = rails
        return FabricShape("rail-only", rails=rails, planes=planes, plane_injection_gb_per_s=per_plane)
    if planes > 1:
        return FabricShape("multi-plane", planes=planes, plane_injection_gb_per_s=per_plane)
    return None


def _switch_parts(fabric: Fabric) -> dict[str, str]:
    """Switch item → the root of its part of the scale-out fabric (switches joined by
    switch-to-switch scale-out links share one)."""
    items = fabric.design.items
    root: dict[str, str] = {}

    def find(x: str) -> str:
        while root.setdefault(x, x) != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for link in fabric.links:
        if link.tier != SCALE_OUT:
            continue
        a, b = items[link.a], items[link.b]
        if a.kind == "switch":
            find(a.id)
        if b.kind == "switch":
            find(b.id)
        if a.kind == "switch" and b.kind == "switch":
            ra, rb = find(a.id), find(b.id)
            if ra != rb:
                root[ra] = rb
    return {x: find(x) for x in list(root)}


def _rails_and_planes(fabric: Fabric) -> tuple[int, int, float | None]:
    """(rails, planes, one plane's share of the injection) of the representative's server."""
    items = fabric.design.items
    nb = _neighbours(fabric)
    server = next((i for i in _chains(fabric)[fabric.rep] if items[i].kind == "server"), None)
    if server is None:
        return 1, 1, None
    parts = _switch_parts(fabric)
    per_nic: list[frozenset] = []
    for item_id in nb:
        item = items[item_id]
        if item.kind != "nic" or item.parent != server:
            continue
        reached = frozenset(parts[other] for l, other, _ in nb[item_id]
                            if l.tier == SCALE_OUT and items[other].kind == "switch")
        if reached:
            per_nic.append(reached)
    if not per_nic:
        return 1, 1, None
    planes = max(len(r) for r in per_nic)
    disjoint = len(per_nic) > 1 and len(frozenset().union(*per_nic)) == sum(len(r) for r in per_nic)
    rails = len(per_nic) if disjoint and fabric.domain_size > 1 else 1
    per_plane = rounded(fabric.out_raw / planes) if planes > 1 else None
    return rails, planes, per_plane


def dragonfly_group(fabric: Fabric) -> int | None:
    """The index of the boundary that is a dragonfly group (every link crossing it goes to the
    global links' bundle), or None."""
    links = fabric.links
    for k, boundary in enumerate(fabric.boundaries):
        if boundary.item is None or not len(boundary.links):
            continue
        if all(links[i].tier == SCALE_OUT and _ends_at_bundle(fabric, links[i]) for i in boundary.links):
            return k
    return None


def _dragonfly(fabric: Fabric) -> Dragonfly | None:
    items = fabric.design.items
    links = fabric.links
    group_at = dragonfly_group(fabric)
    if group_at is None or group_at == 0:
        return None
    group = fabric.boundaries[group_at]
    switch_level = fabric.boundaries[group_at - 1]
    local = [(i, n) for i, n in zip(switch_level.links, switch_level.per_copy)
             if items[links[i].a].kind == "switch" and items[links[i].b].kind == "switch"
             and not _ends_at_bundle(fabric, links[i])]
    if not local:
        return None
    groups = math.ceil(fabric.total_accelerators / group.accelerators)
    switches = max(1, group.accelerators // max(1, switch_level.accelerators))
    local_cap = float(sum(n * links[i].cap for i, n in local))
    global_cap = group.cap_raw
    neighbour_minimal = global_cap / (groups - 1) if groups > 1 else global_cap
    valiant = global_cap / 2
    forced = fabric.design.settings.get("dragonfly_routing")
    if groups <= 2:
        group.neighbour_share, routing = 1.0, "minimal"
    elif forced == "minimal":
        group.neighbour_share, routing = neighbour_minimal / global_cap, "minimal (set)"
    elif forced == "valiant":
        group.neighbour_share = group.uniform_share = 0.5
        routing = "Valiant (set)"
    else:
        group.neighbour_share = max(neighbour_minimal, valiant) / global_cap
        routing = "minimal for all-to-all, Valiant for rings" if groups > 3 else "minimal"
    # Inside a group, traffic to the next switch has its direct local link, or half the local
    # links through intermediate switches (the global links do not serve it).
    local_neighbour = max(local_cap / (switches - 1), local_cap / 2) if switches > 2 else local_cap
    switch_level.neighbour_share = min(1.0, local_neighbour / switch_level.cap_raw) if switch_level.cap_raw else 1.0
    bisection = groups * groups / 4 * global_cap / (groups - 1) * group.uniform_share if groups > 1 else 0.0
    fabric.bisection_cap = bisection
    return Dragonfly(groups=groups, switches_per_group=switches,
                     global_links_per_group=round(sum(n * fabric.design.links[links[i].id].lanes
                                                      for i, n in zip(group.links, group.per_copy))),
                     global_gb_per_s_per_group=rounded(global_cap), local_gb_per_s_per_switch=rounded(local_cap),
                     bisection_gb_per_s=rounded(bisection),
                     minimal=Routing(rounded(global_cap), rounded(neighbour_minimal)),
                     valiant=Routing(rounded(valiant), rounded(valiant)), routing=routing)


def _ends_at_bundle(fabric: Fabric, link) -> bool:
    """A link to a pass-through item that is no scale-up switch: a dragonfly's global links."""
    items = fabric.design.items
    return any(items[end].kind == "switch" and _passthrough_item(fabric, items[end]) for end in (link.a, link.b))
