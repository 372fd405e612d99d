"""Appendix C of the paper: the encoding E_Peb of bounded black pebbling.

``encode_pebbling(V, E, z, k)`` returns a symreach instance (format v1, a
plain dict) in which ``P_z`` is deployable on the single node exactly when
vertex z can be pebbled with at most k black pebbles (Theorem 24).

Appendix notation → what is emitted:

- the unique node ``n`` with one scalar resource r of capacity k:
  ``capacity: {pebbles: k}``;
- for every vertex v a pod type ``P-<v>`` with request ``{pebbles: 1}``, the
  unique label ``id = v``, and one required affinity term ``s[id = u]``
  (``matchLabels {id: u}``, topologyKey ``kubernetes.io/hostname``) per edge
  (u, v), i.e. per u ∈ pred(v); no anti-affinity, no static filter;
- the empty initial configuration; the query (P_z, n).

The profile is ``semantics: paper``: capacity counts declared resources only,
so the Kubernetes implicit ``pods`` unit does not interfere (the node lists no
``pods`` capacity anyway). No P_v matches its own terms (the graph is acyclic,
so there is no edge (v, v)), hence the self-affinity bootstrap never applies.
Repeated edges give one term.
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Optional, Sequence

from symreach.errors import InputError
from symreach.frontends.naming import LabelValues, UniqueNames

HOSTNAME = "kubernetes.io/hostname"
NODE = "n"
RESOURCE = "pebbles"
ID = "id"


def check_dag(vertices: Sequence[Hashable], edges: Iterable[Sequence[Hashable]],
              filename: Optional[str] = None) -> dict[Hashable, list[Hashable]]:
    """Validate the graph and return pred(v) for every v (first-seen order).

    Raises ``InputError`` on duplicate or unknown vertices and on cycles
    (naming one cycle).
    """
    vs = list(vertices)
    known = set()
    shown: set[str] = set()
    for v in vs:
        if v in known or str(v) in shown:
            raise InputError(f"duplicate vertex {v!r}", filename=filename, field_path="vertices")
        known.add(v)
        shown.add(str(v))
    pred: dict[Hashable, list[Hashable]] = {v: [] for v in vs}
    succ: dict[Hashable, list[Hashable]] = {v: [] for v in vs}
    for i, e in enumerate(edges):
        if len(e) != 2:
            raise InputError("expected a pair [u, v]", filename=filename, field_path=f"edges[{i}]")
        u, v = e[0], e[1]
        for x in (u, v):
            if x not in known:
                raise InputError(f"unknown vertex {x!r}", filename=filename, field_path=f"edges[{i}]")
        if u not in pred[v]:
            pred[v].append(u)
            succ[u].append(v)
    # Kahn's algorithm; leftovers lie on or behind a cycle.
    indeg = {v: len(pred[v]) for v in vs}
    queue = [v for v in vs if indeg[v] == 0]
    seen = 0
    while queue:
        u = queue.pop()
        seen += 1
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    if seen != len(vs):
        raise InputError(f"the graph has a cycle {_find_cycle(vs, succ, indeg)}; "
                         "pebbling needs a DAG", filename=filename, field_path="edges")
    return pred


def _find_cycle(vs: list[Hashable], succ: dict[Hashable, list[Hashable]],
                indeg: dict[Hashable, int]) -> str:
    """A readable cycle among the vertices Kahn's algorithm could not remove."""
    rest = {v for v in vs if indeg[v] > 0}
    start = next(v for v in vs if v in rest)
    path: list[Hashable] = [start]
    pos = {start: 0}
    while True:
        nxt = next(w for w in succ[path[-1]] if w in rest and indeg[w] > 0)
        if nxt in pos:
            cyc = path[pos[nxt]:] + [nxt]
            return " -> ".join(str(x) for x in cyc)
        pos[nxt] = len(path)
        path.append(nxt)


def pebbling_type_names(vertices: Sequence[Hashable]) -> dict[Hashable, str]:
    """The pod-type name ``P-<v>`` of each vertex (sanitized, unique)."""
    names = UniqueNames()
    return {v: names.take(f"P-{v}") for v in vertices}


def encode_pebbling(vertices: Sequence[Hashable], edges: Iterable[Sequence[Hashable]],
                    target: Hashable, k: int, node: str = NODE,
                    filename: Optional[str] = None) -> dict[str, Any]:
    """E_Peb(G, z, k): a format-v1 document whose query is (P_z, node)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError(f"expected a non-negative integer, got {k!r}", field_path="k")
    pred = check_dag(vertices, edges, filename)
    if target not in pred:
        raise InputError(f"unknown vertex {target!r}", filename=filename, field_path="target")
    names = pebbling_type_names(list(pred))
    ids = LabelValues()
    types = []
    for v in pred:
        doc: dict[str, Any] = {
            "name": names[v],
            "labels": {ID: ids(str(v))},
            "requests": {RESOURCE: 1},
        }
        if pred[v]:
            doc["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {ID: ids(str(u))}}, "topologyKey": HOSTNAME}
                for u in pred[v]]}}
        types.append(doc)
    return {
        "version": 1,
        "semantics": "paper",
        "nodes": [{"name": node, "capacity": {RESOURCE: k}}],
        "podTypes": types,
        "initial": [],
        "query": {"pod": names[target], "node": node},
    }
