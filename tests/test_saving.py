"""Saving design files: atomic, backed up, through links, refusing what it must (no Qt)."""

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from designer.io import files
from designer.io.files import BACKUP_SUFFIX, TEMPORARY_SUFFIX, DesignFileError, load_design, save_design
from designer.model.design import Design, Item
from designer.topologies import generate


def _design(name: str = "pod") -> Design:
    design = generate("rail-fat-tree", nodes=16)
    design.name = name
    return design


@pytest.fixture()
def saved(tmp_path):
    path = tmp_path / "pod.cluster.json"
    save_design(_design("first"), path)
    return path


def _temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(TEMPORARY_SUFFIX))


@pytest.mark.parametrize("failing", ["fsync", "chmod", "replace", "copymode"])
def test_every_failure_removes_the_temporary_file_and_keeps_the_old_one(saved, monkeypatch, failing):
    save_design(_design("second"), saved)  # the backup now exists, so the backup's own steps run too
    before, backup_before = saved.read_bytes(), (saved.parent / (saved.name + BACKUP_SUFFIX)).read_bytes()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os if failing != "copymode" else files.shutil, failing, broken)
    with pytest.raises(DesignFileError, match=r"cannot be written \(No space left on device\); the previous file"):
        save_design(_design("third"), saved)
    assert saved.read_bytes() == before
    assert (saved.parent / (saved.name + BACKUP_SUFFIX)).read_bytes() == backup_before
    assert _temporaries(saved.parent) == []


def test_the_previous_version_is_kept_as_a_backup(tmp_path):
    path = tmp_path / "pod.cluster.json"
    backup = tmp_path / ("pod.cluster.json" + BACKUP_SUFFIX)
    save_design(_design("first"), path)
    assert not backup.exists()  # nothing was replaced
    first = path.read_bytes()
    os.chmod(path, 0o600)
    save_design(_design("second"), path)
    assert backup.read_bytes() == first
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert load_design(path).name == "second"
    save_design(_design("third"), path, backup=False)
    assert load_design(backup).name == "first"
    assert load_design(path).name == "third"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pod.cluster.json", "pod.cluster.json~"]


def test_saving_through_a_symbolic_link_writes_its_target_and_keeps_the_link(tmp_path):
    real_folder = tmp_path / "projects"
    real_folder.mkdir()
    real = real_folder / "pod.cluster.json"
    save_design(_design("first"), real)
    link = tmp_path / "link.cluster.json"
    link.symlink_to(real)
    save_design(_design("second"), link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert load_design(real).name == "second"
    assert load_design(real_folder / ("pod.cluster.json" + BACKUP_SUFFIX)).name == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.cluster.json", "projects"]


def test_a_read_only_file_is_refused_not_overwritten(saved):
    before = saved.read_bytes()
    os.chmod(saved, 0o444)
    with pytest.raises(DesignFileError, match=r"pod.cluster.json: cannot be written \(it is read-only\); "
                                              r"the previous file is unchanged"):
        save_design(_design("second"), saved)
    assert saved.read_bytes() == before
    assert stat.S_IMODE(saved.stat().st_mode) == 0o444
    assert sorted(p.name for p in saved.parent.iterdir()) == ["pod.cluster.json"]


def test_the_folder_is_flushed_after_the_rename(saved, monkeypatch):
    steps = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        steps.append("fsync folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src, dst):
        steps.append(f"rename to {os.path.basename(dst)}")
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    save_design(_design("second"), saved)
    assert steps == ["fsync file", "fsync file", "rename to pod.cluster.json~", "rename to pod.cluster.json",
                     "fsync folder"]


def test_a_folder_that_cannot_be_flushed_still_saves(saved, monkeypatch):
    real_fsync = os.fsync

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(22, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    save_design(_design("second"), saved)
    assert load_design(saved).name == "second"


def test_text_utf8_cannot_store_is_refused_before_writing_naming_the_field(saved, tmp_path):
    # A JSON escape of half a surrogate pair loads as it is...
    document = json.loads(saved.read_text())
    document["items"][3]["name"] = "Rack \udcff"
    odd = tmp_path / "odd.cluster.json"
    odd.write_text(json.dumps(document))  # ensure_ascii: written as the escape \udcff
    design = load_design(odd)
    assert design.items[document["items"][3]["id"]].name == "Rack \udcff"
    # ...but cannot be saved: refused naming the field, and nothing is written.
    before = saved.read_bytes()
    with pytest.raises(DesignFileError) as caught:
        save_design(design, saved)
    assert str(caught.value).startswith(f"{saved}: $.items[3].name: cannot be saved: the text holds U+DCFF")
    assert saved.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["odd.cluster.json", "pod.cluster.json"]
    with pytest.raises(DesignFileError, match=r": \$\.name: cannot be saved: the text holds U\+D800"):
        save_design(_design("Pod \ud800"), saved)


def test_the_text_table_shows_a_name_utf8_cannot_store(tmp_path):
    from designer.engine.evaluate import evaluate
    from designer.io.report import result_table

    design = Design(name="Pod \udcff")
    design.add_item(Item("a", "accelerator", name="GPU \ud800", part="h100-sxm"))
    table = result_table(evaluate(design))
    assert table.encode("utf-8").startswith("Pod \ufffd\n".encode())


KILLED_SAVE = """
import os, sys
from designer.io import files
from designer.topologies import generate

def stop_before_rename(src, dst):
    print("written", flush=True)
    sys.stdin.read()  # until the test kills this process

files.os.replace = stop_before_rename
design = generate("rail-fat-tree", nodes=64)
design.name = "killed"
files.save_design(design, sys.argv[1], backup=False)
"""


def _save_until_rename(path) -> subprocess.Popen:
    """A process that saves into `path` and stops just before the rename, its temporary file
    written in full."""
    process = subprocess.Popen([sys.executable, "-c", KILLED_SAVE, str(path)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "written\n"
    return process


def _age(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_temporary_files_of_killed_saves_are_cleaned_by_the_next_save(saved):
    before = saved.read_bytes()
    killed = _save_until_rename(saved)
    killed.send_signal(signal.SIGKILL)
    assert killed.wait() == -signal.SIGKILL
    killed.stdin.close()
    killed.stdout.close()
    [left] = _temporaries(saved.parent)
    assert saved.read_bytes() == before
    assert (saved.parent / left).stat().st_size > len(before)  # the killed save's whole text

    # A recent one may belong to a save under way elsewhere: kept.
    save_design(_design("second"), saved)
    assert _temporaries(saved.parent) == [left]
    # Minutes later it is stale: the next save into the folder removes it.
    _age(saved.parent / left, files.STALE_TEMPORARY_S + 60)
    save_design(_design("third"), saved)
    assert _temporaries(saved.parent) == []
    assert load_design(saved).name == "third"
    assert load_design(saved.parent / (saved.name + BACKUP_SUFFIX)).name == "second"


def test_a_slow_save_under_way_keeps_its_temporary_file(saved):
    live = _save_until_rename(saved)
    try:
        [temporary] = _temporaries(saved.parent)
        _age(saved.parent / temporary, files.STALE_TEMPORARY_S + 60)
        save_design(_design("second"), saved)
        assert _temporaries(saved.parent) == [temporary]  # locked by the live save
    finally:
        live.kill()
        live.wait()
        live.stdin.close()
        live.stdout.close()
    save_design(_design("third"), saved)
    assert _temporaries(saved.parent) == []
