"""``symreach certify FILE CERT``: re-check a not-deployable certificate.

The checkers live in ``symreach.certify`` and share no code with the engines
that produced the certificates. Exit codes: 0 valid, 1 invalid (with the
failing clause or condition), 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import limit_options
from symreach.frontends.dispatch import load_any
from symreach.loader.yaml_source import read_file_text


@click.command("certify", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("cert", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status.")
@limit_options
def certify_command(file: Path, cert: Path, quiet: bool) -> None:
    """Re-check an invariant certificate CERT (IC3 text or BDD JSON) against FILE.

    The check is independent of the engine: a fresh solver and a transition
    encoding built directly from the model (exit 0 valid, 1 invalid, 2 bad input)."""
    from symreach.certify.clause_invariant import InvariantCertificate, check_certificate

    instance = load_any(file)
    text = read_file_text(cert)
    if text.lstrip().startswith("{"):
        _certify_bdd(instance, cert, text, quiet)
    try:
        parsed = InvariantCertificate.loads(text)
    except ValueError as exc:
        click.echo(f"symreach: error: {cert}: {exc}", err=True)
        sys.exit(2)
    ok, message = check_certificate(instance, parsed)
    if not quiet:
        click.echo(("VALID: " if ok else "INVALID: ") + message)
        if ok and parsed.clauses:
            click.echo(parsed.render())
    sys.exit(0 if ok else 1)


def _certify_bdd(instance, cert_path: Path, text: str, quiet: bool) -> None:
    """A BDD engine certificate: a JSON-serialised BDD over named state variables."""
    import json

    from symreach.certify.bdd_invariant import FORMAT, check_certificate
    from symreach.model import Query

    try:
        data = json.loads(text)
        if "kind" in data and "format" not in data:
            raise ValueError(f"a {data['kind']!r} argument from preprocessing (its reason is in the verdict), "
                             "not an invariant certificate")
        if data.get("format") != FORMAT:
            raise ValueError(f"unknown certificate format {data.get('format')!r}")
        alternatives = tuple(frozenset((instance.type_index(t), instance.node_index(n)) for t, n in alt)
                             for alt in data["query"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        click.echo(f"symreach: error: {cert_path}: not a valid BDD certificate: {exc}", err=True)
        sys.exit(2)
    ok, message = check_certificate(instance, Query(alternatives, "certificate query"), data)
    if not quiet:
        click.echo(("VALID: " if ok else "INVALID: ") + message)
    sys.exit(0 if ok else 1)
