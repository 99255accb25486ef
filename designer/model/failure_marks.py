"""The failure what-if's rules for a selection, without Qt: what Fail, Fail One Copy, Fail Some
Copies and Restore can do for the chosen items and links, and the `settings["failures"]` each one
leaves. The editor (ui.editor) asks these and makes the answer one undo step; the engine
(engine.failures) reads the marks.

A mark is an entry of `settings["failures"]`: `{"target": id}` for every copy, plus `"copies"` or
`"percent"` for a part of them. A target is an item, a link, or a link medium (a part id: a share
of every link on it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from designer.model import edits
from designer.model.design import Design

FailuresSetting = list[dict[str, Any]] | None  # None: no marks, the setting is left out of the file


def marked_targets(design: Design) -> set[str]:
    """Ids of the items, links and media the design marks failed (whole or in part)."""
    return {entry["target"] for entry in design.settings.get("failures") or ()}


@dataclass(frozen=True)
class Offer:
    """Which what-if actions a selection offers."""

    fail: bool
    fail_one: bool
    fail_some: bool
    restore: bool


@dataclass(frozen=True)
class CopiesChoice:
    """The one selected item or link a number or share of whose copies can fail."""

    target: str
    name: str  # as the dialog names it: the item's label, or "Link A — B"
    total: int  # copies the item stands for, or physical links the link stands for
    what: str  # "copies" or "physical links"


def known(design: Design, items: Iterable[str], links: Iterable[str]) -> tuple[list[str], list[str]]:
    """The chosen ids still in the design (while the canvas mirrors a removal, gone ones may be selected)."""
    return [i for i in items if i in design.items], [i for i in links if i in design.links]


def offer(design: Design, items: list[str], links: list[str]) -> Offer:
    """What the selection (ids in the design) can do.

    Select All on a big design chooses tens of thousands of ids: each answer takes the shortest
    look that settles it. Without marks every chosen item or link can fail (the outermost chosen
    items are never none) and nothing can be restored. One copy can fail only inside a replicated
    group: for a selection of many items, one look over the design for such a group (big flat
    designs have none) is cheaper than a walk up from each item."""
    marked = marked_targets(design)
    if marked:
        fail = any(i not in marked for i in links) or any(i not in marked for i in edits.outermost(design, items))
    else:
        fail = bool(items or links)
    replicated = len(items) * 4 < len(design.items) or any(item.count > 1 for item in design.items.values())
    fail_one = replicated and any(i not in marked and design.multiplicity(i) > 1 for i in items)
    restore = not (marked.isdisjoint(items) and marked.isdisjoint(links)
                   and marked.isdisjoint(marked_media(design, marked, links)))
    return Offer(fail=fail, fail_one=fail_one, fail_some=copies_to_fail(design, items, links) is not None,
                 restore=restore)


def targets_to_fail(design: Design, items: list[str], links: list[str], copies: int | None) -> list[str]:
    """What Fail (`copies` None: every copy of the outermost chosen items and the chosen links) or
    Fail One Copy (`copies` 1: the outermost chosen items standing for more copies) marks: only
    what is not marked yet."""
    marked = marked_targets(design)
    chosen = [i for i in edits.outermost(design, [i for i in items if i in design.items]) if i not in marked]
    if copies is None:
        chosen += [i for i in links if i in design.links and i not in marked]
    else:
        chosen = [i for i in chosen if design.multiplicity(i) > copies]
    return chosen


def with_marks(design: Design, entries: Iterable[dict[str, Any]]) -> FailuresSetting:
    """The failures setting with `entries` (new marks) after the design's own."""
    return list(design.settings.get("failures") or []) + list(entries)


def copies_to_fail(design: Design, items: list[str], links: list[str]) -> CopiesChoice | None:
    """The one selected item or link that stands for several copies and is not marked yet; else None."""
    if len(items) + len(links) != 1:
        return None
    target = (items or links)[0]
    if target in marked_targets(design):
        return None
    if items:
        item = design.items[target]
        total, what, name = design.multiplicity(target), "copies", item.label
    else:
        link = design.links[target]
        total, what = design.link_copies(link).instances, "physical links"
        name = f"Link {design.items[link.a].label} — {design.items[link.b].label}"
    return CopiesChoice(target, name, total, what) if total > 1 else None


def copies_on_medium(design: Design, medium: str) -> list[int]:
    """The physical links each drawn link on `medium` stands for (a share of the medium fails among them)."""
    return [design.link_copies(link).instances for link in design.links.values() if link.medium == medium]


def marked_media(design: Design, marked: set[str], links: list[str]) -> set[str]:
    """The link media among `marked` that some of `links` are on (a link is restored with its medium)."""
    media = {target for target in marked if target not in design.items and target not in design.links}
    return {design.links[i].medium for i in links if i in design.links} & media if media else set()


def after_restore(design: Design, items: list[str], links: list[str]) -> FailuresSetting:
    """The failures setting once the chosen items and links (and the media of the links) are back in service."""
    chosen = set(items) | set(links) | marked_media(design, marked_targets(design), links)
    entries = [e for e in design.settings.get("failures") or [] if e["target"] not in chosen]
    return entries or None
