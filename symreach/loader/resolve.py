"""Resolution: label-level specs -> the normalized model (index sets, partitions).

Here the profile differences of SPEC 2.1 that concern *what a selector
selects* are settled once: namespaces and namespaceSelector, matchLabelKeys,
the kube-scheduler's special cases for empty and null spread selectors, the
eligible node set E of each spread constraint, and the multiplicity bounds
of counted pairs (SPEC 2.2).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from symreach.labels import IN, NOT_IN, LabelSelector, Placement, label_key_requirements, static_reason
from symreach.loader.kube_objects import HONOR, SpreadSpec, TermSpec
from symreach.loader.v1 import Document, PodTypeSpec
from symreach.model import (
    KUBERNETES,
    PODS_RESOURCE,
    AffinityTerm,
    FrozenDict,
    Instance,
    Node,
    Pair,
    PodType,
    SpreadConstraint,
    Topology,
)
from symreach.shapes import FieldError


class _Context:
    """What resolving one document needs; topologies are cached, one object per key."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.kube = doc.profile == KUBERNETES
        self._topologies: dict[str, Topology] = {}
        # Plain dicts: matching against FrozenDict labels is several times slower.
        self.node_labels: tuple[dict[str, str], ...] = tuple(dict(n.labels) for n in doc.nodes)

    def topology(self, key: str) -> Topology:
        if key not in self._topologies:
            self._topologies[key] = make_topology(key, self.doc.nodes)
        return self._topologies[key]

    def select(self, selector: LabelSelector, namespaces: Optional[frozenset[str]]) -> frozenset[int]:
        """Pod types matching ``selector`` within ``namespaces`` (None: all namespaces)."""
        return frozenset(
            u for u, pod in enumerate(self.doc.pod_types)
            if (namespaces is None or pod.namespace in namespaces) and selector.matches(pod.labels)
        )


def make_topology(key: str, nodes: tuple[Node, ...]) -> Topology:
    """Partition nodes by their value of ``key``; domains numbered by first appearance."""
    ids: dict[str, int] = {}
    domain_of: list[Optional[int]] = []
    members: list[set[int]] = []
    for n, node in enumerate(nodes):
        value = node.labels.get(key)
        if value is None:
            domain_of.append(None)
            continue
        if value not in ids:
            ids[value] = len(ids)
            members.append(set())
        domain_of.append(ids[value])
        members[ids[value]].add(n)
    return Topology(key, tuple(domain_of), tuple(frozenset(m) for m in members), tuple(ids))


def build_instance(doc: Document, source: str) -> Instance:
    ctx = _Context(doc)
    if not ctx.kube:
        _check_paper_keys(doc)
    static_block = tuple(
        tuple(static_reason(p.placement, n, labels) for n, labels in zip(doc.nodes, ctx.node_labels))
        for p in doc.pod_types
    )
    pod_types = tuple(_pod_type(ctx, spec) for spec in doc.pod_types)
    bounds = multiplicity_bounds(doc, pod_types, static_block)
    return Instance(
        profile=doc.profile,
        nodes=doc.nodes,
        pod_types=pod_types,
        static_block=static_block,
        initial=doc.initial,
        multiplicity_bound=bounds,
        namespaces=doc.namespaces,
        source=source,
    )


def _check_paper_keys(doc: Document) -> None:
    """Paper profile: a node lacking a topology key in use is ill-formed input (SPEC 2.1)."""
    for spec in doc.pod_types:
        keyed = [(t.topology_key, t.path) for t in spec.affinity.pod_affinity + spec.affinity.pod_anti_affinity]
        keyed += [(s.topology_key, s.path) for s in spec.spread]
        for key, path in keyed:
            for node in doc.nodes:
                if key not in node.labels:
                    raise FieldError(
                        path + ("topologyKey",),
                        f"node '{node.name}' has no label '{key}'; the paper semantics needs every "
                        "topology key on every node",
                    )


def _pod_type(ctx: _Context, spec: PodTypeSpec) -> PodType:
    return PodType(
        name=spec.name,
        namespace=spec.namespace,
        labels=spec.labels,
        requests=spec.requests,
        creatable=spec.creatable,
        host_ports=spec.host_ports,
        affinity=tuple(_term(ctx, spec, t) for t in spec.affinity.pod_affinity),
        anti_affinity=tuple(_term(ctx, spec, t) for t in spec.affinity.pod_anti_affinity),
        spread=tuple(_spread(ctx, spec, s) for s in spec.spread),
        max_per_node=spec.max_per_node,
        manifest=spec.manifest,
    )


def _term(ctx: _Context, owner: PodTypeSpec, term: TermSpec) -> AffinityTerm:
    selector = term.selector.with_requirements(
        label_key_requirements(term.match_label_keys, owner.labels, IN)
        + label_key_requirements(term.mismatch_label_keys, owner.labels, NOT_IN)
    )
    namespaces = _term_namespaces(ctx, owner, term) if ctx.kube else None
    return AffinityTerm(selects=ctx.select(selector, namespaces), topology=ctx.topology(term.topology_key))


