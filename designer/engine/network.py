"""Network figures computed from the design's graph, on the hierarchy.

The engine never expands a design to one object per GPU. Replicated groups are identical, so it
analyses one representative copy of everything and scales by counts:

- every drawn link gets its raw capacity per instance (lanes × medium lane bandwidth), its tier
  (scale-up, scale-out, or host for the GPU↔NIC path) and its replication (`link_copies`);
- the representative accelerator's containment chain (accelerator ⊂ server ⊂ rack ⊂ groups ⊂
  cluster) gives nested *boundaries*; for each, the capacity of the links that cross it per copy
  is summed. Traffic a collective sends out of one copy of a boundary is spread evenly over those
  links (equal-cost paths in a tree): this gives the load and utilization of the representative's
  links and the bottleneck, and is exact for fat trees in the fluid limit;
- every link has a *role* (`Fabric.link_role`): links of one role are copies of each other by
  symmetry (same tier, medium and lanes, ends of the same kinds and parts at the same places in
  their servers or their common container), so each carries the load its counterpart on the
  representative's path does — the NVLink of GPU k in every server of a platform alike;
- bisection, oversubscription per switch tier and hop counts come from the same arrays and from a
  small quotient graph (one node per drawn item), so removing a spine or halving uplinks changes
  them.

Circuit switches (optical circuit switches such as `tpu-ocs`) are pass-through: a chip–OCS–chip
path counts as one hop. An accelerator outside any server (a stray chip dropped on the canvas) is
left out of the fabric with its links (lint names it); the rest of the design is analysed as if
it were not drawn.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from designer.engine import calibration as cal
from designer.engine.flows import EXACT_BISECTION_CHIPS, FlowNetwork, flow_network, smallest_balanced_cut
from designer.engine.inventory import multiplicities
from designer.engine.torus_lines import TorusLines, drawn_torus, torus_lines
from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.engine.result import rounded

SCALE_UP, SCALE_OUT, HOST = "scale-up", "scale-out", "host"


def is_passthrough(part) -> bool:
    """Circuit switches forward light without a hop of their own."""
    if part is None:
        return False
    return (bool(part.get("circuit")) or part.get("switching") == "circuit"
            or part.id.endswith("ocs") or "-ocs" in part.id)


@dataclass(frozen=True)
class LinkInfo:
    index: int
    id: str
    a: str
    b: str
    tier: str
    cap: float  # raw GB/s per direction of one physical instance
    instances: int
    deg_a: int  # physical links each copy of a gets
    deg_b: int
    latency_s: float
    medium: str


_LINK_INFO_FIELDS = tuple(LinkInfo.__dataclass_fields__)


def _link_info(*values) -> LinkInfo:
    """LinkInfo(*values) without the frozen dataclass's per-field setattr (one per drawn link)."""
    info = object.__new__(LinkInfo)
    info.__dict__.update(zip(_LINK_INFO_FIELDS, values))
    return info


@dataclass
class Boundary:
    """One copy of a containment item on the representative accelerator's chain."""

    item: str | None  # None: the whole cluster
    label: str
    accelerators: int  # per copy
    copies: int
    links: np.ndarray  # indices into Fabric.links of links crossing it
    per_copy: np.ndarray  # physical instances of each per copy
    cap_raw: float = 0.0
    cap_eff: float = 0.0
    # The share of the cut a collective's neighbour traffic (a ring's, a tree's) can use; below 1
    # between dragonfly groups, whose direct links to one neighbour are a fraction of the cut.
    neighbour_share: float = 1.0
    # The share uniform traffic (all-to-all) can use: ½ between dragonfly groups under forced
    # Valiant routing, whose every packet crosses two global links.
    uniform_share: float = 1.0
    # ((link indices, raw GB/s of them per copy of their unit), ...): links between switches that
    # cross no boundary of the chain but carry what crosses this one (a unit's leaf–spine links).
    carried: tuple = ()


