"""A torus of reconfigurable blocks (TPU v4's cubes joined through optical circuit switches): its
blocks, those a failure left intact, the largest slice they make and the design cut to it
(docs/goodput.md, "A torus of reconfigurable blocks").
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass, replace

from designer.engine.network import is_passthrough
from designer.model.catalog import Catalog
from designer.model.design import Design


@dataclass(frozen=True)
class Blocks:
    """A torus drawn from the template whose blocks meet through circuit switches an operator can
    set up again (TPU v4's 4×4×4 cubes and optical circuit switches): `group` the replicated group
    of blocks, `block` a block's chips per dimension, `counts` blocks per dimension of the torus."""

    group: str
    block: tuple[int, ...]
    counts: tuple[int, ...]

    def text(self) -> str:
        return " × ".join(map(str, self.block))


def torus_dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in str(text).lower().split("x"))


def reconfigurable_blocks(design: Design, catalog: Catalog) -> Blocks | None:
    """The blocks of a one-pod torus drawn from the torus template with blocks joined through
    circuit switches (`network.is_passthrough`: the template's `switch`), or None. A mesh or torus
    wired directly (Tesla Dojo's tiles, one block) and several pods are not reconfigurable here."""
    template = design.settings.get("template") or {}
    params = template.get("params") or {}
    if template.get("name") != "torus" or not params.get("block") or not params.get("dims") \
            or int(params.get("pods") or 1) != 1 or not is_passthrough(catalog.get(params.get("switch"))):
        return None
    dims, block = torus_dims(params["dims"]), torus_dims(params["block"])
    if len(dims) != len(block) or any(d % b for d, b in zip(dims, block)):
        return None
    counts = tuple(d // b for d, b in zip(dims, block))
    blocks = math.prod(counts)
    chip = next((i for i in design.items.values() if i.kind == "accelerator"), None)
    if blocks < 2 or chip is None:
        return None
    group = next((a.id for a in design.ancestors(chip.id) if a.count == blocks), None)
    return Blocks(group, block, counts) if group is not None else None


def largest_slice(counts: tuple[int, ...], intact: int) -> tuple[int, ...] | None:
    """Blocks per dimension of the largest slice `intact` blocks make, each dimension at most the
    torus's (`counts`): a box of whole blocks, as TPU v4 slices above one cube are (every
    dimension a multiple of 4 chips; Cloud TPU "TPU types and topologies"). Of equal sizes the
    most cube-like, then the smallest counts first (3 × 4 × 4). None without an intact block."""
    best, best_key = None, None
    for shape in itertools.product(*(range(1, c + 1) for c in counts)):
        size = math.prod(shape)
        if size > intact:
            continue
        key = (size, -(max(shape) - min(shape)), tuple(-c for c in shape))
        if best_key is None or key > best_key:
            best, best_key = shape, key
    return best


def intact_blocks(healthy: Design, broken: Design, group: str) -> int | None:
    """Blocks of the degraded design left as they were, where every failure went into copies of
    the group split out (`block:f1`) or removed: 0 where a failure reached every block (a part of
    the drawn block failed in all its copies, a medium thinned everywhere); None where it reached
    what the blocks share outside them (a circuit switch): no slice of blocks avoids it."""
    inside = {group} | {i.id for i in healthy.descendants(group)}
    every_block = False
    for item_id, item in healthy.items.items():
        if item_id != group and broken.items.get(item_id) != item:
            if item_id not in inside:
                return None
            every_block = True
    for link_id, link in healthy.links.items():
        if broken.links.get(link_id) != link:
            if link.a not in inside and link.b not in inside:
                return None
            every_block = True
    return 0 if every_block or group not in broken.items else broken.items[group].count


def slice_design(design: Design, blocks: Blocks, shape: tuple[int, ...]) -> Design:
    """The healthy design cut to a slice of `shape` blocks per dimension, its torus closed again
    through the circuit switches (the template's dims set to the slice's)."""
    settings = {k: copy.deepcopy(v) for k, v in design.settings.items() if k != "failures"}
    template = settings["template"]
    dims = "x".join(str(b * c) for b, c in zip(blocks.block, shape))
    settings["template"] = {**template, "params": {**template["params"], "dims": dims}}
    items = dict(design.items)
    items[blocks.group] = replace(items[blocks.group], count=math.prod(shape))
    return Design(design.name, design.description, items, dict(design.links), settings)
