"""The ``symreach`` command group: registers one module per command.

Exit codes (SPEC 4): 0 deployable, 1 not deployable, 2 usage or input error,
3 unknown (a limit was reached), 4 internal error; 130, 143, 129 interrupted
by SIGINT, SIGTERM, SIGHUP. ``main`` runs the command under the supervisor
of ``symreach.cli.process``.
"""

from __future__ import annotations

import click

from symreach.cli.bench import bench_command
from symreach.cli.certify import certify_command
from symreach.cli.check import check
from symreach.cli.encode import encode_group
from symreach.cli.errors import ErrorReportingGroup
from symreach.cli.explain import explain_command
from symreach.cli.export import export_command
from symreach.cli.generate import generate_group
from symreach.cli.matrix import matrix_command
from symreach.cli.process import run_supervised
from symreach.cli.where import where_command

@click.group(cls=ErrorReportingGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symreach")
def cli() -> None:
    """Can a pod type ever reach a node? Decide it, with evidence."""


for _command in (check, explain_command, encode_group, generate_group, matrix_command, certify_command,
                 export_command, bench_command, where_command):
    cli.add_command(_command)


def main() -> None:
    run_supervised(lambda: cli(prog_name="symreach"))
