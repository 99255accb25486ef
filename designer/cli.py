"""`cluster-designer`: the desktop app by default, headless sub-commands for scripts and CI.

Bad input exits 2 with one line on stderr naming the problem; no traceback is shown for it.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from typing import TYPE_CHECKING, NamedTuple

from designer.model.errors import MAX_MESSAGE_CHARS, DesignerError, printable

if TYPE_CHECKING:
    from designer.engine.result import Result
    from designer.model.catalog import Catalog
    from designer.model.design import Design

COMMANDS = ("gui", "templates", "new", "examples", "evaluate", "export", "compare", "sweep", "optimize")


class UsageError(DesignerError):
    pass


def one_line_message(exc: DesignerError) -> str:
    """A refusal as one printable line of at most MAX_MESSAGE_CHARS, whatever text it quotes."""
    text = printable(str(exc))
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS - 1] + "…"


def _version() -> str:
    from designer import __version__

    return __version__


def _catalog(args):
    from designer.model import catalog as catalog_module

    if getattr(args, "catalog", None):
        catalog = catalog_module.load_catalog(args.catalog)
        catalog_module.set_default_catalog(catalog)
        return catalog
    return catalog_module.default_catalog()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cluster-designer",
        description="Design GPU clusters and see what they can do. With no command, opens the app.")
    parser.add_argument("--version", action="version", version=f"cluster-designer {_version()}")
    parser.add_argument("--catalog", metavar="FILE", help="extra catalogue file that adds or overrides parts")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    gui.add_argument("file", nargs="?", help="design file or example name (default: the default example)")
    gui.add_argument("--screenshot", metavar="OUT.png",
                     help="render the window offscreen to a PNG after the first evaluation, then exit")
    gui.add_argument("--size", default="1600x1000",
                     help="window size for --screenshot, WIDTHxHEIGHT (default 1600x1000)")

    sub.add_parser("templates", help="list topology generators and their parameters")

    new = sub.add_parser("new", help="write a design made by a topology generator")
    new.add_argument("--template", required=True, help="generator name (see `templates`)")
    new.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="generator parameter; repeatable")
    new.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the .cluster.json")

    sub.add_parser("examples", help="list the built-in example designs")

    evaluate = sub.add_parser("evaluate", help="evaluate a design and print the result")
    evaluate.add_argument("file", help="design file or example name")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    add_engine_options(evaluate)

    export = sub.add_parser("export", help="write the CSV summary (and bill of materials) of a design")
    export.add_argument("file", help="design file or example name")
    export.add_argument("--csv", required=True, metavar="OUT", help="summary CSV: metric, value, unit")
    export.add_argument("--bom", metavar="OUT", help="bill of materials CSV")
    export.add_argument("--json", metavar="OUT", dest="json_out", help="the whole result as JSON")
    add_engine_options(export)
    add_explore_commands(sub)
    return parser


def add_explore_commands(sub) -> None:
    """compare, sweep and optimize: deciding between designs (designer.engine.compare, designer.explore)."""
    compare = sub.add_parser("compare", help="two or more designs side by side, each against the first")
    compare.add_argument("files", nargs="+", metavar="FILE", help="design files or example names (two or more)")
    shape = compare.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    shape.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    add_engine_options(compare)

    sweep = sub.add_parser("sweep", help="evaluate every point of a NAME.sweep.json on Dask, each row written "
                                         "as it finishes")
    sweep.add_argument("file", help="the sweep file")
    sweep.add_argument("-o", "--output", required=True, metavar="OUT",
                       help="results file (CSV, or Parquet with --parquet)")
    sweep.add_argument("--parquet", action="store_true", help="write Parquet instead of CSV (needs pyarrow)")
    add_dask_options(sweep)

    optimize = sub.add_parser("optimize", help="the best design of a sweep's space for its goal and constraints")
    optimize.add_argument("file", help="the sweep file, with a goal such as {\"minimize\": \"cost.capital_usd\"}")
    optimize.add_argument("-o", "--output", metavar="OUT.cluster.json", help="where to write the winning design")
    add_dask_options(optimize)


def add_dask_options(parser: argparse.ArgumentParser) -> None:
    from designer.explore import runner

    def workers(text: str) -> int:
        try:
            return runner.check_workers(int(text))
        except (ValueError, runner.SweepRunError):
            raise argparse.ArgumentTypeError(f"{printable(text)[:40]}: expected a whole number from 1 to "
                                             f"{runner.max_workers()}") from None

    g = parser.add_argument_group("where the points run")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler, tcp://HOST:PORT or HOST:PORT, e.g. tcp://10.0.0.5:8786 (default: "
                        f"a local cluster of worker processes); one that does not answer within "
                        f"{runner.CONNECT_TIMEOUT_S:g} s, or has no worker for {runner.WORKERS_TIMEOUT_S:g} s, "
                        "ends the run keeping the rows so far")
    g.add_argument("--workers", type=workers, metavar="N",
                   help=f"local worker processes, 1 to {runner.MAX_WORKERS_PER_CORE} per core "
                        f"({runner.max_workers()} here, at most {runner.MAX_WORKERS}; default: one per core)")


ENGINE_OPTIONS = ("op", "sizes", "algorithm", "ranks", "workload", "plan", "overlap", "global_batch", "seq",
                  "tokens")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Options that choose what the engine computes beyond the design itself (ENGINE_OPTIONS)."""
    from designer.engine import workloads
    from designer.engine.collectives import ALGORITHMS, OPS

    g = parser.add_argument_group("network and training")
    g.add_argument("--op", help=f"collective operation: {', '.join(OPS)} (default allreduce)")
    g.add_argument("--sizes",
                   help="message sizes in bytes, comma-separated, K/M/G = 2^10/2^20/2^30 (default 1M,16M,256M,1G,8G)")
    g.add_argument("--algorithm", help=f"auto (default) or one of {', '.join(ALGORITHMS)}")
    g.add_argument("--ranks", help="communicator: the first N accelerators in topology order (default all)")
    g.add_argument("--workload", help=f"LLM preset ({', '.join(workloads.PRESETS)}) or a JSON file")
    g.add_argument("--plan", help="comma-separated key=value of tp, pp, vp, dp, cp, sp, ep, mb, zero, "
                                  "recompute (none|selective|full), attention (flash|standard), e.g. "
                                  "tp=8,pp=16,vp=2,cp=2,sp=1,mb=1,recompute=selective,zero=1; or auto (default)")
    g.add_argument("--overlap", help="communication hidden behind compute, e.g. tp=partial,dp=full,pp=none: "
                                     "tp none|partial|full, dp/pp/cp/ep none|full (defaults tp=none, dp=full, "
                                     "pp=full, cp=full, ep=none)")
    g.add_argument("--global-batch", dest="global_batch", help="sequences per step")
    g.add_argument("--seq", help="sequence length in tokens")
    g.add_argument("--tokens", help="tokens to train on, for days to train (K/M/G/T = 10^3.. allowed)")
    parser.add_argument("--fail", action="append", default=[], metavar="ID[:COPIES]",
                        help="take an item, link or link medium out of service (all copies, a count like "
                             "spines.sw:1, or a share like ib-ndr:2%%) and add the degraded figures; repeatable")
    g.add_argument("--in-network-reduction", dest="in_network_reduction", metavar="on|off|nvls|sharp",
                   help="whether collectives may reduce in the switches (NVLS, SHARP) where the parts support it; "
                        "overrides the design's setting (default: the design's, else on)")


