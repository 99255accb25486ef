"""Recovery against bad autosaves, and a restored design that never overwrites an unrelated file.

The first half is Qt-free: `find_orphans` beside every kind of bad autosave offers the good one,
reports each bad one with its reason and leaves it on disk as it was, and never hangs (it runs in
a thread that must finish; a FIFO read without O_NONBLOCK would block it for ever). The second
half drives the window as a user does: restore, then Save.
"""

import hashlib
import json
import os
import stat
import threading
import uuid

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from designer.io.autosave import (MAX_AUTOSAVE_BYTES, SUFFIX, AutosaveSlot, Fingerprint, FoundAutosaves,
                                  find_orphans)
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.model.design import Design, Item
from designer.topologies import generate
from designer.ui.autosave import RecoveryDialog
from tests.helpers.autosave import autosaves, crashed_autosave, first_server

FINISH_S = 30  # far above what a scan of a few small files takes; only a hang reaches it


def _find(folder) -> FoundAutosaves:
    """find_orphans on a thread that must finish (a hang fails the test instead of stalling it)."""
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(found=find_orphans(folder)), daemon=True)
    worker.start()
    worker.join(timeout=FINISH_S)
    assert not worker.is_alive(), f"find_orphans({folder}) did not finish within {FINISH_S} s"
    found = outcome["found"]
    for orphan in found.orphans:
        orphan.slot.release()  # as Later does: the next scan may take it again
    return found


def _good_autosave(folder, name="Good") -> AutosaveSlot:
    """An autosave as a crashed run leaves it: written, its lock free."""
    design = Design(name=name)
    design.add_item(Item(id="s1", kind="server", part="dgx-h100", name="Server 1"))
    slot = AutosaveSlot(folder)
    slot.write(design, None, name)
    slot.release()
    return slot


def _record(folder, **changes) -> dict:
    """The record of a good autosave, with `changes` (None deletes the field)."""
    slot = _good_autosave(folder / "model")
    record = json.loads(slot.file.read_text())
    for key, value in changes.items():
        if value is None:
            record.pop(key)
        else:
            record[key] = value
    return record


def _text(content):
    return lambda path, tmp_path: path.write_text(content)


def _record_with(reason_fragment=None, **changes):
    return lambda path, tmp_path: path.write_text(json.dumps(_record(tmp_path, **changes)))


BAD_AUTOSAVES = {
    # name: (make it at `path`, a fragment of the reason reported)
    "a JSON list": (_text("[]"), "expected an object, got an empty list"),
    "a JSON string": (_text('"an autosave"'), "expected an object, got \"an autosave\""),
    "a JSON number": (_text("42"), "expected an object, got 42"),
    "nested 100,000 lists deep": (_text("[" * 100_000), "nested too deeply"),
    "not JSON": (_text("{\"format\": "), "not valid JSON"),
    "not UTF-8": (lambda path, tmp_path: path.write_bytes(b'{"name": "\xff\xfe\xfa"}'), "is not UTF-8 text"),
    "another format": (_record_with(format="cluster-designer"), "$.format"),
    "a newer version": (_record_with(version=2), "written by a newer Cluster Designer"),
    "dated at the calendar's end": (_record_with(saved_at="9999-12-31T23:59:59+14:00"), "$.saved_at"),
    "dated at the calendar's start": (_record_with(saved_at="0001-01-01T00:00:00-12:00"), "$.saved_at"),
    "dated without an offset": (_record_with(saved_at="2025-03-01T14:03:00"), "$.saved_at"),
    "dated on the 13th month": (_record_with(saved_at="2025-13-01T14:03:00+00:00"), "is not a time"),
    "a pid as text": (_record_with(pid="4242"), "$.pid"),
    "a pid of true": (_record_with(pid=True), "$.pid"),
    "a pid of 20 digits": (_record_with(pid=10 ** 19), "$.pid"),
    "a name as a list": (_record_with(name=["Good"]), "$.name"),
    "an original as a number": (_record_with(original=7), "$.original"),
    "a fingerprint as text": (_record_with(original_file="sha256:00"), "$.original_file"),
    "a fingerprint of a short hash": (_record_with(original_file={"size": 1, "mtime_ns": "1", "sha256": "00"}),
                                      "$.original_file.sha256"),
    "no pid": (_record_with(pid=None), "missing field 'pid'"),
    "an unknown field": (_record_with(command="rm -rf ~"), "unknown field \"command\""),
    "a design as a list": (_record_with(design=[]), "$.design"),
    "a design with an unknown part": (
        _record_with(design={"format": "cluster-designer", "version": 1,
                             "items": [{"id": "s1", "kind": "server", "part": "no-such-part"}]}),
        "$.design.items[0].part: unknown part 'no-such-part'"),
}


