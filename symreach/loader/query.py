"""Queries (coverability targets) in DNF, from the file's ``query`` or from CLI options.

One builder serves both, so ``--pod web --node wk-1`` and ``query: {pod: web,
node: wk-1}`` mean exactly the same thing.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

from symreach.model import Instance, Query
from symreach.loader.shapes import FieldError, Path, mapping, sequence, string, string_map

QUERY_FIELDS = ("pod", "node", "nodeSelector", "with")

# Where each part of a query comes from, for error messages: (part, with-index) -> path.
Locate = Callable[[str, Optional[int]], Path]


def query_from_document(instance: Instance, raw: object) -> Optional[Query]:
    """The optional top-level ``query`` of a v1 document."""
    if raw is None:
        return None
    body = mapping(raw, ("query",), QUERY_FIELDS)
    pod = None if body.get("pod") is None else string(body["pod"], ("query", "pod"))
    node = None if body.get("node") is None else string(body["node"], ("query", "node"))
    selector = None
    if body.get("nodeSelector") is not None:
        selector = string_map(body["nodeSelector"], ("query", "nodeSelector"))
    pairs = []
    for i, item in enumerate(sequence(body.get("with"), ("query", "with"))):
        path = ("query", "with", i)
        entry = mapping(item, path, ("pod", "node"), required=("pod", "node"))
        pairs.append((string(entry["pod"], path + ("pod",)), string(entry["node"], path + ("node",))))

    def locate(part: str, index: Optional[int]) -> Path:
        return ("query", "with", index, part) if index is not None else ("query", part)

    return build_query(instance, pod, node, selector, pairs, locate)


def build_query(
    instance: Instance,
    pod: Optional[str],
    node: Optional[str],
    node_selector: Optional[Mapping[str, str]],
    with_pairs: Sequence[tuple[str, str]],
    locate: Locate,
) -> Query:
    """DNF target: one alternative per candidate node of ``pod``, each plus the ``with`` pairs."""
    types = {t.name: i for i, t in enumerate(instance.pod_types)}
    nodes = {n.name: i for i, n in enumerate(instance.nodes)}

    def type_of(name: str, index: Optional[int]) -> int:
        if name not in types:
            raise FieldError(locate("pod", index), f"unknown pod type '{name}'{_known(types)}")
        return types[name]

    def node_of(name: str, index: Optional[int]) -> int:
        if name not in nodes:
            raise FieldError(locate("node", index), f"unknown node '{name}'{_known(nodes)}")
        return nodes[name]

    extra = frozenset((type_of(p, i), node_of(n, i)) for i, (p, n) in enumerate(with_pairs))
    with_text = " and ".join(f"{p} on {n}" for p, n in with_pairs)
    if node is not None and node_selector is not None:
        raise FieldError(locate("nodeSelector", None), "give either a node or a node selector, not both")
    if pod is None:
        if node is not None or node_selector is not None:
            raise FieldError(locate("pod", None), "a node or node selector needs a pod type")
        if not extra:
            raise FieldError(locate("pod", None), "no target: give a pod type")
        return Query((extra,), with_text)
    t = type_of(pod, None)
    if node is not None:
        candidates = [node_of(node, None)]
        where = node
    elif node_selector is not None:
        candidates = [
            n for n, nd in enumerate(instance.nodes)
            if all(nd.labels.get(k) == v for k, v in node_selector.items())
        ]
        text = ",".join(f"{k}={v}" for k, v in node_selector.items())
        if not candidates:
            raise FieldError(locate("nodeSelector", None), f"no node matches {text or '{}'}")
        where = f"any node matching {text}" if text else "any node"
    else:
        candidates = list(range(len(instance.nodes)))
        where = "any node"
        if not candidates:
            raise FieldError(locate("pod", None), "the instance has no nodes")
    alternatives = tuple(frozenset({(t, n)}) | extra for n in candidates)
    description = f"{pod} on {where}" + (f" with {with_text}" if with_text else "")
    return Query(alternatives, description)


def _known(names: Mapping[str, int]) -> str:
    if not names:
        return ""
    shown = sorted(names)[:10]
    more = ", ..." if len(names) > 10 else ""
    return f" (known: {', '.join(shown)}{more})"
