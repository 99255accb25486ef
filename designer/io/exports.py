"""CSV and JSON exports of an evaluation, written atomically like design files."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from designer.engine.compare import Comparison
from designer.engine.result import Result
from designer.engine.summary import parts_text, summary_rows
from designer.io.files import DesignFileError, write_text_atomically

WHAT_IF_NAMED = 50  # failures the summary names; the rest it counts (every id is in its own row)


# A cell a spreadsheet would run as a formula (=HYPERLINK(...), +cmd|...) starts with one of these:
# such text is written with a leading apostrophe, which spreadsheets show as text (OWASP's advice
# for CSV injection). A plain number ("-12.5") is not a formula and is written as it is.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(value: Any) -> Any:
    """`value` as a CSV cell no spreadsheet runs: text that starts like a formula gets a leading '."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


class _SafeWriter:
    def __init__(self, stream: TextIO) -> None:
        self._writer = csv.writer(stream, lineterminator="\n")

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([spreadsheet_safe(cell) for cell in row])


def csv_writer(stream: TextIO) -> _SafeWriter:
    """The CSV writer of every CSV the tool writes: `\n` line ends, formula-like text escaped."""
    return _SafeWriter(stream)


def summary_csv(result: Result, describe_failure: Callable[[str], str] = str) -> str:
    """The summary rows (metric, value, unit), then the lint findings. With parts marked failed
    (a what-if) two more columns, `what_if_value` and `what_if_change` (degraded − healthy), and
    rows for what failed (named by `describe_failure`, which turns the engine's "spines.sw:1"
    into the design's words, and by id), how many accelerators are cut off, and every compared
    figure (the job's accelerators among them): the Goodput tab's what-if table."""
    degraded = result.degraded
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["metric", "value", "unit"] + (["what_if_value", "what_if_change"] if degraded else []))
    for metric, value, unit in summary_rows(result):
        writer.writerow([metric, value, unit])
    if degraded is not None:
        failures = degraded.failures
        named = "; ".join(map(describe_failure, failures[:WHAT_IF_NAMED]))
        if len(failures) > WHAT_IF_NAMED:
            named += f"; and {len(failures) - WHAT_IF_NAMED:,} more"
        writer.writerow(["What-if: marked failed", named, ""])
        writer.writerow(["What-if: marked failed (ids)", " ".join(failures), ""])
        writer.writerow(["What-if: accelerators cut off", degraded.cut_off, "count"])
        for label, text in (("placement", degraded.placement), ("note", degraded.why)):
            if text:
                writer.writerow([f"What-if: {label}", text, ""])
        for figure in degraded.figures:
            writer.writerow([f"What-if: {figure.figure}", _blank(figure.healthy), figure.unit,
                             _blank(figure.degraded), _blank(figure.change)])
    for finding in result.lint:
        writer.writerow([f"Lint {finding.severity}: {finding.item}", finding.message, ""])
    return buffer.getvalue()


def comparison_csv(comparison: Comparison) -> str:
    """Every compared figure (key, metric, unit, each design's value, then for each design after
    the first its difference, ratio and verdict), then the bill of materials' changes."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    header = ["key", "metric", "unit", *comparison.names]
    for name in comparison.names[1:]:
        header += [f"difference {name}", f"ratio {name}", f"verdict {name}"]
    writer.writerow(header)
    for row in (*comparison.rows, *comparison.cost, *comparison.goodput):
        line = [row.key, row.metric, row.unit, *("" if v is None else v for v in row.values)]
        for i in range(1, len(row.values)):
            line += ["" if row.differences[i] is None else row.differences[i],
                     "" if row.ratios[i] is None else row.ratios[i], row.verdicts[i]]
        writer.writerow(line)
    for change in comparison.bom:
        writer.writerow([f"bom.{change.category}.{change.part}", change.name, "count", *change.quantities,
                         *[x for i in range(1, len(change.quantities))
                           for x in (change.quantities[i] - change.quantities[0], "", change.changes[i])]])
    return buffer.getvalue()


def bom_csv(result: Result) -> str:
    """One line per part, cable (per medium and reach) and transceiver, with unit and extended
    prices and the price's basis ("published", or "derived": an estimate from comparable parts,
    docs/costs.md); a part without a price says so, a part paid for in its server's price says that.
    It closes with the rows that add up to the capital cost the Cost tab and `cost.capital_usd`
    show: the priced lines' total, the facility (built: its cost per kW × the IT load) and the
    capital, which names the unpriced parts it leaves out."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["category", "part", "name", "quantity", "unit_price_usd", "extended_usd", "price_basis",
                     "price_note"])
    for row in result.bom.rows:
        note = "included in the server's price" if row.included else "" if row.priced else "no price"
        basis = "" if not row.priced else "derived" if row.price_derived else "published"
        # The line's name says "(in its server's price)" too (the JSON has no note): here the note does.
        name = result.part_names.get(row.part, row.part) if row.included else row.name
        writer.writerow([row.category, row.part, name, row.quantity, _blank(row.unit_price_usd),
                         _blank(row.extended_usd), basis, note])
    cost = result.cost
    left_out = f"leaves out the unpriced parts: {parts_text(result, cost.unpriced_parts)}" if cost.unpriced_parts \
        else ""
    if cost.capital_usd is None:
        writer.writerow(["total", "", "Capital cost: not computed, no line has a price", "", "", "", "", left_out])
        return buffer.getvalue()
    used = cost.assumptions
    if used["facility"] == "build":
        facility = (f"Facility: {used['facility_usd_per_kw']:,.0f} USD/kW × {result.power.total_kw:,.2f} kW IT load "
                    f"(depreciated over {used['facility_years']:g} years)")
    else:
        facility = (f"Facility: colocation at {used['colocation_usd_per_kw_month']:,.0f} USD/kW-month, a yearly cost, "
                    "not capital")
    writer.writerow(["subtotal", "", "Parts total (the priced lines above)", "", "", cost.total_usd, "", ""])
    writer.writerow(["facility", "", facility, "", "", cost.facility_usd, "", ""])
    writer.writerow(["total", "", "Capital cost (parts total + facility)", "", "", cost.capital_usd, "", left_out])
    return buffer.getvalue()


def _blank(value: float | None) -> float | str:
    return "" if value is None else value


def result_json(result: Result) -> str:
    """The result as JSON that any reader accepts: a figure that is not finite (a time over a link
    of no capacity) is null, never NaN or Infinity."""
    return json.dumps(_finite(result.as_dict()), indent=2, sort_keys=True, allow_nan=False) + "\n"


def comparison_json(comparison: Comparison) -> str:
    return json.dumps(_finite(comparison.as_dict()), indent=2, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_export(path: str | os.PathLike, text: str) -> None:
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise DesignFileError(path, None, f"cannot be written ({exc.strerror or exc})") from None
