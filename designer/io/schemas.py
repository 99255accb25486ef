"""The JSON Schemas (Draft 2020-12) of the design file and the workload file.

`designer.model.validation.check` applies them; every field of a design, its `settings` included,
is described here with its type and limits, so nothing unchecked reaches the model or the engine.
The limits and how they were chosen are in docs/limits.md. A workload never names a file: a
design's model is a preset name or an inline object; a workload file is read only when the user
names it (`--workload FILE`).
"""

from __future__ import annotations

from typing import Any

from designer.engine.collectives import ALGORITHMS, OPS
from designer.engine.cost import ASSUMPTIONS, Assumption
from designer.engine.training import ATTENTION, OVERLAP_CHOICES, RECOMPUTE
from designer.engine.workloads import PRECISIONS, PRESETS
from designer.model.design import (
    ID_PATTERN,
    ITEM_KINDS,
    MAX_COORDINATE,
    MAX_GROUP_COUNT,
    MAX_LANES,
    MAX_NAME_CHARS,
    MAX_RACK_U,
    MAX_TEXT_CHARS,
    MAX_TOTAL_COPIES,
)

# Drawn items and links of one design. The largest shipped example draws 5,000 items and 12,000
# links; 100,000 items load, validate and evaluate within the CLI's 10 s on a laptop core.
MAX_ITEMS = 100_000
MAX_LINKS = 200_000
MAX_DESCRIPTION_CHARS = 10_000
MAX_SIZES = 64  # collective message sizes: a plot's worth
MAX_SIZE_BYTES = 2 ** 50  # 1 PiB per message
MAX_TEMPLATE_PARAMS = 64

# Text holds no control characters (a name is printed on terminals); descriptions may hold tabs and
# line breaks. Text UTF-8 cannot store (an unpaired surrogate from a "\udcff" escape) loads, and is
# refused when saved, naming the field (designer.io.files.save_design).
_NAME_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
_TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"


def _name(max_chars: int = MAX_NAME_CHARS) -> dict:
    return {"type": "string", "maxLength": max_chars, "pattern": _NAME_PATTERN,
            "x-expected": f"a name of at most {max_chars:,} characters, no control characters"}


def _text(max_chars: int) -> dict:
    return {"type": "string", "maxLength": max_chars, "pattern": _TEXT_PATTERN,
            "x-expected": f"a text of at most {max_chars:,} characters, no control characters"}


def _whole(low: int, high: int, what: str = "a whole number") -> dict:
    return {"type": "integer", "minimum": low, "maximum": high, "x-expected": f"{what} from {low:,} to {high:,}"}


_ID = {"type": "string", "pattern": ID_PATTERN, "x-expected": "an id of 1–128 letters, digits, '-', '_', '.' or ':'"}
_COORDINATE = {"type": "number", "minimum": -MAX_COORDINATE, "maximum": MAX_COORDINATE,
               "x-expected": f"a number from -{MAX_COORDINATE:,.0f} to {MAX_COORDINATE:,.0f}"}
_PART_ID = {"type": "string", "maxLength": 128, "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$",
            "x-expected": "a catalogue part id like \"h100-sxm\""}

_ITEM = {
    "type": "object",
    "required": ["id", "kind"],
    "additionalProperties": False,
    "properties": {
        "id": _ID,
        "kind": {"enum": list(ITEM_KINDS)},
        "name": _name(),
        "part": _PART_ID,
        "parent": _ID,
        "x": _COORDINATE,
        "y": _COORDINATE,
        "count": _whole(1, MAX_GROUP_COUNT),
        "rack_u": _whole(1, MAX_RACK_U, "a rack position in U"),
    },
}

_LINK = {
    "type": "object",
    "required": ["id", "a", "b", "medium"],
    "additionalProperties": False,
    "properties": {
        "id": _ID, "a": _ID, "b": _ID,
        "medium": _PART_ID,
        "lanes": _whole(1, MAX_LANES),
        "match": {"type": "array", "prefixItems": [_ID, _ID], "minItems": 2, "maxItems": 2,
                  "x-expected": "two group ids"},
    },
}

# A part out of service (designer.engine.failures): every copy, a count of copies, or a percentage.
_FAILURE = {
    "type": "object",
    "required": ["target"],
    "additionalProperties": False,
    "x-expected": ("a failure like {\"target\": \"spines.sw\", \"copies\": 1} "
                   "or {\"target\": \"ib-ndr\", \"percent\": 2} (copies or percent, not both)"),
    "properties": {
        "target": {"type": "string", "maxLength": 128, "pattern": ID_PATTERN,
                   "x-expected": "the id of an item, a link or a link medium"},
        "copies": _whole(1, MAX_TOTAL_COPIES, "a number of copies"),
        "percent": {"type": "number", "exclusiveMinimum": 0, "maximum": 100,
                    "x-expected": "a percentage of copies above 0 and at most 100"},
    },
    "not": {"required": ["copies", "percent"]},
}

