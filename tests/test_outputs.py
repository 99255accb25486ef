"""Outputs destroy nothing: every command's output is a regular file or a new name, never one of the
command's inputs nor a built-in example; a sweep's results replace an old file only when the run
ends, keep every finished row however it ends, and CSV cells never run as spreadsheet formulas.
Special files are made in a temporary folder (mknod, mkfifo, a bound socket), never the system's."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer import cli
from designer.explore import runner
from designer.explore.results import CsvRows, ParquetRows
from designer.io.exports import spreadsheet_safe
from designer.io.files import save_design
from designer.io.outputs import OutputError, StreamedOutput, check_outputs
from designer.model.catalog import default_catalog
from designer.paths import examples_dir
from designer.topologies import generate

ROOT = Path(__file__).resolve().parent.parent
SWEEP = {"format": "cluster-designer-sweep", "version": 1, "template": "fat-tree", "params": {"nodes": [2, 4]},
         "keep": ["summary.power_kw"]}


def _special_files(folder: Path) -> dict[str, Path]:
    """One of each kind of file that is not a regular file, made here."""
    made = {"fifo": folder / "fifo", "folder": folder / "folder", "socket": folder / "sock"}
    os.mkfifo(made["fifo"])
    made["folder"].mkdir()
    bound = socket.socket(socket.AF_UNIX)
    bound.bind(str(made["socket"]))
    bound.close()
    try:  # a character device like /dev/full (1, 7); making one needs the superuser
        os.mknod(folder / "device", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        made["device"] = folder / "device"
    except PermissionError:
        pass
    return made


def _kinds(paths: dict[str, Path]) -> dict[str, int]:
    return {name: stat.S_IFMT(os.lstat(path).st_mode) for name, path in paths.items()}


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = cli.main(argv)
    return code, capsys.readouterr().err


@pytest.fixture
def sweep_file(tmp_path) -> Path:
    path = tmp_path / "s.sweep.json"
    path.write_text(json.dumps(SWEEP))
    return path


@pytest.fixture
def no_cluster(monkeypatch):
    """Fails the test if a command starts a Dask cluster: refusals come before any work."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("a cluster was started for a command that should have been refused")

    monkeypatch.setattr(runner, "dask_client", refuse)


def test_every_command_refuses_to_write_a_special_file_and_leaves_it_as_it_was(tmp_path, capsys, sweep_file,
                                                                              no_cluster):
    specials = _special_files(tmp_path)
    before = _kinds(specials)
    for name, path in specials.items():
        for argv in (["new", "--template", "fat-tree", "-o", str(path)],
                     ["export", "aws-p4de", "--csv", str(path)],
                     ["export", "aws-p4de", "--csv", str(tmp_path / "ok.csv"), "--bom", str(path)],
                     ["sweep", str(sweep_file), "-o", str(path)],
                     ["sweep", str(sweep_file), "-o", str(path), "--parquet"],
                     ["optimize", str(sweep_file), "-o", str(path)]):
            code, err = _run(argv, capsys)
            assert code == 2, (name, argv)
            assert err.count("\n") == 1 and str(path) in err and "not a regular file" in err, err
    assert _kinds(specials) == before
    # Nothing half-written was left beside them either.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([p.name for p in specials.values()] + ["s.sweep.json"])


def test_the_writers_themselves_refuse_a_special_file(tmp_path):
    specials = _special_files(tmp_path)
    design = generate("fat-tree", default_catalog(), nodes=2)
    for path in specials.values():
        with pytest.raises(Exception, match="not a regular file"):
            save_design(design, path)
        with pytest.raises(OSError, match="not a regular file"):
            StreamedOutput(path)
    assert all(not p.name.startswith(".") for p in tmp_path.iterdir())


