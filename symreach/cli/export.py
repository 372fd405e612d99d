"""``symreach export FILE``: the compiled transition system for external model
checkers (AIGER for ABC and the hardware model-checking world, DIMACS for one
BMC unrolling), or the witness as a guarded kubectl script (``--kubectl``,
``symreach.export.kubectl_script``)."""

from __future__ import annotations

from pathlib import Path

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli import process
from symreach.cli.options import (
    input_options,
    load_inputs_from_options,
    memory_option,
    pod_hints,
    query_from_options,
    target_options,
    timeout_option,
    format_options,
    list_targets_if_asked,
    list_targets_option,
    listing_targets,
)
from symreach.cli.moves_options import moves_options, refuse_if_requested
from symreach.cli.options import engine_option
from symreach.cli.output import write_or_fail
from symreach.run import RunContext


@click.command("export", cls=ErrorReportingCommand)
@input_options
@target_options
@click.option("--aiger", "aiger_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write AIGER here (binary; ASCII when the name ends in .aag).")
@click.option("--dimacs", "dimacs_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the DIMACS CNF of one BMC unrolling here (needs --depth).")
@click.option("--depth", type=click.IntRange(min=0), help="Unrolling depth for --dimacs.")
@click.option("--kubectl", "kubectl_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Decide the target and write its witness as a bash script for the cluster: a context "
                   "guard, --dry-run=server, evictions under operator moves, kubectl scale for controllers.")
@click.option("--context", "kube_context", metavar="NAME",
              help="With --kubectl: the only kubectl context the script runs against "
                   "(default: kubectl config current-context).")
@moves_options
@engine_option(help="With --kubectl: the engine that finds the witness.")
@list_targets_option
@timeout_option(help="Seconds before giving up.")
@memory_option
@format_options()
def export_command(inputs, strict, max_input_mb, pod, node, node_selector, with_items, aiger_out, dimacs_out,
                   depth, kubectl_out, kube_context, engine, timeout, memory, fmt) -> None:
    """Export the compiled transition system for external model checkers, or a witness as a kubectl script."""
    from symreach.encodings.compile import compile_system

    if sum(x is not None for x in (aiger_out, dimacs_out, kubectl_out)) != 1 and not listing_targets():
        raise click.UsageError("give exactly one of --aiger OUT, --dimacs OUT or --kubectl OUT")
    if kube_context is not None and kubectl_out is None:
        raise click.UsageError("--context needs --kubectl OUT")
    if kubectl_out is not None:
        context = kube_context or current_context()
        process.begin(timeout, memory)
        loaded = load_inputs_from_options(inputs, strict, max_input_mb)
        list_targets_if_asked(loaded, fmt)
        with pod_hints(loaded):
            query = query_from_options(loaded.instance, pod, node, node_selector, with_items)
        export_script(loaded, query, engine, kubectl_out, context, fmt)
        return
    if dimacs_out is not None and depth is None:
        raise click.UsageError("--dimacs needs --depth K")
    process.begin(timeout, memory)
    run = RunContext.for_process()
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    list_targets_if_asked(loaded, fmt)
    instance = loaded.instance
    with pod_hints(loaded):
        query = query_from_options(instance, pod, node, node_selector, with_items)
    refuse_if_requested("AIGER/DIMACS exports")
    if query.moves == "operator":
        raise click.UsageError("the query asks for operator moves; the AIGER/DIMACS encodings have the paper's only")
    system = compile_system(instance, query)
    comment = f"symreach export of {', '.join(loaded.names)}: target {query.description or query.alternatives}"
    if aiger_out is not None:
        from symreach.encodings.aiger import AigerModel

        model = AigerModel(system, run)
        write_or_fail(aiger_out, model.to_bytes(binary=not str(aiger_out).endswith(".aag"), comment=comment,
                                                run=run))
        sizes = {"inputs": model.aig.n_inputs, "latches": model.aig.n_latches, "ands": len(model.aig.ands),
                 "outputs": 1}
        _report(fmt, str(aiger_out), "aiger", query.description, sizes,
                f"wrote {aiger_out}: {model.aig.n_inputs} inputs, {model.aig.n_latches} latches, "
                f"{len(model.aig.ands)} and gates, 1 output (the target)")
    else:
        from symreach.encodings.dimacs import dimacs_text

        text = dimacs_text(system, depth, comment, run)
        write_or_fail(dimacs_out, text)
        header = next(ln for ln in text.splitlines() if ln.startswith("p cnf"))
        _, _, variables, clauses = header.split()
        _report(fmt, str(dimacs_out), "dimacs", query.description,
                {"variables": int(variables), "clauses": int(clauses), "depth": depth},
                f"wrote {dimacs_out}: {header[2:]} (depth {depth})")


