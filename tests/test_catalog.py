import json
from pathlib import Path

import pytest

from designer.model.catalog import PRECISIONS, CatalogError, load_catalog, read_catalog_file

REQUIRED = {
    "accelerator": ["v100-sxm2-32gb", "a100-sxm-80gb", "h100-sxm", "h100-pcie", "h200-sxm", "h800-sxm", "b200",
                    "gb200", "mi250x", "mi300x", "tpu-v4", "dojo-d1", "cs-2"],
    "nic": ["cx6-hdr", "cx7-ndr", "cx7-400gbe", "efa-v2", "ipu-200g"],
    "switch": ["nvswitch-gen2", "nvswitch-gen3", "qm8700", "qm9700", "sn5600", "fabrex-pcie5", "tpu-ocs"],
    "server": ["dgx-a100", "dgx-h100", "hgx-h200", "mi300x-platform", "supernode-32"],
    "rack": ["rack-42u", "rack-48u"],
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


@pytest.mark.parametrize("kind,ids", REQUIRED.items())
def test_required_parts_exist_with_their_kind(catalog, kind, ids):
    for part_id in ids:
        assert part_id in catalog, part_id
        assert catalog[part_id].kind == kind
        assert catalog[part_id].source.strip()


def test_every_link_medium_family_is_present(catalog):
    families = {(p.get("family"), p.id) for p in catalog.of_kind("medium")}
    names = {f for f, _ in families}
    assert {"nvlink", "pcie", "infiniband", "ethernet", "ici", "fabrex"} <= names
    ids = {i for _, i in families}
    for medium in ["nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie-gen3", "pcie-gen4", "pcie-gen5",
                   "ib-hdr", "ib-ndr", "ib-xdr", "eth-100g", "eth-200g", "eth-400g", "eth-800g"]:
        assert medium in ids, medium


def test_reference_figures(catalog):
    h100 = catalog["h100-sxm"].peak_tflops
    assert h100["fp64"] == 34 and h100["fp64_tensor"] == 67
    assert h100["bf16"] == pytest.approx(989.4) and h100["bf16_sparse"] == pytest.approx(1978.9)
    assert h100["int8_sparse"] == 3958
    a100 = catalog["a100-sxm-80gb"]
    assert a100.peak_tflops["bf16"] == 312 and a100.peak_tflops["tf32_sparse"] == 312
    assert a100.number("memory_gib") == 80
    assert catalog["mi300x"].number("memory_gib") == 192
    assert catalog["tpu-v4"].peak_tflops["bf16"] == 275
    assert catalog["qm9700"].number("ports") == 64
    assert catalog["rack-48u"].number("power_budget_kw") > 0


def test_precision_keys_are_known_and_units_in_field_names(catalog):
    for part in catalog.of_kind("accelerator"):
        assert set(part.peak_tflops) <= set(PRECISIONS)
        assert "bf16" in part.peak_tflops, part.id


def _write(tmp_path, parts, name="catalog.json", **top):
    document = {"format": "cluster-designer-catalog", "version": 1, "parts": parts, **top}
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_user_catalog_adds_and_overrides(tmp_path):
    base = load_catalog(include_user=False)
    shipped = json.loads(Path(base["h100-sxm"].origin).read_text())["parts"]
    changed = next(p for p in shipped if p["id"] == "h100-sxm")
    changed["power_w"] = 650
    new_part = {"id": "my-accel", "kind": "accelerator", "name": "My accelerator", "source": "our lab, 2026",
                "memory_gib": 64, "memory_bw_tb_per_s": 2, "power_w": 300, "peak_tflops": {"bf16": 500},
                "media": ["pcie-gen5"]}
    path = _write(tmp_path, [changed, new_part])
    catalog = load_catalog(path, include_user=False)
    assert catalog["h100-sxm"].number("power_w") == 650
    assert catalog["my-accel"].peak_tflops["bf16"] == 500
    assert base["h100-sxm"].number("power_w") == 700


def test_user_catalog_in_config_folder_is_read(tmp_path, monkeypatch):
    folder = tmp_path / "cluster-designer"
    folder.mkdir()
    _write(folder, [{"id": "rack-tiny", "kind": "rack", "name": "Tiny rack", "source": "ours", "height_u": 4,
                     "power_budget_kw": 1}])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert "rack-tiny" in load_catalog()


_SERVER = {"id": "s1", "kind": "server", "name": "x", "source": "s", "height_u": 1, "system_power_w": 1,
           "accelerator_slots": 8}


@pytest.mark.parametrize("entry,field,problem", [
    ({"id": "Bad_Id", "kind": "rack", "name": "x", "source": "s", "height_u": 1, "power_budget_kw": 1}, "id",
     "kebab-case"),
    ({"id": "r1", "kind": "rack", "name": "x", "source": "s", "height_u": -1, "power_budget_kw": 1}, "height_u",
     "got -1 (part 'r1')"),
    ({"id": "r1", "kind": "rack", "name": "x", "source": "s", "height_u": "tall", "power_budget_kw": 1}, "height_u",
     "got \"tall\""),
    ({"id": "r1", "kind": "rack", "name": "x", "source": "", "height_u": 1, "power_budget_kw": 1}, "source",
     "non-empty"),
    ({"id": "r1", "kind": "rack", "name": "x", "source": "s", "height_u": 1}, "", "missing field 'power_budget_kw'"),
    ({"id": "r1", "kind": "robot", "name": "x", "source": "s"}, "kind", "expected one of"),
    ({"id": "g1", "kind": "accelerator", "name": "x", "source": "s", "memory_gib": 1, "memory_bw_tb_per_s": 1,
      "power_w": 1, "peak_tflops": {"fp4": 3}}, "peak_tflops", "unknown field \"fp4\""),
    ({"id": "g1", "kind": "accelerator", "name": "x", "source": "s", "memory_gib": 1, "memory_bw_tb_per_s": 1,
      "power_w": 1, "media": ["warp-drive"]}, "media[0]", "unknown medium 'warp-drive'"),
    # Found by fuzzing: each crashed, or was accepted, before the catalogue had a schema.
    (_SERVER | {"scale_up": {"switch": "nvswitch-gen3", "switches": -4}}, "scale_up.switches", "got -4"),
    (_SERVER | {"scale_up": {"switch": "nvswitch-gen3", "switches": "4"}}, "scale_up.switches", "got \"4\""),
    (_SERVER | {"scale_up": [1]}, "scale_up", "expected an object"),
    (_SERVER | {"default_nics": 4}, "default_nics", "no default_nic"),
    (_SERVER | {"accelerator_slots": 10 ** 9}, "accelerator_slots", "from 0 to 256"),
    ({"id": "m1", "kind": "medium", "name": "x", "source": "s", "lane_gb_per_s": 1, "latency_ns": 1, "tier": 3},
     "tier", "got 3"),
    ({"id": "r1", "kind": "rack", "name": "x", "source": "s", "height_u": 1, "power_budget_kw": 1e308},
     "power_budget_kw", "at most 10,000 kW"),
    ({"id": "nvswitch-gen3", "kind": "nic", "name": "x", "source": "s", "port_gbps": 1, "ports": 1}, "kind",
     "overrides a switch"),
])
def test_malformed_catalogue_names_the_users_file_and_json_path(tmp_path, entry, field, problem):
    path = _write(tmp_path, [entry])
    with pytest.raises(CatalogError) as caught:
        load_catalog(path, include_user=False)
    message = str(caught.value)
    assert message.startswith(f"{path}: $.parts[0]{'.' + field if field else ''}: ")
    assert problem in message and "\n" not in message


def test_catalogue_that_is_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "mine.json"
    path.write_bytes(b'{"format": "cluster-designer-catalog", "version": 1, "parts": [{"name": "\xff"}]}')
    with pytest.raises(CatalogError, match=r"mine.json: is not UTF-8 text \(byte 73 is 0xff\)"):
        load_catalog(path, include_user=False)


def test_malformed_catalogue_json_is_refused_with_position(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "cluster-designer-catalog", "version": 1, "parts": [}')
    with pytest.raises(CatalogError, match=r"broken.json: not valid JSON \(line 1"):
        read_catalog_file(path)
