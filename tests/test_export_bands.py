"""The PNG export's bands: sized by the items they cross, not only by rows, so a dense stretch below
a sparse one is not drawn in one long slice of the UI thread."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QGraphicsScene

from designer.canvas import export
from designer.canvas.export import MIN_BAND_PX, PngExport, _Extents


def _scene_sparse_then_dense() -> QGraphicsScene:
    scene = QGraphicsScene()
    for y in range(0, 5000, 100):  # one small box every 100 rows
        scene.addRect(QRectF(10, y, 20, 10))
    for _ in range(2000):  # then 2,000 boxes in ten rows
        scene.addRect(QRectF(10, 6000, 20, 10))
    return scene


def _extents(scene: QGraphicsScene, top: float, scale: float) -> _Extents:
    extents = _Extents()
    extents.add(scene.items(), top, scale)
    extents.index()
    return extents


def test_the_items_a_band_crosses_are_counted_from_their_extents(qtbot):
    scene = QGraphicsScene()
    for top, height in ((0, 10), (5, 10), (20, 30), (100, 1)):
        scene.addRect(QRectF(0, top, 10, height))
    extents = _extents(scene, top=0, scale=1)
    # Bounding boxes take the pen's half-width (0.5) on each side.
    assert extents.crossed(0, 4) == 1 and extents.crossed(0, 5) == 2
    assert extents.crossed(16, 19) == 0
    assert extents.crossed(0, 200) == 4
    assert extents.crossed(60, 99) == 0 and extents.crossed(60, 100) == 1
    extents = _extents(scene, top=-10, scale=2)  # image rows: (scene y + 10) × 2
    assert extents.crossed(0, 19) == 0 and extents.crossed(0, 20) == 1 and extents.crossed(0, 30) == 2


def test_a_band_reaching_a_dense_stretch_crosses_no_more_items_than_the_time_allows(qtbot, tmp_path, monkeypatch):
    # Every band "costs" 1 ms of the UI thread: by rows alone the bands grow fourfold each time and
    # one long band would take in the 2,000 boxes after crossing a few dozen.
    clock = iter(i * 0.0005 for i in range(100_000))
    monkeypatch.setattr(export.time, "thread_time", lambda: next(clock))
    scene = _scene_sparse_then_dense()
    rect = QRectF(0, 0, 40, 7000)
    job = PngExport(scene, str(tmp_path / "bands.png"), scale=1.0)
    job.image = QImage(40, 7000, QImage.Format.Format_ARGB32_Premultiplied)
    extents = _extents(scene, rect.top(), 1.0)
    ends: list[int] = []
    job.progress.connect(lambda done, _total: ends.append(done))
    for _ in job._bands(rect, 1.0, extents):
        pass
    assert ends[-1] == 7000
    bands = list(zip([0, *ends], ends))
    dense = [band for band in bands if band[0] <= 6005 < band[1]]
    assert len(dense) == 1
    for before, band in zip(bands, bands[1:]):
        crossed, allowed = extents.crossed(*band), 4 * max(1, extents.crossed(*before))
        assert crossed <= allowed or band[1] - band[0] <= MIN_BAND_PX, (before, band, crossed)
