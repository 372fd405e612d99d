"""``symreach check INPUT...``: decide one target, print the verdict with its evidence.

Exit codes (SPEC 4): 0 deployable, 1 not deployable, 2 usage or input error,
3 unknown.
"""

from __future__ import annotations

from pathlib import Path

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.evidence import not_deployable_evidence
from symreach.cli.options import (
    check_engine,
    input_options,
    load_inputs_from_options,
    memory_option,
    pod_hints,
    query_from_options,
    target_options,
    timeout_option,
    with_warnings,
)
from symreach.cli.output import PendingOutput, certificate_text, emit_verdict
from symreach.result import Result, Verdict


@click.command("check", cls=ErrorReportingCommand)
@input_options
@target_options
@click.option("--engine", default="auto", show_default=True,
              help="auto, or one engine of the registry: explicit, lazy, bdd, bmc, ic3, abc-pdr, ... "
                   "(an unknown name lists them all).")
@timeout_option()
@memory_option
@click.option("--max-states", type=click.IntRange(min=1), default=None, help="State cap of the explicit engine.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Cores --engine auto time-slices its engines on.")
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
@click.option("--counters", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="BDD engine: count interchangeable nodes per local state instead of one bit per "
                   "pod and node (auto: a few sweeps when a class has >= 32 nodes, then the concrete "
                   "encoding; the stats say which decided).")
def check(inputs, strict, max_input_mb, pod, node, node_selector, with_items, engine, timeout, memory, max_states,
          jobs, quiet, as_json, trace_out, trace_format, cert_out, shortest, why, counters) -> None:
    """Decide whether the target can ever be covered from the initial configuration.

    INPUT: files, directories (every YAML/JSON file, recursively) or - for
    standard input; one symreach instance, or Kubernetes manifests and dumps.
    """
    from symreach.errors import time_remaining
    from symreach.report.progress import make_progress
    from symreach.report.verdict import result_json, result_text
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide, shortest_engine

    check_engine(engine)
    if trace_format is not None and trace_out is None:
        raise click.UsageError("--trace-format needs --trace-out FILE")
    process.begin(timeout, memory)
    process.set_fallback(lambda reason: result_json(Result(Verdict.UNKNOWN, engine, reason=reason)) if as_json
                         else result_text(Result(Verdict.UNKNOWN, engine, reason=reason)))
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    instance, context = loaded.instance, loaded.context
    with pod_hints(loaded):
        query = query_from_options(instance, pod, node, node_selector, with_items)

    def render(result: Result) -> str:
        if as_json:
            return with_warnings(result_json(result, query.description), loaded)
        return result_text(result, query.description, trace_pod_names(result, instance, context))

    process.set_fallback(lambda reason: render(Result(Verdict.UNKNOWN, engine, reason=reason)))
    if shortest:
        try:
            engine = shortest_engine(engine)
        except ValueError as exc:
            raise click.UsageError(f"--shortest: {exc}")
    try:
        solver = make_engine(engine, jobs=jobs) if engine == "auto" else make_engine(engine)
    except ImportError as exc:
        raise click.UsageError(f"engine {engine!r} is not available here: {exc}")
    progress = make_progress(quiet or as_json)
    try:
        run = RunContext.for_process(max_states=max_states, memory_mb=memory, progress=progress, counters=counters)
        result: Result = decide(solver, instance, query, run, shortest=shortest)
    finally:
        if progress is not None:
            progress.close()
    outputs: list[PendingOutput] = []
    if trace_out is not None and result.trace:
        from symreach.export.traces import export_trace

        fmt = trace_format or _TRACE_SUFFIXES.get(trace_out.suffix.lower(), "json")
        outputs.append((trace_out, lambda: export_trace(result.trace, instance, fmt,
                                                        initial_pod_names=context.get("initial_pod_names"))))
    elif trace_out is not None:
        click.echo(f"symreach: note: no witness trace ({result.verdict.value}); {trace_out} not written", err=True)
    why_text = not_deployable_evidence(instance, query, result, cert_out, why, time_remaining())
    if cert_out is not None and result.certificate is not None:
        outputs.append((cert_out, lambda: certificate_text(result)))
    elif cert_out is not None and result.verdict is not Verdict.NOT_DEPLOYABLE:
        click.echo(f"symreach: note: no certificate ({result.verdict.value}); {cert_out} not written", err=True)
    text = render(result)
    if why_text and not as_json:
        text += "\n" + why_text
    emit_verdict(text, result.verdict.exit_code, outputs)


def trace_pod_names(result: Result, instance, context) -> list[str]:
    """The pods the witness creates and deletes, named as ``--trace-out`` names them."""
    if not result.trace:
        return []
    from symreach.export.traces import step_names

    return step_names(result.trace, instance, context.get("initial_pod_names"))


_TRACE_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".sh": "kubectl", ".txt": "text"}
