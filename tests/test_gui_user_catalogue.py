"""A broken user catalogue does not lock the user out of the app: it says which file and where,
and opens on the shipped parts."""

import json

from PySide6.QtWidgets import QApplication, QMessageBox

from designer.model import catalog as catalog_module
from designer.ui.app import run_app
from designer.ui.main_window import MainWindow


def test_app_opens_on_the_shipped_parts_and_names_the_broken_user_catalogue(app_process, tmp_path, monkeypatch):
    folder = tmp_path / "cluster-designer"
    folder.mkdir()
    mine = folder / "catalog.json"
    mine.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [
        {"id": "my-rack", "kind": "rack", "name": "Mine", "source": "me", "height_u": 42, "power_budget_kw": 1e308}]}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(catalog_module, "_default", None)
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text, *a: shown.append(text)))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard))
    monkeypatch.setattr(QApplication, "exec", lambda *args: 0)
    assert run_app(None) == 0
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    try:
        assert shown and shown[0].startswith(f"{mine}: $.parts[0].power_budget_kw: ")
        assert "dgx-h100" in windows[-1].catalog and "my-rack" not in windows[-1].catalog
    finally:
        for window in windows:
            window.scheduler.shutdown(timeout_s=5)
            window.close()
