"""Click commands of the SAT side: ``symreach certify`` and ``symreach export``.

The lead registers ``certify_command`` and ``export_command`` on the main CLI
(``cli.add_command(certify_command, "certify")`` ...). Exit codes: certify 0
valid, 1 invalid (with the failing clause or condition), 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from symreach.errors import InputError


def _load(file: Path):
    from symreach.inputs import load_any

    try:
        return load_any(file)
    except InputError as exc:
        click.echo(f"symreach: error: {exc}", err=True)
        sys.exit(2)


@click.command("certify")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("cert", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status.")
def certify_command(file: Path, cert: Path, quiet: bool) -> None:
    """Re-check an invariant certificate CERT (IC3 text or BDD JSON) against FILE.

    The check is independent of the engine: a fresh solver and a transition
    encoding built directly from the model (exit 0 valid, 1 invalid, 2 bad input)."""
    from symreach.certify_sat import InvariantCertificate, check_certificate

    instance = _load(file)
    try:
        text = cert.read_text()
    except OSError as exc:
        click.echo(f"symreach: error: {cert}: {exc.strerror}", err=True)
        sys.exit(2)
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

    from symreach.certify_bdd import FORMAT, check_certificate
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


@click.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--pod", help="Target pod type (default: the file's query).")
@click.option("--node", help="Target node.")
@click.option("--node-selector", metavar="K=V[,K=V]", help="Target: any node with these labels.")
@click.option("--with", "with_items", multiple=True, metavar="POD@NODE", help="Co-occurrence pair.")
@click.option("--aiger", "aiger_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write AIGER here (binary; ASCII when the name ends in .aag).")
@click.option("--dimacs", "dimacs_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the DIMACS CNF of one BMC unrolling here (needs --depth).")
@click.option("--depth", type=click.IntRange(min=0), help="Unrolling depth for --dimacs.")
def export_command(file: Path, pod, node, node_selector, with_items, aiger_out, dimacs_out, depth) -> None:
    """Export the compiled transition system for external model checkers."""
    from symreach.cli import _query_from_options
    from symreach.encodings.compile import compile_system

    if (aiger_out is None) == (dimacs_out is None):
        raise click.UsageError("give exactly one of --aiger OUT or --dimacs OUT")
    if dimacs_out is not None and depth is None:
        raise click.UsageError("--dimacs needs --depth K")
    instance = _load(file)
    query = _query_from_options(instance, pod, node, node_selector, with_items)
    system = compile_system(instance, query)
    comment = f"symreach export of {file}: target {query.description or query.alternatives}"
    if aiger_out is not None:
        from symreach.export.aiger import write_aiger

        model = write_aiger(system, str(aiger_out), comment=comment)
        click.echo(f"wrote {aiger_out}: {model.aig.n_inputs} inputs, {model.aig.n_latches} latches, "
                   f"{len(model.aig.ands)} and gates, 1 output (the target)")
    else:
        from symreach.export.dimacs import dimacs_text

        text = dimacs_text(system, depth, comment)
        dimacs_out.write_text(text)
        header = next(ln for ln in text.splitlines() if ln.startswith("p cnf"))
        click.echo(f"wrote {dimacs_out}: {header[2:]} (depth {depth})")
