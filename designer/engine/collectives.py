"""Collective operations on the design's fabric: alpha–beta cost models per algorithm.

For a communicator of n ranks (the first n accelerators in topology order, or every `stride`-th
one for data-parallel groups), each algorithm is a sequence of phases. A phase moves a known
number of bytes (a multiple of the message size S) across each nested boundary of the fabric
(the accelerator's own scale-up links, its scale-out injection, then server, rack, scalable unit
... cuts, see `network.py`); its time is the slowest boundary's bytes / (capacity × efficiency)
plus its latency (steps × per-step latency, NCCL-style, for the LL and Simple protocols; the
faster protocol wins as in NCCL). Formulas and the measurements behind the constants
(`calibration.py`): docs/calibration.md.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from designer.engine import calibration as cal
from designer.engine import flows as fl
from designer.engine.network import (HOST, SCALE_OUT, SCALE_UP, Fabric, host_feeds, links_among_first,
                                     switch_levels)
from designer.engine.workloads import WorkloadError
from designer.model.errors import DesignerError
from designer.engine.result import rounded

OPS = ("allreduce", "reduce-scatter", "allgather", "alltoall", "broadcast")
ALGORITHMS = ("ring", "tree", "hierarchical", "nvls", "sharp", "torus")
BUS_FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "reduce-scatter": lambda n: (n - 1) / n,
              "allgather": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0}
INR = ("nvls", "sharp")


class CollectiveError(DesignerError):
    pass


@dataclass
class Term:
    """Bytes (as a multiple of S) through a capacity; `links` are the representative's links
    carrying them, `alike` further links the algorithm loads the same way (every link of a torus),
    `carried` ((links, raw GB/s), ...) links that carry the same bytes through a capacity of their
    own without bounding the time (a unit's leaf–spine links behind its cut)."""

    traffic: float
    cap_eff: float
    cap_raw: float
    where: str
    tier: str
    links: tuple = ()
    alike: tuple = ()
    carried: tuple = ()
    # The flow model's loads (bytes per byte of S, per drawn link: its busiest copy one way), when
    # the term is the flows' (`network_terms`); the utilization shows exactly these.
    loads: np.ndarray | None = None

    @property
    def seconds_per_byte(self) -> float:
        if self.traffic <= 0:
            return 0.0
        return self.traffic / (self.cap_eff * 1e9) if self.cap_eff > 0 else math.inf


@dataclass
class Phase:
    terms: list[Term]
    latency: dict  # protocol → seconds
    bw_factor: dict = field(default_factory=lambda: {"LL": cal.LL_BANDWIDTH_FACTOR,
                                                     "LL128": cal.LL128_BANDWIDTH_FACTOR, "Simple": 1.0})

    def slowest(self) -> Term | None:
        live = [t for t in self.terms if t.traffic > 0]
        return max(live, key=lambda t: t.seconds_per_byte) if live else None


@dataclass
class Layout:
    n: int
    stride: int
    r_dom: int  # ranks per scale-up domain
    m: int  # domains
    crossings: list  # (boundary, ranks per copy, concurrency)
    concurrent: bool = False  # every group of this shape in the job runs at once


def layout(fabric: Fabric, n: int, stride: int = 1, concurrent: bool = False) -> Layout:
    r_dom = fabric.domain_ranks(n, stride)
    m = -(-n // r_dom)
    crossings = []
    for b, r in fabric.boundary_for(n, stride):
        if r < n:
            c = max(1.0, b.accelerators / r) if concurrent else 1.0  # groups of this kind sharing the cut
            crossings.append((b, r, c))
    return Layout(n, stride, r_dom, m, crossings, concurrent)


def _ring_up_cap(fabric: Fabric) -> float:
    if fabric.torus_dims or fabric.torus_holes:
        return 2 * fabric.torus_link_cap  # a ring on a torus, whole or with holes, uses the two links of one dimension
    return fabric.up_raw


def _up_term(fabric: Fabric, traffic: float, eff: float) -> Term:
    cap = _ring_up_cap(fabric)
    return Term(traffic, cap * eff, cap, "accelerator scale-up links", SCALE_UP, tuple(fabric.up_links),
                carried=fabric.up_carried)


def _out_term(fabric: Fabric, traffic: float) -> Term:
    return Term(traffic, fabric.out_eff, fabric.out_raw, "accelerator scale-out injection", SCALE_OUT,
                tuple(fabric.out_links))


def _link_indices(b) -> tuple:
    """A boundary's link indices as a tuple of ints, once per boundary."""
    hit = b.__dict__.get("_link_indices")
    if hit is None:
        hit = b.__dict__["_link_indices"] = tuple(int(i) for i in b.links)
    return hit


def flow_model(fabric: Fabric):
    """The fabric's flow model where it is the reference: every design it expands, but a dragonfly,
    whose adaptive routing (minimal or Valiant) the hierarchy model states (`shapes`)."""
    return fabric.flows if fabric.bisection_cap is None else None


def network_terms(fabric: Fabric, lay: Layout, pattern: str, amount: float, per_copy, uniform: bool = False
                  ) -> list[Term]:
    """What a phase sends between scale-up domains. With the flow model (`flow_model`), one term:
    the flows of `pattern` ("ring", "chain", "tree", "pairs"; `amount` bytes per byte of S on each
    hop) routed over the links as drawn, bounded by the most loaded link. Without it (a design
    above the flow model's limit, a dragonfly), the hierarchy's cuts (`_boundary_terms`, with
    `per_copy` traffic through each)."""
    flows = flow_model(fabric)
    if flows is None:
        return _boundary_terms(lay, per_copy, uniform)
    loads = flows.pattern_loads(pattern, lay.n, lay.stride, lay.concurrent, amount)
    if loads.unrouted:
        return [Term(1.0, 0.0, 0.0, "the links between the ranks' scale-up domains", SCALE_OUT)]
    worst = fl.worst_link(flows, loads, cal.NET_EFFICIENCY)
    if worst is None:
        return []
    edge, load, cap = worst
    index = int(flows.edge_link[edge])
    return [Term(load, cap * cal.NET_EFFICIENCY, cap, f"link {fabric.link_label(index)}", SCALE_OUT, (index,),
                 loads=fl.drawn_loads(flows, loads, len(fabric.links)))]


def _boundary_terms(lay: Layout, per_copy, uniform: bool = False) -> list[Term]:
    """Traffic over each boundary's cut; neighbour traffic (`uniform` False: rings, trees) gets
    the share of the cut it can use (`Boundary.neighbour_share`, below 1 between dragonfly groups)."""
    out = []
    for b, r, c in lay.crossings:
        t = per_copy(b, r) * c
        tier = SCALE_OUT
        share = b.uniform_share if uniform else b.neighbour_share
        out.append(Term(t, b.cap_eff * share, b.cap_raw * share, b.label, tier, _link_indices(b), carried=b.carried))
    return out


def generation(fabric: Fabric) -> cal.Generation:
    """The collective constants of the fabric's scale-up generation (by the medium of the
    representative accelerator's scale-up links), once per fabric."""
    hit = fabric.__dict__.get("_generation")
    if hit is None:
        media = {fabric.links[i].medium for i in fabric.up_links}
        hit = next((cal.GENERATIONS[m] for m in sorted(media) if m in cal.GENERATIONS), cal.GENERIC)
        fabric.__dict__["_generation"] = hit
    return hit


def _ring_latency(fabric: Fabric, steps: int, lay: Layout, algo: str = "ring") -> dict:
    gen = generation(fabric)
    inter = steps * (lay.m / lay.n) if lay.m > 1 else 0.0
    intra = steps - inter
    return {p: cal.BASE_LATENCY[algo][p] + intra * gen.step_latency[p] + inter * cal.NET_STEP_LATENCY[algo][p]
            for p in gen.protocols}


def applicable(fabric: Fabric, op: str, n: int, stride: int = 1) -> list[str]:
    lay = layout(fabric, n, stride)
    algos = ["ring"]
    if op == "alltoall":
        # On one torus a chip's peers sit several hops away: the ring's one-hop formula does not apply.
        return ["torus"] if lay.m == 1 and torus_rings(fabric, n, stride) else ["ring"]
    if op == "allreduce" and n > 2:
        algos.append("tree")
    if op in ("allreduce", "reduce-scatter", "allgather") and lay.m > 1 and lay.r_dom > 1:
        algos.append("hierarchical")
    if op == "allreduce" and fabric.nvls and lay.r_dom > 1:
        algos.append("nvls")
    if op == "allreduce" and fabric.sharp and lay.m > 1:
        algos.append("sharp")
    if op in ("allreduce", "reduce-scatter", "allgather") and torus_rings(fabric, n, stride):
        algos.append("torus")
    return algos


@dataclass(frozen=True)
class TorusRing:
    """A communicator's members along one torus dimension: `size` chips `spacing` apart. `closed`
    when they go all the way round the dimension (a ring over both directions of its links), else
    a segment of it (a line: one direction of each link per ring). Members spaced apart share the
    dimension's links with the `spacing` − 1 groups between them, which run at the same time."""

    size: int
    spacing: int
    closed: bool
    rerouted: bool = False  # on a torus with holes: broken rings detour round them (`torus_rings`)
    # The share of a whole ring's capacity left where failed circuit switches or links broke or
    # thinned lines of its dimension (`TorusLines.factor`).
    intact: float = 1.0

    @property
    def share(self) -> float:
        """The ring's capacity in links of one direction; rerouted round holes, half of it (the
        detour's links carry two rings' bytes), and no more than its broken lines leave it."""
        return (2.0 if self.closed else 1.0) / self.spacing * min(0.5 if self.rerouted else 1.0, self.intact)

    @property
    def where(self) -> str:
        if self.rerouted:
            return f"torus dimension of {self.size} rerouted round its holes"
        if self.intact < 1.0:
            return f"torus dimension of {self.size} with lines broken or thinned"
        if self.closed and self.spacing == 1:
            return f"torus dimension of {self.size}"
        return (f"{self.size} chips {self.spacing} apart round a torus dimension" if self.closed
                else f"a segment of {self.size} chips of a torus dimension")


def torus_rings(fabric: Fabric, n: int, stride: int = 1) -> tuple[TorusRing, ...]:
    """The torus rings a communicator of n ranks, every `stride`-th, runs along in each pod, in the
    order it reduces over them. Ranks fill the torus dimension by dimension, the ranks between two
    members (tensor parallel inside a data-parallel group) taking the first chips of each: as JAX
    lays a device mesh onto a TPU slice, mesh axes on whole dimensions or, with
    `allow_split_physical_axes`, on parts of one (`jax.experimental.mesh_utils.create_device_mesh`;
    MaxText's setting of the same name). Of the orders of the dimensions that fit,
    the one that moves the bytes fastest, then with the fewest steps. A communicator over several
    pods must fill each pod. () when no order fits (12 members, every 4th, on a 16×16 torus).

    On a torus with holes (`Fabric.torus_holes`) a communicator over every chip left stands for
    the whole torus's (1,023 data-parallel ranks, every 4th chip of 4,092, for 1,024) and runs the
    same rings, rerouted: a ring a hole breaks closes round it over a neighbouring line of its
    dimension (through links of the other dimensions, idle in that dimension's phase), whose links
    then carry two rings' bytes, so each phase runs at half a whole ring's capacity (`rerouted`;
    the phase waits for its slowest ring); the steps stay the whole torus's (a detour adds hops to
    a step, not steps). A smaller communicator (a tensor-parallel group) is taken to sit where no
    hole is.

    Where failed circuit switches or links broke or thinned lines of the torus (`Fabric.torus_lines`),
    each ring keeps the share of its dimension's capacity `TorusLines.factor` gives (its broken
    lines detour over neighbouring ones); the dimensions then differ, and the order that moves the
    bytes fastest takes the slowest last, when the message is smallest."""
    dims, total, holes = fabric.torus_dims, fabric.total_accelerators, fabric.torus_holes
    if holes is not None:
        dims = tuple(d for d in holes[0] if d > 1)
        left_per_pod = fabric.domain_size // stride if stride >= 1 else 0
        if stride < 1 or fabric.domain_size % stride or left_per_pod < 1:
            return ()
        if n >= left_per_pod:
            if n % left_per_pod:
                return ()
            pods = n // left_per_pod
            n = pods * (math.prod(dims) // stride)
            total = total // fabric.domain_size * math.prod(dims)
    pod = math.prod(dims) if dims else 0
    if not dims or stride < 1 or pod % stride:
        return ()
    in_pod = min(n, pod // stride)
    if in_pod < 2 or n % in_pod or (n > in_pod and (in_pod * stride != pod or n > total)):
        return ()
    closed = not fabric.torus_open
    lines = fabric.torus_lines
    best, best_cost, seen = (), None, set()
    for order in itertools.permutations(range(len(dims))):  # the drawn order first, kept on a tie
        key = tuple((dims[a], lines.factors(a) if lines is not None else None) for a in order)
        if key in seen:
            continue
        seen.add(key)
        placed = _rings_in_order(tuple(dims[a] for a in order), in_pod, stride, closed=closed)
        if placed is None:
            continue
        rings = [replace(ring, rerouted=holes is not None,
                         intact=1.0 if lines is None else lines.factor(order[at], across_blocks=(
                             ring.closed or ring.size * ring.spacing > lines.block[order[at]])))
                 for at, ring in placed]
        if any(ring.share <= 0.0 for ring in rings):
            continue  # a dimension every line of which lost one hop: the torus falls apart (TorusLines.split)
        rings = tuple(sorted(rings, key=lambda ring: -ring.share))  # the widest ring while the message is whole
        cost, size = 0.0, 1.0
        for ring in rings:
            cost += (ring.size - 1) / ring.size * size / ring.share
            size /= ring.size
        cost = (round(cost, 12), sum(ring.size - 1 for ring in rings))
        if best_cost is None or cost < best_cost:
            best, best_cost = rings, cost
    return best


def _rings_in_order(order: tuple, members: int, stride: int,
                    closed: bool = True) -> list[tuple[int, TorusRing]] | None:
    """The rings of `members` ranks, `stride` chips apart in rank order, when ranks fill the
    dimensions of sizes `order` in that order, each with its place in `order`; None when the
    members do not sit evenly along them. `closed`: whole dimensions wrap around (a torus); on an
    open mesh they are segments too."""
    rings = []
    for at, k in enumerate(order):
        if members == 1:
            break
        if stride >= k:
            if stride % k:
                return None
            stride //= k
            continue
        if k % stride:
            return None
        room = k // stride
        if members >= room:
            if members % room:
                return None
            rings.append((at, TorusRing(room, stride, closed)))
            members //= room
        else:
            if room % members:
                return None
            rings.append((at, TorusRing(members, stride, False)))
            members = 1
        stride = 1
    return rings if members == 1 else None


def phases(fabric: Fabric, op: str, algorithm: str, lay: Layout) -> list[Phase]:
    n, r, m = lay.n, lay.r_dom, lay.m
    f = BUS_FACTOR[op](n)
    gen = generation(fabric)
    ring_eff = gen.ring_efficiency
    step = gen.step_latency
    if n < 2:
        return []
    if algorithm == "ring":
        if op == "alltoall":
            terms = []
            # Rail-only: what goes to another server's GPU on another rail crosses the scale-up
            # fabric once more (to the GPU on that rail), and pays one more scale-up step.
            cross_rail = (n - r) / n * (fabric.rails - 1) / fabric.rails if m > 1 else 0.0
            if r > 1:
                terms.append(_up_term(fabric, (r - 1) / n + cross_rail, ring_eff))
            if m > 1:
                terms.append(_out_term(fabric, (n - r) / n))
            terms += network_terms(fabric, lay, "pairs", 1.0, lambda b, rx: rx * (n - rx) / n, uniform=True)
            lat = {p: cal.BASE_LATENCY["ring"][p] + (cal.NET_STEP_LATENCY["ring"][p] if m > 1 else step[p])
                   + (step[p] if cross_rail else 0.0)
                   for p in gen.protocols}
            return [Phase(terms, lat)]
        steps = {"allreduce": 2 * (n - 1), "broadcast": n - 1}.get(op, n - 1)
        terms = []
        if r > 1:
            terms.append(_up_term(fabric, f, ring_eff))
        if m > 1:
            terms.append(_out_term(fabric, f / r))
        terms += network_terms(fabric, lay, "chain" if op == "broadcast" else "ring", f, lambda b, rx: f)
        return [Phase(terms, _ring_latency(fabric, steps, lay))]
    if algorithm == "tree":
        eff = ring_eff * cal.TREE_BANDWIDTH_FACTOR
        terms = []
        if r > 1:
            terms.append(_up_term(fabric, 2.0, eff))
        if m > 1:
            out = _out_term(fabric, 2.0 / r)
            out.cap_eff *= cal.TREE_BANDWIDTH_FACTOR
            terms.append(out)
        for t in network_terms(fabric, lay, "tree", 1.0, lambda b, rx: 2.0):
            t.cap_eff *= cal.TREE_BANDWIDTH_FACTOR
            terms.append(t)
        lat = {p: cal.BASE_LATENCY["tree"][p] + 2 * ((r - 1) * step[p]
                                                      + math.ceil(math.log2(m)) * cal.NET_STEP_LATENCY["tree"][p])
               for p in gen.protocols}
        return [Phase(terms, lat)]
    if algorithm in ("hierarchical", "sharp", "nvls"):
        out: list[Phase] = []
        intra_steps = r - 1
        rs = Phase([_up_term(fabric, (r - 1) / r, ring_eff)],
                   {p: cal.BASE_LATENCY["ring"][p] + intra_steps * step[p] for p in gen.protocols})
        ag = Phase([_up_term(fabric, (r - 1) / r, ring_eff)], dict(rs.latency))
        simple_only = {"Simple": 1.0}
        nvls_phase = None
        if algorithm == "nvls" or (algorithm == "sharp" and fabric.nvls and r > 1):
            nvls_phase = Phase([_up_term(fabric, 1.0, cal.NVLS_EFFICIENCY)],
                               {"Simple": cal.NVLS_LATENCY},
                               simple_only)
        if m > 1:
            if algorithm == "sharp":
                inter_terms = [_out_term(fabric, 1.0 / r)] + network_terms(fabric, lay, "ring", 1.0, lambda b, rx: 1.0)
                levels = _reduction_levels(fabric, lay, inter_terms)
                inter = Phase(inter_terms,
                              {"Simple": cal.SHARP_BASE_LATENCY + 2 * levels * cal.NET_STEP_LATENCY["ring"]["Simple"]},
                              simple_only)
            else:
                inter = _across_domains(fabric, op, lay)
        else:
            inter = None
        if nvls_phase is not None:
            out.append(nvls_phase)
        elif r > 1:
            if op in ("allreduce", "reduce-scatter"):
                out.append(rs)
        if inter is not None:
            out.append(inter)
        if nvls_phase is None and r > 1 and op in ("allreduce", "allgather"):
            out.append(ag)
        return out
    if algorithm == "torus":
        return _torus_phases(fabric, op, lay)
    raise CollectiveError(f"unknown algorithm '{algorithm}'; choose from auto, {', '.join(ALGORITHMS)}")


def _torus_phases(fabric: Fabric, op: str, lay: Layout) -> list[Phase]:
    """Dimension by dimension over the torus rings the communicator spans (`torus_rings`), as
    TPU collectives run (Kumar et al. 2021, "Exploring the limits of concurrency in ML training on
    Google TPUs", MLSys, section 3: 2-D/3-D reduce-scatter and all-gather on the torus; Jouppi et
    al. 2023, TPU v4, ISCA, section 2: the ICI's 3D torus; Austin et al. 2025, "How to Scale Your
    Model", part 3: a bidirectional ring per mesh axis, latency per hop along it): a reduce-scatter
    is a ring along each dimension in turn (k − 1 steps moving (k − 1)/k of what each chip holds,
    half each way round a whole dimension), the message shrinking by k after each; an all-gather
    is the same stages in reverse, growing by k; an allreduce is both. Over several pods each
    chip's 1/r share crosses the scale-out network between the reduce and the gather
    (`_across_domains`). The call's base latency is paid once, on the first stage in the pod."""
    rings = torus_rings(fabric, lay.n, lay.stride)
    if not rings or op == "broadcast" or (op == "alltoall" and lay.m > 1):
        raise CollectiveError(f"the torus algorithm does not apply to {op} over {lay.n:,} ranks of this design")
    gen = generation(fabric)
    link = fabric.torus_link_cap
    if op == "alltoall":
        return [_torus_alltoall(fabric, rings)]
    reduce, size = [], 1.0
    for ring in rings:
        k = ring.size
        term = Term((k - 1) / k * size, ring.share * link * cal.TORUS_EFFICIENCY, ring.share * link, ring.where,
                    SCALE_UP, tuple(fabric.up_links), fabric.torus_links)
        reduce.append(Phase([term], {p: (k - 1) * gen.step_latency[p] for p in gen.protocols}))
        size /= k
    gather = [Phase([Term(p.terms[0].traffic, p.terms[0].cap_eff, p.terms[0].cap_raw, p.terms[0].where, SCALE_UP,
                          p.terms[0].links, p.terms[0].alike)], dict(p.latency)) for p in reversed(reduce)]
    first = reduce[0] if op in ("allreduce", "reduce-scatter") else gather[0]
    first.latency = {p: v + cal.BASE_LATENCY["ring"][p] for p, v in first.latency.items()}
    across = [_across_domains(fabric, op, lay)] if lay.m > 1 else []
    return {"allreduce": reduce + across + gather, "reduce-scatter": reduce + across,
            "allgather": across + gather}[op]


def _torus_alltoall(fabric: Fabric, rings: tuple[TorusRing, ...]) -> Phase:
    """An all-to-all inside one torus, routed dimension by dimension with every dimension's links
    busy at once (the ICI routes each chip's messages to every other; Jouppi et al. 2023, section
    3, all-to-all on the torus; Austin et al., "How to Scale Your Model", part 3: all-to-all on a
    bidirectional ring of k costs S·k/8 per link): along a ring of k members each chip's S/k to
    every other member travels min(d, k − d) hops, ⌊k²/4⌋/k hops on average, so each chip loads
    the ring with ⌊k²/4⌋/k × S (k/4 for an even ring; a segment, with one direction of its links
    per member, carries the same through half the capacity). The slowest dimension bounds it;
    latency: one step, as a ring's all-to-all inside a scale-up domain."""
    gen = generation(fabric)
    link = fabric.torus_link_cap
    terms = [Term((ring.size * ring.size // 4) / ring.size, ring.share * link * cal.TORUS_EFFICIENCY,
                  ring.share * link, ring.where, SCALE_UP, tuple(fabric.up_links), fabric.torus_links)
             for ring in rings]
    return Phase(terms, {p: cal.BASE_LATENCY["ring"][p] + gen.step_latency[p] for p in gen.protocols})


def _across_domains(fabric: Fabric, op: str, lay: Layout) -> Phase:
    """A ring over the scale-out network across the m scale-up domains after a reduce-scatter inside
    each: every rank carries its 1/r of the message over its own injection, every domain the whole
    message through the cuts above it."""
    r, m = lay.r_dom, lay.m
    g = {"allreduce": 2 * (m - 1) / m}.get(op, (m - 1) / m)
    terms = [_out_term(fabric, g / r)] + network_terms(fabric, lay, "ring", g, lambda b, rx: g)
    steps = {"allreduce": 2 * (m - 1)}.get(op, m - 1)
    return Phase(terms, {p: cal.BASE_LATENCY["ring"][p] + steps * cal.NET_STEP_LATENCY["ring"][p]
                         for p in generation(fabric).protocols})


def lower_bound(fabric: Fabric, op: str, lay: Layout, in_network: bool) -> tuple[float, float]:
    """Seconds per byte of S: the bandwidth lower bound (no latency, raw capacities)."""
    n, r, m = lay.n, lay.r_dom, lay.m
    if n < 2:
        return 0.0
    # A torus chip's all-to-all leaves over all its links, not one dimension's.
    up_cap = fabric.up_raw if op == "alltoall" and fabric.torus_dims else _ring_up_cap(fabric)
    gpu_cap = (up_cap if r > 1 else 0.0) + (fabric.out_raw if m > 1 else 0.0)
    if op == "allreduce":
        gpu = (1.0 if in_network else 2 * (n - 1) / n)
    elif op in ("reduce-scatter", "allgather", "alltoall"):
        gpu = (n - 1) / n
    else:
        gpu = 1.0

    def per_copy(rx: int) -> float:
        if op == "allreduce":
            return 1.0 if in_network else 2 * (math.ceil(n / rx) - 1) / math.ceil(n / rx)
        if op in ("reduce-scatter", "allgather"):
            return (math.ceil(n / rx) - 1) / math.ceil(n / rx)
        if op == "alltoall":
            return rx * (n - rx) / n
        return 1.0

    worst = gpu / (gpu_cap * 1e9) if gpu_cap > 0 else math.inf
    flows = flow_model(fabric)
    if flows is not None:
        # The same traffic as the hierarchy's cuts below, as flows over the links drawn.
        pattern = "pairs" if op == "alltoall" else "chain" if op == "broadcast" else "ring"
        amount = 1.0 if op == "alltoall" else per_copy(fabric.domain_size)
        loads = flows.pattern_loads(pattern, n, lay.stride, lay.concurrent, amount)
        if loads.unrouted:
            return math.inf
        worst_edge = fl.worst_link(flows, loads, 1.0)
        if worst_edge is not None:
            worst = max(worst, worst_edge[1] / (worst_edge[2] * 1e9) if worst_edge[2] > 0 else math.inf)
        return worst
    for b, rx, c in lay.crossings:
        cap = b.cap_raw * (b.uniform_share if op == "alltoall" else b.neighbour_share)
        value = per_copy(rx) * c / (cap * 1e9) if cap > 0 else math.inf
        worst = max(worst, value)
    return worst


@dataclass
class Timing:
    algorithm: str
    time: np.ndarray
    protocol: list
    bound: np.ndarray
    bottleneck: Term | None
    phases: list


def time_collective(fabric: Fabric, op: str, algorithm: str, n: int, sizes, stride: int = 1,
                    concurrent: bool = False) -> Timing:
    sizes = np.asarray(sizes, dtype=float)
    lay = layout(fabric, n, stride, concurrent)
    if n < 2:
        zero = np.zeros_like(sizes)
        return Timing(algorithm, zero, ["-"] * len(sizes), zero, None, [])
    ph = phases(fabric, op, algorithm, lay)
    best = np.full(sizes.shape, np.inf)
    chosen = np.array(["Simple"] * len(sizes), dtype=object)
    ll_cap = generation(fabric).ll_cap(lay.m)
    for p in cal.PROTOCOLS:
        if not all(p in phase.latency for phase in ph):
            continue
        latency = sum(phase.latency[p] for phase in ph)
        per_byte = 0.0
        for phase in ph:
            slow = phase.slowest()
            per_byte += (slow.seconds_per_byte if slow else 0.0) / phase.bw_factor.get(p, 1.0)
        if p == "LL" and ll_cap is not None:
            per_byte = max(per_byte, BUS_FACTOR[op](n) / (ll_cap * 1e9))
        t = latency + sizes * per_byte
        better = t < best
        best = np.where(better, t, best)
        chosen = np.where(better, p, chosen)
    bound = sizes * lower_bound(fabric, op, lay, algorithm in INR)
    main = max(ph, key=lambda q: q.slowest().seconds_per_byte if q.slowest() else 0.0) if ph else None
    return Timing(algorithm, best, list(chosen), bound, main.slowest() if main else None, ph)


def link_utilization(fabric: Fabric, timing: Timing, size: float, ranks: int | None = None) -> np.ndarray:
    """Utilization of every link (per link index, a fraction of its raw capacity) over the
    collective. The phases load the links on the representative accelerator's path (and those a
    term names `alike` or `carried`); by symmetry every link of the same role (`Fabric.link_role`)
    carries what its loaded counterpart does, and a GPU↔NIC link what its NIC sends up
    (`network.host_feeds`). With `ranks` (a communicator of the first accelerators), links no
    rank's path uses stay idle."""
    roles = fabric.link_role
    t = float(np.max(timing.time)) if np.ndim(timing.time) else float(timing.time)
    if not np.isfinite(t) or t <= 0 or not len(roles):
        return np.zeros(len(roles))
    per_role = np.zeros(int(roles.max()) + 1)
    flowed = np.zeros(len(roles))
    caps = _link_caps(fabric)
    by_flows = flow_model(fabric) is not None
    for phase in timing.phases:
        for term in phase.terms:
            if term.loads is not None:
                # The flow model's loads, link by link: no symmetry assumed.
                np.maximum(flowed, term.loads * size / np.where(caps > 0, caps * 1e9, math.inf) / t, out=flowed)
                continue
            if term.traffic <= 0 or term.cap_raw <= 0 or not term.links:
                continue
            if by_flows and term.tier == SCALE_OUT:
                continue  # the flows load the scale-out links themselves, each by what it carries
            if by_flows and term.tier == SCALE_UP and not term.alike:
                # Every server's scale-up links carry the ring's share, whether or not they are drawn
                # alike (a server whose chassis differs from its neighbours').
                term = replace(term, alike=_scale_up_links(fabric))
            u = term.traffic * size / (term.cap_raw * 1e9) / t
            np.maximum.at(per_role, roles[list(term.links + term.alike)], u)
            for links, cap in term.carried:
                np.maximum.at(per_role, roles[list(links)], term.traffic * size / (cap * 1e9) / t)
    util = np.maximum(per_role[roles], flowed)
    host, uplink, weight = host_feeds(fabric)
    if len(host):
        fed = np.zeros(len(util))
        np.add.at(fed, host, weight * util[uplink])
        util = np.maximum(util, fed)
    if ranks is not None:
        used = links_among_first(fabric, ranks)
        if used is not None:
            util = np.where(used, util, 0.0)
    return util


def _reduction_levels(fabric: Fabric, lay: Layout, terms: list[Term]) -> int:
    """The switch tiers an in-network reduction climbs (a leaf 1, its spine 2): the highest switch
    level at an end of a link the phase loads (the flows' links, or the links crossing the
    outermost cut it crosses). At least 1."""
    if any(term.loads is not None for term in terms):
        loaded = [int(i) for term in terms if term.loads is not None for i in np.flatnonzero(term.loads > 0)]
    elif lay.crossings:
        loaded = [int(i) for i in lay.crossings[-1][0].links]
    else:
        loaded = []
    levels, items = switch_levels(fabric), fabric.design.items
    top = max((levels.get(end, 0.0) for i in loaded for end in (fabric.links[i].a, fabric.links[i].b)
               if items[end].kind == "switch"), default=1.0)
    return max(1, int(top)) if math.isfinite(top) else 1


def _link_caps(fabric: Fabric) -> np.ndarray:
    hit = fabric.__dict__.get("_link_caps")
    if hit is None:
        hit = fabric.__dict__["_link_caps"] = np.array([info.cap for info in fabric.links], dtype=float)
    return hit


def _scale_up_links(fabric: Fabric) -> tuple:
    hit = fabric.__dict__.get("_scale_up_links")
    if hit is None:
        hit = fabric.__dict__["_scale_up_links"] = tuple(info.index for info in fabric.links if info.tier == SCALE_UP)
    return hit


def parse_size(text: str) -> int:
    text = str(text).strip()
    units = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
    mult = 1
    if text and text[-1].upper() in units:
        mult = units[text[-1].upper()]
        text = text[:-1]
    elif text.upper().endswith("B") and len(text) > 1 and text[-2].upper() in units:
        mult = units[text[-2].upper()]
        text = text[:-2]
    try:
        value = float(text)
    except ValueError:
        raise CollectiveError(f"size '{text}' is not a number of bytes (use K, M, G suffixes: 1M = 2^20)") from None
    if not math.isfinite(value) or value <= 0:
        raise CollectiveError(f"size must be a positive number of bytes, got '{text}'")
    return int(value * mult)


def collective_rows(fabric: Fabric, op: str, sizes, algorithm: str = "auto",
                    n: int | None = None) -> tuple[list[dict], dict]:
    """Rows per algorithm and size, plus 'auto' rows; and link utilization of the chosen algorithm
    at the largest size."""
    total = fabric.total_accelerators
    n = total if n is None else n
    if n < 1 or n > total:
        raise WorkloadError(f"expected 1 to {total:,} ranks (the accelerators in this design), got {n:,}",
                            "collective.ranks")
    sizes = [int(s) for s in sizes]
    algos = applicable(fabric, op, n)
    if algorithm != "auto":
        if algorithm not in algos:
            raise WorkloadError(f"algorithm '{algorithm}' does not apply to {op} over {n:,} ranks of this design "
                                f"(applicable: {', '.join(algos)})", "collective.algorithm")
        algos = [algorithm]
    timings = {a: time_collective(fabric, op, a, n, sizes) for a in algos}
    rows = []
    factor = BUS_FACTOR[op](n) if n > 1 else 1.0
    for a, tm in timings.items():
        for i, s in enumerate(sizes):
            rows.append(_row(fabric, op, a, n, s, float(tm.time[i]), float(tm.bound[i]), tm.protocol[i], tm.bottleneck,
                             factor))
    chosen_for_util = None
    for i, s in enumerate(sizes):
        best = min(timings, key=lambda a: timings[a].time[i])
        tm = timings[best]
        row = _row(fabric, op, "auto", n, s, float(tm.time[i]), float(tm.bound[i]), tm.protocol[i], tm.bottleneck,
                   factor)
        row["chosen"] = best
        rows.append(row)
        chosen_for_util = (best, s)
    util = np.zeros(len(fabric.links))
    if chosen_for_util and n > 1:
        best, s = chosen_for_util
        tm = time_collective(fabric, op, best, n, [s])
        util = link_utilization(fabric, tm, s, n)
    return rows, {"phase": f"{op} {_human(chosen_for_util[1]) if chosen_for_util else ''} "
                           f"({chosen_for_util[0] if chosen_for_util else ''})",
                  "util": util}


def _row(fabric, op, algorithm, n, size, t, bound, protocol, bottleneck: Term | None, factor) -> dict:
    finite = math.isfinite(t) and t > 0
    algbw = size / t / 1e9 if finite else None
    row = {"op": op, "algorithm": algorithm, "protocol": protocol, "ranks": n, "bytes": size,
           "time_s": rounded(t) if finite else None,
           "algbw_gb_per_s": rounded(algbw) if finite else None,
           "busbw_gb_per_s": rounded(algbw * factor) if finite else None,
           "bound_time_s": rounded(bound) if math.isfinite(bound) else None,
           "bottleneck": None}
    if not finite and n > 1:
        why = no_path_why(bottleneck)
        row["why"] = why
        row["bottleneck"] = {"link": None, "name": "no path",
                             "tier": bottleneck.tier if bottleneck is not None else None,
                             "where": bottleneck.where if bottleneck is not None else None, "why": why}
    elif bottleneck is not None and bottleneck.links:
        # Name the weakest drawn link carrying the slowest term.
        index = min(bottleneck.links, key=lambda i: fabric.links[i].cap)
        link = fabric.links[index]
        row["bottleneck"] = {"link": link.id, "tier": link.tier if link.tier != HOST else SCALE_OUT,
                             "where": bottleneck.where}
        if bottleneck.loads is not None:  # the flows' busiest link, by the names of its ends
            row["bottleneck"]["name"] = fabric.link_label(index)
    return row


def no_path_why(term: Term | None) -> str:
    """Why a collective cannot be timed: the boundary its traffic must cross has no links."""
    if term is None:
        return "no path: the ranks of this communicator are not joined by any link"
    if term.where == "accelerator scale-out injection":
        return ("no path: the ranks span several scale-up domains but their accelerators have no scale-out "
                "path (no NIC with a link to a switch); draw the links that join their servers")
    if term.tier == SCALE_UP:
        return f"no path: the ranks share no {term.where}; draw the scale-up links that join them"
    if term.where == "cluster":
        return ("no path: the ranks sit in separate parts of the design that no link joins; "
                "draw the scale-out links that join them")
    return f"no path: no link leaves the {term.where}, so its accelerators cannot reach the other ranks"


def _human(size: int) -> str:
    for unit, value in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if size >= value and size % value == 0:
            return f"{size // value}{unit}"
    return f"{size}B"

