"""The ``symreach`` command group: registers one module per command, imported on use.

Exit codes (SPEC 4): 0 deployable, 1 not deployable, 2 usage or input error,
3 unknown (a limit was reached), 4 internal error; 130, 143, 129 interrupted
by SIGINT, SIGTERM, SIGHUP. ``main`` runs the command under the supervisor
of ``symreach.cli.process``.

Commands are named here as ``module:attribute`` and imported only when
invoked (or listed by ``--help``): start-up decides small instances, and
``check`` must not pay for BDDs, SAT solvers, the matrix or the bench code
(``benchmarks/startup.py`` measures it, ``tests/test_startup.py`` guards it).
"""

from __future__ import annotations

import gc
import importlib
from typing import Optional

import click

from symreach.cli.errors import ErrorReportingGroup
from symreach.cli.process import run_supervised

# name -> "module:attribute", in the order ``--help`` lists them
COMMANDS = {
    "check": "symreach.cli.check:check",
    "explain": "symreach.cli.explain:explain_command",
    "encode": "symreach.cli.encode:encode_group",
    "generate": "symreach.cli.generate:generate_group",
    "matrix": "symreach.cli.matrix:matrix_command",
    "certify": "symreach.cli.certify:certify_command",
    "export": "symreach.cli.export:export_command",
    "bench": "symreach.cli.bench:bench_command",
    "where": "symreach.cli.where:where_command",
}


class LazyGroup(ErrorReportingGroup):
    """A group whose commands in ``COMMANDS`` are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS) + [n for n in super().list_commands(ctx) if n not in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attr = COMMANDS[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
            _start_up_done()
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symreach")
def cli() -> None:
    """Can a pod type ever reach a node? Decide it, with evidence."""


def main() -> None:
    # Start-up allocates long-lived objects only (modules, classes, click's
    # commands): collecting cycles among them is wasted work (about 30
    # collections, 4-7 ms of CPU for a small check). Off until the command's
    # module is imported; those objects are then frozen out of later collections.
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True
    run_supervised(lambda: cli(prog_name="symreach"))


_gc_paused = False


def _start_up_done() -> None:
    global _gc_paused
    if _gc_paused:
        gc.freeze()
        gc.enable()
        _gc_paused = False
