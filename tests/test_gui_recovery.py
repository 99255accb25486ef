"""Autosave, crash recovery and the error dialog, driven as a user meets them."""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.io.files import load_design
from designer.ui.autosave import RecoveryDialog
from designer.ui.errors import ErrorDialog, ExceptionHooks
from tests.helpers.autosave import autosaves, crashed_autosave, first_server


@pytest.fixture()
def autosaving_window(make_window, state):
    """A shown window that autosaves every 50 ms."""
    return lambda: make_window(autosave_interval_ms=50)


def test_unsaved_changes_are_autosaved_to_the_state_folder_until_saved(qtbot, autosaving_window, state,
                                                                       design_file):
    window = autosaving_window()
    assert window.open_path(design_file)
    qtbot.wait(200)
    assert autosaves(state) == []  # nothing unsaved, nothing written
    server = first_server(window)
    window.document.set_item(server.id, name="Edited")
    qtbot.waitUntil(lambda: len(autosaves(state)) == 1, timeout=10_000)
    [autosave] = autosaves(state)
    qtbot.waitUntil(lambda: "Edited" in autosave.read_text(), timeout=10_000)
    record = json.loads(autosave.read_text())
    assert record["original"] == str(design_file) and record["pid"] == os.getpid()
    assert record["design"]["name"] == window.document.design.name
    assert sorted(p.name for p in design_file.parent.iterdir()) == ["dgx.cluster.json"]  # nothing beside it
    # Saving discards the autosave (and keeps the replaced version as the backup).
    window.act_save.trigger()
    qtbot.waitUntil(lambda: not any(state.iterdir()), timeout=10_000)  # the autosave and its lock
    assert load_design(design_file).items[server.id].name == "Edited"
    assert sorted(p.name for p in design_file.parent.iterdir()) == ["dgx.cluster.json", "dgx.cluster.json~"]


def test_undoing_to_the_saved_state_or_closing_without_saving_discards_the_autosave(qtbot, autosaving_window, state,
                                                                                   design_file):
    window = autosaving_window()
    window.open_path(design_file)
    window.document.set_item(first_server(window).id, name="Edited")
    qtbot.waitUntil(lambda: len(autosaves(state)) == 1, timeout=10_000)
    window.act_undo.trigger()
    qtbot.waitUntil(lambda: autosaves(state) == [], timeout=10_000)
    window.act_redo.trigger()
    qtbot.waitUntil(lambda: len(autosaves(state)) == 1, timeout=10_000)
    window.close()  # the make_window fixture answers Discard to "Save the changes?"
    assert autosaves(state) == [] and not any(state.iterdir())


def test_the_backup_preference_turns_the_backup_off(qtbot, make_window, design_file):
    window = make_window()
    window.open_path(design_file)
    window.act_keep_backup.trigger()
    assert not window.act_keep_backup.isChecked()
    assert QSettings("cluster-designer", "Cluster Designer").value("saving/keepBackup", type=bool) is False
    window.document.set_item(first_server(window).id, name="Edited")
    window.act_save.trigger()
    assert sorted(p.name for p in design_file.parent.iterdir()) == ["dgx.cluster.json"]
    window.act_keep_backup.trigger()
    assert window.keep_backup


CRASHING_APP = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from designer.ui.app import run_app

path, server = sys.argv[1:]
app = QApplication(sys.argv[:1])

def edit_once_opened():
    for window in app.topLevelWidgets():
        document = getattr(window, "document", None)
        if document is not None and document.path == path and not window.scene.building:
            document.set_item(server, name="Edited before the crash")
            print("edited", flush=True)
            return
    QTimer.singleShot(20, edit_once_opened)

