"""Readable drawings in the window: Tidy Layout from the keyboard and the Edit menu (one undo
step, the selection or the whole design), the canvas drawing boxes exactly where the layout
module computes them, and containers too small on screen drawn as summary cards until zoomed in."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from designer.canvas.items import NodeItem
from designer.canvas.scene import CARD_SCALE
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from designer.model.design import Design, Item, Link
from designer.model.layout import item_rects
from designer.paths import examples_dir
from tests.helpers import window_settled

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
LEFT = Qt.MouseButton.LeftButton


def messy() -> Design:
    """Two servers of four GPUs and an NVSwitch each, piled up where they were dropped."""
    design = Design(name="messy")
    for s in range(2):
        design.add_item(Item(f"s{s}", "server", part="dgx-h100", x=s * 40, y=s * 20))
        design.add_item(Item(f"s{s}.sw", "switch", part="nvswitch-gen4", parent=f"s{s}", x=15, y=15))
        for g in range(4):
            design.add_item(Item(f"s{s}.g{g}", "accelerator", part="h100-sxm", parent=f"s{s}", x=g * 10, y=g * 10))
            design.add_link(Link(f"s{s}.l{g}", f"s{s}.g{g}", f"s{s}.sw", "nvlink4", 4))
    return design


def drawn_overlaps(scene) -> list[tuple[str, str]]:
    """Sibling boxes that overlap on the canvas."""
    by_parent: dict = {}
    for node in scene.nodes.values():
        by_parent.setdefault(node.parentItem(), []).append(node)
    return [(a.item_id, b.item_id) for siblings in by_parent.values() for a, b in itertools.combinations(siblings, 2)
            if a.outline_in_scene().intersects(b.outline_in_scene())]


def shown_texts(node: NodeItem) -> list[str]:
    return [c.text() for c in node.plate.childItems() if isinstance(c, QGraphicsSimpleTextItem) and c.isVisible()]


def positions(design: Design) -> dict:
    return {i.id: (i.x, i.y) for i in design.items.values()}


def click_header(window, item_id: str) -> None:
    node = window.scene.nodes[item_id]
    header = window.view.mapFromScene(node.mapRectToScene(node.header_rect()).center())
    QTest.mouseClick(window.view.viewport(), LEFT, Qt.KeyboardModifier.NoModifier, header)


@pytest.fixture
def messy_window(make_window):
    return make_window(messy())


def test_tidy_layout_arranges_the_selection_or_the_whole_design_one_undo_step_each(messy_window):
    window = messy_window
    doc, scene = window.document, window.scene
    assert drawn_overlaps(scene)
    before = positions(doc.design)
    # A selected server: placed among its siblings, its contents as they were, from the keyboard.
    click_header(window, "s1")
    assert scene.selected_ids() == ["s1"]
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key.Key_L, CTRL_SHIFT)
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Tidy layout"
    after = positions(doc.design)
    moved = {i for i in before if before[i] != after[i]}
    assert moved == {"s1"}
    assert not scene.nodes["s0"].outline_in_scene().intersects(scene.nodes["s1"].outline_in_scene())
    # Nothing selected: the whole design, from the Edit menu.
    scene.clearSelection()
    edit_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    assert window.act_tidy in edit_menu.actions()
    window.act_tidy.trigger()
    assert doc.undo_stack.count() == 2
    assert drawn_overlaps(scene) == []
    switch, gpus = scene.nodes["s0.sw"], [scene.nodes[f"s0.g{g}"] for g in range(4)]
    # The NVSwitch's links stay inside the server: it sits under the GPUs (a server's links leave upwards).
    assert switch.outline_in_scene().top() > max(g.outline_in_scene().bottom() for g in gpus)
    window.act_tidy.trigger()  # tidy already: nothing to undo
    assert doc.undo_stack.count() == 2
    assert "Already tidy" in window.statusBar().currentMessage()
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert positions(doc.design) == before
    assert drawn_overlaps(scene)


def test_the_canvas_draws_boxes_where_the_layout_module_computes_them(make_window):
    window = make_window(load_design(examples_dir() / "tesla-h100-2023.cluster.json", default_catalog()))
    rects = item_rects(window.document.design)
    for item_id, node in window.scene.nodes.items():
        r = rects[item_id]
        assert node.rect() == QRectF(r.left, r.top, r.width, r.height), item_id


@pytest.fixture
def big_window(make_window, qtbot):
    """The Tesla H100 example, evaluated, at Zoom to Fit: far too small on screen to read its servers."""
    window = make_window(load_design(examples_dir() / "tesla-h100-2023.cluster.json", default_catalog()))
    qtbot.waitUntil(lambda: window.last_result is not None and window_settled(window), timeout=120_000)
    window.act_zoom_fit.trigger()
    qtbot.waitUntil(lambda: not window.scene.jobs.running("cards"), timeout=30_000)
    assert window.view.transform().m11() < CARD_SCALE
    return window


def test_containers_too_small_to_read_show_a_summary_card_until_zoomed_in(big_window, qtbot):
    window = big_window
    scene = window.scene
    su = scene.nodes["su"]
    assert su.card
    title, count, busiest = shown_texts(su)[:1] + shown_texts(su)[1].split("\n")
    assert title == "39 scalable units ×39"
    assert count == "9,984 × NVIDIA H100 SXM5 80GB"  # 39 units × 32 servers × 8 GPUs
    assert busiest.startswith("busiest link ") and busiest.endswith("%")
    assert not any(child.isVisible() for child in su.childItems() if isinstance(child, NodeItem))
    # The card's text is drawn at its natural size on screen, whatever the zoom.
    text = next(c for c in su.plate.childItems() if isinstance(c, QGraphicsSimpleTextItem) and c.isVisible())
    on_screen = window.view.mapFromScene(text.mapToScene(text.boundingRect())).boundingRect()
    assert on_screen.height() >= 9
    # Links that end inside the card are drawn to the card.
    link = scene.link_items[next(iter(scene.links_by_item["su.spine0"] & scene.links_by_item["core0.sw"]))]
    ends = [link.mapToScene(link.line().p1()), link.mapToScene(link.line().p2())]
    header = su.mapRectToScene(su.header_rect()).adjusted(-1, -1, 1, 1)
    assert any(header.contains(p) for p in ends)
    # Zoomed in, the contents are back and the card is gone.
    window.view.centerOn(su)
    window.view.zoom(1.0 / window.view.transform().m11())
    qtbot.waitUntil(lambda: not scene.jobs.running("cards"), timeout=30_000)
    assert not su.card
    assert all(child.isVisible() for child in su.childItems() if isinstance(child, NodeItem))
    assert shown_texts(su) == ["39 scalable units", "×39"]


def test_select_all_at_zoom_to_fit_selects_what_cards_hide_and_acts_on_all_of_it(big_window, qtbot):
    """Qt selects only what is shown; Select All selects every item and link of the design all the
    same: the cards show as selected, Copy, Delete and Cut take everything, and zoomed in the
    contents show as selected."""
    window = big_window
    scene, doc = window.scene, window.document
    items, links = dict(doc.design.items), dict(doc.design.links)
    su = scene.nodes["su"]
    assert su.card and not scene.nodes["su.node"].isVisible()
    window.act_select_all.trigger()
    assert set(scene.selected_ids()) == set(items) and set(scene.selected_link_ids()) == set(links)
    assert su.isSelected()
    assert window.inspector.title.text().startswith(f"{len(items) + len(links)} selected")
    assert window.editor.copy()
    assert window.statusBar().currentMessage() == f"Copied {len(items)} items and {len(links)} links"
    window.act_delete.trigger()
    assert doc.design.items == {} and doc.undo_stack.undoText() == f"Delete {len(items) + len(links)} items"
    window.act_undo.trigger()
    assert doc.design.items == items and doc.design.links == links
    qtbot.waitUntil(lambda: window_settled(window) and not scene.jobs.running("cards"), timeout=60_000)

    window.act_select_all.trigger()
    window.view.centerOn(scene.nodes["su"])
    window.view.zoom(1.0 / window.view.transform().m11())
    qtbot.waitUntil(lambda: not scene.jobs.running("cards"), timeout=30_000)
    assert not scene.nodes["su"].card and scene.nodes["su.rack"].isVisible()
    assert scene.nodes["su.rack"].isSelected() and scene.nodes["su.rack"] in scene.selectedItems()
    assert set(scene.selected_ids()) == set(items)
    # Choosing something else drops what the cards hid.
    scene.select_ids(["su.spine0"])
    assert scene.selection() == (["su.spine0"], [])


def test_links_pass_behind_summary_cards_and_leaves_never_over_their_labels(big_window, qtbot):
    """At Zoom to Fit the core groups are cards in rows; the links from the upper rows to the units
    pass behind the lower rows' cards (stacked over the links), so no card's text is crossed. An
    open container lies under the links, which run over it to its contents."""
    window = big_window
    scene = window.scene
    link_z = max(link.zValue() for link in scene.link_items.values())
    cards = [node for node in scene.nodes.values() if node.card and node.isVisible()]
    assert cards and all(card.zValue() > link_z for card in cards)
    assert all(node.zValue() > link_z for node in scene.nodes.values() if not node.container)
    # What is painted on each card's label is the card, not a link passing it.
    links = set(scene.link_items.values())
    for card in cards:
        label = card.mapToScene(card.header_rect().center())
        assert next(i for i in scene.items(label) if isinstance(i, NodeItem) or i in links) is card
    su = scene.nodes["su"]
    window.view.centerOn(su)
    window.view.zoom(1.0 / window.view.transform().m11())
    qtbot.waitUntil(lambda: not scene.jobs.running("cards"), timeout=30_000)
    assert not su.card and su.zValue() < link_z
