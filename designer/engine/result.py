"""The engine's answer: an immutable, JSON-shaped record of one evaluation."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


def rounded(value: float | None, digits: int = 6) -> float | None:
    """A figure for the result: `digits` significant digits; None where it is missing or not
    finite (JSON has no infinity, and an untimed figure must not look like a number)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}") if value else 0.0


def freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


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
