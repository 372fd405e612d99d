"""Writing what commands produce: YAML/JSON documents and certificates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click
import yaml

from symreach.errors import InputError
from symreach.result import Result


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe dumper that never writes anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(doc: Any) -> str:
    """Deterministic YAML (key order kept, no anchors/aliases)."""
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True)


def write_document(doc: Any, out: Optional[Path], as_json: bool = False) -> None:
    """``doc`` as YAML (or JSON) to ``out``, or to stdout when ``out`` is None."""
    text = json.dumps(doc, indent=2) + "\n" if as_json else dump_yaml(doc)
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", str(out)) from None


output_option = click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
                             help="Write here instead of stdout.")


def write_certificate(path: Path, result: Result) -> None:
    """The result's certificate as text, whatever form the engine returned it in."""
    cert = result.certificate
    if isinstance(cert, str):  # already serialised (by the portfolio's worker process)
        path.write_text(cert)
    elif hasattr(cert, "dumps"):
        path.write_text(cert.dumps())
    else:
        path.write_text(json.dumps(cert, default=str, indent=1))
