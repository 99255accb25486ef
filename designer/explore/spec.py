"""A sweep: the file (`NAME.sweep.json`, schema `designer.io.schemas.SWEEP`), its points and the
design each point stands for.

A point is a small JSON-able dict, its *recipe*: a template with its parameters, or a base design
file with parts swapped, plus the workload. It travels to a Dask worker, which builds and
evaluates the design there, and it is written in each result row so the design can be rebuilt
(`design_of`) without keeping it.

Everything a sweep names is checked here, before the first point: the base design is read once,
with the design file's reader, and travels to the workers by content (`Sweep.bases`, keyed by
its SHA-256, which each recipe carries), never by path; the parts swapped in are of the kind they
replace; the figures kept, constrained and aimed at are ones the engine computes."""

from __future__ import annotations

import difflib
import functools
import hashlib
import itertools
import json
import math
import operator
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.engine.collectives import OPS
from designer.io import schemas
from designer.io.examples import resolve_design_path
from designer.io.files import dumps, load_design
from designer.io.options import parse_plan
from designer.model.catalog import PRECISIONS, Catalog, default_catalog
from designer.model.design import Design
from designer.model.errors import DesignerError, InputError
from designer.model.validation import check, read_json, show
from designer.topologies import GENERATORS, TopologyError, generate

FORMAT = "cluster-designer-sweep"
SUFFIX = ".sweep.json"
MAX_SWEEP_BYTES = 2 ** 20
MAX_POINTS = 10_000_000  # points of one sweep: a week of the 2-core machine at 1,000 a minute

_OPERATORS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq}


class SweepError(InputError):
    """A sweep file refused: `FILE: $.json.path: problem`."""


class BaseChangedError(DesignerError):
    """A row's design rebuilt from a base design file that no longer holds the design the sweep ran."""


@dataclass(frozen=True)
class Constraint:
    path: str
    op: str
    bound: float

    @classmethod
    def parse(cls, text: str) -> Constraint:
        match = re.match(schemas.CONSTRAINT_PATTERN, text)
        return cls(match.group(1), match.group(2), float(match.group(3)))

    def holds(self, value: float | None) -> bool:
        return value is not None and _OPERATORS[self.op](value, self.bound)

    def __str__(self) -> str:
        return f"{self.path} {self.op} {self.bound:g}"


@dataclass
class Sweep:
    """A checked sweep. `axes` are the varied things in the order their columns appear: template
    parameters (`param.NAME`), part swaps (`part.OLD`), then `workload` and `plan`."""

    name: str
    source: str
    template: tuple[str, ...] = ()
    base: str | None = None  # the base design file's absolute path, for people; points use `bases`
    base_sha256: str | None = None
    bases: dict[str, Design] = field(default_factory=dict, repr=False)  # the base design, by `base_key`
    params: dict[str, list] = field(default_factory=dict)
    parts: dict[str, list[str]] = field(default_factory=dict)
    workloads: list[dict] = field(default_factory=lambda: [{}])
    plans: list[str] = field(default_factory=lambda: ["auto"])
    collective: dict | None = None
    keep: list[str] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    goal: tuple[str, str] | None = None  # ("minimize" | "maximize", figure path)
    catalog: Catalog | None = field(default=None, repr=False)  # the parts it was checked against; its points use them

    @property
    def axes(self) -> list[str]:
        out = ["template"] if len(self.template) > 1 else []
        out += [f"param.{name}" for name in self.params] + [f"part.{old}" for old in self.parts]
        return out + ["workload", "plan"]

    @property
    def figures(self) -> list[str]:
        """Every figure a row holds: the kept ones, then those constraints and the goal read."""
        out = list(self.keep)
        for path in [c.path for c in self.constraints] + ([self.goal[1]] if self.goal else []):
            if path not in out:
                out.append(path)
        return out

    def count(self) -> int:
        sizes = [len(self.template) or 1, *(len(v) for v in self.params.values()),
                 *(len(v) for v in self.parts.values()), len(self.workloads), len(self.plans)]
        return math.prod(sizes)

    def points(self) -> Iterator[dict]:
        """Every point's recipe (with its index and its values on the axes), lazily."""
        templates = self.template or (None,)
        names, parts = list(self.params), list(self.parts)
        grid = itertools.product(templates, *(self.params[n] for n in names), *(self.parts[p] for p in parts),
                                 range(len(self.workloads)), self.plans)
        for index, values in enumerate(grid):
            template, rest = values[0], values[1:]
            params = dict(zip(names, rest[:len(names)]))
            swaps = dict(zip(parts, rest[len(names):len(names) + len(parts)]))
            workload_index, plan = rest[-2], rest[-1]
            workload = {"training": {**self.workloads[workload_index], "plan": parse_plan(plan)}}
            if self.collective:
                workload["collective"] = self.collective
            recipe: dict[str, Any] = {"workload": workload}
            if template is not None:
                recipe.update(template=template, params=params)
            else:
                recipe.update(base=self.base, base_sha256=self.base_sha256, parts=swaps)
            axes = {"template": template} if len(self.template) > 1 else {}
            axes.update({f"param.{k}": v for k, v in params.items()})
            axes.update({f"part.{k}": v for k, v in swaps.items()})
            axes.update(workload=_workload_label(self.workloads[workload_index]), plan=plan)
            yield {"point": index, "axes": axes, "recipe": recipe}


