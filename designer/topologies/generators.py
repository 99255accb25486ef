"""The topology generators. Each takes named parameters and returns a Design built from catalogue
parts, replicated with groups so that a 10,000-GPU cluster stays a few dozen drawn items."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from designer.model import torus as torus_ids
from designer.model.catalog import MAX_ACCELERATOR_SLOTS, MAX_SERVER_NICS, Catalog, Part
from designer.model.design import MAX_TOTAL_COPIES, Design
from designer.model.layout import tidy_in_place
from designer.model.lint import ports_used
from designer.topologies.base import (
    Builder,
    Generator,
    Param,
    TopologyError,
    common_medium,
    new_design,
    with_storage_and_spares,
)
from designer.topologies.sizing import (
    TIER_WORDS,
    Units,
    ceil_div,
    check_size,
    even_split,
    follow_parts,
    leaf_downlinks,
    network_media,
    split,
)

# A torus block is drawn chip by chip: 32×32×32 chips (41,000 items, 98,000 links) is the largest
# that evaluates within the work budget (designer.engine.budget).
MAX_BLOCK_CHIPS = 32_768
_GPU = Param("gpu", str, None, "accelerator part (default: the platform's)", part_kind="accelerator")
_PLATFORM = Param("platform", str, "dgx-h100", "server platform part", part_kind="server")
_NODES = Param("nodes", int, 4, "number of servers", minimum=1, maximum=1_000_000)
_GPN = Param("gpus_per_node", int, None, "accelerators per server (default: the platform's slots)", minimum=0,
             maximum=MAX_ACCELERATOR_SLOTS)
_NIC = Param("nic", str, None, "NIC part (default: the platform's)", part_kind="nic")
_NPN = Param("nics_per_node", int, None, "scale-out NICs per server (default: the platform's)", minimum=0,
             maximum=MAX_SERVER_NICS)
_SWITCH = Param("switch", str, "qm9700", "scale-out switch part", part_kind="switch")
# Defaults that follow the parts named (designer.topologies.sizing.follow_parts).
_PLATFORM_FOR_GPU = Param("platform", str, None, "server platform part (default: the first that carries 'gpu'; "
                          "without 'gpu', dgx-h100)", part_kind="server")
_SWITCH_FOR_NIC = Param("switch", str, None, "scale-out switch part (default: one with the medium and port speed of "
                        "'nic' or the platform's NIC, else the slowest faster ports; the most ports first)",
                        part_kind="switch")
_FABRIC_NODES = Param("nodes", int, 4, "number of servers: any up to what the switches join (non-blocking: k/2 NIC "
                      "ports per leaf, k²/2 in two tiers, k³/4 in three; a partial last unit takes the rest)",
                      minimum=1, maximum=1_000_000)
_TIERS = Param("tiers", int, 0, "switch tiers: 2, 3, or 0 for the fewest that fit", minimum=0, maximum=3)
_OVERSUB = Param("oversubscription", float, 1.0, "leaf downlinks per uplink (1 = non-blocking)", minimum=1.0,
                 maximum=64.0)
_RACK = Param("rack", str, "rack-48u", "rack part the servers go in", part_kind="rack")
_PER_RACK = Param("servers_per_rack", int, 0, "servers per rack (0: as many as the rack's power and height allow)",
                  minimum=0, maximum=64)
_NAME = Param("name", str, "", "design name (default: from the template)")


def _platform_values(p: dict, catalog: Catalog) -> tuple[str, int, str | None, int]:
    platform = catalog[p["platform"]]
    gpu = p.get("gpu") or platform.get("default_accelerator")
    if gpu is None:
        raise TopologyError(f"platform '{platform.id}' has no default accelerator; set parameter 'gpu'")
    gpus = p.get("gpus_per_node")
    gpus = int(platform.number("accelerator_slots")) if gpus is None else gpus
    nic = p.get("nic") or platform.get("default_nic")
    nics = p.get("nics_per_node")
    nics = int(platform.number("default_nics")) if nics is None else nics
    if nics and nic is None:
        raise TopologyError(f"platform '{platform.id}' has no default NIC; set parameter 'nic' or 'nics_per_node=0'")
    nodes = p.get("nodes", 1)
    if nodes * gpus > MAX_TOTAL_COPIES:
        raise TopologyError(f"parameters 'nodes' ({nodes:,}) × {gpus} accelerators per server make "
                            f"{nodes * gpus:,} accelerators, above the limit of {MAX_TOTAL_COPIES:,}; lower 'nodes'")
    return gpu, gpus, nic, nics


def _servers_per_rack(p: dict, catalog: Catalog, nodes: int) -> int:
    if p["servers_per_rack"]:
        # As asked, or (for a block that does not split into such racks) the largest count below it that does.
        wanted = min(p["servers_per_rack"], nodes)
        return max(d for d in range(1, wanted + 1) if nodes % d == 0)
    from designer.model.power import chassis_power_w

    platform, rack = catalog[p["platform"]], catalog[p["rack"]]
    gpu, gpus, _, _ = _platform_values(p, catalog)
    server_w = chassis_power_w(platform, catalog) + gpus * catalog[gpu].number("power_w")
    fit = int(rack.number("height_u") // max(1.0, platform.number("height_u")))
    if server_w > 0:
        fit = min(fit, int(rack.number("power_budget_kw") * 1000 // server_w))
    fit = max(1, fit)
    # The largest count that fits and divides the servers evenly, so every rack is alike.
    return max(d for d in range(1, min(fit, nodes) + 1) if nodes % d == 0)


def _servers(count: int) -> str:
    return f"{count} server" if count == 1 else f"{count} servers"


def _racked_servers(b: Builder, p: dict, parent: str | None, prefix: str, nodes: int, y: float = 320) -> dict:
    """`nodes` servers in identical racks under `parent`; returns the drawn server's ids."""
    catalog = b.catalog
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    per_rack = _servers_per_rack(p, catalog, nodes)
    racks = nodes // per_rack
    rack_parent = b.group(f"{prefix}racks", racks, parent, name=f"{racks} racks", y=y) if racks > 1 else parent
    rack_id = b.item(f"{prefix}rack", "rack", p["rack"], rack_parent, name=catalog[p["rack"]].name)
    server_parent = b.group(f"{prefix}servers", per_rack, rack_id,
                            name=f"{per_rack} servers") if per_rack > 1 else rack_id
    return b.server(f"{prefix}node", p["platform"], server_parent, gpu=gpu, gpus=gpus, nic=nic, nics=nics)


