"""The UI thread never stalls while a large design is edited and re-evaluated; the app starts,
evaluates and exits with 20,000 items on the canvas."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtGui import QImage

from conftest import gui_catalog, write_big_design
from designer.io.files import load_design
from designer.ui.app import configure_process

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="module")
def app_process_settings():
    """These windows run with the settings the app makes at start-up (GIL switch interval, GC)."""
    configure_process()


def largest_design(tmp_path):
    """The largest example by accelerators (file size as a proxy), or a 65,536-GPU rail fat tree."""
    from designer.io.examples import example_paths
    from designer.topologies import generate

    examples = sorted(example_paths(), key=lambda p: p.stat().st_size)
    if examples:
        return load_design(examples[-1], gui_catalog())
    return generate("rail-fat-tree", gui_catalog(), nodes=8192)


def test_ui_thread_never_stalls_while_editing_and_re_evaluating(make_window, tmp_path, qtbot):
    design = largest_design(tmp_path)
    window = make_window(design, debounce_ms=10)
    assert window.scheduler.wait_idle(60_000)
    # Opening the design (its first paint and overlay) is not what is measured: editing is.
    qtbot.wait(500)
    doc = window.document
    groups = [i.id for i in doc.design.items.values() if i.kind == "group"]
    movable = [i.id for i in doc.design.items.values() if i.parent is None] or list(doc.design.items)

    gaps = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def beat():
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setInterval(10)
    heartbeat.timeout.connect(beat)
    step = [0]

    def edit():
        step[0] += 1
        if step[0] % 2 or not groups:
            item = doc.design.items[movable[step[0] % len(movable)]]
            doc.move_items({item.id: (item.x + 20, item.y)})
            doc.set_item(item.id, name=f"edited {step[0]}")
        else:
            group = doc.design.items[groups[step[0] % len(groups)]]
            doc.set_item(group.id, count=group.count + (1 if step[0] % 4 else -1))

    editor = QTimer()
    editor.setInterval(60)
    editor.timeout.connect(edit)
    evaluations = window.evaluations
    submitted = []
    window.scheduler.started.connect(submitted.append)
    # For the failure message: how long the results panel takes to show one result.
    shown_ms = []
    show = window.results.show_result

    def timed_show(result):
        t0 = time.perf_counter()
        show(result)
        shown_ms.append(round((time.perf_counter() - t0) * 1000))

    window.results.show_result = timed_show
    heartbeat.start()
    editor.start()
    qtbot.wait(3000)
    editor.stop()
    assert window.scheduler.wait_idle(60_000)
    heartbeat.stop()
    assert step[0] >= 20
    assert len(submitted) >= 5, "edits were not re-evaluated"
    assert window.evaluations > evaluations  # the newest design's result arrived (older ones dropped)
    assert window.last_result.design.items == len(doc.design.items)
    assert max(gaps) < 100, (f"UI thread stalled {max(gaps)} ms (design: {len(doc.design.items)} items, "
                             f"{len(doc.design.links)} links); ResultsPanel.show_result took {shown_ms} ms")


def test_app_starts_evaluates_and_exits_with_20000_items(tmp_path):
    path = tmp_path / "big.cluster.json"
    items = write_big_design(path)
    assert items >= 20_000
    out = tmp_path / "big.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "designer", "gui", str(path), "--screenshot", str(out),
                           "--size", "1200x800"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 800)
    assert time.monotonic() - started < 240
    # Painted, not grabbed while the canvas was still restyling (which shows it black).
    samples = [image.pixelColor(x, y) for x in range(0, 1200, 8) for y in range(0, 800, 8)]
    black = sum(1 for c in samples if c.red() == c.green() == c.blue() == 0) / len(samples)
    assert black < 0.05, f"{black:.0%} of the screenshot is black"


def test_screenshot_exits_non_zero_when_evaluation_fails(tmp_path):
    """An engine failure is reported, not hidden behind a picture."""
    script = (
        "import sys; import designer.ui.evaluation as ev\n"
        "def boom(*a, **k): raise RuntimeError('engine exploded')\n"
        "ev.evaluate = boom\n"
        "from designer.ui.app import run_app\n"
        f"sys.exit(run_app({str(tmp_path / 'd.cluster.json')!r}, screenshot={str(tmp_path / 'x.png')!r}))\n"
    )
    from designer.io.files import save_design
    from designer.topologies import generate

    save_design(generate("server", gui_catalog(), platform="dgx-h100"), tmp_path / "d.cluster.json")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "engine exploded" in proc.stderr
    assert not (tmp_path / "x.png").exists()
