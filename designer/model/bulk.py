"""Edits of many items or links at once, each one undo step.

`sequence` joins edits each built from the state the ones before it leave (built on a scratch
copy), so one edit per item, made by the usual builders with all their rules, becomes one step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from designer.model import edits
from designer.model.design import Design
from designer.model.edits import Edit


def sequence(design: Design, builds: Iterable[Callable[[Design], Edit]], text: str) -> Edit:
    """The edits `builds` make, one after another, as one edit named `text`. Each is built from
    (and applied to) a scratch copy, so a refusal (DesignError) comes before anything changes."""
    scratch = design.snapshot()
    ops: list = []
    for build in builds:
        edit = build(scratch)
        edit.apply(scratch)
        ops.extend(edit.ops)
    return Edit(tuple(ops), text)


def set_items(design: Design, item_ids: Iterable[str], text: str, **changes: Any) -> Edit:
    """The same field values given to every item (a recount of a matched group recounts its
    partners, as `edits.set_item` does)."""
    def build(item_id: str) -> Callable[[Design], Edit]:
        return lambda d: edits.set_item(d, item_id, text, **changes)

    return sequence(design, [build(i) for i in dict.fromkeys(item_ids)], text)


def set_links(design: Design, link_ids: Iterable[str], text: str, **changes: Any) -> Edit:
    def build(link_id: str) -> Callable[[Design], Edit]:
        return lambda d: edits.set_link(d, link_id, text, **changes)

    return sequence(design, [build(i) for i in dict.fromkeys(link_ids)], text)
