"""The readable text report `cluster-designer evaluate` prints."""

from __future__ import annotations

from designer.engine.result import Result
from designer.engine.summary import format_value, summary_rows


def result_table(result: Result) -> str:
    design = result["design"]
    lines = [f"{design['name']}", "=" * max(20, len(design["name"]))]
    rows = summary_rows(result)
    width = max(len(metric) for metric, _, _ in rows)
    for metric, value, unit in rows:
        lines.append(f"{metric:<{width}}  {format_value(value):>16}  {unit}")
    for extra in result.get("report_sections", ()) or ():
        lines.append("")
        lines.extend(extra)
    lines += performance_sections(result)
    per_rack = result["power"]["per_rack"]
    if per_rack:
        lines += ["", "Power per rack"]
        for rack in per_rack:
            budget = f" of {rack['budget_kw']:g} kW budget" if rack["budget_kw"] else ""
            lines.append(f"  {rack['name']} ×{rack['copies']:,}: {rack['kw_each']:.1f} kW each{budget}")
    lint = result["lint"]
    lines += ["", f"Lint: {len(lint)} finding(s)"]
    for finding in lint[:50]:
        lines.append(f"  {finding['severity']:<7} {finding['item']}: {finding['message']}")
    if len(lint) > 50:
        lines.append(f"  … and {len(lint) - 50} more")
    return "\n".join(lines) + "\n"


def performance_sections(result: Result) -> list[str]:
    lines: list[str] = []
    rows = [r for r in (result.get("collectives") or ()) if r.get("time_s") is not None]
    if rows:
        lines += ["", "Collectives (busbw GB/s; time)"]
        for r in rows:
            algo = f"auto→{r['chosen']}" if r["algorithm"] == "auto" else r["algorithm"]
            neck = r.get("bottleneck") or {}
            lines.append(f"  {r['op']:<10} {algo:<18} {r['ranks']:>8,} ranks {r['bytes']:>14,} B  "
                         f"{r['busbw_gb_per_s']:>9.1f}  {r['time_s'] * 1e3:>10.3f} ms  "
                         f"bottleneck {neck.get('link', '-')} ({neck.get('tier', '-')})")
    training = result.get("training")
    if training and "fits" in training:
        lines += ["", f"Training: {training.get('model') or ''}"]
        if training.get("step_time_s") is not None:
            for key in ("step_time_s", "compute_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s"):
                lines.append(f"  {key[:-2].replace('_', ' '):<14} {training[key]:.4g} s")
            mem = training["memory_per_gpu_gb"]
            lines.append("  memory per GPU " + ", ".join(f"{k} {v:.1f} GB" for k, v in mem.items()))
        elif training.get("fits") is False:
            lines.append(f"  does not fit: {training.get('why')}")
        else:
            lines.append(f"  {training.get('why')}")
    return lines
