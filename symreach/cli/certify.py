"""``symreach certify FILE CERT``: re-check a not-deployable certificate of any kind.

The checkers live in ``symreach.certify`` (``dispatch`` picks one by the
file's format) and share no code with the engines that produced the
certificates. Exit codes: 0 valid, 1 invalid (with the failing clause or
condition), 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import format_options, limit_options, load_inputs_from_options
from symreach.loader.yaml_source import DEFAULT_MAX_INPUT_MB, read_file_text


@click.command("certify", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(path_type=str, allow_dash=True))
@click.argument("cert", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status.")
@click.option("--explain", is_flag=True, help="Also print the certificate as a few readable lemmas.")
@click.option("--max-input-mb", type=click.IntRange(min=1), default=DEFAULT_MAX_INPUT_MB, show_default=True,
              help="Refuse an input file larger than this (MiB).")
@format_options(("text", "json", "yaml"))
@limit_options
def certify_command(file: str, cert: Path, quiet: bool, explain: bool, max_input_mb: int, fmt: str) -> None:
    """Re-check a not-deployable certificate CERT against FILE.

    Every kind --cert-out writes is accepted: static filter, Theorem 5,
    may-be-present fixpoint, explicit reachable set, BDD and IC3 invariants.
    The check is independent of the engine (exit 0 valid, 1 invalid, 2 bad input)."""
    from symreach.certify import clause_invariant
    from symreach.certify.dispatch import check_loaded, parse

    instance = load_inputs_from_options([file], False, max_input_mb).instance
    text = read_file_text(cert)
    try:
        loaded = parse(text)
    except ValueError as exc:
        click.echo(f"symreach: error: {cert}: not a symreach certificate: {exc}", err=True)
        sys.exit(2)
    ok, message = check_loaded(instance, loaded)
    if fmt in ("json", "yaml") and not quiet:
        from symreach.report.schema import render_document

        click.echo(render_document("certify", {"valid": ok, "kind": loaded.kind, "format": loaded.format,
                                               "target": str(loaded.target), "message": message}, fmt))
    elif not quiet:
        click.echo(("VALID: " if ok else "INVALID: ") + f"{loaded.kind} for {loaded.target}: {message}")
        if ok and explain:
            from symreach.certify.lemmas import lemmas_text

            click.echo(lemmas_text(instance, loaded))
        elif ok and loaded.format == clause_invariant.FORMAT and loaded.content.clauses:
            click.echo(loaded.content.render())  # IC3's clauses, one sentence each
    sys.exit(0 if ok else 1)
