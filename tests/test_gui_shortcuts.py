"""Every keyboard shortcut of the app's windows, on the platform the tests run on (offscreen, and
xcb under xvfb-run: `make test-x11`; their standard keys differ, e.g. Redo is Ctrl+Y offscreen
and Ctrl+Shift+Z on X11).

A walk over every QAction (and QShortcut) checks that no key reaches two actions of one window
(Qt then calls the key ambiguous and does nothing) and no action lists a key twice; then the
standard shortcuts are pressed, as real key events to the canvas with focus, and each must change
the model or the view."""

from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from tests.helpers import two_servers_on_a_leaf, window_settled

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
EXAMPLE = Path(__file__).resolve().parent.parent / "resources" / "examples" / "aws-p4de.cluster.json"


def _actions(window: QWidget) -> list[QAction]:
    """Every action a key can reach in the window: owned by it, or added to it or a widget in it."""
    found = {id(a): a for a in window.findChildren(QAction)}
    for widget in (window, *window.findChildren(QWidget)):
        found.update({id(a): a for a in widget.actions()})
    return list(found.values())


def _keys(sequences) -> list[str]:
    return [s.toString(QKeySequence.SequenceFormat.PortableText) for s in sequences if not s.isEmpty()]


def _clashes(window: QWidget) -> list[str]:
    """Keys bound more than once in the window, and actions listing a key twice."""
    problems = []
    owners: dict[str, list[str]] = {}
    for action in _actions(window):
        keys = _keys(action.shortcuts())
        twice = [k for k, n in Counter(keys).items() if n > 1]
        if twice:
            problems.append(f"{action.objectName() or action.text()!r} lists {twice} twice")
        if action.isEnabled():
            for key in set(keys):
                owners.setdefault(key, []).append(action.objectName() or action.text())
    for shortcut in window.findChildren(QShortcut):
        if shortcut.isEnabled():
            for key in set(_keys(shortcut.keys())):
                owners.setdefault(key, []).append(f"QShortcut {shortcut.objectName()}")
    problems += [f"{key} is bound to {names}" for key, names in owners.items() if len(names) > 1]
    return problems


def _enable_every_action(window) -> None:
    """Enabled as a user makes them: an edit (Undo), an edit undone (Redo), a selection (Delete…)."""
    window.place_part("dgx-h100")
    window.place_part("dgx-h100")
    window.document.undo_stack.undo()
    window.editor.select_all()


def test_no_key_is_ambiguous_in_the_main_window(make_window, qtbot):
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)
    _enable_every_action(window)
    assert window.act_delete.isEnabled() and window.act_undo.isEnabled() and window.act_redo.isEnabled()
    keys = {k for a in _actions(window) for k in _keys(a.shortcuts())}
    assert {"Ctrl+Z", "Ctrl+Y", "Ctrl+Shift+Z", "Ctrl+S", "Ctrl+O", "Ctrl+N", "Del", "Ctrl+A", "Ctrl+C",
            "Ctrl+V"} <= keys, f"{QApplication.platformName()}: standard keys missing from {sorted(keys)}"
    assert _clashes(window) == [], QApplication.platformName()


def test_no_key_is_ambiguous_in_the_compare_and_sweep_windows(make_window, qtbot):
    window = make_window()
    for side in (window.compare_with(), window.open_sweep()):
        qtbot.addWidget(side)
        assert _clashes(side) == [], f"{type(side).__name__} on {QApplication.platformName()}"


def test_the_walk_finds_a_key_bound_twice(make_window):
    """The checks above can fail: a second action on Ctrl+S, and an action listing its key twice."""
    window = make_window()
    extra = QAction("Another save", window)
    extra.setObjectName("another_save")
    extra.setShortcut(QKeySequence("Ctrl+S"))
    window.addAction(extra)
    doubled = QAction("Doubled", window)
    doubled.setObjectName("doubled")
    doubled.setShortcuts([QKeySequence("Ctrl+Alt+K"), QKeySequence("Ctrl+Alt+K")])
    window.addAction(doubled)
    problems = _clashes(window)
    assert "Ctrl+S is bound to ['save', 'another_save']" in problems
    assert "'doubled' lists ['Ctrl+Alt+K'] twice" in problems


# --- the standard keys, pressed -------------------------------------------------------------------

@pytest.fixture(autouse=True)
def no_ambiguous_key(qtlog):
    """Qt says so when a key press reaches two shortcuts (and then triggers neither)."""
    yield
    ambiguous = [r.message for r in qtlog.records if "Ambiguous shortcut" in r.message]
    assert not ambiguous, ambiguous


