"""Who pays for which watt.

A server platform's `system_power_w` is its published maximum with its default accelerators
fitted; the chassis (CPUs, NICs, fans, the switches on its board) is that figure less those
accelerators. The accelerators actually inside are then added one by one, so a DGX H100 with four
GPUs removed draws four GPUs less. Parts inside a server other than accelerators are covered by the
chassis figure; the same parts standing alone draw their own `power_w`.
"""

from __future__ import annotations

from designer.model.catalog import Catalog, Part
from designer.model.design import Design, Item


def chassis_power_w(server: Part, catalog: Catalog) -> float:
    default = catalog.get(server.get("default_accelerator"))
    fitted = server.number("accelerator_slots") * default.number("power_w") if default else 0.0
    return max(0.0, server.number("system_power_w") - fitted)


def item_power_w(design: Design, item: Item, catalog: Catalog) -> float:
    """Power of one copy of this item on its own (not counting its children)."""
    part = catalog.get(item.part)
    if part is None or part.kind != item.kind:
        return 0.0
    if item.kind == "accelerator":
        return part.number("power_w")
    if item.kind == "server":
        return chassis_power_w(part, catalog)
    if item.kind in ("switch", "nic", "cpu"):
        inside_server = any(a.kind == "server" for a in design.ancestors(item.id))
        return 0.0 if inside_server else part.number("power_w")
    return 0.0
