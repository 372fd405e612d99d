"""The gang question's instance: each member type gets an *assumed* twin (issue 28, SPEC 5.1).

The symbolic engines answer the gang question on one transition system
(``encodings/gang_system.py``). Its state must tell the members a gang step
assumed from the members already running in sigma: the step may assume at
most ``pending`` pods of a type, and a leaf with some but too few assumed
members fails. So every member type t of the hierarchy gets a twin t' (name
``t (assumed)``, appended after the original types, no pods in sigma0):
t' is t in every respect the semantics reads -- the same requests, ports,
static rows, (anti-)affinity terms and spread constraints -- and every
selector, spread count and existing-anti-affinity set that holds t holds
t' too, so ``Hard`` on this instance with t' pods equals ``Hard`` on the
original with those pods counted as t (tested against ``semantics`` in
``tests/test_gang_symbolic.py``). ``maxPerNode`` is left off the twin: a gang
step checks ``Hard`` only (``gangs.check_step``), as the scheduler does.

In the background (before the step) neither the hierarchy's member types
nor the members of any other gang-policy group are deployed
(``solvers/gang_explicit.py``), so they are not creatable here; the twins
are. A pure model transformation: it imports the model only, and both the
encoder and the certificate checker read it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from symreach.gangs import Gang
from symreach.model import GANG, AffinityTerm, FrozenDict, Instance, PodType, SpreadConstraint

SUFFIX = " (assumed)"


@dataclass(frozen=True)
class Shadow:
    """The derived instance and how its twins map back."""

    instance: Instance
    original: Instance
    twin_of: dict[int, int]      # member type -> its twin
    member_of: dict[int, int]    # twin -> member type
    pending: dict[int, int]      # member type -> pending pods


def _grow(types: frozenset[int], twin_of: dict[int, int]) -> frozenset[int]:
    return types | frozenset(twin_of[t] for t in types if t in twin_of)


def _term(term: AffinityTerm, twin_of: dict[int, int]) -> AffinityTerm:
    grown = None if term.existing_selects is None else _grow(term.existing_selects, twin_of)
    return replace(term, selects=_grow(term.selects, twin_of), existing_selects=grown)


def _spread(h: SpreadConstraint, twin_of: dict[int, int]) -> SpreadConstraint:
    return replace(h, counts=_grow(h.counts, twin_of))


def _pod(pod: PodType, twin_of: dict[int, int], creatable: bool) -> PodType:
    return replace(pod, creatable=creatable,
                   affinity=tuple(_term(x, twin_of) for x in pod.affinity),
                   anti_affinity=tuple(_term(x, twin_of) for x in pod.anti_affinity),
                   spread=tuple(_spread(h, twin_of) for h in pod.spread))


def reserved_types(inst: Instance, gang: Gang) -> frozenset[int]:
    """Types the background never deploys: the hierarchy's members and any gang's."""
    out = set(gang.leaf_of)
    out |= {t for g in inst.groups if g.policy == GANG for t, _ in g.members}
    return frozenset(out)


def shadow(inst: Instance, gang: Gang) -> Shadow:
    """The instance with one assumed twin per member type of ``gang``."""
    members = sorted(gang.pending)
    base = len(inst.pod_types)
    twin_of = {t: base + i for i, t in enumerate(members)}
    reserved = reserved_types(inst, gang)
    types = [_pod(p, twin_of, p.creatable and t not in reserved) for t, p in enumerate(inst.pod_types)]
    for t in members:
        twin = _pod(inst.pod_types[t], twin_of, True)
        types.append(replace(twin, name=inst.pod_types[t].name + SUFFIX, max_per_node=None))
    static = inst.static_block + tuple(inst.static_block[t] for t in members)
    bounds = dict(inst.multiplicity_bound)
    for t in members:
        for n in range(len(inst.nodes)):
            bounds[(twin_of[t], n)] = gang.pending[t]
    volumes = dict(inst.volume_failures)
    for (t, n), why in inst.volume_failures.items():
        if t in twin_of:
            volumes[(twin_of[t], n)] = why
    derived = replace(inst, pod_types=tuple(types), static_block=static, multiplicity_bound=FrozenDict(bounds),
                      volume_failures=FrozenDict(volumes), query=None, group_target=None)
    return Shadow(derived, inst, twin_of, {v: k for k, v in twin_of.items()}, dict(gang.pending))
