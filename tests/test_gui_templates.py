"""File ▸ New from Template: every template with its parameters, a refusal shown in the dialog
(which stays open with what was typed), and the design opening as a new untitled document."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from designer.topologies import GENERATORS
from tests.helpers import window_settled


def _click_template(qtbot, dialog, name: str) -> None:
    row = next(r for r in range(dialog.templates.count()) if dialog.templates.item(r).text() == name)
    rect = dialog.templates.visualItemRect(dialog.templates.item(row))
    qtbot.mouseClick(dialog.templates.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert dialog.template == name


def test_new_from_template_refuses_in_the_dialog_then_opens_the_design(make_window, qtbot, monkeypatch):
    from designer.ui.templates import TemplateDialog

    window = make_window()
    seen = {}

    def run(dialog):
        with qtbot.waitExposed(dialog):  # a context manager: it waits on leaving the block
            dialog.show()
        seen["templates"] = [dialog.templates.item(r).text() for r in range(dialog.templates.count())]
        _click_template(qtbot, dialog, "nvl72")
        seen["nvl72 fields"] = set(dialog.fields)
        _click_template(qtbot, dialog, "dragonfly")
        seen["placeholder"] = dialog.fields["nodes"].placeholderText()
        seen["nics help"] = dialog.fields["nics_per_node"].toolTip()
        # Past what the switch radix joins: refused in the dialog, which keeps what was typed.
        qtbot.keyClicks(dialog.fields["nodes"], "69761")
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
        seen["error"] = dialog.error.text()
        seen["open after refusal"] = dialog.isVisible() and dialog.design is None
        seen["kept"] = dialog.fields["nodes"].text()
        dialog.fields["nodes"].clear()
        qtbot.keyClicks(dialog.fields["nodes"], "300")
        routing = dialog.fields["routing"]
        assert isinstance(routing, QComboBox)
        routing.setCurrentText("valiant")
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
        return dialog.result()

    monkeypatch.setattr(TemplateDialog, "exec", run)
    window.act_new_from_template.trigger()
    assert seen["templates"] == list(GENERATORS)
    assert {"nodes", "switch", "nic", "rack"} <= seen["nvl72 fields"]
    assert seen["placeholder"] == "default 1024"
    assert "platform's" in seen["nics help"]  # what the default follows from
    assert "69,760 servers is the most a dragonfly" in seen["error"] and "69,761" in seen["error"]
    assert seen["open after refusal"] and seen["kept"] == "69761"
    design = window.document.design
    assert window.document.path is None
    assert design.settings["template"]["name"] == "dragonfly"
    assert design.settings["template"]["params"]["nodes"] == 300
    assert design.settings["dragonfly_routing"] == "valiant"
    qtbot.waitUntil(lambda: window_settled(window), timeout=60_000)
    shown = {row[0]: row[1] for row in window.results.summary_table_rows()}
    assert shown["Dragonfly routing"] == "Valiant (set)"
