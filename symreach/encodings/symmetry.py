"""Interchangeable nodes: classes of nodes that no part of the model tells apart.

Real clusters are node pools: many nodes equal up to their hostname. A
permutation ``pi`` of the nodes acts on configurations by moving each node's
column of pod counts: ``(pi sigma)(t, pi(n)) = sigma(t, n)``.

*Definition.* Nodes ``n`` and ``m`` are interchangeable with respect to a set
of pod types ``C`` and a set of fixed nodes ``F`` when neither is in ``F`` and
they have the same ``signature``: the same labels except
``kubernetes.io/hostname``, taints, ``unschedulable`` and capacity; for every
type ``u`` in ``C`` the same static verdict ``static_block[u][.]`` (this is
where nodeName, matchFields, node selectors, node affinity and tolerations
were folded by the loader, so a node named by any of them differs from its
pool), the same initial count ``sigma0(u, .)`` and the same multiplicity
bound; for every topology a term or spread constraint of a type in ``C``
uses, either the same domain, or both lack the key, or each is alone in its
own domain (hostname-like keys); the same membership in the eligible set
of every spread constraint of a type in ``C``; and neither named by a type's
slice orders of the cycle (``Instance.cycle_orders``: such nodes stay apart).

*Theorem.* If ``n`` and ``m`` are interchangeable, the transposition
``pi = (n m)`` is an automorphism of the system restricted to ``C``:
``pi sigma0 = sigma0`` on ``C``, and for every type ``t`` in ``C``, node ``k``
and configuration ``sigma``, ``deploy_failure(t, pi k, pi sigma)`` equals
``deploy_failure(t, k, sigma)``.
*Proof.* ``semantics.first_failure`` reads, for the node ``k`` asked about,
``static_block[t][k]``, the capacity of ``k``, the pods on ``k`` (ports,
``used``), domains ``D_tau(k)`` and the eligible sets of spread
constraints, and sums or existence tests over those sets. The signature
makes each of these equal for ``n`` and ``m``; a topology partition is
mapped onto itself by ``pi`` (same domain: the domain is fixed as a set;
both keyless: untouched; both alone: the singletons swap), so
``pi D_tau(k) = D_tau(pi k)``, ``pi`` preserves each eligible set, and every
count over a domain of ``pi sigma`` equals the count over the preimage
domain in ``sigma``. ``gmin`` is a minimum over the same family of domain
counts. ``maxPerNode`` and creatability depend on the type only. QED.

*Corollaries.* Transpositions of interchangeable pairs generate the full
symmetric group on each class (``(a c) = (a b)(b c)(a b)``), so every
permutation ``pi`` within classes maps runs from ``sigma0`` to runs from
``sigma0``: the pair ``(t, n)`` is coverable iff ``(t, pi n)`` is, and a
witness trace for ``n`` becomes one for ``pi n`` by renaming nodes in every
step (``rename_trace``; callers still replay it). With the query's nodes in
``F``, a configuration covers the query iff its canonical form does, so a
search may keep one configuration per orbit (``canonical``).

*With the cone of influence* (``preprocess`` step 1): whether ``(t, n)`` is
coverable depends only on the types of ``t``'s cone ``C``, so nodes whose
initial pods differ only in types outside ``C`` are still interchangeable
for ``t``. That is the precise sense in which different initial pods keep
nodes interchangeable "for what the initial pods do not change"; nodes that
differ in an initial pod of the cone are never merged.
"""

from __future__ import annotations

from typing import Collection, Iterable, Optional, Sequence

from symreach.encodings.restrict import pairs_by_type
from symreach.model import Config, Instance, Topology
from symreach.result import Step

HOSTNAME = "kubernetes.io/hostname"

NodeClass = tuple[int, ...]


def topologies_of(inst: Instance, types: Iterable[int]) -> list[Topology]:
    """Every topology a term or spread constraint of ``types`` uses (deduplicated)."""
    seen: dict[int, Topology] = {}
    for t in types:
        pod = inst.pod_types[t]
        for term in pod.affinity + pod.anti_affinity:
            seen.setdefault(id(term.topology), term.topology)
        for h in pod.spread:
            seen.setdefault(id(h.topology), h.topology)
    return list(seen.values())


def _domain_signature(topo: Topology, n: int) -> object:
    d = topo.domain_of[n]
    if d is None:
        return None
    if len(topo.members[d]) == 1:
        return "alone"
    return d