def _bad_beside_a_good_one(tmp_path, make) -> tuple:
    """A good autosave and, beside it, a bad one `make(path)` writes; then the folder read (a FIFO
    opened for reading without O_NONBLOCK would block in `_find`): the good one must be offered.
    (folder, the bad file, what was found)."""
    folder = tmp_path / "autosave"
    good = _good_autosave(folder)
    bad = folder / f"bad{SUFFIX}"
    make(bad)
    found = _find(folder)
    assert [o.slot.key for o in found.orphans] == [good.key]
    return folder, bad, found


@pytest.mark.parametrize("kind", BAD_AUTOSAVES)
def test_a_bad_autosave_is_reported_and_kept_while_a_good_one_beside_it_is_offered(tmp_path, kind):
    make, reason = BAD_AUTOSAVES[kind]
    written: list[bytes] = []  # the bad file as made, before anything reads the folder
    folder, bad, found = _bad_beside_a_good_one(
        tmp_path, lambda path: (make(path, tmp_path), written.append(path.read_bytes())))
    before = written[0]
    assert found.orphans[0].design().items["s1"].name == "Server 1"
    [unreadable] = found.unreadable
    assert unreadable.file == bad and reason in unreadable.reason
    assert str(unreadable).startswith(f"Autosave {bad} could not be read: ")
    assert "\n" not in str(unreadable)
    assert bad.read_bytes() == before
    # Reported again at the next start: nothing was removed or taken for good.
    assert [u.file for u in _find(folder).unreadable] == [bad]


def _fifo(path):
    os.mkfifo(path)
    return lambda: stat.S_ISFIFO(os.lstat(path).st_mode)


def _link_to_dev_zero(path):
    path.symlink_to("/dev/zero")
    return lambda: os.readlink(path) == "/dev/zero"


def _dangling_link(path):
    path.symlink_to(path.parent / "gone.json")
    return lambda: os.path.islink(path)


def _huge(path):
    with open(path, "wb") as handle:  # sparse: nothing above the limit is ever written or read
        handle.truncate(MAX_AUTOSAVE_BYTES + 1)
    return lambda: path.stat().st_size == MAX_AUTOSAVE_BYTES + 1


def _folder(path):
    (path / "inside").mkdir(parents=True)
    return lambda: (path / "inside").is_dir()


NOT_FILES = {
    # name: (make it at `path`, returning a check that it is still there as it was; the reason)
    "a FIFO": (_fifo, "is not a regular file"),
    "a symlink to /dev/zero": (_link_to_dev_zero, "is not a regular file"),
    "a file above the size limit": (_huge, "above the limit of 80 MiB"),
    "a dangling symlink": (_dangling_link, "cannot be read (No such file or directory)"),
    "a folder": (_folder, "is a folder"),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero are POSIX")
@pytest.mark.parametrize("kind", NOT_FILES)
def test_what_is_not_a_small_regular_file_is_never_read(tmp_path, kind):
    make, reason = NOT_FILES[kind]
    made: list = []
    _folder, bad, found = _bad_beside_a_good_one(tmp_path, lambda path: made.append(make(path)))
    still_there = made[0]
    [unreadable] = found.unreadable
    assert unreadable.file == bad and reason in unreadable.reason
    assert still_there()


def test_every_kind_of_bad_autosave_at_once_leaves_the_good_ones_offered_oldest_first(tmp_path):
    folder = tmp_path / "autosave"
    first, second = _good_autosave(folder, "First"), _good_autosave(folder, "Second")
    for index, (make, _reason) in enumerate(BAD_AUTOSAVES.values()):
        make(folder / f"bad-{index}{SUFFIX}", tmp_path)
    if hasattr(os, "mkfifo"):
        for index, (make, _reason) in enumerate(NOT_FILES.values()):
            make(folder / f"not-a-file-{index}{SUFFIX}")
    found = _find(folder)
    assert {o.slot.key for o in found.orphans} == {first.key, second.key}
    assert [o.record.saved_at for o in found.orphans] == sorted(o.record.saved_at for o in found.orphans)
    assert len(found.unreadable) == len(BAD_AUTOSAVES) + (len(NOT_FILES) if hasattr(os, "mkfifo") else 0)


def test_an_autosave_of_an_older_release_without_a_fingerprint_is_offered_but_not_trusted(tmp_path):
    folder = tmp_path / "autosave"
    original = tmp_path / "dgx.cluster.json"
    save_design(generate("server", default_catalog(), platform="dgx-h100"), original)
    folder.mkdir()
    (folder / f"old{SUFFIX}").write_text(json.dumps(_record(tmp_path, original=str(original), original_file=None)))
    [orphan] = _find(folder).orphans
    assert orphan.record.original == str(original) and orphan.record.original_file is None
    assert not orphan.original_unchanged()


def test_the_fingerprint_matches_only_the_very_file_it_was_taken_of(tmp_path):
    folder = tmp_path / "autosave"
    original = tmp_path / "dgx.cluster.json"
    save_design(generate("server", default_catalog(), platform="dgx-h100"), original)
    fingerprint = Fingerprint.of(original)
    assert fingerprint.size == original.stat().st_size
    assert fingerprint.sha256 == hashlib.sha256(original.read_bytes()).hexdigest()
    slot = AutosaveSlot(folder)
    slot.write(load_design(original), str(original), "dgx", fingerprint)
    slot.release()
    [orphan] = _find(folder).orphans
    assert orphan.record.original_file == fingerprint and orphan.original_unchanged()
    os.utime(original, ns=(1, 1))  # touched: the same bytes, so nothing would be lost
    assert orphan.original_unchanged()
    original.write_bytes(original.read_bytes().replace(b'"name"', b'"name" ', 1))  # edited elsewhere
    assert not orphan.original_unchanged()


def test_a_fingerprint_never_reads_a_fifo_or_a_device(tmp_path):
    fifo = tmp_path / "pipe.cluster.json"
    os.mkfifo(fifo)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(fifo=Fingerprint.of(fifo),
                                                            zero=Fingerprint.of("/dev/zero")), daemon=True)
    worker.start()
    worker.join(timeout=FINISH_S)
    assert not worker.is_alive(), "Fingerprint.of did not finish"
    assert outcome == {"fifo": None, "zero": None}


