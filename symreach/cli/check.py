"""``symreach check FILE``: decide one target, print the verdict with its evidence.

Exit codes (SPEC 4): 0 deployable, 1 not deployable, 2 usage or input error,
3 unknown.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import query_from_options, target_options
from symreach.cli.evidence import not_deployable_evidence
from symreach.result import Result


@click.command("check", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@target_options
@click.option("--engine", default="auto", show_default=True,
              help="explicit, bdd, bmc, ic3, abc-pdr, abc-bmc, abc-reach or auto.")
@click.option("--timeout", type=click.FloatRange(min=0), default=None, help="Seconds before answering unknown.")
@click.option("--max-states", type=click.IntRange(min=1), default=None, help="State cap of the explicit engine.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Engines raced in parallel by --engine auto.")
@click.option("--quiet", is_flag=True, help="No progress line on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--trace-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the witness trace here.")
@click.option("--trace-format", type=click.Choice(["json", "yaml", "kubectl", "text"]), default=None,
              help="Default: from the --trace-out suffix (.json, .yaml/.yml, .sh, .txt), else json.")
@click.option("--cert-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the not-deployable certificate here.")
@click.option("--shortest", is_flag=True,
              help="A provably shortest witness (breadth-first search; --engine explicit or auto).")
@click.option("--why", is_flag=True, help="On not-deployable, print the certificate as a few readable lemmas.")
def check(file: Path, pod, node, node_selector, with_items, engine, timeout, max_states, jobs, quiet,
          as_json, trace_out, trace_format, cert_out, shortest, why) -> None:
    """Decide whether the target can ever be covered from the initial configuration."""
    from symreach.frontends.dispatch import load_with_context
    from symreach.report.progress import make_progress
    from symreach.report.verdict import result_json, result_text
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import ENGINES, make_engine
    from symreach.solvers.witness import decide, shortest_engine

    if engine not in ENGINES:
        raise click.BadParameter(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}",
                                 param_hint="--engine")
    instance, context = load_with_context(file)
    query = query_from_options(instance, pod, node, node_selector, with_items)
    if shortest:
        try:
            engine = shortest_engine(engine)
        except ValueError as exc:
            raise click.UsageError(str(exc))
    try:
        solver = make_engine(engine, jobs=jobs) if engine == "auto" else make_engine(engine)
    except ImportError as exc:
        raise click.UsageError(f"engine {engine!r} is not available here: {exc}")
    progress = make_progress(quiet or as_json)
    try:
        result: Result = decide(solver, instance, query, Limits(timeout_s=timeout, max_states=max_states,
                                                                progress=progress), shortest=shortest)
    finally:
        if progress is not None:
            progress.close()
    if trace_out is not None and result.trace:
        from symreach.export.traces import export_trace

        fmt = trace_format or _TRACE_SUFFIXES.get(trace_out.suffix.lower(), "json")
        trace_out.write_text(export_trace(result.trace, instance, fmt,
                                          initial_pod_names=context.get("initial_pod_names")))
    why_text = not_deployable_evidence(instance, query, result, cert_out, why, timeout)
    click.echo(result_json(result, query.description) if as_json else result_text(result, query.description))
    if why_text and not as_json:
        click.echo(why_text)
    sys.exit(result.verdict.exit_code)


_TRACE_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".sh": "kubectl", ".txt": "text"}
