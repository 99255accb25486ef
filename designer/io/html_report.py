"""The design report: one self-contained HTML page (its pictures inline as base64 PNG) with the
design's name and description, the summary table, the results' plots, the bill of materials, the
lint findings and the assumptions the figures rest on. Built from typed records and PNG bytes
the caller gathered (the app's results panel draws the plots), so it is plain Python; written
through the one checked writer (`write_export`: a failed write leaves the old file as it was)."""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from designer.engine.sections import BomRow
from designer.io.exports import write_export

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class ReportPicture:
    """A picture for the report: its caption, PNG bytes and how many of its pixels make a CSS
    pixel (a plot drawn at 2× is shown at half its pixel width, sharp on a high-density screen)."""

    caption: str
    png: bytes
    scale: float = 1.0

    def pixel_size(self) -> tuple[int, int]:
        """Width and height, from the PNG's header (its IHDR chunk comes first)."""
        if not self.png.startswith(PNG_SIGNATURE) or len(self.png) < 24:
            raise ValueError(f"the picture '{self.caption}' is not a PNG")
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")


@dataclass(frozen=True)
class ReportRow:
    """A row of a table as shown: its cells, already formatted."""

    cells: tuple[str, ...]


@dataclass(frozen=True)
class ReportAssumption:
    what: str
    value: str
    source: str = ""


@dataclass(frozen=True)
class ReportFinding:
    severity: str
    item: str
    message: str


@dataclass(frozen=True)
class ReportContent:
    """Everything the report shows, formatted for reading."""

    name: str
    description: str = ""
    generated: str = ""  # when, as the reader reads it
    summary: Sequence[tuple[str, str, str]] = ()  # metric, value, unit: the summary table's rows
    pictures: Sequence[ReportPicture] = ()  # the canvas and the plots
    bom: Sequence[BomRow] = ()
    capital_usd: float | None = None  # parts total + facility, as the BOM CSV closes
    facility_usd: float | None = None
    lint: Sequence[ReportFinding] = ()
    assumptions: Sequence[ReportAssumption] = ()
    notes: Sequence[str] = field(default_factory=tuple)  # what else the engine says about its figures


_STYLE = """
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; color: #1F2328;
       margin: 2em auto; max-width: 1100px; padding: 0 1.5em; line-height: 1.4; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #C0C6CC; padding-bottom: 0.2em; margin-top: 1.8em; }
p.meta { color: #57606A; margin-top: 0; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #D0D7DE; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #F1F3F5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: bold; background: #F6F8FA; }
div.picture { margin: 1em 0; }
div.picture img { max-width: 100%; height: auto; border: 1px solid #D0D7DE; }
.error { color: #B00020; } .warning { color: #9A6700; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _money(value: float | None) -> str:
    return "" if value is None else f"${value:,.0f}"


def png_data_uri(png: bytes) -> str:
    if not png.startswith(PNG_SIGNATURE):
        raise ValueError("a report picture must be a PNG")
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


MAX_PICTURE_W = 1000  # CSS pixels: the page's width
_NUMBER = re.compile(r"^[$\-+]?[\d.,]+( ?%)?( \(estimate\))?$|^$")  # right-aligned; words stay left


def _cell(text: str) -> str:
    """A cell's text, its leading spaces kept (the summary indents "of which" rows)."""
    stripped = text.lstrip(" ")
    return "\u00a0" * (2 * (len(text) - len(stripped))) + stripped


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (),
           classes: Sequence[str] = (), widths: Sequence[int] = ()) -> str:
    """A table; `widths`: each column's share of the page in per cent (readers that lay tables
    out simply, as Qt's rich text does, otherwise squeeze the first column)."""
    heads = "".join(f'<th width="{widths[i]}%">{_e(h)}</th>' if i < len(widths) else f"<th>{_e(h)}</th>"
                    for i, h in enumerate(headers))
    out = ['<table width="100%">' if widths else "<table>", f"<tr>{heads}</tr>"]
    for k, row in enumerate(rows):
        css = classes[k] if k < len(classes) and classes[k] else ""
        cells = "".join(f'<td class="num" align="right">{_e(c)}</td>' if i in numeric and _NUMBER.match(c)
                        else f"<td>{_e(_cell(c))}</td>" for i, c in enumerate(row))
        out.append(f'<tr class="{css}">{cells}</tr>' if css else f"<tr>{cells}</tr>")
    out.append("</table>")
    return "\n".join(out)