# --- server ---------------------------------------------------------------------------------

def _build_server(p: dict, catalog: Catalog) -> Design:
    follow_parts(p, catalog)
    design = new_design(p["name"] or catalog[p["platform"]].name, f"One {catalog[p['platform']].name}.", "server", p)
    b = Builder(design, catalog)
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    b.server("node", p["platform"], None, gpu=gpu, gpus=gpus, nic=nic, nics=nics)
    return design


# --- rail-optimized fat tree ------------------------------------------------------------------

def _fabric_parts(p: dict, catalog: Catalog, template: str) -> tuple:
    """The parts that follow from the named ones, then (gpu, gpus, nic, nics, switch part, medium)."""
    follow_parts(p, catalog)
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics:
        raise TopologyError(f"{template}: parameter 'nics_per_node' must be at least 1 (one "
                            f"{'rail' if template == 'rail-fat-tree' else 'leaf port'} per NIC)")
    if p["tiers"] == 1:
        raise TopologyError(f"{template}: parameter 'tiers' must be 2 or 3 (or 0 to choose), got 1")
    switch = catalog[p["switch"]]
    try:
        medium = common_medium(catalog, catalog[nic], switch, ("infiniband", "ethernet", "efa"))
    except TopologyError as exc:
        fitting = [n.id for n in catalog.of_kind("nic") if set(network_media(catalog, n)) & set(switch.media)]
        hint = f"; NICs it takes: {', '.join(fitting)} (parameter 'nic')" if fitting else ""
        raise TopologyError(f"{template}: {exc}{hint}") from None
    return gpu, gpus, nic, nics, switch, medium


