"""``symreach encode``: the paper's reductions as commands.

``encode petri`` turns a one-safe Petri net into a format-v1 instance
(Appendix B), ``encode pebbling`` a DAG with a pebble bound (Appendix C).
Both write YAML (``-o json``: JSON) to ``--out FILE`` or stdout; bad input is an ``InputError``,
which the main group prints as one line with exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from symreach.cli.errors import ErrorReportingGroup
from symreach.cli.options import limit_options
from symreach.cli.output import document_output_options, write_document
from symreach.errors import InputError
from symreach.loader.yaml_source import read_file_text


@click.group("encode", cls=ErrorReportingGroup)
def encode_group() -> None:
    """Encode a Petri net (Appendix B) or a pebbling game (Appendix C) as an instance."""


@encode_group.command("petri")
@click.argument("net", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--goal", required=True, help="Goal place g; the query is pod G-g on the node.")
@document_output_options
@limit_options
def encode_petri_cmd(net: Path, goal: str, out: Optional[Path], fmt: Optional[str]) -> None:
    """Encode a 1-safe net (PNML or JSON) with goal place GOAL (paper Appendix B)."""
    from symreach.frontends.petri_net import read_net
    from symreach.frontends.reduction_petri import encode_petri

    write_document(encode_petri(read_net(net), goal), out, fmt=fmt)


def read_dag(path: Path) -> tuple[list[str], list[tuple[str, str]], Optional[str]]:
    """Read ``{vertices, edges: [[u, v], ...], target}`` (JSON); names become strings."""
    try:
        data = json.loads(read_file_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", str(path), exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError("expected an object {vertices, edges, target}", str(path))
    extra = set(data) - {"vertices", "edges", "target"}
    if extra:
        raise InputError("unknown field", str(path), None, sorted(extra)[0])
    vertices = data.get("vertices")
    if not isinstance(vertices, list) or not all(isinstance(v, (str, int)) for v in vertices):
        raise InputError("expected a list of vertex names", str(path), None, "vertices")
    edges = data.get("edges", [])
    if not isinstance(edges, list):
        raise InputError("expected a list of [u, v] pairs", str(path), None, "edges")
    pairs = []
    for i, e in enumerate(edges):
        if not isinstance(e, list) or len(e) != 2 or not all(isinstance(x, (str, int)) for x in e):
            raise InputError("expected a pair [u, v] of vertex names", str(path), None,
                             f"edges[{i}]")
        pairs.append((str(e[0]), str(e[1])))
    target = data.get("target")
    if target is not None and not isinstance(target, (str, int)):
        raise InputError("expected a vertex name", str(path), None, "target")
    return [str(v) for v in vertices], pairs, None if target is None else str(target)


@encode_group.command("pebbling")
@click.argument("dag", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-k", "k", type=click.IntRange(min=0), required=True, help="Pebble bound.")
@click.option("--target", help="Target vertex (overrides the file's).")
@document_output_options
@limit_options
def encode_pebbling_cmd(dag: Path, k: int, target: Optional[str], out: Optional[Path],
                        fmt: Optional[str]) -> None:
    """Encode a DAG (JSON {vertices, edges, target}) with bound K (paper Appendix C)."""
    from symreach.frontends.reduction_pebbling import encode_pebbling

    vertices, edges, file_target = read_dag(dag)
    target = target or file_target
    if target is None:
        raise InputError("no target vertex: give --target or a 'target' field", str(dag),
                         None, "target")
    write_document(encode_pebbling(vertices, edges, target, k, filename=str(dag)), out, fmt=fmt)


# ---------------------------------------------------------------------------
# generate
# ---------------------------------------------------------------------------