# An inline LLM: a preset's figures overridden, or a model of its own. Shapes up to 10x the largest
# published models; everything the training model multiplies stays a finite float.
MODEL: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "preset": {"enum": list(PRESETS)},
        "name": _name(),
        "layers": _whole(1, 10_000),
        "hidden": _whole(1, 1_000_000),
        "heads": _whole(1, 100_000),
        "kv_heads": _whole(1, 100_000),
        "head_dim": _whole(1, 100_000),
        "experts": _whole(1, 100_000),
        "top_k": _whole(1, 100_000),
        "shared_experts": _whole(0, 100_000),
        "moe_ffn": _whole(1, 10_000_000),
        "dense_layers": _whole(0, 10_000),
        "ffn": _whole(1, 10_000_000),
        "vocab": _whole(1, 10_000_000),
        "seq": _whole(1, 10_000_000),
        "global_batch": _whole(1, 100_000_000),
        "tokens": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e18,
                   "x-expected": "a number of tokens above 0 and at most 1e18"},
        "parameters": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e16,
                       "x-expected": "a parameter count above 0 and at most 1e16"},
        "gated_mlp": {"type": "boolean"},
        "parallel_block": {"type": "boolean"},
        "dropout": {"type": "boolean"},
        "tied_embeddings": {"type": "boolean"},
        "precision": {"enum": list(PRECISIONS)},
    },
}

_PRESET_NAME = {"enum": list(PRESETS),
                "x-expected": "a preset or an inline model object (a design never names a file); presets: "
                              + ", ".join(PRESETS)}

_PLAN = {
    "if": {"type": "string"},
    "then": {"const": "auto", "x-expected": "\"auto\" or a plan object like {\"tp\": 8, \"pp\": 4}"},
    "else": {
        "type": "object",
        "additionalProperties": False,
        "x-expected": "\"auto\" or a plan object like {\"tp\": 8, \"pp\": 4}",
        "properties": {
            "tp": _whole(1, 1024), "pp": _whole(1, 10_000), "vp": _whole(1, 1024), "dp": _whole(1, MAX_TOTAL_COPIES),
            "cp": _whole(1, 1024), "sp": _whole(0, 1), "ep": _whole(1, 100_000),
            "mb": _whole(1, 1024), "recompute": {"enum": list(RECOMPUTE)}, "zero": _whole(0, 3),
            "attention": {"enum": list(ATTENTION)},
        },
    },
}

_SIZE = {
    "if": {"type": "string"},
    "then": {"type": "string", "pattern": r"^\s*[0-9]{1,16}(\.[0-9]{1,6})?\s*([KMGTkmgt][Bb]?)?\s*$",
             "x-expected": "a positive size like \"1G\""},
    "else": {"type": "integer", "minimum": 1, "maximum": MAX_SIZE_BYTES,
             "x-expected": f"a positive size like \"1G\" (at most {MAX_SIZE_BYTES:,} bytes)"},
}

WORKLOAD_SETTING: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "collective": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "op": {"enum": list(OPS)},
                "sizes": {"type": "array", "minItems": 1, "maxItems": MAX_SIZES, "items": _SIZE},
                "algorithm": {"enum": ["auto", *ALGORITHMS]},
                "ranks": _whole(1, MAX_TOTAL_COPIES),
            },
        },
        "training": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "model": {"if": {"type": "string"}, "then": _PRESET_NAME, "else": MODEL},
                "plan": _PLAN,
                "overlap": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {part: {"enum": list(choices)} for part, choices in OVERLAP_CHOICES.items()},
                },
                "global_batch": MODEL["properties"]["global_batch"],
                "seq": MODEL["properties"]["seq"],
                "tokens": MODEL["properties"]["tokens"],
            },
        },
    },
}

def _assumption(assumption: Assumption) -> dict:
    if assumption.choices:
        return {"enum": list(assumption.choices), "x-expected": " or ".join(f'"{c}"' for c in assumption.choices)}
    unit = f" {assumption.unit}" if assumption.unit else ""
    return {"type": "number", "minimum": assumption.minimum, "maximum": assumption.maximum,
            "x-expected": f"a number from {assumption.minimum:,g} to {assumption.maximum:,g}{unit}"}


