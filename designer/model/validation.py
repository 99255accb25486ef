"""The one way input from outside is checked: read a file within limits, parse its JSON without
surprises, check the document against its format's JSON Schema (Draft 2020-12), and refuse it with
one short line naming the file and the JSON path of the most relevant problem.

Each format has one schema: the design file and the workload file in `designer.io.schemas`, the
parts catalogue in `designer.model.catalog`. A schema node may carry `"x-expected"`, the words a
refusal uses for what belongs there ("a positive size like \"1G\""). What a schema cannot say (ids
unique, references that exist, counts within the model's limits) is checked by the format's own
code after the schema, and refused with the same `InputError` line.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import best_match
from jsonschema.validators import extend

from designer.model.errors import InputError

# Whole numbers are exact (1.0 is not a count); numbers are finite. JSON has no NaN or Infinity,
# and an integer literal of more digits than this is refused before Python converts it.
MAX_INTEGER_DIGITS = 18
MIB = 2 ** 20


class NotANumber:
    """What the parser puts where a file holds NaN, Infinity, a number that overflows a float or an
    integer literal of more than MAX_INTEGER_DIGITS digits: no schema type accepts it, so the
    refusal names its JSON path."""

    def __init__(self, text: str):
        self.text = text if len(text) <= 24 else f"a {len(text):,}-digit number"

    def __repr__(self) -> str:
        return self.text


def _parse_int(text: str) -> int | NotANumber:
    digits = len(text) - (text[0] == "-")
    return int(text) if digits <= MAX_INTEGER_DIGITS else NotANumber(text)


def _parse_float(text: str) -> float | NotANumber:
    value = float(text)
    return value if math.isfinite(value) else NotANumber(text)


def parse_json(text: str, source: object, error: type[InputError] = InputError) -> Any:
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=NotANumber)
    except json.JSONDecodeError as exc:
        raise error(source, None, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise error(source, None, "not valid here: lists and objects nested too deeply") from None


def read_text(path: str | os.PathLike, limit_bytes: int, what: str, error: type[InputError] = InputError) -> str:
    """A regular file's text, refused before reading if it is larger than `limit_bytes`. Pipes,
    devices and folders are never read (a FIFO would block, /dev/zero never ends)."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(path, None, f"cannot be read ({exc.strerror or exc})") from None
    except ValueError:  # a NUL character in the name
        raise error(path, None, "is not a usable file name") from None
    try:
        mode = os.fstat(fd)
        if stat.S_ISDIR(mode.st_mode):
            raise error(path, None, f"is a folder, not a {what}")
        if not stat.S_ISREG(mode.st_mode):
            raise error(path, None, f"is not a regular file (a pipe, device or socket); a {what} is read from a file")
        if mode.st_size > limit_bytes:
            raise error(path, None, f"is {mode.st_size / MIB:,.1f} MiB, above the limit of {limit_bytes / MIB:g} MiB "
                                    f"for a {what} (see docs/limits.md)")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(limit_bytes + 1)
    except OSError as exc:
        raise error(path, None, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(raw) > limit_bytes:
        raise error(path, None, f"grew above the limit of {limit_bytes / MIB:g} MiB for a {what} while being read")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(path, None, f"is not UTF-8 text (byte {exc.start:,} is 0x{raw[exc.start]:02x})") from None


def read_json(path: str | os.PathLike, limit_bytes: int, what: str, error: type[InputError] = InputError) -> Any:
    return parse_json(read_text(path, limit_bytes, what, error), path, error)


# --- schemas ------------------------------------------------------------------------------------

def _is_whole(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite(checker: Any, value: Any) -> bool:
    # A document built in memory (not by parse_json) may hold a float NaN, which every bound
    # compares False with and so would let through.
    return _is_whole(checker, value) or (isinstance(value, float) and math.isfinite(value))


_Validator = extend(Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_whole, "number": _is_finite}))
_compiled: dict[int, tuple[Any, Callable]] = {}


