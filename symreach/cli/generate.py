"""``symreach generate``: seeded, deterministic benchmark instances (pebbling
DAGs, Petri-net families, Kubernetes-like clusters), written as YAML (``-o json``:
JSON) to ``--out FILE`` or stdout."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from symreach.cli.errors import ErrorReportingGroup
from symreach.cli.options import limit_options
from symreach.cli.output import document_output_options, write_document
from symreach.errors import InputError


@click.group("generate", cls=ErrorReportingGroup)
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
@document_output_options
@limit_options
def generate_pebbling_cmd(shape: str, height: int, k: int, seed: int, dag_only: bool,
                          out: Optional[Path], fmt: Optional[str]) -> None:
    """A pebbling DAG family, encoded by Appendix C with bound K."""
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import by_shape

    dag = by_shape(shape, height, seed)
    if dag_only:
        write_document(dag.to_json(), out, as_json=True, fmt=fmt)
        return
    write_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k), out, fmt=fmt)


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
@document_output_options
@limit_options
def generate_net_cmd(family: str, n: int, goal: str, dead_place: bool, seed: Optional[int],
                     net_only: bool, out: Optional[Path], fmt: Optional[str]) -> None:
    """A one-safe net family, encoded by Appendix B with the chosen goal."""
    from symreach.frontends.reduction_petri import encode_petri
    from symreach.generators.nets import FAMILIES, add_dead_place

    fam = FAMILIES[family](n, seed=seed)
    net = add_dead_place(fam.net) if dead_place or goal == "dead" else fam.net
    place = {"coverable": fam.coverable, "never": fam.never_marked,
             "dead": "dead"}.get(goal, goal)
    if net_only:
        write_document(net.to_json(), out, as_json=True, fmt=fmt)
        return
    if place is None or place not in net.places:
        raise InputError(f"net {net.name} has no place {goal!r}", field_path="--goal")
    write_document(encode_petri(net, place), out, fmt=fmt)


@generate_group.command("cluster")
@click.option("--nodes", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--pod-types", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--small", is_flag=True,
              help="Tiny instance (2-3 nodes, 2-4 types, binding capacity) for differential tests.")
@click.option("--pools", type=click.IntRange(min=1), default=None,
              help="Node pools over 3 zones: nodes of a pool differ only in name and zone.")
@document_output_options
@limit_options
def generate_cluster_cmd(nodes: int, pod_types: int, seed: int, small: bool,
                         pools: Optional[int], out: Optional[Path], fmt: Optional[str]) -> None:
    """A random Kubernetes-like cluster (semantics: kubernetes)."""
    from symreach.generators.clusters import generate_cluster

    write_document(generate_cluster(nodes, pod_types, seed, small=small, pools=pools), out, fmt=fmt)
