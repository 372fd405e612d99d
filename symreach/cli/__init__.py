"""The command line: one module per command, shared option parsing in ``options``."""

from symreach.cli.main import cli, main

__all__ = ["cli", "main"]