def node_base(inst: Instance, n: int) -> tuple:
    """The type-independent part of the signature: labels but hostname, taints, capacity."""
    node = inst.nodes[n]
    labels = tuple(sorted((k, v) for k, v in node.labels.items() if k != HOSTNAME))
    attached = tuple(sorted((d, tuple(sorted(v))) for d, v in node.attached.items()))
    return (labels, node.taints, node.unschedulable, tuple(sorted(node.capacity.items())), attached)


_BASE_CACHE: dict[int, tuple[tuple, list[int]]] = {}


def base_ids(inst: Instance) -> list[int]:
    """Per node, the id of its ``node_base``, computed once per tuple of nodes
    (restricted instances share their nodes with the full one)."""
    hit = _BASE_CACHE.get(id(inst.nodes))
    if hit is not None and hit[0] is inst.nodes:
        return hit[1]
    ids: dict[tuple, int] = {}
    out = [ids.setdefault(node_base(inst, n), len(ids)) for n in range(len(inst.nodes))]
    if len(_BASE_CACHE) > 8:
        _BASE_CACHE.clear()
    _BASE_CACHE[id(inst.nodes)] = (inst.nodes, out)
    return out


def signature_columns(inst: Instance, types: Sequence[int]) -> list[Sequence[object]]:
    """The signature of every node as columns (one entry per node): zipped, they
    give each node's signature (see the definition in the module docstring)."""
    width = len(inst.nodes)
    columns: list[Sequence[object]] = [base_ids(inst)]
    for u in types:
        columns.append(inst.static_block[u])
    for which in ("initial", "multiplicity_bound"):
        grouped = pairs_by_type(inst, which)
        for u in types:
            if u in grouped:
                column: list[object] = [None] * width
                for (_, n), c in grouped[u]:
                    column[n] = c
                columns.append(column)
    for topo in topologies_of(inst, types):
        columns.append([_domain_signature(topo, n) for n in range(width)])
    for u in types:
        for h in inst.pod_types[u].spread:
            columns.append([n in h.eligible for n in range(width)])
    tables = (inst.cycle_orders,) + tuple(c for group in inst.binding_groups for c in group.cycle_orders)
    for u in types:   # a node's part in one slice order of the cycle: each node its own (no swap is checked)
        named = {m for table in tables for order in table.get(u, ()) for m in order.fits | {m for m, _ in order.errs}}
        if named:
            columns.append([n if n in named else None for n in range(width)])
    return columns


def node_classes(inst: Instance, types: Optional[Collection[int]] = None,
                 fixed: Collection[int] = ()) -> list[NodeClass]:
    """Classes of interchangeable nodes w.r.t. ``types`` (default: all) and ``fixed``.

    Each class is sorted; its first node is the representative. Classes are
    ordered by representative, and together they partition the nodes.
    """
    order = sorted(types) if types is not None else list(range(len(inst.pod_types)))
    fixed = frozenset(fixed)
    groups: dict[object, list[int]] = {}
    for n, key in enumerate(zip(*signature_columns(inst, order))):
        groups.setdefault(("fixed", n) if n in fixed else key, []).append(n)
    return sorted((tuple(g) for g in groups.values()), key=lambda c: c[0])


def swap_nodes(inst: Instance, trace: Sequence[Step], a: int, b: int) -> tuple[Step, ...]:
    """The trace with nodes ``a`` and ``b`` exchanged in every step (the transposition)."""
    name_a, name_b = inst.nodes[a].name, inst.nodes[b].name
    swap = {name_a: name_b, name_b: name_a}
    return tuple(Step(s.op, s.pod, swap.get(s.node, s.node)) for s in trace)


def rename_trace(inst: Instance, trace: Sequence[Step], rep: int, n: int) -> tuple[Step, ...]:
    """A witness for ``n`` from one for ``rep`` of the same class (callers replay it)."""
    return tuple(trace) if rep == n else swap_nodes(inst, trace, rep, n)


def canonical(inst: Instance, classes: Sequence[NodeClass], sigma: Config
              ) -> tuple[Config, list[int]]:
    """The orbit representative of ``sigma`` and the node map ``real -> canonical``.

    Within each class the node columns are sorted (largest first) and laid
    back onto the class's nodes in order; two configurations in one orbit
    have the same multiset of columns per class, hence the same form.
    """
    width = len(inst.nodes)
    types = len(inst.pod_types)
    out = list(sigma)
    where = list(range(width))
    for cls in classes:
        if len(cls) < 2:
            continue
        columns = sorted(((tuple(sigma[t * width + n] for t in range(types)), n) for n in cls),
                         key=lambda c: c[0], reverse=True)
        for slot, (column, src) in zip(cls, columns):
            where[src] = slot
            for t in range(types):
                out[t * width + slot] = column[t]
    return tuple(out), where
