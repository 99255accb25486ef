"""Fuzz the boundary: mutated shipped examples, hand-made nasties, mutated user catalogues and
random generator parameters, through the Python API and (a sample) through the CLI.

    .venv/bin/python benchmarks/fuzz.py --count 10000 --cli 300 --seed 1

Each case must either work or be refused with one line naming the place; the run prints files
tried, tracebacks, hangs (over 10 s), peak memory, invalid outputs (`--json` that is not strict
JSON) and refusals that are not one line naming the file, the option or the template. It exits 1
if any of those is not zero or memory went over 1 GB. `--keep DIR` saves every failing case.
`--surfaces N --kills K` adds the sweep, optimize, compare, --fail and output surfaces
(benchmarks/fuzz_surfaces.py: special files, outputs that are inputs, rows lost, kill -9 midway).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from designer.engine import evaluate  # noqa: E402
from designer.io.examples import example_paths  # noqa: E402
from designer.io.exports import result_json  # noqa: E402
from designer.io.files import dumps, load_design  # noqa: E402
from designer.model.catalog import load_catalog  # noqa: E402
from designer.model.errors import MAX_MESSAGE_CHARS, DesignerError, InputError  # noqa: E402
from designer.paths import catalog_dir  # noqa: E402
from designer.topologies import GENERATORS, generate  # noqa: E402

# A hang is a case that takes over TIMEOUT_S of CPU time (the machine may be shared: wall time
# would count other processes' work); a CLI process is also stopped after WALL_TIMEOUT_S.
TIMEOUT_S = 10
WALL_TIMEOUT_S = 120
MEMORY_LIMIT_MB = 1024
NASTY_SCALARS = [
    -4, 0, 1, 3, 2 ** 31, 2 ** 63, 10 ** 18, -1e308, 1e308, 0.5, -0.0, "", "x" * 5000, "1G", "-4", "auto",
    "../../etc/passwd", "/proc/self/environ", "/dev/zero", "gpt3-175b", "h100-sxm", "torus", "16x16x16",
    "4096x4096x4096", "tp=8", "\u202e\u0000", "\ud800", None, True, False, [], {}, [1, 2], {"a": 1},
]
TEXT_NASTIES = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000, "-" + "1" * 400, "[" * 5000 + "]" * 5000]
GOOD_SETTINGS = [
    {"workload": {"collective": {"op": "alltoall", "sizes": ["1M", 4096, "2G"], "algorithm": "ring", "ranks": 8}}},
    {"workload": {"training": {"model": "llama2-70b", "plan": {"tp": 8, "pp": 2, "mb": 1, "recompute": "full",
                                                              "zero": 2}}}},
    {"workload": {"training": {"model": {"preset": "gpt3-175b", "layers": 48}, "plan": "auto", "seq": 4096}}},
    {"workload": {"training": {"model": {"layers": 12, "hidden": 768, "heads": 12}, "global_batch": 64}}},
    {"in_network_reduction": {"nvls": False, "sharp": True}},
    {"template": {"name": "torus", "params": {"dims": "4x4x4"}}},
]


# --- cases ------------------------------------------------------------------------------------------

def _nodes(value, path=()):
    """Every (path, value) in a document, breadth first, capped (examples hold thousands)."""
    out, queue = [], [(path, value)]
    while queue and len(out) < 4000:
        path, value = queue.pop(0)
        out.append((path, value))
        if isinstance(value, dict):
            queue.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            queue.extend(((*path, i), v) for i, v in enumerate(value[:50]))
    return out


def _set(doc, path, value):
    if not path:
        return value
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def _nasty(rng: random.Random):
    choice = rng.random()
    if choice < 0.6:
        return copy.deepcopy(rng.choice(NASTY_SCALARS))
    if choice < 0.8:
        return [copy.deepcopy(rng.choice(NASTY_SCALARS)) for _ in range(rng.choice((1, 3, 70)))]
    return {rng.choice(["op", "sizes", "model", "plan", "tp", "dims", "x", "count", "name"]): rng.choice(NASTY_SCALARS)}


def gentle_settings(rng: random.Random) -> dict:
    """Settings of the right types with values that may not fit the design (ranks, plans, sizes)."""
    collective = {"op": rng.choice(["allreduce", "reduce-scatter", "allgather", "alltoall", "broadcast"]),
                  "sizes": [rng.choice([1, 1000, "1K", "64M", "1G", "1T", "1.5G"]) for _ in range(rng.randint(1, 4))],
                  "algorithm": rng.choice(["auto", "ring", "tree", "hierarchical", "nvls", "sharp", "torus"]),
                  "ranks": rng.choice([1, 2, 7, 8, 64, 1000, 10 ** 6])}
    if rng.random() < 0.5:
        del collective["ranks"]  # all accelerators
    plan = "auto" if rng.random() < 0.6 else {
        "tp": rng.choice([1, 2, 3, 8, 16]), "pp": rng.choice([1, 2, 5, 200]), "mb": rng.choice([1, 4]),
        "recompute": rng.choice(["none", "full"]), "zero": rng.randint(0, 3),
        **{key: rng.choice(values) for key, values in (("vp", [1, 2, 7]), ("cp", [1, 2, 3]), ("sp", [0, 1]),
                                                        ("ep", [1, 2, 8]), ("attention", ["flash", "standard"]))
           if rng.random() < 0.4}}
    model = rng.choice(["gpt3-175b", "megatron-1.7b", "llama3-405b", "mixtral-8x7b", "deepseek-v3",
                        {"layers": rng.randint(1, 200), "hidden": 128 * rng.randint(1, 100), "heads": 1},
                        {"layers": 4, "hidden": 512, "heads": 8, "experts": rng.choice([1, 4, 64]),
                         "top_k": rng.choice([1, 2, 8]), "shared_experts": rng.choice([0, 1])},
                        {"parameters": rng.choice([1e6, 1e9, 1e13]), "heads": 1}])
    training = {"model": model, "plan": plan}
    if rng.random() < 0.3:
        training["overlap"] = {"tp": rng.choice(["none", "partial", "full"]), "ep": rng.choice(["none", "full"])}
    if rng.random() < 0.3:
        training["global_batch"] = rng.choice([1, 7, 4096, 10 ** 7])
    workload = {k: v for k, v in (("collective", collective), ("training", training)) if rng.random() < 0.8}
    return {"workload": workload, "in_network_reduction": {"nvls": rng.random() < 0.5}}


def what_if_settings(doc: dict, rng: random.Random) -> dict:
    """Issue 15's settings of the right types: cost assumptions at or inside their bounds, hot
    spares up to the schema's limit, failures of the design's own items, links and media (the
    same target twice, a container with what is inside it, more copies than there are)."""
    from designer.engine.cost import ASSUMPTIONS

    cost = {a.key: (rng.choice(a.choices) if a.choices
                    else rng.choice([a.minimum, a.maximum, rng.uniform(a.minimum, a.maximum)]))
            for a in ASSUMPTIONS if rng.random() < 0.4}
    ids = [item["id"] for item in doc.get("items", [])[:2000]] + [link["id"] for link in doc.get("links", [])[:2000]]
    media = sorted({link["medium"] for link in doc.get("links", [])[:2000]} | {"ib-hdr"})
    failures = []
    for _ in range(rng.choice((1, 2, 5, 30))):
        target = rng.choice(media) if rng.random() < 0.1 or not ids else rng.choice(ids)
        amount = rng.random()
        failures.append({"target": target, **({"copies": rng.choice((1, 2, 7, 10 ** 6))} if amount < 0.4 else
                                              {"percent": rng.choice((1e-9, 2, 50, 100))} if amount < 0.7 else {})})
    out = {"cost": cost, "spares": rng.choice((0, 1, 3, 1000, 10 ** 6)), "failures": failures}
    return {key: value for key, value in out.items() if rng.random() < 0.6}


def mutate_document(doc: dict, rng: random.Random, settings: bool = True):
    doc = copy.deepcopy(doc)
    if settings and rng.random() < 0.4:
        doc.setdefault("settings", {}).update(copy.deepcopy(rng.choice(GOOD_SETTINGS)))
    for _ in range(rng.choice((1, 1, 2, 3))):
        nodes = _nodes(doc)
        path, value = rng.choice(nodes)
        op = rng.random()
        if op < 0.55:
            doc = _set(doc, path, _nasty(rng))
        elif op < 0.7 and isinstance(value, dict) and value:
            del value[rng.choice(list(value))]
        elif op < 0.8 and isinstance(value, dict):
            value[rng.choice(["extra", "count", "parent", "match", "settings", "model"])] = _nasty(rng)
        elif op < 0.9 and isinstance(value, list) and value:
            value.append(copy.deepcopy(rng.choice(value)))
        elif path:
            # A value from elsewhere in the document: right type, wrong place.
            doc = _set(doc, path, copy.deepcopy(rng.choice(nodes)[1]))
    return doc


def mutate_text(text: str, rng: random.Random) -> bytes:
    op = rng.random()
    if op < 0.3:
        return text[: rng.randrange(len(text) + 1)].encode("utf-8", "surrogatepass")
    if op < 0.6:
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        if digits:
            i = rng.choice(digits)
            return (text[:i] + rng.choice(TEXT_NASTIES) + text[i + 1:]).encode("utf-8", "surrogatepass")
    if op < 0.8:
        raw = bytearray(text.encode("utf-8", "surrogatepass"))
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        return bytes(raw)
    if op < 0.9:
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass")
    return text.encode("utf-16", "surrogatepass")


def nasties(tmp: Path) -> list[tuple[str, Path]]:
    """Hand-made files: each crashed, hung or ran out of memory before the boundary was checked."""
    small = json.loads(example_paths()[0].read_text())
    cases: dict[str, object] = {
        "deep-json": "[" * 200_000 + "]" * 200_000,
        "huge-int": json.dumps(small).replace('"lanes": ', '"lanes": ' + "7" * 5000, 1),
        "nan": json.dumps(small).replace('"x": 0', '"x": NaN', 1),
        "path-model": {**small, "settings": {"workload": {"training": {"model": "/proc/self/environ"}}}},
        "relative-path-model": {**small, "settings": {"workload": {"training": {"model": "../../m.json"}}}},
        "many-sizes": {**small, "settings": {"workload": {"collective": {"sizes": ["1M"] * 199_999}}}},
        "nested-groups": {**small, "links": [], "items": [
            {"id": f"g{i}", "kind": "group", **({"parent": f"g{i - 1}"} if i else {})} for i in range(25_000)][::-1]},
        "huge-string": {**small, "name": "x" * 3_000_000},
        "wrong-root": [1, 2, 3],
        "empty": "",
        "utf16": json.dumps(small).encode("utf-16"),
        "latin1": json.dumps({**small, "name": "caf\u00e9"}, ensure_ascii=False).encode("latin-1"),
        "flat-accelerators": {**small, "links": [], "items": [
            {"id": "r", "kind": "rack", "part": "rack-42u"}] + [
            {"id": f"a{i}", "kind": "accelerator", "part": "h100-sxm", "parent": "r"} for i in range(50_000)]},
    }
    out = []
    for name, content in cases.items():
        path = tmp / f"nasty-{name}.cluster.json"
        data = content if isinstance(content, bytes) else (
            content if isinstance(content, str) else json.dumps(content)).encode("utf-8", "surrogatepass")
        path.write_bytes(data)
        out.append((f"nasty:{name}", path))
    fifo = tmp / "nasty-fifo.cluster.json"
    os.mkfifo(fifo)
    sparse = tmp / "nasty-sparse.cluster.json"
    with open(sparse, "wb") as handle:
        handle.truncate(200 * 2 ** 20)
    out += [("nasty:fifo", fifo), ("nasty:dev-zero", Path("/dev/zero")), ("nasty:folder", tmp),
            ("nasty:sparse-200MiB", sparse), ("nasty:missing", tmp / "missing" / "x.cluster.json")]
    return out


# --- running ----------------------------------------------------------------------------------------

class HangError(Exception):
    pass


def _alarm(signum, frame):
    raise HangError()


class Tally:
    def __init__(self, keep: Path | None):
        self.keep = keep
        self.counts = {k: 0 for k in ("api", "cli", "evaluated", "refused", "tracebacks", "hangs", "invalid outputs",
                                      "unplaced refusals", "over memory")}
        self.failures: list[str] = []
        self.slowest = (0.0, "")
        self.slowest_cli = (0.0, "")

    def bad(self, kind: str, label: str, detail: str, data: bytes | None = None) -> None:
        self.counts[kind] += 1
        self.failures.append(f"{kind}: {label}: {detail}")
        if self.keep is not None and data is not None:
            self.keep.mkdir(parents=True, exist_ok=True)
            (self.keep / f"{kind.replace(' ', '-')}-{self.counts[kind]}.cluster.json").write_bytes(data)


def _one_line(message: str) -> bool:
    return "\n" not in message and len(message) <= MAX_MESSAGE_CHARS + 40 and "Traceback" not in message


def run_api(label: str, path: Path, data: bytes | None, tally: Tally, catalog=None) -> None:
    tally.counts["api"] += 1
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_PROF, TIMEOUT_S)
    try:
        design = load_design(path, catalog)
        text = result_json(evaluate(design, catalog))
        json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
        tally.counts["evaluated"] += 1
    except HangError:
        tally.bad("hangs", label, f"over {TIMEOUT_S} s of CPU", data)
    except InputError as exc:
        tally.counts["refused"] += 1
        if not (_one_line(str(exc)) and str(exc).startswith(str(path)[:60])):
            tally.bad("unplaced refusals", label, str(exc)[:300], data)
    except DesignerError as exc:
        tally.counts["refused"] += 1
        placed = getattr(exc, "setting", None) or "too large to evaluate" in str(exc)
        if not (_one_line(str(exc)) and placed):
            tally.bad("unplaced refusals", label, str(exc)[:300], data)
    except ValueError as exc:
        if "NaN" in str(exc) or "Infinity" in str(exc):
            tally.bad("invalid outputs", label, str(exc), data)
        else:
            tally.bad("tracebacks", label, traceback.format_exc(limit=-3).replace("\n", " | ")[:600], data)
    except Exception:  # noqa: BLE001 - counting what escapes is the point
        tally.bad("tracebacks", label, traceback.format_exc(limit=-3).replace("\n", " | ")[:600], data)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    elapsed = time.perf_counter() - started
    if elapsed > tally.slowest[0]:
        tally.slowest = (elapsed, label)


_CLI_PEAK_KB = [0]


def run_cli(label: str, path: Path, data: bytes | None, tally: Tally, argv_extra=()) -> None:
    tally.counts["cli"] += 1
    argv = [sys.executable, "-m", "designer", *argv_extra, "evaluate", str(path), "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=WALL_TIMEOUT_S, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        tally.bad("hangs", f"cli {label}", f"over {WALL_TIMEOUT_S} s of wall time", data)
        return
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if cpu > TIMEOUT_S:
        tally.bad("hangs", f"cli {label}", f"{cpu:.1f} s of CPU", data)
    if cpu > tally.slowest_cli[0]:
        tally.slowest_cli = (cpu, label)
    peak, before = after.ru_maxrss, before.ru_maxrss
    _CLI_PEAK_KB[0] = max(_CLI_PEAK_KB[0], peak)
    if peak > before and peak > MEMORY_LIMIT_MB * 1024:
        tally.bad("over memory", f"cli {label}", f"{peak / 1024:.0f} MB", data)
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0:
        try:
            json.loads(proc.stdout, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
            tally.counts["evaluated"] += 1
        except ValueError as exc:
            tally.bad("invalid outputs", f"cli {label}", str(exc)[:200], data)
    elif proc.returncode == 2 and err.count("\n") == 1 and err.startswith("cluster-designer: error: ") \
            and "Traceback" not in err:
        tally.counts["refused"] += 1
        message = err[len("cluster-designer: error: "):].strip()
        if not (message.startswith(str(path)[:60]) or message.startswith("command line: ")):
            tally.bad("unplaced refusals", f"cli {label}", message[:300], data)
    else:
        tally.bad("tracebacks", f"cli {label}", f"exit {proc.returncode}: {err[-600:]}".replace("\n", " | "), data)


def catalogue_case(rng: random.Random, tmp: Path, index: int, tally: Tally) -> None:
    """A shipped catalogue file, mutated, given as the user's own; then a server of each platform."""
    source = rng.choice(sorted(catalog_dir().glob("*.json")))
    doc = mutate_document(json.loads(source.read_text()), rng, settings=False)
    path = tmp / f"catalog-{index}.json"
    data = json.dumps(doc).encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    label = f"catalog {source.name} #{index}"
    tally.counts["api"] += 1
    signal.setitimer(signal.ITIMER_PROF, TIMEOUT_S)
    try:
        catalog = load_catalog(path, include_user=False)
        for part in catalog.of_kind("server"):
            if part.origin == str(path):
                evaluate(generate("server", catalog, platform=part.id), catalog)
        tally.counts["evaluated"] += 1
    except HangError:
        tally.bad("hangs", label, f"over {TIMEOUT_S} s of CPU", data)
    except DesignerError as exc:
        tally.counts["refused"] += 1
        if not _one_line(str(exc)):
            tally.bad("unplaced refusals", label, str(exc)[:300], data)
    except Exception:  # noqa: BLE001
        tally.bad("tracebacks", label, traceback.format_exc(limit=-3).replace("\n", " | ")[:600], data)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def generator_case(rng: random.Random, index: int, tally: Tally) -> None:
    template = rng.choice(sorted(GENERATORS))
    params = {}
    for param in rng.sample(GENERATORS[template].params, rng.randint(1, 3)):
        params[param.name] = rng.choice([*NASTY_SCALARS[:25], str(rng.choice(NASTY_SCALARS[:12])),
                                         param.default, "a\udcffb", "64x64x64", "1000x1000"])
    label = f"generate {template} {params!r}"[:200]
    tally.counts["api"] += 1
    signal.setitimer(signal.ITIMER_PROF, TIMEOUT_S)
    try:
        evaluate(generate(template, None, **params))
        tally.counts["evaluated"] += 1
    except HangError:
        tally.bad("hangs", label, f"over {TIMEOUT_S} s of CPU")
    except DesignerError as exc:
        tally.counts["refused"] += 1
        if not (_one_line(str(exc)) and (str(exc).startswith(f"{template}: ") or "template" in str(exc))):
            tally.bad("unplaced refusals", label, str(exc)[:300])
    except Exception:  # noqa: BLE001
        tally.bad("tracebacks", label, traceback.format_exc(limit=-3).replace("\n", " | ")[:600])
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="cases in all (default 1000)")
    parser.add_argument("--cli", type=int, default=None, help="how many mutants also go through the CLI "
                                                              "(default 3 %%; the hand-made cases always do)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="save every failing case in this folder")
    parser.add_argument("--surfaces", type=int, default=0, help="cases on the sweep, optimize, compare, --fail and "
                                                                "output surfaces too (benchmarks/fuzz_surfaces.py)")
    parser.add_argument("--kills", type=int, default=0, help="of those, sweeps killed with SIGKILL midway")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    signal.signal(signal.SIGPROF, _alarm)
    tally = Tally(args.keep)
    bases = [json.loads(p.read_text()) for p in example_paths()]
    bases += [json.loads(dumps(generate(t))) for t in ("server", "torus", "fat-tree")]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        tmp = Path(folder)
        hand_made = nasties(tmp)
        cli_sample = args.cli if args.cli is not None else args.count * 3 // 100
        cli_every = max(1, args.count // max(1, cli_sample))
        cli_budget = cli_sample + len(hand_made)
        for label, path in hand_made:
            run_api(label, path, None, tally)
            run_cli(label, path, None, tally)
        for index in range(max(0, args.count - len(hand_made))):
            kind = rng.random()
            if kind < 0.05:
                catalogue_case(rng, tmp, index, tally)
                continue
            if kind < 0.10:
                generator_case(rng, index, tally)
                continue
            base = rng.randrange(len(bases))
            if kind < 0.4:
                doc = copy.deepcopy(bases[base])
                doc.setdefault("settings", {}).update(gentle_settings(rng))
                if rng.random() < 0.5:
                    doc["settings"].update(what_if_settings(doc, rng))
            else:
                doc = mutate_document(bases[base], rng)
            text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
            data = mutate_text(text, rng) if 0.4 <= kind < 0.5 else text.encode("utf-8", "surrogatepass")
            path = tmp / f"case-{index}.cluster.json"
            path.write_bytes(data)
            label = f"mutant of base {base} #{index}"
            run_api(label, path, data, tally)
            if index % cli_every == 0 and tally.counts["cli"] < cli_budget:
                run_cli(label, path, data, tally)
            path.unlink()
    api_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cli_peak = _CLI_PEAK_KB[0] / 1024
    if api_peak > MEMORY_LIMIT_MB:
        tally.counts["over memory"] += 1
    c = tally.counts
    print(f"files tried:       {c['api']:,}, all through the Python API ({len(hand_made)} hand-made; of the "
          "mutants 5 % catalogues, 5 % generator parameters, 30 % settings of the right types, half of those with "
          "cost, hot spares and failures); "
          f"{c['cli']:,} of them also through the CLI")
    print(f"outcomes:          {c['evaluated']:,} evaluated, {c['refused']:,} refused")
    print(f"tracebacks:        {c['tracebacks']}")
    print(f"hangs:             {c['hangs']} (over {TIMEOUT_S} s of CPU)")
    print(f"invalid outputs:   {c['invalid outputs']}")
    print(f"unplaced refusals: {c['unplaced refusals']} (not one line naming the file, option or template)")
    print(f"peak memory:       {api_peak:,.0f} MB in the API process, {cli_peak:,.0f} MB in a CLI process")
    print(f"slowest:           {tally.slowest[0]:.2f} s in the API ({tally.slowest[1]}), "
          f"{tally.slowest_cli[0]:.2f} s of CPU in the CLI ({tally.slowest_cli[1]})")
    print(f"wall time:         {time.perf_counter() - started:,.0f} s (seed {args.seed})")
    for line in tally.failures[:20]:
        print("  " + line)
    bad = c["tracebacks"] + c["hangs"] + c["invalid outputs"] + c["unplaced refusals"] + c["over memory"]
    if args.surfaces or args.kills:
        import fuzz_surfaces

        bad += fuzz_surfaces.report(fuzz_surfaces.run(args.surfaces, args.kills, args.seed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
