"""The gang question as one ``TransitionSystem`` for the symbolic engines (issue 28, SPEC 5.1).

On the twin instance of ``gang_shadow`` (member type t, assumed twin t'):

- *phase 0* is the background of ``solvers/gang_explicit.py``: deletions of
  any pod and deployments of the types no gang reserves, saturated as in the
  ordinary system; each is guarded by "no twin pod exists";
- the first deployment of a twin starts the gang step (the phase is "some
  twin is present": one-way, since twins are never deleted); from then on
  only twins are deployed, each passing the compiled ``Hard`` over sigma
  plus the twins before it;
- the target is at most ``pending[t]`` twins of each t (twins are never
  deleted, so this bounds the whole step) and the hierarchy's policy (``gangs.Gang.verdict``): a leaf is
  met when its running members (counters of t, never deployed, exact from
  sigma0) plus its twins reach its need, no leaf has some but too few twins,
  and a composite holds when at least minGroupCount children hold.

Member and twin pairs are counted exactly (twins up to ``pending``, members
up to their sigma0 count); every other pair keeps the ordinary system's
abstraction (saturation; SPEC 2.2: a gang step reads presence and capacity
there, and fewer pods never make it harder). The deletions' phase guard is
also the system's ``deletion_guard``, which the macro steps of IC3 and BMC
(deleting without reading the delete actions' guards) read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from symreach import gangs, semantics
from symreach.encodings.circuit import Circuit, counter_terms
from symreach.encodings.compile import compile_system
from symreach.encodings.gang_shadow import Shadow, shadow
from symreach.encodings.preprocess import Preprocessed, preprocess
from symreach.encodings.system import Action, TransitionSystem
from symreach.model import Instance, Query
from symreach.result import DEPLOY
from symreach.run import RunContext


@dataclass
class GangSystem:
    """The compiled gang question and what decoding a witness needs."""

    system: TransitionSystem
    pre: Preprocessed
    shadow: Shadow
    gang: gangs.Gang
    query: Query    # the synthetic query preprocessing ran with (every member and twin type)


def gang_query(sh: Shadow) -> Query:
    """A query whose cone holds every member and twin type (only its types matter)."""
    types = sorted(sh.twin_of) + sorted(sh.member_of)
    return Query(tuple(frozenset({(t, 0)}) for t in types), "gang step")


def compile_gang(inst: Instance, gang: gangs.Gang, run: Optional[RunContext] = None) -> GangSystem:
    sh = shadow(inst, gang)
    derived = sh.instance
    query = gang_query(sh)
    pre = preprocess(derived, query, engine="gang", try_greedy=False, run=run)
    pre.decided = None
    pre.stats.pop("decided_by", None)
    for (t, n) in pre.may:
        if t in sh.member_of:
            pre.counted[(t, n)] = twin_bound(inst, sh.member_of[t], n, sh.pending[sh.member_of[t]])
        elif t in sh.twin_of:
            pre.counted[(t, n)] = max(derived.initial.get((t, n), 0), 1)
    pre.abstract_initial = {p: (c if p in pre.counted else 1) for p, c in derived.initial.items() if p in pre.may}
    system = compile_system(derived, query, pre)
    return GangSystem(_gang_system(system, sh, gang), pre, sh, gang, query)


def twin_bound(inst: Instance, t: int, n: int, pending: int) -> int:
    """How many twins of t node n can ever hold: ``pending``, the capacity alone (not
    ``maxPerNode``, which a gang step does not check, nor the instance's multiplicity
    bounds, which may come from it), and one where t's own anti-affinity selects t over a
    domain of n alone. Exact: ``Hard`` fails at the bound, so the counter's missing move
    loses nothing (the certificate checker re-checks that no deployment passes a bound)."""
    node = inst.nodes[n]
    bound = pending
    for r in set(node.capacity) | set(inst.pod_types[t].requests):
        need = semantics.request(inst, t, r)
        if need > 0:
            bound = min(bound, max(node.capacity.get(r, 0), 0) // need)
    for term in inst.pod_types[t].anti_affinity:
        if t in term.selects and term.topology.domain_nodes(n) == frozenset({n}):
            bound = 1
    return max(bound, 1)


def _gang_system(system: TransitionSystem, sh: Shadow, gang: gangs.Gang) -> TransitionSystem:
    c = system.circuit
    twins = {t: [pv for (u, _), pv in sorted(system.pairs.items()) if u == sh.twin_of[t]] for t in sh.twin_of}
    stepping = c.any_(pv.present for pvs in twins.values() for pv in pvs)
    background = c.not_(stepping)
    actions: list[Action] = []
    for a in system.actions:
        member = sh.member_of.get(a.type_index)
        if member is None:
            actions.append(replace(a, guard=c.and_(a.guard, background)))
        elif a.op == DEPLOY:
            actions.append(a)
        # a twin is never deleted: the gang step deletes nothing
    # At most ``pending`` twins of t: twins are never deleted, so a run that assumed more
    # keeps them to its end; the bound is therefore part of the target, not of every
    # twin's guard (a guard reading every node's counter made each deploy's guard global).
    within = [c.pb_le([tm for pv in twins[t] for tm in counter_terms(pv.count_bits, 1)], sh.pending[t])
              for t in sorted(twins)]
    target = c.and_(_policy(system, sh, gang), c.all_(within))
    stats = dict(system.stats, actions=len(actions), circuit_nodes=len(c), gang_twins=len(sh.twin_of))
    return replace(system, actions=tuple(actions), target=target, stats=stats, deletion_guard=background)


def _policy(system: TransitionSystem, sh: Shadow, gang: gangs.Gang) -> int:
    """``Gang.verdict`` over the counters: every leaf met or untouched, the root's policy holds."""
    c = system.circuit

    def terms(types) -> list:
        return [tm for (u, _), pv in sorted(system.pairs.items()) if u in types
                for tm in (counter_terms(pv.count_bits, 1) if pv.counted else [(1, pv.present)])]

    met: dict[str, int] = {}
    clean = []
    for leaf in gang.leaves:
        members = {t for t, name in gang.leaf_of.items() if name == leaf.name}
        twins = {sh.twin_of[t] for t in members}
        met[leaf.name] = c.pb_ge(terms(members | twins), gang.need(leaf))
        touched = c.any_(pv.present for (u, _), pv in system.pairs.items() if u in twins)
        clean.append(c.or_(c.not_(touched), met[leaf.name]))

    def holds(name: str) -> int:
        group = gang.groups[name]
        if not group.composite:
            return met[name]
        kids = [holds(k) for k in gang.children.get(name, ())]
        return at_least(c, kids, group.min_count if group.policy == gangs.GANG else 1)

    return c.and_(c.all_(clean), holds(gang.root.name))


def at_least(c: Circuit, xs: list[int], k: int) -> int:
    """At least ``k`` of the circuit nodes ``xs`` hold (a small DP; composites have few children)."""
    if k <= 0:
        return Circuit.TRUE
    if k > len(xs):
        return Circuit.FALSE
    row = [Circuit.TRUE] + [Circuit.FALSE] * k   # row[j]: at least j of the nodes seen so far
    for x in xs:
        row = [Circuit.TRUE] + [c.or_(row[j], c.and_(x, row[j - 1])) for j in range(1, k + 1)]
    return row[k]


def decode(gs: GangSystem, moves: list[tuple[str, int, int]]) -> tuple[list[tuple[str, int, int]], gangs.Placement]:
    """A witness's moves (op, t, n) as background steps and the gang placement (t, n)."""
    background: list[tuple[str, int, int]] = []
    placement: list[tuple[int, int]] = []
    for op, t, n in moves:
        member = gs.shadow.member_of.get(t)
        if member is not None:
            placement.append((member, n))
        elif placement:
            raise AssertionError("a background move after the gang step began: an encoding bug")
        else:
            background.append((op, t, n))
    return background, tuple(placement)

