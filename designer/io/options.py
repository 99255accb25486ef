"""Engine options beyond the design (collective sizes, workload, plan), given as text on the
command line.

`workload_from_options` parses what the user typed, checks each value against the same schema as
a design file's `settings.workload` (`designer.io.schemas`, the same limits), and returns the
workload dict that `evaluate()` takes, or None when no option was given (the design's own settings
apply). Each refusal names the option: `command line: --sizes[1]: expected a positive size ...`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NoReturn

from designer.engine import workloads
from designer.engine.collectives import parse_size
from designer.engine.workloads import WorkloadError
from designer.io import schemas
from designer.io.files import DesignFileError, load_workload
from designer.model.design import Design
from designer.model.errors import DesignerError, InputError
from designer.model.validation import check, show

SOURCE = "command line"
_COLLECTIVE = schemas.WORKLOAD_SETTING["properties"]["collective"]["properties"]
_TRAINING = schemas.WORKLOAD_SETTING["properties"]["training"]["properties"]


class OptionError(InputError):
    pass


def _fail(option: str, problem: str) -> NoReturn:
    raise OptionError(SOURCE, option, problem)


def _checked(option: str, value: Any, schema: dict) -> Any:
    check(value, schema, SOURCE, OptionError, option)
    return value


def _int(option: str, text: str) -> int:
    try:
        return int(str(text).strip().replace("_", ""))
    except ValueError:
        _fail(option, f"expected a whole number, got {show(text)}")


_PLAN_NUMBERS = ("tp", "pp", "vp", "dp", "cp", "sp", "ep", "mb", "zero")
_PLAN_WORDS = ("recompute", "attention")


def _pairs(option: str, text: str, example: str) -> list[tuple[str, str]]:
    pairs = []
    for pair in str(text).split(","):
        if "=" not in pair:
            _fail(option, f"expected key=value pairs like {example}, got {show(pair)}")
        key, value = (x.strip() for x in pair.split("=", 1))
        pairs.append((key, value))
    return pairs


def parse_plan(text: str) -> dict | str:
    """`auto`, or key=value pairs: tp, pp, vp, dp, cp, sp, ep, mb, zero (whole numbers), recompute
    and attention (words); keys left out take the engine's defaults."""
    text = str(text).strip()
    if text == "auto":
        return "auto"
    plan: dict = {}
    for key, value in _pairs("--plan", text, "tp=8,pp=4 or 'auto'"):
        if key in _PLAN_NUMBERS:
            plan[key] = _int(f"--plan {key}", value)
        elif key in _PLAN_WORDS:
            plan[key] = value
        else:
            _fail("--plan", f"unknown key {show(key)}; use {', '.join(_PLAN_NUMBERS + _PLAN_WORDS)}")
    return _checked("--plan", plan, _TRAINING["plan"])


def parse_overlap(text: str) -> dict:
    """key=value pairs: tp (none|partial|full), dp, pp, cp, ep (none|full)."""
    overlap = {}
    for key, value in _pairs("--overlap", text, "tp=partial,dp=full"):
        if key not in _TRAINING["overlap"]["properties"]:
            _fail("--overlap", f"unknown key {show(key)}; use {', '.join(_TRAINING['overlap']['properties'])}")
        overlap[key] = value
    return _checked("--overlap", overlap, _TRAINING["overlap"])
_IN_NETWORK = {"on": {"nvls": True, "sharp": True}, "off": {"nvls": False, "sharp": False},
               "nvls": {"nvls": True, "sharp": False}, "sharp": {"nvls": False, "sharp": True}}


def in_network_reduction(text: str) -> dict:
    """`--in-network-reduction`: the design setting it stands for (which kinds collectives may use)."""
    value = _IN_NETWORK.get(str(text).strip().lower())
    if value is None:
        _fail("--in-network-reduction", f"expected on, off, nvls or sharp, got {show(text)}")
    return dict(value)