def test_a_symbolic_link_to_a_device_is_refused_and_stays(tmp_path, capsys, no_cluster):
    link = tmp_path / "null.csv"
    link.symlink_to("/dev/null")
    code, err = _run(["export", "aws-p4de", "--csv", str(link)], capsys)
    assert code == 2 and "is a device" in err
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path, capsys, no_cluster):
    base = tmp_path / "base.cluster.json"
    save_design(generate("fat-tree", default_catalog(), nodes=2), base, backup=False)
    sweep = tmp_path / "b.sweep.json"
    sweep.write_text(json.dumps({"format": "cluster-designer-sweep", "version": 1, "base": "base.cluster.json",
                                 "keep": ["summary.power_kw"]}))
    hard_link = tmp_path / "same.csv"
    os.link(base, hard_link)
    catalog = tmp_path / "mine.catalog.json"
    catalog.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": []}))
    before = {p: p.read_bytes() for p in (base, sweep, catalog)}
    cases = [(["sweep", str(sweep), "-o", str(base)], "base.cluster.json"),
             (["sweep", str(sweep), "-o", str(sweep)], "b.sweep.json"),
             (["sweep", str(sweep), "-o", str(hard_link)], "base.cluster.json"),
             (["optimize", str(sweep), "-o", str(base)], "base.cluster.json"),
             (["export", str(base), "--csv", str(base)], "base.cluster.json"),
             (["export", str(base), "--csv", str(tmp_path / "a.csv"), "--json", str(tmp_path / "a.csv")], "--csv")]
    for argv, named in cases:
        code, err = _run(argv, capsys)
        assert code == 2 and named in err and err.count("\n") == 1, (argv, err)
    if _run(["--catalog", str(catalog), "examples"], capsys)[0] == 0:  # a catalogue this release reads
        code, err = _run(["--catalog", str(catalog), "new", "--template", "fat-tree", "-o", str(catalog)], capsys)
        assert code == 2 and "inputs" in err
    assert {p: p.read_bytes() for p in before} == before


def test_nothing_is_ever_written_into_the_built_in_examples(tmp_path, capsys, sweep_file, no_cluster):
    before = {p.name: p.read_bytes() for p in examples_dir().iterdir()}
    example = examples_dir() / "aws-p4de.cluster.json"
    for argv in (["new", "--template", "fat-tree", "-o", str(examples_dir() / "new.cluster.json")],
                 ["new", "--template", "fat-tree", "-o", str(example)],
                 ["export", "aws-p4de", "--csv", str(examples_dir() / "x.csv")],
                 ["sweep", str(sweep_file), "-o", str(examples_dir() / "rows.csv")],
                 ["optimize", str(sweep_file), "-o", str(examples_dir() / "best.cluster.json")]):
        code, err = _run(argv, capsys)
        assert code == 2 and "built-in examples" in err, (argv, err)
    assert {p.name: p.read_bytes() for p in examples_dir().iterdir()} == before
    assert _run(["examples"], capsys)[0] == 0


def test_check_outputs_names_the_option_and_the_problem(tmp_path):
    with pytest.raises(OutputError, match=r"^-o : is not a usable file name"):
        check_outputs([("-o", "")])
    with pytest.raises(OutputError, match="folder .* does not exist"):
        check_outputs([("-o", tmp_path / "missing" / "x.csv")])
    check_outputs([("-o", tmp_path / "new.csv")], [tmp_path / "other.json"])  # a new name is fine


# -- sweeps --------------------------------------------------------------------------------------

def test_a_sweep_that_cannot_reach_its_cluster_leaves_the_old_results_whole(tmp_path, capsys, sweep_file,
                                                                            monkeypatch):
    results = tmp_path / "rows.csv"
    results.write_text("point,old\n" + "".join(f"{i},x\n" for i in range(80)))
    before = results.read_bytes()

    def unreachable(*_args, **_kwargs):
        raise runner.SweepRunError("Dask scheduler tcp://127.0.0.1:9: cannot reach it (refused)")

    monkeypatch.setattr(runner, "dask_client", unreachable)
    code, err = _run(["sweep", str(sweep_file), "-o", str(results), "--scheduler", "tcp://127.0.0.1:9"], capsys)
    assert code == 2 and "cannot reach" in err
    assert results.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv", "s.sweep.json"]


