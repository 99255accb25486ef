"""Packaging: desktop integration files, icons, the PyInstaller bundle and the wheel.

The quick checks (files parse and agree with pyproject.toml, icons render) always run. The slow
ones build the PyInstaller bundle and a wheel + sdist, minutes each; they run only with
PACKAGE_TESTS=1:

    PACKAGE_TESTS=1 QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -m slow tests/test_packaging.py
"""

from __future__ import annotations

import configparser
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import tomllib
import venv
import xml.etree.ElementTree as ET
import zipfile
from fnmatch import fnmatch
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
ICONS = ROOT / "resources" / "icons"
APP_ID = "io.github.clusterdesigner.ClusterDesigner"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
MIME = PACKAGING / "cluster-designer-mime.xml"
MIME_TYPE = "application/x-cluster-design"
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"
SVG_NS = "{http://www.w3.org/2000/svg}"
PALETTE_ICONS = ("rack", "server", "accelerator", "cpu", "nic", "switch", "group", "link")
APP_ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME = PROJECT["name"]
VERSION = PROJECT["version"]

# The slow tests live in the Test* classes below, each carrying this as its `pytestmark` (the
# class-level form of a module pytestmark, so that the quick checks in this module always run).
SLOW = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("PACKAGE_TESTS") != "1", reason="packaging build; set PACKAGE_TESTS=1"),
]


# ---------------------------------------------------------------- desktop integration files


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive in desktop files
    parser.read_string(DESKTOP.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def _semicolon_list(value: str) -> list[str]:
    assert value.endswith(";"), f"desktop-file lists end with ';': {value!r}"
    return [v for v in value.split(";") if v]


def test_desktop_file_parses_and_launches_the_console_script():
    entry = _desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Cluster Designer"
    assert entry["Exec"] == f"{NAME} %f"
    assert NAME in PROJECT["scripts"], "the desktop file runs a script pyproject.toml does not install"
    assert entry["Icon"] == "cluster-designer"
    assert (ICONS / f"{entry['Icon']}.svg").is_file()
    assert _semicolon_list(entry["MimeType"]) == [MIME_TYPE]
    assert {"Engineering", "Science"} <= set(_semicolon_list(entry["Categories"]))


def test_mime_xml_registers_cluster_json_as_json():
    root = ET.parse(MIME).getroot()
    assert root.tag == f"{MIME_NS}mime-info"
    types = root.findall(f"{MIME_NS}mime-type")
    assert [t.get("type") for t in types] == [MIME_TYPE]
    (mime,) = types
    globs = [g.get("pattern") for g in mime.findall(f"{MIME_NS}glob")]
    assert globs == ["*.cluster.json"]
    assert [s.get("type") for s in mime.findall(f"{MIME_NS}sub-class-of")] == ["application/json"]
    assert mime.findtext(f"{MIME_NS}comment")
    for example in (ROOT / "resources" / "examples").glob("*.json"):
        assert any(fnmatch(example.name, g) for g in globs), f"{example.name} is not a *.cluster.json"


def test_metainfo_agrees_with_desktop_file_mime_and_pyproject():
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("name") == _desktop_entry()["Name"]
    assert root.findtext("summary")
    assert root.find("description") is not None and root.find("description/p") is not None
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == PROJECT["license"]
    launchable = root.find("launchable")
    assert launchable.get("type") == "desktop-id" and launchable.text == DESKTOP.name
    assert [b.text for b in root.findall("provides/binary")] == [NAME]
    assert [m.text for m in root.findall("provides/mediatype")] == [MIME_TYPE]
    releases = root.findall("releases/release")
    assert releases, "metainfo lists no release"
    assert releases[0].get("version") == VERSION, "newest <release> must be pyproject's version"
    assert releases[0].get("date")


def test_pyinstaller_entry_point_matches_console_script():
    import ast

    tree = ast.parse((PACKAGING / "entry.py").read_text())
    declared = next(
        n.value.value for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "ENTRY_POINT" for t in n.targets)
    )
    assert declared == PROJECT["scripts"][NAME]
    ast.parse((PACKAGING / "cluster-designer.spec").read_text())  # the spec is Python


# ---------------------------------------------------------------- icons


def _render(svg: Path, size: int):
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    assert renderer.isValid(), f"{svg.name}: Qt cannot parse it"
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def _pixel_stats(image) -> tuple[float, int]:
    """(fraction of pixels that are not fully transparent, number of distinct colours)."""
    import numpy as np
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    pixels = rows[:, : image.width() * 4].reshape(-1, 4)
    return float((pixels[:, 3] > 0).mean()), len(np.unique(pixels.view(np.uint32)))


