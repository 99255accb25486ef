"""The topology generators. Each takes named parameters and returns a Design built from catalogue
parts, replicated with groups so that a 10,000-GPU cluster stays a few dozen drawn items."""

from __future__ import annotations

import math

from designer.model.catalog import MAX_ACCELERATOR_SLOTS, MAX_SERVER_NICS, Catalog
from designer.model.design import MAX_TOTAL_COPIES, Design
from designer.model.layout import tidy_in_place
from designer.model.lint import ports_used
from designer.topologies.base import Builder, Generator, Param, TopologyError, common_medium, new_design

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
    design = new_design(p["name"] or catalog[p["platform"]].name, f"One {catalog[p['platform']].name}.", "server", p)
    b = Builder(design, catalog)
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    b.server("node", p["platform"], None, gpu=gpu, gpus=gpus, nic=nic, nics=nics)
    return design


# --- rail-optimized fat tree ------------------------------------------------------------------

def _build_rail_fat_tree(p: dict, catalog: Catalog) -> Design:
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics:
        raise TopologyError("rail-fat-tree: parameter 'nics_per_node' must be at least 1 (one rail per NIC)")
    switch = catalog[p["switch"]]
    nodes, per_su = p["nodes"], p["nodes_per_su"] or min(p["nodes"], 32)
    sus, remainder = divmod(nodes, per_su)
    ports, oversub = int(switch.number("ports")), p["oversubscription"]
    up = math.ceil(per_su / oversub)
    if per_su + up > ports:
        raise TopologyError(f"rail-fat-tree: parameter 'nodes_per_su' ({per_su}) is too large for {switch.name}: "
                            f"a leaf needs {per_su} downlinks + {up} uplinks but has {ports} ports")
    total = nodes * gpus
    units = sus + (1 if remainder else 0)
    description = (f"{sus} scalable units of {per_su} {catalog[p['platform']].name}"
                   + (f" and one partial unit of {remainder}" if remainder else "")
                   + f"; GPU i of every server on leaf i of its unit; {oversub:g}:1 at the leaves.")
    design = new_design(p["name"] or f"Rail-optimized fat tree, {total:,} × {catalog[gpu].name}",
                        description, "rail-fat-tree", p)
    b = Builder(design, catalog)
    nic_part = catalog[nic]
    medium = common_medium(catalog, nic_part, switch, ("infiniband", "ethernet", "efa"))
    two_tier_spines = math.ceil(units * nics * up / ports)
    tiers = p["tiers"] or (2 if two_tier_spines <= up else 3)
    if tiers == 3 and not remainder:
        try:
            _unit_core_sizes(sus, nics, up, ports)
        except TopologyError:
            # Too many units for every core to reach each one: rail-aligned pods (below).
            return _rail_pod_tree(b, p, sus, per_su, nics, up, ports, switch.id, medium)

    def unit(group_id: str, count: int, size: int, x: float) -> list[str]:
        parent = b.group(group_id, count, None, name=f"{count} scalable units" if count > 1
                         else f"Partial unit of {size} servers", x=x) if count > 1 or group_id != "su" else None
        server = _racked_servers(b, p, parent, f"{group_id}.", size)
        leaves = []
        for r in range(nics):
            leaf = b.item(f"{group_id}.leaf{r}", "switch", switch.id, parent, name=f"Rail {r} leaf", x=80 * r, y=0)
            b.link(server["nics"][r], leaf, medium)
            leaves.append(leaf)
        return leaves

    full = unit("su", sus, per_su, 0) if sus else []
    partial = unit("sux", 1, remainder, 900) if remainder else []
    # A partial unit's leaves carry as many uplinks as its servers need (at the same oversubscription).
    up_partial = math.ceil(remainder / oversub) if remainder else 0
    if tiers == 2:
        spines = _tier_size(up, two_tier_spines)
        group = b.group("spines", spines, None, name=f"{spines} spines", y=-200)
        spine = b.item("spines.sw", "switch", switch.id, group, name="Spine")
        for leaf in full:
            b.link(leaf, spine, medium, up // spines)
        for leaf in partial:
            b.link(leaf, spine, medium, max(1, math.ceil(up_partial / spines)))
        return design
    # Three tiers: spines inside each unit, and core group g above spine g of every unit.
    spines_per_su, spine_up, cores = _unit_core_sizes(units, nics, up, ports)
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


def _rail_pod_tree(b: Builder, p: dict, sus: int, per_su: int, nics: int, up: int, ports: int,
                   switch_id: str, medium: str) -> Design:
    """A three-tier rail-optimized Clos for more units than a core switch has ports.

    Leaf r of `pod_sus` neighbouring units forms the pod of rail r with its own spines; spine j of
    every pod meets core group j (the k-ary fat tree, with pods aligned to rails). Chooses the pod
    size, spines per pod and cores per group that use the fewest switches without oversubscribing
    the spine or core tier."""
    best = None
    for pod_sus in _divisors(sus):
        for spines in _divisors(up):
            down = pod_sus * (up // spines)
            if 2 * down > ports:
                continue
            pods = nics * (sus // pod_sus)
            cores = next((c for c in _divisors(down) if pods * (down // c) <= ports), None)
            if cores is None:
                continue
            switches = pods * spines + spines * cores
            key = (switches, nics * spines + 2 * spines)
            if best is None or key < best[0]:
                best = (key, pod_sus, spines, cores, down)
    if best is None:
        raise TopologyError(f"rail-fat-tree: {sus} scalable units of {per_su} do not fit a three-tier fabric of "
                            f"{ports}-port switches; use a switch with more ports, other 'nodes_per_su' "
                            "or oversubscription")
    _, pod_sus, spines, cores, down = best
    blocks = sus // pod_sus
    design = b.design
    design.description += (f" Three tiers in rail pods: leaf r of {pod_sus} units is pod r of its block with "
                           f"{spines} spines; spine j of all {nics * blocks} pods meets core group j.")
    block = b.group("blk", blocks, None, name=f"{blocks} blocks of {pod_sus} units") if blocks > 1 else None
    su = b.group("su", pod_sus, block, name=f"{pod_sus} scalable units", x=20,
                 y=100 + 60 * nics) if pod_sus > 1 else block
    server = _racked_servers(b, p, su, "su.", per_su)
    # Spine j of a pod and core group j are copy j of two groups of `spines` copies, joined copy to
    # copy (`match`): drawn once however many spines and core groups there are.
    centre = 20 + 100 * nics  # of the row of spine groups below (200 apart, about 160 wide)
    planes = b.group("core", spines, None, name=f"{spines} core groups", x=centre - 100, y=-260) if spines > 1 else None
    cores_group = b.group("core.group", cores, planes, name=f"Core group of {cores}", x=20, y=40)
    core = b.item("core.sw", "switch", switch_id, cores_group, name="Core")
    for r in range(nics):
        leaf = b.item(f"su.leaf{r}", "switch", switch_id, su, name=f"Rail {r} leaf", x=80 * r, y=0)
        b.link(server["nics"][r], leaf, medium)
        spine_group = b.group(f"blk.spines{r}", spines, block, name=f"Rail {r} spines", x=20 + 200 * r,
                              y=40) if spines > 1 else block
        spine = b.item(f"blk.spine{r}", "switch", switch_id, spine_group, name=f"Rail {r} spine")
        b.link(leaf, spine, medium, up // spines)
        b.link(spine, core, medium, down // cores, match=(spine_group, planes) if planes else None)
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

def _build_fat_tree(p: dict, catalog: Catalog) -> Design:
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics:
        raise TopologyError("fat-tree: parameter 'nics_per_node' must be at least 1")
    switch = catalog[p["switch"]]
    ports, oversub, nodes = int(switch.number("ports")), p["oversubscription"], p["nodes"]
    down = int(ports * oversub // (oversub + 1))
    per_leaf = down // nics
    if per_leaf < 1:
        raise TopologyError(f"fat-tree: {switch.name} has too few ports for {nics} NICs per server")
    leaves = math.ceil(nodes / per_leaf)
    per_leaf = math.ceil(nodes / leaves)
    while nodes % per_leaf:
        per_leaf -= 1
    leaves = nodes // per_leaf
    up = math.ceil(per_leaf * nics / oversub)
    if per_leaf * nics + up > ports:
        up = ports - per_leaf * nics
    total = nodes * gpus
    two_tier_spines = math.ceil(leaves * up / ports)
    tiers = p["tiers"] or (2 if two_tier_spines <= up else 3)
    design = new_design(p["name"] or f"Fat tree, {total:,} × {catalog[gpu].name}",
                        f"{tiers}-tier fat tree of {switch.name}: {leaves} leaves of {per_leaf} servers, "
                        f"{oversub:g}:1 at the leaves.", "fat-tree", p)
    b = Builder(design, catalog)
    medium = common_medium(catalog, catalog[nic], switch, ("infiniband", "ethernet", "efa"))
    if tiers == 2:
        block = b.group("leafblock", leaves, None, name=f"{leaves} leaf blocks") if leaves > 1 else None
        leaf = b.item("leafblock.leaf", "switch", switch.id, block, name="Leaf")
        server = _racked_servers(b, p, block, "leafblock.", per_leaf)
        for nic_id in server["nics"]:
            b.link(nic_id, leaf, medium)
        spines = _tier_size(up, two_tier_spines)
        group = b.group("spines", spines, None, name=f"{spines} spines", y=-200)
        spine = b.item("spines.sw", "switch", switch.id, group, name="Spine")
        b.link(leaf, spine, medium, up // spines)
        return design
    # Three tiers (k-ary fat tree): pods of leaves, pod spine j of every pod under core group j.
    half = ports // 2
    leaves_per_pod = max(d for d in range(1, min(leaves, half) + 1) if leaves % d == 0)
    pods = leaves // leaves_per_pod
    pod_spines = _tier_size(up, math.ceil(leaves_per_pod * up / half))
    spine_down = leaves_per_pod * (up // pod_spines)
    spine_up = min(spine_down, ports - spine_down)
    cores = _tier_size(spine_up, math.ceil(pods * spine_up / ports))
    pod = b.group("pod", pods, None, name=f"{pods} pods")
    block = b.group("pod.leafblock", leaves_per_pod, pod,
                    name=f"{leaves_per_pod} leaf blocks") if leaves_per_pod > 1 else pod
    leaf = b.item("pod.leaf", "switch", switch.id, block, name="Leaf")
    server = _racked_servers(b, p, block, "pod.", per_leaf)
    for nic_id in server["nics"]:
        b.link(nic_id, leaf, medium)
    for j in range(pod_spines):
        spine = b.item(f"pod.spine{j}", "switch", switch.id, pod, name=f"Pod spine {j}", x=80 * j, y=-150)
        b.link(leaf, spine, medium, up // pod_spines)
        group = b.group(f"core{j}", cores, None, name=f"Core group {j}", x=80 * j, y=-300)
        core = b.item(f"core{j}.sw", "switch", switch.id, group, name=f"Core {j}")
        b.link(spine, core, medium, spine_up // cores)
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
    hosts_across = (per_rack if p["rack"] else block[1] // host_block[1]) if mesh_layout \
        else min(4, per_rack if p["rack"] else hosts_per_block)
    racks_across = 1 if mesh_layout else 5
    rack_w = 40 + (host_w + 20) * hosts_across
    rack_h = 60 + (host_h + 20) * -(-(per_rack if p["rack"] else hosts_per_block) // hosts_across)
    for index, coord in enumerate(coords):
        if host_block:
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
            if dcn_nic is not None:
                b.link(b.item(f"{server_id}-nic", "nic", dcn_nic.id, server_id, name="DCN NIC", y=-40), dcn,
                       common_medium(catalog, dcn_nic, catalog[p["dcn_switch"]]))
        chip = b.item("chip" + "-".join(map(str, coord)), "accelerator", gpu, server_id,
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


def _dcn_nic(p: dict, catalog: Catalog, platform):
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
    item_id = f"ocs{axis}-{slot}"
    if item_id not in b.design.items:
        b.item(item_id, "switch", p["switch"], pod, name=f"OCS {'xyz'[axis]}{slot}",
               x=80 * (axis * per_axis + slot), y=-200)
    return item_id


def _face_index(face: list[int], sizes: list[int]) -> int:
    index = 0
    for c, s in zip(face, sizes):
        index = index * s + c
    return index


def _coordinates(sizes: tuple[int, ...]):
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


def _pcie_fabric_three_tiers(design: Design, b: Builder, p: dict, server: dict, switch, medium: str, nodes: int,
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


def _register(name, summary, params, build):
    GENERATORS[name] = Generator(name, summary, tuple(params), build)


_register("server", "one server platform with its accelerators, NICs and scale-up fabric",
          [_PLATFORM, _GPU, _GPN, _NIC, _NPN, _NAME], _build_server)
_register("rail-fat-tree", "NVIDIA SuperPOD-style scalable units: GPU i of every server on leaf i, leaves to spines",
          [_PLATFORM, _GPU, _NODES, _GPN, _NIC, _NPN, _SWITCH, _OVERSUB,
           Param("nodes_per_su", int, 0, "servers per scalable unit (0: up to 32)", minimum=0, maximum=4096),
           Param("tiers", int, 0, "switch tiers: 2, 3, or 0 to choose", minimum=0, maximum=3),
           _RACK, _PER_RACK, _NAME], _build_rail_fat_tree)
_register("fat-tree", "leaf–spine (2 tiers) or leaf–spine–core (3 tiers) fat tree, any oversubscription",
          [_PLATFORM, _GPU, _NODES, _GPN, _NIC, _NPN, _SWITCH, _OVERSUB,
           Param("tiers", int, 0, "switch tiers: 2, 3, or 0 to choose", minimum=0, maximum=3),
           _RACK, _PER_RACK, _NAME], _build_fat_tree)
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


def generate(template: str, catalog: Catalog | None = None, **params) -> Design:
    from designer.model.catalog import default_catalog

    if template not in GENERATORS:
        raise TopologyError(f"unknown template '{template}'; choose from {', '.join(GENERATORS)}")
    return tidy_in_place(GENERATORS[template](catalog or default_catalog(), **params))