class Evaluated(NamedTuple):
    """A design file as evaluated: the design (with the --fail marks), its catalogue, the result."""

    design: Design
    catalog: Catalog
    result: Result


def _evaluate_file(args) -> Evaluated:
    from designer.engine import evaluate
    from designer.engine.budget import BudgetError
    from designer.engine.workloads import WorkloadError
    from designer.io.examples import resolve_design_path
    from designer.io.files import DesignFileError, load_design
    from designer.io.options import in_network_reduction, placed, workload_from_options

    catalog = _catalog(args)
    path = resolve_design_path(args.file)
    design = load_design(path, catalog)
    _mark_failures(design, catalog, args.fail, path)
    if args.in_network_reduction is not None:
        design.settings["in_network_reduction"] = in_network_reduction(args.in_network_reduction)
    given = {name: getattr(args, name) for name in ENGINE_OPTIONS}
    workload = workload_from_options(design, **given)
    try:
        return Evaluated(design, catalog, evaluate(design, catalog, workload=workload))
    except WorkloadError as exc:
        if exc.setting is None:
            raise
        raise placed(exc, given, path) from None
    except BudgetError as exc:
        raise DesignFileError(path, None, str(exc)) from None


def _mark_failures(design, catalog, texts: list[str], path) -> None:
    """Add the --fail options to the design's failures (the file is not changed); a refusal names
    the design file (`compare` applies them to each of its designs)."""
    from designer.engine.failures import failures_of, parse_failure, unbuildable

    marked = list(design.settings.get("failures") or [])
    # Looked up once per target, not per flag: thousands of flags on a big design stay linear.
    copies_of: dict[str, int] = {}
    media_in_use: set[str] | None = None
    for text in texts:
        try:
            failure = parse_failure(text)
        except ValueError as exc:
            raise UsageError(f"--fail: {exc}") from None
        target = failure.target
        if target in design.items or target in design.links:
            copies = copies_of.get(target)
            if copies is None:
                copies = copies_of[target] = (design.multiplicity(target) if target in design.items
                                              else design.link_copies(design.links[target]).instances)
            if failure.copies is not None and failure.copies > copies:
                raise UsageError(f"--fail {text}: '{target}' has {copies:,} cop{'ies' if copies != 1 else 'y'} "
                                 f"in {path}, not {failure.copies:,}")
        elif target in catalog and catalog[target].kind == "medium":
            if media_in_use is None:
                media_in_use = {link.medium for link in design.links.values()}
            if target not in media_in_use:
                raise UsageError(f"--fail {text}: no link of {path} uses medium '{target}'")
        else:
            # Ids may hold ':' too, so "spines.sw:x" is first looked up whole.
            named, _, amount = target.rpartition(":")
            if named in design.items or named in design.links or named in catalog:
                raise UsageError(f"--fail {text}: after '{named}:' expected a count of copies (a whole number of "
                                 f"at least 1) or a percentage like 2%, got '{amount}'")
            raise UsageError(f"--fail {text}: no item, link or link medium '{target}' in {path}")
        marked.append(failure.setting())
    if marked:
        design.settings["failures"] = marked
    problem = unbuildable(design, catalog, failures_of(design)) if texts else None
    if problem:  # a what-if the engine cannot build is refused, not printed empty
        raise UsageError(f"--fail {' '.join(texts)}: {problem}")


