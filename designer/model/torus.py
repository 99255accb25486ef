"""How the torus template names its chips and circuit switches: the generator writes the ids, the
engine reads a chip's place in its block and a switch's axis back from them (the lines of a torus
a failed switch or link breaks, docs/goodput.md, "A failed circuit switch").

A copy split out of a replicated group by a failure what-if keeps the id with a suffix (":f1"),
which these readers accept."""

from __future__ import annotations

import re

_CHIP = re.compile(r"^chip([0-9]+(?:-[0-9]+)*)(?::f[0-9]+)*$")
_SWITCH = re.compile(r"^ocs([0-9]+)-[0-9]+(?::f[0-9]+)*$")


def chip_id(coord: tuple[int, ...]) -> str:
    """The chip at `coord` of its block: "chip0-3-1"."""
    return "chip" + "-".join(map(str, coord))


def chip_coord(item_id: str) -> tuple[int, ...] | None:
    """The place in its block of a chip the template drew, or None for any other id."""
    match = _CHIP.match(item_id)
    return tuple(int(c) for c in match.group(1).split("-")) if match else None


def circuit_switch_id(axis: int, slot: int) -> str:
    """The circuit switch serving face position `slot` along `axis`: "ocs0-5"."""
    return f"ocs{axis}-{slot}"


def circuit_switch_axis(item_id: str) -> int | None:
    """The axis whose blocks' faces a circuit switch the template drew joins, or None."""
    match = _SWITCH.match(item_id)
    return int(match.group(1)) if match else None
