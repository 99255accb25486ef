"""The engine's answer: an immutable, JSON-shaped record of one evaluation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def rounded(value: float | None, digits: int = 6) -> float | None:
    """A figure for the result: `digits` significant digits; None where it is missing or not
    finite (JSON has no infinity, and an untimed figure must not look like a number)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}") if value else 0.0


_PLAIN = frozenset({str, int, float, bool, type(None)})


def freeze(value: Any) -> Any:
    # Plain values are returned in place without a call per value: utilization sections hold
    # thousands of small records.
    kind = type(value)
    if kind is dict:
        return MappingProxyType({k: v if type(v) in _PLAIN else freeze(v) for k, v in value.items()})
    if kind is list:
        return tuple([v if type(v) in _PLAIN else freeze(v) for v in value])
    if isinstance(value, dict):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def freeze_owned(records: list) -> tuple:
    """`freeze` of a list of flat dicts of plain values (str, int, float, bool, None) that nothing
    else holds, such as fresh per-link records: wraps them read-only in place instead of copying."""
    return tuple(map(MappingProxyType, records))


def thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Result:
    """Sections by name (`inventory`, `bom`, `compute`, `memory`, `power`, `cost`, `lint`, and the
    network sections), each a read-only mapping in the shape `evaluate --json` prints."""

    sections: Mapping[str, Any]
    seconds: float = field(default=0.0, compare=False)

    def __getitem__(self, name: str) -> Any:
        return self.sections[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.sections.get(name, default)

    def as_dict(self) -> dict:
        return thaw(self.sections)