def _term_namespaces(ctx: _Context, owner: PodTypeSpec, term: TermSpec) -> frozenset[str]:
    """The namespaces a term sees: the owner's by default, else namespaces plus namespaceSelector."""
    if not term.namespaces and term.namespace_selector is None:
        return frozenset({owner.namespace})
    chosen = set(term.namespaces)
    if term.namespace_selector is not None:
        chosen |= {ns for ns, labels in ctx.doc.namespaces.items() if term.namespace_selector.matches(labels)}
    return frozenset(chosen)


def _spread(ctx: _Context, owner: PodTypeSpec, spec: SpreadSpec) -> SpreadConstraint:
    selector = spec.selector.with_requirements(label_key_requirements(spec.match_label_keys, owner.labels, IN))
    if ctx.kube and (selector.nothing or selector.is_empty()):
        # kube-scheduler: a null selector matches nothing; countPodsMatchSelector
        # counts 0 for an empty one, which still matches the incoming pod.
        counts: frozenset[int] = frozenset()
    else:
        counts = ctx.select(selector, frozenset({owner.namespace}) if ctx.kube else None)
    return SpreadConstraint(
        counts=counts,
        self_match=selector.matches(owner.labels),
        max_skew=spec.max_skew,
        min_domains=spec.min_domains,
        eligible=eligible_nodes(ctx.doc.nodes, owner, spec, ctx.node_labels),
        topology=ctx.topology(spec.topology_key),
    )


def eligible_nodes(
    nodes: tuple[Node, ...],
    owner: PodTypeSpec,
    spec: SpreadSpec,
    node_labels: Optional[Sequence[Mapping[str, str]]] = None,
) -> frozenset[int]:
    """E: nodes with every key of the owner's hard constraints, filtered by the inclusion policies.

    The paper takes E as given; the v1 format has no field for it, so both
    profiles derive it this way (in the paper profile every node has every key).
    """
    keys = {s.topology_key for s in owner.spread}
    placement: Placement = owner.placement
    out = set()
    for n, node in enumerate(nodes):
        labels = node.labels if node_labels is None else node_labels[n]
        if not all(k in labels for k in keys):
            continue
        if spec.node_affinity_policy == HONOR and not placement.matches_node_affinity(node, labels):
            continue
        if spec.node_taints_policy == HONOR and not placement.tolerates_taints(node):
            continue
        out.add(n)
    return frozenset(out)


def multiplicity_bounds(
    doc: Document, pod_types: tuple[PodType, ...], static_block: tuple[tuple[Optional[str], ...], ...]
) -> FrozenDict[Pair, int]:
    """For each counted pair, the largest count it can reach (SPEC 2.2, Definition 3)."""
    counted: dict[int, set[int]] = {}
    for pod in pod_types:
        for constraint in pod.spread:
            for u in constraint.counts:
                counted.setdefault(u, set()).update(constraint.eligible)
    bounds: dict[Pair, int] = {}
    initial_counts = dict(doc.initial)
    shapes = [tuple(sorted(node.capacity.items())) for node in doc.nodes]  # nodes often share one
    for u in sorted(counted):
        pod = pod_types[u]
        by_shape: dict[tuple, Optional[int]] = {}
        for m in sorted(counted[u]):
            initial = initial_counts.get((u, m), 0)
            node = doc.nodes[m]
            if not pod.creatable or static_block[u][m] is not None:
                bound: Optional[int] = initial
            else:
                if shapes[m] not in by_shape:
                    by_shape[shapes[m]] = _capacity_bound(doc, pod, node)
                bound = by_shape[shapes[m]]
                if bound is None:
                    raise FieldError(
                        doc.pod_types[u].path,
                        f"pod type '{pod.name}' is counted by a topology spread constraint on node "
                        f"'{node.name}' but nothing bounds how many of its pods fit there; give it a "
                        "positive resource request that the node's capacity limits, or set maxPerNode",
                    )
            bounds[(u, m)] = max(bound, initial)
    return FrozenDict(bounds)


def _capacity_bound(doc: Document, pod: PodType, node: Node) -> Optional[int]:
    """min over positive effective requests of capacity // request, maxPerNode, host ports."""
    requests = {r: q for r, q in pod.requests.items() if q > 0}
    if doc.profile == KUBERNETES and PODS_RESOURCE in node.capacity:
        requests[PODS_RESOURCE] = 1
    candidates = [node.capacity.get(r, 0) // q for r, q in requests.items()]
    if pod.max_per_node is not None:
        candidates.append(pod.max_per_node)
    if pod.host_ports:
        candidates.append(1)
    return min(candidates) if candidates else None

