"""A sweep: the file (`NAME.sweep.json`, schema `designer.io.schemas.SWEEP`), its points and the
design each point stands for.

A point is a small JSON-able dict, its *recipe*: a template with its parameters, or a base design
file with parts swapped, plus the workload. It travels to a Dask worker, which builds and
evaluates the design there, and it is written in each result row so the design can be rebuilt
(`design_of`) without keeping it."""

from __future__ import annotations

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

from designer.io import schemas
from designer.io.examples import resolve_design_path
from designer.io.files import load_design
from designer.io.options import parse_plan
from designer.model.catalog import Catalog, default_catalog
from designer.model.design import Design
from designer.model.errors import DesignerError, InputError
from designer.model.validation import check, read_json, show
from designer.topologies import GENERATORS, generate

FORMAT = "cluster-designer-sweep"
SUFFIX = ".sweep.json"
MAX_SWEEP_BYTES = 2 ** 20
MAX_POINTS = 10_000_000  # points of one sweep: a week of the 2-core machine at 1,000 a minute

_OPERATORS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq}


class SweepError(InputError):
    """A sweep file refused: `FILE: $.json.path: problem`."""


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
    base: str | None = None
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
                recipe.update(base=self.base, parts=swaps)
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
        base = Path(document["base"])
        if not base.is_absolute() and (Path(source).parent / base).exists():
            base = Path(source).parent / base
        try:
            sweep.base = str(Path(resolve_design_path(str(base))).resolve())
        except DesignerError as exc:
            fail("$.base", str(exc))
        for old, news in document.get("parts", {}).items():
            for i, part in enumerate([old, *news]):
                if catalog.get(part) is None:
                    fail(f"$.parts.{old}" + (f"[{i - 1}]" if i else ""), f"unknown part {show(part)}")
    for name, values in document.get("params", {}).items():
        sweep.params[name] = _values(values, f"$.params.{name}", fail)
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
    sweep.constraints = [Constraint.parse(text) for text in document.get("constraints", [])]
    if "goal" in document:
        (sense, path), = document["goal"].items()
        sweep.goal = (sense, path)
    if sweep.count() > MAX_POINTS:
        fail("$", f"{sweep.count():,} points; a sweep holds at most {MAX_POINTS:,} (see docs/limits.md)")
    return sweep


DEFAULT_KEEP = ("summary.accelerators", "summary.power_kw", "summary.peak_bf16_fp16_tflops", "training.days",
                "training.step_time_s", "training.mfu")


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

def design_of(recipe: dict, catalog: Catalog | None = None, base_designs: dict | None = None) -> Design:
    """The design a point's recipe stands for, with its workload as the design's setting.
    `base_designs` caches loaded base files (a worker builds many points from one)."""
    catalog = catalog or default_catalog()
    if "template" in recipe:
        design = generate(recipe["template"], catalog, **recipe["params"])
    else:
        base = None if base_designs is None else base_designs.get(recipe["base"])
        if base is None:
            base = load_design(recipe["base"], catalog)
            if base_designs is not None:
                base_designs[recipe["base"]] = base
        design = base.snapshot()
        for old, new in recipe["parts"].items():
            for item in list(design.items.values()):
                if item.part == old and new != old:
                    design.update_item(item.id, part=new)
    design.settings["workload"] = json.loads(json.dumps(recipe["workload"]))
    return design


def recipe_text(recipe: dict) -> str:
    return json.dumps(recipe, sort_keys=True, separators=(",", ":"))

