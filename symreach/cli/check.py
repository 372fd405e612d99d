"""``symreach check INPUT...``: decide one target, print the verdict with its evidence.

Exit codes (SPEC 4): 0 deployable, 1 not deployable, 2 usage or input error,
3 unknown.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional, Sequence

import click

from symreach.cli import group_check, process
from symreach.cli.group_check import group_option
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.evidence import not_deployable_evidence
from symreach.cli.executor_options import executor_options
from symreach.cli.moves_options import apply_moves, explain_block, moves_options, operator_terms
from symreach.cli.nominated_answers import with_nominations
from symreach.cli.options import (
    check_engine,
    engine_option,
    jobs_option,
    format_options,
    input_options,
    list_targets_if_asked,
    list_targets_option,
    load_inputs_from_options,
    memory_option,
    pod_hints,
    query_from_options,
    target_options,
    timeout_option,
    warnings_json,
    zoneinfo_read,
)
from symreach.cli.output import PendingOutput, certificate_text, emit_verdict
from symreach.cli.timing import Clock, command_clock, minimise_seconds
from symreach.result import Result, Verdict


@click.command("check", cls=ErrorReportingCommand)
@input_options
@target_options
@moves_options
@list_targets_option
@engine_option()
@timeout_option()
@memory_option
@group_option
@click.option("--max-states", type=click.IntRange(min=1), default=None, help="State cap of the explicit engine.")
@jobs_option(help="Processes working at once (the cores --engine auto time-slices its engines on).")
@click.option("--quiet", "-q", is_flag=True, help="No progress line on stderr.")
@format_options()
@click.option("--trace-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the witness trace here.")
@click.option("--trace-format", type=click.Choice(["json", "yaml", "kubectl", "text"]), default=None,
              help="Default: from the --trace-out suffix (.json, .yaml/.yml, .sh, .txt), else json.")
@click.option("--cert-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the not-deployable certificate here.")
@click.option("--aiger-witness", "aiger_witness_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the HWMCC/AIGER witness of a deployable answer here, on the model "
                   "`symreach export --aiger` writes for the same input and target.")
@click.option("--shortest", is_flag=True,
              help="A provably shortest witness (breadth-first search; --engine explicit or auto).")
@click.option("--why", is_flag=True, help="On not-deployable, print the certificate as a few readable lemmas.")
@click.option("--counters", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="BDD engine: count interchangeable nodes per local state instead of one bit per "
                   "pod and node (auto: a few sweeps when a class has >= 32 nodes, then the concrete "
                   "encoding; the stats say which decided).")
@executor_options
def check(inputs, strict, max_input_mb, pod, node, node_selector, with_items, engine, timeout, memory, max_states,
          jobs, quiet, fmt, trace_out, trace_format, cert_out, aiger_witness_out, shortest, why, counters,
          executor, scheduler, workers, worker_memory) -> None:
    """Decide whether the target can ever be covered from the initial configuration.

    INPUT: files, directories (every YAML/JSON file, recursively) or - for
    standard input; one symreach instance, or Kubernetes manifests and dumps.
    """
    from symreach.report.progress import Recorder, make_progress
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide, shortest_engine

    check_engine(engine)
    if scheduler is not None and executor != "dask":
        raise click.UsageError("--scheduler needs --executor dask")
    if shortest and executor == "dask":
        raise click.UsageError("--shortest runs the explicit search here: drop --executor dask")
    if trace_format is not None and trace_out is None:
        raise click.UsageError("--trace-format needs --trace-out FILE")
    process.begin(timeout, memory)
    clock = command_clock()
    recorder = Recorder(make_progress(quiet or fmt != "text"))
    process.set_fallback(lambda reason: render_check(_limited(engine, reason, recorder, clock), fmt, times=clock.times()))
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    list_targets_if_asked(loaded, fmt)
    instance, context = loaded.instance, loaded.context
    group_check.answer_if_asked(loaded)
    with pod_hints(loaded):
        query = query_from_options(instance, pod, node, node_selector, with_items, context.get("targets"))
    instance, engine = apply_moves(instance, query, engine)
    if trace_out is not None and instance.moves.restricted and \
            (trace_format or _TRACE_SUFFIXES.get(trace_out.suffix.lower())) == "kubectl":
        raise click.UsageError("under operator moves the kubectl script evicts through the Eviction API and "
                               "guards its context: write it with symreach export --kubectl FILE --context NAME")

    def render(result: Result) -> str:
        from symreach.report.caveats import verdict_caveats

        caveats = verdict_caveats(context.get("report"), instance, query, result)
        names = trace_pod_names(result, instance, context)
        operator = operator_terms(instance, result, names)  # sets stats["operator_steps"] for JSON
        return render_check(result, fmt, query.description, warnings_json(loaded), clock.times(), caveats,
                            names, zoneinfo_read()) + (operator if fmt in ("text", "wide") else "")

    def fallback(reason: str) -> str:
        return render(_limited(engine, reason, recorder, clock))

    process.set_fallback(fallback)
    recorder.on_report = process.refresh_fallback  # the supervisor's copy follows the engines' progress
    if shortest:
        try:
            engine = shortest_engine(engine)
        except ValueError as exc:
            raise click.UsageError(f"--shortest: {exc}")
    try:
        # auto imports its engines' modules only if it races them (start-up of small checks)
        solver = make_engine(engine, jobs=jobs, preload=False) if engine == "auto" else make_engine(engine)
    except ImportError as exc:
        raise click.UsageError(f"engine {engine!r} is not available here: {exc}")
    try:
        run = RunContext.for_process(max_states=max_states, memory_mb=memory, progress=recorder, counters=counters)
        if executor == "dask":
            result = _race_on_dask(engine, instance, query, run, max_states,
                                   (executor, scheduler, workers, worker_memory))
        else:
            result = decide(solver, instance, query, run, shortest=shortest)
        result = with_nominations(instance, query, result, context.get("report"), run)
        explain_block(instance, query, result, max_states)
    finally:
        recorder.close()
    clock.split(minimise_seconds(result.stats))
    outputs: list[PendingOutput] = []
    if trace_out is not None and result.trace:
        from symreach.export.traces import export_trace

        trace_fmt = trace_format or _TRACE_SUFFIXES.get(trace_out.suffix.lower(), "json")
        outputs.append((trace_out, lambda: export_trace(result.trace, instance, trace_fmt,
                                                        initial_pod_names=context.get("initial_pod_names"),
                                                        initial_holdings=context.get("initial_holdings"))))
    elif trace_out is not None:
        click.echo(f"symreach: note: no witness trace ({result.verdict.value}); {trace_out} not written", err=True)
    if aiger_witness_out is not None and result.trace:
        from symreach.encodings.aiger_witness import aiger_witness

        outputs.append((aiger_witness_out, lambda: aiger_witness(instance, query, result.trace)))
    elif aiger_witness_out is not None:
        click.echo(f"symreach: note: no AIGER witness ({result.verdict.value}); {aiger_witness_out} "
                   "not written", err=True)
    why_text = not_deployable_evidence(instance, query, result, cert_out, why, RunContext.for_process().remaining())
    if cert_out is not None and result.certificate is not None:
        outputs.append((cert_out, lambda: certificate_text(result)))
    elif cert_out is not None and result.verdict is not Verdict.NOT_DEPLOYABLE:
        click.echo(f"symreach: note: no certificate ({result.verdict.value}); {cert_out} not written", err=True)
    text = render(result)
    if why_text and fmt in ("text", "wide"):
        text += "\n" + why_text
    emit_verdict(text, result.verdict.exit_code, outputs)


def _race_on_dask(engine: str, instance, query, run, max_states, where) -> Result:
    """The engines as tasks of a Dask cluster (``solvers.dask_race``); the winner's
    witness minimised here like a local answer's."""
    from symreach.cli.executor_options import executor_from_options
    from symreach.solvers.dask_race import race, race_engines_for
    from symreach.solvers.witness import finish

    with executor_from_options(*where) as ex:
        result = race(ex, instance, query, run, race_engines_for(instance, engine), max_states)
    if engine == "auto" and not result.engine.startswith("auto"):
        result.engine = f"auto/{result.engine}"
    return finish(instance, query, result, run)


