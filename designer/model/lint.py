"""Design rules checked with every evaluation. Each finding names the item and says what is wrong
in plain words; none stops the engine."""

from __future__ import annotations

from dataclasses import dataclass

from designer.model.catalog import Catalog
from designer.model.design import Design, Link
from designer.model.placement import fits_platform

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Finding:
    severity: str
    item: str
    message: str

    def as_dict(self) -> dict:
        return {"severity": self.severity, "item": self.item, "message": self.message}


def lint(design: Design, catalog: Catalog, link_copies: dict | None = None) -> list[Finding]:
    """`link_copies`: `design.all_link_copies()` if the caller already has it."""
    findings: list[Finding] = []
    findings += _unknown_parts(design, catalog)
    findings += _link_media(design, catalog)
    findings += _link_matches(design)
    findings += _switch_ports(design, catalog, link_copies)
    findings += _server_slots(design, catalog)
    findings += _platform_accelerators(design, catalog)
    findings += _rack_budgets(design, catalog)
    findings += _scale_up_between_servers(design, catalog)
    findings += _accelerators_outside_servers(design)
    findings += _unreachable_accelerators(design, catalog)
    findings += _hot_spares(design)
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    return sorted(findings, key=lambda f: (order[f.severity], f.item, f.message))


def _unknown_parts(design: Design, catalog: Catalog) -> list[Finding]:
    out = []
    for item in design.items.values():
        if item.part is None:
            continue
        part = catalog.get(item.part)
        if part is None:
            out.append(Finding(ERROR, item.id, f"{item.label}: part '{item.part}' is not in the catalogue"))
        elif part.kind != item.kind:
            out.append(Finding(ERROR, item.id, f"{item.label}: part '{item.part}' is a {part.kind}, not a {item.kind}"))
    return out


def _link_matches(design: Design) -> list[Finding]:
    """A matched link whose groups were since regrouped or recounted joins every copy to every
    copy until it is fixed: say so, as that is rarely what the design means."""
    out = []
    for link in design.links.values():
        if link.match is not None:
            problem = design.match_problem(link)
            if problem:
                out.append(Finding(ERROR, link.id, f"link {link.id}: {problem}; its copies are counted every-to-every"))
    return out


def _link_media(design: Design, catalog: Catalog) -> list[Finding]:
    out = []
    supports: dict[tuple, bool] = {}  # (part id, medium id) → whether the part takes the medium
    for link in design.links.values():
        medium = catalog.get(link.medium)
        if medium is None or medium.kind != "medium":
            out.append(Finding(ERROR, link.id, f"link {link.id}: medium '{link.medium}' is not in the catalogue"))
            continue
        for end in (link.a, link.b):
            item = design.items[end]
            key = (item.part, link.medium)
            ok = supports.get(key)
            if ok is None:
                part = catalog.get(item.part)
                ok = supports[key] = part is None or link.medium in part.media
            if not ok:
                part = catalog[item.part]  # a part not in the catalogue takes every medium
                supported = ", ".join(part.media) or "none"
                out.append(Finding(ERROR, link.id,
                                   f"link {link.id}: {item.label} ({part.name}) does not support {medium.name}; "
                                   f"it supports {supported}"))
    return out


