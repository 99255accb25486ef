"""File ▸ Export Report…: gathers what the window shows of the evaluated design (the summary table,
the canvas at full detail, every plot of the results panel, the BOM, the lint findings, the cost
and training assumptions) and writes it as one HTML page with `io.html_report`."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMessageBox

from designer.canvas.export import ExportOptions, render_image
from designer.engine.cost import ASSUMPTIONS
from designer.engine.summary import format_value
from designer.io.html_report import ReportAssumption, ReportContent, ReportFinding, ReportPicture, write_report
from designer.model.errors import DesignerError


def png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("cannot encode a picture for the report")
    buffer.close()
    return bytes(data.data())


def _assumptions(result) -> list[ReportAssumption]:
    used = dict(result.cost.assumptions)
    out = []
    for assumption in ASSUMPTIONS:
        if assumption.key not in used:
            continue
        value = used[assumption.key]
        shown = value if isinstance(value, str) else format_value(value)
        out.append(ReportAssumption(assumption.label, f"{shown} {assumption.unit}".strip(), assumption.source))
    overlap = result.training.overlap or {}
    for key, value in overlap.items():
        out.append(ReportAssumption(f"Training: {key.replace('_', ' ').upper()} communication hidden behind compute",
                                    str(value), "the overlap the training step was timed with"))
    if result.training.memory_model:
        out.append(ReportAssumption("Training: memory model", result.training.memory_model))
    return out


def gather(window) -> ReportContent:
    """The report of the window's design and its last result."""
    result = window.last_result
    design = window.document.design
    results = window.results
    pictures = [ReportPicture("Canvas", png_bytes(render_image(
        window.scene, ExportOptions(title="", legend=True, scale=1.0))))]
    with tempfile.TemporaryDirectory(prefix="cluster-designer-report-") as folder:
        for name in results.plot_names():
            path = Path(folder) / f"{name}.png"
            results.export_plot_png(name, str(path))  # as File ▸ Export Plot PNG draws it
            pictures.append(ReportPicture(f"{name.capitalize()} plot", path.read_bytes(), scale=2.0))
    names = result.part_names

    def parts(ids) -> str:
        return ", ".join(f"{names.get(i, i)} ({i})" for i in ids)

    notes = []
    if result.cost.unpriced_parts:
        notes.append(f"Left out of the cost (no price in the catalogue): {parts(result.cost.unpriced_parts)}.")
    if result.cost.derived_price_parts:
        notes.append(f"Priced at an estimate derived from comparable parts: {parts(result.cost.derived_price_parts)}.")
    if result.cost.derived_power_parts:
        notes.append(f"Drawing a power estimated from comparable parts: {parts(result.cost.derived_power_parts)}.")
    if result.training.why:
        notes.append(f"Training: {result.training.why}")
    return ReportContent(
        name=window.document.title,
        description=getattr(design, "description", "") or "",
        generated=datetime.now().strftime("%Y-%m-%d %H:%M"),
        summary=[tuple(row) for row in results.summary_table_rows()],
        pictures=pictures,
        bom=list(result.bom.rows),
        capital_usd=result.cost.capital_usd,
        facility_usd=result.cost.facility_usd,
        lint=[ReportFinding(*finding) for finding in results.lint_findings_shown()],
        assumptions=_assumptions(result),
        notes=notes)


def export_report(window, suggested_name: str, path: str | None = None) -> str | None:
    """Ask for a file (unless given; `suggested_name` offered), gather and write the report; the
    path written, or None (nothing evaluated yet, cancelled or refused, with the reason shown)."""
    if window.last_result is None:
        window.show_message("Nothing to report yet: the design has not been evaluated")
        return None
    path = path or window._save_path("Export report", suggested_name,
                                     "HTML pages (*.html *.htm)")
    if not path or not window._writable(path, "Cannot export"):
        return None
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        write_report(path, gather(window))
    except (OSError, DesignerError) as exc:
        QMessageBox.warning(window, "Cannot export", str(exc))
        return None
    finally:
        QApplication.restoreOverrideCursor()
    window.show_message(f"Wrote {path}")
    return path
