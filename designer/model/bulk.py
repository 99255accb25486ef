"""Edits of many items or links at once, each one undo step.

`sequence` joins edits each built from the state the ones before it leave (built on a scratch
copy), so one edit per item, made by the usual builders with all their rules, becomes one step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

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


def set_items(design: Design, item_ids: Iterable[str], text: str, **changes) -> Edit:
    """The same field values given to every item (a recount of a matched group recounts its
    partners, as `edits.set_item` does)."""
    ids = [i for i in dict.fromkeys(item_ids)]
    return sequence(design, [lambda d, i=i: edits.set_item(d, i, text, **changes) for i in ids], text)


def set_links(design: Design, link_ids: Iterable[str], text: str, **changes) -> Edit:
    ids = [i for i in dict.fromkeys(link_ids)]
    return sequence(design, [lambda d, i=i: edits.set_link(d, i, text, **changes) for i in ids], text)
