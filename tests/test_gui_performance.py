"""A large design is edited and re-evaluated, the newest result winning; the app starts, evaluates
and exits with 20,000 items on the canvas. (How long the UI thread is held meanwhile is measured by
`benchmarks/bench_gui.py`.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from designer.io.files import load_design
from designer.io.examples import example_paths
from designer.model.catalog import default_catalog
from tests.helpers import write_big_design

ROOT = Path(__file__).resolve().parent.parent


def test_edits_to_the_largest_example_are_re_evaluated_and_the_newest_result_wins(make_window, qtbot):
    largest = max(example_paths(), key=lambda p: p.stat().st_size)
    window = make_window(load_design(largest, default_catalog()))
    assert window.scheduler.wait_idle(60_000)
    doc = window.document
    groups = [i.id for i in doc.design.items.values() if i.kind == "group"]
    movable = [i.id for i in doc.design.items.values() if i.parent is None]
    assert movable
    started = []
    window.scheduler.started.connect(started.append)
    finished = []
    window.scheduler.finished.connect(lambda generation, result: finished.append(generation))
    evaluations = window.evaluations
    for step in range(1, 21):
        if step % 2 or not groups:
            item = doc.design.items[movable[step % len(movable)]]
            doc.move_items({item.id: (item.x + 20, item.y)})
            doc.set_item(item.id, name=f"edited {step}")
        else:
            group = doc.design.items[groups[step % len(groups)]]
            doc.set_item(group.id, count=group.count + (1 if step % 4 else -1))
        if step % 5 == 0:
            # Let this edit reach the worker, so the next ones supersede an evaluation under way.
            with qtbot.waitSignal(window.scheduler.started, timeout=60_000):
                pass
    assert window.scheduler.wait_idle(120_000)
    assert len(started) >= 4, "edits were not re-evaluated"
    assert window.evaluations > evaluations
    # Only the newest generation is shown: stale ones were dropped, not emitted late.
    assert finished and finished[-1] == window.scheduler.generation == started[-1]
    assert finished == sorted(set(finished))
    assert window.last_result.design.items == len(doc.design.items)
    assert window.results.result() is window.last_result


def test_app_starts_evaluates_and_exits_with_20000_items(tmp_path):
    path = tmp_path / "big.cluster.json"
    items = write_big_design(path)
    assert items >= 20_000
    out = tmp_path / "big.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-m", "designer", "gui", str(path), "--screenshot", str(out),
                           "--size", "1200x800"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 800)
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

    save_design(generate("server", default_catalog(), platform="dgx-h100"), tmp_path / "d.cluster.json")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "engine exploded" in proc.stderr
    assert not (tmp_path / "x.png").exists()