def test_a_sweep_replaces_the_old_results_only_when_it_ends(tmp_path, capsys, sweep_file, monkeypatch):
    results = tmp_path / "rows.csv"
    results.write_text("old results\n")
    seen_during_run: list[bytes] = []
    real_run = runner.run_sweep

    def watching(sweep, client, on_row, **kwargs):
        def on_row_watched(row):
            seen_during_run.append(results.read_bytes())
            on_row(row)
        return real_run(sweep, client, on_row_watched, **kwargs)

    monkeypatch.setattr(runner, "run_sweep", watching)
    code, _err = _run(["sweep", str(sweep_file), "-o", str(results), "--workers", "1"], capsys)
    assert code == 0
    assert seen_during_run == [b"old results\n"] * 2
    rows = list(csv.DictReader(results.open(newline="")))
    assert [row["param.nodes"] for row in rows] == ["2", "4"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failure_midway_keeps_the_rows_so_far_under_the_final_name(tmp_path, capsys, monkeypatch):
    sweep_file = tmp_path / "s.sweep.json"
    sweep_file.write_text(json.dumps({**SWEEP, "params": {"nodes": [2, 4, 6, 8, 10, 12]}}))
    results = tmp_path / "rows.csv"
    results.write_text("old results\n")
    real_run = runner.run_sweep

    def losing_the_cluster(sweep, client, on_row, **kwargs):
        count = [0]

        def on_row_then_fail(row):
            on_row(row)
            count[0] += 1
            if count[0] == 3:
                raise runner.SweepRunError("Dask scheduler tcp://x:1: lost midway")
        return real_run(sweep, client, on_row_then_fail, **kwargs | {"batch": 1})

    monkeypatch.setattr(runner, "run_sweep", losing_the_cluster)
    code, err = _run(["sweep", str(sweep_file), "-o", str(results), "--workers", "1"], capsys)
    assert code == 2 and "lost midway" in err
    rows = list(csv.DictReader(results.open(newline="")))
    assert len(rows) == 3 and len({row["point"] for row in rows}) == 3


def test_a_full_disk_keeps_whole_rows_and_says_where_they_are(tmp_path):
    # RLIMIT_FSIZE stands in for a full disk, in a child process (the limit is per process).
    script = f"""
import resource, signal, sys
sys.path.insert(0, {str(ROOT)!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from designer.explore.results import CsvRows, ResultsError
rows = CsvRows({str(tmp_path / 'rows.csv')!r}, ["point", "text"])
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))
try:
    for i in range(1000):
        rows.write({{"point": i, "text": "x" * 37}})
except ResultsError as exc:
    print(exc)
    print(rows.temporary)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    message, temporary = done.stdout.splitlines()
    assert done.returncode == 0 and "cannot be written" in message and "rows before it are kept" in message, done
    lines = Path(temporary).read_text().splitlines()
    assert lines[0] == "point,text" and len(lines) > 5
    assert all(line == f"{i},{'x' * 37}" for i, line in enumerate(lines[1:])), "a half-written row"
    assert not (tmp_path / "rows.csv").exists()


def test_a_sweep_that_fills_the_disk_ends_in_one_line_with_its_whole_rows_in_place(tmp_path):
    sweep_file = tmp_path / "s.sweep.json"
    sweep_file.write_text(json.dumps({**SWEEP, "params": {"nodes": {"from": 2, "to": 60, "step": 2}}}))
    results = tmp_path / "rows.csv"
    script = f"""
import resource, signal, sys
sys.path.insert(0, {str(ROOT)!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, resource.RLIM_INFINITY))
from designer.cli import main
sys.exit(main(["sweep", {str(sweep_file)!r}, "-o", {str(results)!r}, "--workers", "1"]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "rows.csv: cannot be written" in errors[0] and "rows before it are kept" in errors[0]
    rows = list(csv.DictReader(results.open(newline="")))
    assert 0 < len(rows) < 30
    assert all(row["design"].endswith("}") for row in rows), "a half-written row"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("parquet", [False, True])
def test_a_sweep_killed_midway_leaves_the_old_file_and_every_finished_row(tmp_path, parquet):
    sweep_file = tmp_path / "s.sweep.json"
    sweep_file.write_text(json.dumps({**SWEEP, "params": {"nodes": {"from": 2, "to": 400, "step": 2}}}))
    results = tmp_path / ("rows.parquet" if parquet else "rows.csv")
    results.write_bytes(b"old results\n")
    process = subprocess.Popen([sys.executable, "-m", "designer.cli", "sweep", str(sweep_file), "-o", str(results),
                                "--workers", "1", *(["--parquet"] if parquet else [])],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               start_new_session=True)
    try:
        announced = process.stderr.readline()
        assert "rows go to" in announced, announced
        temporary = Path(announced.split("rows go to ", 1)[1].split(" until", 1)[0])
        deadline = time.monotonic() + 300
        while temporary.read_text().count("\n") < 20 and time.monotonic() < deadline and process.poll() is None:
            process.stderr.readline()  # the progress lines: a wait on the process, not a sleep
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert results.read_bytes() == b"old results\n"
    lines = temporary.read_text().splitlines()
    kept = [json.loads(line) for line in lines] if parquet else list(csv.reader(lines))[1:]
    assert len(kept) >= 19
    assert len({row[0] for row in kept}) == len(kept)


def test_parquet_keeps_every_value_when_a_column_mixes_numbers_and_text(tmp_path):
    import pyarrow.parquet as pq

    header = ["point", "figure", "meets", "error"]
    rows = ParquetRows(tmp_path / "r.parquet", header)
    for i in range(600):  # past any first group of rows a writer might fix the types from
        rows.write({"point": i, "figure": 1.5 * i if i < 500 else "n/a", "meets": i % 2 == 0,
                    "error": None if i < 599 else "no plan fits"})
    rows.finish()
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.num_rows == 600
    assert str(table.schema.field("point").type) == "int64" and str(table.schema.field("meets").type) == "bool"
    figure = table.column("figure").to_pylist()
    assert figure[2] == "3.0" and figure[-1] == "n/a" and None not in figure
    assert table.column("error").to_pylist()[-1] == "no plan fits"


def test_parquet_without_a_usable_output_is_refused_before_the_first_point(tmp_path, capsys, sweep_file,
                                                                          no_cluster):
    code, err = _run(["sweep", str(sweep_file), "-o", str(tmp_path / "nowhere" / "r.parquet"), "--parquet"], capsys)
    assert code == 2 and "does not exist" in err


# -- spreadsheet formulas ------------------------------------------------------------------------

def test_text_that_starts_like_a_formula_is_escaped_and_numbers_are_not():
    assert spreadsheet_safe("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert [spreadsheet_safe(t) for t in ("+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tx")] == \
        ["'+cmd|' /C calc'!A0", "'-2+3", "'@SUM(1)", "'\tx"]
    assert [spreadsheet_safe(v) for v in ("-12.5", "+3", "-1e-3", -4, 2.5, "plain")] == \
        ["-12.5", "+3", "-1e-3", -4, 2.5, "plain"]


def test_no_csv_the_tool_writes_holds_a_formula(tmp_path, capsys, monkeypatch):
    design = generate("fat-tree", default_catalog(), nodes=2)
    design.name = "=HYPERLINK(\"http://evil\",\"x\")"
    first = next(iter(design.items.values()))
    design.update_item(first.id, name="@SUM(A1:A9)")
    path = tmp_path / "=evil.cluster.json"
    save_design(design, path, backup=False)
    out = tmp_path / "s.csv"
    assert _run(["export", str(path), "--csv", str(out), "--bom", str(tmp_path / "b.csv")], capsys)[0] == 0
    texts = [out.read_text(), (tmp_path / "b.csv").read_text()]
    monkeypatch.chdir(tmp_path)
    code = cli.main(["compare", path.name, "aws-p4de", "--csv"])
    texts.append(capsys.readouterr().out)
    assert code == 0
    assert any("'=HYPERLINK" in text or "'=evil" in text for text in texts), "the formula never reached a CSV"
    for text in texts:
        for row in csv.reader(text.splitlines()):
            for cell in row:
                assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
                assert not (cell.startswith("-") and not _number(cell)), cell


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_a_streamed_output_abandoned_leaves_the_target_as_it_was(tmp_path):
    target = tmp_path / "r.csv"
    target.write_text("old")
    output = StreamedOutput(target)
    output.append(b"new rows\n")
    output.abandon()
    assert target.read_text() == "old" and list(tmp_path.iterdir()) == [target]
    rows = CsvRows(target, ["a"])
    rows.write({"a": 1})
    rows.finish()
    assert target.read_text() == "a\n1\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644

