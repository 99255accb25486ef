"""Where a new or moved item may go, what it is called, which media a link may use, which
accelerators a server platform takes and how its scale-up fabric is wired.

The canvas asks these when the user drops a part, drags an item into a container or draws a link;
the rules themselves are the model's, so a script placing parts gets the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from designer.model.catalog import Catalog, Part
from designer.model.design import ALLOWED_PARENTS, Design

# The name a new item of a kind gets, followed by a number ("Switch 3").
SHORT_NAMES = {"rack": "Rack", "server": "Server", "accelerator": "GPU", "cpu": "CPU", "nic": "NIC",
               "switch": "Switch", "group": "Group"}
# Media whose links are usually whole x16 connections rather than single lanes.
WIDE_LINK_FAMILIES = ("pcie", "fabrex")
WIDE_LINK_LANES = 16


def can_hold(container_kind: str, kind: str) -> bool:
    """Whether an item of `container_kind` may hold an item of `kind` (a rack holds servers)."""
    return container_kind in ALLOWED_PARENTS.get(kind, ())


def container_under(design: Design, kind: str, under: Iterable[str]) -> str | None:
    """The first item among `under` (ids of what lies under a drop point, topmost first) that may
    hold a new item of `kind`; None: the top level."""
    return next((i for i in under if i in design.items and can_hold(design.items[i].kind, kind)), None)


def reparent_problem(design: Design, item_id: str, new_parent: str | None) -> str | None:
    """Why an item may not be moved into `new_parent` (None for the top level), or None if it may.
    A move that changes how many copies the item stands for (into or out of a replicated group)
    is refused: it would silently add or drop hardware; Cut and Paste does that on purpose."""
    item = design.item(item_id)
    if new_parent == item.parent:
        return None
    where = design.item(new_parent).label if new_parent is not None else "the top level"
    if new_parent is not None:
        parent = design.items[new_parent]
        if not can_hold(parent.kind, item.kind):
            return f"Not moved into {where}: a {item.kind} cannot be placed inside a {parent.kind}"
        if new_parent == item_id or any(a.id == item_id for a in design.ancestors(new_parent)):
            return f"Not moved into {where}: {item.label} cannot be placed inside itself"

    def copies(parent_id: str | None) -> int:
        return design.multiplicity(parent_id) if parent_id is not None else 1

    if copies(new_parent) != copies(item.parent):
        # Moving in or out of a replicated group would silently change the hardware.
        return (f"Not moved into {where}: that would change how many copies of {item.label} there are "
                f"(×{copies(item.parent):,} → ×{copies(new_parent):,}); use Cut and Paste")
    return None


def next_name(design: Design, kind: str) -> str:
    """The name for a new item of `kind`: the kind's short name with the number after the highest
    one already used by an item of that kind named that way ("Switch 1" when there is none)."""
    short = SHORT_NAMES[kind]
    pattern = re.compile(rf"{re.escape(short)} (\d+)")
    used = [int(m.group(1)) for i in design.items.values()
            if i.kind == kind and (m := pattern.fullmatch(i.name)) is not None]
    return f"{short} {max(used, default=0) + 1}"


@dataclass(frozen=True)
class LinkMedia:
    """The media a link between two items may use (both ends support them, in the first end's
    order), or the reason no link is possible."""

    media: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def default(self) -> str | None:
        return self.media[0] if self.media else None


def link_media(design: Design, catalog: Catalog, a_id: str, b_id: str) -> LinkMedia:
    a, b = design.items.get(a_id), design.items.get(b_id)
    if a is None or b is None or a_id == b_id:
        return LinkMedia(reason="Link: drag from one item to another")
    for end in (a, b):
        if end.kind == "group":
            return LinkMedia(reason=f"Cannot link to the group '{end.label}': "
                                    "links join hardware (a switch, NIC, GPU...)")
    pa, pb = catalog.get(a.part), catalog.get(b.part)
    if pa is None or pb is None:
        return LinkMedia(reason="Cannot link: a part is not in the catalogue")
    shared = tuple(m for m in pa.media if m in pb.media)
    if not shared:
        offered = f"{pa.name}: {', '.join(pa.media) or 'none'}; {pb.name}: {', '.join(pb.media) or 'none'}"
        return LinkMedia(reason=f"Cannot link {a.label} and {b.label}: no common medium ({offered})")
    return LinkMedia(media=shared)


def medium_problem(design: Design, catalog: Catalog, a_id: str, b_id: str, medium: str) -> str | None:
    """Why a link between the two items may not use `medium` (an end's part does not support it)."""
    for end in (a_id, b_id):
        part = catalog.get(design.item(end).part)
        if part is not None and medium not in part.media:
            return f"{part.name} does not support {medium} (it supports {', '.join(part.media) or 'none'})"
    return None


def default_lanes(catalog: Catalog, medium: str) -> int:
    """Lanes a new link over `medium` gets: a PCIe-like link is a whole x16 connection."""
    part = catalog.get(medium)
    return WIDE_LINK_LANES if part is not None and part.get("family") in WIDE_LINK_FAMILIES else 1


def scale_up_media(catalog: Catalog, platform: Part) -> frozenset[str] | None:
    """The media of a server platform's scale-up fabric (its switches', or its default
    accelerator's for a mesh); None: the platform has no scale-up fabric of its own."""
    scale_up = platform.get("scale_up") or {}
    switch = catalog.get(scale_up.get("switch") or scale_up.get("pcie_switch"))
    if switch is not None:
        return frozenset(switch.media)
    default = catalog.get(platform.get("default_accelerator"))
    if scale_up.get("mesh") and default is not None and default.get("scale_up_medium"):
        return frozenset([default.get("scale_up_medium")])
    return None


def fits_platform(catalog: Catalog, accelerator: Part, platform: Part) -> bool:
    """Whether an accelerator can sit in a server platform: it speaks the platform's scale-up
    fabric (an H100 has no Infinity Fabric for an MI300X baseboard; an A100 no NVLink 4)."""
    fabric = scale_up_media(catalog, platform)
    return fabric is None or bool(fabric & set(accelerator.media))


def switch_lanes(lanes: int, switches: int, gpu: int, switch: int) -> int:
    """A GPU's scale-up lanes shared out over the platform's switches as evenly as whole links
    allow, rotated per GPU (DGX H100: 18 NVLinks over 4 NVSwitch chips = 5+4+4+5)."""
    return lanes // switches + (1 if (switch + gpu) % switches < lanes % switches else 0)


def mesh_lanes(lanes: int, gpus: int) -> int:
    """Lanes of each GPU pair's link in a fully connected mesh of `gpus` GPUs."""
    return max(1, lanes // (gpus - 1))
