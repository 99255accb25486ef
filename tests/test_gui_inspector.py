"""The inspector checks a part change before making it, driven as a user does: click the item on
the canvas, pick the part in the inspector's combo box (popup, Enter), read the refusal, press the
offered button, undo."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QPushButton

from designer.model.catalog import default_catalog
from designer.topologies import generate


def _click(window, item_id: str) -> None:
    node = window.scene.nodes[item_id]
    rect = node.mapRectToScene(node.header_rect()) if node.container else node.sceneBoundingRect()
    window.view.ensureVisible(rect, 40, 40)
    at: QPoint = window.view.mapFromScene(rect.center())
    QTest.mouseClick(window.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert window.scene.selected_ids() == [item_id]


def _choose_part(qtbot, window, part_id: str) -> None:
    """Open the Part combo's list, move to the part and press Enter."""
    combo = window.inspector.findChild(QComboBox, "inspector_part")
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    view.setCurrentIndex(combo.model().index(combo.findData(part_id), 0))
    QTest.keyClick(view, Qt.Key.Key_Return)


def _shown_error(window) -> str:
    error = window.inspector.error
    return error.text() if error.isVisible() else ""


def test_an_infiniband_switch_made_ethernet_is_refused_in_the_inspector(make_window, qtbot):
    window = make_window(generate("rail-fat-tree", default_catalog(), nodes=8))
    doc = window.document
    _click(window, "su.leaf0")
    _choose_part(qtbot, window, "sn5600")
    assert "does not support InfiniBand" in _shown_error(window)
    assert doc.design.items["su.leaf0"].part == "qm9700" and doc.undo_stack.count() == 0
    combo = window.inspector.findChild(QComboBox, "inspector_part")
    assert combo.currentData() == "qm9700"  # the combo shows the part the switch still has
    assert not window.inspector.findChild(QPushButton, "inspector_fix").isVisible()  # nothing to offer


def test_a_dgx_h100_made_an_mi300x_platform_takes_the_offered_swap_in_one_undo_step(make_window, qtbot):
    window = make_window(generate("server", default_catalog(), platform="dgx-h100"))
    doc = window.document
    before_items, before_links = dict(doc.design.items), dict(doc.design.links)
    _click(window, "node")
    _choose_part(qtbot, window, "mi300x-platform")
    assert "8 NVIDIA H100" in _shown_error(window) and doc.design.items["node"].part == "dgx-h100"
    assert "Also swap the 8 NVIDIA H100 SXM5 80GB for AMD Instinct MI300X" in _shown_error(window)
    fix = window.inspector.findChild(QPushButton, "inspector_fix")
    assert fix.isVisible()
    QTest.mouseClick(fix, Qt.MouseButton.LeftButton)
    assert not _shown_error(window)
    design = doc.design
    assert design.items["node"].part == "mi300x-platform"
    assert {i.part for i in design.items.values() if i.kind == "accelerator"} == {"mi300x"}
    assert not [i for i in design.items.values() if i.part == "nvswitch-gen3"]
    assert doc.undo_stack.count() == 1
    qtbot.waitUntil(lambda: window.inspector.findChild(QComboBox, "inspector_part").currentData() == "mi300x-platform")
    window.act_undo.trigger()
    assert doc.design.items == before_items and doc.design.links == before_links
