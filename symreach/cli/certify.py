"""``symreach certify FILE CERT [target options]``: re-check a not-deployable certificate.

The certificate must answer the question ``check`` would ask of FILE with
the same target options: it is refused (exit 1, one line) when it is bound
to another instance (its digest), names another target, or names a vacuous
one; otherwise the checker of its kind (``symreach.certify``, sharing no
code with the engines) decides. Exit codes: 0 valid, 1 invalid or refused
(with the failing clause, condition or reason), 2 bad input (an unreadable
file, not a certificate, no target).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from symreach.cli import group_check
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import (format_options, limit_options, load_inputs_from_options, pod_hints,
                                  query_from_options, search_budget_option, target_options, use_zoneinfo,
                                  zoneinfo_option)
from symreach.cli.timing import command_clock
from symreach.report.verdict import times_text
from symreach.loader.yaml_source import DEFAULT_MAX_INPUT_MB, read_file_text


@click.command("certify", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(path_type=str, allow_dash=True))
@click.argument("cert", type=click.Path(dir_okay=False, path_type=Path))
@target_options
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status.")
@click.option("--explain", is_flag=True, help="Also print the certificate as a few readable lemmas.")
@click.option("--max-input-mb", type=click.IntRange(min=1), default=DEFAULT_MAX_INPUT_MB, show_default=True,
              help="Refuse an input file larger than this (MiB).")
@search_budget_option
@zoneinfo_option()
@format_options()
@limit_options
def certify_command(file: str, cert: Path, pod, node, node_selector, with_items, quiet: bool, explain: bool,
                    max_input_mb: int, zoneinfo, fmt: str) -> None:
    """Re-check a not-deployable certificate CERT against FILE.

    Every kind --cert-out writes is accepted: static filter, Theorem 5,
    may-be-present fixpoint, explicit reachable set, counter invariant, lazy
    closure, BDD and IC3 invariants. Give the target options check was given
    (default: FILE's own query); a certificate for another instance or target
    is refused; so is one for a Kubernetes input loaded with another --search-budget where that
    changed the instance (give check's). Exit 0 valid, 1 invalid or refused, 2 bad input."""
    from symreach.certify.dispatch import parse

    use_zoneinfo(zoneinfo)
    loaded = load_inputs_from_options([file], False, max_input_mb)
    instance = loaded.instance
    text = read_file_text(cert)
    try:
        certificate = parse(text)
    except ValueError as exc:
        click.echo(f"symreach: error: {cert}: not a symreach certificate: {exc}", err=True)
        sys.exit(2)
    target = None
    if not group_check.is_group_certificate(certificate):   # a gang certificate names its group
        with pod_hints(loaded):
            target = query_from_options(instance, pod, node, node_selector, with_items)
    if certificate.digest is None:
        ok, message = False, ("refused: the certificate is bound to no instance (no digest); "
                              "write it with check --cert-out")
    else:
        ok, message = certificate.check(instance, target)
    if not ok and "another instance" in message and loaded.kind == "kubernetes":
        message += ("; a Kubernetes input loaded under another --search-budget than check's is another instance "
                    "where that changed a search's outcome: give check's")
    clock = command_clock()
    clock.split()
    if fmt == "csv" and not quiet:
        from symreach.cli.export import one_row_csv

        click.echo(one_row_csv({"valid": ok, "kind": certificate.kind, "format": certificate.format,
                                "target": str(certificate.target), "message": message,
                                "time_s": clock.times()["total_s"]}))
    elif fmt in ("json", "yaml") and not quiet:
        from symreach.report.schema import render_document

        click.echo(render_document("certify", {"valid": ok, "kind": certificate.kind, "format": certificate.format,
                                               "target": str(certificate.target), "message": message,
                                               "times": clock.times()}, fmt))
    elif not quiet:
        # one line (a refusal is one line): the time split closes it
        click.echo(("VALID: " if ok else "INVALID: ") + f"{certificate.kind} for {certificate.target}: {message}"
                   f"; time: {times_text(clock.times())}")
        if ok and explain and group_check.is_group_certificate(certificate):
            click.echo(group_check.explain_certified_group(instance, certificate))
        elif ok and explain:
            from symreach.certify.lemmas import lemmas_text

            recorded = None if certificate.is_text else certificate.content.get("moves")
            if isinstance(recorded, dict):   # checked above: the recorded operator moves are well-formed
                from symreach.certify.explicit_states import with_recorded_moves
                from symreach.cli.evidence import operator_moves_lemmas

                click.echo(operator_moves_lemmas(with_recorded_moves(instance, certificate.content)))
            click.echo(lemmas_text(instance, certificate))
        elif ok and certificate.is_text and certificate.content.clauses:
            click.echo(certificate.content.render())  # IC3's clauses, one sentence each
    sys.exit(0 if ok else 1)
