"""Multi-plane fabric: each port of a server's NICs on its own plane, an independent two-tier
rail-optimized fabric (Alibaba HPN's dual plane; NVIDIA's multi-plane SuperNIC designs). Port p
of NIC r is on leaf (plane p, rail r) of its unit; the spines of plane p join that plane's leaves
only. The engine adds the planes' bandwidth up (each is a separate set of links)."""

from __future__ import annotations

from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.topologies.base import Builder, Param, TopologyError, common_medium, new_design
from designer.topologies.generators import (
    _GPN,
    _GPU,
    _NAME,
    _NPN,
    _OVERSUB,
    _PER_RACK,
    _PLATFORM_FOR_GPU,
    _RACK,
    _platform_values,
    _register,
)
from designer.topologies.rail_only import leaf_split, spine_tier, units
from designer.topologies.sizing import follow_parts


def _build_multi_plane(p: dict, catalog: Catalog) -> Design:
    follow_parts(p, catalog)
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics:
        raise TopologyError("multi-plane: parameter 'nics_per_node' must be at least 1")
    nic_part, switch = catalog[nic], catalog[p["switch"]]
    planes = p["planes"] or int(nic_part.number("ports", 1))
    if planes > nic_part.number("ports", 1):
        raise TopologyError(f"multi-plane: parameter 'planes' ({planes}) is more than the "
                            f"{int(nic_part.number('ports'))} ports of a {nic_part.name}: each plane takes one port "
                            "of every NIC")
    ports, oversub, nodes = int(switch.number("ports")), p["oversubscription"], p["nodes"]
    down, up = leaf_split(ports, oversub)
    most_units = ports // nics  # a spine reaches every leaf of its plane: units × rails ≤ its ports
    most = most_units * down
    if nodes > most:
        raise TopologyError(f"multi-plane: {most:,} servers is the most a two-tier plane of {ports}-port "
                            f"{switch.name} can join with {nics} rails ({most_units} units of {down} servers, "
                            f"{oversub:g}:1); this design needs {nodes:,}")
    medium = common_medium(catalog, nic_part, switch, ("infiniband", "ethernet", "efa"))
    platform = catalog[p["platform"]]
    design = new_design(p["name"] or f"{planes}-plane fabric, {nodes * gpus:,} × {catalog[gpu].name}",
                        f"{nodes} {platform.name}; port p of each of the {nics} NICs on plane p, {planes} independent "
                        f"two-tier rail-optimized planes of {switch.name}, {oversub:g}:1 at the leaves.",
                        "multi-plane", p)
    b = Builder(design, catalog)
    keys = [(f"{plane}-{r}", f"Plane {plane} rail {r}") for plane in range(planes) for r in range(nics)]
    drawn = units(b, p, nodes, min(nodes, down), keys, switch.id)
    for unit in drawn:
        for r, nic_id in enumerate(unit["server"]["nics"]):
            for plane in range(planes):
                b.link(nic_id, unit["leaves"][f"{plane}-{r}"], medium)
    for plane in range(planes):
        spine_tier(b, f"plane{plane}", f"plane {plane} spines", switch.id, drawn, [f"{plane}-{r}" for r in range(nics)],
                   up, oversub, ports, medium, f"multi-plane: plane {plane}")
    return design


def most_servers(ports: int, nics: int, oversubscription: float = 1.0) -> int:
    """The most servers a multi-plane fabric of `ports`-port switches joins (two tiers per plane)."""
    return ports // nics * leaf_split(ports, oversubscription)[0]


_register("multi-plane", "each NIC port on its own plane, an independent two-tier rail-optimized fabric",
          [_PLATFORM_FOR_GPU, _GPU, Param("nodes", int, 32, "number of servers", minimum=1, maximum=1_000_000), _GPN,
           Param("nic", str, "cx7-2x200gbe", "NIC part (one port per plane)", part_kind="nic"), _NPN,
           Param("planes", int, 0, "fabric planes (0: one per port of the NIC)", minimum=0, maximum=64),
           Param("switch", str, None, "plane switch part (default: one with the medium and port speed of 'nic', "
                 "else the slowest faster ports; the most ports first)", part_kind="switch"),
           _OVERSUB, _RACK, _PER_RACK, _NAME], _build_multi_plane)