def _two_tier_spines(full_leaves: int, up: int, partial_leaves: int, up_partial: int, ports: int) -> int | None:
    """Spines above the leaves: the fewest that divide a leaf's uplinks evenly and have the ports
    for every leaf's share (a partial unit's leaves send at least one link to each); None: none do."""
    for spines in _divisors(up):
        if full_leaves * (up // spines) + partial_leaves * max(1, ceil_div(up_partial, spines)) <= ports:
            return spines
    return None


def _build_rail_fat_tree(p: dict, catalog: Catalog) -> Design:
    gpu, gpus, nic, nics, switch, medium = _fabric_parts(p, catalog, "rail-fat-tree")
    ports, oversub, nodes = int(switch.number("ports")), p["oversubscription"], p["nodes"]
    units = split(nodes, p["nodes_per_su"] or leaf_downlinks(ports, oversub))
    per_su, sus, remainder = units.size, units.full, units.rest
    up = math.ceil(per_su / oversub)
    if per_su + up > ports:
        raise TopologyError(f"rail-fat-tree: parameter 'nodes_per_su' ({per_su}) is too large for {switch.name}: "
                            f"a leaf needs {per_su} downlinks + {up} uplinks but has {ports} ports")
    # A partial unit's leaves carry as many uplinks as its servers need (at the same oversubscription).
    up_partial = math.ceil(remainder / oversub)
    partial_leaves = nics if remainder else 0
    two_tier = _two_tier_spines(sus * nics, up, partial_leaves, up_partial, ports)
    tiers = p["tiers"] or (2 if two_tier else 3)
    check_size("rail-fat-tree", nodes * nics, ports, oversub, tiers)
    if tiers == 2 and two_tier is None:
        raise TopologyError(f"rail-fat-tree: {units.count} scalable units of {nics} rail leaves each are more than "
                            f"{ports}-port spines can join in two tiers (at most {ports // nics}); use three tiers "
                            "or larger 'nodes_per_su'")
    total = nodes * gpus
    description = (f"{sus} scalable units of {per_su} {catalog[p['platform']].name}"
                   + (f" and one partial unit of {remainder}" if remainder else "")
                   + f"; GPU i of every server on leaf i of its unit; {oversub:g}:1 at the leaves.")
    design = new_design(p["name"] or f"Rail-optimized fat tree, {total:,} × {catalog[gpu].name}",
                        description, "rail-fat-tree", p)
    b = Builder(design, catalog)
    if tiers == 3:
        try:
            unit_core = _unit_core_sizes(units.count, nics, up, ports)
        except TopologyError:
            # Too many units for every core to reach each one: rail-aligned pods (below).
            pods = _rail_pods(units, nics, up, up_partial, ports)
            if pods is None:
                most = max(ports if 2 * nics <= ports else 0, ports // nics * (ports // 2)) * per_su
                larger = "; raise 'nodes_per_su'" if per_su < leaf_downlinks(ports, oversub) else ""
                raise TopologyError(f"rail-fat-tree: at most {most:,} servers fit three tiers of {ports}-port switches "
                                    f"in scalable units of {per_su} with {nics} rails; this design has {nodes:,}"
                                    f"{larger}") from None
            return _rail_pod_tree(b, p, units, nics, pods, switch.id, medium)

    def unit(group_id: str, count: int, size: int, x: float) -> list[str]:
        parent = b.group(group_id, count, None, name=f"{count} scalable units" if count > 1
                         else f"Partial unit of {_servers(size)}", x=x) if count > 1 or group_id != "su" else None
        server = _racked_servers(b, p, parent, f"{group_id}.", size)
        leaves = []
        for r in range(nics):
            leaf = b.item(f"{group_id}.leaf{r}", "switch", switch.id, parent, name=f"Rail {r} leaf", x=80 * r, y=0)
            b.link(server["nics"][r], leaf, medium)
            leaves.append(leaf)
        return leaves

    full = unit("su", sus, per_su, 0) if sus else []
    partial = unit("sux", 1, remainder, 900) if remainder else []
    if tiers == 2:
        assert two_tier is not None  # refused above
        spines = two_tier
        group = b.group("spines", spines, None, name=f"{spines} spines", y=-200)
        spine = b.item("spines.sw", "switch", switch.id, group, name="Spine")
        for leaf in full:
            b.link(leaf, spine, medium, up // spines)
        for leaf in partial:
            b.link(leaf, spine, medium, max(1, math.ceil(up_partial / spines)))
        return design
    # Three tiers: spines inside each unit, and core group g above spine g of every unit.
    spines_per_su, spine_up, cores = unit_core
    for s in range(spines_per_su):
        group = b.group(f"core{s}", cores, None, name=f"Core group {s}", x=80 * s, y=-260)
        core = b.item(f"core{s}.sw", "switch", switch.id, group, name=f"Core {s}")
        for prefix, leaves, lanes in (("su", full, up // spines_per_su),
                                      ("sux", partial, max(1, math.ceil(up_partial / spines_per_su)))):
            if not leaves:
                continue
            parent = design.items[leaves[0]].parent
            spine = b.item(f"{prefix}.spine{s}", "switch", switch.id, parent, name=f"Spine {s}", x=80 * s, y=-120)
            for leaf in leaves:
                b.link(leaf, spine, medium, lanes)
            up_links = spine_up // cores if prefix == "su" else max(1, math.ceil(nics * lanes / cores))
            b.link(spine, core, medium, up_links)
    return design


def _unit_core_sizes(units: int, nics: int, up: int, ports: int) -> tuple[int, int, int]:
    """Three tiers with spines inside each unit: (spines per unit, uplinks per spine, cores per group)."""
    half = ports // 2
    spines_per_su = _tier_size(up, math.ceil(nics * up / half))
    spine_down = nics * up // spines_per_su
    spine_up = spine_down
    if spine_down + spine_up > ports:
        spine_up = ports - spine_down
    cores = _tier_size(spine_up, math.ceil(units * spine_up / ports))
    return spines_per_su, spine_up, cores


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@dataclass(frozen=True)
class _RailPods:
    """Rail pods: leaf r of `pod_sus` neighbouring units is the pod of rail r of their block, with
    `spines` spines, each taking `lanes` links from every leaf; spine j of every pod meets the
    `cores` cores of core group j. `blocks` full blocks; a last block of `last_sus` full units
    and the partial unit (if any) when the units do not divide, its spines with `last_down`
    downlinks."""

    pod_sus: int
    spines: int
    cores: int
    lanes: int
    blocks: int
    last_sus: int
    last_down: int

    @property
    def down(self) -> int:
        return self.pod_sus * self.lanes


def _rail_pods(units: Units, nics: int, up: int, up_partial: int, ports: int) -> _RailPods | None:
    """The pod size, spines per pod and cores per group with the fewest switches that oversubscribe
    neither the spine nor the core tier: blocks all alike when the units divide into such blocks,
    else full blocks and a last one. None: the units do not fit three tiers."""
    even = _divisors(units.full) if not units.rest else []
    for sizes in (even, range(1, min(units.count, ports // 2) + 1)):
        best = None
        for pod_sus in sizes:
            blocks, last_sus = divmod(units.full, pod_sus)
            last = bool(last_sus or units.rest)
            for spines in _divisors(up):
                lanes = up // spines
                down = pod_sus * lanes
                if 2 * down > ports:
                    continue
                last_down = last_sus * lanes + (max(1, ceil_div(up_partial, spines)) if units.rest else 0)
                cores = next((c for c in _divisors(down) if nics * blocks * (down // c)
                              + (nics * ceil_div(last_down, c) if last else 0) <= ports), None)
                if cores is None:
                    continue
                switches = nics * (blocks + last) * spines + spines * cores
                key = (switches, nics * spines + 2 * spines)
                if best is None or key < best[0]:
                    best = (key, _RailPods(pod_sus, spines, cores, lanes, blocks, last_sus, last_down))
        if best is not None:
            return best[1]
    return None


def _rail_pod_tree(b: Builder, p: dict, units: Units, nics: int, pods: _RailPods, switch_id: str,
                   medium: str) -> Design:
    """A three-tier rail-optimized Clos for more units than a core switch has ports: the k-ary fat
    tree with pods aligned to rails (`_RailPods`)."""
    design = b.design
    spines, cores = pods.spines, pods.cores
    all_pods = nics * (pods.blocks + (1 if pods.last_sus or units.rest else 0))
    design.description += (f" Three tiers in rail pods: leaf r of {pods.pod_sus} units is pod r of its block with "
                           f"{spines} spines; spine j of all {all_pods} pods meets core group j.")

    def units_of(parent: str | None, unit_groups: list[tuple[str, int, int, int]]) -> list[tuple]:
        """A block's units (group id, copies, servers each, lanes to each spine) with their servers."""
        drawn = []
        for group_id, count, size, lanes in unit_groups:
            unit = b.group(group_id, count, parent, name=f"{count} scalable units" if size == units.size
                           else f"Partial unit of {_servers(size)}", x=20 if group_id.endswith("su") else 900,
                           y=100 + 60 * nics) if count > 1 or size != units.size else parent
            drawn.append((unit, _racked_servers(b, p, unit, f"{group_id}.", size), lanes, group_id))
        return drawn

    blocks = []
    if pods.blocks:
        blk = b.group("blk", pods.blocks, None, name=f"{pods.blocks} blocks of {pods.pod_sus} units") \
            if pods.blocks > 1 else None
        blocks.append(("blk", blk, units_of(blk, [("su", pods.pod_sus, units.size, pods.lanes)]), pods.down))
    if pods.last_sus or units.rest:
        last = b.group("blkx", 1, None, name=f"Last block of {units.count - pods.blocks * pods.pod_sus} units",
                       x=1200)
        groups = [("blkx.su", pods.last_sus, units.size, pods.lanes)] if pods.last_sus else []
        if units.rest:
            groups.append(("blkx.sux", 1, units.rest, pods.last_down - pods.last_sus * pods.lanes))
        blocks.append(("blkx", last, units_of(last, groups), pods.last_down))
    # Spine j of a pod and core group j are copy j of two groups of `spines` copies, joined copy to
    # copy (`match`): drawn once however many spines and core groups there are.
    centre = 20 + 100 * nics  # of the row of spine groups below (200 apart, about 160 wide)
    planes = b.group("core", spines, None, name=f"{spines} core groups", x=centre - 100, y=-260) if spines > 1 else None
    cores_group = b.group("core.group", cores, planes, name=f"Core group of {cores}", x=20, y=40)
    core = b.item("core.sw", "switch", switch_id, cores_group, name="Core")
    for r in range(nics):
        for prefix, parent, drawn, spine_down in blocks:
            leaves = []
            for unit, server, lanes, group_id in drawn:
                leaf = b.item(f"{group_id}.leaf{r}", "switch", switch_id, unit, name=f"Rail {r} leaf", x=80 * r, y=0)
                b.link(server["nics"][r], leaf, medium)
                leaves.append((leaf, lanes))
            spine_group = b.group(f"{prefix}.spines{r}", spines, parent, name=f"Rail {r} spines", x=20 + 200 * r,
                                  y=40) if spines > 1 else parent
            spine = b.item(f"{prefix}.spine{r}", "switch", switch_id, spine_group, name=f"Rail {r} spine")
            for leaf, lanes in leaves:
                b.link(leaf, spine, medium, lanes)
            b.link(spine, core, medium, ceil_div(spine_down, cores),
                   match=(spine_group, planes) if planes and spine_group else None)
    return design


def _tier_size(uplinks: int, needed: int) -> int:
    """Switches in the next tier: the fewest that can take the traffic and that divide each
    lower switch's uplinks evenly, so every lower switch reaches every upper one alike."""
    for count in range(max(1, needed), uplinks + 1):
        if uplinks % count == 0:
            return count
    raise TopologyError(
        f"needs {needed} switches in the next tier but each switch below has only {uplinks} uplinks; "
        "use a switch with more ports, fewer nodes, more tiers or more oversubscription")


# --- plain fat tree -----------------------------------------------------------------------------

@dataclass(frozen=True)
class _LeafBlocks:
    """Servers on leaves: blocks of `leaves` leaves and up to `servers` servers, NIC n of each
    server on leaf n·leaves/nics of its block, so a full block fills every leaf's downlinks (one
    leaf when a server's NICs divide them: 4 DGX on a 32-down leaf; 5 on 2 leaves of 20 down).
    `units`: the servers in full blocks and a partial last one."""

    leaves: int
    units: Units
    up: int  # uplinks of a full block's leaf
    up_partial: int  # of the partial block's leaves

    @property
    def count(self) -> int:
        return self.units.count * self.leaves


@dataclass(frozen=True)
class _Pods:
    """Three tiers: `pods` full pods of `per_pod` leaf blocks under `spines` pod spines (each taking
    `lanes` links from every leaf, with `spine_up` uplinks), pod spine j of every pod under the
    `cores` cores of core group j; where the blocks do not divide, a last pod of `last_blocks`
    full blocks and the partial one, its spines with `last_down` downlinks."""

    per_pod: int
    pods: int
    spines: int
    lanes: int
    spine_up: int
    cores: int
    last_blocks: int
    last_down: int


def _fat_tree_pods(blocks: _LeafBlocks, ports: int) -> _Pods | None:
    """Pods of the leaf blocks: all alike when the blocks divide into pods (the largest that fit),
    else full pods of k/2 leaves and a last one. None: the leaves do not fit three tiers."""
    half, units, up = ports // 2, blocks.units, blocks.up
    most = half // blocks.leaves
    if most < 1:
        return None
    even = even_split(units.full, most) if not units.rest else None
    options = [even] if even is not None else []
    per_pod = min(most, units.full)
    options.append(Units(per_pod, *divmod(units.full, per_pod)))
    for pods in options:
        per_pod, full_pods, last_blocks = pods.size, pods.full, pods.rest
        last = bool(last_blocks or units.rest)
        spines = _tier_size(up, math.ceil(per_pod * blocks.leaves * up / half))
        lanes = up // spines
        spine_down = per_pod * blocks.leaves * lanes
        spine_up = min(spine_down, ports - spine_down)
        partial_lanes = max(1, ceil_div(blocks.up_partial, spines)) if units.rest else 0
        last_down = (last_blocks * lanes + partial_lanes) * blocks.leaves
        cores = next((c for c in _divisors(spine_up) if full_pods * (spine_up // c)
                      + (ceil_div(last_down, c) if last else 0) <= ports), None)
        if cores is not None:
            return _Pods(per_pod, full_pods, spines, lanes, spine_up, cores, last_blocks, last_down)
    return None


def _leaf_blocks(nodes: int, nics: int, ports: int, oversub: float) -> list[_LeafBlocks]:
    """The ways to put the servers on leaves, best first: blocks all alike where the servers divide
    into blocks at least half full, then full blocks and a partial one."""
    down = leaf_downlinks(ports, oversub)
    shared = math.gcd(nics, down)
    leaves, most = nics // shared, down // shared
    plans: list[_LeafBlocks] = []
    for units in (even_split(nodes, most, least=ceil_div(most, 2)), split(nodes, most)):
        if units is None or any(plan.units == units for plan in plans):
            continue
        # Uplinks per leaf at the oversubscription, within the ports the downlinks leave.
        full_down, partial_down = units.size * nics // leaves, units.rest * nics // leaves
        up = min(math.ceil(full_down / oversub), ports - full_down)
        plans.append(_LeafBlocks(leaves, units, up, min(up, math.ceil(partial_down / oversub))))
    return plans


def _build_fat_tree(p: dict, catalog: Catalog) -> Design:
    gpu, gpus, nic, nics, switch, medium = _fabric_parts(p, catalog, "fat-tree")
    ports, oversub, nodes = int(switch.number("ports")), p["oversubscription"], p["nodes"]
    if leaf_downlinks(ports, oversub) < 1:
        raise TopologyError(f"fat-tree: {switch.name} has too few ports for a leaf at {oversub:g}:1")
    check_size("fat-tree", nodes * nics, ports, oversub, p["tiers"] or 3)
    plans = _leaf_blocks(nodes, nics, ports, oversub)
    for tiers in (p["tiers"],) if p["tiers"] else (2, 3):
        for blocks in plans:
            top: int | _Pods | None
            if tiers == 2:
                top = _two_tier_spines(blocks.units.full * blocks.leaves, blocks.up,
                                       blocks.leaves if blocks.units.rest else 0, blocks.up_partial, ports)
            else:
                top = _fat_tree_pods(blocks, ports)
            if top is not None:
                return _fat_tree(p, catalog, gpu, gpus, nics, switch.id, medium, blocks, top)
    # Leaf blocks whose leaves do not divide a spine's ports leave a few of them unused.
    block = plans[-1]
    per_top = ports // block.leaves if tiers == 2 else ports * (ports // 2 // block.leaves)
    raise TopologyError(f"fat-tree: at most {per_top * block.units.size:,} servers of {nics} NICs fit "
                        f"{TIER_WORDS[tiers]} tiers of {ports}-port switches in blocks of {block.units.size} on "
                        f"{block.leaves} leaves; this design has {nodes:,}"
                        + ("; use three tiers" if tiers == 2 else ""))


def _fat_tree(p: dict, catalog: Catalog, gpu: str, gpus: int, nics: int, switch_id: str, medium: str,
              blocks: _LeafBlocks, top: int | _Pods) -> Design:
    """Draws the fat tree: two tiers when `top` is the spine count, else pods (`_Pods`)."""
    nodes, oversub, units = p["nodes"], p["oversubscription"], blocks.units
    tiers = 2 if isinstance(top, int) else 3
    shape = f"{units.full} leaves of {units.size} servers" + (f" and one of {units.rest}" if units.rest else "") \
        if blocks.leaves == 1 else (f"{units.full} blocks of {units.size} servers on {blocks.leaves} leaves"
                                    + (f" and one of {units.rest}" if units.rest else ""))
    design = new_design(p["name"] or f"Fat tree, {nodes * gpus:,} × {catalog[gpu].name}",
                        f"{tiers}-tier fat tree of {catalog[switch_id].name}: {shape}, {oversub:g}:1 at the leaves.",
                        "fat-tree", p)
    b = Builder(design, catalog)

    def leaf_block(group_id: str, prefix: str, count: int, size: int, parent: str | None, x: float = 0) -> list[str]:
        block = b.group(group_id, count, parent, name=f"{count} leaf blocks" if size == units.size
                        else f"Partial leaf block of {_servers(size)}", x=x) \
            if count > 1 or size != units.size else parent
        leaves = [b.item(f"{prefix}leaf" if blocks.leaves == 1 else f"{prefix}leaf{n}", "switch", switch_id, block,
                         name="Leaf" if blocks.leaves == 1 else f"Leaf {n}", x=80 * n) for n in range(blocks.leaves)]
        server = _racked_servers(b, p, block, prefix, size)
        for n, nic_id in enumerate(server["nics"]):
            b.link(nic_id, leaves[n * blocks.leaves // nics], medium)
        return leaves

    if isinstance(top, int):
        spines = top
        leaves = leaf_block("leafblock", "leafblock.", units.full, units.size, None)
        group = b.group("spines", spines, None, name=f"{spines} spines", y=-200)
        spine = b.item("spines.sw", "switch", switch_id, group, name="Spine")
        for leaf in leaves:
            b.link(leaf, spine, medium, blocks.up // spines)
        if units.rest:
            for leaf in leaf_block("leafx", "leafx.", 1, units.rest, None, x=900):
                b.link(leaf, spine, medium, max(1, ceil_div(blocks.up_partial, spines)))
        return design
    # Three tiers (k-ary fat tree): pods of leaves, pod spine j of every pod under core group j.
    pods = top
    pod_groups = []
    if pods.pods:
        pod = b.group("pod", pods.pods, None, name=f"{pods.pods} pods")
        leaves = leaf_block("pod.leafblock", "pod.", pods.per_pod, units.size, pod)
        pod_groups.append((pod, [(leaf, pods.lanes) for leaf in leaves], pods.spine_up))
    if pods.last_blocks or units.rest:
        pod = b.group("podx", 1, None, name=f"Last pod of {pods.last_blocks + (1 if units.rest else 0)} leaf blocks",
                      x=1200)
        ends = []
        if pods.last_blocks:
            ends += [(leaf, pods.lanes) for leaf in leaf_block("podx.leafblock", "podx.", pods.last_blocks, units.size,
                                                               pod)]
        if units.rest:
            lanes = max(1, ceil_div(blocks.up_partial, pods.spines))
            ends += [(leaf, lanes) for leaf in leaf_block("podx.leafx", "podx.leafx.", 1, units.rest, pod, x=900)]
        pod_groups.append((pod, ends, pods.last_down))
    # Pod spine j and core group j are copy j of two groups of `spines` copies, joined copy to copy
    # (`match`): drawn once however many spines a pod has.
    spines = pods.spines
    planes = b.group("core", spines, None, name=f"{spines} core groups", y=-300) if spines > 1 else None
    cores = b.group("core.group", pods.cores, planes, name=f"Core group of {pods.cores}", x=20, y=40)
    core = b.item("core.sw", "switch", switch_id, cores, name="Core")
    for pod, ends, spine_up in pod_groups:
        group = b.group(f"{pod}.spines", spines, pod, name=f"{spines} pod spines", y=-150) if spines > 1 else pod
        spine = b.item(f"{pod}.spine", "switch", switch_id, group, name="Pod spine")
        for leaf, lanes in ends:
            b.link(leaf, spine, medium, lanes)
        b.link(spine, core, medium, ceil_div(spine_up, pods.cores), match=(group, planes) if planes else None)
    return design


# --- torus ---------------------------------------------------------------------------------------

def _parse_dims(text: str, name: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in str(text).lower().split("x"))
    except ValueError:
        raise TopologyError(f"torus: parameter '{name}' must look like 4x4x4, got '{text}'") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 or d > 4096 for d in dims):
        raise TopologyError(f"torus: parameter '{name}' must have 1 to 3 sizes from 1 to 4096, got '{text}'")
    return dims


def _build_torus(p: dict, catalog: Catalog) -> Design:
    dims = _parse_dims(p["dims"], "dims")
    block = _parse_dims(p["block"] or p["dims"], "block")
    if len(block) != len(dims) or any(d % k for d, k in zip(dims, block)):
        raise TopologyError(f"torus: parameter 'block' ({p['block']}) must divide 'dims' ({p['dims']}) in every "
                            "dimension")
    if math.prod(dims) > MAX_TOTAL_COPIES:
        raise TopologyError(f"torus: parameter 'dims' ({p['dims']}) makes {math.prod(dims):,} chips, above the limit "
                            f"of {MAX_TOTAL_COPIES:,}")
    if math.prod(block) > MAX_BLOCK_CHIPS:
        name = "block" if p["block"] else "dims"
        raise TopologyError(f"torus: a block of {math.prod(block):,} chips is drawn chip by chip, above the limit of "
                            f"{MAX_BLOCK_CHIPS:,}; set parameter 'block' to a smaller block that divides 'dims' "
                            f"(e.g. block=4x4x4), or lower '{name}'")
    # Saved in the file as the engine reads it back: "16x16x16".
    p["dims"] = "x".join(map(str, dims))
    gpu = p["gpu"] or catalog[p["platform"]].get("default_accelerator")
    gpu_part = catalog[gpu]
    medium = gpu_part.get("scale_up_medium")
    per_block = math.prod(block)
    blocks = math.prod(dims) // per_block
    platform = catalog[p["platform"]]
    per_host = max(1, int(p["gpus_per_node"] or platform.number("accelerator_slots")))
    host_block = _parse_dims(p["host_block"], "host_block") if p["host_block"] else None
    if host_block is not None:
        if len(host_block) != len(block) or any(k % h for k, h in zip(block, host_block)):
            raise TopologyError(f"torus: parameter 'host_block' ({p['host_block']}) must divide 'block' in every "
                                "dimension")
        per_host = math.prod(host_block)
    if per_block % per_host:
        raise TopologyError(f"torus: a block of {per_block} chips does not split into hosts of {per_host}")
    hosts_per_block = per_block // per_host
    per_rack = p["hosts_per_rack"] or hosts_per_block
    if p["rack"] and hosts_per_block % per_rack:
        raise TopologyError(f"torus: parameter 'hosts_per_rack' ({per_rack}) must divide the {hosts_per_block} hosts "
                            "of a block")
    wrap = bool(p["wrap"])
    pods = p["pods"]
    dcn_nic = _dcn_nic(p, catalog, platform) if pods > 1 else None
    if pods * math.prod(dims) > MAX_TOTAL_COPIES:
        raise TopologyError(f"torus: {pods} pods of {math.prod(dims):,} chips are above the limit of "
                            f"{MAX_TOTAL_COPIES:,} chips")
    shape = "×".join(map(str, dims))
    design = new_design(p["name"] or (f"{pods} pods of " if pods > 1 else "")
                        + f"{len(dims)}D torus {shape} of {gpu_part.name}",
                        f"{blocks} blocks of {'×'.join(map(str, block))} chips"
                        + (f" joined through {p['switch']} circuit switches" if blocks > 1 else "")
                        + ("; wrap-around links" if wrap else "; open mesh")
                        + (f"; {pods} pods joined over the data-centre network ({p['dcn_switch']})" if pods > 1 else "")
                        + ".", "torus", p)
    b = Builder(design, catalog)
    # A chip's scale-up lanes shared over its 2 neighbours per dimension (TPU v4: 6 ICI links, one
    # per neighbour; Dojo D1: 576 SerDes lanes, 144 per edge of a 2D mesh).
    lanes = max(1, int(gpu_part.number("scale_up_lanes", 1)) // (2 * len(dims)))
    # Several pods: each a copy of one pod group (its torus and circuit switches), every host's NIC
    # linked to the data-centre network outside them, the slow tier between pods.
    pod = b.group("pod", pods, None, name=f"{pods} pods") if pods > 1 else None
    dcn = b.item("dcn", "switch", p["dcn_switch"], None, name="Data-centre network", y=-400) if pods > 1 else None
    parent = b.group("block", blocks, pod, name=f"{blocks} blocks") if blocks > 1 else pod
    chips = {}
    coords = list(_coordinates(block))
    host_grid = [k // h for k, h in zip(block, host_block)] if host_block else None
    # Layout (positions are relative to the parent): chips in rows of at most 8 (a 2D host block
    # keeps its shape), hosts 4 to a row, racks 5 to a row.
    chip_cols = host_block[0] if host_block and len(host_block) == 2 else min(8, per_host)
    chip_rows = -(-per_host // chip_cols)
    host_w, host_h = 40 + 80 * chip_cols, 80 + 60 * chip_rows
    # A 2D mesh of host blocks is drawn as the mesh: a rack's hosts in one row, racks stacked.
    mesh_layout = bool(host_block) and len(dims) == 2
    hosts_across = (per_rack if p["rack"] else block[1] // host_block[1]) if mesh_layout and host_block \
        else min(4, per_rack if p["rack"] else hosts_per_block)
    racks_across = 1 if mesh_layout else 5
    rack_w = 40 + (host_w + 20) * hosts_across
    rack_h = 60 + (host_h + 20) * -(-(per_rack if p["rack"] else hosts_per_block) // hosts_across)
    for index, coord in enumerate(coords):
        if host_block and host_grid is not None:
            host = _face_index([c // h for c, h in zip(coord, host_block)], host_grid)
            slot = _face_index([c % h for c, h in zip(coord, host_block)], list(host_block))
        else:
            host, slot = index // per_host, index % per_host
        server_id = f"host{host}"
        if server_id not in design.items:
            host_parent, local = parent, host
            if p["rack"]:
                rack, local = divmod(host, per_rack)
                rack_id = f"rack{rack}"
                if rack_id not in design.items:
                    b.item(rack_id, "rack", p["rack"], parent, name=f"Rack {rack}",
                           x=(rack_w + 60) * (rack % racks_across), y=(rack_h + 60) * (rack // racks_across))
                host_parent = rack_id
            b.item(server_id, "server", platform.id, host_parent, name=f"Host {host}",
                   x=20 + (host_w + 20) * (local % hosts_across), y=40 + (host_h + 20) * (local // hosts_across))
            if dcn_nic is not None and dcn is not None:
                b.link(b.item(f"{server_id}-nic", "nic", dcn_nic.id, server_id, name="DCN NIC", y=-40), dcn,
                       common_medium(catalog, dcn_nic, catalog[p["dcn_switch"]]))
        chip = b.item(torus_ids.chip_id(coord), "accelerator", gpu, server_id,
                      name="Chip " + ",".join(map(str, coord)),
                      x=20 + 80 * (slot % chip_cols), y=40 + 60 * (slot // chip_cols))
        chips[coord] = chip
        if dcn_nic is not None:
            b.link(chip, f"{server_id}-nic", common_medium(catalog, gpu_part, dcn_nic, ("pcie",)),
                   int(dcn_nic.number("host_lanes", 16)))
    for coord, chip in chips.items():
        for axis, size in enumerate(block):
            nxt = list(coord)
            nxt[axis] += 1
            if nxt[axis] < size:
                b.link(chip, chips[tuple(nxt)], medium, lanes)
            elif blocks == 1 and wrap and size > 2:
                nxt[axis] = 0
                b.link(chip, chips[tuple(nxt)], medium, lanes)
            elif blocks > 1:
                # The two faces of a block along this axis meet the neighbouring blocks through a
                # circuit switch; each switch serves the same face position of every block.
                first = list(coord)
                first[axis] = 0
                ocs = _circuit_switch(b, p, axis, coord, block, pod)
                b.link(chip, ocs, medium, lanes)
                b.link(chips[tuple(first)], ocs, medium, lanes)
    return design


def _dcn_nic(p: dict, catalog: Catalog, platform: Part) -> Part:
    """The NIC that joins a host to the data-centre network when the torus has several pods."""
    nic = platform.get("default_nic")
    if not nic or not platform.number("nic_slots"):
        raise TopologyError(f"torus: parameter 'pods' ({p['pods']}) joins pods over the data-centre network, but "
                            f"platform '{platform.id}' has no NIC; use a host with one (tpu-v4-host-dcn)")
    return catalog[nic]


def _circuit_switch(b: Builder, p: dict, axis: int, coord: tuple, block: tuple, pod: str | None) -> str:
    """The switch serving one face position along one axis (4×4×4 blocks: 3 axes × 16 = 48)."""
    face = [c for i, c in enumerate(coord) if i != axis]
    per_axis = p["ocs_per_axis"] or math.prod(s for i, s in enumerate(block) if i != axis)
    slot = _face_index(face, [s for i, s in enumerate(block) if i != axis]) % per_axis
    item_id = torus_ids.circuit_switch_id(axis, slot)
    if item_id not in b.design.items:
        b.item(item_id, "switch", p["switch"], pod, name=f"OCS {'xyz'[axis]}{slot}",
               x=80 * (axis * per_axis + slot), y=-200)
    return item_id


def _face_index(face: list[int], sizes: list[int]) -> int:
    index = 0
    for c, s in zip(face, sizes):
        index = index * s + c
    return index


def _coordinates(sizes: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    import itertools

    return itertools.product(*(range(s) for s in sizes))


# --- PCIe memory fabric --------------------------------------------------------------------------

def _build_pcie_fabric(p: dict, catalog: Catalog) -> Design:
    gpu, gpus, _, _ = _platform_values(p, catalog)
    switch = catalog[p["switch"]]
    nodes = p["nodes"]
    total = nodes * gpus
    design = new_design(p["name"] or f"PCIe memory fabric, {total:,} × {catalog[gpu].name}",
                        f"{nodes} × {catalog[p['platform']].name} with {gpus} accelerators each, "
                        f"joined by {switch.name} in one memory domain.", "pcie-fabric", p)
    b = Builder(design, catalog)
    parent = b.group("nodes", nodes, None, name=f"{nodes} nodes") if nodes > 1 else None
    server = b.server("node", p["platform"], parent, gpu=gpu, gpus=gpus, nic=p.get("nic"),
                      nics=p.get("nics_per_node") or 0)
    if nodes > 1:
        node_switches = server["switches"]
        if not node_switches:
            raise TopologyError(f"pcie-fabric: platform '{p['platform']}' has no PCIe switches to join to the fabric")
        medium = common_medium(catalog, switch, catalog[design.items[node_switches[0]].part], ("fabrex",))
        ports = int(switch.number("ports"))
        port_lanes = int(switch.number("port_lanes", 16))
        used = max(ports_used(design, s, catalog) for s in node_switches)
        uplinks = ports - used
        if uplinks < 1:
            raise TopologyError(f"pcie-fabric: the node's {switch.name} switches have no ports left for the fabric")
        try:
            fabric = _tier_size(uplinks, math.ceil(nodes * len(node_switches) * uplinks / ports))
        except TopologyError:
            return _pcie_fabric_three_tiers(design, b, p, server, switch, medium, nodes, uplinks, ports, port_lanes)
        group = b.group("fabric", fabric, None, name=f"{fabric} fabric switches", y=-200)
        top = b.item("fabric.sw", "switch", switch.id, group, name="Fabric switch")
        for node_switch in node_switches:
            b.link(node_switch, top, medium, port_lanes * (uplinks // fabric))
    return design


def _pcie_fabric_three_tiers(design: Design, b: Builder, p: dict, server: dict, switch: Part, medium: str, nodes: int,
                             uplinks: int, ports: int, port_lanes: int) -> Design:
    """Pods of nodes under pod switches, pod switch j of every pod under spine group j.

    Chooses the pod size and switch counts with the least oversubscription at the pod switches,
    then the fewest switches."""
    node_switches = server["switches"]
    per_node = len(node_switches)
    best = None
    for pod_nodes in _divisors(nodes):
        pods = nodes // pod_nodes
        for pod_switches in _divisors(uplinks):
            down = pod_nodes * per_node * (uplinks // pod_switches)
            if down >= ports:
                continue
            pod_up = min(down, ports - down)
            spines = next((c for c in _divisors(pod_up) if pods * (pod_up // c) <= ports), None)
            if spines is None:
                continue
            key = (down / pod_up, pods * pod_switches + pod_switches * spines)
            if best is None or key < best[0]:
                best = (key, pod_nodes, pod_switches, spines, pod_up)
    if best is None:
        raise TopologyError(f"pcie-fabric: {nodes} nodes do not fit three tiers of {switch.name}")
    _, pod_nodes, pod_switches, spines, pod_up = best
    pods = nodes // pod_nodes
    # Re-parent the drawn node: pods of nodes instead of one group of all of them.
    pod = design.update_item("nodes", count=pods, name=f"{pods} pods")
    inner = b.group("pod.nodes", pod_nodes, pod.id, name=f"{pod_nodes} nodes", x=20, y=120)
    design.update_item(server["server"], parent=inner)
    for j in range(pod_switches):
        pod_switch = b.item(f"pod.sw{j}", "switch", switch.id, pod.id, name=f"Pod switch {j}", x=20 + 90 * j, y=40)
        for node_switch in node_switches:
            b.link(node_switch, pod_switch, medium, port_lanes * (uplinks // pod_switches))
        group = b.group(f"spine{j}", spines, None, name=f"Spine group {j}", x=180 * j, y=-250)
        spine = b.item(f"spine{j}.sw", "switch", switch.id, group, name=f"Spine {j}")
        b.link(pod_switch, spine, medium, port_lanes * (pod_up // spines))
    down = pod_nodes * len(node_switches) * (uplinks // pod_switches)
    design.description += (f" Three tiers: {pods} pods of {pod_nodes} nodes under {pod_switches} pod switches "
                           f"({down}:{pod_up} down:up ports), pod switch j of every pod under {spines} spines "
                           "of group j.")
    return design


GENERATORS: dict[str, Generator] = {}


def _register(name: str, summary: str, params: Iterable[Param], build: Callable[[dict, Catalog], Design]) -> None:
    GENERATORS[name] = Generator(name, summary, tuple(params), build)


_register("server", "one server platform with its accelerators, NICs and scale-up fabric",
          [_PLATFORM_FOR_GPU, _GPU, _GPN, _NIC, _NPN, _NAME], _build_server)
_register("rail-fat-tree", "NVIDIA SuperPOD-style scalable units: GPU i of every server on leaf i, leaves to spines",
          [_PLATFORM_FOR_GPU, _GPU, _FABRIC_NODES, _GPN, _NIC, _NPN, _SWITCH_FOR_NIC, _OVERSUB,
           Param("nodes_per_su", int, 0, "servers per scalable unit (0: as many as a leaf's downlinks, k/2 of "
                 "k ports when non-blocking; the last unit takes the rest)", minimum=0, maximum=4096),
           _TIERS, _RACK, _PER_RACK, _NAME], _build_rail_fat_tree)
_register("fat-tree", "leaf–spine (2 tiers) or leaf–spine–core (3 tiers) fat tree, any oversubscription",
          [_PLATFORM_FOR_GPU, _GPU, _FABRIC_NODES, _GPN, _NIC, _NPN, _SWITCH_FOR_NIC, _OVERSUB, _TIERS, _RACK,
           _PER_RACK, _NAME], _build_fat_tree)
_register("torus", "2D/3D torus or mesh of accelerators, optionally built from blocks joined by circuit switches",
          [Param("platform", str, "tpu-v4-host", "host platform", part_kind="server"), _GPU,
           Param("dims", str, "4x4x4", "torus size per dimension, e.g. 16x16x16"),
           Param("block", str, "", "block size per dimension (default: the whole torus)"),
           Param("gpus_per_node", int, 0, "chips per host (0: the platform's)", minimum=0,
                 maximum=MAX_ACCELERATOR_SLOTS),
           Param("host_block", str, "", "chips per host as a sub-block, e.g. 5x5 (default: consecutive chips)"),
           Param("rack", str, None, "rack part the hosts go in (default: no racks)", part_kind="rack"),
           Param("hosts_per_rack", int, 0, "hosts per rack (0: one block per rack)", minimum=0, maximum=4096),
           Param("wrap", int, 1, "1: wrap-around links (torus); 0: open mesh", minimum=0, maximum=1),
           Param("switch", str, "tpu-ocs", "circuit switch joining blocks", part_kind="switch"),
           Param("ocs_per_axis", int, 0, "circuit switches per axis (0: one per face position)", minimum=0,
                 maximum=4096),
           Param("pods", int, 1, "pods of this torus joined over the data-centre network (data parallel across "
                 "them); above 1 the hosts need a NIC", minimum=1, maximum=64),
           Param("dcn_switch", str, "dcn-fabric-200g", "the data-centre network joining the pods", part_kind="switch"),
           Param("nodes", int, 1, "unused by the torus (its size comes from dims)", minimum=1, maximum=1),
           Param("nic", str, None, "unused", part_kind="nic"),
           Param("nics_per_node", int, 0, "unused", minimum=0, maximum=0),
           Param("oversubscription", float, 1.0, "unused", minimum=1.0, maximum=1.0),
           _NAME], _build_torus)
_register("pcie-fabric", "many accelerators behind PCIe switches in one memory domain (GigaIO FabreX style)",
          [Param("platform", str, "supernode-32", "server platform", part_kind="server"), _GPU,
           Param("nodes", int, 1, "number of fabric nodes", minimum=1, maximum=100_000), _GPN,
           Param("switch", str, "fabrex-pcie5", "fabric switch joining the nodes", part_kind="switch"),
           _NIC, Param("nics_per_node", int, 0, "scale-out NICs per node", minimum=0, maximum=MAX_SERVER_NICS),
           Param("oversubscription", float, 1.0, "unused: the fabric is non-blocking", minimum=1.0, maximum=1.0),
           _NAME],
          _build_pcie_fabric)


def generate(template: str, catalog: Catalog | None = None, **params: Any) -> Design:
    from designer.model.catalog import default_catalog

    if template not in GENERATORS:
        raise TopologyError(f"unknown template '{template}'; choose from {', '.join(GENERATORS)}")
    return tidy_in_place(with_storage_and_spares(GENERATORS[template](catalog or default_catalog(), **params)))
