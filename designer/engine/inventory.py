"""Inventory, bill of materials (with unit prices), peak throughput, memory and power: sums over the hierarchy
of catalogue figures times copies. One pass over the drawn items, never one per GPU."""

from __future__ import annotations

from collections import Counter, defaultdict

from designer.model.catalog import PRECISIONS, Catalog, Part
from designer.model.design import Design, Item
from designer.model.power import item_power_w
from designer.engine.result import rounded
from designer.engine.sections import BillOfMaterials, BomRow, Compute, Inventory, Memory, Power, RackPower, read_only


def multiplicities(design: Design) -> dict[str, int]:
    """Copies of every item, computed top-down once."""
    copies: dict[str, int] = {}
    index = design.children_index()
    stack = [(child, 1) for child in index.get(None, [])]
    while stack:
        item, above = stack.pop()
        copies[item.id] = above * item.count
        stack.extend((child, copies[item.id]) for child in index.get(item.id, []))
    return copies


def link_instances(design: Design, copies: dict[str, int], link_copies: dict | None = None) -> dict[str, int]:
    """Physical instances of every drawn link (as `Design.link_copies(...).instances`); pass
    `link_copies` (`design.all_link_copies()`) when it is already known."""
    if link_copies is None:
        link_copies = design.all_link_copies()
    return {link_id: lc.a_side * lc.b_side * lc.context for link_id, lc in link_copies.items()}


def cable_bundles(design: Design, catalog: Catalog) -> set[str]:
    """Items standing for a bundle of cables rather than a device (a part with `cable_bundle`, as
    a dragonfly's global links): each cable is drawn as two links to the bundle, one from each
    end, so two such links are one physical link and cable, and the bundle is no part to buy."""
    bundles = set()
    for item in design.items.values():
        part = catalog.get(item.part) if item.part else None
        if part is not None and part.get("cable_bundle"):
            bundles.add(item.id)
    return bundles