def cmd_templates(args) -> int:
    from designer.topologies import GENERATORS

    for generator in GENERATORS.values():
        print(f"{generator.name}: {generator.summary}")
        for param in generator.params:
            if param.help == "unused":
                continue
            default = "" if param.default in (None, "") else f" (default {param.default})"
            print(f"    {param.name:<18} {param.help}{default}")
    return 0


def cmd_new(args) -> int:
    from designer.io.files import save_design
    from designer.topologies import generate

    params = {}
    for pair in args.set:
        if "=" not in pair:
            raise UsageError(f"--set expects KEY=VALUE, got '{pair}'")
        key, value = pair.split("=", 1)
        params[key.strip()] = value.strip()
    _check_outputs(args, [("-o", args.output)])
    design = generate(args.template, _catalog(args), **params)
    save_design(design, args.output)
    print(f"wrote {args.output}: {design.name}")
    return 0


def cmd_examples(args) -> int:
    from designer.io.examples import example_summaries

    rows = example_summaries(_catalog(args))
    if not rows:
        print("no examples found")
        return 0
    width = max(len(r["id"]) for r in rows)
    print(f"{'example':<{width}}  {'accelerators':>12}  {'peak BF16':>12}  {'pooled memory':>13}  name")
    for r in rows:
        print(f"{r['id']:<{width}}  {r['accelerators']:>12,}  {r['bf16_pflops']:>9,.1f} PF  "
              f"{r['pooled_tib']:>9,.1f} TiB  {r['name']}")
    return 0


def cmd_evaluate(args) -> int:
    from designer.engine.failures import failure_words
    from designer.io.exports import result_json
    from designer.io.report import result_table

    design, catalog, result = _evaluate_file(args)
    print(result_json(result) if args.json else result_table(result, lambda text: failure_words(design, catalog, text)),
          end="")
    return 0