def _tokens(text: str) -> float:
    units = {"K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "T": 1e12}
    t = str(text).strip()
    mult = units.get(t[-1:].upper(), 1.0) if t else 1.0
    if mult != 1.0:
        t = t[:-1]
    try:
        value = float(t) * mult
    except ValueError:
        _fail("--tokens", f"expected a number (K/M/G/T suffixes allowed), got {show(text)}")
    if not math.isfinite(value):
        _fail("--tokens", f"expected a finite number, got {show(text)}")
    return _checked("--tokens", value, _TRAINING["tokens"])


def _sizes(text: str) -> list[int]:
    sizes = []
    for index, size in enumerate(s for s in text.split(",") if s.strip()):
        try:
            sizes.append(parse_size(size))
        except DesignerError as exc:
            _fail(f"--sizes[{index}]", str(exc))
    if not sizes:
        _fail("--sizes", "needs at least one size")
    return _checked("--sizes", sizes, _COLLECTIVE["sizes"])


def _model(text: str) -> str | dict:
    """A preset's name, or the model in the workload file the user named."""
    if text in workloads.PRESETS:
        return text
    if not _is_file(Path(text)):
        _fail("--workload", f"expected a preset ({', '.join(workloads.PRESETS)}) or a workload file, "
                            f"got {show(text)} (no such file)")
    return load_workload(text)


def _is_file(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return True  # let the reader say why it cannot be read


# Where each setting of a workload comes from on the command line.
_OPTION_OF: dict[str | None, str] = {
    "collective.op": "--op", "collective.sizes": "--sizes", "collective.algorithm": "--algorithm",
    "collective.ranks": "--ranks", "training.model": "--workload", "training.plan": "--plan",
    "training.global_batch": "--global-batch", "training.seq": "--seq", "training.tokens": "--tokens"}


def placed(error: WorkloadError, given: dict[str, str | None], design_path: object) -> InputError:
    """A workload that does not fit the design (a plan that does not divide its accelerators, more
    ranks than it has), refused where the setting came from: the option if one was given, else the
    design file's JSON path."""
    option = _OPTION_OF[error.setting]
    if given.get(option.removeprefix("--").replace("-", "_")) not in (None, ""):
        return OptionError(SOURCE, option, error.problem)
    return DesignFileError(design_path, f"$.settings.workload.{error.setting}", error.problem)


def workload_from_options(design: Design, *, op: str | None = None, sizes: str | None = None,
                          algorithm: str | None = None, ranks: str | None = None, workload: str | None = None,
                          plan: str | None = None, overlap: str | None = None, global_batch: str | None = None,
                          seq: str | None = None, tokens: str | None = None) -> dict | None:
    """The workload the options describe, or None for the design's own settings."""
    given = (op, sizes, algorithm, ranks, workload, plan, overlap, global_batch, seq, tokens)
    if all(value in (None, "") for value in given):
        return None
    base = dict((design.settings.get("workload") or {}) if design is not None else {})
    collective = dict(base.get("collective") or {})
    if op is not None:
        collective["op"] = _checked("--op", op, _COLLECTIVE["op"])
    if sizes:
        collective["sizes"] = _sizes(sizes)
    if algorithm is not None:
        collective["algorithm"] = _checked("--algorithm", algorithm, _COLLECTIVE["algorithm"])
    if ranks is not None:
        collective["ranks"] = _checked("--ranks", _int("--ranks", ranks), _COLLECTIVE["ranks"])
    train = dict(base.get("training") or {})
    if workload:
        train["model"] = _model(workload)
    if plan:
        train["plan"] = parse_plan(plan)
    if overlap:
        train["overlap"] = {**(train.get("overlap") or {}), **parse_overlap(overlap)}
    if global_batch is not None:
        train["global_batch"] = _checked("--global-batch", _int("--global-batch", global_batch),
                                         _TRAINING["global_batch"])
    if seq is not None:
        train["seq"] = _checked("--seq", _int("--seq", seq), _TRAINING["seq"])
    if tokens is not None:
        train["tokens"] = _tokens(tokens)
    return {"collective": collective, "training": train}
