"""Autosave fixtures and look-ups shared by the recovery tests (`test_gui_recovery.py`,
`test_autosave_hostile.py`); tests/conftest.py registers the fixtures (`pytest_plugins`)."""

from __future__ import annotations

import pytest

from designer.io.autosave import SUFFIX as AUTOSAVE_SUFFIX
from designer.io.files import load_design, save_design
from designer.model.catalog import default_catalog
from designer.topologies import generate


@pytest.fixture()
def state(tmp_path, monkeypatch):
    """A private state folder; returns where the autosaves go."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "cluster-designer" / "autosave"


@pytest.fixture()
def design_file(tmp_path):
    """A saved DGX H100 server design in a fresh projects folder."""
    folder = tmp_path / "projects"
    folder.mkdir()
    path = folder / "dgx.cluster.json"
    save_design(generate("server", default_catalog(), platform="dgx-h100"), path)
    return path


def autosaves(state):
    """The autosave files in the state folder, sorted."""
    return sorted(state.glob(f"*{AUTOSAVE_SUFFIX}")) if state.exists() else []


def first_server(window):
    """The first server item of the window's design."""
    return next(i for i in window.document.design.items.values() if i.kind == "server")


def crashed_autosave(state, design_file, name):
    """An autosave as a killed app leaves it: written, its lock free."""
    from designer.io.autosave import AutosaveSlot

    design = load_design(design_file)
    design.name = name
    slot = AutosaveSlot(state)
    slot.write(design, str(design_file), name)
    slot.release()
    return slot.file
