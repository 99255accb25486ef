"""What breaks if an item becomes another part, asked before the change is made.

A part change that leaves a link on a medium the new part does not take (an InfiniBand switch
made an Ethernet one) or accelerators on a platform whose scale-up fabric they cannot use (a DGX
H100 made an MI300X platform, H100s and all) is refused with the reasons. Where one consistent
change exists (the platform's own accelerators and scale-up fabric), it is offered as one edit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from designer.model import edits, placement
from designer.model.catalog import Catalog, Part
from designer.model.design import Design, Item
from designer.model.edits import Edit


@dataclass(frozen=True)
class PartChange:
    """The answer: no `problems`, or the reasons the change alone is refused and, if there is
    one, the consistent `fix` (the part change and what has to change with it) and what the fix
    does in words (`fix_text`)."""

    problems: tuple[str, ...] = ()
    fix: Edit | None = None
    fix_text: str = ""


def check_part_change(design: Design, catalog: Catalog, item_id: str, part_id: str) -> PartChange:
    item, new = design.item(item_id), catalog.get(part_id)
    if new is None:
        return PartChange((f"'{part_id}' is not in the catalogue",))
    if new.kind != item.kind:
        return PartChange((f"{new.name} is a {new.kind}, not a {item.kind}",))
    problems = _unsupported_links(design, catalog, item_id, new)
    if item.kind == "accelerator":
        server = design.enclosing(item_id, "server")
        platform = catalog.get(server.part) if server is not None else None
        if server is not None and platform is not None and not placement.fits_platform(catalog, new, platform):
            problems.append(f"{new.name} does not fit {server.label}: the {platform.name} joins its GPUs over "
                            f"{_names(catalog, placement.scale_up_media(catalog, platform))}")
    if item.kind != "server":
        return PartChange(tuple(problems))
    misfits = Counter(catalog[a.part].name for a in _accelerators(design, catalog, item_id)
                      if not placement.fits_platform(catalog, catalog[a.part], new))
    fabric = _names(catalog, placement.scale_up_media(catalog, new))
    for name, count in misfits.items():
        problems.append(f"{count} {name} in {item.label} cannot join the {new.name}'s scale-up fabric ({fabric})")
    default = catalog.get(new.get("default_accelerator"))
    if not misfits or default is None or len(problems) > len(misfits):
        return PartChange(tuple(problems))
    swapped = " and ".join(f"{count} {name}" for name, count in misfits.items())
    return PartChange(tuple(problems), edits.change_platform(design, catalog, item_id, part_id),
                      f"Also swap the {swapped} for {default.name} and rewire the scale-up fabric")


def _unsupported_links(design: Design, catalog: Catalog, item_id: str, new: Part) -> list[str]:
    by_medium = Counter(link.medium for link in design.links_of(item_id) if link.medium not in new.media)
    supported = ", ".join(new.media) or "none"
    label = design.items[item_id].label
    return [f"{new.name} does not support {_names(catalog, [medium])}, used by {count} link{'s' if count > 1 else ''} "
            f"of {label} (it supports {supported})" for medium, count in by_medium.items()]


def _accelerators(design: Design, catalog: Catalog, server_id: str) -> list[Item]:
    """The server's own catalogued accelerators (not those of a server nested inside it)."""
    return [i for i in design.descendants(server_id) if i.kind == "accelerator" and catalog.get(i.part) is not None
            and _enclosing_id(design, i.id, "server") == server_id]


def _enclosing_id(design: Design, item_id: str, kind: str) -> str | None:
    """The id of the innermost item of `kind` holding `item_id`, None when there is none."""
    enclosing = design.enclosing(item_id, kind)
    return enclosing.id if enclosing is not None else None


def _names(catalog: Catalog, media: Iterable[str] | None) -> str:
    return " or ".join(sorted(catalog[m].name if catalog.get(m) else m for m in media or ()))


# --- many items at once (Replace Part…, the inspector's multi-selection) -----------------------------
@dataclass(frozen=True)
class PartsChange:
    """Many items made another part, as one edit (None when refused: `problems` says why).
    `changed`: the items given the new part; `contents`: the accelerators and NICs inside changed
    servers swapped with their platform."""

    edit: Edit | None
    changed: tuple[str, ...] = ()
    contents: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def using_part(design: Design, part_id: str, within: Iterable[str] | None = None) -> list[str]:
    """The items of `part_id`, everywhere or among `within` and everything inside them."""
    if within is None:
        return [i.id for i in design.items.values() if i.part == part_id]
    index = design.children_index()
    ids: dict[str, None] = {}
    for item_id in within:
        if item_id in design.items:
            ids[item_id] = None
            ids.update((d.id, None) for d in design.descendants(item_id, index))
    return [i for i in ids if design.items[i].part == part_id]


def change_parts(design: Design, catalog: Catalog, item_ids: Iterable[str], part_id: str,
                 with_contents: bool = True, text: str | None = None) -> PartsChange:
    """Every item in `item_ids` made `part_id`, as one edit. A server with `with_contents` changes
    platform consistently (`edits.change_platform`) and its accelerators and NICs that were the old
    platform's defaults become the new one's (an HGX H200 gets H200s); without it, or for any other
    kind, each change is checked alone (`check_part_change`) and any problem refuses the whole."""
    new = catalog.get(part_id)
    ids = [i for i in dict.fromkeys(item_ids) if design.items[i].part != part_id]
    if new is None:
        return PartsChange(None, problems=(f"'{part_id}' is not in the catalogue",))
    scratch = design.snapshot()
    ops: list = []
    problems: list[str] = []
    contents: list[str] = []

    def take(edit: Edit) -> None:
        edit.apply(scratch)
        ops.extend(edit.ops)

    for item_id in ids:
        item = scratch.items[item_id]
        if item.kind == "server" and with_contents and new.kind == "server":
            old = catalog.get(item.part)
            before = dict(scratch.items)
            take(edits.change_platform(scratch, catalog, item_id, part_id))
            for kind, key in (("accelerator", "default_accelerator"), ("nic", "default_nic")):
                was, becomes = (old.get(key) if old else None), catalog.get(new.get(key))
                for own in _own(scratch, item_id, kind):
                    if becomes is None or own.part != was or own.part == becomes.id:
                        continue
                    check = check_part_change(scratch, catalog, own.id, becomes.id)
                    if check.problems:
                        problems.extend(check.problems)
                    else:
                        take(edits.set_item(scratch, own.id, part=becomes.id))
            contents.extend(i for i, v in scratch.items.items() if i != item_id and i in before
                            and v.kind in ("accelerator", "nic") and before[i].part != v.part)
            continue
        check = check_part_change(scratch, catalog, item_id, part_id)
        if check.problems:
            problems.extend(check.problems)
            continue
        take(edits.set_item(scratch, item_id, part=part_id))
    if problems:
        return PartsChange(None, tuple(ids), tuple(contents), tuple(dict.fromkeys(problems)))
    count = len(ids)
    text = text or f"Replace {count} {design.items[ids[0]].kind if ids else 'item'}{'s' if count != 1 else ''} " \
                   f"with {new.name}"
    return PartsChange(Edit(tuple(ops), text), tuple(ids), tuple(dict.fromkeys(contents)))


def _own(design: Design, server_id: str, kind: str) -> list[Item]:
    """The server's own items of `kind` (not those of a server nested inside it)."""
    return [i for i in design.descendants(server_id) if i.kind == kind
            and _enclosing_id(design, i.id, "server") == server_id]