def _bom_rows(content: ReportContent) -> tuple[list[list[str]], list[str]]:
    rows, classes = [], []
    parts_total = 0.0
    for row in content.bom:
        if row.included:
            unit, extended = "included", ""
        elif row.unit_price_usd is None:
            unit, extended = "no price", ""
        else:
            unit = _money(row.unit_price_usd) + (" (estimate)" if row.price_derived else "")
            extended = _money(row.extended_usd)
            parts_total += row.extended_usd or 0.0
        name = row.name + (f" ({row.variant})" if row.variant else "")
        rows.append([row.category, name, row.part, f"{row.quantity:,}", unit, extended])
        classes.append("")
    if content.bom:
        rows.append(["", "Parts total", "", "", "", _money(parts_total)])
        classes.append("total")
        if content.facility_usd:
            rows.append(["", "Facility", "", "", "", _money(content.facility_usd)])
            classes.append("")
        if content.capital_usd is not None:
            rows.append(["", "Capital", "", "", "", _money(content.capital_usd)])
            classes.append("total")
    return rows, classes


def report_html(content: ReportContent) -> str:
    """The whole page, as text."""
    title = content.name or "Untitled design"
    body = [f"<h1>{_e(title)}</h1>"]
    meta = "Cluster Designer report" + (f" · {content.generated}" if content.generated else "")
    body.append(f'<p class="meta">{_e(meta)}</p>')
    if content.description:
        body += [f"<p>{_e(paragraph)}</p>" for paragraph in content.description.split("\n\n") if paragraph.strip()]
    body.append("<h2>Summary</h2>")
    body.append(_table(("Metric", "Value", "Unit"), [list(r) for r in content.summary], numeric=(1,),
                       widths=(60, 22, 18))
                if content.summary else "<p>The design has not been evaluated.</p>")
    for picture in content.pictures:
        body.append(f"<h2>{_e(picture.caption)}</h2>")
        width, height = picture.pixel_size()
        shown_w = min(MAX_PICTURE_W, round(width / picture.scale))
        shown_h = round(height * shown_w / width)
        body.append(f'<div class="picture"><img src="{png_data_uri(picture.png)}" width="{shown_w}" '
                    f'height="{shown_h}" alt="{_e(picture.caption)}"></div>')
    body.append("<h2>Bill of materials</h2>")
    if content.bom:
        rows, classes = _bom_rows(content)
        body.append(_table(("Category", "Part", "Id", "Quantity", "Unit price", "Extended"), rows,
                           numeric=(3, 4, 5), classes=classes, widths=(12, 34, 16, 10, 14, 14)))
    else:
        body.append("<p>No bill of materials (the design has not been evaluated).</p>")
    body.append("<h2>Lint findings</h2>")
    if content.lint:
        body.append(_table(("Severity", "Item", "Finding"),
                           [[f.severity, f.item, f.message] for f in content.lint],
                           classes=[f.severity if f.severity in ("error", "warning") else "" for f in content.lint],
                           widths=(10, 22, 68)))
    else:
        body.append("<p>No findings: the design is lint-clean.</p>")
    body.append("<h2>Assumptions</h2>")
    if content.assumptions:
        body.append(_table(("Assumption", "Value", "Source"),
                           [[a.what, a.value, a.source] for a in content.assumptions],
                           widths=(24, 16, 60)))
    for note in content.notes:
        body.append(f"<p>{_e(note)}</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{_e(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def write_report(path: str | os.PathLike, content: ReportContent) -> None:
    """Write the report to `path` through the checked writer. Raises DesignerError naming the file;
    nothing is replaced unless the whole page is written."""
    write_export(path, report_html(content))