# The cost model's assumptions (designer.engine.cost.ASSUMPTIONS); a missing one takes its default.
COST_SETTING = {
    "type": "object",
    "additionalProperties": False,
    "properties": {assumption.key: _assumption(assumption) for assumption in ASSUMPTIONS},
}

_TEMPLATE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": _name(),
        "edited": _text(MAX_DESCRIPTION_CHARS),
        "params": {
            "type": "object",
            "maxProperties": MAX_TEMPLATE_PARAMS,
            "propertyNames": {"pattern": r"^[a-z_]{1,40}$"},
            "properties": {
                # The engine reads a torus's shape from here.
                "dims": {"type": "string", "pattern": r"^[0-9]{1,4}([xX][0-9]{1,4}){0,2}$",
                         "x-expected": "a torus shape like \"16x16x16\""},
            },
            "additionalProperties": {"type": ["string", "number", "boolean", "null"], "maxLength": MAX_NAME_CHARS,
                                     "pattern": _NAME_PATTERN},
        },
    },
}

DESIGN = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Cluster Designer design file (NAME.cluster.json), version 1",
    "type": "object",
    "required": ["format", "version", "items"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "cluster-designer"},
        "version": {"type": "integer", "minimum": 1},
        "name": _name(),
        "description": _text(MAX_DESCRIPTION_CHARS),
        "notes": _text(MAX_TEXT_CHARS),
        "items": {"type": "array", "maxItems": MAX_ITEMS, "items": _ITEM},
        "links": {"type": "array", "maxItems": MAX_LINKS, "items": _LINK},
        "settings": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "workload": WORKLOAD_SETTING,
                "template": _TEMPLATE,
                "storage": {
                    "type": "object", "additionalProperties": False, "required": ["part"],
                    "x-expected": "a storage part and how many, like {\"part\": \"ddn-ai400x2\", \"count\": 4}",
                    "properties": {"part": _PART_ID, "count": _whole(1, MAX_GROUP_COUNT)},
                },
                "spares": _whole(0, MAX_GROUP_COUNT, "a number of hot spare servers"),
                "failures": {"type": "array", "maxItems": MAX_ITEMS, "items": _FAILURE},
                "cost": COST_SETTING,
                "dragonfly_routing": {"enum": ["minimal", "valiant"],
                                      "x-expected": "\"minimal\" or \"valiant\" (absent: adaptive)"},
                "in_network_reduction": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"nvls": {"type": "boolean"}, "sharp": {"type": "boolean"}},
                },
            },
        },
    },
}

# A workload file (`--workload FILE`): one inline model.
WORKLOAD_FILE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Cluster Designer workload file: an LLM to train",
    **MODEL,
}

# A sweep file (`NAME.sweep.json`, designer.explore.spec): a template or a base design, what to vary,
# the workloads and plans, the figures to keep and the constraints (and, to optimize, a goal).
MAX_SWEEP_VALUES = 10_000  # values of one parameter, a range's included
FIGURE_PATH = {"type": "string", "maxLength": 200, "pattern": r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$",
               "x-expected": "a figure's dotted path in the JSON of `evaluate --json`, like \"training.days\""}
_NUMBER = {"type": "number", "minimum": -1e18, "maximum": 1e18, "x-expected": "a number"}
# No true/false: a generator's parameters are numbers and texts, and true would be taken as 1.
_SWEEP_VALUE = {"type": ["string", "number"], "maxLength": MAX_NAME_CHARS, "pattern": _NAME_PATTERN,
                "x-expected": "a parameter value: a text or a number (true/false are not numbers; use 1 or 0)"}
_RANGE = {
    "type": "object",
    "required": ["from", "to"],
    "additionalProperties": False,
    "x-expected": "a range like {\"from\": 64, \"to\": 512, \"step\": 64} or "
                  "{\"from\": 64, \"to\": 512, \"factor\": 2}",
    "properties": {"from": _NUMBER, "to": _NUMBER,
                   "step": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e18,
                            "x-expected": "a step above 0"},
                   "factor": {"type": "number", "exclusiveMinimum": 1, "maximum": 1e6,
                              "x-expected": "a factor above 1"}},
}
_VARIED = {
    "if": {"type": "array"},
    "then": {"type": "array", "minItems": 1, "maxItems": MAX_SWEEP_VALUES, "items": _SWEEP_VALUE},
    "else": {"if": {"type": "object"}, "then": _RANGE, "else": _SWEEP_VALUE},
}
CONSTRAINT_PATTERN = r"^\s*([A-Za-z0-9_.-]+)\s*(<=|>=|<|>|==)\s*(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)\s*$"
_TRAINING_WORKLOAD = {**WORKLOAD_SETTING["properties"]["training"],
                      "properties": {k: v for k, v in WORKLOAD_SETTING["properties"]["training"]["properties"].items()
                                     if k != "plan"}}

