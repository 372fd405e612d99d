"""``symreach matrix FILE``: the deployability of every (type, node) pair (the lead registers it)."""

from __future__ import annotations

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import input_options, load_inputs_from_options, memory_option, timeout_option, with_warnings
from symreach.cli.output import emit_verdict
from symreach.solvers.matrix import matrix_table, render_csv, render_json, render_text, unknown_matrix


@click.command("matrix", cls=ErrorReportingCommand)
@input_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True)
@timeout_option(help="Seconds before the remaining cells are unknown.")
@memory_option
def matrix_command(inputs, strict, max_input_mb, fmt: str, timeout, memory) -> None:
    """Decide, with one fixpoint, which pod types can ever run on which nodes."""
    from symreach.errors import time_remaining

    process.begin(timeout, memory)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    inst = loaded.instance

    def render(m) -> str:
        if fmt == "json":
            return with_warnings(render_json(m), loaded)
        return {"text": render_text, "csv": render_csv}[fmt](m)

    process.set_fallback(lambda reason: render(unknown_matrix(inst, reason)))
    m = matrix_table(inst, timeout_s=time_remaining())
    emit_verdict(render(m), 0 if m.stats.get("complete") else 3)


