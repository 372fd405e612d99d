"""Queries (coverability targets) in DNF, from the file's ``query`` or from CLI options.

One builder serves both, so ``--pod web --node wk-1`` and ``query: {pod: web,
node: wk-1}`` mean exactly the same thing.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

from dataclasses import replace

from symreach.model import MOVES, CountTarget, Instance, Pair, Query, daemonset_groups
from symreach.loader.shapes import FieldError, Path, boolean, choice, integer, mapping, sequence, string, string_map

QUERY_FIELDS = ("pod", "node", "nodeSelector", "domain", "with", "count", "more", "moves")

# A count target's threshold caps a counter (Query.count_cap); keep it sane.
MAX_COUNT = 10_000

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
    domain = None
    if body.get("domain") is not None:
        entries = string_map(body["domain"], ("query", "domain"))
        if len(entries) != 1:
            raise FieldError(("query", "domain"), "give exactly one topology key and value, "
                                                  "e.g. {topology.kubernetes.io/zone: a}")
        domain = next(iter(entries.items()))
    count = None if body.get("count") is None else integer(body["count"], ("query", "count"), minimum=1,
                                                            maximum=MAX_COUNT)
    more = boolean(body.get("more"), ("query", "more"), False)
    pairs = []
    for i, item in enumerate(sequence(body.get("with"), ("query", "with"))):
        path = ("query", "with", i)
        entry = mapping(item, path, ("pod", "node"), required=("pod", "node"))
        pairs.append((string(entry["pod"], path + ("pod",)), string(entry["node"], path + ("node",))))

    def locate(part: str, index: Optional[int]) -> Path:
        return ("query", "with", index, part) if index is not None else ("query", part)

    query = build_query(instance, pod, node, selector, pairs, locate, count=count, more=more, domain=domain)
    if body.get("moves") is not None:
        query = replace(query, moves=choice(body["moves"], ("query", "moves"), MOVES))
    return query


def build_query(
    instance: Instance,
    pod: Optional[str],
    node: Optional[str],
    node_selector: Optional[Mapping[str, str]],
    with_pairs: Sequence[tuple[str, str]],
    locate: Locate,
    *,
    count: Optional[int] = None,
    more: bool = False,
    domain: Optional[tuple[str, str]] = None,
) -> Query:
    """The target over the pairs of ``pod`` on the chosen nodes, plus the ``with`` pairs.

    Presence (count 1): one DNF alternative per candidate pair. ``count`` K >= 2
    (or ``more``: one more than sigma0 has there) is a ``CountTarget`` over the
    candidate pairs, i.e. the sum over the node, the selector's pool or the
    topology domain. ``pod`` may name a DaemonSet (``ns/name``): its pod type
    for each candidate node (``model.daemonset_groups``).
    """
    types = {t.name: i for i, t in enumerate(instance.pod_types)}
    nodes = {n.name: i for i, n in enumerate(instance.nodes)}
    named = [pod] + [p for p, _ in with_pairs]
    groups = daemonset_groups(instance) if any(x is not None and x not in types for x in named) else {}

    def type_of(name: str, index: Optional[int]) -> int:
        if name not in types:
            raise FieldError(locate("pod", index), f"unknown pod type '{name}'{_known(types)}")
        return types[name]

    def node_of(name: str, index: Optional[int]) -> int:
        if name not in nodes:
            raise FieldError(locate("node", index), f"unknown node '{name}'{_known(nodes)}")
        return nodes[name]

    def with_pair(p: str, n: str, index: int) -> Pair:
        """``--with ns/ds@node``: a DaemonSet's pod for that node, like ``--pod``."""
        m = node_of(n, index)
        if p not in types and m in groups.get(p, {}):
            return groups[p][m], m
        return type_of(p, index), m

    extra = frozenset(with_pair(p, n, i) for i, (p, n) in enumerate(with_pairs))
    with_text = " and ".join(f"{p} on {n}" for p, n in with_pairs)
    scopes = [part for part, given in (("node", node), ("nodeSelector", node_selector), ("domain", domain))
              if given is not None]
    if len(scopes) > 1:
        words = {"node": "node", "nodeSelector": "node selector", "domain": "domain"}
        raise FieldError(locate(scopes[1], None),
                         f"give either a {words[scopes[0]]} or a {words[scopes[1]]}, not both")
    if count is not None and more:
        raise FieldError(locate("more", None), "give a count or 'more', not both")
    if pod is None:
        if scopes or count is not None or more:
            raise FieldError(locate("pod", None),
                             "a node or node selector needs a pod type (so do a domain and a count)")
        if not extra:
            raise FieldError(locate("pod", None), "no target: give a pod type")
        return Query((extra,), with_text)
    if node is not None:
        candidates = [node_of(node, None)]
        where = node
    elif node_selector is not None or domain is not None:
        labels = dict(node_selector) if node_selector is not None else dict([domain])
        part = "nodeSelector" if node_selector is not None else "domain"
        candidates = [n for n, nd in enumerate(instance.nodes)
                      if all(nd.labels.get(k) == v for k, v in labels.items())]
        text = ",".join(f"{k}={v}" for k, v in labels.items())
        if not candidates:
            raise FieldError(locate(part, None), f"no node matches {text or '{}'}")
        if part == "domain":
            where = f"the nodes of topology domain {text}"
        else:
            where = f"any node matching {text}" if text else "any node"
    else:
        candidates = list(range(len(instance.nodes)))
        where = "any node"
        if not candidates:
            raise FieldError(locate("pod", None), "the instance has no nodes")
    if pod in types:
        targets = [(types[pod], n) for n in candidates]
    elif pod in groups:
        targets = [(groups[pod][n], n) for n in candidates if n in groups[pod]]
        if not targets:
            raise FieldError(locate("pod", None), f"DaemonSet '{pod}' has no pod type on {where}")
    else:
        type_of(pod, None)  # raises: unknown
        raise AssertionError("unreachable")
    return _target(instance, pod, where, targets, extra, with_text, count, more)


def _target(instance: Instance, pod: str, where: str, targets: list[Pair], extra: frozenset[Pair],
            with_text: str, count: Optional[int], more: bool) -> Query:
    suffix = f" with {with_text}" if with_text else ""
    initially = sum(instance.initial.get(p, 0) for p in targets)
    k = initially + 1 if more else (count or 1)
    if k <= 1:
        alternatives = tuple(frozenset({p}) | extra for p in targets)
        return Query(alternatives, f"{pod} on {where}{suffix}")
    what = f"{k} pods of {pod} on {where} at once"
    if more:
        what += f" (one more than the {initially} initially there)"
    return Query((extra,), what + suffix, (CountTarget(frozenset(targets), k),))


def _known(names: Mapping[str, int]) -> str:
    if not names:
        return ""
    shown = sorted(names)[:10]
    more = ", ..." if len(names) > 10 else ""
    return f" (known: {', '.join(shown)}{more})"