@pytest.mark.parametrize("name", [*PALETTE_ICONS, "cluster-designer", "cluster-designer-small"])
def test_svg_icon_parses_and_renders_at_16_and_32(qapp, name):
    svg = ICONS / f"{name}.svg"
    root = ET.parse(svg).getroot()
    assert root.tag == f"{SVG_NS}svg"
    assert root.get("viewBox"), f"{svg.name} needs a viewBox to scale"
    for size in (16, 32):
        coverage, colours = _pixel_stats(_render(svg, size))
        assert coverage > 0.25, f"{svg.name} at {size}px is mostly empty ({coverage:.0%} covered)"
        assert colours >= 3, f"{svg.name} at {size}px is a flat blob ({colours} colours)"


def test_app_icon_pngs_exist_and_match_the_svg(qapp):
    sys.path.insert(0, str(PACKAGING))
    try:
        import render_icons
    finally:
        sys.path.remove(str(PACKAGING))
    assert render_icons.SIZES == APP_ICON_SIZES
    assert render_icons.stale_app_icons(ICONS) == [], "run .venv/bin/python packaging/render_icons.py"


# ---------------------------------------------------------------- slow: PyInstaller bundle


def _run(cmd, *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
        f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def bundle() -> Path:
    env = {**os.environ, "BUILD_PYTHON": sys.executable}
    _run(["bash", "packaging/build.sh"], cwd=ROOT, env=env, timeout=1800)
    exe = ROOT / "dist" / NAME / NAME
    assert exe.is_file() and os.access(exe, os.X_OK)
    return exe


def _offscreen_env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


class TestPyInstallerBundle:
    pytestmark = SLOW

    def test_bundle_reports_the_pyproject_version(self, bundle, tmp_path):
        proc = _run([bundle, "--version"], cwd=tmp_path, env=_offscreen_env(), timeout=120)
        assert VERSION in proc.stdout + proc.stderr

    def test_bundle_evaluates_a_bundled_example(self, bundle, tmp_path):
        examples = sorted(bundle.parent.glob("_internal/designer/resources/examples/*.cluster.json"))
        assert examples, "no example designs inside the bundle"
        proc = _run([bundle, "evaluate", examples[0]], cwd=tmp_path, env=_offscreen_env(), timeout=300)
        assert proc.stdout.strip()

    def test_bundle_gui_takes_a_screenshot(self, bundle, tmp_path, qapp):
        from PySide6.QtGui import QImage

        example = sorted(bundle.parent.glob("_internal/designer/resources/examples/*.cluster.json"))[0]
        shot = tmp_path / "out.png"
        _run([bundle, "gui", example, "--screenshot", shot], cwd=tmp_path, env=_offscreen_env(), timeout=300)
        assert shot.is_file() and shot.stat().st_size > 2000
        image = QImage(str(shot))
        assert image.width() >= 200 and image.height() >= 150
        coverage, colours = _pixel_stats(image)
        assert coverage > 0.9 and colours >= 16, f"screenshot looks blank ({colours} colours)"


# ---------------------------------------------------------------- slow: wheel and sdist


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    try:  # the distribution, not find_spec: a PyInstaller build/ folder in the cwd looks like a package
        importlib.metadata.version("build")
    except importlib.metadata.PackageNotFoundError:
        _run([sys.executable, "-m", "pip", "install", "--quiet", "build"], timeout=600)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=out, timeout=900)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


class TestWheelAndSdist:
    pytestmark = SLOW

    def test_wheel_and_sdist_carry_the_resources(self, dists):
        wheel, sdist = dists
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
        assert [n for n in names if fnmatch(n, "designer/resources/catalog/*.json")]
        assert [n for n in names if fnmatch(n, "designer/resources/examples/*.cluster.json")]
        assert "designer/resources/icons/cluster-designer.svg" in names
        with tarfile.open(sdist) as tf:
            members = tf.getnames()
        assert [m for m in members if fnmatch(m, "*/resources/catalog/*.json")]
        assert [m for m in members if m.endswith("/pyproject.toml")]

    def test_wheel_installs_into_a_fresh_venv_and_runs(self, dists, tmp_path):
        wheel, _ = dists
        env_dir = tmp_path / "venv"
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
        python = env_dir / "bin" / "python"
        _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel], timeout=1200)
        env = {k: v for k, v in _offscreen_env().items() if k != "PYTHONPATH"}
        proc = _run([env_dir / "bin" / NAME, "examples"], cwd=tmp_path, env=env, timeout=300)
        assert proc.stdout.strip()
        where = _run([python, "-c", "from designer.paths import resources_dir; print(resources_dir())"],
                     cwd=tmp_path, env=env, timeout=120)
        assert Path(where.stdout.strip()).is_relative_to(env_dir), "resources not taken from the wheel"
