"""The flow-level network model: collectives as flows between ranks, routed over the links as drawn.

The hierarchy model (`network`) reads cuts off the containers on one representative accelerator's
chain, so a cut no container marks (a hand-drawn leaf with one uplink) is invisible to it and copies
that differ are read as if they did not. This model reads the graph itself. A design whose physical
copies fit under `FLOW_LIMIT` is expanded (`Design.expand`, one node per physical item) into:

- scale-up *domains*: accelerators joined by scale-up links (an NVLink server, an NVL72 rack, a
  torus), each with the NICs its accelerators have host links to, in drawn order (NIC k is rail k);
- the *routing graph*: NICs and the switches and other transit items the scale-out links join.
  NICs are end points (hosts do not forward), so routes run NIC → switches → NIC.

A collective phase between domains is a set of flows, in bytes per byte of the message S, from a
NIC of one domain to a NIC of another. As NCCL does, channel c of a transfer between two domains
leaves its domain through NIC c mod k and enters the next through NIC c mod k', over lcm(k, k')
channels (rail to rail where the counts agree); rings send to the next domain in rank order, trees to parent and
children of a double binary tree over the domains, all-to-all between every pair. Flows follow
shortest paths with ECMP: at every hop a flow is split evenly over the physical links that lead one
hop closer to its destination. Loads add up per physical link and direction; a phase takes its
most loaded link's load / (capacity × efficiency), which is its bottleneck.

The same expansion gives the connected sets of accelerators (`components`) and the scale-out
bisection as a minimum cut between the two halves of the accelerators in rank order (networkx
max-flow). Above `FLOW_ACCELERATORS` the engine keeps the hierarchy's closed forms (docs/calibration.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from designer.model.design import Design

# The flow model runs on designs of up to this many physical accelerators (and `FLOW_LIMIT` nodes
# of `Design.expand`); larger ones keep the hierarchy's closed forms. 4,096 keeps an evaluation of
# the shipped examples it covers (TPU v4 pod, SuperPOD 4 SU, Azure ND H100 v5) near half a second.
FLOW_ACCELERATORS = 4_096
FLOW_LIMIT = 60_000

SCALE_UP, SCALE_OUT, HOST = "scale-up", "scale-out", "host"

# Channels of a transfer between two domains: the least common multiple of their NIC counts, so
# that rail k meets rail k where the counts agree and every NIC carries its share where they do
# not (a server that lost one of 8 NICs: 56 channels, 8 through each of its 7); at most this many.
MAX_CHANNELS = 1024


@dataclass
class LinkLoads:
    """What one phase's flows put on the links: bytes per byte of S, per physical link and direction."""

    forward: np.ndarray  # per physical edge, from its first end to its second
    backward: np.ndarray
    unrouted: bool = False  # a flow had no path

    def per_edge(self) -> np.ndarray:
        return np.maximum(self.forward, self.backward)


