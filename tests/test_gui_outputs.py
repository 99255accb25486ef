"""The app's own writes go through the one checked path: a FIFO, a device or a folder chosen in a
save dialog is refused with a message and stays as it was; a FIFO chosen in the sweep window's
Open is refused instead of hanging the window."""

from __future__ import annotations

import json
import os
import stat

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.canvas.export import ExportOptions
from designer.topologies import generate
from designer.ui.export_dialog import ExportOptionsDialog
from tests.helpers import window_settled


@pytest.fixture
def answers(monkeypatch):
    """The file dialogs answer `answers["path"]`; warnings are recorded."""
    seen: dict = {"warnings": []}
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (seen["path"], "")))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (seen["path"], "")))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text: seen["warnings"].append(text)))
    monkeypatch.setattr(ExportOptionsDialog, "ask", staticmethod(lambda *args: ExportOptions()))  # canvas exports
    return seen


def _specials(folder):
    """A FIFO and a folder under the names a user might pick for a CSV and for a design."""
    made = []
    for name in ("fifo.csv", "fifo.cluster.json"):
        os.mkfifo(folder / name)
        made.append(folder / name)
    for name in ("folder.csv", "folder.cluster.json"):
        (folder / name).mkdir()
        made.append(folder / name)
    return made


def test_exports_and_saves_to_a_special_file_are_refused_and_leave_it(make_window, qtbot, answers, tmp_path):
    window = make_window(generate("fat-tree", nodes=2))
    qtbot.waitUntil(lambda: window_settled(window) and window.last_result is not None, timeout=60_000)
    specials = _specials(tmp_path)
    kinds = {path: stat.S_IFMT(os.lstat(path).st_mode) for path in specials}
    for path in specials:
        answers["path"] = str(path)
        actions = (window.act_save_as,) if path.name.endswith(".json") else (window.act_export_summary,
                                                                            window.act_export_bom)
        for action in actions:
            answers["warnings"].clear()
            action.trigger()
            assert len(answers["warnings"]) == 1 and "not a regular file" in answers["warnings"][0], answers
    for path in specials:  # the canvas and plot pictures
        answers["path"] = str(path)
        for export in (lambda: window.export_canvas_vector("svg"), lambda: window.export_canvas_vector("pdf"),
                       lambda: window.export_plot_png("utilization")):
            answers["warnings"].clear()
            export()
            assert answers["warnings"] == [f"{path}: is {'a FIFO (named pipe)' if 'fifo' in path.name else 'a folder'}"
                                           ", not a regular file; only regular files are written"]
        answers["warnings"].clear()
        with qtbot.waitSignal(window.export_canvas_png().failed, timeout=60_000):
            pass
        assert len(answers["warnings"]) == 1 and "not a regular file" in answers["warnings"][0]
    assert {path: stat.S_IFMT(os.lstat(path).st_mode) for path in specials} == kinds
    assert window.document.path is None  # a refused save does not adopt the name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in specials)


def test_the_sweep_window_refuses_a_fifo_to_open_or_save(make_window, qtbot, answers, tmp_path):
    window = make_window(generate("fat-tree", nodes=2))
    window.act_sweep.trigger()
    sweep = window.side_windows[-1]
    qtbot.addWidget(sweep)
    text = json.dumps({"format": "cluster-designer-sweep", "version": 1, "template": "fat-tree"})
    sweep.editor.setPlainText(text)
    fifo = tmp_path / "s.sweep.json"
    os.mkfifo(fifo)
    answers["path"] = str(fifo)
    # Opening a FIFO would block for ever on a plain read (and this test with it).
    sweep.open_path(str(fifo))
    assert len(answers["warnings"]) == 1 and "not a regular file" in answers["warnings"][0]
    assert sweep.editor.toPlainText() == text
    sweep.save_dialog()
    assert len(answers["warnings"]) == 2 and "not a regular file" in answers["warnings"][1]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sweep.path != str(fifo)
    good = tmp_path / "good.sweep.json"
    answers["path"] = str(good)
    sweep.save_dialog()
    assert good.read_text() == text and sweep.path == str(good)


def test_the_sweep_windows_open_starts_in_the_shipped_sweeps(make_window, qtbot, monkeypatch):
    from designer.paths import sweeps_dir

    window = make_window(generate("fat-tree", nodes=2))
    window.act_sweep.trigger()
    sweep = window.side_windows[-1]
    qtbot.addWidget(sweep)
    offered: list[str] = []
    shipped = sorted(sweeps_dir().glob("*.sweep.json"))[0]

    def choose(_parent, _title, folder, _filter):
        offered.append(folder)
        return str(shipped), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(choose))
    sweep.open_dialog()
    assert offered == [str(sweeps_dir())] and sweep.path == str(shipped)
    assert json.loads(sweep.editor.toPlainText())["format"] == "cluster-designer-sweep"


def test_the_pareto_front_has_a_colour_no_series_has():
    from PySide6.QtGui import QColor

    from designer.canvas import colors

    def distance(a: str, b: str) -> float:
        ca, cb = QColor(a), QColor(b)
        return ((ca.red() - cb.red()) ** 2 + (ca.green() - cb.green()) ** 2 + (ca.blue() - cb.blue()) ** 2) ** 0.5

    # The selection's orange, which the front had, is within 60 of two series colours; the front's is not.
    assert min(distance(colors.SELECTION, c) for c in colors.SERIES) < 60
    assert min(distance(colors.PARETO, c) for c in colors.SERIES) > 90