def _halves(counter: Counter) -> Counter:
    """Cable ends drawn at a bundle, as whole cables (two ends each; an odd end left is a cable too)."""
    return Counter({key: -(-ends // 2) for key, ends in counter.items()})


# Parts whose price (like their power, model.power) is part of the server platform they sit in.
_INCLUDED_IN_SERVER = ("nic", "cpu", "switch")


def chassis_price_usd(server: Part, catalog: Catalog) -> float | None:
    """A server platform's price less its default accelerators (its `price_usd` is the system as
    sold, with them), so the accelerators actually fitted are what is counted; None when either
    price is unknown."""
    price = server.get("price_usd")
    slots = server.number("accelerator_slots")
    default = catalog.get(server.get("default_accelerator"))
    if price is None or (slots and default is None):
        return None
    if not slots:
        return float(price)
    each = default.get("price_usd")
    return None if each is None else max(0.0, price - slots * each)


def unit_price_derived(part: Part, catalog: Catalog) -> bool:
    """Whether the price a BOM line charges for the part is a derived estimate: its own price, or
    for a server platform (charged its chassis share) its price or its default accelerators'."""
    if part.kind == "server":
        default = catalog.get(part.get("default_accelerator"))
        return part.price_derived or (default is not None and default.price_derived)
    return part.price_derived


def inventory(design: Design, catalog: Catalog, copies: dict[str, int], link_copies: dict | None = None) -> Inventory:
    kinds = Counter()
    models: dict[str, Counter] = defaultdict(Counter)
    bundles = cable_bundles(design, catalog)
    for item in design.items.values():
        if item.kind == "group" or item.id in bundles:
            continue
        kinds[item.kind] += copies[item.id]
        if item.part:
            models[item.kind][item.part] += copies[item.id]
    return Inventory(
        accelerators=kinds["accelerator"],
        accelerator_models=read_only(sorted(models["accelerator"].items())),
        servers=kinds["server"],
        server_models=read_only(sorted(models["server"].items())),
        switches=kinds["switch"],
        switch_models=read_only(sorted(models["switch"].items())),
        nics=kinds["nic"],
        nic_models=read_only(sorted(models["nic"].items())),
        cpus=kinds["cpu"],
        racks=kinds["rack"],
        links=_physical_links(design, bundles, link_instances(design, copies, link_copies)),
    )


def _physical_links(design: Design, bundles: set[str], instances: dict[str, int]) -> int:
    """Physical links: a link to a cable bundle is one end of a link drawn twice."""
    direct = ends = 0
    for link_id, count in instances.items():
        link = design.links[link_id]
        if link.a in bundles or link.b in bundles:
            ends += count
        else:
            direct += count
    return direct + -(-ends // 2)


def bill_of_materials(design: Design, catalog: Catalog, copies: dict[str, int],
                      link_copies: dict | None = None) -> BillOfMaterials:
    """Parts (NICs, CPUs and switches inside a server apart: the platform's price covers them),
    then cables and transceivers per medium and reach: a cable whose two ends sit in one rack is
    passive copper, any other is optical with the medium's transceivers (a medium without
    transceivers is copper at any reach). Links inside one server run on its boards."""
    items = design.items
    found: dict[str, dict] = {"server": {}, "rack": {}}  # kind → item id → nearest enclosing item of that kind

    def around(item_id: str, kind: str):
        known = found[kind]
        if item_id in known:
            return known[item_id]
        item = items[item_id]
        # An item's answer is its parent's unless it is one itself: each container is walked once.
        answer = item if item.kind == kind else None if item.parent is None else around(item.parent, kind)
        known[item_id] = answer
        return answer

    bundles = cable_bundles(design, catalog)
    parts = Counter()  # (part id, included in its server's price) → quantity
    for item in items.values():
        if item.part and item.id not in bundles:
            included = item.kind in _INCLUDED_IN_SERVER and around(item.id, "server") is not None
            parts[(item.part, included)] += copies[item.id]
    cables = Counter()  # (medium id, variant) → cables
    transceivers = Counter()
    links_by_medium = Counter()
    # The same, for links to a cable bundle: ends, two to a cable (`cable_bundles`).
    bundle_cables, bundle_transceivers, bundle_links = Counter(), Counter(), Counter()
    instances_of = link_instances(design, copies, link_copies)
    media = {}
    cable_figures: dict = {}  # medium id → (lanes per cable, transceivers per cable)
    for link in design.links.values():
        medium = media.get(link.medium, False)
        if medium is False:
            medium = media[link.medium] = catalog.get(link.medium)
        if medium is None:
            continue
        instances = instances_of[link.id]
        at_bundle = link.a in bundles or link.b in bundles
        (bundle_links if at_bundle else links_by_medium)[link.medium] += instances
        figures = cable_figures.get(link.medium)
        if figures is None:
            figures = cable_figures[link.medium] = (int(medium.number("lanes_per_cable")),
                                                    int(medium.number("transceivers_per_cable")))
        per_cable, per_cable_transceivers = figures
        server_a = around(link.a, "server")
        if per_cable <= 0 or (server_a is not None and server_a is around(link.b, "server")):
            continue
        cable_count = instances * -(-link.lanes // per_cable)
        rack_a = around(link.a, "rack")
        to_cables, to_transceivers = (bundle_cables, bundle_transceivers) if at_bundle else (cables, transceivers)
        if per_cable_transceivers and (rack_a is None or rack_a is not around(link.b, "rack")):
            to_cables[(link.medium, "optical")] += cable_count
            to_transceivers[link.medium] += cable_count * per_cable_transceivers
        else:
            to_cables[(link.medium, "copper")] += cable_count
    links_by_medium.update(_halves(bundle_links))
    cables.update(_halves(bundle_cables))
    transceivers.update(_halves(bundle_transceivers))
    rows = []
    for (part_id, included), quantity in sorted(parts.items()):
        part = catalog.get(part_id)
        if part is None:
            price = None
        elif included:
            price = None
        elif part.kind == "server":
            price = chassis_price_usd(part, catalog)
        else:
            price = part.get("price_usd")
        name = part.name if part else part_id
        rows.append(BomRow(category=part.kind if part else "unknown", part=part_id,
                           name=f"{name} (in its server's price)" if included else name, quantity=quantity,
                           unit_price_usd=None if price is None else float(price), included=included,
                           price_derived=price is not None and unit_price_derived(part, catalog)))
    for (medium_id, variant), quantity in sorted(cables.items()):
        medium = catalog[medium_id]
        price = medium.get(f"{variant}_cable_price_usd")
        reach = "passive copper, within a rack" if variant == "copper" else "optical, between racks"
        rows.append(BomRow(category="cable", part=medium_id, name=f"{medium.name} cable ({reach})", quantity=quantity,
                           unit_price_usd=None if price is None else float(price), variant=variant,
                           price_derived=price is not None and medium.price_derived))
    for medium_id, quantity in sorted(transceivers.items()):
        medium = catalog[medium_id]
        price = medium.get("transceiver_price_usd")
        rows.append(BomRow(category="transceiver", part=medium_id, name=f"{medium.name} transceiver",
                           quantity=quantity, unit_price_usd=None if price is None else float(price),
                           variant="optical", price_derived=price is not None and medium.price_derived))
    rows += storage_and_spare_rows(design, catalog, copies)
    cables_by_medium = Counter()
    for (medium_id, _variant), quantity in cables.items():
        cables_by_medium[medium_id] += quantity
    return BillOfMaterials(
        rows=tuple(rows),
        links_by_medium=read_only(sorted(links_by_medium.items())),
        cables_by_medium=read_only(sorted(cables_by_medium.items())),
        transceivers_by_medium=read_only(sorted(transceivers.items())),
    )


def storage_part(design: Design, catalog: Catalog) -> tuple[Part, int] | None:
    """The design's checkpoint storage (`settings["storage"]`): its catalogue part and how many."""
    storage = design.settings.get("storage") or {}
    part = catalog.get(storage.get("part"))
    if part is None or part.kind != "storage":
        return None
    return part, int(storage.get("count", 1))


def spare_server(design: Design, copies: dict[str, int]) -> tuple[Item, int] | None:
    """The server a hot spare (`settings["spares"]`) stands in for — the design's most numerous
    drawn server, a copy of it with what it holds — and how many spares; None without either."""
    spares = int(design.settings.get("spares") or 0)
    servers = [item for item in design.items.values() if item.kind == "server"]
    if not spares or not servers:
        return None
    return max(servers, key=lambda item: copies[item.id]), spares


def _spare_contents(design: Design, server: Item, copies: dict[str, int]) -> list[tuple[Item, int]]:
    """The server and what it holds, each with its copies in one copy of the server."""
    return [(server, 1)] + [(item, copies[item.id] // copies[server.id]) for item in design.descendants(server.id)]


def storage_and_spare_rows(design: Design, catalog: Catalog, copies: dict[str, int]) -> list[BomRow]:
    """BOM lines for the checkpoint storage and the hot spare servers (design settings, not
    drawn): a spare is bought like the server it stands in for — its chassis share and its
    accelerators (what else it holds is in the platform's price); its network cabling is not
    counted."""
    rows = []
    storage = storage_part(design, catalog)
    if storage is not None:
        part, count = storage
        price = part.get("price_usd")
        rows.append(BomRow(category="storage", part=part.id, name=f"{part.name} (checkpoint storage)",
                           quantity=count, unit_price_usd=None if price is None else float(price),
                           price_derived=price is not None and part.price_derived))
    spare = spare_server(design, copies)
    if spare is not None:
        server, spares = spare
        accelerators = Counter()
        for item, each in _spare_contents(design, server, copies):
            if item.kind == "accelerator" and item.part:
                accelerators[item.part] += each * spares
        platform = catalog.get(server.part)
        if platform is not None and platform.kind == "server":
            price = chassis_price_usd(platform, catalog)
            rows.append(BomRow(category="server", part=platform.id, name=f"{platform.name} (hot spare)",
                               quantity=spares, unit_price_usd=price, variant="spare",
                               price_derived=price is not None and unit_price_derived(platform, catalog)))
        for part_id, quantity in sorted(accelerators.items()):
            part = catalog.get(part_id)
            price = part.get("price_usd") if part else None
            rows.append(BomRow(category=part.kind if part else "unknown", part=part_id,
                               name=f"{part.name if part else part_id} (in the hot spares)", quantity=quantity,
                               unit_price_usd=None if price is None else float(price), variant="spare",
                               price_derived=price is not None and part.price_derived))
    return rows


def compute_and_memory(design: Design, catalog: Catalog, copies: dict[str, int]) -> tuple[Compute, Memory]:
    peaks = defaultdict(float)
    present: set[str] = set()
    hbm_gib = hbm_tb_per_s = sram_gib = 0.0
    for item in design.items.values():
        if item.kind != "accelerator":
            continue
        part = catalog.get(item.part)
        if part is None or part.kind != "accelerator":
            continue
        n = copies[item.id]
        for precision in PRECISIONS:
            value = part.peak_tflops.get(precision)
            if value is not None:
                peaks[precision] += value * n
                present.add(precision)
        if part.get("memory_type") == "sram":
            sram_gib += part.number("memory_gib") * n
        else:
            hbm_gib += part.number("memory_gib") * n
            hbm_tb_per_s += part.number("memory_bw_tb_per_s") * n
    compute = Compute(peak_tflops=read_only((p, _exact(peaks[p])) for p in PRECISIONS if p in present))
    memory = Memory(hbm_gib=_exact(hbm_gib), hbm_tb_per_s=_exact(hbm_tb_per_s), sram_gib=_exact(sram_gib),
                    pooled_gib=_exact(hbm_gib + sram_gib))
    return compute, memory


def power(design: Design, catalog: Catalog, copies: dict[str, int]) -> Power:
    per_rack = defaultdict(float)
    rack_copies: dict[str, int] = {}
    total = 0.0
    derived: set[str] = set()  # parts drawing power by a derived estimate
    for item in design.items.values():
        watts = item_power_w(design, item, catalog)
        if not watts:
            continue
        n = copies[item.id]
        total += watts * n
        _note_derived(derived, catalog, item.part)
        rack = design.enclosing(item.id, "rack")
        if rack is not None:
            # Power of one copy of the rack: this item's copies spread over the rack's copies.
            rack_copies[rack.id] = copies[rack.id]
            per_rack[rack.id] += watts * n / copies[rack.id]
    racks = []
    for rack_id, watts in sorted(per_rack.items()):
        rack = design.items[rack_id]
        part = catalog.get(rack.part)
        racks.append(RackPower(rack=rack_id, name=rack.label, copies=rack_copies[rack_id],
                               kw_each=_exact(watts / 1000),
                               budget_kw=part.number("power_budget_kw") if part else None))
    storage_w = spares_w = 0.0
    storage = storage_part(design, catalog)
    if storage is not None:
        part, count = storage
        storage_w = part.number("power_w") * count
        if storage_w:
            _note_derived(derived, catalog, part.id)
    spare = spare_server(design, copies)
    if spare is not None:
        server, spares = spare
        # A spare copies drawn parts: any derived figure among them is already noted above.
        spares_w = spares * sum(item_power_w(design, item, catalog) * each
                                for item, each in _spare_contents(design, server, copies))
    return Power(total_kw=_exact((total + storage_w + spares_w) / 1000), per_rack=tuple(racks),
                 storage_kw=_exact(storage_w / 1000), spares_kw=_exact(spares_w / 1000),
                 derived_parts=tuple(sorted(derived)))


def _note_derived(derived: set[str], catalog: Catalog, part_id: str | None) -> None:
    part = catalog.get(part_id)
    if part is not None and part.power_derived:
        derived.add(part.id)


def _exact(value: float) -> float:
    # Sums of catalogue figures: twelve digits keep them exact to the reader, without float noise.
    return rounded(value, 12)