# --- in the window -----------------------------------------------------------------------------------------

CTRL = Qt.KeyboardModifier.ControlModifier


class _SaveDialogs(list):
    """The paths the Save As dialog was opened with; it answers `answer` ("" cancels)."""

    answer = ""


@pytest.fixture()
def save_dialogs(monkeypatch):
    asked = _SaveDialogs()

    def get_save_file_name(parent, caption, suggested, *args, **kwargs):
        asked.append(suggested)
        return asked.answer, ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(get_save_file_name))
    return asked


def _restore_all(monkeypatch, window) -> list:
    """Offer recovery in `window` and restore everything offered; returns the dialog's texts."""
    shown = []

    def restore(dialog):
        shown.append({"rows": [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())],
                      "unreadable": dialog.unreadable.text() if not dialog.unreadable.isHidden() else ""})
        dialog.restore_button.click()
        return dialog.result()

    monkeypatch.setattr(RecoveryDialog, "exec", restore)
    assert window.offer_recovery() == []  # restored into this (empty) window
    return shown


def _as_left_by_a_crash(autosave, **changes):
    """A copy of a live window's autosave under a key of its own, its lock free: what that
    window's crash would leave, with `changes` to its record (None deletes a field)."""
    record = json.loads(autosave.read_text())
    for key, value in changes.items():
        if value is None:
            record.pop(key)
        else:
            record[key] = value
    copy = autosave.parent / f"{uuid.uuid4().hex}{SUFFIX}"
    copy.write_text(json.dumps(record))
    return copy


def _autosave_of_an_edit(qtbot, window, design_file, state):
    """Open `design_file` in an autosaving window, edit it and wait for its autosave."""
    assert window.open_path(design_file)
    window.document.set_item(first_server(window).id, name="Edited")
    qtbot.waitUntil(lambda: any("Edited" in p.read_text() for p in autosaves(state)), timeout=10_000)
    [autosave] = autosaves(state)
    return autosave


