"""GB200 NVL72 racks as the scale-up domain, joined by a rail-optimized scale-out fabric.

The rack is one platform (`gb200-nvl72`: 72 GPUs on 9 NVLink switch trays, one NVLink domain)
with one NIC per GPU, so the scale-out fabric has 72 rails: NIC r of every rack on leaf r of its
unit. Two tiers while one unit's 72 leaves fit under shared spines (every spine reaching every
leaf needs a switch of at least 72 ports); past that each rail is a two-tier tree of its own
whose spine j meets core group j (rail-aligned, as the three-tier rail-optimized fat tree)."""

from __future__ import annotations

import math

from designer.model.catalog import MAX_SERVER_NICS, Catalog
from designer.model.design import Design
from designer.topologies.base import Builder, Param, TopologyError, common_medium, new_design
from designer.topologies.generators import _GPN, _NAME, _OVERSUB, _platform_values, _register, _tier_size
from designer.topologies.rail_only import leaf_split, spine_tier, units
from designer.topologies.sizing import follow_parts

PLATFORM = "gb200-nvl72"


def _build_nvl72(p: dict, catalog: Catalog) -> Design:
    follow_parts(p, catalog, PLATFORM)
    p = {**p, "servers_per_rack": 1}
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics:
        raise TopologyError("nvl72: parameter 'nics_per_node' must be at least 1 (one rail per NIC)")
    switch = catalog[p["switch"]]
    ports, oversub, racks = int(switch.number("ports")), p["oversubscription"], p["nodes"]
    down, up = leaf_split(ports, oversub)
    if nics > ports:
        raise TopologyError(f"nvl72: {nics} rails need switches of at least {nics} ports (a core or spine meets one "
                            f"switch of every rail); {switch.name} has {ports}")
    per_unit = min(racks, down)
    unit_up = math.ceil(per_unit / oversub)
    two_tier = racks <= down and any(unit_up % s == 0 for s in range(math.ceil(nics * unit_up / ports), unit_up + 1))
    most_units = ports // 2  # a rail's spines: each reaches every unit's leaf with ports/2 down
    most = most_units * down
    if racks > most:
        raise TopologyError(f"nvl72: {most:,} racks is the most a three-tier rail-optimized fabric of {ports}-port "
                            f"{switch.name} can join ({most_units} units of {down} racks per rail, {oversub:g}:1); "
                            f"this design needs {racks:,}")
    medium = common_medium(catalog, catalog[nic], switch, ("infiniband", "ethernet", "efa"))
    platform = catalog[p["platform"]]
    design = new_design(p["name"] or f"NVL72, {racks * gpus:,} × {catalog[gpu].name}",
                        f"{racks} {platform.name} racks, each one NVLink domain of {gpus} GPUs; NIC r of every rack on "
                        f"leaf r of its unit ({nics} rails), "
                        + ("two tiers" if two_tier else "three tiers: each rail a two-tier tree, spine j of every "
                           "rail under core group j") + f" of {switch.name}, {oversub:g}:1 at the leaves.", "nvl72", p)
    b = Builder(design, catalog)
    keys = [(str(r), f"Rail {r}") for r in range(nics)]
    drawn = units(b, p, racks, per_unit, keys, switch.id)
    for unit in drawn:
        for r, nic_id in enumerate(unit["server"]["nics"]):
            b.link(nic_id, unit["leaves"][str(r)], medium)
    if two_tier:
        spine_tier(b, "spines", "spines", switch.id, drawn, [k for k, _ in keys], unit_up, oversub, ports, medium,
                   "nvl72")
        return design
    # Three tiers: rail r's spines take half their ports from the rail's leaves, half to the cores.
    units_count = sum(u["copies"] for u in drawn)
    spines = _tier_size(up, units_count)
    spine_up = units_count * up // spines
    cores = _tier_size(spine_up, math.ceil(nics * spine_up / ports))
    planes = b.group("core", spines, None, name=f"{spines} core groups", y=-400) if spines > 1 else None
    group = b.group("core.group", cores, planes, name=f"Core group of {cores}")
    core = b.item("core.sw", "switch", switch.id, group, name="Core")
    for r in range(nics):
        spine_tier(b, f"rail{r}", f"rail {r} spines", switch.id, drawn, [str(r)], up, oversub, ports // 2, medium,
                   f"nvl72: rail {r}")
        rail_spines = f"rail{r}" if spines > 1 else None
        b.link(f"rail{r}.sw", core, medium, spine_up // cores,
               match=(rail_spines, planes) if planes and rail_spines else None)
    return design


def most_racks(ports: int, oversubscription: float = 1.0) -> int:
    """The most racks an nvl72 fabric of `ports`-port switches joins (three tiers)."""
    return ports // 2 * leaf_split(ports, oversubscription)[0]


_register("nvl72", "GB200 NVL72 racks (72-GPU NVLink domains) joined by a rail-optimized scale-out fabric",
          [Param("platform", str, None, f"rack-scale platform, one NVLink domain per rack (default: {PLATFORM}, or "
                 "the first that carries 'gpu')", part_kind="server"),
           Param("gpu", str, None, "accelerator part (default: the platform's)", part_kind="accelerator"),
           Param("nodes", int, 8, "number of NVL72 racks", minimum=1, maximum=100_000), _GPN,
           Param("nic", str, "cx7-400gbe", "NIC part, one per GPU (default: 400GbE, so 128-port Ethernet "
                 "switches can take all 72 rails)", part_kind="nic"),
           Param("nics_per_node", int, None, "NICs per rack, one rail each (default: the platform's, one per GPU)",
                 minimum=0, maximum=MAX_SERVER_NICS),
           Param("switch", str, None, "scale-out switch part, at least as many ports as rails (default: one with the "
                 "medium and port speed of 'nic', else the slowest faster ports; the most ports first)",
                 part_kind="switch"),
           _OVERSUB, Param("rack", str, "rack-nvl72", "rack part each NVL72 goes in", part_kind="rack"), _NAME],
          _build_nvl72)
