"""Rail-only fabric (Wang et al., "Rail-only: a low-cost high-performance network for training
LLMs", 2023): NIC r of every server on rail r's switches, and no spine joining the rails. Traffic
between rails crosses a server's scale-up fabric (NVLink) instead.

A rail is one switch while the servers fit its ports; past that each rail is a two-tier tree of
its own (leaves in units of servers, the rail's spines above), still with no link between rails.
The units share one helper with the multi-plane template (`units`)."""

from __future__ import annotations

import math

from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.topologies.base import Builder, Param, TopologyError, common_medium, new_design
from designer.topologies.generators import (
    _GPN,
    _GPU,
    _NAME,
    _NIC,
    _NPN,
    _OVERSUB,
    _PER_RACK,
    _PLATFORM_FOR_GPU,
    _RACK,
    _SWITCH_FOR_NIC,
    _platform_values,
    _racked_servers,
    _register,
    _tier_size,
)
from designer.topologies.sizing import follow_parts


def leaf_split(ports: int, oversubscription: float) -> tuple[int, int]:
    """(downlinks, uplinks) of a leaf of `ports` ports at this oversubscription."""
    down = int(ports * oversubscription // (oversubscription + 1))
    return down, ports - down


def units(b: Builder, p: dict, nodes: int, per_unit: int, leaves: list[tuple[str, str]], switch_id: str) -> list[dict]:
    """Units of `per_unit` servers (racked), each with one leaf per (key, name) in `leaves`; a
    last partial unit when `nodes` does not divide. Returns per drawn unit: its size, its
    server's ids and its leaves by key."""
    full, rest = divmod(nodes, per_unit)
    out = []
    for prefix, count, size in (("u", full, per_unit), ("ux", 1 if rest else 0, rest)):
        if not count:
            continue
        name = f"{count} units of {size} servers" if count > 1 else f"Unit of {size} servers"
        parent = b.group(prefix, count, None, name=name)
        server = _racked_servers(b, p, parent, f"{prefix}.", size)
        drawn = {key: b.item(f"{prefix}.leaf{key}", "switch", switch_id, parent, name=f"{label} leaf",
                             x=80 * k, y=0) for k, (key, label) in enumerate(leaves)}
        out.append({"size": size, "full": prefix == "u", "copies": count, "server": server, "leaves": drawn})
    return out


def spine_tier(b: Builder, group_id: str, name: str, switch_id: str, drawn_units: list[dict], keys: list[str],
               up: int, oversubscription: float, ports: int, medium: str, what: str) -> int:
    """The spines over the leaves `keys` of every unit: each full unit's leaf sends `up` uplinks
    spread evenly over the spines, a partial unit's leaf as many as its servers need. Returns
    the number of spines."""
    copies = sum(u["copies"] for u in drawn_units)
    needed = math.ceil(copies * len(keys) * up / ports)
    try:
        spines = _tier_size(up, needed)
    except TopologyError:
        raise TopologyError(f"{what} needs {needed} spines, but a leaf has only {up} uplinks to reach them all") \
            from None
    group = b.group(group_id, spines, None, name=f"{spines} {name}", y=-200) if spines > 1 else None
    spine = b.item(f"{group_id}.sw", "switch", switch_id, group, name=name.rstrip("s").capitalize())
    for unit in drawn_units:
        lanes = up // spines if unit["full"] else max(1, math.ceil(math.ceil(unit["size"] / oversubscription) / spines))
        for key in keys:
            b.link(unit["leaves"][key], spine, medium, lanes)
    return spines


def _build_rail_only(p: dict, catalog: Catalog) -> Design:
    follow_parts(p, catalog)
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics:
        raise TopologyError("rail-only: parameter 'nics_per_node' must be at least 1 (one rail per NIC)")
    switch = catalog[p["switch"]]
    ports, oversub, nodes = int(switch.number("ports")), p["oversubscription"], p["nodes"]
    down, up = leaf_split(ports, oversub)
    most = ports * down
    if nodes > most:
        raise TopologyError(f"rail-only: {most:,} servers is the most a rail of two tiers of {ports}-port "
                            f"{switch.name} can join ({ports} leaves of {down} servers under {up} spines, "
                            f"{oversub:g}:1); this design needs {nodes:,}")
    medium = common_medium(catalog, catalog[nic], switch, ("infiniband", "ethernet", "efa"))
    platform = catalog[p["platform"]]
    one_tier = nodes <= ports
    design = new_design(p["name"] or f"Rail-only, {nodes * gpus:,} × {catalog[gpu].name}",
                        f"{nodes} {platform.name} on {nics} rails, NIC r of every server on rail r; "
                        + ("one switch per rail" if one_tier else f"each rail a two-tier tree of {switch.name}, "
                           f"{oversub:g}:1 at its leaves")
                        + "; no spine joins the rails: traffic between rails crosses the servers' scale-up fabric.",
                        "rail-only", p)
    b = Builder(design, catalog)
    if one_tier:
        parent = b.group("cluster", 1, None, name=f"{nodes} servers") if nodes > 1 else None
        server = _racked_servers(b, p, parent, "", nodes)
        for r, nic_id in enumerate(server["nics"]):
            rail = b.item(f"rail{r}", "switch", switch.id, None, name=f"Rail {r} switch", x=80 * r, y=-200)
            b.link(nic_id, rail, medium)
        return design
    drawn = units(b, p, nodes, down, [(str(r), f"Rail {r}") for r in range(nics)], switch.id)
    for unit in drawn:
        for r, nic_id in enumerate(unit["server"]["nics"]):
            b.link(nic_id, unit["leaves"][str(r)], medium)
    for r in range(nics):
        spine_tier(b, f"rail{r}", f"rail {r} spines", switch.id, drawn, [str(r)], up, oversub, ports, medium,
                   f"rail-only: rail {r}")
    return design


def most_servers(ports: int, oversubscription: float = 1.0) -> int:
    """The most servers a rail-only fabric of `ports`-port switches joins (two tiers per rail)."""
    return ports * leaf_split(ports, oversubscription)[0]


_register("rail-only", "NIC r of every server on rail r's switches, no spine: rails meet only over NVLink",
          [_PLATFORM_FOR_GPU, _GPU, Param("nodes", int, 32, "number of servers", minimum=1, maximum=1_000_000), _GPN,
           _NIC, _NPN, _SWITCH_FOR_NIC, _OVERSUB, _RACK, _PER_RACK, _NAME], _build_rail_only)
