"""The flow-level network model: collectives as flows between ranks, routed over the links as drawn.

The hierarchy model (`network`) reads cuts off the containers on one representative accelerator's
chain, so a cut no container marks (a hand-drawn leaf with one uplink) is invisible to it and copies
that differ are read as if they did not. This model reads the graph itself. A design of up to
`FLOW_ACCELERATORS` accelerators is expanded (`Design.expand`, one node per physical item) into:

- scale-up *domains*: accelerators joined by scale-up links (an NVLink server, an NVL72 rack, a
  torus), each with the NICs its accelerators have host links to, in drawn order (NIC k is rail k);
- the *routing graph*: NICs and the switches and other transit items the scale-out links join.
  NICs are end points (hosts do not forward), so routes run NIC → switches → NIC.

A collective phase between domains is a set of flows, in bytes per byte of the message S, from a
NIC of one domain to a NIC of another. As NCCL does, channel c of a transfer between two domains
leaves its domain through NIC c mod k and enters the next through NIC c mod k', over lcm(k, k')
channels (rail to rail where the counts agree); rings send to the next domain in rank order, trees
to parent and children of a double binary tree over the domains, all-to-all between every pair.
Flows follow
shortest paths with ECMP: at every hop a flow is split evenly over the physical links that lead one
hop closer to its destination. Loads add up per physical link and direction; a phase takes its
most loaded link's load / (capacity × efficiency), which is its bottleneck.

The scale-out bisection is a minimum cut (networkx max-flow) between the NICs of the two halves of
the ranks. A design whose accelerators are not all joined reaches this model already shrunk to its
largest connected set (`failures.connected_job`). Above `FLOW_ACCELERATORS` the engine keeps the
hierarchy's closed forms (docs/calibration.md).
"""

from __future__ import annotations

