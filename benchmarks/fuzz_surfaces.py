"""Fuzz the surfaces added after the design files: sweep, optimize, compare, `--fail` and every
command's output, through `cluster-designer`'s own entry point (in this process, on one in-process
Dask cluster, so thousands of cases fit in minutes), plus a few sweeps killed with SIGKILL midway.

    .venv/bin/python benchmarks/fuzz_surfaces.py --count 5000 --kills 10 --seed 1

Outputs are aimed at special files made here (a FIFO, a socket, a folder, a character device made
with mknod, a symbolic link to /dev/null), at the commands' own inputs, at the built-in examples,
at missing folders and at results files from an earlier run. Each case must work or be refused
with one line; after each one the special files must still be what they were, the examples
unchanged, and a results file must hold exactly the rows the command said it wrote (all of them
when it ends normally). A killed sweep must leave the old results file as it was and every
finished row, whole, in its temporary file. The run prints the counts and exits 1 if any of
tracebacks, hangs (over 10 s), writes to a file that is not a regular file, lost rows or refusals
that are not one line is not zero. `fuzz.py --surfaces N` runs N of these cases too.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import hashlib
import io
import json
import os
import random
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")  # read when Dask is imported

from designer import cli  # noqa: E402
from designer.explore import runner  # noqa: E402
from designer.io.files import save_design  # noqa: E402
from designer.model.catalog import default_catalog  # noqa: E402
from designer.paths import examples_dir  # noqa: E402
from designer.topologies import generate  # noqa: E402

HANG_S = 10  # wall time of one case (the in-process cluster's threads count towards CPU time too)
MAX_POINTS = 24  # larger sweeps are legitimate but slow: such a case is counted and not run
NASTY = [-1, 0, 1, 2, 3, 2 ** 63, 1e308, -0.0, 0.5, True, False, None, "", "x" * 3000, "auto", "nan", "1e999",
         "=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "\u202e\ud800", "../../etc/passwd",
         "/dev/zero", "design", "point", "summary.power_kw", "training.days", "cost.capital_usd", "h100-sxm",
         "cx7-ndr", "ib-ndr", [], {}, [1, True], {"from": 2, "to": 8, "step": 2}, {"from": 1, "to": 1e9, "factor": 1.0}]
SCHEDULERS = ["ucx://127.0.0.1:1", "tls://127.0.0.1:1", "http://127.0.0.1:1", "inproc://x", "", "::::", "tcp://",
              "tcp://999.1.1.1:1", "a" * 300, "tcp://[::1", "tcp://host:notaport"]
WORKERS = ["0", "-1", "99999999999999999999", "x", "1e3", "257", "100000"]


class HangError(Exception):
    pass


def _alarm(_signum, _frame):
    raise HangError()


class Tally:
    KINDS = ("cases", "worked", "refused", "skipped large", "tracebacks", "hangs", "special writes", "rows lost",
             "examples changed", "unplaced refusals")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(self.KINDS, 0)
        self.by_surface: dict[str, int] = {}
        self.failures: list[str] = []
        self.slowest = (0.0, "")

    def bad(self, kind: str, label: str, detail: str) -> None:
        self.counts[kind] += 1
        self.failures.append(f"{kind}: {label}: {detail}"[:900])


# -- the place the cases write in --------------------------------------------------------------

class Workspace:
    """A temporary folder with inputs, special files and results files, and their fingerprints."""

    def __init__(self, folder: Path):
        self.folder = folder
        catalog = default_catalog()
        self.design = folder / "tiny.cluster.json"
        save_design(generate("fat-tree", catalog, nodes=2), self.design, backup=False)
        self.server = folder / "server.cluster.json"
        save_design(generate("server", catalog), self.server, backup=False)
        self.special_dir = folder / "special"
        self.special_dir.mkdir()
        self.specials = self._make_specials()
        self.special_kinds = self._kinds()
        self.examples = self._examples()

    def _make_specials(self) -> dict[str, Path]:
        d = self.special_dir
        made = {"fifo": d / "fifo.csv", "folder": d / "folder.cluster.json", "socket": d / "sock.csv",
                "to-dev-null": d / "null.csv", "fifo-design": d / "fifo.cluster.json", "loop": d / "loop.csv"}
        os.mkfifo(made["fifo"])
        os.mkfifo(made["fifo-design"])
        made["folder"].mkdir()
        bound = socket.socket(socket.AF_UNIX)
        bound.bind(str(made["socket"]))
        bound.close()
        made["to-dev-null"].symlink_to("/dev/null")
        made["loop"].symlink_to(made["loop"])
        try:  # like /dev/full; making a device needs the superuser
            os.mknod(d / "full.csv", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            made["device"] = d / "full.csv"
        except PermissionError:
            pass
        return made

    def _kinds(self) -> dict[str, tuple]:
        out = {}
        for name, path in self.specials.items():
            found = os.lstat(path)
            out[name] = (stat.S_IFMT(found.st_mode), found.st_rdev, os.readlink(path) if path.is_symlink() else "")
        out["/dev/null"] = (stat.S_IFMT(os.stat("/dev/null").st_mode),)
        out["special folder"] = (tuple(sorted(os.listdir(self.special_dir))),)
        return out

    def specials_intact(self) -> str | None:
        now = self._kinds()
        changed = [name for name in self.special_kinds if now.get(name) != self.special_kinds[name]]
        return ", ".join(changed) or None

    @staticmethod
    def _examples() -> str:
        digest = hashlib.sha256()
        for path in sorted(examples_dir().iterdir()):
            digest.update(path.name.encode())
            if path.is_file():
                digest.update(path.read_bytes())
        return digest.hexdigest()

    def examples_intact(self) -> bool:
        return self._examples() == self.examples

    def output(self, rng: random.Random, inputs: list[Path], suffix: str) -> Path | str:
        """Where a case writes: usually a new name, else something that must not be written."""
        choice = rng.random()
        if choice < 0.45:
            return self.folder / f"out-{rng.randrange(10 ** 9)}{suffix}"
        if choice < 0.7:
            return rng.choice(list(self.specials.values()))
        if choice < 0.8 and inputs:
            return rng.choice(inputs)
        if choice < 0.87:
            return examples_dir() / rng.choice([f"new{suffix}", "aws-p4de.cluster.json"])
        if choice < 0.93:
            return self.folder / "missing" / f"x{suffix}"
        return rng.choice(["", "a\0b", "x" * 5000, self.folder / f"old-results{suffix}"])


# -- cases -------------------------------------------------------------------------------------

def _mutate(doc, rng: random.Random):
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        keys = list(doc)
        key = rng.choice(keys + ["keep", "constraints", "goal", "params", "parts", "base", "extra"])
        op = rng.random()
        if op < 0.5:
            doc[key] = copy.deepcopy(rng.choice(NASTY))
        elif op < 0.7 and isinstance(doc.get(key), list):
            doc[key] = [*doc[key], copy.deepcopy(rng.choice(NASTY))]
        elif op < 0.85 and isinstance(doc.get(key), dict) and doc[key]:
            inner = rng.choice(list(doc[key]))
            doc[key][inner] = copy.deepcopy(rng.choice(NASTY))
        else:
            doc.pop(key, None)
    return doc


def sweep_document(ws: Workspace, rng: random.Random, goal: bool) -> dict:
    keep = rng.sample(["summary.power_kw", "summary.accelerators", "cost.capital_usd", "training.days",
                       "training.mfu", "training.plan", "summary.peak_bf16_fp16_tflops"], rng.randint(0, 3))
    doc: dict = {"format": "cluster-designer-sweep", "version": 1, "keep": keep}
    if rng.random() < 0.6:
        doc["template"] = rng.choice(["fat-tree", ["fat-tree", "rail-only"], "server"])
        doc["params"] = {"nodes": rng.choice([[2], [2, 4], {"from": 2, "to": 6, "step": 2}])} \
            if doc["template"] != "server" else {}
    else:
        doc["base"] = rng.choice([str(ws.design), ws.design.name, str(ws.server), "aws-p4de",
                                  str(ws.specials["fifo"]), "/dev/zero", str(ws.specials["loop"]), "/etc/passwd",
                                  str(ws.special_dir), ""])
        doc["parts"] = rng.choice([{}, {"h100-sxm": ["h100-sxm", "h200-sxm"]}, {"h100-sxm": ["cx7-ndr"]},
                                   {"cx7-ndr": ["cx7-400gbe"]}])
    if rng.random() < 0.5:
        doc["workloads"] = [{"model": rng.choice(["megatron-1.7b", "llama2-7b"]), "tokens": 1e9}]
    if rng.random() < 0.5:
        doc["constraints"] = rng.sample(["summary.power_kw <= 100", "training.days <= 1e6",
                                         "summary.accelerators >= 8", "training.plan <= 3"], rng.randint(1, 2))
    if goal:
        doc["goal"] = {rng.choice(["minimize", "maximize"]): rng.choice(
            ["summary.power_kw", "cost.capital_usd", "training.days", "training.plan", "summary.name"])}
    return _mutate(doc, rng) if rng.random() < 0.5 else doc


def sweep_case(ws: Workspace, rng: random.Random, index: int, optimize: bool) -> tuple[list[str], dict]:
    doc = sweep_document(ws, rng, goal=optimize)
    path = ws.folder / f"case-{index}.sweep.json"
    text = json.dumps(doc)
    if rng.random() < 0.05:
        text = text[: rng.randrange(len(text))]
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    parquet = not optimize and rng.random() < 0.25
    suffix = ".parquet" if parquet else ".csv" if not optimize else ".cluster.json"
    inputs = [path] + ([Path(doc["base"])] if isinstance(doc.get("base"), str) and doc["base"].startswith("/")
                       else [])
    out = ws.output(rng, inputs, suffix)
    argv = ["optimize" if optimize else "sweep", str(path)]
    if not optimize or rng.random() < 0.7:
        argv += ["-o", str(out)]
    if parquet:
        argv.append("--parquet")
    if rng.random() < 0.08:
        argv += ["--scheduler", rng.choice(SCHEDULERS)]
    if rng.random() < 0.08:
        argv += ["--workers", rng.choice(WORKERS)]
    return argv, {"output": out if "-o" in argv else None, "sweep": path, "parquet": parquet}


def fail_flags(rng: random.Random, design_path: Path) -> list[str]:
    doc = json.loads(design_path.read_text())
    ids = [item["id"] for item in doc["items"]] + [link["id"] for link in doc["links"]]
    media = sorted({link["medium"] for link in doc["links"]}) + ["ib-ndr", "nvlink4", "h100-sxm"]
    flags = []
    for _ in range(rng.choice((1, 2, 3, 10, 200, 3000))):
        target = rng.choice(ids + media) if rng.random() < 0.9 else str(rng.choice(NASTY))
        amount = rng.random()
        suffix = "" if amount < 0.3 else f":{rng.choice([1, 2, 7, 10 ** 6, 0, -1])}" if amount < 0.6 else \
            f":{rng.choice(['50%', '1%', '100%', '0%', '101%', '1e-9%', 'nan%', '%', 'x'])}"
        flags += ["--fail", f"{target}{suffix}"]
    return flags


def fail_case(ws: Workspace, rng: random.Random) -> tuple[list[str], dict]:
    design = rng.choice([ws.design, ws.server])
    return ["evaluate", str(design), *(["--json"] if rng.random() < 0.5 else []), *fail_flags(rng, design)], {}


def compare_case(ws: Workspace, rng: random.Random, index: int) -> tuple[list[str], dict]:
    files = []
    for n in range(rng.choice((1, 2, 2, 3))):
        choice = rng.random()
        if choice < 0.5:
            files.append(str(rng.choice([ws.design, ws.server])))
        elif choice < 0.7:
            files.append(rng.choice(["aws-p4de", "dgx", "nvidia-superpod-h100-4su"]))
        elif choice < 0.85:
            folder = ws.folder / f"c{index}-{n}"
            folder.mkdir(exist_ok=True)
            copy_path = folder / ws.design.name  # same file name in two folders: two columns of one name
            copy_path.write_bytes(ws.design.read_bytes())
            files.append(str(copy_path))
        else:
            files.append(str(rng.choice(list(ws.specials.values()))))
    argv = ["compare", *files, *rng.choice([[], ["--csv"], ["--json"]])]
    if rng.random() < 0.3:
        argv += fail_flags(rng, ws.design)[:6]
    return argv, {}


def output_case(ws: Workspace, rng: random.Random) -> tuple[list[str], dict]:
    if rng.random() < 0.4:
        out = ws.output(rng, [], ".cluster.json")
        return ["new", "--template", rng.choice(["fat-tree", "server"]), "-o", str(out)], {}
    design = rng.choice([ws.design, ws.server])
    argv = ["export", str(design)]
    for option, suffix in (("--csv", ".csv"), ("--bom", ".csv"), ("--json", ".json")):
        if option == "--csv" or rng.random() < 0.4:
            argv += [option, str(ws.output(rng, [design], suffix))]
    if rng.random() < 0.2:
        argv += fail_flags(rng, design)[:4]
    return argv, {}


# -- running -----------------------------------------------------------------------------------

@contextlib.contextmanager
def _shared_cluster():
    """One in-process Dask cluster for every case that does not name its own scheduler or workers
    (those go through the real `dask_client`, which must refuse them quickly)."""
    from dask.distributed import Client, LocalCluster

    real = runner.dask_client
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0")
    client = Client(cluster)

    @contextlib.contextmanager
    def shared(scheduler=None, workers=None, processes=True):
        if scheduler is not None or workers is not None:
            with real(scheduler, workers, processes) as own:
                yield own
            return
        yield client

    runner.dask_client = shared
    try:
        yield
    finally:
        runner.dask_client = real
        client.close()
        cluster.close()


def _rows_in(path: Path, parquet: bool) -> int | None:
    try:
        if parquet:
            import pyarrow.parquet as pq

            return pq.read_metadata(path).num_rows
        with open(path, newline="", encoding="utf-8") as handle:
            return max(0, sum(1 for _ in csv.reader(handle)) - 1)
    except Exception:  # noqa: BLE001 - unreadable counts as lost rows
        return None


def run_case(surface: str, argv: list[str], facts: dict, ws: Workspace, tally: Tally, rng: random.Random) -> None:
    tally.counts["cases"] += 1
    tally.by_surface[surface] = tally.by_surface.get(surface, 0) + 1
    label = f"{surface}: {' '.join(argv)[:300]}"
    if "sweep" in facts:
        label += f" <{facts['sweep'].read_text(errors='replace')[:400]}>"
    output = facts.get("output")
    old = None
    if output is not None and isinstance(output, Path) and output.name.startswith("old-results"):
        old = f"point,old\n{rng.randrange(100)},x\n".encode()
        output.write_bytes(old)
    if surface in ("sweep", "optimize"):
        from designer.explore.spec import load_sweep
        try:
            if load_sweep(facts["sweep"]).count() > MAX_POINTS:
                tally.counts["skipped large"] += 1
                return
        except Exception:  # noqa: BLE001 - the command itself must refuse it: run it
            pass
    err, out = io.StringIO(), io.StringIO()
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    code: int | None = None
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = cli.main(argv)
    except HangError:
        tally.bad("hangs", label, f"over {HANG_S} s")
    except SystemExit as exc:  # argparse's usage errors: its own two-line usage message, exit 2
        code = exc.code if isinstance(exc.code, int) else 2
        if code != 2:
            tally.bad("tracebacks", label, f"SystemExit({exc.code!r})")
    except BaseException:  # noqa: BLE001 - counting what escapes is the point
        tally.bad("tracebacks", label, traceback.format_exc(limit=-4).replace("\n", " | "))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    elapsed = time.monotonic() - started
    if elapsed > tally.slowest[0]:
        tally.slowest = (elapsed, label)
    text = err.getvalue()
    if code == 2:
        errors = [line for line in text.splitlines() if line.startswith("cluster-designer: error:")]
        usage = "usage: cluster-designer" in text
        if not usage and (len(errors) != 1 or len(errors[0]) > 400 or "Traceback" in text):
            tally.bad("unplaced refusals", label, text[-400:].replace("\n", " | "))
        tally.counts["refused"] += 1
    elif code in (0, 1):
        tally.counts["worked"] += 1
    elif code is not None:
        tally.bad("tracebacks", label, f"exit {code}: {text[-300:]}")
    changed = ws.specials_intact()
    if changed:
        tally.bad("special writes", label, f"changed: {changed}")
        ws.special_kinds = ws._kinds()
    if surface == "sweep" and isinstance(output, Path):
        _check_rows(label, code, text, output, old, facts, tally)


def _check_rows(label: str, code, text: str, output: Path, old: bytes | None, facts: dict, tally: Tally) -> None:
    wrote = re.search(r"wrote .*: ([\d,]+) rows of ([\d,]+) points", text)
    if wrote is None:
        # Nothing written: an existing results file must be as it was.
        if old is not None and output.read_bytes() != old:
            tally.bad("rows lost", label, "a run that wrote no rows changed the old results")
        return
    rows, points = (int(g.replace(",", "")) for g in wrote.groups())
    found = _rows_in(output, facts["parquet"])
    if found != rows or (code == 0 and rows != points):
        tally.bad("rows lost", label, f"said {rows} of {points}, the file holds {found}")


def kill_case(ws: Workspace, rng: random.Random, index: int, tally: Tally) -> None:
    """A sweep killed with SIGKILL midway: the old results untouched, every row whole in the temporary."""
    tally.counts["cases"] += 1
    tally.by_surface["kill -9"] = tally.by_surface.get("kill -9", 0) + 1
    parquet = rng.random() < 0.5
    sweep = ws.folder / f"kill-{index}.sweep.json"
    sweep.write_text(json.dumps({"format": "cluster-designer-sweep", "version": 1, "template": "fat-tree",
                                 "params": {"nodes": {"from": 2, "to": 600, "step": 2}},
                                 "keep": ["summary.power_kw", "training.plan"]}))
    output = ws.folder / f"kill-{index}.{'parquet' if parquet else 'csv'}"
    output.write_bytes(b"old results\n")
    label = f"kill -9 {output.name}"
    process = subprocess.Popen([sys.executable, "-m", "designer.cli", "sweep", str(sweep), "-o", str(output),
                                "--workers", "1", *(["--parquet"] if parquet else [])], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    wanted = rng.choice((1, 5, 40, 120))
    temporary = None
    try:
        first = process.stderr.readline()
        found = re.search(r"rows go to (.*) until the run ends", first)
        if found is None:
            tally.bad("tracebacks", label, f"no temporary announced: {first!r}")
            return
        temporary = Path(found.group(1))
        deadline = time.monotonic() + 600
        while process.poll() is None and time.monotonic() < deadline and \
                temporary.read_bytes().count(b"\n") < wanted + 1:
            process.stderr.readline()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    if output.read_bytes() != b"old results\n":
        tally.bad("rows lost", label, "the old results changed")
    lines = temporary.read_text(encoding="utf-8").splitlines() if temporary and temporary.exists() else []
    try:
        rows = [json.loads(line) for line in lines] if parquet else list(csv.reader(lines))[1:]
        points = [row[0] for row in rows]
        whole = all(len(row) == len(rows[0]) for row in rows) and len(set(points)) == len(points)
    except ValueError:
        whole = False
    if not whole or len(lines) < wanted:
        tally.bad("rows lost", label, f"{len(lines)} lines in the temporary, whole={whole}, wanted {wanted}")
    else:
        tally.counts["worked"] += 1


def run(count: int, kills: int, seed: int, tally: Tally | None = None) -> Tally:
    tally = tally or Tally()
    rng = random.Random(seed)
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        with tempfile.TemporaryDirectory(prefix="fuzz-surfaces-") as folder, _shared_cluster():
            ws = Workspace(Path(folder))
            for index in range(count):
                kind = rng.random()
                if kind < 0.30:
                    surface, (argv, facts) = "sweep", sweep_case(ws, rng, index, optimize=False)
                elif kind < 0.45:
                    surface, (argv, facts) = "optimize", sweep_case(ws, rng, index, optimize=True)
                elif kind < 0.60:
                    surface, (argv, facts) = "compare", compare_case(ws, rng, index)
                elif kind < 0.80:
                    surface, (argv, facts) = "--fail", fail_case(ws, rng)
                else:
                    surface, (argv, facts) = "outputs", output_case(ws, rng)
                run_case(surface, argv, facts, ws, tally, rng)
                if index % 200 == 199 and not ws.examples_intact():
                    tally.bad("examples changed", f"by case {index}", "the built-in examples changed")
                    ws.examples = ws._examples()
            for index in range(kills):
                kill_case(ws, rng, index, tally)
            if not ws.examples_intact():
                tally.bad("examples changed", "at the end", "the built-in examples changed")
    finally:
        signal.signal(signal.SIGALRM, previous)
    return tally


def report(tally: Tally) -> int:
    c = tally.counts
    surfaces = ", ".join(f"{n:,} {s}" for s, n in sorted(tally.by_surface.items(), key=lambda item: -item[1]))
    print(f"surface cases:     {c['cases']:,} ({surfaces}); {c['skipped large']:,} sweeps over {MAX_POINTS} "
          "points not run")
    print(f"outcomes:          {c['worked']:,} worked, {c['refused']:,} refused")
    for kind in ("tracebacks", "hangs", "special writes", "rows lost", "examples changed", "unplaced refusals"):
        extra = f" (over {HANG_S} s)" if kind == "hangs" else ""
        print(f"{kind + ':':<19}{c[kind]}{extra}")
    print(f"slowest case:      {tally.slowest[0]:.2f} s ({tally.slowest[1][:160]})")
    for line in tally.failures[:20]:
        print("  " + line)
    bad = sum(c[k] for k in ("tracebacks", "hangs", "special writes", "rows lost", "examples changed",
                             "unplaced refusals"))
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--kills", type=int, default=2, help="sweeps killed with SIGKILL midway")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    tally = run(args.count, args.kills, args.seed)
    code = report(tally)
    print(f"wall time:         {time.monotonic() - started:,.0f} s (seed {args.seed})")
    return code


if __name__ == "__main__":
    sys.exit(main())