def trace_pod_names(result: Result, instance, context) -> list[str]:
    """The pods the witness creates and deletes, named as ``--trace-out`` names them, each
    followed by the claim its deployment binds (``semantics.binding_notes``)."""
    if not result.trace:
        return []
    from symreach.export.traces import step_names

    names = step_names(result.trace, instance, context.get("initial_pod_names"), context.get("initial_holdings"))
    if instance.bindings and len(names) == len(result.trace):
        from symreach.semantics import binding_notes

        names = [f"{name}; {note}" if note else name for name, note in zip(names, binding_notes(instance, result.trace))]
    for i, pending in result.stats.get("nominated_steps", ()):   # ``with_nominations``' witness
        if i < len(names):
            names[i] = f"{pending}, the pending one: its nomination ends"
    return names


_TRACE_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".sh": "kubectl", ".txt": "text"}


def _limited(engine: str, reason: str, recorder, clock: Clock) -> Result:
    """The unknown verdict of a run a limit stopped: what the engines last reported, the time spent."""
    stats = recorder.last_stats(engine)
    return Result(Verdict.UNKNOWN, engine, reason=reason,
                  time_s=time.monotonic() - clock.start, stats=stats)


def render_check(result: Result, fmt: str, target: str = "", warnings: Optional[list] = None,
                 times: Optional[dict[str, float]] = None, caveats: Sequence[str] = (),
                 pod_names: Sequence[str] = (), zoneinfo: Optional[str] = None) -> str:
    """The verdict in the format of ``-o``, with its caveats (what it depends on that is not modelled)
    and, when DRA selectors looked time zones up, the tz database they read (``zoneinfo``)."""
    from symreach.report.caveats import with_caveats
    from symreach.report.verdict import result_data, result_text

    if fmt in ("json", "yaml"):
        from symreach.report.schema import render_document

        data = dict(result_data(result, target, times), warnings=warnings or [], caveats=list(caveats))
        return render_document("check", dict(data, zoneinfo=zoneinfo), fmt)
    if fmt == "csv":
        import csv
        import io

        out = io.StringIO()
        data = result_data(result, target, times)
        writer = csv.writer(out)
        writer.writerow(["verdict", "target", "engine", "time_s", "steps", "reason", "proved"])
        writer.writerow([data["verdict"], target, data["engine"], data["times"]["total_s"], len(data["trace"]),
                         data["reason"], data["proved"] or ""])
        return out.getvalue().rstrip("\n")
    text = with_caveats(result_text(result, target, times, wide=fmt == "wide", pod_names=pod_names), list(caveats))
    return text + (f"\n  zoneinfo: time zones read from {zoneinfo}" if zoneinfo else "")