@pytest.mark.parametrize("case", ["an unrelated file", "the original changed since", "no fingerprint recorded"])
def test_save_after_restoring_asks_where_unless_the_original_is_the_file_it_was_made_from(
        qtbot, make_window, monkeypatch, state, design_file, save_dialogs, tmp_path, case):
    writer = make_window(autosave_interval_ms=50)
    autosave = _autosave_of_an_edit(qtbot, writer, design_file, state)
    unrelated = design_file.parent / "notes.cluster.json"
    unrelated.write_bytes(b"my notes, not a design\n")
    if case == "an unrelated file":  # the record was edited to name it (its fingerprint is the design file's)
        target = unrelated
        _as_left_by_a_crash(autosave, original=str(unrelated))
    elif case == "the original changed since":
        target = design_file
        _as_left_by_a_crash(autosave)
        save_design(generate("server", default_catalog(), platform="hgx-h200"), design_file)
    else:  # an older release's autosave
        target = design_file
        _as_left_by_a_crash(autosave, original_file=None)
    writer.close()  # its own autosave goes; the copy stays, as a crash leaves it
    target_bytes = target.read_bytes()

    window = make_window()
    [offered] = _restore_all(monkeypatch, window)
    assert offered["rows"] == ["dgx"] and offered["unreadable"] == ""
    assert window.document.path == str(target) and window.document.is_modified()
    assert first_server(window).name == "Edited"
    assert "so Save asks where" in window.statusBar().currentMessage()
    # Save (Ctrl+S) asks, suggesting the recorded path; cancelled, nothing is written.
    QTest.keyClick(window.view, Qt.Key.Key_S, CTRL)
    assert save_dialogs == [str(target)]
    assert target.read_bytes() == target_bytes and window.document.is_modified()
    assert len(autosaves(state)) == 1
    # Asked again, a new file is chosen: the design goes there and the recorded file stays as it was.
    chosen = tmp_path / "projects" / "recovered.cluster.json"
    save_dialogs.answer = str(chosen)
    window.act_save.trigger()
    assert save_dialogs == [str(target), str(target)]
    assert target.read_bytes() == target_bytes
    assert load_design(chosen).items[first_server(window).id].name == "Edited"
    assert window.document.path == str(chosen) and not window.document.is_modified()
    qtbot.waitUntil(lambda: autosaves(state) == [], timeout=10_000)
    # The chosen file is the document's own now: Save writes there without asking.
    window.document.set_item(first_server(window).id, name="Edited again")
    QTest.keyClick(window.view, Qt.Key.Key_S, CTRL)
    assert len(save_dialogs) == 2
    assert load_design(chosen).items[first_server(window).id].name == "Edited again"


def test_save_after_restoring_writes_straight_to_the_unchanged_original(
        qtbot, make_window, monkeypatch, state, design_file, save_dialogs):
    writer = make_window(autosave_interval_ms=50)
    autosave = _autosave_of_an_edit(qtbot, writer, design_file, state)
    # The app recorded the file as it opened it.
    recorded = json.loads(autosave.read_text())["original_file"]
    assert recorded["size"] == design_file.stat().st_size
    assert recorded["sha256"] == hashlib.sha256(design_file.read_bytes()).hexdigest()
    _as_left_by_a_crash(autosave)
    writer.close()

    window = make_window()
    _restore_all(monkeypatch, window)
    assert window.document.path == str(design_file) and window.document.is_modified()
    QTest.keyClick(window.view, Qt.Key.Key_S, CTRL)
    assert save_dialogs == []
    assert load_design(design_file).items[first_server(window).id].name == "Edited"
    assert not window.document.is_modified()
    qtbot.waitUntil(lambda: autosaves(state) == [], timeout=10_000)


def test_the_recovery_dialog_names_the_autosaves_it_could_not_read(
        qtbot, make_window, monkeypatch, state, design_file):
    crashed_autosave(state, design_file, "good")
    listed = state / f"list{SUFFIX}"
    listed.write_text("[]")
    fifo = state / f"pipe{SUFFIX}"
    os.mkfifo(fifo)
    window = make_window()
    [offered] = _restore_all(monkeypatch, window)
    assert offered["rows"] == ["good"]
    assert offered["unreadable"].splitlines() == [
        f"Autosave {listed} could not be read: $: expected an object, got an empty list",
        f"Autosave {fifo} could not be read: is not a regular file (a pipe, device or socket); "
        "a design autosave is read from a file"]
    assert window.document.design.name == "good"
    assert listed.read_text() == "[]" and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_with_only_unreadable_autosaves_the_status_bar_says_so(qtbot, make_window, monkeypatch, state):
    state.mkdir(parents=True)
    listed = state / f"list{SUFFIX}"
    listed.write_text("[]")
    monkeypatch.setattr(RecoveryDialog, "exec", lambda dialog: pytest.fail("nothing to restore, yet offered"))
    window = make_window()
    assert window.offer_recovery() == []
    assert window.statusBar().currentMessage() == (
        f"Autosave {listed} could not be read: $: expected an object, got an empty list")
    assert listed.read_text() == "[]"
