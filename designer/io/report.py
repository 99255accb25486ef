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
