"""What both invariant checkers read off ``Hard(t, n)`` the same way (SPEC 2).

``bdd_invariant`` writes the guards as BDDs and ``clause_invariant`` as CNF;
the sets of pods that forbid a deployment and the types that can witness an
affinity are the same facts in both, read from the model here once.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from symreach.model import KUBERNETES, Instance


def forbidding(inst: Instance, t: int, n: int, types: Iterable[int]) -> Iterator[tuple[frozenset[int], frozenset[int]]]:
    """(pod types, nodes): a pod of one of those types on one of those nodes forbids
    ``t`` on ``n``. ``t``'s own anti-affinity terms and, in the kubernetes profile,
    the anti-affinity of the running pods of ``types`` (the symmetric check)."""
    for term in inst.pod_types[t].anti_affinity:
        yield term.selects, term.topology.domain_nodes(n)
    if inst.profile != KUBERNETES:
        return
    for u in types:
        for term in inst.pod_types[u].anti_affinity:
            if t in term.blocks and term.topology.domain_of[n] is not None:
                yield frozenset({u}), term.topology.domain_nodes(n)


def affinity_witnesses(inst: Instance, t: int) -> frozenset[int]:
    """The types whose pods may witness ``t``'s affinity: the types matching every
    term (kubernetes: one pod satisfies all terms) or any term (paper)."""
    sets = [term.selects for term in inst.pod_types[t].affinity]
    if not sets:
        return frozenset()
    return frozenset.intersection(*sets) if inst.profile == KUBERNETES else frozenset().union(*sets)


def cone_problem(inst: Instance, cone: Iterable[int], targets: Iterable[int]) -> str:
    """Why ``cone`` is not a cone the cone theorem applies to ("" when it is): it
    must hold the target types and be closed under affinity witnesses and under
    the types a spread constraint of a cone type counts."""
    cone = frozenset(cone)
    if not set(targets) <= cone:
        return "the cone misses a target type"
    for t in sorted(cone):
        pod = inst.pod_types[t]
        if not affinity_witnesses(inst, t) <= cone:
            return f"cone not closed under the affinity witnesses of {pod.name}"
        if any(not sc.counts <= cone for sc in pod.spread):
            return f"cone not closed under the spread constraints of {pod.name}"
    return ""
