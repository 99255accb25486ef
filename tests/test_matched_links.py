"""Matched links: copy i of one group joined only to copy i of another, so a fat tree's spine j of
every pod ↔ core group j is drawn once instead of once per spine."""

from __future__ import annotations

import json

import pytest

from designer.engine import evaluate
from designer.io.files import DesignFileError, dumps, load_design, loads
from designer.model import default_catalog
from designer.model.design import Design, DesignError, Item, Link
from designer.model.lint import lint
from designer.topologies import generate
from tests.helpers import mini_fat_tree


def test_a_matched_link_joins_copy_i_to_copy_i_only():
    d = mini_fat_tree()
    top = d.link_copies(d.links["top"])
    # 2 blocks × 2 spines, each to the 3 cores of its plane: 12 links, not 2 × 2 × 2 × 3 = 24.
    assert top.instances == 12
    assert top.degree_at("a") == 3 and top.degree_at("b") == 2
    assert d.all_link_copies()["top"] == top
    graph = d.expand()
    edges = [(u, v) if u.startswith("spine") else (v, u)
             for u, v, k in graph.edges(data="link") if k == "top"]
    assert len(edges) == 12
    for spine, core in edges:
        # spine#block#j ↔ core#j#k: the spine's copy in its group equals the core's plane.
        assert spine.split("#")[2] == core.split("#")[1], (spine, core)
    assert graph.number_of_edges() == sum(d.link_copies(l).instances for l in d.links.values())


@pytest.mark.parametrize("a, b, match, problem", [
    ("leaf", "spine", ("blk", "spines"), "'blk', which contains both ends"),
    ("spine", "core", ("plane", "spines"), "'plane', which does not contain end 'spine'"),
    ("spine", "core", ("spines", "nowhere"), "'nowhere', which is not a group"),
    ("spine", "core", ("spines", "cores"), "counts must be equal"),
])
def test_a_match_that_cannot_hold_is_refused_with_the_reason(a, b, match, problem):
    d = mini_fat_tree()
    with pytest.raises(DesignError, match=problem):
        d.add_link(Link("bad", a, b, "ib-ndr", 1, match=match))
    assert "bad" not in d.links


def test_matched_links_are_saved_and_loaded(tmp_path):
    catalog = default_catalog()
    d = mini_fat_tree()
    loaded = loads(dumps(d), catalog)
    assert loaded.links["top"].match == ("spines", "plane")
    assert loaded.link_copies(loaded.links["top"]).instances == 12
    document = json.loads(dumps(d))
    document["links"][[l["id"] for l in document["links"]].index("top")]["match"] = ["spines", "cores"]
    path = tmp_path / "bad.cluster.json"
    path.write_text(json.dumps(document))
    with pytest.raises(DesignFileError, match=r"\$\.links\[\d\].*counts must be equal"):
        load_design(path, catalog)


def test_recounting_one_matched_group_is_a_lint_error_naming_the_link():
    catalog = default_catalog()
    d = mini_fat_tree()
    d.update_item("plane", count=4)
    findings = [f for f in lint(d, catalog) if f.item == "top"]
    assert findings and findings[0].severity == "error"
    assert "counts must be equal" in findings[0].message
    # Until fixed, the copies are counted every-to-every, as the lint message says.
    assert d.link_copies(d.links["top"]).instances == 2 * 2 * 4 * 3


def _explicit_pods(matched: Design) -> Design:
    """The same fabric drawn the long way: every spine of a pod and every core group its own
    drawn item, one link per spine (how the generator drew rail pods before links could match)."""
    d = Design(name=matched.name, items=dict(matched.items), links=dict(matched.links))
    spines = d.items["core"].count
    cores = d.items["core.group"].count
    matched_links = [l for l in d.links.values() if l.match]
    for link in list(d.links.values()):
        if "spine" in link.a or "spine" in link.b or "core" in link.b:
            d.remove_link(link.id)
    for item_id in [i for i in d.items if i.startswith("blk.spine") or i.startswith("core")]:
        if item_id in d.items:
            d.remove_item(item_id)
    for j in range(spines):
        d.add_item(Item(f"core{j}", "group", count=cores))
        d.add_item(Item(f"core{j}.sw", "switch", part=matched.items["core.sw"].part, parent=f"core{j}"))
    for link in matched_links:
        rail = link.a.removeprefix("blk.spine")
        leaf_link = next(l for l in matched.links.values() if l.b == link.a)
        for j in range(spines):
            spine = d.add_item(Item(f"blk.spine{rail}-{j}", "switch", part=matched.items[link.a].part,
                                    parent=matched.items["blk.spines" + rail].parent)).id
            d.add_link(Link(f"{leaf_link.a}--{spine}", leaf_link.a, spine, leaf_link.medium, leaf_link.lanes))
            d.add_link(Link(f"{spine}--core{j}", spine, f"core{j}.sw", link.medium, link.lanes))
    return d


def _figures(result) -> dict:
    result = result.as_dict()
    network = result["network"]
    for boundary in network.get("boundaries", ()):
        boundary.pop("links")  # drawn links crossing the boundary: fewer when drawn compactly
    collectives = [{k: v for k, v in dict(r).items() if k != "bottleneck"} for r in result["collectives"]]
    return {"network": network, "collectives": collectives, "training": dict(result["training"]),
            "inventory": dict(result["inventory"])}