QTimer.singleShot(0, edit_once_opened)
sys.exit(run_app(path))
"""


def test_a_design_edited_in_an_app_killed_with_sigkill_is_offered_and_restored(qtbot, make_window, monkeypatch,
                                                                             state, design_file, tmp_path):
    config = tmp_path / "config"
    settings = QSettings(str(config / "cluster-designer" / "Cluster Designer.conf"), QSettings.Format.IniFormat)
    settings.setValue("autosave/intervalSeconds", 0.1)
    settings.sync()
    server = _first_server_of(design_file)
    app = subprocess.Popen([sys.executable, "-c", CRASHING_APP, str(design_file), server],
                           env={**os.environ, "XDG_CONFIG_HOME": str(config)}, stdout=subprocess.PIPE, text=True)
    try:
        assert app.stdout.readline() == "edited\n"
        qtbot.waitUntil(lambda: any("Edited before the crash" in p.read_text() for p in autosaves(state)),
                        timeout=60_000)
        window = make_window()
        offered = []
        monkeypatch.setattr(RecoveryDialog, "exec", lambda dialog: offered.append(dialog))
        # The app still runs: its autosave is not offered.
        assert window.offer_recovery() == [] and offered == []
    finally:
        app.send_signal(signal.SIGKILL)
        assert app.wait() == -signal.SIGKILL
        app.stdout.close()

    def choose(dialog):
        offered.append([[dialog.table.item(r, c).text() for c in range(3)] for r in range(dialog.table.rowCount())])
        dialog.restore_button.click()
        return dialog.result()

    monkeypatch.setattr(RecoveryDialog, "exec", choose)
    assert window.offer_recovery() == []  # restored into this (empty) window
    [[(name, of, when)]] = offered
    assert name == "dgx" and of == f"dgx.cluster.json in {design_file.parent}"
    assert when.startswith("today ") and when.endswith("less than a minute ago")
    document = window.document
    assert document.design.items[server].name == "Edited before the crash"
    assert document.is_modified() and document.path == str(design_file)
    assert window.windowTitle().startswith("dgx[*]") and window.isWindowModified()
    assert load_design(design_file).items[server].name != "Edited before the crash"  # the file is as it was
    # The copy stays (still held, now by this process) until the design is saved.
    assert len(autosaves(state)) == 1
    window.act_save.trigger()
    assert load_design(design_file).items[server].name == "Edited before the crash"
    qtbot.waitUntil(lambda: autosaves(state) == [], timeout=10_000)


def _first_server_of(path):
    return next(i.id for i in load_design(path).items.values() if i.kind == "server")


def test_discard_and_later_in_the_recovery_dialog(qtbot, make_window, monkeypatch, state, design_file):
    first = crashed_autosave(state, design_file, "first")
    second = crashed_autosave(state, design_file, "second")
    window = make_window()

    def later(dialog):
        assert sorted(dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())) == ["first", "second"]
        dialog.later_button.click()
        return dialog.result()

    monkeypatch.setattr(RecoveryDialog, "exec", later)
    assert window.offer_recovery() == []
    assert autosaves(state) == sorted([first, second]) and not window.document.is_modified()

    def discard_first_restore_second(dialog):
        dialog.table.clearSelection()
        dialog.table.selectRow(next(r for r in range(2) if dialog.table.item(r, 0).text() == "first"))
        dialog.discard_button.click()
        assert [dialog.table.item(0, 0).text()] == ["second"] and dialog.table.rowCount() == 1
        dialog.restore_button.click()
        return dialog.result()

    monkeypatch.setattr(RecoveryDialog, "exec", discard_first_restore_second)
    window.open_path(design_file)  # this window holds a file now: the restored design opens in a new one
    [other] = window.offer_recovery()
    assert autosaves(state) == [second]
    assert other.document.design.name == "second" and other.document.is_modified()
    assert other.document.path == str(design_file)
    assert window.document.path == str(design_file) and not window.document.is_modified()
    other.close()  # answered Discard (the make_window fixture): the autosave goes
    assert autosaves(state) == []


class _Emitter(QObject):
    fired = Signal()


@pytest.fixture()
def hooks(app_process):
    installed = ExceptionHooks()
    installed.install()
    yield installed
    installed.uninstall()


class _ShownErrors(list):
    """What the error dialogs shown said. Each one opens its details, clicks Save a Copy… (when
    `copy_to` is set, the path the file dialog answers) and then Continue."""

    copy_to = None


@pytest.fixture()
def shown_errors(monkeypatch):
    shown = _ShownErrors()

    def exec_(dialog):
        dialog.details_button.click()
        if shown.copy_to is not None:
            monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(shown.copy_to), "")))
            dialog.save_copy_button.click()
        shown.append({"message": dialog.message.text(), "details": dialog.details.toPlainText(),
                      "details shown": not dialog.details.isHidden(), "saved": dialog.saved.text()})
        dialog.continue_button.click()
        return dialog.result()

    monkeypatch.setattr(ErrorDialog, "exec", exec_)
    return shown


@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_slot_shows_the_error_and_save_a_copy_keeps_the_design(qtbot, make_window, hooks,
                                                                                 shown_errors, design_file, tmp_path):
    window = make_window()
    window.open_path(design_file)
    window.document.set_item(first_server(window).id, name="Unsaved edit")
    emitter = _Emitter()

    def failing_slot():
        raise ZeroDivisionError("a bug in a slot")

    emitter.fired.connect(failing_slot)
    copy = tmp_path / "rescued.cluster.json"
    shown_errors.copy_to = copy
    emitter.fired.emit()
    qtbot.waitUntil(lambda: len(shown_errors) == 1, timeout=10_000)
    dialog = shown_errors[0]
    assert "ZeroDivisionError: a bug in a slot" in dialog["message"]
    assert "in failing_slot" in dialog["details"] and dialog["details shown"]
    assert dialog["saved"] == f"Saved a copy to {copy}"
    assert load_design(copy).items[first_server(window).id].name == "Unsaved edit"
    assert load_design(design_file).items[first_server(window).id].name != "Unsaved edit"
    # The window still works: an edit goes through and is evaluated.
    with qtbot.waitSignal(window.evaluated, timeout=30_000):
        window.act_select_all.trigger()
        window.act_delete.trigger()
    assert window.document.design.items == {}
    window.act_undo.trigger()
    assert window.document.design.items


@pytest.mark.qt_no_exception_capture
def test_save_a_copy_never_writes_over_the_open_file(qtbot, make_window, hooks, shown_errors, design_file):
    window = make_window()
    window.open_path(design_file)
    before = design_file.read_bytes()
    window.document.set_item(first_server(window).id, name="Unsaved edit")
    shown_errors.copy_to = design_file
    threading.Thread(target=lambda: 1 / 0, name="a worker").start()
    qtbot.waitUntil(lambda: len(shown_errors) == 1, timeout=10_000)
    assert "ZeroDivisionError" in shown_errors[0]["details"]
    assert shown_errors[0]["saved"].startswith("That is the open file")
    assert design_file.read_bytes() == before


@pytest.mark.qt_no_exception_capture
def test_an_engine_bug_shows_its_traceback(qtbot, make_window, monkeypatch, shown_errors, design_file):
    import designer.ui.evaluation as evaluation

    def broken_engine(*args, **kwargs):
        raise KeyError("a bug in the engine")

    window = make_window()
    monkeypatch.setattr(evaluation, "evaluate", broken_engine)
    with qtbot.waitSignal(window.evaluationFailed, timeout=30_000):
        window.open_path(design_file)
    qtbot.waitUntil(lambda: len(shown_errors) == 1, timeout=10_000)
    assert "KeyError: 'a bug in the engine'" in shown_errors[0]["message"]
    assert "in broken_engine" in shown_errors[0]["details"]


def test_a_name_utf8_cannot_store_is_shown_and_refused_on_save(qtbot, make_window, monkeypatch, design_file, tmp_path):
    document = json.loads(design_file.read_text())
    document["name"] = "DGX \udcff"
    document["items"][2]["name"] = "Server \ud800"
    odd = tmp_path / "odd.cluster.json"
    odd.write_text(json.dumps(document))
    warnings = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text: warnings.append(text)))
    window = make_window()
    with qtbot.waitSignal(window.evaluated, timeout=30_000):
        window.open_path(odd)
    qtbot.waitUntil(lambda: window.results.isVisible(), timeout=10_000)
    window.scene.select_ids([document["items"][2]["id"]])
    window.document.set_item(document["items"][0]["id"], name="edited")
    assert window.save_to(str(odd)) is False
    [message] = warnings
    assert message.startswith(f"{odd}: $.items[2].name: cannot be saved: the text holds U+D800")
