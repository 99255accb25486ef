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
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["category", "part", "name", "quantity", "unit_price_usd"])
    for row in result.bom.rows:
        price = row.unit_price_usd
        writer.writerow([row.category, row.part, row.name, row.quantity, "" if price is None else price])
    return buffer.getvalue()


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