@dataclass
class Fabric:
    design: Design
    catalog: Catalog
    copies: dict
    links: list[LinkInfo]
    accelerators: list  # accelerator Items inside a server, in topology order
    total_accelerators: int
    rep: str | None
    link_role: np.ndarray  # per link index: its role (links of one role carry the same load)
    boundaries: list[Boundary] = field(default_factory=list)
    up_raw: float = 0.0  # per-GPU scale-up bandwidth
    up_links: list[int] = field(default_factory=list)
    out_raw: float = 0.0  # per-GPU scale-out injection, raw
    out_eff: float = 0.0  # per-GPU scale-out injection, achieved (NIC measured figure or raw × efficiency)
    out_links: list[int] = field(default_factory=list)  # the links that bound it (host or NIC uplinks)
    domain_size: int = 1
    direct_connect: bool = False  # scale-up links join accelerators directly (mesh / torus)
    nvls: bool = False
    sharp: bool = False
    torus_dims: tuple = ()
    torus_link_cap: float = 0.0
    torus_links: tuple = ()  # every scale-up link: a torus collective loads them all alike
    # A torus drawn from the template with chips missing from its domain (failed or removed):
    # (the template's dims, chips missing). Its rings are rerouted round the holes (`_torus`).
    torus_holes: tuple | None = None
    # A torus drawn from the template whose lines failed circuit switches or links broke or thinned
    # (engine.torus_lines), else None.
    torus_lines: TorusLines | None = None
    # An open mesh (the torus template's wrap=0 with one block, as Dojo's tiles): its lines end
    # at the edges, so they are segments, not rings, and one plane cuts it in two, not two.
    torus_open: bool = False
    torus_drawn: bool = False  # found in the links drawn by hand (`_drawn_torus`), not the template's
    rails: int = 1  # above 1: a server's NICs reach separate fabrics joined only over scale-up links
    bisection_cap: float | None = None  # a limit the boundaries do not show (a dragonfly's, engine.shapes)
    # ((link indices, raw GB/s), ...): scale-up links between the representative server's switches,
    # which a ring over the server's accelerators crosses once each way (FabreX's two switches).
    up_carried: tuple = ()
    # The design expanded for the flow model (engine.flows), None above its limit: the network
    # terms of every collective and the scale-out bisection then come from the links as drawn.
    flows: FlowNetwork | None = None

    def link_label(self, index: int) -> str:
        """A drawn link as people read it: its two ends by name."""
        info, items = self.links[index], self.design.items
        return f"{items[info.a].label} – {items[info.b].label}"

    # -- helpers -----------------------------------------------------------------------------
    def boundary_for(self, n: int, stride: int = 1) -> list[tuple[Boundary, int]]:
        """(boundary, ranks of the communicator in one copy) for boundaries above the accelerator."""
        out = []
        for b in self.boundaries:
            r = min(n, max(1, b.accelerators // max(1, stride)))
            out.append((b, r))
        return out

    def domain_ranks(self, n: int, stride: int = 1) -> int:
        return min(n, max(1, self.domain_size // max(1, stride)))


def build_fabric(design: Design, catalog: Catalog, copies: dict | None = None, chains: dict | None = None,
                 link_copies: dict | None = None, slowest_of: Collection[str] = ()) -> Fabric:
    """`chains` (`design.chains()`) and `link_copies` (`design.all_link_copies()`): pass them when
    already known. `slowest_of`: accelerators whose surroundings may be slower than the
    representative's (a what-if's weakened copies); the fabric's figures are then the slowest of
    them and the representative's (`_slowest_copies`)."""
    copies = copies or multiplicities(design)
    items = design.items
    ancestors_cache = chains if chains is not None else design.chains()
    chain = ancestors_cache.__getitem__
    if link_copies is None:
        link_copies = design.all_link_copies(ancestors_cache, skip_unknown_ends=True)
    media: dict = {}
    medium_figures: dict = {}
    stray = _stray_accelerators(design, ancestors_cache)

    links: list[LinkInfo] = []
    for link in design.links.values():
        medium = media.get(link.medium, False)
        if medium is False:
            medium = media[link.medium] = catalog.get(link.medium)
        if medium is None or link.a not in items or link.b not in items or link.a in stray or link.b in stray:
            continue
        ka, kb = items[link.a].kind, items[link.b].kind
        if "cpu" in (ka, kb):
            continue
        figures = medium_figures.get(link.medium)
        if figures is None:
            figures = medium_figures[link.medium] = (medium.get("tier") or SCALE_OUT, medium.number("lane_gb_per_s"),
                                                     medium.number("latency_ns") * 1e-9)
        if (ka == "accelerator" and kb == "nic") or (ka == "nic" and kb == "accelerator"):
            tier = HOST
        elif "nic" in (ka, kb):
            tier = SCALE_OUT
        else:
            tier = figures[0]
        lc = link_copies[link.id]
        links.append(_link_info(len(links), link.id, link.a, link.b, tier, link.lanes * figures[1],
                                lc.a_side * lc.b_side * lc.context, lc.b_side, lc.a_side, figures[2], link.medium))

    accelerators = _accelerators_in_order(design, ancestors_cache, stray)
    fabric = Fabric(design, catalog, copies, links, accelerators,
                    sum(copies[a.id] for a in accelerators), accelerators[0].id if accelerators else None,
                    _link_roles(design, links, ancestors_cache))
    fabric.__dict__["_chains"] = ancestors_cache
    if fabric.rep is None:
        return fabric
    fabric.up_raw, fabric.up_links, fabric.out_raw, fabric.out_eff, fabric.out_links = server_paths(
        fabric, fabric.rep, chain)
    _domain(fabric, chain)
    _boundaries(fabric, chain)
    _carried(fabric, chain)
    _in_network(fabric)
    fabric.flows = flow_network(design, links, {a.id for a in accelerators})
    _torus(fabric)  # after the flows: a torus drawn by hand is found only in a graph they expand
    if slowest_of:
        _slowest_copies(fabric, slowest_of, chain)
    return fabric


def _stray_accelerators(design: Design, chains: dict) -> set[str]:
    """Accelerators in no server: they have no host, so the engine leaves them out (lint names them)."""
    items = design.items
    return {item_id for item_id, item in items.items() if item.kind == "accelerator"
            and not any(items[i].kind == "server" for i in chains[item_id][1:])}


def _accelerators_in_order(design: Design, chains: dict, stray: set[str]) -> list:
    """The design's accelerators outside `stray` in topology order, visiting only the items that
    hold one."""
    holding: set = set()
    for item in design.items.values():
        if item.kind == "accelerator" and item.id not in stray:
            holding.update(chains[item.id])
    return [item for item in design.ordered_items(holding) if item.kind == "accelerator"]


def _link_roles(design: Design, links: list[LinkInfo], chains: dict) -> np.ndarray:
    """The role of every link, numbered from 0: links of one role are copies of each other by
    symmetry, so they carry the same load. Every role has the link's tier, medium and capacity and
    the places of its ends — an item's place is the kinds, parts and counts of the items from it up
    to where it is measured from:

    - a link leaving a server (a NIC's uplink, a mesh or ICI link to another server or to a circuit
      switch) by where its ends sit in their servers, and the far end's part alone: NIC k of every
      server of a platform has one role, whichever unit the server is drawn in;
    - any other link by where its ends sit inside their lowest common container and that
      container's kind, part and count: GPU k's NVLinks in every server of a platform, a tile's inner
      mesh, the leaf–spine links of every scalable unit of one size."""
    items = design.items
    local: dict[str, tuple] = {}

    def local_of(item_id: str) -> tuple:
        hit = local.get(item_id)
        if hit is None:
            it = items[item_id]
            hit = local[item_id] = (it.kind, it.part, it.count)
        return hit

    roles: dict[tuple, int] = {}
    # A link's role follows from its ends' parts and parents (unless one end holds the other), and
    # most links share both with others (a tile's mesh, a server's NVLinks): one look-up each.
    by_parents: dict[tuple, int] = {}
    out = np.empty(len(links), dtype=np.intp)
    for link in links:
        chain_a, chain_b = chains[link.a], chains[link.b]
        nested = link.a in chain_b or link.b in chain_a
        alike = None if nested else (link.tier, link.medium, link.cap, link.deg_a, link.deg_b, local_of(link.a),
                                     local_of(link.b), chain_a[1:2], chain_b[1:2])
        role = by_parents.get(alike) if alike is not None else None
        if role is not None:
            out[link.index] = role
            continue
        on_b = set(chain_b)
        meet = next((k for k, i in enumerate(chain_a) if i in on_b), len(chain_a))
        below_a, below_b = chain_a[:meet], chain_b[:len(chain_b) - (len(chain_a) - meet)]
        server_a = next((k for k, i in enumerate(below_a) if items[i].kind == "server"), None)
        server_b = next((k for k, i in enumerate(below_b) if items[i].kind == "server"), None)
        if server_a is None and server_b is None:
            ends = frozenset(((tuple(map(local_of, below_a)), link.deg_a), (tuple(map(local_of, below_b)), link.deg_b)))
            key = (link.tier, link.medium, link.cap, local_of(chain_a[meet]) if meet < len(chain_a) else None, ends)
        else:
            ends = frozenset((tuple(map(local_of, below[:k + 1])), deg) if k is not None else ((local_of(below[0]),), 0)
                             for below, k, deg in ((below_a, server_a, link.deg_a), (below_b, server_b, link.deg_b)))
            key = (link.tier, link.medium, link.cap, "out of a server", ends)
        role = out[link.index] = roles.setdefault(key, len(roles))
        if alike is not None:
            by_parents[alike] = role
    return out


def _chains(fabric: Fabric) -> dict:
    """item id → (id, parent id, ..., root id), shared by the fabric's analyses."""
    chains = fabric.__dict__.get("_chains")
    if chains is None:
        chains = fabric.__dict__["_chains"] = fabric.design.chains()
    return chains


def _passthrough_item(fabric: Fabric, item) -> bool:
    """is_passthrough of an item's part, once per part."""
    memo = fabric.__dict__.get("_passthrough")
    if memo is None:
        memo = fabric.__dict__["_passthrough"] = {}
    hit = memo.get(item.part)
    if hit is None:
        hit = memo[item.part] = is_passthrough(fabric.catalog.get(item.part))
    return hit


def _neighbours(fabric: Fabric) -> dict[str, list[tuple[LinkInfo, str, int]]]:
    """item → [(link, other end, physical links per copy of item)] (built once per fabric)"""
    cached = fabric.__dict__.get("_nb")
    if cached is not None:
        return cached
    out: dict[str, list] = {}
    fabric.__dict__["_nb"] = out
    for l in fabric.links:
        out.setdefault(l.a, []).append((l, l.b, l.deg_a))
        out.setdefault(l.b, []).append((l, l.a, l.deg_b))
    return out


def _own_paths(fabric: Fabric, nb: dict, acc: str) -> tuple:
    """(scale-up raw, its links, scale-out raw, achieved, the links that bound it) of one
    accelerator through its own links only."""
    items, catalog = fabric.design.items, fabric.catalog
    up, up_links, out_raw, out_eff, out_links = 0.0, [], 0.0, 0.0, []
    for l, other, deg in nb.get(acc, []):
        if l.tier == SCALE_UP:
            up += deg * l.cap
            up_links.append(l.index)
        elif l.tier == HOST:
            nic = items[other]
            part = catalog.get(nic.part)
            uplinks = [(ll, d) for ll, o, d in nb.get(other, []) if ll.tier == SCALE_OUT]
            link_raw = sum(d * ll.cap for ll, d in uplinks)
            port_raw = part.number("port_gbps") / 8 * max(1.0, part.number("ports", 1)) if part else link_raw
            raw = min(link_raw, port_raw) if link_raw else 0.0
            achieved = (part.number("achieved_gb_per_s") if part and part.get("achieved_gb_per_s")
                        else raw * cal.NET_EFFICIENCY)
            eff = min(achieved, link_raw * cal.NET_EFFICIENCY) if link_raw else 0.0
            sharing = sum(d for ll, o, d in nb.get(other, []) if ll.tier == HOST) or 1
            host = deg * l.cap
            out_raw += min(host, deg * raw / sharing)
            out_eff += min(host * cal.NET_EFFICIENCY, deg * eff / sharing)
            out_links.extend(ll.index for ll, _ in uplinks)
        elif l.tier == SCALE_OUT:
            out_raw += deg * l.cap
            out_eff += deg * l.cap * cal.NET_EFFICIENCY
            out_links.append(l.index)
    return up, up_links, out_raw, out_eff, out_links


def _by_parent(fabric: Fabric) -> dict[str | None, list[str]]:
    """parent id → the fabric's accelerators drawn in it, in topology order (built once)."""
    cached = fabric.__dict__.get("_by_parent")
    if cached is None:
        cached = fabric.__dict__["_by_parent"] = {}
        for a in fabric.accelerators:
            cached.setdefault(a.parent, []).append(a.id)
    return cached


def _scale_up_joined(fabric: Fabric, nb: dict, start: str, members: set) -> set:
    """The members reachable from `start` over scale-up links (through accelerators and switches)."""
    items = fabric.design.items
    seen, stack = {start}, [start]
    while stack:
        node = stack.pop()
        for l, other, _ in nb.get(node, []):
            if l.tier == SCALE_UP and other not in seen and items[other].kind in ("accelerator", "switch"):
                seen.add(other)
                stack.append(other)
    return seen & members


def server_paths(fabric: Fabric, accelerator: str, chain=None) -> tuple[float, list, float, float, list]:
    """(scale-up raw, its links, scale-out raw, achieved, the links that bound it) per accelerator
    of `accelerator`'s server.

    Scale-up: the slowest accelerator of the server (a ring is as fast as its slowest member).

    Scale-out: accelerators of one server joined by the scale-up fabric share the server's NICs —
    NCCL routes traffic to a NIC over NVLink / Infinity Fabric (PXN, rail-local routing), so a
    server with fewer NICs than GPUs (HGX-V100: 8 GPUs, 2 NICs each on one GPU's PCIe) gives every
    GPU the server's total NIC bandwidth (each NIC capped by its GPU's host link) ÷ GPUs, as
    long as a GPU's scale-up links can carry its share to a NIC-attached peer. An accelerator not
    joined to its peers by scale-up links has only its own path (0 if it has none)."""
    items = fabric.design.items
    chain = chain or _chains(fabric).__getitem__
    nb = _neighbours(fabric)
    server = next((i for i in chain(accelerator) if items[i].kind == "server"), None)
    # Accelerators alike to this one (same server): the ring is as fast as the slowest.
    peers = (_by_parent(fabric).get(items[accelerator].parent) if server is not None else None) or [accelerator]
    own = {acc: _own_paths(fabric, nb, acc) for acc in peers}
    best_up = min(((own[a][0], own[a][1]) for a in peers), key=lambda x: x[0])
    members = set(peers)
    position = {acc: i for i, acc in enumerate(peers)}
    groups, placed = [], set()
    for acc in peers:
        if acc in placed:
            continue
        group = _scale_up_joined(fabric, nb, acc, members) if own[acc][0] > 0 else {acc}
        placed |= group
        groups.append(sorted(group, key=position.__getitem__))
    best_out = None
    for group in groups:
        k = len(group)
        raw = sum(own[a][2] for a in group) / k
        eff = sum(own[a][3] for a in group) / k
        if k > 1:
            # A GPU without enough NIC bandwidth of its own sends the rest over its scale-up links.
            relay = min(own[a][2] + own[a][0] for a in group)
            raw, eff = min(raw, relay), min(eff, relay * cal.NET_EFFICIENCY)
        links = sorted({i for a in group for i in own[a][4]})
        if best_out is None or eff < best_out[1]:
            best_out = (raw, eff, links)
    return best_up[0], list(best_up[1]), *best_out


def _domain(fabric: Fabric, chain) -> None:
    """The scale-up domain: accelerators reachable over scale-up links."""
    items = fabric.design.items
    nb = _neighbours(fabric)
    seen = {fabric.rep}
    stack = [fabric.rep]
    accel_neighbours = 0
    while stack:
        node = stack.pop()
        for l, other, _deg in nb.get(node, []):
            if l.tier != SCALE_UP:
                continue
            if node == fabric.rep and items[other].kind == "accelerator":
                accel_neighbours += 1
            if items[other].kind not in ("accelerator", "switch"):
                continue
            if other not in seen:
                seen.add(other)
                stack.append(other)
    fabric.direct_connect = accel_neighbours > 0
    rep_chain = chain(fabric.rep)
    scope = None
    for candidate in rep_chain[1:]:
        if all(candidate in chain(i) for i in seen):
            scope = candidate
            break
    # Links into other copies (through a switch outside a replicated group) widen the domain.
    if scope is not None and any(
            items[i].kind == "switch" and scope not in chain(i) for i in seen):
        scope = None
    if len(seen) == 1:
        fabric.domain_size = 1
    else:
        fabric.domain_size = _accelerators_in(fabric, scope, chain)


def _accelerators_in(fabric: Fabric, item: str | None, chain) -> int:
    if item is None:
        return fabric.total_accelerators
    return sum(fabric.copies[a.id] for a in fabric.accelerators if item in chain(a.id)) // fabric.copies[item]


def _boundaries(fabric: Fabric, chain) -> None:
    items = fabric.design.items
    rep_chain = list(chain(fabric.rep)[1:]) + [None]
    n_links = len(fabric.links)
    # Links crossing each item of the representative's chain: one end inside it, one outside.
    # An end's chain meets the representative's chain in a suffix of it, from the first of its
    # ancestors on it; the items in one end's part and not the other's are the ones the link crosses.
    upward = rep_chain[:-1]
    position = {item: k for k, item in enumerate(upward)}
    first_on = {item_id: next((position[i] for i in c if i in position), len(upward)) for item_id, c in
                ((i, chain(i)) for i in _neighbours(fabric))}
    crossing_of: dict[str, list[int]] = {}
    instance_list, cap_list, up_list = [], [], []
    for l in fabric.links:
        instance_list.append(l.instances)
        cap_list.append(l.cap)
        up_list.append(l.tier == SCALE_UP)
        ka, kb = first_on[l.a], first_on[l.b]
        if ka != kb:
            for k in range(min(ka, kb), max(ka, kb)):
                crossing_of.setdefault(upward[k], []).append(l.index)
    instances = np.array(instance_list, dtype=float) if n_links else np.zeros(0)
    caps = np.array(cap_list, dtype=float) if n_links else np.zeros(0)
    # fabric.link_eff of every link: cap × the scale-up or network efficiency.
    effs = caps * np.where(np.array(up_list, dtype=bool), cal.SCALE_UP_RING_EFFICIENCY,
                           cal.NET_EFFICIENCY) if n_links else np.zeros(0)
    seen_sizes = set()
    for item in rep_chain:
        if item is None:
            label, accels, copies = "cluster", fabric.total_accelerators, 1
            crossing = []
        else:
            it = items[item]
            accels = _accelerators_in(fabric, item, chain)
            copies = fabric.copies[item]
            label = f"{it.kind} {it.label}"
            crossing = crossing_of.get(item, [])  # ascending link indices
        key = (accels, tuple(crossing))
        if key in seen_sizes:
            continue
        seen_sizes.add(key)
        idx = np.array(crossing, dtype=np.intp)
        per_copy = instances[idx] / copies
        fabric.boundaries.append(Boundary(item, label, accels, copies, idx, per_copy,
                                          float((per_copy * caps[idx]).sum()), float((per_copy * effs[idx]).sum())))


def _slowest_copies(fabric: Fabric, accelerators: Collection[str], chain) -> None:
    """Lower the representative's figures to the slowest copy among `accelerators`'.

    A collective over every rank runs at the pace of its slowest participant: a ring or a tree
    passes through every server and every unit, so its slowest link bounds it. The
    representative's figures hold for its own copy; here, for each of the given accelerators'
    servers, the per-accelerator scale-up and scale-out figures (`server_paths`) and, level by level
    of the representative's chain, the cut of the container at the same depth of its chain, and
    the fabric keeps the least of each (the links of the copy that gave it, so the bottleneck
    names them). Levels are taken apart: a copy that is weaker at one level and another at a
    second both count, as they do for a ring through both."""
    items = fabric.design.items
    present = {a.id for a in fabric.accelerators}
    servers: dict[str, str] = {}
    for accelerator in accelerators:
        if accelerator in present:
            server = next((i for i in chain(accelerator) if items[i].kind == "server"), None)
            servers.setdefault(server or accelerator, accelerator)
    for accelerator in servers.values():
        up, up_links, out_raw, out_eff, out_links = server_paths(fabric, accelerator, chain)
        if up < fabric.up_raw:
            fabric.up_raw, fabric.up_links = up, up_links
        if out_eff < fabric.out_eff:
            fabric.out_raw, fabric.out_eff, fabric.out_links = out_raw, out_eff, out_links
    rep_chain = chain(fabric.rep)
    depth = {b.item: rep_chain.index(b.item) for b in fabric.boundaries if b.item is not None}
    alike: dict[str, list[str]] = {}  # a boundary's item → the containers at its depth in the others' chains
    for accelerator in servers.values():
        own = chain(accelerator)
        for item, k in depth.items():
            if k < len(own) and own[k] != item and items[own[k]].kind == items[item].kind:
                alike.setdefault(item, []).append(own[k])
    wanted = {c for containers in alike.values() for c in containers}
    if not wanted:
        return
    crossing: dict[str, list[int]] = {}
    for l in fabric.links:
        for container in set(chain(l.a)).symmetric_difference(chain(l.b)) & wanted:
            crossing.setdefault(container, []).append(l.index)
    for b in fabric.boundaries:
        for container in alike.get(b.item, ()):
            if container not in crossing:
                continue  # nothing leaves it: it holds every rank left
            idx = np.array(crossing[container], dtype=np.intp)
            per_copy = np.array([fabric.links[i].instances for i in idx], dtype=float) / fabric.copies[container]
            caps = np.array([fabric.links[i].cap for i in idx], dtype=float)
            effs = caps * np.array([cal.SCALE_UP_RING_EFFICIENCY if fabric.links[i].tier == SCALE_UP
                                    else cal.NET_EFFICIENCY for i in idx], dtype=float)
            cap_eff = float((per_copy * effs).sum())
            if cap_eff < b.cap_eff:
                b.links, b.per_copy = idx, per_copy
                b.cap_raw, b.cap_eff = float((per_copy * caps).sum()), cap_eff


def _carried(fabric: Fabric, chain) -> None:
    """Links the chain's boundaries do not cut but that carry their traffic (`Boundary.carried`,
    `Fabric.up_carried`).

    A link between two switches outside any server that crosses no boundary of the chain (a rail
    leaf's links to its unit's spines, a partial unit's links to the core) carries what leaves the
    nearest boundary at or above the container it sits in that something crosses — or, above the
    outermost such boundary, what crosses that one (a second unit is another copy of the first).
    Its unit is the chain's container it sits in, or else the outermost container of its ends that
    holds accelerators; the links of one unit and switch level share the traffic of one copy."""
    items = fabric.design.items
    rep_server = next((i for i in chain(fabric.rep) if items[i].kind == "server"), None)
    fabric.up_carried = tuple(((l.index,), l.cap) for l in fabric.links if l.tier == SCALE_UP
                              and items[l.a].kind == "switch" and items[l.b].kind == "switch"
                              and rep_server in chain(l.a) and rep_server in chain(l.b))
    upward = list(chain(fabric.rep)[1:])
    position = {item: k for k, item in enumerate(upward)}
    top = len(upward)
    in_server: dict[str, bool] = {}
    candidates = []
    for l in fabric.links:
        if l.tier == SCALE_UP:
            continue
        ends = []
        for end in (l.a, l.b):
            hit = in_server.get(end)
            if hit is None:
                hit = in_server[end] = any(items[i].kind == "server" for i in chain(end))
            ends.append(hit)
        if any(ends):
            continue
        ka = next((position[i] for i in chain(l.a) if i in position), top)
        kb = next((position[i] for i in chain(l.b) if i in position), top)
        if ka == kb:
            candidates.append((l, ka))
    if not candidates:
        return
    levels = switch_levels(fabric)
    holding = {i for a in fabric.accelerators for i in chain(a.id)}
    groups: dict[tuple, list] = {}
    for l, k in candidates:
        if k < top:
            unit = upward[k]
        else:
            chain_a, chain_b = chain(l.a), chain(l.b)
            on_b = set(chain_b)
            unit = next((i for i in chain_a[1:] if i in on_b), None)
            if unit is None:
                unit = next((c[-1] for c in (chain_a, chain_b) if len(c) > 1 and c[-1] in holding), None)
        level = min(levels.get(l.a, np.inf), levels.get(l.b, np.inf))
        groups.setdefault((k, unit, level), []).append(l)
    cut = [(position.get(b.item, top), b) for b in fabric.boundaries if len(b.links)]
    if not cut:
        return
    carried: dict[int, list] = {}
    for (k, unit, _level), members in groups.items():
        above = [b for at, b in cut if at >= k]
        boundary = above[0] if above else cut[-1][1]
        per_copy = fabric.copies[unit] if unit is not None else 1
        cap = sum(l.instances / per_copy * l.cap for l in members)
        if cap > 0:
            carried.setdefault(id(boundary), []).append((tuple(l.index for l in members), cap))
    for b in fabric.boundaries:
        b.carried = tuple(carried.get(id(b), ()))


def host_feeds(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(host link, NIC uplink, weight) triples: a GPU↔NIC link carries what its NIC sends up, shared
    over the NIC's host links by capacity: Σ weight × the uplink's utilization (computed once)."""
    cached = fabric.__dict__.get("_host_feeds")
    if cached is not None:
        return cached
    items = fabric.design.items
    host_ids, up_ids, weights = [], [], []
    for item_id, entries in _neighbours(fabric).items():
        if items[item_id].kind != "nic":
            continue
        hosts = [(l, deg) for l, _, deg in entries if l.tier == HOST]
        ups = [(l, deg) for l, _, deg in entries if l.tier == SCALE_OUT]
        host_cap = sum(deg * l.cap for l, deg in hosts)
        if not hosts or not ups or host_cap <= 0:
            continue
        for h, _ in hosts:
            for u, deg in ups:
                host_ids.append(h.index)
                up_ids.append(u.index)
                weights.append(deg * u.cap / host_cap)
    cached = fabric.__dict__["_host_feeds"] = (np.array(host_ids, dtype=np.intp), np.array(up_ids, dtype=np.intp),
                                               np.array(weights, dtype=float))
    return cached


def links_among_first(fabric: Fabric, n: int) -> np.ndarray | None:
    """Which links a communicator of the first `n` accelerators can use: those inside the
    representative's innermost container that holds n of them (None: every link). A drawn server
    beside it whose accelerators are not ranks stays idle, whatever its links' roles."""
    if n >= fabric.total_accelerators or fabric.rep is None:
        return None
    chain = _chains(fabric).__getitem__
    scope = next((i for i in chain(fabric.rep)[1:] if _accelerators_in(fabric, i, chain) >= n), None)
    if scope is None:
        return None
    return np.array([scope in chain(l.a) and scope in chain(l.b) for l in fabric.links], dtype=bool)


def _in_network(fabric: Fabric) -> None:
    settings = fabric.design.settings.get("in_network_reduction", {}) or {}
    items, catalog = fabric.design.items, fabric.catalog
    # any / all over the switches' parts: each distinct (tier side, part) once.
    up_ids, out_ids = {}, {}
    for l in fabric.links:
        for end in (l.a, l.b):
            it = items[end]
            if it.kind != "switch":
                continue
            (up_ids if l.tier == SCALE_UP else out_ids)[it.part] = None
    up_switches = [catalog.get(p) for p in up_ids]
    out_switches = [catalog.get(p) for p in out_ids]
    fabric.nvls = bool(up_switches) \
        and any(p is not None and p.get("in_network_reduction") == "nvls" for p in up_switches) \
        and settings.get("nvls", True) is not False
    fabric.sharp = bool(out_switches) \
        and all(p is not None and p.get("in_network_reduction") == "sharp" for p in out_switches) \
        and settings.get("sharp", True) is not False


def _torus(fabric: Fabric) -> None:
    """The torus of a design drawn from the torus template: its dims where the scale-up domain
    (or the whole design: one torus) holds every chip of them. A domain with chips missing (a failed
    host, a chip taken out) is a torus with holes (`torus_holes`; `torus_dims` stays empty): the
    dimension-wise algorithm runs with the rings the holes break rerouted round them, at half a
    whole ring's capacity (collectives.torus_rings), beside rings over the chips left, each
    through the two links of one dimension, as on the whole torus (`torus_link_cap`;
    collectives._ring_up_cap); its bisection is `_torus_bisection`'s. Lines that failed circuit
    switches or links broke or thinned are `torus_lines`'s (docs/goodput.md, "A failed circuit
    switch")."""
    template = fabric.design.settings.get("template") or {}
    if not fabric.direct_connect:
        return
    if template.get("name") != "torus":
        _drawn_torus(fabric)
        return
    dims_text = template.get("params", {}).get("dims")
    if dims_text is None:
        return
    dims = tuple(int(d) for d in dims_text.lower().split("x"))  # "16x16x16", as the design schema allows
    full = int(np.prod(dims))
    params = template.get("params", {})
    block = tuple(int(d) for d in (params.get("block") or dims_text).lower().split("x"))
    # Several blocks meet through circuit switches, which close every line into a ring.
    open_mesh = block == dims and not params.get("wrap", 1)
    # One torus, or several (pods) joined by the scale-out network: the torus is the scale-up domain.
    if full in (fabric.total_accelerators, fabric.domain_size):
        fabric.torus_dims = tuple(d for d in dims if d > 1)
    elif fabric.domain_size < full:
        fabric.torus_holes = (dims, full - fabric.domain_size)
    else:
        return
    fabric.torus_open = open_mesh
    fabric.torus_links = tuple(l.index for l in fabric.links if l.tier == SCALE_UP)
    fabric.torus_lines = torus_lines(fabric.design, dims, block, bool(params.get("wrap", 1)), fabric.links,
                                     fabric.accelerators, fabric.copies, SCALE_UP,
                                     lambda item: _passthrough_item(fabric, item))
    if fabric.torus_lines is not None:
        # The lines that lost links are the model's (`torus_lines`); the rest keep whole links.
        fabric.torus_link_cap = fabric.torus_lines.link_cap
    else:
        caps = [fabric.links[i].cap for i in fabric.up_links]
        fabric.torus_link_cap = min(caps) if caps else 0.0


def _drawn_torus(fabric: Fabric) -> None:
    """A torus or open mesh cabled chip to chip by hand gets the template's torus model (its
    dimension-wise algorithm, a ring through the two links of one dimension, the lines a missing
    cable breaks, the holes a failed host leaves), so the same torus drawn either way gets the same
    figures. Only where the graph is expanded (`flows`), every chip drawn once and the whole design
    one scale-up domain; its bisection stays the drawn cut."""
    if fabric.flows is None or fabric.domain_size != fabric.total_accelerators:
        return
    chips = [a.id for a in fabric.accelerators]
    if any(fabric.copies[c] != 1 for c in chips):
        return
    present = set(chips)
    pairs = []
    for link in fabric.links:
        if link.tier != SCALE_UP:
            continue
        if link.a not in present or link.b not in present or link.instances != 1:
            return  # a scale-up switch or a replicated link: not a torus of single chips
        pairs.append((link.a, link.b))
    found = drawn_torus(chips, pairs)
    if found is None:
        return
    if found.holes:
        fabric.torus_holes = (found.dims, found.holes)
    else:
        fabric.torus_dims = found.dims
    fabric.torus_open, fabric.torus_drawn = not found.wrap, True
    fabric.torus_links = tuple(l.index for l in fabric.links if l.tier == SCALE_UP)
    fabric.torus_lines = torus_lines(fabric.design, found.dims, found.dims, found.wrap, fabric.links,
                                     fabric.accelerators, fabric.copies, SCALE_UP, lambda item: False,
                                     coord_of=found.coords.get)
    if fabric.torus_lines is not None:
        fabric.torus_link_cap = fabric.torus_lines.link_cap
    else:
        caps = [fabric.links[i].cap for i in fabric.up_links]
        fabric.torus_link_cap = min(caps) if caps else 0.0


def _torus_bisection(fabric: Fabric) -> float:
    """The scale-up bisection of a torus: two planes across its largest dimension k (the ring of
    each line is cut twice) of N / k chips, one link each, both directions: 2 × N / k × link × 2.
    With holes, the same two planes of the whole torus, less one link per missing chip: a chip
    takes at most its one link across the cut away (a plane k / 2 from the other, so never both),
    and the worst cut puts every hole beside it. Exact for a hole within one plane (a failed
    host's line of chips); below the true cut where holes spread over many planes (a host failed
    in every block: 256 of 4,096 chips missing, 2 × 256 − 256 = 256 links against the 384 of the
    worst balanced cut through the holes), never above it: removing chips never raises a cut.
    An open mesh has no wrap-around links, so one plane halves it: half a torus's bisection.
    A torus whose lines lost links (`torus_lines`: a failed circuit switch or link) is cut across
    each dimension where the planes cross the fewest links left (`TorusLines.cut`), the smallest
    of the dimensions."""
    planes = 1 if fabric.torus_open else 2
    lines = fabric.torus_lines
    if fabric.torus_holes is None:
        if lines is not None:
            # Per torus (pod) of the template's dims, times the tori, as the whole torus's figure counts them.
            across = min(lines.cut(a) for a in range(len(lines.dims)))
            return across * fabric.total_accelerators / math.prod(lines.dims) * fabric.torus_link_cap * 2
        return planes * fabric.total_accelerators / max(fabric.torus_dims) * fabric.torus_link_cap * 2
    dims, missing = fabric.torus_holes
    full = int(np.prod(dims))
    across = min(lines.cut(a) for a in range(len(lines.dims))) if lines is not None else planes * full / max(dims)
    return max(0.0, across - missing) * fabric.torus_link_cap * 2


# --- summary figures --------------------------------------------------------------------------------

def switch_levels(fabric: Fabric) -> dict[str, float]:
    """Distance of every item from the nearest accelerator in hops (pass-through switches: 0),
    computed once per fabric."""
    cached = fabric.__dict__.get("_levels")
    if cached is not None:
        return cached
    items = fabric.design.items
    nb = _neighbours(fabric)
    dist = {a.id: 0.0 for a in fabric.accelerators}
    heap = [(0.0, a.id) for a in fabric.accelerators]
    weights: dict[str, float] = {}
    pop, push, get, inf, empty = heapq.heappop, heapq.heappush, dist.get, np.inf, ()
    while heap:
        d, node = pop(heap)
        if d > get(node, inf):
            continue
        for _, other, _ in nb.get(node, empty):
            w = weights.get(other)
            if w is None:
                it = items[other]
                # A NIC is the accelerator's port, not a hop; nor is a pass-through switch.
                w = weights[other] = 0.0 if it.kind == "nic" or (
                    it.kind == "switch" and _passthrough_item(fabric, it)) else 1.0
            nd = d + w
            if nd < get(other, inf):
                dist[other] = nd
                push(heap, (nd, other))
    fabric.__dict__["_levels"] = dist
    return dist


def _hops(fabric: Fabric, tiers: tuple[str, ...]) -> float | None:
    """Diameter in link hops between two accelerators over the given tiers (GPU↔NIC links count
    0, links to a pass-through circuit switch ½ each, so chip–OCS–chip is one hop).

    Between accelerators in different copies of a replicated group a path must leave the group:
    the hop count is twice the distance to the nearest item outside it."""
    items = fabric.design.items

    adjacency = fabric.__dict__.get("_hop_adjacency")
    if adjacency is None:
        # item → [(tier, other end, cost in half hops)], in the order of _neighbours. A link costs
        # 0 on the GPU↔NIC path, ½ to a pass-through circuit switch, else 1: in half hops 0, 1, 2.
        adjacency = fabric.__dict__["_hop_adjacency"] = {}
        circuit: dict[str, bool] = {}
        for l in fabric.links:
            if l.tier == HOST:
                c = 0
            else:
                c = 2
                for end in (l.a, l.b):
                    hit = circuit.get(end)
                    if hit is None:
                        it = items[end]
                        hit = circuit[end] = it.kind == "switch" and _passthrough_item(fabric, it)
                    if hit:
                        c = 1
                        break
            adjacency.setdefault(l.a, []).append((l.tier, l.b, c))
            adjacency.setdefault(l.b, []).append((l.tier, l.a, c))
    allowed = set(tiers) | ({HOST} if SCALE_OUT in tiers else set())
    rep = fabric.rep
    # Shortest paths in half hops with a bucket queue (Dial's algorithm): the same distances as
    # Dijkstra's, without a heap.
    halves = {rep: 0}
    buckets = [[rep]]
    get, empty, big = halves.get, (), 1 << 60
    k = 0
    while k < len(buckets):
        bucket = buckets[k]
        for node in bucket:  # grows while scanned through zero-cost links
            if halves[node] != k:
                continue
            for tier, other, c in adjacency.get(node, empty):
                if tier not in allowed:
                    continue
                nd = k + c
                if nd < get(other, big):
                    halves[other] = nd
                    while len(buckets) <= nd:
                        buckets.append([])
                    buckets[nd].append(other)
        k += 1
    best, reached = 0, False
    for a in fabric.accelerators:
        if a.id != rep and a.id in halves:
            best, reached = max(best, halves[a.id]), True
    chains = _chains(fabric)
    for g in chains[rep][1:]:
        if items[g].count <= 1:
            continue
        # The nearest non-accelerator outside the group: buckets in order of distance.
        nearest = next((h for h, bucket in enumerate(buckets) for i in bucket
                        if halves[i] == h and g not in chains[i] and items[i].kind != "accelerator"), None)
        if nearest is not None:
            best, reached = max(best, 2 * nearest), True
    return rounded(best / 2) if reached else None


def _drawn_domain_cut(fabric: Fabric) -> float | None:
    """The representative's scale-up domain as drawn, when it is a few single chips cabled one to
    one (a server's mesh, as every copy of the server has it): its smallest cut over every halving,
    both ways, as `flows.FlowNetwork.scale_up_bisection` gives the designs it expands. None for
    anything else (the caller keeps half the domain's injection)."""
    items = fabric.design.items
    nb = _neighbours(fabric)
    graph = nx.Graph()
    graph.add_node(fabric.rep)
    counted: set[int] = set()
    stack = [fabric.rep]
    while stack:
        node = stack.pop()
        for link, other, per_copy in nb.get(node, []):
            if link.tier != SCALE_UP or link.index in counted:
                continue
            counted.add(link.index)
            if items[other].kind != "accelerator" or items[other].count != 1 or items[node].count != 1 \
                    or link.deg_a != link.deg_b:
                return None  # a switch, a group of chips, or a chip cabled to copies of another
            if other not in graph:
                if graph.number_of_nodes() == EXACT_BISECTION_CHIPS:
                    return None
                stack.append(other)
            capacity = link.cap * per_copy
            if graph.has_edge(node, other):
                graph[node][other]["capacity"] += capacity
            else:
                graph.add_edge(node, other, capacity=capacity)
    return 2 * smallest_balanced_cut(graph, list(graph)) if len(graph) > 1 else None


def network_summary(fabric: Fabric) -> dict:
    if fabric.rep is None:
        return {"tiers": {}, "boundaries": [], "note": "no accelerators"}
    g = fabric.domain_size
    up_media = sorted({fabric.links[i].medium for i in fabric.up_links})
    out_media = sorted({l.medium for l in fabric.links if l.tier == SCALE_OUT})
    # Bisection: the smallest cut of any boundary level, half the copies on each side.
    scale_out_bisection = None
    for b in fabric.boundaries:
        if b.copies < 2 and b.item is not None:
            continue
        if b.accelerators < max(1, g) or b.item is None:
            continue
        # Copies of this size the cluster's accelerators make, a partial last copy (a partial
        # scalable unit or pod beside the full ones) as its share.
        n_copies = fabric.total_accelerators / max(1, b.accelerators)
        if n_copies < 2:
            continue
        value = n_copies / 2 * b.cap_raw
        scale_out_bisection = value if scale_out_bisection is None else min(scale_out_bisection, value)
    if fabric.flows is not None and fabric.bisection_cap is None:
        # The links as drawn: a minimum cut between the halves of the job, whatever containers are drawn.
        drawn = fabric.flows.bisection()
        scale_out_bisection = drawn if drawn is not None else scale_out_bisection
    if scale_out_bisection is not None and fabric.out_raw:
        scale_out_bisection = min(scale_out_bisection, fabric.total_accelerators / 2 * fabric.out_raw)
    if scale_out_bisection is not None and fabric.bisection_cap is not None:
        scale_out_bisection = min(scale_out_bisection, fabric.bisection_cap)
    if (fabric.torus_dims or fabric.torus_holes) and not fabric.torus_drawn:
        up_bisection = _torus_bisection(fabric)
    elif fabric.direct_connect and fabric.flows is not None:
        # Accelerators cabled to each other (a torus or mesh not from the template): their cut as
        # drawn, both ways as the torus's closed form counts it, not g / 2 chips' injection.
        up_bisection = fabric.flows.scale_up_bisection()
    elif fabric.direct_connect and (drawn_cut := _drawn_domain_cut(fabric)) is not None:
        up_bisection = drawn_cut  # above the flow model's size: the representative's server, the same cut
    else:
        up_bisection = g / 2 * fabric.up_raw if g > 1 else 0.0
    levels = switch_levels(fabric)
    oversub = _oversubscription(fabric, levels)
    tiers = {
        SCALE_UP: {
            "media": up_media,
            "injection_gb_per_s": rounded(fabric.up_raw),
            "domain_accelerators": g,
            "domains": fabric.total_accelerators // g if g else 0,
            "bisection_gb_per_s": rounded(up_bisection),
            "direct_connect": fabric.direct_connect,
            "in_network_reduction": "nvls" if fabric.nvls else None,
            "diameter_hops": _hops(fabric, (SCALE_UP,)) if g > 1 else 0,
        },
        SCALE_OUT: {
            "media": out_media,
            "injection_gb_per_s": rounded(fabric.out_raw),
            "achieved_injection_gb_per_s": rounded(fabric.out_eff),
            "bisection_gb_per_s": rounded(scale_out_bisection) if scale_out_bisection is not None else None,
            "oversubscription": oversub,
            "in_network_reduction": "sharp" if fabric.sharp else None,
            "diameter_hops": _hops(fabric, (SCALE_OUT,)) if out_media else None,
        },
    }
    return {
        "accelerators": fabric.total_accelerators,
        "tiers": tiers,
        "diameter_hops": _hops(fabric, (SCALE_UP, SCALE_OUT, HOST)),
        "boundaries": [{"item": b.item, "label": b.label, "accelerators": b.accelerators, "copies": b.copies,
                        "cut_gb_per_s": rounded(b.cap_raw), "links": len(b.links)} for b in fabric.boundaries],
    }


def _oversubscription(fabric: Fabric, levels: dict) -> list[dict]:
    items = fabric.design.items
    nb = _neighbours(fabric)
    per_level: dict[int, dict] = {}
    level_of, inf, empty = levels.get, np.inf, ()
    for item_id, level in levels.items():
        it = items[item_id]
        if it.kind != "switch" or _passthrough_item(fabric, it):
            continue
        down = up = 0.0
        seen = set()
        for l, other, deg in nb.get(item_id, empty):
            if l.tier != SCALE_OUT:
                continue
            index = l.index
            if index in seen:
                continue
            seen.add(index)
            other_level = level_of(other, inf)
            if other_level < level or items[other].kind == "nic":
                down += deg * l.cap
            elif other_level > level:
                up += deg * l.cap
        if down == 0 and up == 0:
            continue
        entry = per_level.setdefault(int(level), {"level": int(level), "switches": 0, "down_gb_per_s": 0.0,
                                                  "up_gb_per_s": 0.0, "ratios": []})
        n = fabric.copies[item_id]
        entry["switches"] += n
        entry["down_gb_per_s"] += down * n
        entry["up_gb_per_s"] += up * n
        if up > 0:
            entry["ratios"].append(down / up)
    out = []
    for i, level in enumerate(sorted(per_level)):
        e = per_level[level]
        ratios = e.pop("ratios")
        ratio = max(ratios) if ratios else None
        e["tier"] = i + 1
        e["name"] = ("leaf", "spine", "core")[i] if i < 3 else f"tier {i + 1}"
        e["oversubscription"] = rounded(ratio) if ratio is not None else None
        e["down_gb_per_s"] = rounded(e["down_gb_per_s"])
        e["up_gb_per_s"] = rounded(e["up_gb_per_s"])
        out.append(e)
    return out