SWEEP = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Cluster Designer sweep file (NAME.sweep.json), version 1",
    "type": "object",
    "required": ["format", "version"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "cluster-designer-sweep"},
        "version": {"const": 1},
        "name": _name(),
        "description": _text(MAX_DESCRIPTION_CHARS),
        "template": {"if": {"type": "array"},
                     "then": {"type": "array", "minItems": 1, "maxItems": 64, "items": _name()},
                     "else": {**_name(), "x-expected": "a template name (see `cluster-designer templates`) or a list"}},
        "base": {**_name(4096), "minLength": 1,
                 "x-expected": "a design file (relative to the sweep file) or an example name"},
        "params": {"type": "object", "maxProperties": MAX_TEMPLATE_PARAMS,
                   "propertyNames": {"pattern": r"^[a-z_]{1,40}$"}, "additionalProperties": _VARIED},
        "parts": {"type": "object", "maxProperties": MAX_TEMPLATE_PARAMS, "propertyNames": _PART_ID,
                  "additionalProperties": {"type": "array", "minItems": 1, "maxItems": 256, "items": _PART_ID,
                                           "x-expected": "a list of catalogue part ids to put in its place"}},
        "collective": WORKLOAD_SETTING["properties"]["collective"],
        "workloads": {"type": "array", "minItems": 1, "maxItems": 256, "items": _TRAINING_WORKLOAD},
        "plans": {"type": "array", "minItems": 1, "maxItems": 256,
                  "items": {"type": "string", "maxLength": 200, "pattern": _NAME_PATTERN,
                            "x-expected": "a plan like \"tp=8,pp=4\" or \"auto\""}},
        "keep": {"type": "array", "maxItems": 256, "items": FIGURE_PATH},
        "constraints": {"type": "array", "maxItems": 64,
                        "items": {"type": "string", "maxLength": 240, "pattern": CONSTRAINT_PATTERN,
                                  "x-expected": "a constraint like \"summary.power_kw <= 30000\""}},
        "goal": {"type": "object", "additionalProperties": False, "minProperties": 1, "maxProperties": 1,
                 "properties": {"minimize": FIGURE_PATH, "maximize": FIGURE_PATH},
                 "x-expected": "{\"minimize\": FIGURE} or {\"maximize\": FIGURE}"},
    },
}

# An autosave (`KEY.autosave.json` in the user's state folder, designer.io.autosave): a record of
# where the design came from, and the design itself (checked as a design file by
# designer.io.files.design_from_document). The format and version are checked first, for a
# clearer refusal. `mtime_ns` is text: nanoseconds since 1970 take 19 digits, above what the
# reader takes as a number.
MAX_PATH_CHARS = 4096
AUTOSAVE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Cluster Designer autosave (KEY.autosave.json), version 1",
    "type": "object",
    "required": ["format", "version", "name", "saved_at", "pid", "design"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "cluster-designer-autosave"},
        "version": {"const": 1},
        "original": {"type": ["string", "null"], "minLength": 1, "maxLength": MAX_PATH_CHARS,
                     "pattern": r"^[^\x00]*$", "x-expected": "the path of a design file, or null"},
        "original_file": {
            "type": ["object", "null"],
            "required": ["size", "mtime_ns", "sha256"],
            "additionalProperties": False,
            "x-expected": "null or the original file's {\"size\", \"mtime_ns\", \"sha256\"}",
            "properties": {
                "size": _whole(0, 2 ** 53, "a size in bytes"),
                "mtime_ns": {"type": "string", "pattern": r"^-?[0-9]{1,20}$",
                             "x-expected": "a modification time in nanoseconds, as text"},
                "sha256": {"type": "string", "pattern": r"^[0-9a-f]{64}$",
                           "x-expected": "a SHA-256 as 64 lowercase hex digits"},
            },
        },
        # A file's stem may hold any character a name may not (a design's name is checked in `design`).
        "name": {"type": "string", "maxLength": MAX_PATH_CHARS, "x-expected": "the name shown for the design"},
        "saved_at": {"type": "string", "maxLength": 40,
                     "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
                                r"([+-][0-9]{2}:[0-9]{2}|Z)$",
                     "x-expected": "a time with its UTC offset like \"2025-03-01T14:03:00+01:00\""},
        "pid": _whole(1, 2 ** 32 - 1, "a process id"),
        "design": {"type": "object", "x-expected": "a design (an object)"},
    },
}
