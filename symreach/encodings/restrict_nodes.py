"""An instance on a subset of its nodes: where a small search looks for a witness.

``restrict_nodes(inst, keep)`` keeps the nodes ``keep`` (in index order) with
everything they carry (static rows, initial pods, multiplicity bounds, volume
verdicts) and every topology and spread eligible set cut down to them
(domains left empty are dropped and the rest renumbered). Nothing else of the
instance changes.

The restricted instance is *not* equivalent to the original (dropped nodes
no longer support affinity, block anti-affinity or count in spreads), so it
only proposes witnesses: a trace found on it names nodes of the original,
and a caller must realise and replay it there (``realize_trace``) before
calling anything deployable. No verdict of "not deployable" carries over.

Instances whose semantics keep per-node state beyond pair counts (claim
bindings), pod groups or operator move rules are refused (None): the cut
would have to remap those too, and they never take this path at scale.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Collection, Optional

from symreach.model import AffinityTerm, FrozenDict, Instance, SpreadConstraint, Topology


def restrict_nodes(inst: Instance, keep: Collection[int]) -> Optional[Instance]:
    """``inst`` on the nodes ``keep`` (new index i is ``sorted(keep)[i]``), or None (see above)."""
    if inst.bindings or inst.groups or inst.moves.restricted or inst.filter_errors:   # a node's error aborts others
        return None
    old = sorted(set(keep))
    new_of = {o: i for i, o in enumerate(old)}
    topologies: dict[int, Topology] = {}

    def topo(tp: Topology) -> Topology:
        hit = topologies.get(id(tp))
        if hit is None:
            hit = topologies[id(tp)] = _cut_topology(tp, old)
        return hit

    def terms(ts: tuple[AffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
        return tuple(replace(term, topology=topo(term.topology)) for term in ts)

    def spread(h: SpreadConstraint) -> SpreadConstraint:
        return replace(h, topology=topo(h.topology),
                       eligible=frozenset(new_of[m] for m in h.eligible if m in new_of))

    def pairs(mapping) -> FrozenDict:
        return FrozenDict({(u, new_of[m]): v for (u, m), v in mapping.items() if m in new_of})

    pod_types = tuple(replace(p, affinity=terms(p.affinity), anti_affinity=terms(p.anti_affinity),
                              spread=tuple(spread(h) for h in p.spread)) for p in inst.pod_types)
    return replace(inst, nodes=tuple(inst.nodes[o] for o in old), pod_types=pod_types,
                   static_block=tuple(tuple(row[o] for o in old) for row in inst.static_block),
                   initial=pairs(inst.initial), multiplicity_bound=pairs(inst.multiplicity_bound),
                   volume_failures=pairs(inst.volume_failures), query=None)


def _cut_topology(tp: Topology, old: list[int]) -> Topology:
    """``tp`` on the nodes ``old``: domains renumbered in their old order, empty ones dropped."""
    order = sorted({tp.domain_of[o] for o in old} - {None})
    renumber = {d: i for i, d in enumerate(order)}
    domain_of = tuple(None if tp.domain_of[o] is None else renumber[tp.domain_of[o]] for o in old)
    members: list[set[int]] = [set() for _ in order]
    for i, d in enumerate(domain_of):
        if d is not None:
            members[d].add(i)
    return Topology(tp.key, domain_of, tuple(frozenset(s) for s in members),
                    tuple(tp.values[d] for d in order))
