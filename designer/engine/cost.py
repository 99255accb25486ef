"""Cost of ownership: capital by category, yearly cost, cost per accelerator-hour, and the cost
and energy of the training run, from the priced bill of materials, the power and a few stated
assumptions (the design's `cost` setting over DEFAULTS). The formulas and the sources of the
defaults are in docs/costs.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from designer.engine.result import rounded
from designer.engine.sections import BillOfMaterials, BomRow, Cost, read_only
from designer.model.catalog import Catalog

HOURS_PER_YEAR = 8760.0

# Capital cost categories, in the order the Cost tab stacks them.
CATEGORIES = {
    "accelerators_and_servers": "Accelerators and servers",
    "scale_up_network": "Scale-up network",
    "scale_out_network": "Scale-out network",
    "cables_and_optics": "Cables and optics",
    "storage": "Storage",
    "racks_and_facility": "Racks and facility",
}
# Yearly cost components: what the capital costs a year, and what running it costs.
YEARLY = {
    "it_depreciation": "IT depreciation",
    "facility_depreciation": "Facility depreciation",
    "electricity": "Electricity",
    "colocation": "Colocation",
}
OPERATING = ("electricity", "colocation")
# What no figure of the model counts (docs/costs.md), said beside the figures.
NOT_COUNTED = ("staff, maintenance and support contracts, software licences, taxes and the cost of capital; "
               "the hot spares' network cabling")
# Without a price for these, a cost per accelerator-hour (and of a run) is not given.
COMPUTE_KINDS = ("accelerator", "server")
FACILITY_MODES = ("build", "colocation")


@dataclass(frozen=True)
class Assumption:
    """One editable assumption: its key in the `cost` setting, how it is shown, its default and
    where the default comes from; numbers lie in [minimum, maximum], a choice in `choices`."""

    key: str
    label: str
    unit: str
    default: Any
    source: str
    minimum: float = 0.0
    maximum: float = 0.0
    decimals: int = 0
    choices: tuple[str, ...] = ()


ASSUMPTIONS = (
    Assumption("depreciation_years", "IT depreciation", "years", 5.0,
               "Servers and networking are written off over 4-6 years: Microsoft and Alphabet use 6, Meta 5.5 "
               "(2022-23 annual reports); 5 is the middle.", 1, 20, 1),
    Assumption("electricity_usd_per_kwh", "Electricity", "USD/kWh", 0.08,
               "US average industrial price 2023: 8.0 ¢/kWh (EIA, Electric Power Monthly, table 5.6.A).",
               0, 2, 3),
    Assumption("pue", "PUE", "", 1.3,
               "Power usage effectiveness of a modern liquid- or air-cooled AI hall: 1.1-1.4 (Google fleet 1.10 "
               "in 2023; Uptime Institute 2023 survey average 1.58 across all ages).", 1, 3, 2),
    Assumption("facility", "Facility", "", "build",
               "Build (capital per kW of IT load, depreciated) or colocation (a monthly price per kW).",
               choices=FACILITY_MODES),
    Assumption("facility_usd_per_kw", "Facility capital", "USD/kW", 10_000.0,
               "Data-centre construction about $8-12 million per MW of IT load in US markets (Turner & Townsend "
               "Data Centre Cost Index 2023; JLL 2024).", 0, 100_000, 0),
    Assumption("facility_years", "Facility depreciation", "years", 15.0,
               "Mechanical and electrical plant is written off over 10-20 years (data-centre operators' annual "
               "reports); 15 is the middle.", 1, 50, 1),
    Assumption("colocation_usd_per_kw_month", "Colocation", "USD/kW-month", 165.0,
               "North American wholesale colocation, 250-500 kW: $163/kW-month average asking rate (CBRE, North "
               "America Data Center Trends H2 2023); power billed on top.", 0, 10_000, 0),
    Assumption("utilization", "Utilization", "fraction", 0.8,
               "Share of the hours the accelerators do paid work; an assumption (large training fleets report "
               "70-90 % allocation).", 0.01, 1, 2),
)
DEFAULTS: Mapping[str, Any] = read_only((a.key, a.default) for a in ASSUMPTIONS)


def assumptions(setting: Mapping[str, Any] | None) -> dict[str, Any]:
    """The assumptions in force: the design's `cost` setting (already checked against its schema)
    over the defaults."""
    return {**DEFAULTS, **(setting or {})}


def category(row: BomRow, catalog: Catalog) -> str | None:
    """The capital category of a BOM line; None for a line paid for inside a server's price."""
    if row.included:
        return None
    if row.category in ("cable", "transceiver"):
        return "cables_and_optics"
    if row.category == "rack":
        return "racks_and_facility"
    if row.category == "storage":
        return "storage"
    if row.category == "nic":
        return "scale_out_network"
    if row.category == "switch":
        part = catalog.get(row.part)
        media = (catalog.get(m) for m in (part.media if part else ()))
        scale_up = any(m is not None and m.get("tier") == "scale-up" for m in media)
        return "scale_up_network" if scale_up else "scale_out_network"
    return "accelerators_and_servers"