import itertools
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
# A scale-up domain of at most this many chips cabled only to each other has its bisection as the
# smallest cut over every halving (6,435 for 16 chips, a few ms); a larger one, between its halves
# in rank order (`FlowNetwork.scale_up_bisection`).
EXACT_BISECTION_CHIPS = 16


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
    """A design expanded for the flow model; built once per fabric (`flow_network`). Ranks are the
    fabric's accelerators in rank order, every physical copy."""

    domain_of: np.ndarray  # per rank: its scale-up domain
    domain_nics: list[list[int]]  # per domain: routing-graph nodes of its NICs, rail order
    is_nic: np.ndarray  # per routing-graph node
    # routing-graph adjacency: node → [(neighbour, physical edge, +1 forward / -1 backward)]
    adjacency: list[list[tuple[int, int, int]]]
    edge_link: np.ndarray  # per physical edge: index into Fabric.links
    edge_cap: np.ndarray  # raw GB/s per direction
    _transit: nx.Graph | None = None  # the routing graph without its NICs (`_distances_to`)
    _distances: dict = field(default_factory=dict)  # target nodes → {transit node: hops}
    _routes: dict = field(default_factory=dict)  # (start, targets) → `_between_switches`
    _patterns: dict = field(default_factory=dict)  # communicator shape → LinkLoads of one byte per hop
    _bisection: list = field(default_factory=list)  # [the figure], once computed
    # The scale-up links as drawn, physical copies, capacity raw GB/s per direction (parallel
    # links add), and each domain's accelerators in rank order: `scale_up_bisection`.
    scale_up: nx.Graph = field(default_factory=nx.Graph)
    domain_nodes: list[list[str]] = field(default_factory=list)

    # -- routing ---------------------------------------------------------------------------------
    def _attached(self, nic: int) -> tuple[int, ...]:
        """The transit nodes a NIC's links reach, each once."""
        return tuple(sorted({other for other, _, _ in self.adjacency[nic] if not self.is_nic[other]}))

    def _distances_to(self, targets: tuple[int, ...]) -> dict[int, int]:
        """Hops from every transit node to the nearest of `targets` (NICs do not forward)."""
        hit = self._distances.get(targets)
        if hit is None:
            if self._transit is None:
                self._transit = nx.Graph()
                self._transit.add_nodes_from(np.flatnonzero(~self.is_nic).tolist())
                self._transit.add_edges_from((node, other) for node, neighbours in enumerate(self.adjacency)
                                             if not self.is_nic[node]
                                             for other, _, _ in neighbours if not self.is_nic[other])
            hit = self._distances[targets] = nx.multi_source_dijkstra_path_length(self._transit, set(targets))
        return hit

    def _between_switches(self, start: int, targets: tuple[int, ...]):
        """One unit of flow from transit node `start` to the nearest of `targets`, split evenly at
        every hop over the physical links one hop closer: (edges, signs, shares) of the links it
        crosses and {target: share arriving there}. Cached: flows between two leaves share it."""
        key = (start, targets)
        hit = self._routes.get(key)
        if hit is not None:
            return hit
        distance = self._distances_to(targets)
        adjacency, is_nic = self.adjacency, self.is_nic
        pending = {start: 1.0}
        levels: dict[int, list[int]] = defaultdict(list)
        levels[distance[start]].append(start)
        edges, signs, shares = [], [], []
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
        hit = self._routes[key] = (np.array(edges, dtype=np.intp), np.array(signs), np.array(shares), pending)
        return hit

    def route(self, flows: dict[tuple[int, int], float]) -> LinkLoads:
        """Loads of NIC-to-NIC flows {(source NIC, destination NIC): bytes per byte of S}, each
        split evenly, hop by hop, over the physical links one hop closer to its destination."""
        loads = LinkLoads(np.zeros(len(self.edge_link)), np.zeros(len(self.edge_link)))
        far = 1 << 30
        adjacency = self.adjacency
        attached = {destination: self._attached(destination) for _, destination in flows}

        def add(e: int, sign: int, amount: float) -> None:
            (loads.forward if sign > 0 else loads.backward)[e] += amount

        # Flows between the same two transit nodes share their route: summed first, routed once.
        between: dict[tuple[int, tuple[int, ...]], float] = defaultdict(float)
        arrivals: dict[int, float] = defaultdict(float)  # destination NIC → what is routed to it
        for (source, destination), amount in flows.items():
            if amount <= 0 or source == destination:
                continue
            direct = [(e, sign) for other, e, sign in adjacency[source] if other == destination]
            if direct:  # a NIC cabled to the other
                for e, sign in direct:
                    add(e, sign, amount / len(direct))
                continue
            targets = attached[destination]
            distance = self._distances_to(targets) if targets else {}
            best = min((distance.get(other, far) for other, _, _ in adjacency[source]), default=far)
            if best >= far:
                loads.unrouted = True
                continue
            hops = [(other, e, sign) for other, e, sign in adjacency[source] if distance.get(other, far) == best]
            for other, e, sign in hops:
                add(e, sign, amount / len(hops))
                between[(other, targets)] += amount / len(hops)
            arrivals[destination] += amount
        landed: dict[tuple[int, ...], dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for (start, targets), amount in between.items():
            edges, signs, shares, arrived = self._between_switches(start, targets)
            up = signs > 0
            np.add.at(loads.forward, edges[up], amount * shares[up])
            np.add.at(loads.backward, edges[~up], amount * shares[~up])
            for node, share in arrived.items():
                landed[targets][node] += amount * share
        # The last hop: what reached a destination's switches goes down its links. Flows to NICs on
        # the same switches were summed, so each destination takes its own flows' share of them.
        into: dict[tuple[int, ...], float] = defaultdict(float)
        for destination, amount in arrivals.items():
            into[attached[destination]] += amount
        for destination, own in arrivals.items():
            fraction = own / into[attached[destination]]
            for node, amount in landed[attached[destination]].items():
                down = [(e, -sign) for other, e, sign in adjacency[destination] if other == node]
                for e, sign in down:
                    add(e, sign, amount * fraction / len(down))
        return loads

    # -- collectives as flows ----------------------------------------------------------------------
    def groups(self, n: int, stride: int, concurrent: bool) -> list[list[int]]:
        """The communicators a phase runs: n ranks every `stride`-th from the first rank; with
        `concurrent`, every such group tiling the ranks at once (a data-parallel group beside the
        others)."""
        ranks = len(self.domain_of)
        span = n * stride
        if span - stride + 1 > ranks:
            raise ValueError(f"a communicator of {n:,} ranks every {stride:,} does not fit in {ranks:,}")
        out = []
        for block in range(max(1, ranks // span) if concurrent else 1):
            for offset in range(stride if concurrent else 1):
                members = [block * span + offset + i * stride for i in range(n)]
                if members[-1] < ranks:
                    out.append(members)
        return out

    def pattern_loads(self, pattern: str, n: int, stride: int, concurrent: bool, amount: float = 1.0) -> LinkLoads:
        """The loads of one phase's flows between domains, for `amount` bytes per byte of S on each
        hop (ring, chain) or tree edge; all-to-all moves S/n between every two ranks. Loads grow
        with the amount: one routing per communicator shape, cached."""
        key = (pattern, n, stride, concurrent)
        unit = self._patterns.get(key)
        if unit is None:
            unit = self._patterns[key] = self.route_between_domains(self._between_domains(pattern, n, stride,
                                                                                          concurrent))
        return LinkLoads(unit.forward * amount, unit.backward * amount, unit.unrouted)

    def _between_domains(self, pattern: str, n: int, stride: int, concurrent: bool) -> dict[tuple[int, int], float]:
        """{(domain, domain): bytes per byte of S} the groups of a pattern send between domains."""
        between: dict[tuple[int, int], float] = defaultdict(float)
        for members in self.groups(n, stride, concurrent):
            domains = [int(d) for d in self.domain_of[members]]
            if pattern in ("ring", "chain"):
                hops = zip(domains, domains[1:] + domains[:1] if pattern == "ring" else domains[1:])
                for a, b in hops:
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
        return between

    def route_between_domains(self, between: dict[tuple[int, int], float]) -> LinkLoads:
        """Domain-to-domain traffic as NIC-to-NIC flows, channel c through NIC c mod k (`MAX_CHANNELS`),
        routed; unrouted where a domain that sends or receives has no NIC cabled."""
        flows: dict[tuple[int, int], float] = defaultdict(float)
        stranded = False
        for (a, b), total in between.items():
            nics_a, nics_b = self.domain_nics[a], self.domain_nics[b]
            if not nics_a or not nics_b:
                stranded = True
                continue
            channels = min(math.lcm(len(nics_a), len(nics_b)), MAX_CHANNELS)
            for c in range(channels):
                flows[(nics_a[c % len(nics_a)], nics_b[c % len(nics_b)])] += total / channels
        loads = self.route(flows)
        loads.unrouted = loads.unrouted or stranded
        return loads

    # -- figures ------------------------------------------------------------------------------------
    def bisection(self) -> float | None:
        """Raw GB/s one way between the two halves of the ranks in rank order: a minimum cut, by
        max-flow, between the NICs of each half's ranks (a domain the halves cut gives each side the
        share of its NICs, in rail order, that its ranks there have). None within one domain."""
        if not self._bisection:
            self._bisection.append(self._min_cut_between_halves())
        return self._bisection[0]

    def scale_up_bisection(self) -> float:
        """Raw GB/s both ways across the halves of a scale-up domain, over its scale-up links as
        drawn, so a hand-drawn torus or mesh reads its cut, not its chips' injection: the smallest
        cut of any halving for a domain of up to EXACT_BISECTION_CHIPS chips cabled only to each
        other (a server's mesh: exact whatever the drawing order), else a minimum cut (max-flow)
        between its halves in rank order. Of several domains, the least (a domain's figure, as a switched
        domain's is); copies of one drawn domain (a replicated server) are cut once."""
        cut_of: dict[tuple, float] = {}
        for nodes in self.domain_nodes:
            if len(nodes) < 2:
                continue
            drawn = tuple(self.scale_up.nodes[node]["item"] for node in nodes)
            if drawn in cut_of:
                continue
            component = nx.node_connected_component(self.scale_up, nodes[0])
            if len(component) == len(nodes) and len(nodes) <= EXACT_BISECTION_CHIPS:
                cut_of[drawn] = 2 * smallest_balanced_cut(self.scale_up.subgraph(nodes), nodes)
                continue
            graph = self.scale_up.subgraph(component).copy()
            half = len(nodes) // 2
            graph.add_edges_from(("first", node) for node in nodes[:half])  # no capacity: unbounded
            graph.add_edges_from((node, "second") for node in nodes[half:])
            cut_of[drawn] = 2 * float(nx.maximum_flow_value(graph.to_directed(), "first", "second"))
        return min(cut_of.values(), default=0.0)

    def _min_cut_between_halves(self) -> float | None:
        ranks = len(self.domain_of)
        if len(set(self.domain_of.tolist())) < 2:
            return None
        size = np.bincount(self.domain_of, minlength=len(self.domain_nics))
        in_first = np.bincount(self.domain_of[:ranks // 2], minlength=len(self.domain_nics))
        first, second = [], []
        for d, nics in enumerate(self.domain_nics):
            if size[d]:
                cut = round(len(nics) * in_first[d] / size[d])
                first += nics[:cut]
                second += nics[cut:]
        graph = nx.DiGraph()
        for node, neighbours in enumerate(self.adjacency):
            for other, e, _ in neighbours:
                if graph.has_edge(node, other):
                    graph[node][other]["capacity"] += float(self.edge_cap[e])
                else:
                    graph.add_edge(node, other, capacity=float(self.edge_cap[e]))
        graph.add_edges_from(("first", nic) for nic in first)  # no capacity: unbounded
        graph.add_edges_from((nic, "second") for nic in second)
        if "first" not in graph or "second" not in graph:
            return 0.0
        return float(nx.maximum_flow_value(graph, "first", "second"))


def smallest_balanced_cut(graph: nx.Graph, nodes: list) -> float:
    """The least capacity of links between two halves (⌊n/2⌋ and ⌈n/2⌉ chips) of `nodes`, over every
    halving: C(16, 8) / 2 = 6,435 at most (`EXACT_BISECTION_CHIPS`)."""
    n = len(nodes)
    index = {node: k for k, node in enumerate(nodes)}
    edges = [(1 << index[a], 1 << index[b], data["capacity"]) for a, b, data in graph.edges(data=True)]
    half = n // 2
    # With even n a halving and its mirror are one cut: keep the first chip on the first side.
    first, rest = ((0,), range(1, n)) if n % 2 == 0 else ((), range(n))
    best = math.inf
    for chosen in itertools.combinations(rest, half - len(first)):
        mask = sum(1 << k for k in (*first, *chosen))
        cut = sum(cap for a, b, cap in edges if bool(mask & a) != bool(mask & b))
        best = min(best, cut)
    return float(best) if best != math.inf else 0.0


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
    """The flow model's view of a design (None above `FLOW_ACCELERATORS` or `limit` physical
    copies). `links`: the fabric's `LinkInfo`s (the links the network model counts);
    `accelerator_ids`: the drawn accelerators it counts (those in a server)."""
    if (sum(design.multiplicity(i) for i in accelerator_ids) > FLOW_ACCELERATORS
            or physical_count(design) > limit):
        return None
    expanded = design.expand(limit)
    items = design.items
    info_of = {info.id: info for info in links}
    order = {item.id: k for k, item in enumerate(design.ordered_items())}
    chains = design.chains()

    def rank_key(node: str) -> tuple:
        """Topology order of a physical copy: the drawn order, copy by copy of each group outermost first."""
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
    scale_up = nx.Graph()
    scale_up.add_nodes_from(accelerators)
    routing = []
    host_links: list[tuple[str, str]] = []  # (accelerator, NIC)
    for a, b, data in expanded.edges(data=True):
        info = info_of.get(data["link"])
        if info is None:
            continue
        if info.tier == SCALE_UP:
            if scale_up.has_edge(a, b):
                scale_up[a][b]["capacity"] += info.cap
            else:
                scale_up.add_edge(a, b, capacity=info.cap)
        elif info.tier == HOST:
            host_links.append((a, b) if a in rank_of else (b, a))
        else:
            routing.append((a, b, info))
    # Scale-up domains: networkx components of the scale-up links, numbered by their first rank.
    domains = sorted(sorted(rank_of[node] for node in nodes if node in rank_of)
                     for nodes in nx.connected_components(scale_up))
    domains = [ranks for ranks in domains if ranks]
    domain_of = np.zeros(len(accelerators), dtype=np.intp)
    for d, ranks in enumerate(domains):
        domain_of[ranks] = d
    index: dict[str, int] = {}
    adjacency: list[list[tuple[int, int, int]]] = []

    def node_index(name: str) -> int:
        hit = index.get(name)
        if hit is None:
            hit = index[name] = len(adjacency)
            adjacency.append([])
        return hit

    edge_link, edge_cap = [], []
    for a, b, info in routing:
        ia, ib = node_index(a), node_index(b)
        adjacency[ia].append((ib, len(edge_link), 1))
        adjacency[ib].append((ia, len(edge_link), -1))
        edge_link.append(info.index)
        edge_cap.append(info.cap)
    names = sorted(index, key=index.__getitem__)
    is_nic = np.array([items[expanded.nodes[name]["item"]].kind == "nic" for name in names], dtype=bool)
    per_domain: list[set[str]] = [set() for _ in domains]
    for accelerator, nic in host_links:
        # A NIC cabled to nothing (its leaf failed, or not yet drawn) carries no channel.
        if nic in index and is_nic[index[nic]]:
            per_domain[int(domain_of[rank_of[accelerator]])].add(nic)
    domain_nics = [[index[nic] for nic in sorted(nics, key=rank_key)] for nics in per_domain]
    for node in scale_up:
        scale_up.nodes[node]["item"] = expanded.nodes[node]["item"]
    return FlowNetwork(domain_of, domain_nics, is_nic, adjacency, np.array(edge_link, dtype=np.intp),
                       np.array(edge_cap, dtype=float), scale_up=scale_up,
                       domain_nodes=[[accelerators[r] for r in ranks] for ranks in domains])


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
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = np.where(per_edge > 0, per_edge / (net.edge_cap * efficiency), 0.0)
    e = int(np.argmax(seconds))
    return e, float(per_edge[e]), float(net.edge_cap[e])
