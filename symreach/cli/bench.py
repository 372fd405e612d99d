"""``symreach bench INPUT...``: compare engines on a user's own instance files.

Every file given, and every ``*.yaml``, ``*.yml`` and ``*.json`` file in a
directory given (recursively; ``-`` is standard input) is one instance (format v1
or a Kubernetes dump, read by ``symreach.frontends.dispatch.load_any``), asked its own
query (``--pod``/``--node``/``--node-selector`` for files without one, such as
Kubernetes dumps) by every chosen engine, each job in its own process under a time and
memory limit (``symreach.bench.runner``). The command prints one row per file and a
per-engine summary, writes CSV/JSON on request, and fails (exit 1) when two
engines decide a file differently or an engine crashes. Files that do not
load or carry no query are skipped with a note; exit 2 when nothing is left.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.output import write_outputs
from symreach.bench import runner as bench
from symreach.bench import tables as bench_tables
from symreach.cli.executor_options import executor_from_options, executor_options
from symreach.cli.options import format_options, parse_node_selector
from symreach.errors import InputError

SUFFIXES = (".yaml", ".yml", ".json")


def _engine_names(text: str) -> list[str]:
    from symreach.solvers.registry import ENGINES

    if text.strip() == "all":
        return [e for e in ENGINES if e != "auto"]
    names = [e.strip() for e in text.split(",") if e.strip()]
    if not names:
        raise click.BadParameter("give at least one engine", param_hint="--engines")
    for name in names:
        if ":" not in name and name not in ENGINES:
            raise click.BadParameter(f"unknown engine {name!r}; choose from {', '.join(ENGINES)}",
                                     param_hint="--engines")
    return names


def collect_instances(folder: Union[Path, Sequence[Path]], query: Optional[dict] = None,
                      note=None) -> list[bench.BenchInstance]:
    """The loadable files of ``folder`` (or of several files and folders) that carry a query.

    ``query`` (``pod``, ``node``, ``node_selector``) is asked of the files
    without a query of their own, such as Kubernetes dumps.
    """
    from symreach.frontends.dispatch import expand_inputs, load_any
    from symreach.loader import parse_query

    note = note or (lambda s: click.echo(s, err=True))
    out = []
    roots = [folder] if isinstance(folder, Path) else list(folder)
    files: list[Path] = []
    for root in roots:
        if root.is_dir() and not any(p.suffix.lower() in SUFFIXES for p in root.rglob("*") if p.is_file()):
            continue  # an empty folder: reported by the caller as "no instance file"
        files.extend(Path(p) for p in expand_inputs([root]))
    for path in files:
        fallback = None
        try:
            instance = load_any(path)
            if instance.query is None and query is not None:
                instance = instance.with_query(parse_query(instance, **query))
                fallback = query
        except InputError as exc:
            note(f"symreach bench: skipping {path.name}: {exc}")
            continue
        if instance.query is None:
            note(f"symreach bench: skipping {path.name}: the file has no query (give --pod)")
            continue
        out.append(bench.BenchInstance(path.name, path.parent.name or "folder", instance.num_pairs,
                                       path=str(path.resolve()), query=fallback,
                                       meta={"query": instance.query.description}))
    return out


def _fallback_query(pod: Optional[str], node: Optional[str],
                    node_selector: Optional[str]) -> Optional[dict]:
    if pod is None:
        if node or node_selector:
            raise click.UsageError("--node and --node-selector need --pod")
        return None
    if node and node_selector:
        raise click.UsageError("give --node or --node-selector, not both")
    selector = parse_node_selector(node_selector)
    return {"pod": pod, "node": node, "node_selector": selector}


@click.command("bench", cls=ErrorReportingCommand)
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...",
                type=click.Path(exists=True, path_type=str, allow_dash=True))
@click.option("--engines", default="all", show_default=True,
              help="Comma-separated engine names, or 'all' (every engine but auto). Engines not "
                   "available here are skipped with a note.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True, metavar="SECONDS",
              help="Seconds per job; the job is killed a little after.")
@click.option("--memory", "--memory-mb", "memory_mb", type=click.IntRange(min=64), default=2048, show_default=True,
              metavar="MB", help="Memory limit per job in MB (RLIMIT_AS).")
@click.option("--jobs", "parallel", type=click.IntRange(min=1), default=2, show_default=True, metavar="N",
              help="Jobs at a time.")
@click.option("--csv-out", "csv_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write one CSV row per job here.")
@click.option("--json-out", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every job with all engine statistics here.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False, path_type=Path), hidden=True,
              help="Former spelling of --csv-out.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), hidden=True,
              help="Former spelling of --json-out.")
@click.option("--pod", help="Target pod type for files without a query (e.g. Kubernetes dumps).")
@click.option("--node", help="Target node for --pod.")
@click.option("--node-selector", metavar="K=V[,K=V]", help="Target: any node with these labels.")
@click.option("--tolerate-crashes", is_flag=True, help="Report engine crashes without failing.")
@click.option("--cpu-limit", type=click.FloatRange(min=0.1), default=None, metavar="SECONDS",
              help="CPU seconds per job, for its whole process tree (engine workers, ABC), beside "
                   "--timeout: on a busy machine a wall-clock limit measures the load too.")
@click.option("--compare", "metric", type=click.Choice(["wall", "cpu"]), default="wall",
              show_default=True, help="Which time decides winners, ratios, PAR-2 and the plots.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write a cactus plot, a log-log scatter per engine pair and time against size "
                   "per family here (PNG, each with its data as JSON; needs matplotlib).")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="A progress bar on a terminal, one line per job otherwise (stderr).")
@executor_options
@format_options(json_alias=False)
def bench_command(inputs: tuple[str, ...], engines: str, timeout: float, memory_mb: int, parallel: int,
                  csv_out: Optional[Path], json_out: Optional[Path], pod: Optional[str],
                  node: Optional[str], node_selector: Optional[str], tolerate_crashes: bool,
                  cpu_limit: Optional[float], metric: str, plot_dir: Optional[Path], progress: bool,
                  executor: str, scheduler: Optional[str], workers: int,
                  worker_memory: Optional[str], fmt: str) -> None:
    """Run several engines on every instance file given (or found in the folders given) and compare.

    Prints one row per instance (each engine's verdict and time, its ratio to
    the fastest, the winner), then per engine: decided, fastest, only solver,
    PAR-2, and per engine pair the geometric mean of their time ratio.

    Exit status: 0 when all decided answers agree, 1 when engines disagree or
    crash, 2 for usage errors or when no usable instance is given.
    """
    names = _engine_names(engines)
    usable = []
    for name in names:
        why = bench.engine_unavailable(name)
        if why is None:
            usable.append(name)
        else:
            click.echo(f"symreach bench: engine {name} skipped: {why}", err=True)
    if not usable:
        raise click.UsageError("none of the requested engines is available here")
    with tempfile.TemporaryDirectory(prefix="symreach-bench-") as tmp:
        paths = [_stdin_file(Path(tmp)) if arg == "-" else Path(arg) for arg in inputs]
        instances = collect_instances(paths, _fallback_query(pod, node, node_selector))
        if not instances:
            raise click.UsageError(f"{', '.join(inputs)}: no instance file with a query ({', '.join(SUFFIXES)})")
        limits = BenchLimits(timeout, cpu_limit, memory_mb, parallel)
        outputs = Outputs(csv_out, json_out, plot_dir, "cpu_s" if metric == "cpu" else "time_s", progress, fmt)
        _run_and_report(instances, usable, inputs, limits, outputs, tolerate_crashes,
                        (executor, scheduler, workers, worker_memory))


def _stdin_file(folder: Path) -> Path:
    """Standard input, saved once: every benchmark job reads its instance from a file."""
    from symreach.loader.yaml_source import read_stream_text

    text = read_stream_text(sys.stdin.buffer)
    path = folder / ("stdin.json" if text.lstrip()[:1] in ("{", "[") else "stdin.yaml")
    path.write_text(text)
    return path


@dataclass(frozen=True)
class BenchLimits:
    timeout_s: float
    cpu_limit_s: Optional[float]
    memory_mb: int
    parallel: int


@dataclass(frozen=True)
class Outputs:
    csv: Optional[Path]
    json: Optional[Path]
    plot_dir: Optional[Path]
    metric: str  # time_s or cpu_s
    progress: bool
    fmt: str = "text"  # -o: the tables (text, wide), or every job as one document on stdout


def _run_and_report(instances, usable, inputs, limits: BenchLimits, outputs: Outputs,
                    tolerate_crashes: bool, executor_choice: tuple) -> None:
    from symreach.bench.meta import load, run_meta
    from symreach.bench.progress import BenchProgress

    executor, scheduler, workers, worker_memory = executor_choice
    jobs = [bench.Job(inst, engine, cpu_limit_s=limits.cpu_limit_s) for inst in instances for engine in usable]
    meta = run_meta(folder=", ".join(inputs), engines=usable, timeout_s=limits.timeout_s,
                    cpu_limit_s=limits.cpu_limit_s, memory_mb=limits.memory_mb, parallel=limits.parallel,
                    compare=outputs.metric, executor=executor,
                    engine_options={"engines": usable, "timeout_s": limits.timeout_s,
                                    "cpu_limit_s": limits.cpu_limit_s, "memory_mb": limits.memory_mb,
                                    "parallel": limits.parallel})
    shown = BenchProgress(len(jobs), limits.parallel) if outputs.progress else None
    try:
        if executor == "local" and scheduler is None:
            results = bench.run_jobs(jobs, limits.timeout_s, limits.memory_mb, parallel=limits.parallel,
                                     stop_series=False, on_result=shown and shown.on_result,
                                     on_start=shown and shown.on_start)
        else:
            from symreach.bench.distributed import run_jobs_on

            with executor_from_options(executor, scheduler, workers, worker_memory) as ex:
                results = run_jobs_on(ex, jobs, limits.timeout_s, limits.memory_mb,
                                      on_result=shown and shown.on_result)
    finally:
        if shown is not None:
            shown.close()
    meta["load_end"] = load()
    found = bench.failures(results, crashes_fail=not tolerate_crashes)
    metric = outputs.metric
    if outputs.fmt in ("text", "wide"):
        _print_tables(results, found, metric, meta)
    else:
        click.echo(_bench_document(results, meta, found, outputs.fmt))
    if outputs.plot_dir is not None:
        from symreach.bench.plots import plot_all

        pngs, note = plot_all(results, outputs.plot_dir, metric)
        click.echo(f"symreach bench: {note}" if note else f"wrote {len(pngs)} plots (PNG + JSON) "
                   f"to {outputs.plot_dir}", err=True)
    write_outputs([(path, render) for path, render in (
        (outputs.csv, lambda: bench_tables.write_csv(results, meta=meta)),
        (outputs.json, lambda: json.dumps(bench_tables.results_json(results, meta, found), indent=1,
                                          default=str) + "\n")) if path is not None])
    if found:
        click.echo(bench.failure_report(found), err=True)
        sys.exit(1)


def _print_tables(results, found, metric: str, meta: dict) -> None:
    """The text output: one row per instance, then per family, engine and engine pair."""
    from symreach.bench import analysis

    click.echo(bench_tables.format_grid(*bench_tables.instance_rows(results, {f.instance for f in found},
                                                                    metric)))
    for title, table in (("per family and engine", bench_tables.summary_rows(results)),
                         ("per engine", analysis.engine_summary_rows(results, metric)),
                         ("per engine pair", analysis.pair_rows(results, metric))):
        click.echo(f"\n{title}:")
        click.echo(bench_tables.format_grid(*table))
    click.echo(f"\n{'CPU' if metric == 'cpu_s' else 'wall'} time of engine.check; x: ratio to the "
               f"fastest; PAR-2: mean time, twice the limit when not decided; geo-mean a/b below 1: "
               f"a is faster. Load average {meta['load_start']} at the start, {meta['load_end']} at the end.")


def _bench_document(results, meta: dict, found, fmt: str) -> str:
    """``-o json|yaml|csv``: every job (docs/json.md, ``bench``), or the CSV of ``--csv-out``."""
    if fmt == "csv":
        return bench_tables.write_csv(results, meta=meta).rstrip("\n")
    from symreach.report.schema import render_document

    return render_document("bench", bench_tables.results_json(results, meta, found), fmt)
