"""Command-line glue for the paper's reductions and the generators.

``encode_group`` (``symreach encode ...``) turns a Petri net or a DAG into a
format-v1 instance; ``generate_group`` (``symreach generate ...``) builds
seeded benchmark instances. Both write YAML to ``-o FILE`` or stdout. Bad
input prints one line and exits with status 2 (SPEC 4), never a traceback.
The main CLI registers the groups; this module does not import it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import click
import yaml

from symreach.errors import InputError

EXIT_INPUT_ERROR = 2


class _Group(click.Group):
    """Turns an InputError into one line on stderr and exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"symreach: error: {exc}", err=True)
            sys.exit(EXIT_INPUT_ERROR)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe dumper that never writes anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(doc: Any) -> str:
    """Deterministic YAML (key order kept, no anchors/aliases)."""
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True)


def _write(doc: Any, out: Optional[Path], as_json: bool = False) -> None:
    text = json.dumps(doc, indent=2) + "\n" if as_json else dump_yaml(doc)
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", str(out)) from None


_OUT = click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
                    help="Write here instead of stdout.")


# ---------------------------------------------------------------------------
# encode
# ---------------------------------------------------------------------------

@click.group("encode", cls=_Group)
def encode_group() -> None:
    """Encode a Petri net (Appendix B) or a pebbling game (Appendix C) as an instance."""


@encode_group.command("petri")
@click.argument("net", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--goal", required=True, help="Goal place g; the query is pod G-g on the node.")
@_OUT
def encode_petri_cmd(net: Path, goal: str, out: Optional[Path]) -> None:
    """Encode a 1-safe net (PNML or JSON) with goal place GOAL (paper Appendix B)."""
    from symreach.encodings.petri_net import read_net
    from symreach.encodings.reduction_petri import encode_petri

    _write(encode_petri(read_net(net), goal), out)


def read_dag(path: Path) -> tuple[list[str], list[tuple[str, str]], Optional[str]]:
    """Read ``{vertices, edges: [[u, v], ...], target}`` (JSON); names become strings."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", str(path)) from None
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
@_OUT
def encode_pebbling_cmd(dag: Path, k: int, target: Optional[str], out: Optional[Path]) -> None:
    """Encode a DAG (JSON {vertices, edges, target}) with bound K (paper Appendix C)."""
    from symreach.encodings.reduction_pebbling import encode_pebbling

    vertices, edges, file_target = read_dag(dag)
    target = target or file_target
    if target is None:
        raise InputError("no target vertex: give --target or a 'target' field", str(dag),
                         None, "target")
    _write(encode_pebbling(vertices, edges, target, k, filename=str(dag)), out)


# ---------------------------------------------------------------------------
# generate
# ---------------------------------------------------------------------------

@click.group("generate", cls=_Group)
def generate_group() -> None:
    """Generate seeded benchmark instances (deterministic for a seed)."""


@generate_group.command("pebbling")
@click.option("--shape", type=click.Choice(["pyramid", "tree", "path", "random"]),
              required=True)
@click.option("--height", type=click.IntRange(min=0), required=True,
              help="Pyramid/tree height; for path the number of edges; for random the "
                   "number of vertices.")
@click.option("-k", "k", type=click.IntRange(min=0), required=True, help="Pebble bound.")
@click.option("--seed", type=int, default=0, show_default=True, help="For --shape random.")
@click.option("--dag-only", is_flag=True, help="Print the DAG as JSON instead of the instance.")
@_OUT
def generate_pebbling_cmd(shape: str, height: int, k: int, seed: int, dag_only: bool,
                          out: Optional[Path]) -> None:
    """A pebbling DAG family, encoded by Appendix C with bound K."""
    from symreach.encodings.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import by_shape

    dag = by_shape(shape, height, seed)
    if dag_only:
        _write(dag.to_json(), out, as_json=True)
        return
    _write(encode_pebbling(dag.vertices, dag.edges, dag.target, k), out)


@generate_group.command("net")
@click.option("--family", type=click.Choice(["ring", "mutex", "philosophers"]), required=True)
@click.option("-n", "n", type=click.IntRange(min=2), required=True,
              help="Processes (ring, mutex) or forks (philosophers).")
@click.option("--goal", default="coverable", show_default=True,
              help="'coverable' (the family's documented coverable place), 'never' (its "
                   "never-markable place), 'dead' (the added dead place) or a place name.")
@click.option("--dead-place", is_flag=True, help="Add a never-marked place 'dead'.")
@click.option("--seed", type=int, default=None, help="Shuffle declaration order.")
@click.option("--net-only", is_flag=True, help="Print the net as JSON instead of the instance.")
@_OUT
def generate_net_cmd(family: str, n: int, goal: str, dead_place: bool, seed: Optional[int],
                     net_only: bool, out: Optional[Path]) -> None:
    """A one-safe net family, encoded by Appendix B with the chosen goal."""
    from symreach.encodings.reduction_petri import encode_petri
    from symreach.generators.nets import FAMILIES, add_dead_place

    fam = FAMILIES[family](n, seed=seed)
    net = add_dead_place(fam.net) if dead_place or goal == "dead" else fam.net
    place = {"coverable": fam.coverable, "never": fam.never_marked,
             "dead": "dead"}.get(goal, goal)
    if net_only:
        _write(net.to_json(), out, as_json=True)
        return
    if place is None or place not in net.places:
        raise InputError(f"net {net.name} has no place {goal!r}", field_path="--goal")
    _write(encode_petri(net, place), out)


@generate_group.command("cluster")
@click.option("--nodes", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--pod-types", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--small", is_flag=True,
              help="Tiny instance (2-3 nodes, 2-4 types, binding capacity) for differential tests.")
@_OUT
def generate_cluster_cmd(nodes: int, pod_types: int, seed: int, small: bool,
                         out: Optional[Path]) -> None:
    """A random Kubernetes-like cluster (semantics: kubernetes)."""
    from symreach.generators.clusters import generate_cluster

    _write(generate_cluster(nodes, pod_types, seed, small=small), out)
