"""Network figures computed from the design's graph, on the hierarchy.

The engine never expands a design to one object per GPU. Replicated groups are identical, so it
analyses one representative copy of everything and scales by counts:

- every drawn link gets its raw capacity per instance (lanes × medium lane bandwidth), its tier
  (scale-up, scale-out, or host for the GPU↔NIC path) and its replication (`link_copies`);
- the representative accelerator's containment chain (accelerator ⊂ server ⊂ rack ⊂ groups ⊂
  cluster) gives nested *boundaries*; for each, the capacity of the links that cross it per copy
  is summed. Traffic a collective sends out of one copy of a boundary is spread evenly over those
  links (equal-cost paths in a tree): this gives the load and utilization of every link and the
  bottleneck, and is exact for fat trees in the fluid limit;
- bisection, oversubscription per switch tier and hop counts come from the same arrays and from a
  small quotient graph (one node per drawn item), so removing a spine or halving uplinks changes
  them.

Circuit switches (optical circuit switches such as `tpu-ocs`) are pass-through: a chip–OCS–chip
path counts as one hop.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from designer.engine import calibration as cal
from designer.engine.inventory import multiplicities
from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.engine.result import rounded

SCALE_UP, SCALE_OUT, HOST = "scale-up", "scale-out", "host"


def is_passthrough(part) -> bool:
    """Circuit switches forward light without a hop of their own."""
    if part is None:
        return False
    return bool(part.get("circuit")) or part.get("switching") == "circuit" or part.id.endswith("ocs") or "-ocs" in part.id


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


@dataclass
class Fabric:
    design: Design
    catalog: Catalog
    copies: dict
    links: list[LinkInfo]
    accelerators: list  # accelerator Items in topology order
    total_accelerators: int
    rep: str | None
    boundaries: list[Boundary] = field(default_factory=list)
    up_raw: float = 0.0  # per-GPU scale-up bandwidth
    up_links: list[int] = field(default_factory=list)
    out_raw: float = 0.0  # per-GPU scale-out injection, raw
    out_eff: float = 0.0  # per-GPU scale-out injection, achieved (NIC measured figure or raw × efficiency)
    out_links: list[int] = field(default_factory=list)  # the links that bound it (host or NIC uplinks)
    domain_size: int = 1
    domain_item: str | None = None
    direct_connect: bool = False  # scale-up links join accelerators directly (mesh / torus)
    nvls: bool = False
    sharp: bool = False
    torus_dims: tuple = ()
    torus_link_cap: float = 0.0

    # -- helpers -----------------------------------------------------------------------------
    def link_eff(self, info: LinkInfo) -> float:
        return info.cap * (cal.SCALE_UP_RING_EFFICIENCY if info.tier == SCALE_UP else cal.NET_EFFICIENCY)

    @cached_property
    def by_id(self) -> dict:
        return {l.id: l for l in self.links}

    def boundary_for(self, n: int, stride: int = 1) -> list[tuple[Boundary, int]]:
        """(boundary, ranks of the communicator in one copy) for boundaries above the accelerator."""
        out = []
        for b in self.boundaries:
            r = min(n, max(1, b.accelerators // max(1, stride)))
            out.append((b, r))
        return out

    def domain_ranks(self, n: int, stride: int = 1) -> int:
        return min(n, max(1, self.domain_size // max(1, stride)))


def build_fabric(design: Design, catalog: Catalog, copies: dict | None = None) -> Fabric:
    copies = copies or multiplicities(design)
    items = design.items
    ancestors_cache: dict[str, tuple[str, ...]] = {}

    def chain(item_id: str) -> tuple[str, ...]:
        cached = ancestors_cache.get(item_id)
        if cached is None:
            parent = items[item_id].parent
            cached = (item_id,) + (chain(parent) if parent is not None else ())
            ancestors_cache[item_id] = cached
        return cached

    links: list[LinkInfo] = []
    for link in design.links.values():
        medium = catalog.get(link.medium)
        if medium is None or link.a not in items or link.b not in items:
            continue
        ka, kb = items[link.a].kind, items[link.b].kind
        if "cpu" in (ka, kb):
            continue
        if {ka, kb} == {"accelerator", "nic"}:
            tier = HOST
        elif "nic" in (ka, kb):
            tier = SCALE_OUT
        else:
            tier = medium.get("tier") or SCALE_OUT
        lc = _link_copies(design, link, chain, copies)
        links.append(LinkInfo(len(links), link.id, link.a, link.b, tier, link.lanes * medium.number("lane_gb_per_s"),
                              lc[0] * lc[1] * lc[2], lc[1], lc[0], medium.number("latency_ns") * 1e-9, link.medium))

    accelerators = [i for i in design.ordered_items() if i.kind == "accelerator"]
    fabric = Fabric(design, catalog, copies, links, accelerators,
                    sum(copies[a.id] for a in accelerators), accelerators[0].id if accelerators else None)
    if fabric.rep is None:
        return fabric
    _per_gpu(fabric, chain)
    _domain(fabric, chain)
    _boundaries(fabric, chain)
    _in_network(fabric)
    _torus(fabric)
    return fabric


def _link_copies(design: Design, link, chain, copies) -> tuple[int, int, int]:
    ca, cb = chain(link.a), chain(link.b)
    common = set(ca) & set(cb)
    lca = next((i for i in ca if i in common), None)

    def below(c):
        total = 1
        for item_id in c:
            if item_id == lca:
                break
            total *= design.items[item_id].count
        return total

    return below(ca), below(cb), (copies[lca] if lca is not None else 1)


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
            achieved = part.number("achieved_gb_per_s") if part and part.get("achieved_gb_per_s") else raw * cal.NET_EFFICIENCY
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


def _per_gpu(fabric: Fabric, chain) -> None:
    """Per-accelerator scale-up bandwidth and scale-out injection of the representative's server.

    Scale-up: the slowest accelerator of the server (a ring is as fast as its slowest member).

    Scale-out: accelerators of one server joined by the scale-up fabric share the server's NICs —
    NCCL routes traffic to a NIC over NVLink / Infinity Fabric (PXN, rail-local routing), so a
    server with fewer NICs than GPUs (HGX-V100: 8 GPUs, 2 NICs each on one GPU's PCIe) gives every
    GPU the server's total NIC bandwidth (each NIC capped by its GPU's host link) ÷ GPUs, as
    long as a GPU's scale-up links can carry its share to a NIC-attached peer. An accelerator not
    joined to its peers by scale-up links has only its own path (0 if it has none)."""
    items = fabric.design.items
    nb = _neighbours(fabric)
    rep = fabric.rep
    server = next((i for i in chain(rep) if items[i].kind == "server"), None)
    # Accelerators alike to the representative (same server): the ring is as fast as the slowest.
    peers = [a.id for a in fabric.accelerators if server is None or items[a.id].parent == items[rep].parent] or [rep]
    own = {acc: _own_paths(fabric, nb, acc) for acc in peers}
    best_up = min(((own[a][0], own[a][1]) for a in peers), key=lambda x: x[0])
    members = set(peers)
    groups, placed = [], set()
    for acc in peers:
        if acc in placed:
            continue
        group = _scale_up_joined(fabric, nb, acc, members) if own[acc][0] > 0 else {acc}
        placed |= group
        groups.append([a for a in peers if a in group])
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
    fabric.up_raw, fabric.up_links = best_up[0], list(best_up[1])
    fabric.out_raw, fabric.out_eff, fabric.out_links = best_out


def _domain(fabric: Fabric, chain) -> None:
    """The scale-up domain: accelerators reachable over scale-up links."""
    items = fabric.design.items
    nb = _neighbours(fabric)
    seen = {fabric.rep}
    stack = [fabric.rep]
    accel_neighbours = 0
    while stack:
        node = stack.pop()
        for l, other, deg in nb.get(node, []):
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
    fabric.domain_item = scope
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
    ends_a = [chain(l.a) for l in fabric.links]
    ends_b = [chain(l.b) for l in fabric.links]
    instances = np.array([l.instances for l in fabric.links], dtype=float) if n_links else np.zeros(0)
    caps = np.array([l.cap for l in fabric.links], dtype=float) if n_links else np.zeros(0)
    effs = np.array([fabric.link_eff(l) for l in fabric.links], dtype=float) if n_links else np.zeros(0)
    seen_sizes = set()
    for item in rep_chain:
        if item is None:
            label, accels, copies = "cluster", fabric.total_accelerators, 1
            crossing = np.zeros(n_links, dtype=bool)
        else:
            it = items[item]
            accels = _accelerators_in(fabric, item, chain)
            copies = fabric.copies[item]
            label = f"{it.kind} {it.label}"
            crossing = np.array([(item in ea) != (item in eb) for ea, eb in zip(ends_a, ends_b)], dtype=bool)
        key = (accels, tuple(np.nonzero(crossing)[0]))
        if key in seen_sizes:
            continue
        seen_sizes.add(key)
        idx = np.nonzero(crossing)[0]
        per_copy = instances[idx] / copies
        fabric.boundaries.append(Boundary(item, label, accels, copies, idx, per_copy,
                                          float((per_copy * caps[idx]).sum()), float((per_copy * effs[idx]).sum())))


def _in_network(fabric: Fabric) -> None:
    settings = fabric.design.settings.get("in_network_reduction", {}) or {}
    items, catalog = fabric.design.items, fabric.catalog
    up_switches, out_switches = [], []
    for l in fabric.links:
        for end in (l.a, l.b):
            it = items[end]
            if it.kind != "switch":
                continue
            part = catalog.get(it.part)
            (up_switches if l.tier == SCALE_UP else out_switches).append(part)
    fabric.nvls = bool(up_switches) and any(p is not None and p.get("in_network_reduction") == "nvls" for p in up_switches) \
        and settings.get("nvls", True) is not False
    fabric.sharp = bool(out_switches) and all(p is not None and p.get("in_network_reduction") == "sharp" for p in out_switches) \
        and settings.get("sharp", True) is not False


def _torus(fabric: Fabric) -> None:
    template = fabric.design.settings.get("template") or {}
    if template.get("name") != "torus" or not fabric.direct_connect:
        return
    try:
        dims = tuple(int(d) for d in str(template.get("params", {}).get("dims", "")).lower().split("x"))
    except ValueError:
        return
    if np.prod(dims) != fabric.total_accelerators:
        return
    fabric.torus_dims = tuple(d for d in dims if d > 1)
    caps = [fabric.links[i].cap for i in fabric.up_links]
    fabric.torus_link_cap = min(caps) if caps else 0.0


# --- summary figures --------------------------------------------------------------------------------

def _switch_levels(fabric: Fabric) -> dict[str, float]:
    """Distance of every item from the nearest accelerator in hops (pass-through switches: 0)."""
    items, catalog = fabric.design.items, fabric.catalog
    nb = _neighbours(fabric)
    dist = {a.id: 0.0 for a in fabric.accelerators}
    heap = [(0.0, a.id) for a in fabric.accelerators]
    while heap:
        d, node = heapq.heappop(heap)
        if d > dist.get(node, np.inf):
            continue
        for l, other, _ in nb.get(node, []):
            part = catalog.get(items[other].part)
            w = 0.0 if (items[other].kind == "switch" and is_passthrough(part)) else 1.0
            if items[other].kind == "nic":
                w = 0.0  # a NIC is the accelerator's port, not a hop
            nd = d + w
            if nd < dist.get(other, np.inf):
                dist[other] = nd
                heapq.heappush(heap, (nd, other))
    return dist


def _hops(fabric: Fabric, tiers: tuple[str, ...]) -> float | None:
    """Diameter in link hops between two accelerators over the given tiers (GPU↔NIC links count
    0, links to a pass-through circuit switch ½ each, so chip–OCS–chip is one hop).

    Between accelerators in different copies of a replicated group a path must leave the group:
    the hop count is twice the distance to the nearest item outside it."""
    items, catalog = fabric.design.items, fabric.catalog
    nb = _neighbours(fabric)

    def link_cost(l: LinkInfo) -> float:
        if l.tier == HOST:
            return 0.0
        for end in (l.a, l.b):
            it = items[end]
            if it.kind == "switch" and is_passthrough(catalog.get(it.part)):
                return 0.5
        return 1.0

    costs = fabric.__dict__.get("_hop_costs")
    if costs is None:
        costs = fabric.__dict__["_hop_costs"] = [link_cost(l) for l in fabric.links]

    def cost(l: LinkInfo) -> float:
        return costs[l.index]

    rep = fabric.rep
    dist = {rep: 0.0}
    heap = [(0.0, rep)]
    while heap:
        d, node = heapq.heappop(heap)
        if d > dist[node]:
            continue
        for l, other, _ in nb.get(node, []):
            if l.tier not in tiers and not (l.tier == HOST and SCALE_OUT in tiers):
                continue
            nd = d + cost(l)
            if nd < dist.get(other, np.inf):
                dist[other] = nd
                heapq.heappush(heap, (nd, other))
    best, reached = 0.0, False
    for a in fabric.accelerators:
        if a.id != rep and a.id in dist:
            best, reached = max(best, dist[a.id]), True
    ancestors = {i: set(x.id for x in fabric.design.ancestors(i)) | {i} for i in dist}
    for g in [x.id for x in fabric.design.ancestors(rep)]:
        if items[g].count <= 1:
            continue
        outside = [d for i, d in dist.items() if g not in ancestors[i] and items[i].kind != "accelerator"]
        if outside:
            best, reached = max(best, 2 * min(outside)), True
    return rounded(best) if reached else None


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
        n_copies = fabric.total_accelerators // max(1, b.accelerators)
        if n_copies < 2:
            continue
        value = n_copies / 2 * b.cap_raw
        scale_out_bisection = value if scale_out_bisection is None else min(scale_out_bisection, value)
    if scale_out_bisection is not None and fabric.out_raw:
        scale_out_bisection = min(scale_out_bisection, fabric.total_accelerators / 2 * fabric.out_raw)
    if fabric.torus_dims:
        k = max(fabric.torus_dims)
        up_bisection = 2 * fabric.total_accelerators / k * fabric.torus_link_cap * 2
    else:
        up_bisection = g / 2 * fabric.up_raw if g > 1 else 0.0
    levels = _switch_levels(fabric)
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
    items, catalog = fabric.design.items, fabric.catalog
    nb = _neighbours(fabric)
    per_level: dict[int, dict] = {}
    for item_id, level in levels.items():
        it = items[item_id]
        if it.kind != "switch" or is_passthrough(catalog.get(it.part)):
            continue
        down = up = 0.0
        seen = set()
        for l, other, deg in nb.get(item_id, ()):
            if l.tier != SCALE_OUT or l.index in seen:
                continue
            seen.add(l.index)
            other_level = levels.get(other, np.inf)
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

