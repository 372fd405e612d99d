"""``symreach export FILE``: the compiled transition system for external model
checkers (AIGER for ABC and the hardware model-checking world, DIMACS for one
BMC unrolling)."""

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
@list_targets_option
@timeout_option(help="Seconds before giving up.")
@memory_option
@format_options(("text", "json", "yaml"))
def export_command(inputs, strict, max_input_mb, pod, node, node_selector, with_items, aiger_out, dimacs_out,
                   depth, timeout, memory, fmt) -> None:
    """Export the compiled transition system for external model checkers."""
    from symreach.encodings.compile import compile_system

    if (aiger_out is None) == (dimacs_out is None) and not listing_targets():
        raise click.UsageError("give exactly one of --aiger OUT or --dimacs OUT")
    if dimacs_out is not None and depth is None:
        raise click.UsageError("--dimacs needs --depth K")
    process.begin(timeout, memory)
    run = RunContext.for_process()
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    list_targets_if_asked(loaded, fmt)
    instance = loaded.instance
    with pod_hints(loaded):
        query = query_from_options(instance, pod, node, node_selector, with_items)
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
    if fmt == "text":
        click.echo(text)
        return
    from symreach.report.schema import render_document

    click.echo(render_document("export", {"wrote": path, "format": kind, "target": target, "sizes": sizes}, fmt))
