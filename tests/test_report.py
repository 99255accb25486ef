"""File ▸ Export Report…: one self-contained HTML page of the evaluated design. The page is built
from typed inputs by `io.html_report` (no Qt); the app gathers what its panels show and writes it
through the checked writer, which leaves an old report as it was when the write is refused."""

from __future__ import annotations

import base64
import re
import stat
import struct
import zlib
from html.parser import HTMLParser

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.engine.sections import BomRow
from designer.io.html_report import (PNG_SIGNATURE, ReportAssumption, ReportContent, ReportFinding, ReportPicture,
                                     report_html)
from designer.model.catalog import default_catalog
from designer.topologies import generate
from tests.helpers import window_settled


def _tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG, made without Qt."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (PNG_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class _Page(HTMLParser):
    """The page's table cells (text per row) and its images' sources."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.images: list[dict] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(dict(attrs))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip().replace("\u00a0", " "))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parsed(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def _decoded_pngs(page: _Page) -> list[bytes]:
    out = []
    for image in page.images:
        source = image["src"]
        assert source.startswith("data:image/png;base64,")  # inline: the page stands alone
        out.append(base64.b64decode(source.split(",", 1)[1], validate=True))
    return out


def test_the_page_holds_the_summary_the_bom_the_pictures_lint_and_assumptions():
    content = ReportContent(
        name="Hall <B> & C", description="Two pods.\n\nSecond paragraph.",
        summary=[("Accelerators", "1,024", "count"), ("  of which spares", "8", "count")],
        pictures=[ReportPicture("Canvas", _tiny_png()), ReportPicture("Cost plot", _tiny_png(4, 4), scale=2.0)],
        bom=[BomRow("accelerator", "h100-sxm", "NVIDIA H100", 1024, 25_000.0),
             BomRow("nic", "cx7", "ConnectX-7", 1024, None, included=True),
             BomRow("cable", "dac", "DAC cable", 10, 100.0, variant="copper")],
        capital_usd=30_000_000.0, facility_usd=4_398_000.0,
        lint=[ReportFinding("warning", "Rack 1", "over its power budget")],
        assumptions=[ReportAssumption("PUE", "1.3", "Uptime Institute")])
    text = report_html(content)
    page = _parsed(text)
    assert "<title>Hall &lt;B&gt; &amp; C</title>" in text  # names are escaped, never markup
    assert ["Accelerators", "1,024", "count"] in page.rows and ["of which spares", "8", "count"] in page.rows
    assert ["accelerator", "NVIDIA H100", "h100-sxm", "1,024", "$25,000", "$25,600,000"] in page.rows
    assert ["nic", "ConnectX-7", "cx7", "1,024", "included", ""] in page.rows
    assert ["cable", "DAC cable (copper)", "dac", "10", "$100", "$1,000"] in page.rows
    assert ["", "Parts total", "", "", "", "$25,601,000"] in page.rows
    assert ["", "Capital", "", "", "", "$30,000,000"] in page.rows
    assert ["warning", "Rack 1", "over its power budget"] in page.rows
    assert ["PUE", "1.3", "Uptime Institute"] in page.rows
    pngs = _decoded_pngs(page)
    assert pngs == [_tiny_png(), _tiny_png(4, 4)]
    assert [(i["width"], i["height"]) for i in page.images] == [("3", "2"), ("2", "2")]  # 2×: half its pixels
    with pytest.raises(ValueError, match="not a PNG"):
        report_html(ReportContent(name="x", pictures=[ReportPicture("Bad", b"GIF89a....")]))


@pytest.fixture
def reporting(make_window, qtbot, monkeypatch):
    """An evaluated fat tree; the save dialog answers `answers["path"]`, warnings are recorded."""
    answers: dict = {"warnings": []}
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *args: (answers["path"], "")))
    monkeypatch.setattr(QMessageBox, "warning",
                        staticmethod(lambda parent, title, text: answers["warnings"].append(text)))
    window = make_window(generate("rail-fat-tree", default_catalog(), nodes=8))
    qtbot.waitUntil(lambda: window_settled(window) and window.last_result is not None, timeout=60_000)
    return window, answers


def test_export_report_writes_one_page_with_what_the_window_shows(reporting, tmp_path):
    window, answers = reporting
    answers["path"] = str(tmp_path / "pod-report.html")
    window.view.zoom(0.2)  # the canvas zoomed out: the report's picture still has every GPU
    window.act_export_report.trigger()
    assert answers["warnings"] == []
    assert "Wrote" in window.statusBar().currentMessage()
    text = (tmp_path / "pod-report.html").read_text(encoding="utf-8")
    page = _parsed(text)
    assert window.document.design.name in text
    shown = [list(row) for row in window.results.summary_table_rows()]
    assert shown and all([cell.strip() for cell in row] in page.rows for row in shown)
    for row in window.last_result.bom.rows:
        assert any(cells[:4] == [row.category, row.name + (f" ({row.variant})" if row.variant else ""), row.part,
                                 f"{row.quantity:,}"] for cells in page.rows), row
    for finding in window.results.lint_findings_shown():
        assert list(finding) in page.rows
    assert any(cells[0] == "PUE" for cells in page.rows)  # the cost assumptions in force
    pngs = _decoded_pngs(page)
    assert len(pngs) == 1 + len(window.results.plot_names())  # the canvas and every plot
    for png in pngs:
        image = QImage.fromData(png, "PNG")
        assert not image.isNull() and image.width() > 100
    assert [p.name for p in tmp_path.iterdir()] == ["pod-report.html"]  # no temporary left behind


def test_a_refused_report_write_leaves_the_old_file_as_it_was(reporting, tmp_path):
    window, answers = reporting
    old = tmp_path / "report.html"
    old.write_text("the old report")
    old.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # read-only: refused, even for the superuser
    answers["path"] = str(old)
    assert window.export_report() is None
    assert len(answers["warnings"]) == 1 and "report.html" in answers["warnings"][0]
    assert old.read_text() == "the old report"
    folder = tmp_path / "folder.html"
    folder.mkdir()
    answers["path"] = str(folder)
    window.act_export_report.trigger()
    assert len(answers["warnings"]) == 2 and re.search("folder", answers["warnings"][1])
    assert folder.is_dir() and list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.html", "report.html"]


def test_export_report_before_any_result_says_so(make_window, qtbot, monkeypatch, tmp_path):
    window = make_window()
    window.last_result = None
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *args: (str(tmp_path / "r.html"), "")))
    window.act_export_report.trigger()
    assert "not been evaluated" in window.statusBar().currentMessage()
    assert list(tmp_path.iterdir()) == []