def _workload_label(spec: dict) -> str:
    model = spec.get("model")
    name = model if isinstance(model, str) else (model or {}).get("name") or (model or {}).get("preset") or "default"
    extras = [f"{k}={spec[k]:g}" if isinstance(spec[k], float) else f"{k}={spec[k]}"
              for k in ("tokens", "global_batch", "seq") if k in spec]
    return " ".join([name, *extras])


def load_sweep(path: str | os.PathLike, catalog: Catalog | None = None) -> Sweep:
    document = read_json(path, MAX_SWEEP_BYTES, "sweep file", SweepError)
    return sweep_from_document(document, path, catalog)


def sweep_from_document(document: Any, source: str | os.PathLike, catalog: Catalog | None = None) -> Sweep:
    """Check a sweep's JSON (the schema, then what a schema cannot say) and make the Sweep."""
    catalog = catalog or default_catalog()
    source = str(source)
    check(document, schemas.SWEEP, source, SweepError)

    def fail(where: str, problem: str):
        raise SweepError(source, where, problem)

    if ("template" in document) == ("base" in document):
        fail("$", "give either 'template' (a topology generator) or 'base' (a design file), not both or neither")
    sweep = Sweep(name=document.get("name") or Path(source).name.removesuffix(SUFFIX), source=source, catalog=catalog)
    if "template" in document:
        templates = document["template"]
        sweep.template = tuple(templates) if isinstance(templates, list) else (templates,)
        for i, name in enumerate(sweep.template):
            if name not in GENERATORS:
                where = f"$.template[{i}]" if isinstance(templates, list) else "$.template"
                fail(where, f"unknown template {show(name)}; choose from {', '.join(GENERATORS)}")
        known = {p.name for t in sweep.template for p in GENERATORS[t].params}
        for name in document.get("params", {}):
            if name not in known:
                fail(f"$.params.{name}", f"no template here takes this parameter; they take {', '.join(sorted(known))}")
        if document.get("parts"):
            fail("$.parts", "parts are swapped in a base design; a template takes its parts as params (gpu, nic...)")
    else:
        if document.get("params"):
            fail("$.params", "params are a template's; a base design varies its parts ('parts')")
        sweep.base, base = _read_base(document["base"], source, catalog, fail)
        sweep.base_sha256 = base_key(base)
        sweep.bases = {sweep.base_sha256: base}
        drawn = {item.part for item in base.items.values()}
        for old, news in document.get("parts", {}).items():
            replaced = catalog.get(old)
            if replaced is None:
                fail(f"$.parts.{old}", f"unknown part {show(old)}")
            if old not in drawn:
                fail(f"$.parts.{old}", f"the base design has no item of part '{old}' to swap")
            for i, new in enumerate(news):
                part = catalog.get(new)
                if part is None:
                    fail(f"$.parts.{old}[{i}]", f"unknown part {show(new)}")
                if part.kind != replaced.kind:
                    # The design would not load: evaluate and the app refuse an item holding another kind's part.
                    fail(f"$.parts.{old}[{i}]", f"part '{new}' is {_a(part.kind)}, but '{old}' is {_a(replaced.kind)}")
    for name, values in document.get("params", {}).items():
        sweep.params[name] = _values(values, f"$.params.{name}", fail)
        _check_values(sweep.template, name, values, sweep.params[name], catalog, fail)
    sweep.parts = {old: list(news) for old, news in document.get("parts", {}).items()}
    sweep.workloads = [dict(w) for w in document.get("workloads", [{}])]
    sweep.plans = list(document.get("plans", ["auto"]))
    for i, plan in enumerate(sweep.plans):
        try:
            parse_plan(plan)
        except InputError as exc:
            fail(f"$.plans[{i}]", exc.problem)
    sweep.collective = document.get("collective")
    sweep.keep = list(document.get("keep", DEFAULT_KEEP))
    columns = {*ROW_COLUMNS, *sweep.axes}
    for i, path in enumerate(sweep.keep):
        if path in columns:
            fail(f"$.keep[{i}]", f"'{path}' is a column every row has already; keep lists figures, like "
                                 "'summary.power_kw'")
        if path in sweep.keep[:i]:
            fail(f"$.keep[{i}]", f"'{path}' is kept twice (also $.keep[{sweep.keep.index(path)}])")
        if (problem := figure_problem(path)) is not None:
            fail(f"$.keep[{i}]", problem)
    sweep.constraints = [Constraint.parse(text) for text in document.get("constraints", [])]
    for i, constraint in enumerate(sweep.constraints):
        if (problem := figure_problem(constraint.path, "a constraint")) is not None:
            fail(f"$.constraints[{i}]", problem)
    if "goal" in document:
        (sense, path), = document["goal"].items()
        if (problem := figure_problem(path, "a goal")) is not None:
            fail(f"$.goal.{sense}", problem)
        sweep.goal = (sense, path)
    if sweep.count() > MAX_POINTS:
        fail("$", f"{sweep.count():,} points; a sweep holds at most {MAX_POINTS:,} (see docs/limits.md)")
    return sweep


