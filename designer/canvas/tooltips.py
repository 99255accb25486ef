"""The canvas tooltips: what a drawn item or link stands for, as rich text. Computed when asked
for, not stored on 20,000 items."""

from __future__ import annotations

from designer.engine.failures import BlastRadius, Failure
from designer.model.catalog import Catalog
from designer.model.design import Design, Item, Link
from designer.style import colors


def node_tooltip(item: Item, catalog: Catalog, blast: BlastRadius | None, failure: str | None) -> str:
    """What the item is, its part's figures, what failing one copy of it would do (None: still
    being worked out) and how much of it a what-if marks failed (`failure_text`)."""
    lines = [f"<b>{_esc(item.label)}</b> ({item.kind}, id {_esc(item.id)})"]
    if failure:
        lines.append(f"<b style='color:{colors.FAILED}'>What-if: {_esc(failure)}</b>")
    if item.kind == "group":
        lines.append(f"stands for ×{item.count:,} copies of its contents")
    part = catalog.get(item.part)
    if part is not None:
        lines.append(_esc(part.name))
        peaks = part.peak_tflops
        if "bf16" in peaks:
            lines.append(f"BF16 dense: {peaks['bf16']:,.0f} TFLOPS")
        for key, label, unit in (("memory_gib", "Memory", "GiB"), ("memory_bw_tb_per_s", "Memory bandwidth", "TB/s"),
                                 ("ports", "Ports", ""), ("port_gbps", "Port speed", "Gb/s"),
                                 ("power_w", "Power", "W"), ("system_power_w", "System power", "W"),
                                 ("height_u", "Height", "U"), ("power_budget_kw", "Power budget", "kW")):
            if part.get(key) is not None:
                lines.append(f"{label}: {part.number(key):,g} {unit}".rstrip())
        if part.media:
            lines.append("Media: " + ", ".join(part.media))
    lines.append(f"Blast radius of one copy: {_esc(blast.text()) if blast is not None else 'computing…'}")
    return "<br>".join(lines)


def link_tooltip(link: Link, design: Design, catalog: Catalog, utilization: float | None,
                 bottleneck: bool) -> str:
    """The link's ends, medium, bandwidth and copies, how much of it a what-if marks failed, and
    what the last result says of it."""
    medium = catalog.get(link.medium)
    a, b = design.items.get(link.a), design.items.get(link.b)
    lines = [f"<b>{_esc(a.label if a else link.a)} — {_esc(b.label if b else link.b)}</b>",
             f"{_esc(medium.name if medium else link.medium)} × {link.lanes} lane{'s' if link.lanes != 1 else ''}"]
    if medium is not None:
        bw = medium.number("lane_gb_per_s") * link.lanes
        lines.append(f"{bw:,.0f} GB/s per direction, {medium.number('latency_ns'):,.0f} ns")
    copies = design.link_copies(link).instances
    if copies > 1:
        lines.append(f"stands for {copies:,} physical links")
    if link.match is not None:
        ga, gb = (design.items.get(g) for g in link.match)
        problem = design.match_problem(link)
        if problem:
            lines.append(f"<span style='color:{colors.ERROR}'>{_esc(problem)}</span>")
        elif ga is not None and gb is not None:
            lines.append(f"copy i of {_esc(ga.label)} ↔ copy i of {_esc(gb.label)} only")
    failure = failure_text(design, link.id, catalog)
    if failure:
        lines.append(f"<b style='color:{colors.FAILED}'>What-if: {_esc(failure)}</b>")
    if utilization is not None:
        lines.append(f"Utilization: {utilization * 100:.0f}%")
    if bottleneck:
        lines.append(f"<b style='color:{colors.BOTTLENECK}'>Bottleneck link</b>")
    return "<br>".join(lines)


def _failure_share(design: Design, entry: dict, target: str) -> tuple[int, int]:
    """(copies failed, copies in all) of a drawn item or link under its own what-if entry, or of
    the whole pool of a medium's physical links under the medium's entry (the engine spreads that
    share evenly over them)."""
    if target in design.items:
        total = design.multiplicity(target)
    elif entry["target"] == target:
        total = design.link_copies(design.links[target]).instances
    else:
        total = sum(design.link_copies(link).instances for link in design.links.values()
                    if link.medium == entry["target"])
    return Failure(target, entry.get("copies"), entry.get("percent")).failed_of(total), total