def test_a_rail_pod_fabric_drawn_with_matched_links_evaluates_as_drawn_in_full():
    catalog = default_catalog()
    matched = generate("rail-fat-tree", catalog, nodes=400, nodes_per_su=4, switch="qm9700",
                       platform="dgx-h100", nic="cx7-ndr", nics_per_node=2)
    assert any(l.match for l in matched.links.values())
    explicit = _explicit_pods(matched)
    assert len(explicit.links) > len(matched.links)
    assert sum(explicit.link_copies(l).instances for l in explicit.links.values()) == \
        sum(matched.link_copies(l).instances for l in matched.links.values())
    assert not [f for f in lint(matched, catalog) if f.severity == "error"]
    assert _figures(evaluate(matched, catalog)) == _figures(evaluate(explicit, catalog))


def test_copy_and_paste_keeps_a_match_whose_groups_come_along_and_drops_one_that_cannot_hold(qapp):
    from designer.document.document import Document

    document = Document(mini_fat_tree(), default_catalog())
    # Both matched groups copied: the pasted link pairs the pasted groups.
    roots = document.paste(document.fragment(["blk", "plane"]))
    design = document.design
    pasted = next(l for l in design.links.values() if l.id != "top" and l.match)
    assert set(pasted.match) <= {d.id for d in design.descendants(roots[0])} | set(roots) | \
        {d.id for d in design.descendants(roots[1])}
    assert design.link_copies(pasted).instances == 12
    # A spine and a core pasted back into their groups stay matched.
    spine, core = document.paste(document.fragment(["spine", "core"]))
    again = next(l for l in document.design.links.values() if {l.a, l.b} == {spine, core})
    assert again.match == ("spines", "plane")
    # Pasted after their groups are gone, they land at the top level: nothing to pair any more.
    fragment = document.fragment(["spine", "core"])
    assert document.remove(["blk", "plane"])
    spine, core = document.paste(fragment)
    lone = next(l for l in document.design.links.values() if {l.a, l.b} == {spine, core})
    assert lone.match is None and document.design.items[spine].parent is None
    assert not [f for f in lint(document.design, default_catalog()) if f.severity == "error"]


def _recount_alone(document, group_id: str, count: int) -> None:
    """Recount one group without its matched partners (as an older file or a script might)."""
    from dataclasses import replace

    from designer.model.edits import Edit, UpdateItem

    old = document.design.items[group_id]
    assert document.apply(Edit((UpdateItem(old, replace(old, count=count)),), "Recount alone"))


def test_the_canvas_tooltip_says_how_a_matched_link_pairs_its_copies(make_window):
    window = make_window(mini_fat_tree())
    tip = window.scene.tooltip_for("top")
    assert "stands for 12 physical links" in tip
    assert "copy i of spines ↔ copy i of plane only" in tip
    _recount_alone(window.document, "plane", 4)
    assert "counts must be equal" in window.scene.tooltip_for("top")


def test_the_inspector_switches_a_link_between_every_to_every_and_matched(make_window, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    window = make_window(mini_fat_tree())
    design = window.document.design
    window.scene.select_ids(["top"])
    QApplication.processEvents()
    combo = window.inspector.fields["match"]
    assert combo.currentText() == "copy i of spines ↔ copy i of plane"
    assert [combo.itemText(i) for i in range(combo.count())][0] == "every copy to every copy"
    # The user opens the list and clicks "every copy to every copy".
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=2_000)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(view.model().index(0, 0)).center())
    assert design.links["top"].match is None
    assert design.link_copies(design.links["top"]).instances == 24
    window.act_undo.trigger()
    assert window.document.design.links["top"].match == ("spines", "plane")
    # A link with no groups of equal count above its ends has nothing to match.
    window.scene.select_ids(["up"])
    QApplication.processEvents()
    assert "match" not in window.inspector.fields
    # A match broken by a recount still lets the other fields be edited (lint reports it).
    _recount_alone(window.document, "plane", 4)
    assert window.document.validate_link("top", lanes=3) is None


def test_recounting_a_matched_group_in_the_document_recounts_its_partners_in_one_step(qapp):
    from designer.document.document import Document

    catalog = default_catalog()
    document = Document(generate("rail-fat-tree", catalog, nodes=400, nodes_per_su=4, switch="qm9700",
                                 platform="dgx-h100", nic="cx7-ndr", nics_per_node=2), catalog)
    design = document.design
    spines = design.items["core"].count
    partners = design.matched_groups("blk.spines0")
    assert partners == ["blk.spines1", "core"]  # core planes ↔ rail 0 spines ↔ …, through the planes
    steps = document.undo_stack.count()
    # One spine fewer in every rail-0 pod: every rail's spines and the core planes follow.
    assert document.set_item("blk.spines0", text="Set count", count=spines - 1)
    assert {design.items[g].count for g in ["blk.spines0", *partners]} == {spines - 1}
    assert not [f for f in lint(design, catalog) if f.severity == "error"]
    assert document.undo_stack.count() == steps + 1
    assert "matched groups" in document.undo_stack.undoText()
    document.undo_stack.undo()
    assert {design.items[g].count for g in ["blk.spines0", *partners]} == {spines}
