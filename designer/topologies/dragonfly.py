"""The dragonfly (Kim, Dally, Scott, Abts, ISCA 2008; HPE Slingshot): groups of switches joined
all to all inside the group by local links, and every pair of groups joined by global links.

A group is drawn once and replicated. Its switches are drawn one by one (each with its servers),
so the local links are drawn as they are cabled; the global links of every switch go to one
pass-through item, `dragonfly-global-links`, standing for the cables between groups (group to
group is one hop); that part is a `cable_bundle`, so the bill of materials counts the two drawn
ends of a global cable as one cable. A node count that does not fill the last group draws one
partial group: all its switches, with fewer servers."""

from __future__ import annotations

from designer.model.catalog import Catalog
from designer.model.design import Design
from designer.topologies.base import Builder, Param, TopologyError, common_medium, new_design
from designer.topologies.generators import _GPN, _GPU, _NAME, _platform_values, _register
from designer.topologies.sizing import follow_parts

GLOBAL_LINKS_PART = "dragonfly-global-links"
PLATFORM = "mi250x-node"
CABINET_PART = "cray-ex-cabinet"


def _sizes(p: dict, catalog: Catalog, nics: int) -> dict:
    """Endpoints, switches and links per switch, group and group pair; refuses what the switch
    radix cannot join. Defaults follow the switch (balanced dragonfly, Kim et al.: a = 2p = 2h):
    a quarter of the ports to endpoints, half as many switches per group as ports, and the
    ports left for global links."""
    switch = catalog[p["switch"]]
    ports = int(switch.number("ports"))
    per_switch = p["nodes_per_switch"] or max(1, (ports // 4) // max(1, nics))
    a = p["switches_per_group"] or ports // 2
    endpoint_ports = per_switch * nics
    local_ports = a - 1
    h = p["global_ports_per_switch"] or ports - endpoint_ports - local_ports
    if endpoint_ports + local_ports + h > ports or h < 1:
        raise TopologyError(f"dragonfly: a {switch.name} has {ports} ports, but {per_switch} servers × {nics} NICs "
                            f"({endpoint_ports}) + local links to the other {local_ports} switches of its group "
                            f"+ {max(h, 1)} global links need {endpoint_ports + local_ports + max(h, 1)}; lower "
                            "'nodes_per_switch', 'switches_per_group' or 'global_ports_per_switch'")
    per_group = a * per_switch
    nodes = p["nodes"]
    groups = -(-nodes // per_group)
    most_groups = a * h + 1  # every group needs a global link to each other group
    if groups > most_groups:
        raise TopologyError(f"dragonfly: {most_groups * per_group:,} servers is the most a dragonfly of "
                            f"{switch.name} with {a} switches per group, {per_switch} servers and {h} global links "
                            f"per switch can join ({most_groups:,} groups of {per_group}: each group has "
                            f"{a * h} global links, one to every other group); this design needs {nodes:,}")
    per_pair = p["links_per_pair"] or (a * h // (groups - 1) if groups > 1 else 0)
    if groups > 1 and per_pair * (groups - 1) > a * h:
        raise TopologyError(f"dragonfly: parameter 'links_per_pair' ({per_pair}) × {groups - 1} other groups is more "
                            f"than a group's {a * h} global links ({a} switches × {h})")
    return {"switch": switch, "per_switch": per_switch, "a": a, "h": h, "groups": groups, "per_pair": per_pair,
            "full": nodes // per_group, "rest": nodes % per_group, "per_group": per_group}


def _build_dragonfly(p: dict, catalog: Catalog) -> Design:
    follow_parts(p, catalog, PLATFORM)
    platform = catalog[p["platform"]]
    if p["nics_per_node"] is None and not platform.number("default_nics"):
        p["nics_per_node"] = int(platform.number("nic_slots"))  # Frontier's node: 4 slots, none named
    gpu, gpus, nic, nics = _platform_values(p, catalog)
    if not nics or nic is None:
        raise TopologyError("dragonfly: parameter 'nics_per_node' must be at least 1")
    s = _sizes(p, catalog, nics)
    switch, groups, per_pair = s["switch"], s["groups"], s["per_pair"]
    medium = common_medium(catalog, catalog[nic], switch, ("ethernet", "infiniband"))
    total = p["nodes"] * gpus
    design = new_design(
        p["name"] or f"Dragonfly, {total:,} × {catalog[gpu].name}",
        f"{s['full']} dragonfly groups of {s['a']} {switch.name} switches × {s['per_switch']} "
        f"{catalog[p['platform']].name}" + (f" and one partial group of {s['rest']} servers" if s["rest"] else "")
        + f"; switches of a group joined all to all; {per_pair} global links between every two groups.",
        "dragonfly", p)
    p["rack"] = _group_rack(p, catalog, s, gpu, gpus)
    if p["routing"] != "adaptive":
        design.settings["dragonfly_routing"] = p["routing"]
    b = Builder(design, catalog)
    hub = b.item("global", "switch", GLOBAL_LINKS_PART, None, name="Global links") if groups > 1 else None
    global_links = per_pair * (groups - 1)
    if s["full"]:
        parent = b.group("groups", s["full"], None, name="Dragonfly group") if s["full"] > 1 else None
        parent = _cabinet(b, p, "g", parent)
        _group(b, p, "g", parent, [s["per_switch"]] * s["a"], medium, hub, global_links, s["h"], gpu, gpus, nic, nics)
    if s["rest"]:
        # A partly filled group keeps all its switches (a cabinet's switch blades are in place with
        # some compute blades missing), so its local and global links are a full group's: every
        # global cable has its two ends drawn. Its servers spread evenly over the switches (a
        # switch without servers would read as a tier of its own above the others).
        q, r = divmod(s["rest"], s["a"])
        blocks = [q + (1 if j < r else 0) for j in range(s["a"])]
        parent = _cabinet(b, p, "pg", b.group("partial", 1, None, name=f"Partial group of {s['rest']} servers"))
        _group(b, p, "pg", parent, blocks, medium, hub, global_links, s["h"], gpu, gpus, nic, nics)
    return design


def _group_rack(p: dict, catalog: Catalog, s: dict, gpu: str, gpus: int) -> str | None:
    """The rack a group goes in: the one named, refused when a full group overflows its height or
    power budget; by default a Cray EX cabinet when a group fits in one (as Slingshot systems are
    built), else none."""
    from designer.model.power import chassis_power_w

    rack_id = p["rack"] or CABINET_PART
    rack, platform, switch = catalog[rack_id], catalog[p["platform"]], s["switch"]
    height = s["per_group"] * platform.number("height_u") + s["a"] * switch.number("height_u")
    kw = (s["per_group"] * (chassis_power_w(platform, catalog) + gpus * catalog[gpu].number("power_w"))
          + s["a"] * switch.number("power_w")) / 1000
    room, budget = rack.number("height_u"), rack.number("power_budget_kw")
    if height <= room and kw <= budget:
        return rack_id
    if not p["rack"]:
        return None
    raise TopologyError(f"dragonfly: a group of {s['per_group']} servers and {s['a']} switches needs {height:g}U and "
                        f"{kw:,.1f} kW, but a {rack.name} holds {room:g}U and {budget:g} kW; name a larger 'rack' or "
                        "lower 'nodes_per_switch' or 'switches_per_group'")


def _cabinet(b: Builder, p: dict, prefix: str, parent: str | None) -> str | None:
    """The rack a group's switches and servers go in (a Cray EX cabinet is one dragonfly group), or
    `parent` itself when the design draws no racks."""
    if not p["rack"]:
        return parent
    return b.item(f"{prefix}.cabinet", "rack", p["rack"], parent, name=b.catalog[p["rack"]].name)


def _group(b: Builder, p: dict, prefix: str, parent: str | None, blocks: list[int], medium: str, hub: str | None,
           global_links: int, h: int, gpu: str, gpus: int, nic: str, nics: int) -> None:
    """One dragonfly group: a switch per block with its servers, the switches joined all to all,
    and `global_links` spread over the switches (at most `h` each) to the global links item."""
    switches = []
    for j, servers in enumerate(blocks):
        block = b.group(f"{prefix}.b{j}", 1, parent,
                        name=f"Switch {j} and its servers" if servers else f"Switch {j} (no servers)")
        sw = b.item(f"{prefix}.b{j}.sw", "switch", p["switch"], block, name=f"Switch {j}")
        switches.append(sw)
        if not servers:
            continue
        holder = b.group(f"{prefix}.b{j}.nodes", servers, block, name=f"{servers} servers") if servers > 1 else block
        server = b.server(f"{prefix}.b{j}.node", p["platform"], holder, gpu=gpu, gpus=gpus, nic=nic, nics=nics)
        for nic_id in server["nics"]:
            b.link(nic_id, sw, medium)
    for i, a in enumerate(switches):
        for other in switches[i + 1:]:
            b.link(a, other, medium)
    if hub is None:
        return
    each, extra = divmod(global_links, len(switches))
    for j, sw in enumerate(switches):
        lanes = min(h, each + (1 if j < extra else 0))
        if lanes:
            b.link(sw, hub, medium, lanes)


def most_servers(catalog: Catalog, switch: str, nics: int, nodes_per_switch: int = 0, switches_per_group: int = 0,
                 global_ports_per_switch: int = 0) -> int:
    """The most servers a dragonfly of these parts joins (the formula `_sizes` refuses past)."""
    s = _sizes({"switch": switch, "nodes_per_switch": nodes_per_switch, "switches_per_group": switches_per_group,
                "global_ports_per_switch": global_ports_per_switch, "links_per_pair": 0, "nodes": 1}, catalog, nics)
    return (s["a"] * s["h"] + 1) * s["per_group"]


_register("dragonfly", "groups of switches joined all to all, every two groups joined by global links (HPE Slingshot)",
          [Param("platform", str, None, f"server platform part (default: {PLATFORM}, or the first that carries "
                 "'gpu')", part_kind="server"), _GPU,
           Param("nodes", int, 1024, "number of servers (a last group that is not full is drawn as a partial group)",
                 minimum=1, maximum=1_000_000), _GPN,
           Param("nic", str, "slingshot-11-cassini", "NIC part", part_kind="nic"),
           Param("nics_per_node", int, None, "NICs per server (default: the platform's, or its NIC slots when it "
                 "names none)", minimum=0, maximum=64),
           Param("switch", str, None, "dragonfly switch part (default: one with the medium and port speed of 'nic', "
                 "else the slowest faster ports; the most ports first)", part_kind="switch"),
           Param("nodes_per_switch", int, 0, "servers per switch (0: a quarter of the switch's ports ÷ NICs per "
                 "server)", minimum=0, maximum=4096),
           Param("switches_per_group", int, 0, "switches per group (0: half the switch's ports)", minimum=0,
                 maximum=4096),
           Param("global_ports_per_switch", int, 0, "global links per switch (0: the ports left after servers and "
                 "local links)", minimum=0, maximum=4096),
           Param("links_per_pair", int, 0, "global links between two groups (0: as many as the global ports allow)",
                 minimum=0, maximum=4096),
           Param("rack", str, None, "rack part each group goes in, one per group (default: a Cray EX cabinet "
                 "when a group's servers and switches fit its height and power, else no racks)", part_kind="rack"),
           Param("routing", str, "adaptive", "routing between groups: adaptive (the better of minimal and Valiant "
                 "for each pattern, as Slingshot's adaptive routing), or minimal or valiant for every pattern",
                 choices=("adaptive", "minimal", "valiant")),
           _NAME], _build_dragonfly)
__all__ = ["GLOBAL_LINKS_PART", "most_servers"]
