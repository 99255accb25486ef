"""Engine options beyond the design (collective sizes, workload, plan), from the command line.

The CLI's `evaluate` and `export` share them. `from_arguments` returns the workload dict that
`evaluate()` takes, or None when no option was given (the design's own settings apply)."""

from __future__ import annotations

import argparse

from designer.engine import workloads
from designer.engine.collectives import ALGORITHMS, OPS, parse_size
from designer.model.errors import DesignerError


class OptionError(DesignerError):
    pass


DEFAULT_SIZES = ("1M", "16M", "256M", "1G", "8G")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the engine's options to a sub-command."""
    g = parser.add_argument_group("network and training")
    g.add_argument("--op", help=f"collective operation: {', '.join(OPS)} (default allreduce)")
    g.add_argument("--sizes", help="message sizes in bytes, comma-separated, K/M/G = 2^10/2^20/2^30 (default 1M,16M,256M,1G,8G)")
    g.add_argument("--algorithm", help=f"auto (default) or one of {', '.join(ALGORITHMS)}")
    g.add_argument("--ranks", help="communicator: the first N accelerators in topology order (default all)")
    g.add_argument("--workload", help=f"LLM preset ({', '.join(workloads.PRESETS)}) or a JSON file")
    g.add_argument("--plan", help="tp=8,pp=16,dp=8,mb=1,recompute=selective,zero=1 or auto (default auto)")
    g.add_argument("--global-batch", dest="global_batch", help="sequences per step")
    g.add_argument("--seq", help="sequence length in tokens")
    g.add_argument("--tokens", help="tokens to train on, for days to train (K/M/G/T = 10^3.. allowed)")


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


def from_arguments(args: argparse.Namespace, design) -> dict | None:
    """The workload the options describe, or None for the design's own settings."""
    names = ("op", "sizes", "algorithm", "ranks", "workload", "plan", "global_batch", "seq", "tokens")
    if all(getattr(args, n, None) in (None, "") for n in names):
        return None
    base = dict((design.settings.get("workload") or {}) if design is not None else {})
    collective = dict(base.get("collective") or {})
    op = getattr(args, "op", None)
    if op is not None:
        if op not in OPS:
            raise OptionError(f"--op must be one of {', '.join(OPS)}, got '{op}'")
        collective["op"] = op
    if getattr(args, "sizes", None):
        try:
            collective["sizes"] = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
        except DesignerError as exc:
            raise OptionError(f"--sizes: {exc}") from None
        if not collective["sizes"]:
            raise OptionError("--sizes needs at least one size")
    algorithm = getattr(args, "algorithm", None)
    if algorithm is not None:
        if algorithm != "auto" and algorithm not in ALGORITHMS:
            raise OptionError(f"--algorithm must be auto or one of {', '.join(ALGORITHMS)}, got '{algorithm}'")
        collective["algorithm"] = algorithm
    if getattr(args, "ranks", None) is not None:
        collective["ranks"] = _int("--ranks", args.ranks)
    train = dict(base.get("training") or {})
    if getattr(args, "workload", None):
        train["model"] = workloads.resolve(args.workload)
    if getattr(args, "plan", None):
        train["plan"] = parse_plan(args.plan)
    if getattr(args, "global_batch", None) is not None:
        train["global_batch"] = _int("--global-batch", args.global_batch)
    if getattr(args, "seq", None) is not None:
        train["seq"] = _int("--seq", args.seq)
    if getattr(args, "tokens", None) is not None:
        train["tokens"] = _tokens(args.tokens)
    return {"collective": collective, "training": train}
