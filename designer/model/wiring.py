"""Wiring many NICs to many switches by a rule, as one edit (Edit ▸ Wire…).

The NICs are those chosen or inside the chosen items (a server's own NICs, a group's servers'),
the switches those chosen themselves and not inside another chosen item (a server's NVSwitches
are not uplink targets). Both are
taken in the order a user reads them: servers, then NICs within a server, then switches, each by
name with numbers in numeric order ("Leaf 2" before "Leaf 10").

Rules: `RAIL` joins NIC i of every server to switch i (a rail-optimised fabric); `ROUND_ROBIN`
deals the NICs, server by server, to the switches in turn; `EVERY` joins every NIC to every
switch. A NIC and a switch already linked are left as they are. Before anything is made, every
switch's (and NIC's) ports are counted with the new links, copies included: a wiring that needs
more than a part has is refused naming it and the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from designer.model import edits, placement
from designer.model.catalog import Catalog
from designer.model.design import Design, Item, Link
from designer.model.edits import Edit
from designer.model.errors import DesignError
from designer.model.lint import ports_used

RAIL = "rail"
ROUND_ROBIN = "round-robin"
EVERY = "every"
RULES = {RAIL: "one to one by rail (NIC i of each server → switch i)",
         ROUND_ROBIN: "round-robin (NICs dealt to the switches in turn)",
         EVERY: "every NIC to every switch"}


@dataclass(frozen=True)
class Wiring:
    """What a rule makes: the (NIC, switch) pairs to link, and those already linked (left alone)."""

    pairs: tuple[tuple[str, str], ...]
    already_linked: tuple[tuple[str, str], ...] = ()


def _reading_key(item: Item) -> tuple:
    return tuple((0, int(p)) if p.isdigit() else (1, p.lower()) for p in re.findall(r"\d+|\D+", item.label)), item.id


def nics_of(design: Design, item_ids: Iterable[str]) -> list[str]:
    """The chosen NICs and those inside the chosen items (not switches), server by server."""
    chosen = [design.items[i] for i in dict.fromkeys(item_ids) if i in design.items]
    found: dict[str, Item] = {}
    index = design.children_index()
    for item in chosen:
        if item.kind == "nic":
            found[item.id] = item
        elif item.kind != "switch":
            found.update((d.id, d) for d in design.descendants(item.id, index) if d.kind == "nic")
    by_server: dict[str | None, list[Item]] = {}
    for nic in found.values():
        server = design.enclosing(nic.id, "server")
        by_server.setdefault(server.id if server is not None else None, []).append(nic)
    servers = sorted((s for s in by_server if s is not None), key=lambda s: _reading_key(design.items[s]))
    order = [*servers, None] if None in by_server else servers
    return [nic.id for s in order for nic in sorted(by_server[s], key=_reading_key)]


def switches_of(design: Design, item_ids: Iterable[str]) -> list[str]:
    """The chosen switches, by name; not those inside another chosen item (a selected server's
    NVSwitches, caught by the same rubber band)."""
    chosen = [design.items[i] for i in edits.outermost(design, item_ids)]
    return [s.id for s in sorted((i for i in chosen if i.kind == "switch"), key=_reading_key)]


def common_media(design: Design, catalog: Catalog, nics: list[str], switches: list[str]) -> list[str]:
    """The media every NIC and every switch supports, in the first NIC's order."""
    found = [catalog.get(design.items[i].part) for i in (*nics, *switches)]
    parts = [p for p in found if p is not None]
    if not found or len(parts) != len(found):
        return []
    return [m for m in parts[0].media if all(m in p.media for p in parts[1:])]


