"""``symreach matrix FILE``: the deployability of every (type, node) pair (the lead registers it)."""

from __future__ import annotations

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.executor_options import executor_from_options, executor_options, task_progress
from symreach.cli.options import input_options, load_inputs_from_options, memory_option, timeout_option, with_warnings
from symreach.cli.output import emit_verdict
from symreach.solvers.matrix import matrix_table, render_csv, render_json, render_text, unknown_matrix


@click.command("matrix", cls=ErrorReportingCommand)
@input_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True)
@timeout_option(help="Seconds before the remaining cells are unknown.")
@memory_option
@click.option("--method", type=click.Choice(["cells", "fixpoint"]), default="cells",
              show_default=True,
              help="cells: one task per pod type, one answer per class of interchangeable "
                   "nodes; fixpoint: one BDD fixpoint of the whole system.")
@click.option("--symmetry/--no-symmetry", default=True, show_default=True,
              help="Answer once per class of interchangeable nodes (cells method).")
@click.option("--cell-timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds for the engine on one cell (cells method); then unknown.")
@executor_options
def matrix_command(inputs, strict, max_input_mb, fmt: str, timeout, memory, method: str, symmetry: bool,
                   cell_timeout: float, executor: str, scheduler, workers: int, worker_memory) -> None:
    """Decide which pod types can ever run on which nodes."""
    from symreach.errors import time_remaining

    process.begin(timeout, memory)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    inst = loaded.instance

    def render(m) -> str:
        if fmt == "json":
            return with_warnings(render_json(m), loaded)
        return {"text": render_text, "csv": render_csv}[fmt](m)

    process.set_fallback(lambda reason: render(unknown_matrix(inst, reason)))
    if method == "fixpoint":
        m = matrix_table(inst, timeout_s=time_remaining(), method="fixpoint")
    else:
        with executor_from_options(executor, scheduler, workers, worker_memory) as ex:
            m = matrix_table(inst, timeout_s=time_remaining(), symmetry=symmetry, cell_timeout=cell_timeout,
                             executor=ex, progress=task_progress("matrix", "pod types"))
    from symreach.report.caveats import type_caveats

    m.caveats = type_caveats(loaded.context.get("report"), inst)
    emit_verdict(render(m), 0 if m.stats.get("complete") else 3)
