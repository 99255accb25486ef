"""Render Cluster Designer's SVG icons to PNG with Qt's own SVG renderer.

    .venv/bin/python packaging/render_icons.py              # app icon PNGs into resources/icons/
    .venv/bin/python packaging/render_icons.py --check      # exit 1 if a PNG is missing or stale
    .venv/bin/python packaging/render_icons.py --preview sheet.png   # contact sheet of every icon

The app icon `cluster-designer.svg` is rendered at every size in SIZES as
`cluster-designer-<N>.png`. Where a hand-tuned small variant `cluster-designer-small.svg` exists
it is used for the sizes up to SMALL_MAX (thin detail drops out below ~32 px). The palette icons
(rack.svg, server.svg, ...) ship as SVG only; the preview sheet shows them at 16, 32 and 64 px.

Uses PySide6.QtSvg (part of PySide6-Essentials) and runs headless (QT_QPA_PLATFORM=offscreen).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ICONS_DIR = Path(__file__).resolve().parent.parent / "resources" / "icons"
APP_ICON = "cluster-designer"
SIZES = (16, 32, 48, 64, 128, 256, 512)
SMALL_MAX = 32
PALETTE = ("rack", "server", "accelerator", "cpu", "nic", "switch", "group", "link")


def render(svg: Path, size: int) -> QImage:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg}: not a valid SVG for Qt")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def app_icon_source(icons_dir: Path, size: int) -> Path:
    small = icons_dir / f"{APP_ICON}-small.svg"
    if size <= SMALL_MAX and small.exists():
        return small
    return icons_dir / f"{APP_ICON}.svg"


def render_app_icons(icons_dir: Path) -> list[Path]:
    written = []
    for size in SIZES:
        out = icons_dir / f"{APP_ICON}-{size}.png"
        if not render(app_icon_source(icons_dir, size), size).save(str(out), "PNG"):
            raise OSError(f"could not write {out}")
        written.append(out)
    return written


def _pixels(image: QImage):
    import numpy as np

    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())[
        :, : image.width() * 4
    ].astype(np.int16)


def stale_app_icons(icons_dir: Path, tolerance: float = 2.0) -> list[str]:
    """PNGs that are missing, the wrong size, or no longer what their SVG renders to.

    Compares pixels (mean absolute difference per channel, out of 255) rather than file times,
    which a git checkout does not keep.
    """
    problems = []
    for size in SIZES:
        out = icons_dir / f"{APP_ICON}-{size}.png"
        if not out.exists():
            problems.append(f"{out.name} missing")
            continue
        stored = QImage(str(out))
        if stored.width() != size or stored.height() != size:
            problems.append(f"{out.name} is {stored.width()}x{stored.height()}, not {size}x{size}")
            continue
        fresh = render(app_icon_source(icons_dir, size), size)
        diff = abs(_pixels(stored) - _pixels(fresh)).mean()
        if diff > tolerance:
            problems.append(f"{out.name} differs from its SVG (mean difference {diff:.1f})")
    return problems


def preview_sheet(icons_dir: Path, out: Path, background: str = "#ffffff") -> None:
    """Every icon at 16, 32 and 64 px, plus 16 and 32 px blown up 4x with hard pixels."""
    names = [APP_ICON, *PALETTE]
    if (icons_dir / f"{APP_ICON}-small.svg").exists():
        names.insert(1, f"{APP_ICON}-small")
    cell = 140
    row_h = 64 * 2 + 24
    sheet = QImage(cell * len(names), row_h * 2, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(sheet)
    for band, bg in enumerate((background, "#2b2b2b")):
        painter.fillRect(0, band * row_h, sheet.width(), row_h, QColor(bg))
        for i, name in enumerate(names):
            svg = icons_dir / f"{name}.svg"
            x, y = i * cell + 4, band * row_h + 4
            for size in (16, 32, 64):
                painter.drawImage(x, y, render(svg, size))
                x += size + 4
            x = i * cell + 4
            y += 64 + 4
            for size in (16, 32):
                big = render(svg, size).scaled(size * 4 if size == 16 else size * 2,
                                               size * 4 if size == 16 else size * 2,
                                               Qt.AspectRatioMode.IgnoreAspectRatio,
                                               Qt.TransformationMode.FastTransformation)
                painter.drawImage(x, y, big)
                x += big.width() + 4
    painter.end()
    sheet.save(str(out), "PNG")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--icons-dir", type=Path, default=ICONS_DIR)
    parser.add_argument("--check", action="store_true", help="only check the PNGs are up to date")
    parser.add_argument("--preview", type=Path, metavar="PNG", help="write a contact sheet")
    args = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    if args.check:
        problems = stale_app_icons(args.icons_dir)
        for problem in problems:
            print(f"render_icons: {problem}; run packaging/render_icons.py", file=sys.stderr)
        return 1 if problems else 0
    if args.preview:
        preview_sheet(args.icons_dir, args.preview)
        print(f"wrote {args.preview}")
        return 0
    for path in render_app_icons(args.icons_dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