def plan(design: Design, nics: list[str], switches: list[str], rule: str) -> Wiring:
    """The pairs `rule` joins. Refused (DesignError) when there is nothing to wire or, by rail,
    when a server has more NICs than there are switches (one switch per rail)."""
    if not nics:
        raise DesignError("Wire: select the NICs, or servers with NICs, to wire")
    if not switches:
        raise DesignError("Wire: select the switches to wire the NICs to")
    if rule == RAIL:
        rails: dict[str | None, list[str]] = {}
        for nic in nics:
            rails.setdefault(_server(design, nic), []).append(nic)
        for server, own in rails.items():
            if len(own) > len(switches):
                where = design.items[server].label if server is not None else "The NICs outside servers"
                raise DesignError(f"Wire by rail: {where} has {len(own)} NICs but {len(switches)} switches are "
                                  f"selected; select one switch per rail, or wire round-robin")
        pairs = [(nic, switches[rail]) for own in rails.values() for rail, nic in enumerate(own)]
    elif rule == ROUND_ROBIN:
        pairs = [(nic, switches[k % len(switches)]) for k, nic in enumerate(nics)]
    elif rule == EVERY:
        pairs = [(nic, switch) for nic in nics for switch in switches]
    else:
        raise DesignError(f"Wire: unknown rule '{rule}' (one of {', '.join(RULES)})")
    linked = {frozenset((link.a, link.b)) for link in design.links.values()}
    new = tuple(p for p in pairs if frozenset(p) not in linked)
    return Wiring(new, tuple(p for p in pairs if frozenset(p) in linked))


def _server(design: Design, item_id: str) -> str | None:
    server = design.enclosing(item_id, "server")
    return server.id if server is not None else None


def wire(design: Design, catalog: Catalog, wiring: Wiring, medium: str, lanes: int) -> Edit:
    """The links of `wiring` over `medium`, `lanes` each, as one edit; refused (DesignError) when an
    end does not support the medium or a switch or NIC would need more ports than it has."""
    if not wiring.pairs:
        raise DesignError("Wire: every chosen NIC is already linked to its switch; nothing to add")
    scratch = design.snapshot()
    links = []
    for nic, switch in wiring.pairs:
        problem = placement.medium_problem(design, catalog, nic, switch, medium)
        if problem:
            raise DesignError(f"Wire: {problem}")
        link_id = f"{nic}--{switch}"
        if link_id in scratch.links or link_id in scratch.items:
            link_id = scratch.new_id(link_id)
        links.append(scratch.add_link(Link(link_id, nic, switch, medium, lanes)))
    for end in (*dict.fromkeys(s for _, s in wiring.pairs), *dict.fromkeys(n for n, _ in wiring.pairs)):
        _check_ports(design, scratch, catalog, end)
    nics = len({nic for nic, _ in wiring.pairs})
    switches = len({switch for _, switch in wiring.pairs})
    text = f"Wire {nics} NIC{'s' if nics > 1 else ''} to {switches} switch{'es' if switches > 1 else ''}"
    return edits.add(design, [], links, text)


def _check_ports(before: Design, after: Design, catalog: Catalog, item_id: str) -> None:
    item = after.items[item_id]
    part = catalog.get(item.part)
    if part is None or item.kind not in ("switch", "nic"):
        return
    ports = int(part.number("ports"))
    used_before = ports_used(before, item_id, catalog, _port_links(before, catalog, item))
    used_after = ports_used(after, item_id, catalog, _port_links(after, catalog, item))
    if used_after > ports:
        free = max(0, ports - used_before)
        server = after.enclosing(item_id, "server")
        where = f"{item.label} in {server.label}" if server is not None else item.label
        raise DesignError(f"Wire: {where}, a {part.name}, has {free} free port{'s' if free != 1 else ''} "
                          f"of {ports}; this wiring needs {used_after - used_before}")


def _port_links(design: Design, catalog: Catalog, item: Item) -> list[Link]:
    """The links that take a port: a NIC's host bus (PCIe, its host medium) does not."""
    links = design.links_of(item.id)
    if item.kind != "nic":
        return links
    host = catalog[item.part].get("host_medium")
    return [link for link in links if link.medium != host
            and (medium := catalog.get(link.medium)) is not None and medium.get("family") != "pcie"]