DEFAULT_KEEP = ("summary.accelerators", "summary.power_kw", "summary.peak_bf16_fp16_tflops", "training.days",
                "training.step_time_s", "training.mfu")


def _a(word: str) -> str:
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _read_base(name: str, source: str, catalog: Catalog, fail) -> tuple[str, Design]:
    """The sweep's base design, read once, here, with the design file's reader (a regular file
    within its size limit, checked completely): its absolute path, which the rows name, and the
    design. A path is taken beside the sweep file first."""
    base = Path(name)
    beside = Path(source).parent / base
    if not base.is_absolute() and os.path.lexists(beside):  # lexists: a broken link is the reader's to refuse
        base = beside
    # abspath, not resolve(): a symbolic link loop would raise here; the reader refuses it in one line.
    path = os.path.abspath(resolve_design_path(str(base)))
    try:
        return path, load_design(path, catalog)
    except DesignerError as exc:
        fail("$.base", str(exc))


def base_key(design: Design) -> str:
    """The SHA-256 of a base design's canonical document: the same for the same design however its
    file is laid out, another for any change."""
    return hashlib.sha256(dumps(design).encode("utf-8", "surrogatepass")).hexdigest()


def _check_values(templates: tuple[str, ...], name: str, raw: Any, values: list, catalog: Catalog, fail) -> None:
    """Each value of a parameter as every template taking it reads it: a value one refuses (a part of
    another kind, a size below the minimum) would fail each of its points."""
    for template in templates:
        generator = GENERATORS[template]
        if all(param.name != name for param in generator.params):
            continue
        for i, value in enumerate(values):
            try:
                generator.resolve({name: value}, catalog)
            except TopologyError as exc:
                fail(f"$.params.{name}[{i}]" if isinstance(raw, list) else f"$.params.{name}", str(exc))


