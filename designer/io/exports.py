"""CSV and JSON exports of an evaluation, written atomically like design files."""

from __future__ import annotations

import csv
import io
import json
import math
import os

from designer.engine.compare import Comparison
from designer.engine.result import Result
from designer.engine.summary import summary_rows
from designer.io.files import DesignFileError, write_text_atomically


def summary_csv(result: Result) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "value", "unit"])
    for metric, value, unit in summary_rows(result):
        writer.writerow([metric, value, unit])
    for finding in result.lint:
        writer.writerow([f"Lint {finding.severity}: {finding.item}", finding.message, ""])
    return buffer.getvalue()


def bom_csv(result: Result) -> str:
    """One line per part, cable (per medium and reach) and transceiver, with unit and extended
    prices and the price's basis ("published", or "derived": an estimate from comparable parts,
    docs/costs.md); a part without a price says so, a part paid for in its server's price says that."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["category", "part", "name", "quantity", "unit_price_usd", "extended_usd", "price_basis",
                     "price_note"])
    for row in result.bom.rows:
        note = "included in the server's price" if row.included else "" if row.priced else "no price"
        basis = "" if not row.priced else "derived" if row.price_derived else "published"
        writer.writerow([row.category, row.part, row.name, row.quantity, _blank(row.unit_price_usd),
                         _blank(row.extended_usd), basis, note])
    if result.cost.total_usd is not None:
        writer.writerow(["total", "", "priced lines", "", "", result.cost.total_usd, "", ""])
    return buffer.getvalue()


def _blank(value: float | None):
    return "" if value is None else value


def result_json(result: Result) -> str:
    """The result as JSON that any reader accepts: a figure that is not finite (a time over a link
    of no capacity) is null, never NaN or Infinity."""
    return json.dumps(_finite(result.as_dict()), indent=2, sort_keys=True, allow_nan=False) + "\n"


def comparison_json(comparison: Comparison) -> str:
    return json.dumps(_finite(comparison.as_dict()), indent=2, allow_nan=False) + "\n"


def _finite(value):
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
