import csv
import json
import subprocess
import sys

import pytest

from designer.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def design_path(tmp_path, capsys):
    path = tmp_path / "pod.cluster.json"
    code, out, _ = run(capsys, "new", "--template", "rail-fat-tree", "--set", "nodes=64", "--set", "nodes_per_su=32",
                       "-o", str(path))
    assert code == 0 and path.exists()
    return path


def test_templates_lists_generators_and_parameters(capsys):
    code, out, _ = run(capsys, "templates")
    assert code == 0
    for name in ("server", "rail-fat-tree", "fat-tree", "torus", "pcie-fabric"):
        assert f"{name}:" in out
    assert "oversubscription" in out and "nics_per_node" in out


def test_evaluate_json_contract(capsys, design_path):
    code, out, _ = run(capsys, "evaluate", str(design_path), "--json")
    assert code == 0
    result = json.loads(out)
    inv = result["inventory"]
    assert inv["accelerators"] == 512 and inv["accelerator_models"] == {"h100-sxm": 512}
    assert inv["servers"] == 64 and inv["switches"] > 0 and "racks" in inv
    peaks = result["compute"]["peak_tflops"]
    assert set(peaks) == {"fp64", "fp64_tensor", "fp32", "tf32", "tf32_sparse", "bf16", "bf16_sparse",
                          "fp8", "fp8_sparse", "int8", "int8_sparse"}
    assert peaks["bf16"] == pytest.approx(512 * 989.4)
    assert result["memory"]["hbm_gib"] == pytest.approx(512 * 80)
    assert result["memory"]["hbm_tb_per_s"] > 0 and result["power"]["total_kw"] > 0
    assert isinstance(result["lint"], list)


def test_evaluate_table_is_readable(capsys, design_path):
    code, out, _ = run(capsys, "evaluate", str(design_path))
    assert code == 0
    assert "Accelerators" in out and "Peak BF16/FP16" in out and "TFLOPS" in out and "kW" in out


def test_export_writes_summary_and_bom(capsys, design_path, tmp_path):
    summary, bom = tmp_path / "s.csv", tmp_path / "b.csv"
    code, _, _ = run(capsys, "export", str(design_path), "--csv", str(summary), "--bom", str(bom))
    assert code == 0
    rows = list(csv.reader(summary.open()))
    assert rows[0] == ["metric", "value", "unit"]
    assert ["Accelerators", "512", "count"] in rows
    bom_rows = list(csv.DictReader(bom.open()))
    assert {"category": "accelerator", "part": "h100-sxm"}.items() <= next(
        r for r in bom_rows if r["part"] == "h100-sxm").items()
    assert any(r["category"] == "cable" for r in bom_rows)


@pytest.mark.parametrize("argv,fragment", [
    (["evaluate", "/nonexistent/x.cluster.json"], "cannot be read"),
    (["new", "--template", "rail-fat-tree", "--set", "nodes=-3", "-o", "/tmp/never.cluster.json"], "parameter 'nodes'"),
    (["new", "--template", "warp", "-o", "/tmp/never.cluster.json"], "unknown template 'warp'"),
    (["new", "--template", "server", "--set", "oops", "-o", "/tmp/never.cluster.json"], "KEY=VALUE"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert err.startswith("cluster-designer: error: ")


def test_bad_file_from_the_shell_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.cluster.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "designer", "evaluate", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and str(bad) in proc.stderr and "not valid JSON" in proc.stderr


def test_catalog_option_adds_parts(capsys, tmp_path):
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": [
        {"id": "big-rack", "kind": "rack", "name": "Big rack", "source": "ours", "height_u": 52,
         "power_budget_kw": 200}]}))
    out = tmp_path / "d.cluster.json"
    code, _, err = run(capsys, "--catalog", str(extra), "new", "--template", "rail-fat-tree", "--set", "rack=big-rack",
                       "-o", str(out))
    assert code == 0, err
    assert "big-rack" in out.read_text()


def test_malformed_catalog_option_exits_2(capsys, tmp_path):
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1,
                                 "parts": [{"id": "x", "kind": "rack"}]}))
    code, _, err = run(capsys, "--catalog", str(extra), "templates")
    assert code == 2 and f"{extra}: $.parts[0]: missing field 'name' (part 'x')" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    from designer import __version__

    assert capsys.readouterr().out.strip() == f"cluster-designer {__version__}"