@pytest.fixture
def canvas(make_window, qtbot):
    """A window on two servers and a leaf, the canvas focused."""
    design, _ = two_servers_on_a_leaf()
    window = make_window(design)
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)
    window.view.setFocus()
    qtbot.waitUntil(window.view.hasFocus)
    return window


def _press(qtbot, window, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    if not window.view.hasFocus():
        window.view.setFocus()
        qtbot.waitUntil(window.view.hasFocus)
    qtbot.keyClick(window.view, key, modifiers)


def test_undo_and_redo_both_ways(canvas, qtbot):
    window = canvas
    before = set(window.document.design.items)
    added = window.place_part("dgx-h100")
    assert added and set(added) <= set(window.document.design.items)
    _press(qtbot, window, Qt.Key.Key_Z, CTRL)
    assert set(window.document.design.items) == before, "Ctrl+Z did not undo"
    _press(qtbot, window, Qt.Key.Key_Y, CTRL)
    assert set(added) <= set(window.document.design.items), "Ctrl+Y did not redo"
    _press(qtbot, window, Qt.Key.Key_Z, CTRL)
    assert set(window.document.design.items) == before
    _press(qtbot, window, Qt.Key.Key_Z, CTRL | SHIFT)
    assert set(added) <= set(window.document.design.items), "Ctrl+Shift+Z did not redo"


def test_undo_menu_item_names_the_step_and_the_toolbar_keeps_its_text(canvas, qtbot):
    window = canvas
    button = window.toolbar.widgetForAction(window.act_undo)
    width = button.sizeHint().width()
    assert button.text() == "Undo"
    window.place_part("dgx-h100")
    step = window.document.undo_stack.undoText()
    assert step.startswith("Add")
    assert window.act_undo.text().replace("&", "") == f"Undo {step}"
    assert button.text() == "Undo" and button.sizeHint().width() == width
    _press(qtbot, window, Qt.Key.Key_Z, CTRL)
    assert window.act_redo.text().replace("&", "") == f"Redo {step}"
    assert window.act_undo.text().replace("&", "") == "Undo"
    assert window.toolbar.widgetForAction(window.act_redo).text() == "Redo"
    edit_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Edit")
    assert f"Redo {step}" in [a.text().replace("&", "") for a in edit_menu.actions()]


def test_save_open_and_new(canvas, qtbot, tmp_path, monkeypatch):
    window = canvas
    path = tmp_path / "mine.cluster.json"
    assert window.save_to(str(path))
    window.place_part("dgx-h100")
    assert window.document.is_modified()
    _press(qtbot, window, Qt.Key.Key_S, CTRL)
    assert not window.document.is_modified() and "dgx" in path.read_text()

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(EXAMPLE), "")))
    _press(qtbot, window, Qt.Key.Key_O, CTRL)
    qtbot.waitUntil(lambda: window.document.path == str(EXAMPLE) and not window.scene.building, timeout=30_000)
    assert "aws-p4de" in window.windowTitle()

    _press(qtbot, window, Qt.Key.Key_N, CTRL)
    assert window.document.path is None and not window.document.design.items


def test_select_all_delete_and_backspace(canvas, qtbot):
    window = canvas
    _press(qtbot, window, Qt.Key.Key_A, CTRL)
    assert set(window.scene.selected_ids()) >= {"leaf", "s0", "s1"}
    window.scene.select_ids(["leaf"])
    _press(qtbot, window, Qt.Key.Key_Delete)
    assert "leaf" not in window.document.design.items
    window.scene.select_ids(["s1"])
    _press(qtbot, window, Qt.Key.Key_Backspace)
    assert "s1" not in window.document.design.items


def test_copy_and_paste(canvas, qtbot):
    window = canvas
    servers = lambda: [i for i in window.document.design.items.values() if i.kind == "server"]  # noqa: E731
    assert len(servers()) == 2
    window.scene.select_ids(["s0"])
    _press(qtbot, window, Qt.Key.Key_C, CTRL)
    _press(qtbot, window, Qt.Key.Key_V, CTRL)
    qtbot.waitUntil(lambda: len(servers()) == 3, timeout=10_000)


def test_zoom_in_and_out(canvas, qtbot):
    window = canvas
    scale = window.view.transform().m11()
    _press(qtbot, window, Qt.Key.Key_Plus, CTRL)
    assert window.view.transform().m11() == pytest.approx(scale * 1.25)
    _press(qtbot, window, Qt.Key.Key_Equal, CTRL)  # Ctrl+= : the + key without Shift
    assert window.view.transform().m11() == pytest.approx(scale * 1.25 ** 2)
    _press(qtbot, window, Qt.Key.Key_Minus, CTRL)
    assert window.view.transform().m11() == pytest.approx(scale * 1.25 ** 2 * 0.8)
