"""Input errors become one line on stderr and exit status 2, never a traceback.

Every command and group of the CLI uses these classes, so a command invoked
on its own (as the tests and ``python -m`` users do) reports errors exactly
as it does under ``symreach``.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from symreach.errors import InputError

EXIT_INPUT_ERROR = 2


def _report_input_errors(invoke: Any, ctx: click.Context) -> Any:
    try:
        return invoke(ctx)
    except InputError as exc:
        click.echo(f"symreach: error: {exc}", err=True)
        sys.exit(EXIT_INPUT_ERROR)
    except RecursionError:
        click.echo("symreach: error: input nested too deeply", err=True)
        sys.exit(EXIT_INPUT_ERROR)


class ErrorReportingCommand(click.Command):
    """A command whose InputErrors end in one line and exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        return _report_input_errors(super().invoke, ctx)


class ErrorReportingGroup(click.Group):
    """A group whose subcommands' InputErrors end in one line and exit 2."""

    command_class = ErrorReportingCommand

    def invoke(self, ctx: click.Context) -> Any:
        return _report_input_errors(super().invoke, ctx)
