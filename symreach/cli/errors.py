"""Input errors become one line on stderr and exit status 2, never a traceback.

Every command and group of the CLI uses these classes, so a command invoked
on its own (as the tests and ``python -m`` users do) reports errors exactly
as it does under ``symreach``. Limits end in the command's ``unknown``
verdict (exit 3, ``symreach.cli.process``); anything unexpected is one line
naming it, exit 4 (``SYMREACH_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import functools
import gc
import os
import sys
from typing import Any, Callable, Optional

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
        _json_error(ctx, "input", exc.problem, EXIT_INPUT_ERROR, exc.filename, exc.line, exc.field_path)
        sys.exit(EXIT_INPUT_ERROR)
    except RecursionError:
        click.echo("symreach: error: input nested too deeply", err=True)
        _json_error(ctx, "input", "input nested too deeply", EXIT_INPUT_ERROR)
        sys.exit(EXIT_INPUT_ERROR)
    except click.ClickException as exc:
        if _json_error(ctx, "usage", exc.format_message(), exc.exit_code):
            click.echo(f"symreach: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        raise
    except LimitReached as exc:
        return None, exc.reason
    except MemoryError:
        pass  # the reason is built below, once this clause has dropped the frames that filled memory
    except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # a bug: one line, a distinct status, never exit 1 ("not deployable")
        if os.environ.get("SYMREACH_DEBUG"):
            import traceback  # only for an internal error: not at start-up

            traceback.print_exc()
        click.echo(f"symreach: internal error: {type(exc).__name__}: {exc} "
                   "(please report it; SYMREACH_DEBUG=1 shows the traceback)", err=True)
        _json_error(ctx, "internal", f"{type(exc).__name__}: {exc}", EXIT_INTERNAL_ERROR)
        sys.exit(EXIT_INTERNAL_ERROR)
    return None, process.memory_reason()


def _memory_released(callback: Callable[..., Any]) -> Callable[..., Any]:
    """The command's callback, with ``MemoryError`` turned into ``LimitReached``
    right where it leaves the command, before it unwinds through click's
    ``with`` blocks: while the traceback holds the frames that filled memory,
    CPython 3.11 can spin forever unwinding a ``with`` block (the int it
    pushes for the handler cannot be allocated; python/cpython#132508). The
    ``LimitReached`` is raised after the except clause, when they are gone."""

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except MemoryError:
            pass
        gc.collect()  # frames caught in reference cycles too
        raise LimitReached(process.memory_reason())

    return run


def _json_error(ctx: click.Context, kind: str, message: str, code: int, file: Optional[str] = None,
                line: Optional[int] = None, field: Optional[str] = None) -> bool:
    """Under ``-o json|yaml`` the error is also a document on stdout (docs/json.md); True if printed."""
    from symreach.cli.options import current_format

    fmt = current_format()
    if fmt not in ("json", "yaml"):
        return False
    from symreach.report.schema import error_document, render_document

    doc = error_document(ctx.info_name or "symreach", kind, message, code, file=file, line=line, field=field)
    click.echo(render_document(doc["command"], doc, fmt))
    return True


def args_format(args: list[str]) -> Optional[str]:
    """``json``/``yaml`` when the raw arguments ask for it (errors before the options are parsed)."""
    for i, arg in enumerate(args):
        if arg == "--json":
            return "json"
        value = None
        if arg in ("-o", "--output", "--format") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(("--output=", "--format=")):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-o") and len(arg) > 2:
            value = arg[2:].lstrip("=")
        if value in ("json", "yaml"):
            return value
    return None


class ErrorReportingCommand(click.Command):
    """A command whose InputErrors end in one line and exit 2 (and a JSON
    document on stdout under ``-o json``, also for a bad option)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from symreach.cli.options import FORMAT_META

        fmt = args_format(args)
        if fmt is not None:  # errors before the command's own -o is read are documents too
            ctx.meta[FORMAT_META] = fmt
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as exc:
            if fmt is None:
                raise
            click.echo(f"symreach: error: {exc.format_message()}", err=True)
            _json_error(ctx, "usage", exc.format_message(), exc.exit_code)
            sys.exit(exc.exit_code)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.callback is not None:
            self.callback = _memory_released(self.callback)

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