def _values(values: Any, where: str, fail) -> list:
    if isinstance(values, list):
        return list(values)
    if not isinstance(values, dict):
        return [values]
    low, high = values["from"], values["to"]
    if high < low:
        fail(where, f"'to' ({high:g}) is below 'from' ({low:g})")
    if ("step" in values) == ("factor" in values):
        fail(where, "a range takes either 'step' or 'factor'")
    out: list = []
    value = low
    while value <= high * (1 + 1e-12) and len(out) <= schemas.MAX_SWEEP_VALUES:
        out.append(int(value) if float(value).is_integer() else value)
        value = low + values["step"] * len(out) if "step" in values else value * values["factor"]
    if len(out) > schemas.MAX_SWEEP_VALUES:
        fail(where, f"more than {schemas.MAX_SWEEP_VALUES:,} values; use a larger step or factor")
    return out


# -- designs of points ----------------------------------------------------------------------------

def design_of(recipe: dict, catalog: Catalog | None = None, bases: dict[str, Design] | None = None) -> Design:
    """The design a point's recipe stands for, with its workload as the design's setting.
    `bases`: base designs by `base_key` (a sweep's `bases`, shipped to the workers). A base not
    among them is read from its file again, which must still hold the design the sweep ran on,
    and is added to `bases`: keyed by content, a cache a changed file cannot make stale."""
    catalog = catalog or default_catalog()
    if "template" in recipe:
        design = generate(recipe["template"], catalog, **recipe["params"])
    else:
        key = recipe.get("base_sha256")
        base = None if bases is None or key is None else bases.get(key)
        if base is None:
            base = load_design(recipe["base"], catalog)
            if key is not None and base_key(base) != key:
                raise BaseChangedError(f"the base design {recipe['base']} changed since the sweep ran; "
                                       "run the sweep again to rebuild its points")
            if bases is not None and key is not None:
                bases[key] = base
        design = base.snapshot()
        for old, new in recipe["parts"].items():
            for item in list(design.items.values()):
                if item.part == old and new != old:
                    design.update_item(item.id, part=new)
    design.settings["workload"] = json.loads(json.dumps(recipe["workload"]))
    return design


def recipe_text(recipe: dict) -> str:
    return json.dumps(recipe, sort_keys=True, separators=(",", ":"))



# -- the figures a sweep names ------------------------------------------------------------------------
# A path is checked against what the engine computes for tiny designs of every template with a
# training job (one that fits and one that does not), not against a list kept by hand, so a figure
# the engine adds is sweepable at once; a path only some designs have (training.* with a workload)
# passes because one of these has it.

ROW_COLUMNS = ("point", "meets", "unpriced", "pruned", "error", "design")  # beside the axes and the figures
_REFERENCE_DESIGNS = (("rail-fat-tree", {"nodes": 2}), ("fat-tree", {"nodes": 2}), ("rail-only", {"nodes": 2}),
                      ("multi-plane", {"nodes": 2}), ("torus", {"dims": "2x2x2"}), ("nvl72", {"nodes": 1}),
                      ("pcie-fabric", {}), ("server", {}),
                      ("dragonfly", {"nodes": 16, "switches_per_group": 2, "nodes_per_switch": 2}))
_REFERENCE_JOB = {"model": "megatron-1.7b", "tokens": 1e11, "plan": "auto"}
_UNFITTING_JOB = {"model": "llama3-405b", "plan": "auto"}  # on one server: the rows of a plan that does not fit
# Below these, keys are ids (parts, media, failure targets) or a what-if's figures: any may be there.
_DATA_KEYED = {"inventory.accelerator_models", "inventory.server_models", "inventory.switch_models",
               "inventory.nic_models", "bom.links_by_medium", "bom.cables_by_medium", "bom.transceivers_by_medium",
               "cost.unpriced_by_category", "part_names", "network.job", "degraded"}
# Summary rows named after a part, a switch level or a collective and its size, and rows none of the
# tiny designs has (an accelerator with SRAM, accelerators not all joined, goodput figures missing).
_COLLECTIVE_ROWS = "|".join(op.replace("-", "_") for op in OPS)
_SUMMARY_NAMED = re.compile(rf"^(accelerators_\w+|oversubscription_at_\w+|({_COLLECTIVE_ROWS})_\w+_busbw_gb_per_s)$")
_SUMMARY_RARE = {"on_chip_sram_gib": 0.0, "training_timed": "", "why_some_goodput_figures_are_missing": ""}
_KIND_WORDS = {"object": "an object", "list": "a list", "text": "a text", "boolean": "true or false"}