def check(document: Any, schema: dict, source: object, error: type[InputError] = InputError,
          base: str = "$") -> None:
    """Refuse `document` with `error` (one line: source, JSON path, problem) unless it matches
    `schema`. `base` is the JSON path of `document` inside its file.

    jsonschema decides and words every refusal. A design holds up to a hundred thousand items,
    which jsonschema walks at about 100 µs each; so a fast test made from the same schema
    (`_fast`, below) runs first, and jsonschema looks only at the node where that test failed."""
    entry = _compiled.get(id(schema))
    if entry is None:
        entry = _compiled[id(schema)] = (schema, _fast(schema))
    failed = entry[1](document, ())
    if failed is None:
        return
    where, node_schema, value = failed
    found = _first_error(_Validator(_own_keywords(node_schema)), value)
    if found is None:  # the fast test is stricter than the schema here: ask about the whole document
        where, found = (), _first_error(_Validator(schema), document)
        if found is None:
            return
    raise error(source, json_path((*where, *found.absolute_path), base), describe(found))


def _own_keywords(schema: dict) -> dict:
    """A node of the fast test failed on its own keywords (its children are checked where they
    fail): jsonschema words that without walking the children again (199,999 list entries)."""
    if not set(schema) <= _KNOWN:
        return schema  # handed to jsonschema whole by the fast test too
    own = {k: v for k, v in schema.items() if k not in ("items", "prefixItems")}
    if "properties" in own:
        own["properties"] = dict.fromkeys(own["properties"], True)
    if isinstance(own.get("additionalProperties"), dict):
        own["additionalProperties"] = True
    return own


def _first_error(validator: Any, value: Any) -> ValidationError | None:
    # The first errors in document order are enough to pick the most relevant one.
    return best_match(itertools.islice(validator.iter_errors(value), 50))


# --- the fast test ------------------------------------------------------------------------------
# A schema node becomes a function (value, path) -> None when the value matches, else (path, node,
# value) of the innermost node whose own keywords fail. Nodes with keywords it does not know
# (if/then/else, allOf, ...) are handed to jsonschema whole. A property test checks that it agrees
# with jsonschema (tests/test_validation_boundary.py).

_KNOWN = {"type", "enum", "const", "pattern", "minLength", "maxLength", "properties", "required",
          "additionalProperties", "propertyNames", "maxProperties", "items", "prefixItems", "minItems", "maxItems",
          "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "x-expected", "$schema", "title",
          "description"}
# Exact Python types per JSON type (JSON parsing makes no subclasses; bool is not a number here).
_TYPES: dict[str, set[type]] = {"object": {dict}, "array": {list}, "string": {str}, "boolean": {bool},
                                "null": {type(None)}, "integer": {int}, "number": {int, float}}
_NUMBERS = _TYPES["number"]