def unpriced_in_categories(bom: BillOfMaterials, catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """The parts without a price in each capital category that has any, in category order."""
    parts: dict[str, set[str]] = {}
    for row in bom.rows:
        key = None if row.priced else category(row, catalog)
        if key is not None:
            parts.setdefault(key, set()).add(row.part)
    return {key: tuple(sorted(parts[key])) for key in CATEGORIES if key in parts}


def cost_of_ownership(bom: BillOfMaterials, catalog: Catalog, it_kw: float, accelerators: int,
                      setting: Mapping[str, Any] | None, run_days: float | None, run_accelerators: int,
                      tokens: float | None, derived_power_parts: tuple[str, ...] = ()) -> Cost:
    """The cost section. `it_kw`: the design's power (its published maxima, the IT load);
    `run_days` and `run_accelerators`: how long the training run takes and on how many
    accelerators (None days: no run); `tokens` it trains on. The per-hour and run figures need
    every accelerator and server priced. `derived_power_parts`: the parts of `it_kw` drawn by a
    derived estimate (`Power.derived_parts`), listed beside the derived prices."""
    used = assumptions(setting)
    priced = [row for row in bom.rows if row.priced]
    unpriced = tuple(sorted({row.part for row in bom.rows if not row.priced and not row.included}))
    derived = {"derived_price_parts": tuple(sorted({row.part for row in priced if row.price_derived})),
               "derived_power_parts": tuple(derived_power_parts)}
    hardware = sum(row.extended_usd for row in priced) if priced else None
    # Energy needs no price: the run's share of the IT load, at the facility meter.
    run = run_days is not None and accelerators > 0
    run_mwh = it_kw * run_accelerators / accelerators * used["pue"] * run_days * 24 / 1000 if run else None
    if hardware is None:
        return Cost(total_usd=None, priced_lines=0, unpriced_parts=unpriced, **derived, run_days=rounded(run_days),
                    run_energy_mwh=rounded(run_mwh), assumptions=read_only(used))
    by_category: dict[str, float | None] = dict.fromkeys(CATEGORIES, 0.0)
    priced_categories = set()
    for row in priced:
        key = category(row, catalog)
        if key is not None:
            by_category[key] += row.extended_usd
            priced_categories.add(key)
    build = used["facility"] == "build"
    facility = used["facility_usd_per_kw"] * it_kw if build else 0.0
    by_category["racks_and_facility"] += facility
    if facility:
        priced_categories.add("racks_and_facility")
    unpriced_by_category = unpriced_in_categories(bom, catalog)
    for key in unpriced_by_category.keys() - priced_categories:
        by_category[key] = None  # only unpriced parts: unknown, not free
    yearly = {
        "it_depreciation": hardware / used["depreciation_years"],
        "facility_depreciation": facility / used["facility_years"],
        "electricity": it_kw * used["pue"] * HOURS_PER_YEAR * used["electricity_usd_per_kwh"],
        "colocation": 0.0 if build else used["colocation_usd_per_kw_month"] * it_kw * 12,
    }
    yearly_total = sum(yearly.values())
    hours_in_use = accelerators * HOURS_PER_YEAR * used["utilization"]
    # An hour of an accelerator whose own price (or its server's) is unknown would look cheap.
    compute_priced = not any(row.part in unpriced for row in bom.rows if row.category in COMPUTE_KINDS)
    per_hour = yearly_total / hours_in_use if hours_in_use and compute_priced else None
    run_usd = per_million = None
    if run and per_hour is not None:
        run_usd = run_accelerators * run_days * 24 * per_hour
        per_million = run_usd / tokens * 1e6 if tokens else None
    return Cost(
        total_usd=_money(hardware),
        priced_lines=len(priced),
        unpriced_parts=unpriced,
        **derived,
        capital_usd=_money(hardware + facility),
        facility_usd=_money(facility),
        capital_by_category_usd=read_only((key, _money(value)) for key, value in by_category.items()),
        unpriced_by_category=read_only(unpriced_by_category.items()),
        yearly_usd=_money(yearly_total),
        yearly_by_category_usd=read_only((key, _money(value)) for key, value in yearly.items()),
        yearly_operating_usd=_money(sum(yearly[key] for key in OPERATING)),
        per_accelerator_hour_usd=_money(per_hour),
        run_days=rounded(run_days),
        run_usd=_money(run_usd),
        run_energy_mwh=rounded(run_mwh),
        per_million_tokens_usd=_money(per_million),
        assumptions=read_only(used),
    )


def _money(value: float | None) -> float | None:
    # Nine digits: a cent on a million-dollar line, without float noise in the JSON.
    return rounded(value, 9)