def cmd_export(args) -> int:
    from designer.engine.failures import failure_words
    from designer.io.exports import bom_csv, result_json, summary_csv, write_export

    from designer.io.examples import resolve_design_path

    _check_outputs(args, [("--csv", args.csv), ("--bom", args.bom), ("--json", args.json_out)],
                   resolve_design_path(args.file))
    design, catalog, result = _evaluate_file(args)
    write_export(args.csv, summary_csv(result, lambda text: failure_words(design, catalog, text)))
    written = [args.csv]
    if args.bom:
        write_export(args.bom, bom_csv(result))
        written.append(args.bom)
    if args.json_out:
        write_export(args.json_out, result_json(result))
        written.append(args.json_out)
    print("wrote " + ", ".join(written))
    return 0


def cmd_compare(args) -> int:
    from designer.engine.compare import compare, comparison_table
    from designer.io.exports import comparison_csv, comparison_json

    if len(args.files) < 2:
        raise UsageError("compare needs two or more designs")
    results = []
    for file in args.files:
        args.file = file
        results.append(_evaluate_file(args).result)
    comparison = compare(results, _compare_names(args.files))
    if args.json:
        print(comparison_json(comparison), end="")
    else:
        print(comparison_csv(comparison) if args.csv else comparison_table(comparison), end="")
    return 0


def _compare_names(files: list[str]) -> list[str]:
    """Each design's column name: its file name without `.cluster.json`, and where two different
    files share it, as many parent folders as tell them apart (`a/pod`, `b/pod`)."""
    import os

    from designer.io.examples import resolve_design_path
    from designer.io.files import SUFFIX, short_names

    return [name.removesuffix(SUFFIX) for name in short_names([os.path.abspath(resolve_design_path(f)) for f in files])]


def _progress_printer():
    """The progress bar on stderr: redrawn in place on a terminal, a line every 5 s otherwise."""
    import time

    from designer.explore.runner import progress_line

    tty = sys.stderr.isatty()
    last = [0.0]

    def show(progress, final: bool = False) -> None:
        now = time.monotonic()
        if tty:
            print("\r" + progress_line(progress), end="\n" if final else "", file=sys.stderr, flush=True)
        elif final or now - last[0] >= 5:
            last[0] = now
            print(progress_line(progress), file=sys.stderr, flush=True)

    return show


def _quiet_dask() -> None:
    """Dask's own INFO lines (every worker's start and stop) would bury the progress bar; its
    warnings and errors still show. The workers inherit the setting through the environment."""
    import os

    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")


