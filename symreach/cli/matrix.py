"""``symreach matrix FILE``: the deployability of every (type, node) pair (the lead registers it)."""

from __future__ import annotations

import sys

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import input_options, load_inputs_from_options, with_warnings
from symreach.solvers.matrix import matrix_table, render_csv, render_json, render_text


@click.command("matrix", cls=ErrorReportingCommand)
@input_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True)
@click.option("--timeout", type=float, default=None, help="Seconds before unknown cells.")
def matrix_command(inputs, strict, max_input_mb, fmt: str, timeout) -> None:
    """Decide, with one fixpoint, which pod types can ever run on which nodes."""
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    m = matrix_table(loaded.instance, timeout_s=timeout)
    if fmt == "json":
        click.echo(with_warnings(render_json(m), loaded))
    else:
        click.echo({"text": render_text, "csv": render_csv}[fmt](m))
    sys.exit(0 if m.stats.get("complete") else 3)


