import pytest

from designer.engine import evaluate
from designer.model import Design, Item, load_catalog
from designer.topologies import generate
from tests.helpers import without_storage_and_spares


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


@pytest.fixture(scope="module")
def superpod(catalog):
    return without_storage_and_spares(generate("rail-fat-tree", catalog, nodes=128, nodes_per_su=32))


def test_inventory_counts_through_the_hierarchy(superpod, catalog):
    inv = evaluate(superpod, catalog).as_dict()["inventory"]
    assert inv["accelerators"] == 1024
    assert inv["accelerator_models"] == {"h100-sxm": 1024}
    assert inv["servers"] == 128
    # 4 NVSwitch chips per DGX + 8 leaves per unit × 4 units + 16 spines
    assert inv["switch_models"]["qm9700"] == 32 + 16
    assert inv["switch_models"]["nvswitch-gen3"] == 128 * 4


def test_peak_throughput_is_parts_times_counts(superpod, catalog):
    peaks = evaluate(superpod, catalog).as_dict()["compute"]["peak_tflops"]
    h100 = catalog["h100-sxm"].peak_tflops
    for precision, value in h100.items():
        assert peaks[precision] == pytest.approx(1024 * value, rel=1e-6)
    assert "tf32_sparse" in peaks


def test_memory_and_power(superpod, catalog):
    result = evaluate(superpod, catalog).as_dict()
    assert result["memory"]["hbm_gib"] == pytest.approx(1024 * catalog["h100-sxm"].number("memory_gib"))
    assert result["memory"]["hbm_tb_per_s"] == pytest.approx(1024 * catalog["h100-sxm"].number("memory_bw_tb_per_s"))
    dgx = catalog["dgx-h100"].number("system_power_w")
    switches = 48 * catalog["qm9700"].number("power_w")
    assert result["power"]["total_kw"] == pytest.approx((128 * dgx + switches) / 1000, rel=1e-4)


def test_removing_gpus_from_a_server_lowers_its_power(catalog):
    design = without_storage_and_spares(generate("server", catalog, platform="dgx-h100"))
    full = evaluate(design, catalog).as_dict()["power"]["total_kw"]
    design.remove_item("node.gpu7")
    assert evaluate(design, catalog).as_dict()["power"]["total_kw"] == pytest.approx(full - 0.7)


def test_bill_of_materials_counts_cables_and_transceivers(superpod, catalog):
    bom = evaluate(superpod, catalog).as_dict()["bom"]
    # 1,024 node-to-leaf cables and 1,024 leaf-to-spine cables, as in the SuperPOD reference.
    assert bom["cables_by_medium"]["ib-ndr"] == 2048
    assert bom["transceivers_by_medium"]["ib-ndr"] == 2048 * int(catalog["ib-ndr"].number("transceivers_per_cable"))
    # NVLink and PCIe inside a DGX are board traces, not cables.
    assert "nvlink4" not in bom["cables_by_medium"]
    rows = {(r["category"], r["part"]): r["quantity"] for r in bom["rows"]}
    assert rows[("accelerator", "h100-sxm")] == 1024


def test_result_is_immutable(superpod, catalog):
    result = evaluate(superpod, catalog)
    with pytest.raises(AttributeError):
        result.inventory.accelerators = 1
    with pytest.raises(TypeError):
        result.inventory.accelerator_models["h100-sxm"] = 1
    assert result.as_dict()["inventory"]["accelerators"] == 1024


def test_evaluation_does_not_change_the_design(superpod, catalog):
    before = (dict(superpod.items), dict(superpod.links))
    evaluate(superpod, catalog)
    assert (superpod.items, superpod.links) == before


def test_empty_design_evaluates(catalog):
    result = evaluate(Design(), catalog).as_dict()
    assert result["inventory"]["accelerators"] == 0 and result["power"]["total_kw"] == 0


def test_sram_accelerators_count_as_pooled_memory_not_hbm(catalog):
    d = Design()
    d.add_item(Item("d1", "accelerator", part="dojo-d1"))
    memory = evaluate(d, catalog).as_dict()["memory"]
    assert memory["hbm_gib"] == 0 and memory["sram_gib"] == pytest.approx(catalog["dojo-d1"].number("memory_gib"))
