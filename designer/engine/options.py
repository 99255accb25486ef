"""Engine options beyond the design (collective sizes, workload, plan), given as text.

`workload_from_options` checks the values a user typed (the CLI's `evaluate` and `export`
options) and returns the workload dict that `evaluate()` takes, or None when no option was given
(the design's own settings apply). Each refusal names the command-line option it came from."""

from __future__ import annotations

from designer.engine import workloads
from designer.engine.collectives import ALGORITHMS, OPS, parse_size
from designer.model.errors import DesignerError


class OptionError(DesignerError):
    pass


def _int(name: str, text: str, minimum: int = 1) -> int:
    try:
        value = int(str(text).replace("_", ""))
    except ValueError:
        raise OptionError(f"{name} must be a whole number, got '{text}'") from None
    if value < minimum:
        raise OptionError(f"{name} must be at least {minimum}, got {value}")
    return value


def parse_plan(text: str) -> dict | str:
    text = str(text).strip()
    if text == "auto":
        return "auto"
    plan: dict = {}
    for pair in text.split(","):
        if "=" not in pair:
            raise OptionError(f"--plan expects key=value pairs like tp=8,pp=4 or 'auto', got '{pair}'")
        key, value = (x.strip() for x in pair.split("=", 1))
        if key in ("tp", "pp", "dp", "mb"):
            plan[key] = _int(f"--plan {key}", value)
        elif key == "zero":
            plan[key] = _int("--plan zero", value, 0)
            if plan[key] > 3:
                raise OptionError(f"--plan zero must be 0, 1, 2 or 3, got {plan[key]}")
        elif key == "recompute":
            if value not in ("none", "selective", "full"):
                raise OptionError(f"--plan recompute must be none, selective or full, got '{value}'")
            plan[key] = value
        else:
            raise OptionError(f"--plan: unknown key '{key}'; use tp, pp, dp, mb, recompute, zero")
    return plan


def _tokens(text: str) -> float:
    units = {"K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "T": 1e12}
    t = str(text).strip()
    mult = units.get(t[-1:].upper(), 1.0) if t else 1.0
    if mult != 1.0:
        t = t[:-1]
    try:
        value = float(t) * mult
    except ValueError:
        raise OptionError(f"--tokens must be a number (K/M/G/T suffixes allowed), got '{text}'") from None
    if not value > 0:
        raise OptionError(f"--tokens must be positive, got '{text}'")
    return value


def workload_from_options(design, *, op: str | None = None, sizes: str | None = None,
                          algorithm: str | None = None, ranks: str | None = None, workload: str | None = None,
                          plan: str | None = None, global_batch: str | None = None, seq: str | None = None,
                          tokens: str | None = None) -> dict | None:
    """The workload the options describe, or None for the design's own settings."""
    given = (op, sizes, algorithm, ranks, workload, plan, global_batch, seq, tokens)
    if all(value in (None, "") for value in given):
        return None
    base = dict((design.settings.get("workload") or {}) if design is not None else {})
    collective = dict(base.get("collective") or {})
    if op is not None:
        if op not in OPS:
            raise OptionError(f"--op must be one of {', '.join(OPS)}, got '{op}'")
        collective["op"] = op
    if sizes:
        try:
            collective["sizes"] = [parse_size(s) for s in sizes.split(",") if s.strip()]
        except DesignerError as exc:
            raise OptionError(f"--sizes: {exc}") from None
        if not collective["sizes"]:
            raise OptionError("--sizes needs at least one size")
    if algorithm is not None:
        if algorithm != "auto" and algorithm not in ALGORITHMS:
            raise OptionError(f"--algorithm must be auto or one of {', '.join(ALGORITHMS)}, got '{algorithm}'")
        collective["algorithm"] = algorithm
    if ranks is not None:
        collective["ranks"] = _int("--ranks", ranks)
    train = dict(base.get("training") or {})
    if workload:
        train["model"] = workloads.resolve(workload)
    if plan:
        train["plan"] = parse_plan(plan)
    if global_batch is not None:
        train["global_batch"] = _int("--global-batch", global_batch)
    if seq is not None:
        train["seq"] = _int("--seq", seq)
    if tokens is not None:
        train["tokens"] = _tokens(tokens)
    return {"collective": collective, "training": train}
