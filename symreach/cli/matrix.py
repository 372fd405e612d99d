"""``symreach matrix FILE``: the deployability of every (type, node) pair (the lead registers it)."""

from __future__ import annotations

import sys

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.solvers.matrix import matrix_table, render_csv, render_json, render_text


@click.command("matrix", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True)
@click.option("--timeout", type=float, default=None, help="Seconds before unknown cells.")
def matrix_command(file: str, fmt: str, timeout) -> None:
    """Decide, with one fixpoint, which pod types can ever run on which nodes."""
    from symreach.frontends.dispatch import load_any

    inst = load_any(file)
    m = matrix_table(inst, timeout_s=timeout)
    click.echo({"text": render_text, "json": render_json, "csv": render_csv}[fmt](m))
    sys.exit(0 if m.stats.get("complete") else 3)