def ports_used(design: Design, switch_id: str, catalog: Catalog, links: list[Link] | None = None,
               copies: dict | None = None) -> int:
    """Ports one copy of a switch needs for all its links (`copies`: link id → LinkCopies, if known)."""
    switch = catalog.get(design.items[switch_id].part)
    port_lanes = max(1, int(switch.number("port_lanes", 1))) if switch else 1
    used = 0
    for link in links if links is not None else design.links_of(switch_id):
        replication = copies[link.id] if copies is not None else design.link_copies(link)
        end = "a" if link.a == switch_id else "b"
        ports_per_copy = -(-link.lanes // port_lanes)
        used += ports_per_copy * replication.degree_at(end)
    return used


def _switch_ports(design: Design, catalog: Catalog, copies: dict | None = None) -> list[Finding]:
    out = []
    by_item: dict[str, list[Link]] = {}
    if copies is None:
        copies = design.all_link_copies()
    network: dict[str, bool] = {}
    for link in design.links.values():
        by_item.setdefault(link.a, []).append(link)
        by_item.setdefault(link.b, []).append(link)
    for item in design.items.values():
        part = catalog.get(item.part)
        if part is None or item.kind not in ("switch", "nic") or part.kind != item.kind:
            continue
        ports = int(part.number("ports"))
        if item.kind == "nic":
            # A NIC's host link (PCIe, or its declared host medium) does not take a network port.
            links = [l for l in by_item.get(item.id, []) if _network_medium(catalog, l.medium, network)
                     and l.medium != part.get("host_medium")]
        else:
            links = by_item.get(item.id, [])
        # ports_used(design, item.id, catalog, links, copies), with the part already at hand
        port_lanes = max(1, int(part.number("port_lanes", 1)))
        used = 0
        for link in links:
            replication = copies[link.id]
            used += -(-link.lanes // port_lanes) * (replication.b_side if link.a == item.id else replication.a_side)
        if used > ports:
            out.append(Finding(ERROR, item.id,
                               f"{item.label} ({part.name}) needs {used} ports for its links but has {ports}"))
    return out


def _network_medium(catalog: Catalog, medium_id: str, memo: dict[str, bool]) -> bool:
    """A catalogued medium that is not a host bus (PCIe), once per medium."""
    hit = memo.get(medium_id)
    if hit is None:
        medium = catalog.get(medium_id)
        hit = memo[medium_id] = medium is not None and medium.get("family") not in ("pcie",)
    return hit


def _server_slots(design: Design, catalog: Catalog) -> list[Finding]:
    out = []
    index = design.children_index()
    for server in design.items.values():
        part = catalog.get(server.part)
        if server.kind != "server" or part is None or part.kind != "server":
            continue
        counts = {"accelerator": 0, "nic": 0}
        for child in design.descendants(server.id, index):
            if child.kind in counts:
                counts[child.kind] += design.multiplicity(child.id) // design.multiplicity(server.id)
        for kind, slot_field in (("accelerator", "accelerator_slots"), ("nic", "nic_slots")):
            slots = part.get(slot_field)
            if slots is not None and counts[kind] > slots:
                out.append(Finding(ERROR, server.id,
                                   f"{server.label} ({part.name}) holds {counts[kind]} {kind}s "
                                   f"but has {int(slots)} slots"))
    return out


def _platform_accelerators(design: Design, catalog: Catalog) -> list[Finding]:
    """Accelerators that cannot use their server platform's scale-up fabric (an H100 on an MI300X
    baseboard): the engine would still count them on the platform's fabric."""
    out = []
    for item in design.items.values():
        part = catalog.get(item.part)
        if item.kind != "accelerator" or part is None or part.kind != "accelerator":
            continue
        server = design.enclosing(item.id, "server")
        platform = catalog.get(server.part) if server is not None else None
        if (server is not None and platform is not None and platform.kind == "server"
                and not fits_platform(catalog, part, platform)):
            out.append(Finding(ERROR, item.id, f"{item.label} ({part.name}) cannot use the scale-up fabric of "
                                               f"{server.label} ({platform.name})"))
    return out


def _rack_budgets(design: Design, catalog: Catalog) -> list[Finding]:
    from designer.model.power import item_power_w  # local: power needs the catalogue rules

    out = []
    index = design.children_index()
    for rack in design.items.values():
        part = catalog.get(rack.part)
        if rack.kind != "rack" or part is None or part.kind != "rack":
            continue
        rack_copies = design.multiplicity(rack.id)
        height = power = 0.0
        for child in design.descendants(rack.id, index):
            child_part = catalog.get(child.part)
            per_rack = design.multiplicity(child.id) / rack_copies
            if (child_part is not None and child.kind in ("server", "switch")
                    and design.enclosing(child.id, "server") in (None, child)):
                height += child_part.number("height_u") * per_rack
            power += item_power_w(design, child, catalog) * per_rack
        if height > part.number("height_u"):
            out.append(Finding(ERROR, rack.id,
                               f"{rack.label}: contents need {height:g}U "
                               f"but the rack has {part.number('height_u'):g}U"))
        budget_kw = part.number("power_budget_kw")
        if power / 1000 > budget_kw:
            out.append(Finding(WARNING, rack.id,
                               f"{rack.label}: draws {power / 1000:.1f} kW, over its {budget_kw:g} kW power budget"))
    return out


def _scale_up_between_servers(design: Design, catalog: Catalog) -> list[Finding]:
    """A scale-up link (NVLink, Infinity Fabric, ...) from a server to another server or to a switch
    outside it widens the scale-up domain beyond the server, which lifts every collective's figures;
    only platforms built for it (`scale_up.domain_servers` above 1: TPU ICI, the Dojo mesh, FabreX)
    may do so."""
    out = []
    items = design.items
    tiers: dict[str, str | None] = {}
    spans: dict[str | None, bool] = {}  # platform id → its scale-up domain may span servers
    for link in design.links.values():
        tier = tiers.get(link.medium, "")
        if tier == "":
            medium = catalog.get(link.medium)
            tier = tiers[link.medium] = medium.get("tier") if medium is not None else None
        if tier != "scale-up" or link.a not in items or link.b not in items:
            continue
        if {items[link.a].kind, items[link.b].kind} & {"nic", "cpu"}:
            continue  # a host link, not the scale-up fabric
        servers = [design.enclosing(end, "server") for end in (link.a, link.b)]
        inside = [server for server in servers if server is not None]
        if not inside or (len(inside) == 2 and inside[0].id == inside[1].id):
            continue
        closed = []
        for server in inside:
            hit = spans.get(server.part)
            if hit is None:
                part = catalog.get(server.part)
                scale_up = (part.get("scale_up") if part is not None else None) or {}
                hit = spans[server.part] = scale_up.get("domain_servers", 1) > 1
            if not hit:
                closed.append(server)
        if closed:
            ends = " and ".join(f"{items[end].label} ({server.label if server else 'outside any server'})"
                                for end, server in zip((link.a, link.b), servers))
            platform = catalog.get(closed[0].part)
            name = platform.name if platform is not None else closed[0].part
            out.append(Finding(ERROR, link.id,
                               f"link {link.id} joins the scale-up fabric of {ends}, but the {name} platform's "
                               "scale-up domain ends at the server (its catalogue entry declares no domain_servers); "
                               "join servers through their NICs and a scale-out switch"))
    return out


def _accelerators_outside_servers(design: Design) -> list[Finding]:
    """An accelerator needs a server (its host, power and NICs); the engine leaves one outside any
    server out of the network, collective and training figures."""
    stray = _stray_accelerators(design)
    out = [Finding(ERROR, item.id, f"{item.label} is not inside a server: it is left out of the network, collective "
                                   "and training figures (still counted in inventory, power and cost); "
                                   "move it into a server")
           for item in stray[:50]]
    if len(stray) > 50:
        out.append(Finding(ERROR, stray[50].id, f"{len(stray) - 50:,} more accelerators are not inside a server "
                                                "and are left out of the same figures"))
    return out


def _hot_spares(design: Design) -> list[Finding]:
    """More hot spare servers (`settings["spares"]`) than the design has servers: allowed, but
    almost surely a slip (they are bought and powered all the same, docs/costs.md)."""
    spares = int(design.settings.get("spares") or 0)
    servers = [item for item in design.items.values() if item.kind == "server"]
    if not spares or not servers:
        return []
    copies = {item.id: design.multiplicity(item.id) for item in servers}
    total = sum(copies.values())
    if spares <= total:
        return []
    spared = max(servers, key=lambda item: copies[item.id])
    return [Finding(WARNING, spared.id, f"{spares:,} hot spare servers for the design's {total:,} servers: more spares "
                                        f"than servers, each bought and powered like {spared.label}")]


def _stray_accelerators(design: Design) -> list:
    return [item for item in design.items.values()
            if item.kind == "accelerator" and design.enclosing(item.id, "server") is None]


def _unreachable_accelerators(design: Design, catalog: Catalog) -> list[Finding]:
    stray = {item.id for item in _stray_accelerators(design)}  # found above already
    accelerators = [i for i in design.items.values() if i.kind == "accelerator" and i.id not in stray]
    if sum(design.multiplicity(a.id) for a in accelerators) <= 1:
        return []
    # Copies of one drawn accelerator reach each other only through something outside their
    # group; a link to anything outside the group is enough, since the copies share it.
    components, linked = _components(design)
    reached = [a for a in accelerators if a.id in linked]
    if not reached:
        return [Finding(WARNING, a.id, f"{a.label} has no link to any other part") for a in accelerators[:50]]
    main = max({components[a.id] for a in reached}, key=lambda c: sum(1 for a in accelerators if components[a.id] == c))
    out = []
    for accelerator in accelerators:
        if components[accelerator.id] != main:
            out.append(Finding(WARNING, accelerator.id,
                               f"{accelerator.label} has no path to the other accelerators"))
    return out


def _components(design: Design) -> tuple[dict[str, int], set[str]]:
    """(node → index of its connected component, nodes with a link) of the drawn graph
    (`design.graph()`), components numbered in the order `networkx.connected_components` yields
    them: by their first node in the graph's node order (items, then unknown link ends)."""
    nodes: dict[str, None] = dict.fromkeys(design.items)
    adjacent: dict[str, list[str]] = {}
    for link in design.links.values():
        nodes.setdefault(link.a)
        nodes.setdefault(link.b)
        adjacent.setdefault(link.a, []).append(link.b)
        adjacent.setdefault(link.b, []).append(link.a)
    components: dict[str, int] = {}
    index = 0
    for node in nodes:
        if node in components:
            continue
        components[node] = index
        stack = [node]
        while stack:
            for other in adjacent.get(stack.pop(), ()):
                if other not in components:
                    components[other] = index
                    stack.append(other)
        index += 1
    return components, set(adjacent)
