"""The model's check before a part change (no Qt): what breaks, and the consistent change offered."""

from __future__ import annotations

import pytest

from designer.engine.evaluate import evaluate
from designer.model.catalog import default_catalog
from designer.model.lint import lint
from designer.model.part_change import check_part_change
from designer.topologies import generate

CATALOG = default_catalog()


@pytest.fixture
def fat_tree():
    return generate("rail-fat-tree", nodes=8)


def test_an_infiniband_switch_made_ethernet_is_refused_naming_the_links(fat_tree):
    links = len(fat_tree.links_of("su.leaf0"))
    check = check_part_change(fat_tree, CATALOG, "su.leaf0", "sn5600")
    assert check.fix is None
    assert len(check.problems) == 1
    problem = check.problems[0]
    label = fat_tree.items["su.leaf0"].label
    assert "does not support InfiniBand" in problem and f"{links} links of {label}" in problem


def test_a_compatible_switch_change_has_no_problem(fat_tree):
    assert not check_part_change(fat_tree, CATALOG, "su.leaf0", "qm9700").problems


def test_an_h100_in_an_mi300x_platform_is_refused_and_lint_says_so():
    design = generate("server", platform="mi300x-platform")
    check = check_part_change(design, CATALOG, "node.gpu0", "h100-sxm")
    assert any("does not fit" in p for p in check.problems) and check.fix is None
    design.update_item("node.gpu0", part="h100-sxm")  # as a file could have it
    assert any(f.item == "node.gpu0" and f.severity == "error" and "scale-up fabric" in f.message
               for f in lint(design, CATALOG))


def test_a_dgx_h100_made_an_mi300x_platform_offers_the_consistent_change():
    design = generate("server", platform="dgx-h100")
    before = design.snapshot()
    check = check_part_change(design, CATALOG, "node", "mi300x-platform")
    assert any("8 NVIDIA H100" in p for p in check.problems)
    assert check.fix is not None and "8 NVIDIA H100 SXM5 80GB" in check.fix_text and "MI300X" in check.fix_text
    assert design.items == before.items  # asking changes nothing
    check.fix.apply(design)
    gpus = [i for i in design.items.values() if i.kind == "accelerator"]
    assert design.items["node"].part == "mi300x-platform"
    assert len(gpus) == 8 and {g.part for g in gpus} == {"mi300x"}
    assert not [i for i in design.items.values() if i.part == "nvswitch-gen3"]
    mesh = [l for l in design.links.values() if l.medium == "infinity-fabric"]
    assert len(mesh) == 8 * 7 // 2
    assert not [f for f in lint(design, CATALOG) if f.severity == "error"]
    result = evaluate(design)
    assert result.inventory.accelerators == 8 and result.collectives  # still a working server
    check.fix.inverse().apply(design)
    assert design.items == before.items and design.links == before.links


def test_an_mi300x_platform_made_a_dgx_h100_gets_nvswitches():
    design = generate("server", platform="mi300x-platform")
    check = check_part_change(design, CATALOG, "node", "dgx-h100")
    check.fix.apply(design)
    switches = [i for i in design.items.values() if i.part == "nvswitch-gen3"]
    assert len(switches) == 4 and not [l for l in design.links.values() if l.medium == "infinity-fabric"]
    assert not [f for f in lint(design, CATALOG) if f.severity == "error"]