@contextlib.contextmanager
def _stop_on_ctrl_c():
    """An event Ctrl+C sets: the sweep stops after the batch under way, closing its workers
    cleanly; a second Ctrl+C quits at once."""
    stop = threading.Event()

    def interrupted(_signum, _frame) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("\nstopping: the finished rows are kept (Ctrl+C again to quit at once)", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def cmd_sweep(args) -> int:
    from designer.explore.results import CsvRows, ParquetRows, columns, require_pyarrow
    from designer.explore.runner import dask_client, run_sweep
    from designer.explore.spec import load_sweep

    sweep = load_sweep(args.file, _catalog(args))
    _check_outputs(args, [("-o", args.output)], args.file, sweep.base)
    if args.parquet:
        require_pyarrow()
    _quiet_dask()
    show = _progress_printer()
    with _stop_on_ctrl_c() as stop, dask_client(args.scheduler, args.workers) as client:
        # Opened only now the cluster answers: a run that cannot start replaces nothing.
        sink = (ParquetRows if args.parquet else CsvRows)(args.output, columns(sweep))
        print(f"rows go to {sink.temporary} until the run ends", file=sys.stderr)
        try:
            show(run_sweep(sweep, client, sink.write, stop=stop, on_progress=show), final=True)
        except BaseException:
            _end_rows(sink)
            raise
        _end_rows(sink)
    stopped = stop.is_set()
    print(f"{'stopped: ' if stopped else ''}wrote {args.output}: {sink.written:,} rows of {sweep.count():,} points",
          file=sys.stderr)
    return 130 if stopped else 0


def _end_rows(sink) -> None:
    """Every finished row goes under the final name, however the run ends; a run that ends before
    its first row leaves an existing file as it was."""
    if sink.written:
        sink.finish()
    else:
        sink.abandon()


def cmd_optimize(args) -> int:
    import json

    from designer.explore.optimize import optimize
    from designer.explore.runner import dask_client
    from designer.explore.spec import design_of, load_sweep
    from designer.io.files import save_design

    catalog = _catalog(args)
    sweep = load_sweep(args.file, catalog)
    if args.output:
        _check_outputs(args, [("-o", args.output)], args.file, sweep.base)
    _quiet_dask()
    show = _progress_printer()
    with _stop_on_ctrl_c() as stop, dask_client(args.scheduler, args.workers) as client:
        answer, progress = optimize(sweep, client, stop, on_progress=show)
    show(progress, final=True)
    if stop.is_set():
        print(f"stopped after {progress.done:,} of {progress.total:,} points: the best of those", file=sys.stderr)
    print(answer.explain(sweep))
    if answer.best is None:
        return 1
    if args.output:
        save_design(design_of(json.loads(answer.best["design"]), catalog), args.output)
        print(f"wrote {args.output}")
    return 0


def _check_outputs(args, outputs: list[tuple[str, str | None]], *inputs) -> None:
    """Refuse, before any work, an output that is not a regular file or a new name, lies in the
    built-in examples, or is one of the command's inputs (with the catalogue and workload files)."""
    from designer.io.outputs import check_outputs

    read = [*inputs, getattr(args, "catalog", None)]
    workload = getattr(args, "workload", None)
    if workload and workload.endswith(".json"):
        read.append(workload)
    check_outputs([(option, path) for option, path in outputs if path is not None], [p for p in read if p])


def cmd_gui(args) -> int:
    from designer.io.examples import default_example_path, resolve_design_path

    if args.screenshot is not None and not args.screenshot.strip():
        raise UsageError("--screenshot needs the PNG file to write, like --screenshot window.png")
    from designer.ui.app import run_app

    path = resolve_design_path(args.file) if args.file else default_example_path()
    return run_app(path, screenshot=args.screenshot, size=args.size)


HANDLERS = {"templates": cmd_templates, "new": cmd_new, "examples": cmd_examples,
            "evaluate": cmd_evaluate, "export": cmd_export, "gui": cmd_gui, "compare": cmd_compare,
            "sweep": cmd_sweep, "optimize": cmd_optimize}


def _failure_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    """The `--fail X` / `--fail=X` flags taken out of `argv`, in order, before argparse sees them:
    Python 3.11's argparse rescans every option for each one (quadratic: 50,000 flags took a
    minute). Nothing after `--` is taken, and a `--fail` with no value is left for argparse to refuse."""
    rest, failures = [], []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            rest.extend(argv[index:])
            break
        if arg == "--fail" and index + 1 < len(argv) and not argv[index + 1].startswith("--"):
            failures.append(argv[index + 1])
            index += 2
            continue
        if arg.startswith("--fail="):
            failures.append(arg.removeprefix("--fail="))
        else:
            rest.append(arg)
        index += 1
    return rest, failures


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `cluster-designer FILE` opens FILE in the app.
    first = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if first is not None and argv[first] not in COMMANDS and not (first > 0 and argv[first - 1] == "--catalog"):
        argv.insert(first, "gui")
    if not any(a in COMMANDS for a in argv) and not any(a in ("-h", "--help", "--version") for a in argv):
        argv.append("gui")
    parser = build_parser()
    argv, failures = _failure_flags(argv)
    args = parser.parse_args(argv)
    if failures:
        if not hasattr(args, "fail"):
            parser.error(f"--fail is not an option of `{args.command}`")
        args.fail = failures + args.fail
    try:
        if args.catalog:
            _catalog(args)  # a bad catalogue is refused before any command runs
        return HANDLERS[args.command](args)
    except DesignerError as exc:
        print(f"cluster-designer: error: {one_line_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as other tools do, and keep Python from
        # complaining again when it flushes stdout at exit.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def main_gui() -> int:
    return main(sys.argv[1:] or ["gui"])


if __name__ == "__main__":
    sys.exit(main())