def _report(fmt: str, path: str, kind: str, target: str, sizes: dict, text: str) -> None:
    """What was written: the text line, or the JSON contract's ``export`` document."""
    if fmt in ("text", "wide"):
        click.echo(text)
        return
    if fmt == "csv":
        click.echo(one_row_csv({"wrote": path, "format": kind, "target": target, **sizes}))
        return
    from symreach.report.schema import render_document

    click.echo(render_document("export", {"wrote": path, "format": kind, "target": target, "sizes": sizes}, fmt))


def current_context() -> str:
    """``kubectl config current-context``: the script's context when ``--context`` is not given."""
    import shutil
    import subprocess

    if shutil.which("kubectl") is None:
        raise click.UsageError("--kubectl: kubectl is not on PATH, so name the cluster's context: --context NAME")
    try:
        done = subprocess.run(["kubectl", "config", "current-context"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise click.UsageError(f"--kubectl: kubectl config current-context failed ({exc}); give --context NAME")
    name = done.stdout.strip()
    if done.returncode != 0 or not name:
        raise click.UsageError("--kubectl: kubectl has no current context; give --context NAME")
    return name


def export_script(loaded, query, engine: str, out: Path, context: str, fmt: str) -> None:
    """Decide the target as ``check`` does and write its witness as the guarded script; exit as ``check``
    (0 written, 1 not deployable, 3 unknown: no script then)."""
    import sys

    from symreach.cli.moves_options import apply_moves
    from symreach.export.kubectl_script import controllers_of, kubectl_script
    from symreach.export.traces import plan_trace
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide

    instance, engine = apply_moves(loaded.instance, query, engine)
    result = decide(make_engine(engine), instance, query, RunContext.for_process())
    if not result.trace:
        click.echo(f"symreach: no witness ({result.verdict.value}: {result.reason}); {out} not written", err=True)
        sys.exit(result.verdict.exit_code)
    planned = plan_trace(result.trace, instance, initial_pod_names=loaded.context.get("initial_pod_names"),
                         initial_holdings=loaded.context.get("initial_holdings"))
    workloads = getattr(loaded.report, "workloads", None) or {}
    evict = instance.moves.respect_pdb   # the Eviction API checks budgets: only when the witness did
    actions = None
    if instance.moves.restricted and instance.replica_targets:   # the witness in operator terms (issue 29)
        from symreach.report.operator_steps import operator_steps

        actions = [s.to_json() for s in operator_steps(instance, result.trace, [p.qualified for p in planned])]
    write_or_fail(out, kubectl_script(planned, instance, "affinity", context, evict, controllers_of(workloads),
                                      actions))
    out.chmod(out.stat().st_mode | 0o111)
    sizes = {"steps": len(planned), "evictions": sum(p.step.op != "deploy" for p in planned) if evict else 0,
             "context": context}
    _report(fmt, str(out), "kubectl", query.description, sizes,
            f"wrote {out}: {len(planned)} steps for context {context} "
            f"({'evictions' if evict else 'deletions'} as the {'operator' if evict else 'paper'} moves say; "
            f"run it with --dry-run=server first)")


def one_row_csv(row: dict) -> str:
    """``-o csv`` of a command with one answer: a header and one row."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(row), lineterminator="\n")
    writer.writeheader()
    writer.writerow(row)
    return out.getvalue().rstrip("\n")