def drawn_failures(design: Design) -> tuple[set[str], set[str]]:
    """The drawn items and links a what-if marks failed, and those of them failed in only some of
    their copies. A link medium's mark ("2 % of the NDR optics") marks every link on it."""
    failed: set[str] = set()
    partly: set[str] = set()
    media: dict[str, dict] = {}
    for entry in design.settings.get("failures") or ():
        target = entry["target"]
        if target in design.items or target in design.links:
            failed.add(target)
            if entry.get("copies") is not None or entry.get("percent") is not None:
                share = _failure_share(design, entry, target)
                if share[0] < share[1]:
                    partly.add(target)
        else:
            media[target] = entry
    if media:
        pools: dict[str, int] = {}
        for link in design.links.values():
            if link.medium in media:
                pools[link.medium] = pools.get(link.medium, 0) + design.link_copies(link).instances
        # A medium's share is spread over its whole pool: every link on it keeps the rest.
        thinned = {medium for medium, entry in media.items()
                   if Failure(medium, entry.get("copies"), entry.get("percent")).failed_of(pools.get(medium, 0))
                   < pools.get(medium, 0)}
        for link in design.links.values():
            if link.medium in media and link.id not in failed:
                failed.add(link.id)
                if link.medium in thinned:
                    partly.add(link.id)
    return failed, partly


def failure_text(design: Design, target: str, catalog: Catalog | None = None) -> str | None:
    """How much of an item or link a what-if marks failed, in words ("1 of 16 copies failed",
    "2% of 64 physical links failed: 1", "2% of every InfiniBand NDR link failed: 1 of these
    64"); None when it is not marked."""
    entries = design.settings.get("failures") or ()
    entry = next((e for e in entries if e["target"] == target), None)
    medium = None
    if entry is None and target in design.links:
        medium = design.links[target].medium
        entry = next((e for e in entries if e["target"] == medium), None)
    if entry is None or (target not in design.items and target not in design.links):
        return None
    failed, total = _failure_share(design, entry, target)
    what = "copies" if target in design.items else "physical links"
    if medium is not None:
        part = catalog.get(medium) if catalog is not None else None
        share = f"{entry['percent']:g}%" if entry.get("percent") is not None else f"{entry.get('copies') or 'all'}"
        own = design.link_copies(design.links[target]).instances
        return (f"{share} of every {part.name if part else medium} link failed: {failed:,} of {total:,} physical "
                f"links, spread evenly ({own * failed / total:,.1f} of these {own:,})")
    if failed >= total:
        return f"all {total:,} {what} failed" if total > 1 else "failed"
    if entry.get("percent") is not None:
        return f"{entry['percent']:g}% of {total:,} {what} failed: {failed:,}"
    return f"{failed:,} of {total:,} {what} failed"


def _esc(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --- summary cards ---------------------------------------------------------------------------------
_PLURAL = {"accelerator": "accelerators", "switch": "switches", "server": "servers", "nic": "NICs", "cpu": "CPUs",
           "rack": "racks"}


def card_summary(item: Item, design: Design, catalog: Catalog, index: dict, busiest: float | None,
                 failed: int = 0) -> tuple[str, list[str]]:
    """What a container too small to show its contents says instead: its name (×N for a group),
    how many of the items and links it hides a what-if marks failed, what it holds counting every
    copy (its accelerators, else its switches...) and the busiest link touching it when a result
    is shown. Returns (title, detail lines, most telling first)."""
    title = f"{item.label} ×{item.count:,}" if item.kind == "group" and item.count > 1 else item.label
    counts: dict[str, int] = {}
    parts: dict[str, set[str]] = {}
    stack = [(child, item.count) for child in index.get(item.id, [])]
    while stack:
        child, above = stack.pop()
        copies = above * child.count
        if child.kind != "group":
            counts[child.kind] = counts.get(child.kind, 0) + copies
            parts.setdefault(child.kind, set()).add(child.part or "")
        stack.extend((grandchild, copies) for grandchild in index.get(child.id, []))
    lines = [f"{failed:,} failed"] if failed else []  # short: a small card shows a few characters
    for kind in ("accelerator", "server", "switch", "nic", "rack", "cpu"):
        if kind in counts:
            only = parts[kind].pop() if len(parts[kind]) == 1 else None
            part = catalog.get(only) if only else None
            if kind == "accelerator" and part is not None:
                lines.append(f"{counts[kind]:,} × {part.name}")
            else:
                lines.append(f"{counts[kind]:,} {_PLURAL[kind] if counts[kind] != 1 else kind}")
            break
    if busiest is not None:
        lines.append(f"busiest link {busiest * 100:.0f}%")
    if not lines:
        lines.append("empty")
    return title, lines
