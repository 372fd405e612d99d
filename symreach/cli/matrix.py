"""``symreach matrix FILE``: the deployability of every (type, node) pair (the lead registers it)."""

from __future__ import annotations

import io
import sys

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.executor_options import executor_from_options, executor_options, task_progress
from symreach.cli.options import input_options, load_inputs_from_options, memory_option, timeout_option


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
    from symreach.errors import LimitReached, time_remaining
    from symreach.solvers.matrix import (empty_matrix, matrix_table, stop_matrix,
                                         write_matrix)  # CUDD: only when invoked (start-up)

    process.begin(timeout, memory)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    inst = loaded.instance

    def write(m, out) -> None:
        extra = {"warnings": [g.to_json() for g in loaded.context.get("warnings", [])]}
        write_matrix(m, fmt, out, extra if fmt == "json" else None)

    process.set_fallback(lambda reason: _fallback_text(inst, reason, write))
    if method == "fixpoint":
        m = matrix_table(inst, timeout_s=time_remaining(), method="fixpoint")
    else:
        # Filled as pod types finish: a memory limit keeps every cell decided before it.
        m = empty_matrix(inst)
        stopped = None
        try:
            with executor_from_options(executor, scheduler, workers, worker_memory) as ex:
                matrix_table(inst, timeout_s=time_remaining(), symmetry=symmetry, cell_timeout=cell_timeout,
                             executor=ex, progress=task_progress("matrix", "pod types"), into=m)
        except MemoryError:
            stopped = process.memory_reason()
        except LimitReached as exc:
            stopped = exc.reason
        if stopped is not None:   # outside the handler: its frames (what filled memory) are gone
            stop_matrix(m, stopped)
    from symreach.report.caveats import type_caveats

    m.caveats = type_caveats(loaded.context.get("report"), inst)
    code = 0 if m.stats.get("complete") else 3
    process.printing(code)
    try:
        write(m, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:   # the reader stopped early (| head): not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(code)


# Past this many cells the supervisor's copy of the fallback (printed only if the
# run has to be killed) lists no cells: a pre-rendered JSON matrix of five million
# unknown cells is 400 MB. A run that stops by itself prints its cells either way.
FALLBACK_CELLS = 1_000_000


def _fallback_text(inst, reason: str, write) -> str:
    from symreach.solvers.matrix import Matrix, unknown_matrix

    m = unknown_matrix(inst, reason)
    if len(m.cells) > FALLBACK_CELLS:
        m = Matrix((), m.nodes, {}, {}, {"complete": False,
                                          "reason": f"{reason} (cells not listed: the run was stopped)"})
    out = io.StringIO()
    write(m, out)
    return out.getvalue().rstrip("\n")