@dataclass
class _Shape:
    """What a figure path reaches in some design: an object's keys, a list's entries, the kinds of value."""

    keys: dict[str, _Shape] = field(default_factory=dict)
    entries: _Shape | None = None
    kinds: set[str] = field(default_factory=set)

    def add(self, value: Any) -> None:
        if isinstance(value, dict):
            self.kinds.add("object")
            for key, inner in value.items():
                self.keys.setdefault(key, _Shape()).add(inner)
        elif isinstance(value, list):
            self.kinds.add("list")
            self.entries = self.entries or _Shape()
            for inner in value:
                self.entries.add(inner)
        elif value is None:
            self.kinds.add("empty")
        elif isinstance(value, bool):
            self.kinds.add("boolean")
        else:
            self.kinds.add("number" if isinstance(value, (int, float)) else "text")

    def paths(self, prefix: str = "") -> Iterator[str]:
        for key, inner in self.keys.items():
            yield f"{prefix}{key}"
            yield from inner.paths(f"{prefix}{key}.")
        if self.entries is not None:
            yield f"{prefix}0"
            yield from self.entries.paths(f"{prefix}0.")


@functools.lru_cache(maxsize=1)
def _figure_shape() -> _Shape:
    from designer.engine import evaluate
    from designer.engine.figures import figures
    from designer.engine.summary import PEAKS

    shape = _Shape()
    catalog = default_catalog()
    makers = [(functools.partial(generate, template, catalog, **params), _REFERENCE_JOB)
              for template, params in _REFERENCE_DESIGNS if template in GENERATORS]
    makers += [(functools.partial(generate, "server", catalog), _UNFITTING_JOB),
               # Wafers joined to nothing: lint findings, collectives without a path, weight streaming.
               (functools.partial(load_design, resolve_design_path("cerebras-cg1"), catalog), _REFERENCE_JOB)]
    for make, job in makers:
        try:
            shape.add(figures(evaluate(make(), catalog, workload={"training": job})))
        except DesignerError:
            continue  # a user's catalogue file changed a part these use: the others still tell
    peaks = {p: 0.0 for p in PRECISIONS}  # every precision a catalogue part may list
    shape.add({"compute": {"peak_tflops": peaks}, "summary": {
        **{peak.key: 0.0 for peak in PEAKS.values()}, **_SUMMARY_RARE}})
    return shape


@functools.lru_cache(maxsize=1)
def _figure_paths() -> tuple[str, ...]:
    return tuple(_figure_shape().paths())


def figure_problem(path: str, numeric_for: str | None = None) -> str | None:
    """Why a sweep cannot name the figure `path`, None if it can: no design has it, or (for
    `numeric_for`, "a goal" or "a constraint") it is never a number."""
    node, walked = _figure_shape(), ""
    for part in path.split("."):
        if walked in _DATA_KEYED:
            return None
        here = f"{walked}.{part}" if walked else part
        if part in node.keys:
            node = node.keys[part]
        elif here in _DATA_KEYED:  # a section the tiny designs lack (a what-if's)
            node = _Shape(kinds={"object"})
        elif part.isdigit() and node.entries is not None:
            node = node.entries
        elif walked == "summary" and _SUMMARY_NAMED.match(part):
            node = _Shape(kinds={"number"})
        else:
            close = difflib.get_close_matches(path, _figure_paths(), n=3, cutoff=0.75)
            hint = ("; did you mean " + ", ".join(f"'{c}'" for c in close) + "?") if close else \
                " (figures are paths in the JSON of `evaluate --json` and its summary, like 'training.days')"
            return f"figure '{path}' is not computed for any design{hint}"
        walked = here
    if numeric_for is not None and "number" not in node.kinds and node.kinds != {"empty"}:
        kinds = " or ".join(_KIND_WORDS[k] for k in sorted(node.kinds - {"empty"}))
        return f"figure '{path}' is {kinds}, never a number; {numeric_for} needs a number"
    return None
