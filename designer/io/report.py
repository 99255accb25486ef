"""The readable text report `cluster-designer evaluate` prints."""

from __future__ import annotations

import re
from collections.abc import Callable

from designer.engine.result import Result
from designer.engine.sections import Plan
from designer.engine.summary import failed_text, format_value, summary_rows

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def result_table(result: Result, describe_failure: Callable[[str], str] = str) -> str:
    """The summary rows (goodput among them), the collectives, the training step, a what-if's
    figures (its failures named by `describe_failure`, as in the app), power per rack and lint."""
    name = result.design.name
    lines = [name, "=" * max(20, len(name))]
    rows = summary_rows(result)
    width = max(len(metric) for metric, _, _ in rows)
    for metric, value, unit in rows:
        lines.append(f"{metric:<{width}}  {format_value(value):>16}  {unit}")
    lines += performance_sections(result)
    lines += what_if_section(result, describe_failure)
    per_rack = result.power.per_rack
    if per_rack:
        lines += ["", "Power per rack"]
        for rack in per_rack:
            budget = f" of {rack.budget_kw:g} kW budget" if rack.budget_kw else ""
            lines.append(f"  {rack.name} ×{rack.copies:,}: {rack.kw_each:.1f} kW each{budget}")
    lint = result.lint
    lines += ["", f"Lint: {len(lint)} finding(s)"]
    for finding in lint[:50]:
        lines.append(f"  {finding.severity:<7} {finding.item}: {finding.message}")
    if len(lint) > 50:
        lines.append(f"  … and {len(lint) - 50} more")
    # A name may hold a lone surrogate (a JSON escape loads as it is); printed as it is, it stops
    # any strict UTF-8 output. Shown as U+FFFD instead.
    return LONE_SURROGATE.sub("\ufffd", "\n".join(lines)) + "\n"


def performance_sections(result: Result) -> list[str]:
    lines: list[str] = []
    rows = [r for r in result.collectives if r.time_s is not None]
    if rows:
        lines += ["", "Collectives (busbw GB/s; time)"]
        for r in rows:
            assert r.time_s is not None  # rows keep only the timed collectives
            algo = f"auto→{r.chosen}" if r.algorithm == "auto" else r.algorithm
            link, tier = (r.bottleneck.link, r.bottleneck.tier) if r.bottleneck is not None else (None, None)
            lines.append(f"  {r.op:<10} {algo:<18} {r.ranks:>8,} ranks {r.bytes:>14,} B  "
                         f"{r.busbw_gb_per_s:>9.1f}  {r.time_s * 1e3:>10.3f} ms  "
                         f"bottleneck {link or '-'} ({tier or '-'})")
    training = result.training
    lines += ["", f"Training: {training.model or ''}"]
    if training.step_time_s is not None:
        for name, seconds in (("step_time_s", training.step_time_s), *training.step_parts()):
            lines.append(f"  {name[:-2].replace('_', ' '):<14} {seconds:.4g} s")
        memory = training.memory_per_gpu_gib
        assert memory is not None  # a timed step has its memory figures
        lines.append("  memory per GPU " + ", ".join(f"{k} {v:.1f} GiB" for k, v in memory.as_dict().items()))
        if isinstance(training.plan, Plan):
            figures = training.plan.as_dict()
            chosen = " (chosen by the auto plan)" if figures.pop("auto") else ""
            lines.append("  plan " + ", ".join(f"{k} {v}" for k, v in figures.items()) + chosen)
        if training.overlap is not None:
            lines.append("  overlap (hidden behind compute) " + ", ".join(f"{k} {v}" for k, v in
                                                                           training.overlap.items()))
        if training.memory_model is not None:
            lines.append(f"  memory model: {training.memory_model}")
    elif training.fits is False:
        lines.append(f"  does not fit: {training.why}")
    else:
        lines.append(f"  {training.why}")
    return lines


def what_if_section(result: Result, describe_failure: Callable[[str], str]) -> list[str]:
    """The what-if's figures healthy → degraded (docs/goodput.md); its failures named by
    `describe_failure` with the ids `--fail` takes beside them."""
    d = result.degraded
    if d is None:
        return []
    lines = ["", f"What-if: {failed_text(d.failures, describe_failure, with_ids=True)} failed "
                 f"({d.cut_off:,} accelerators cut off)"]
    if d.placement:
        lines.append(f"  {d.placement}")
    if d.why:
        lines.append(f"  {d.why}")
    for f in d.figures:
        lines.append(f"  {f.figure:<48} {_shown(f.healthy):>14} → {_shown(f.degraded):>14} {f.unit}")
    return lines


def _shown(value: float | None) -> str:
    return "not computed" if value is None else format_value(value)
