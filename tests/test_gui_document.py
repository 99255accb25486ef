"""The document: every edit is one undo step, undo restores the model exactly, refusals change nothing."""

from __future__ import annotations

import copy

import pytest

from designer.document.document import Document
from designer.model.catalog import default_catalog
from designer.model.design import Item
from designer.topologies import generate


def state(design):
    return dict(design.items), dict(design.links)


@pytest.fixture
def doc(qapp):
    return Document(generate("rail-fat-tree", default_catalog(), nodes=64), default_catalog())


def test_each_edit_is_one_step_and_undo_restores_exactly(doc):
    changes = []
    doc.changed.connect(changes.append)
    original = state(doc.design)
    steps = [
        lambda: doc.move_items({"su.leaf0": (500, 40), "su.leaf1": (600, 40)}),
        lambda: doc.set_item("su", count=3),
        lambda: doc.add_link("su.leaf0", "su.leaf1", "ib-ndr", 2),
        lambda: doc.group(["su.leaf2", "su.leaf3"], count=2),
        lambda: doc.ungroup([next(i.id for i in doc.design.items.values() if i.id.startswith("group"))]),
        lambda: doc.paste(doc.fragment(["su.rack"])),
        lambda: doc.remove(["su.rack"]),
    ]
    snapshots = [original]
    for n, step in enumerate(steps, 1):
        assert step(), f"step {n} refused"
        assert doc.undo_stack.count() == n
        snapshots.append(state(doc.design))
    assert changes and not any(c.reset for c in changes)
    for n in range(len(steps), 0, -1):
        doc.undo_stack.undo()
        assert state(doc.design) == snapshots[n - 1], f"undo of step {n}"
    for n in range(1, len(steps) + 1):
        doc.undo_stack.redo()
        assert state(doc.design) == snapshots[n], f"redo of step {n}"


def test_remove_cascades_to_contents_and_links(doc):
    before = state(doc.design)
    assert doc.remove(["su.rack"])
    assert not any(i.startswith("su.node") for i in doc.design.items)
    assert all(l.a in doc.design.items and l.b in doc.design.items for l in doc.design.links.values())
    doc.undo_stack.undo()
    assert state(doc.design) == before


def test_refused_edits_change_nothing_and_say_why(doc):
    errors = []
    doc.error.connect(errors.append)
    before = state(doc.design)
    assert not doc.set_item("su.leaf0", count=4)  # only groups have counts
    assert not doc.add_items([Item("x", "cpu", part="epyc-9654",
                                   parent="su.leaf0")])  # a cpu cannot go in a switch
    assert not doc.group(["su.leaf0", "su.node.gpu0"])  # different containers
    assert state(doc.design) == before and doc.undo_stack.count() == 0
    assert len(errors) == 3 and "only a group" in errors[0]
    assert doc.validate_item("su", count=0) and doc.design.items["su"].count == 2
    assert doc.validate_item("su", count=5) is None and doc.design.items["su"].count == 2


def test_paste_gives_fresh_ids_and_keeps_internal_links(doc):
    fragment = doc.fragment(["su.rack"])
    n_items, n_links = len(fragment["items"]), len(fragment["links"])
    roots = doc.paste(copy.deepcopy(fragment))
    (root,) = roots
    new = {root} | {d.id for d in doc.design.descendants(root)}
    assert len(new) == n_items and not new & {i["id"] for i in fragment["items"]}
    internal = [l for l in doc.design.links.values() if l.a in new and l.b in new]
    assert len(internal) == n_links
    assert not [l for l in doc.design.links.values() if (l.a in new) != (l.b in new)]  # none to outside