@dataclass
class FlowNetwork:
    """A design expanded for the flow model; built once per fabric (`flow_network`)."""

    accelerators: list[str]  # physical accelerator nodes in rank order
    domain_of: np.ndarray  # per rank: its scale-up domain
    domain_nics: list[list[int]]  # per domain: routing-graph node indices of its NICs, rail order
    nodes: list[str]  # routing-graph nodes
    is_nic: np.ndarray
    # routing-graph adjacency: node → [(neighbour, physical edge, +1 forward / -1 backward)]
    adjacency: list[list[tuple[int, int, int]]]
    edge_link: np.ndarray  # per physical edge: index into Fabric.links
    edge_cap: np.ndarray  # raw GB/s per direction
    components: list[list[int]]  # ranks of each connected set of accelerators, largest first
    _core_distance: dict = field(default_factory=dict)  # switch → {node: hops}
    _cache: dict = field(default_factory=dict)

    @property
    def connected(self) -> bool:
        return len(self.components) <= 1

    # -- routing ---------------------------------------------------------------------------------
    def _attached(self, nic: int) -> tuple[int, ...]:
        """The transit nodes a NIC's links reach, each once (cached)."""
        key = ("attached", nic)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = tuple(sorted({other for other, _, _ in self.adjacency[nic]
                                                   if not self.is_nic[other]}))
        return hit

    def _down_links(self, nic: int) -> dict[int, list[tuple[int, int]]]:
        """{transit node: [(physical edge, direction from that node)]} of a NIC's links (cached)."""
        key = ("down", nic)
        hit = self._cache.get(key)
        if hit is None:
            hit = {}
            for other, e, sign in self.adjacency[nic]:
                hit.setdefault(other, []).append((e, -sign))
            self._cache[key] = hit
        return hit

    def _distances_to(self, targets: tuple[int, ...]) -> dict[int, int]:
        """Hops from every transit node to the nearest of `targets` (NICs do not forward)."""
        hit = self._core_distance.get(targets)
        if hit is None:
            hit = dict.fromkeys(targets, 0)
            frontier = list(targets)
            is_nic, adjacency = self.is_nic, self.adjacency
            while frontier:
                nxt = []
                for node in frontier:
                    d = hit[node] + 1
                    for other, _, _ in adjacency[node]:
                        if not is_nic[other] and other not in hit:
                            hit[other] = d
                            nxt.append(other)
                frontier = nxt
            self._core_distance[targets] = hit
        return hit

    def _between_switches(self, start: int, targets: tuple[int, ...]):
        """One unit of flow from transit node `start` to the nearest of `targets`, split evenly at
        every hop over the physical links one hop closer: (edges, signs, shares) of the links it
        crosses and {target: share arriving there}. Cached: flows between two leaves share it."""
        key = (start, targets)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        distance = self._distances_to(targets)
        adjacency, is_nic = self.adjacency, self.is_nic
        pending = {start: 1.0}
        levels: dict[int, list[int]] = defaultdict(list)
        levels[distance[start]].append(start)
        edges, signs, shares, arrived = [], [], [], {}
        for d in range(distance[start], 0, -1):
            for node in levels.pop(d, ()):
                amount = pending.pop(node)
                hops = [(other, e, sign) for other, e, sign in adjacency[node]
                        if not is_nic[other] and distance.get(other) == d - 1]
                share = amount / len(hops)
                for other, e, sign in hops:
                    edges.append(e)
                    signs.append(sign)
                    shares.append(share)
                    if other not in pending:
                        levels[d - 1].append(other)
                        pending[other] = 0.0
                    pending[other] += share
        arrived = pending
        hit = self._cache[key] = (np.array(edges, dtype=np.intp), np.array(signs), np.array(shares), arrived)
        return hit

    def route(self, flows: dict[tuple[int, int], float]) -> LinkLoads:
        """Loads of NIC-to-NIC flows {(source NIC, destination NIC): bytes per byte of S}, each
        split evenly, hop by hop, over the physical links one hop closer to its destination."""
        forward = np.zeros(len(self.edge_link))
        backward = np.zeros(len(self.edge_link))
        unrouted = False
        far = 1 << 30
        adjacency = self.adjacency
        # Flows between the same two transit nodes share their route: summed first, routed once.
        between: dict[tuple[int, tuple[int, ...]], float] = defaultdict(float)
        arrivals: dict[int, float] = defaultdict(float)  # destination NIC → what is routed to it
        for (source, destination), amount in flows.items():
            if amount <= 0 or source == destination:
                continue
            direct = [(e, sign) for other, e, sign in adjacency[source] if other == destination]
            if direct:  # a NIC cabled to the other
                for e, sign in direct:
                    (forward if sign > 0 else backward)[e] += amount / len(direct)
                continue
            targets = self._attached(destination)
            distance = self._distances_to(targets) if targets else {}
            best = min((distance.get(other, far) for other, _, _ in adjacency[source]), default=far)
            if best >= far:
                unrouted = True
                continue
            hops = [(other, e, sign) for other, e, sign in adjacency[source] if distance.get(other, far) == best]
            share = amount / len(hops)
            for other, e, sign in hops:
                (forward if sign > 0 else backward)[e] += share
                between[(other, targets)] += share
            arrivals[destination] += amount
        landed: dict[tuple[int, ...], dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for (start, targets), amount in between.items():
            edges, signs, shares, arrived = self._between_switches(start, targets)
            if len(edges):
                np.add.at(forward, edges[signs > 0], amount * shares[signs > 0])
                np.add.at(backward, edges[signs < 0], amount * shares[signs < 0])
            for node, share in arrived.items():
                landed[targets][node] += amount * share
        # The last hop: what reached a destination's switches goes down its links. Flows to NICs on
        # the same switches were summed, so each destination takes its own flows' share of them.
        into: dict[tuple[int, ...], float] = defaultdict(float)
        for destination, amount in arrivals.items():
            into[self._attached(destination)] += amount
        for destination, own in arrivals.items():
            targets = self._attached(destination)
            fraction = own / into[targets]
            down_links = self._down_links(destination)
            for node, amount in landed[targets].items():
                down = down_links.get(node, ())
                for e, sign in down:
                    (forward if sign > 0 else backward)[e] += amount * fraction / len(down)
        return LinkLoads(forward, backward, unrouted)

    # -- collectives as flows ----------------------------------------------------------------------
    def groups(self, n: int, stride: int, concurrent: bool, ranks: list[int] | None = None) -> list[list[int]]:
        """The communicators a phase runs: n ranks every `stride`-th, from the first rank of the job
        (`ranks`: the job's ranks, by default the largest connected set); `concurrent`: every such
        group tiling the job at once (a data-parallel group beside the others)."""
        job = ranks if ranks is not None else self.components[0] if self.components else []
        span = n * stride
        out = []
        blocks = max(1, len(job) // span) if concurrent else 1
        for block in range(blocks):
            for offset in range(stride if concurrent else 1):
                members = [block * span + offset + i * stride for i in range(n)]
                if members[-1] >= len(job):
                    continue
                out.append([job[m] for m in members])
        return out

    def pattern_loads(self, pattern: str, n: int, stride: int, concurrent: bool, amount: float = 1.0,
                      ranks: list[int] | None = None) -> LinkLoads:
        """The loads of one phase's flows between domains, for `amount` bytes per byte of S on each
        hop (ring, chain) or tree edge; all-to-all moves S/n between every two ranks. Cached."""
        key = (pattern, n, stride, concurrent, None if ranks is None else tuple(ranks))
        hit = self._cache.get(key)
        if hit is not None:  # loads grow with the amount: one routing per shape
            return LinkLoads(hit.forward * amount, hit.backward * amount, hit.unrouted)
        between: dict[tuple[int, int], float] = defaultdict(float)
        domain_of = self.domain_of
        for members in self.groups(n, stride, concurrent, ranks):
            domains = [int(domain_of[m]) for m in members]
            if pattern in ("ring", "chain"):
                count = len(domains) if pattern == "ring" else len(domains) - 1
                for i in range(count):
                    a, b = domains[i], domains[(i + 1) % len(domains)]
                    if a != b:
                        between[(a, b)] += 1.0
            elif pattern == "tree":
                for tree in _double_binary_tree(list(dict.fromkeys(domains))):
                    for parent, child in tree:
                        between[(parent, child)] += 0.5
                        between[(child, parent)] += 0.5
            elif pattern == "pairs":
                counts: dict[int, int] = defaultdict(int)
                for d in domains:
                    counts[d] += 1
                for a, ca in counts.items():
                    for b, cb in counts.items():
                        if a != b:
                            between[(a, b)] += ca * cb / len(members)
            else:
                raise ValueError(f"unknown flow pattern {pattern!r}")
        flows: dict[tuple[int, int], float] = defaultdict(float)
        unrouted = False
        for (a, b), total in between.items():
            nics_a, nics_b = self.domain_nics[a], self.domain_nics[b]
            if not nics_a or not nics_b:
                unrouted = True
                continue
            channels = min(math.lcm(len(nics_a), len(nics_b)), MAX_CHANNELS)
            for c in range(channels):
                flows[(nics_a[c % len(nics_a)], nics_b[c % len(nics_b)])] += total / channels
        loads = self.route(flows)
        loads.unrouted = loads.unrouted or unrouted
        self._cache[key] = loads
        return LinkLoads(loads.forward * amount, loads.backward * amount, loads.unrouted)

    # -- figures ------------------------------------------------------------------------------------
    def bisection(self) -> float | None:
        """Raw GB/s one way between the two halves of the largest connected set in rank order: a
        minimum cut, by max-flow, between the NICs of each half's ranks. Cached."""
        if "bisection" not in self._cache:
            self._cache["bisection"] = self._bisection()
        return self._cache["bisection"]

    def _bisection(self) -> float | None:
        job = self.components[0] if self.components else []
        if len(set(int(self.domain_of[r]) for r in job)) < 2:
            return None
        # The first half of the ranks on one side; a domain the halves cut gives each side the share
        # of its NICs, in rail order, that its ranks on that side have.
        in_first: dict[int, int] = defaultdict(int)
        size: dict[int, int] = defaultdict(int)
        for position, r in enumerate(job):
            d = int(self.domain_of[r])
            size[d] += 1
            in_first[d] += position < len(job) // 2
        first, second = [], []
        for d in size:
            nics = self.domain_nics[d]
            cut = round(len(nics) * in_first[d] / size[d])
            first += nics[:cut]
            second += nics[cut:]
        graph = nx.DiGraph()
        for node, neighbours in enumerate(self.adjacency):
            for other, e, _ in neighbours:
                cap = float(self.edge_cap[e])
                if graph.has_edge(node, other):
                    graph[node][other]["capacity"] += cap
                else:
                    graph.add_edge(node, other, capacity=cap)
        for nic in first:
            graph.add_edge("first", nic)  # no capacity: unbounded
        for nic in second:
            graph.add_edge(nic, "second")
        if "first" not in graph or "second" not in graph:
            return 0.0
        return float(nx.maximum_flow_value(graph, "first", "second"))


def _binary_tree_edges(order: list[int]) -> list[tuple[int, int]]:
    """(parent, child) edges of NCCL's binary tree over `order` (`ncclGetBtree`: rank r's parent
    clears r's lowest set bit and sets the next, or only clears it past the end)."""
    n = len(order)
    edges = []
    for r in range(1, n):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        if up >= n:
            up = r ^ bit
        edges.append((order[up], order[r]))
    return edges


def _double_binary_tree(order: list[int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """NCCL's two trees (`ncclGetDtree`): the second is the first mirrored (an even count) or
    shifted by one (odd), so that a leaf of one is an inner node of the other."""
    n = len(order)
    first = _binary_tree_edges(order)
    if n % 2:
        second = [(order[(order.index(p) + 1) % n], order[(order.index(c) + 1) % n]) for p, c in first]
    else:
        second = [(order[n - 1 - order.index(p)], order[n - 1 - order.index(c)]) for p, c in first]
    return first, second


def physical_count(design: Design) -> int:
    """Nodes `Design.expand` would make."""
    return sum(design.multiplicity(i) for i in design.items)


def flow_network(design: Design, links: list, accelerator_ids: set[str], limit: int = FLOW_LIMIT
                 ) -> FlowNetwork | None:
    """The flow model's view of a design (None above `limit` physical copies). `links`: the
    fabric's `LinkInfo`s (the links the network model counts); `accelerator_ids`: the drawn
    accelerators it counts (those in a server)."""
    accelerators = sum(design.multiplicity(i) for i in accelerator_ids)
    if accelerators > FLOW_ACCELERATORS or physical_count(design) > limit:
        return None
    expanded = design.expand(limit)
    items = design.items
    info_of = {info.id: info for info in links}
    order = {item.id: k for k, item in enumerate(design.ordered_items())}
    chains = design.chains()

    def rank_key(node: str) -> tuple:
        data = expanded.nodes[node]
        path = iter(data["copy"])
        key = []
        for item_id in reversed(chains[data["item"]]):
            key.append(order[item_id])
            if items[item_id].count > 1:
                key.append(next(path))
        return tuple(key)

    accelerators = sorted((node for node, data in expanded.nodes(data=True) if data["item"] in accelerator_ids),
                          key=rank_key)
    rank_of = {node: r for r, node in enumerate(accelerators)}
    # Scale-up domains and connected sets: networkx components over the links the model counts.
    scale_up, whole = nx.Graph(), nx.Graph()
    scale_up.add_nodes_from(accelerators)
    whole.add_nodes_from(accelerators)
    routing_edges = []
    host_links: list[tuple[str, str]] = []
    for a, b, data in expanded.edges(data=True):
        info = info_of.get(data["link"])
        if info is None:
            continue
        whole.add_edge(a, b)
        if info.tier == SCALE_UP:
            scale_up.add_edge(a, b)
        elif info.tier == HOST:
            host_links.append((a, b) if a in rank_of else (b, a))
        else:
            routing_edges.append((a, b, info))
    domain_of = np.zeros(len(accelerators), dtype=np.intp)
    domains: list[list[int]] = []
    for nodes in nx.connected_components(scale_up):
        ranks = sorted(rank_of[node] for node in nodes if node in rank_of)
        if ranks:
            domains.append(ranks)
    domains.sort()
    for d, ranks in enumerate(domains):
        domain_of[ranks] = d
    components = sorted((sorted(rank_of[node] for node in nodes if node in rank_of)
                         for nodes in nx.connected_components(whole)), key=lambda c: (-len(c), c[:1]))
    components = [c for c in components if c]
    nodes: list[str] = []
    index: dict[str, int] = {}

    def node_index(name: str) -> int:
        hit = index.get(name)
        if hit is None:
            hit = index[name] = len(nodes)
            nodes.append(name)
        return hit

    adjacency: list[list[tuple[int, int, int]]] = []
    edge_link, edge_cap = [], []
    for a, b, info in routing_edges:
        ia, ib = node_index(a), node_index(b)
        while len(adjacency) < len(nodes):
            adjacency.append([])
        e = len(edge_link)
        edge_link.append(info.index)
        edge_cap.append(info.cap)
        adjacency[ia].append((ib, e, 1))
        adjacency[ib].append((ia, e, -1))
    nic_nodes = {b for _, b in host_links}
    for name in nic_nodes:
        node_index(name)
    while len(adjacency) < len(nodes):
        adjacency.append([])
    is_nic = np.array([items[expanded.nodes[name]["item"]].kind == "nic" for name in nodes], dtype=bool)
    nic_key = {name: rank_key(name) for name in nic_nodes}
    per_domain: list[list[str]] = [[] for _ in domains]
    for accelerator, nic in host_links:
        # A NIC cabled to nothing (its leaf failed, or not yet drawn) carries no channel.
        if nic in index and adjacency[index[nic]] and items[expanded.nodes[nic]["item"]].kind == "nic":
            per_domain[int(domain_of[rank_of[accelerator]])].append(nic)
    domain_nics = [[index[nic] for nic in sorted(set(names), key=nic_key.__getitem__)] for names in per_domain]
    return FlowNetwork(accelerators, domain_of, domain_nics, nodes, is_nic, adjacency,
                       np.array(edge_link, dtype=np.intp), np.array(edge_cap, dtype=float), components)


def drawn_loads(net: FlowNetwork, loads: LinkLoads, drawn_links: int) -> np.ndarray:
    """Per drawn link (index into Fabric.links): the most any of its physical copies carries one way."""
    out = np.zeros(drawn_links)
    if len(net.edge_link):
        np.maximum.at(out, net.edge_link, loads.per_edge())
    return out


def worst_link(net: FlowNetwork, loads: LinkLoads, efficiency: float) -> tuple[int, float, float] | None:
    """(physical edge, its load, its raw GB/s) of the link whose load takes longest, or None."""
    per_edge = loads.per_edge()
    if not len(per_edge) or not per_edge.max() > 0:
        return None
    seconds = per_edge / np.where(net.edge_cap > 0, net.edge_cap * efficiency, math.nan)
    seconds = np.where(per_edge > 0, np.nan_to_num(seconds, nan=math.inf), 0.0)
    e = int(np.argmax(seconds))
    return e, float(per_edge[e]), float(net.edge_cap[e])