def _fast(schema: dict) -> Callable:
    if not set(schema) <= _KNOWN or any(isinstance(e, (bool, float, dict, list)) for e in
                                        [*schema.get("enum", ()), schema.get("const")]):
        validator = _Validator(schema)
        return lambda value, path: None if validator.is_valid(value) else (path, schema, value)
    tests: list[Callable[[Any], bool]] = []
    if "type" in schema:
        kinds: set[type] = set().union(*(_TYPES[t] for t in (schema["type"] if isinstance(schema["type"], list)
                                                  else [schema["type"]])))
        if float in kinds:
            tests.append(lambda v: type(v) in kinds and (type(v) is not float or math.isfinite(v)))
        else:
            tests.append(lambda v: type(v) in kinds)
    if "enum" in schema or "const" in schema:
        allowed = {(type(a), a) for a in schema.get("enum", [schema.get("const")])}
        tests.append(lambda v: (type(v), v) in allowed if type(v) in (str, int) else False)
    low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)
    above, below = schema.get("exclusiveMinimum", -math.inf), schema.get("exclusiveMaximum", math.inf)
    if any(keyword in schema for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        tests.append(lambda v: type(v) not in _NUMBERS or (low <= v <= high and above < v < below))
    if "pattern" in schema:
        search = re.compile(schema["pattern"]).search
        tests.append(lambda v: type(v) is not str or search(v) is not None)
    for keyword, of in (("minLength", str), ("maxLength", str), ("minItems", list), ("maxItems", list),
                        ("maxProperties", dict)):
        if keyword in schema:
            bound = schema[keyword]
            if keyword.startswith("min"):
                def long_enough(v: Any, bound: int = bound, of: Any = of) -> bool:
                    return type(v) is not of or len(v) >= bound
                tests.append(long_enough)
            else:
                def short_enough(v: Any, bound: int = bound, of: Any = of) -> bool:
                    return type(v) is not of or len(v) <= bound
                tests.append(short_enough)
    if "required" in schema:
        required = schema["required"]
        tests.append(lambda v: type(v) is not dict or all(k in v for k in required))
    properties = {k: _fast(s) for k, s in schema.get("properties", {}).items()}
    extra = schema.get("additionalProperties", True)
    extra_test = _fast(extra) if isinstance(extra, dict) else None
    name_test = _fast(schema["propertyNames"]) if "propertyNames" in schema else None
    prefix = [_fast(s) for s in schema.get("prefixItems", ())]
    each = _fast(schema["items"]) if isinstance(schema.get("items"), dict) else None

    def test(value: Any, path: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], dict, Any] | None:
        for own in tests:
            if not own(value):
                return path, schema, value
        if isinstance(value, dict) and (properties or extra is not True or name_test):
            for key, item in value.items():
                if name_test is not None and name_test(key, path) is not None:
                    return path, schema, value
                inner = properties.get(key)
                if inner is None:
                    if extra is False:
                        return path, schema, value
                    inner = extra_test
                if inner is not None:
                    failed = inner(item, (*path, key))
                    if failed is not None:
                        return failed
        elif isinstance(value, list) and (prefix or each):
            for index, item in enumerate(value):
                inner = prefix[index] if index < len(prefix) else each
                if inner is not None:
                    failed = inner(item, (*path, index))
                    if failed is not None:
                        return failed
        return None

    return test


def json_path(parts: Iterable[str | int], base: str = "$") -> str:
    out = base
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)[:40]}]"
    return out


def show(value: Any, limit: int = 40) -> str:
    """A value as a refusal quotes it: short, on one line."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value):,}" if value else "an empty list"
    if isinstance(value, NotANumber):
        return repr(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a text", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "null"}


def describe(error: ValidationError) -> str:
    """The problem of one schema error, in words."""
    schema, value, kind = error.schema, error.instance, error.validator
    if kind == "required":
        missing = next(k for k in error.validator_value if k not in value)
        return f"missing field '{missing}'"
    if kind == "dependentRequired":
        key, needs = next((k, n) for k, n in error.validator_value.items()
                          if k in value and any(m not in value for m in n))
        missing = next(m for m in needs if m not in value)
        return f"missing field '{missing}' ('{key}' needs {' and '.join(repr(n) for n in needs)} beside it)"
    if kind == "additionalProperties":
        known = list(schema.get("properties", ()))
        extra = next(k for k in value if k not in known)
        hint = f"; expected one of {', '.join(known)}" if known else ""
        return f"unknown field {show(extra)}{hint}"
    if kind in ("maxItems", "minItems"):
        bound = "at most" if kind == "maxItems" else "at least"
        return f"{len(value):,} entries; expected {bound} {error.validator_value:,} (see docs/limits.md)"
    if kind in ("maxProperties", "minProperties"):
        return f"{len(value):,} fields; expected at most {error.validator_value:,}"
    if kind in ("maxLength", "minLength"):
        if kind == "minLength":
            return "expected a non-empty text"
        return f"a text of {len(value):,} characters; expected at most {error.validator_value:,}"
    expected = schema.get("x-expected")
    if expected is None:
        if kind == "type":
            types: list[str] = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            expected = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        elif kind == "enum":
            expected = "one of " + ", ".join(show(v) for v in error.validator_value)
        elif kind == "const":
            expected = show(error.validator_value)
        elif kind in ("minimum", "exclusiveMinimum"):
            expected = f"{'at least' if kind == 'minimum' else 'more than'} {error.validator_value:,}"
        elif kind in ("maximum", "exclusiveMaximum"):
            expected = f"{'at most' if kind == 'maximum' else 'less than'} {error.validator_value:,}"
        else:
            return error.message.splitlines()[0][:200]
    return f"expected {expected}, got {show(value)}"
