"""``symreach matrix FILE``: the deployability of every (type, node) pair (the lead registers it)."""

from __future__ import annotations

import sys

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.executor_options import executor_from_options, executor_options, task_progress
from symreach.solvers.matrix import matrix_table, render_csv, render_json, render_text


@click.command("matrix", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True)
@click.option("--timeout", type=float, default=None, help="Seconds before unknown cells.")
@click.option("--method", type=click.Choice(["cells", "fixpoint"]), default="cells",
              show_default=True,
              help="cells: one task per pod type, one answer per class of interchangeable "
                   "nodes; fixpoint: one BDD fixpoint of the whole system.")
@click.option("--symmetry/--no-symmetry", default=True, show_default=True,
              help="Answer once per class of interchangeable nodes (cells method).")
@click.option("--cell-timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds for the engine on one cell (cells method); then unknown.")
@executor_options
def matrix_command(file: str, fmt: str, timeout, method: str, symmetry: bool, cell_timeout: float,
                   executor: str, scheduler, workers: int, worker_memory) -> None:
    """Decide which pod types can ever run on which nodes."""
    from symreach.frontends.dispatch import load_any

    inst = load_any(file)
    if method == "fixpoint":
        m = matrix_table(inst, timeout_s=timeout, method="fixpoint")
    else:
        with executor_from_options(executor, scheduler, workers, worker_memory) as ex:
            m = matrix_table(inst, timeout_s=timeout, symmetry=symmetry, cell_timeout=cell_timeout,
                             executor=ex, progress=task_progress("matrix", "pod types"))
    click.echo({"text": render_text, "json": render_json, "csv": render_csv}[fmt](m))
    sys.exit(0 if m.stats.get("complete") else 3)
