"""Input errors become one line on stderr and exit status 2, never a traceback.

Every command and group of the CLI uses these classes, so a command invoked
on its own (as the tests and ``python -m`` users do) reports errors exactly
as it does under ``symreach``. Limits end in the command's ``unknown``
verdict (exit 3, ``symreach.cli.process``); anything unexpected is one line
naming it, exit 4 (``SYMREACH_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Optional

import click

from symreach.cli import process
from symreach.errors import InputError, LimitReached

EXIT_INPUT_ERROR = 2
EXIT_INTERNAL_ERROR = process.EXIT_INTERNAL


def _report_input_errors(invoke: Any, ctx: click.Context) -> Any:
    value, limit = _run_until_limit(invoke, ctx)
    if limit is None:
        return value
    # outside the except clause: the traceback, and with it the frames holding
    # what filled the memory, is gone, so the verdict can be printed
    process.limit_reached(limit)


def _run_until_limit(invoke: Any, ctx: click.Context) -> tuple[Any, Optional[str]]:
    """Run the command: (its value, None), or (None, the reason a time or memory limit stopped it)."""
    try:
        return invoke(ctx), None
    except InputError as exc:
        click.echo(f"symreach: error: {exc}", err=True)
        sys.exit(EXIT_INPUT_ERROR)
    except RecursionError:
        click.echo("symreach: error: input nested too deeply", err=True)
        sys.exit(EXIT_INPUT_ERROR)
    except LimitReached as exc:
        return None, exc.reason
    except MemoryError:
        return None, process.memory_reason()
    except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # a bug: one line, a distinct status, never exit 1 ("not deployable")
        if os.environ.get("SYMREACH_DEBUG"):
            traceback.print_exc()
        click.echo(f"symreach: internal error: {type(exc).__name__}: {exc} "
                   "(please report it; SYMREACH_DEBUG=1 shows the traceback)", err=True)
        sys.exit(EXIT_INTERNAL_ERROR)


class ErrorReportingCommand(click.Command):
    """A command whose InputErrors end in one line and exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        process.reset()
        try:
            return _report_input_errors(super().invoke, ctx)
        finally:
            process.reset()


class ErrorReportingGroup(click.Group):
    """A group whose subcommands' InputErrors end in one line and exit 2."""

    command_class = ErrorReportingCommand

    def invoke(self, ctx: click.Context) -> Any:
        return _report_input_errors(super().invoke, ctx)
