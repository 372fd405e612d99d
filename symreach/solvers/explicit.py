"""Explicit-state reference engine: breadth-first search over configurations.

It calls the executable semantics directly, so it is the oracle the symbolic
engines are compared with. Saturation (SPEC 2.2): a pair that no spread
constraint counts is never deployed while already present, because a second
pod of the same type on the same node changes no presence guard and only
consumes capacity. Counted pairs keep exact counts up to their bound; a pair
a count target reads is counted up to the target's threshold. The
initial configuration is kept exact (counts above 1 are deleted one by one),
so every returned trace replays from sigma0 unchanged and is shortest among
saturated traces.

Operator moves (SPEC 5.2, ``inst.moves``): a deletion is taken only when
``semantics.delete_failure`` allows it (protected types, PodDisruptionBudgets).
Saturation stays exact under the PDB guard because a pair a budget counts
is kept exact up to ``semantics.budget_cap`` (desiredHealthy + 1: with every pair
cut at that K a budget's guard has the same value, as for count targets), so
a capped run simulates every run; protection is per type and reads no count.
Node symmetry is kept: budgets and protection name types, never nodes.
``--keep-replicas`` changes no move, only the goal (``semantics.query_holds``
adds ``replicas_failure``: every controller's floor of K replicas, and a
StatefulSet's members matched to nodes their claims allow). That goal is
monotone in the counts and reads sums over a controller's pairs against K
(a matching uses at most K pods of a pair), so a pair of a controller is
kept exact up to K (``semantics.replica_cap``) and the capped search is
exact by the count-target argument; the goal is tested on the real
configuration, so the may-be-present facts and the search are unchanged.
Symmetry: the plain floors name types only; a StatefulSet member's allowed
nodes name nodes, so those nodes are fixed (``_Orbits``) and the orbit
argument holds for the permutations that remain. A witness's StatefulSet
steps are put in an order an operator can follow (``replica_order``: same
length, replayed under every rule).

Claim bindings (``Instance.bindings``): a configuration carries, after its pair
counts, the outcome each WaitForFirstConsumer claim was bound to, so the state
is exact for them. Saturation stays exact: a deployment of a present
(saturated) pair is taken too when it binds a claim (``semantics.binding_made``)
-- the only thing it can change besides capacity -- which happens at most
once per claim on a path. Where the scheduler may bind in several ways (which
of several PVs a claim takes: ``semantics.binding_choices``) every choice is
a successor, and the witness's step names the one it takes (``Step.binds``). Candidates are the pairs statically feasible unbound
or under some outcome (``semantics.ever_static_ok``). Orbit reduction is off
(an outcome is tied to its node's topology); the other engines decline such
instances (``registry.Checked``) and ``auto`` sends them here.
A DynamicResources error that aborts a pod's cycle (``semantics.cycle_abort``) is the one guard a
pod's presence can lift: pods filling the erring node make the pod fail NodeResourcesFit there
first. So a pair on such a node is counted up to what the node's capacity holds of its type
(``semantics.abort_cap``), and saturation stays exact.
The fast paths are not used under operator moves (Theorem 5 and the empty-
node argument assume any pod may be deleted): only this engine answers then,
and ``auto`` sends the question here (``cli/moves_options.py``).
"""

from __future__ import annotations

from collections import deque
from typing import Optional

from symreach import semantics
from symreach.encodings.symmetry import canonical, node_classes
from symreach.model import Config, Instance, Query
from symreach.result import DELETE, DEPLOY, Result, Step, Verdict
from symreach.run import RunContext
from symreach.solvers.replica_order import identity_order
from symreach.solvers.base import RunLike, as_context, resolve_query


class ExplicitEngine:
    """BFS engine. ``uncounted_cap`` > 1 switches saturation off up to that many
    pods per uncounted pair; it exists to test that saturation is exact."""

    name = "explicit"
    operator_moves = True  # answers under --moves operator (module docstring)
    volume_checks = True   # attach limits and disk conflicts through the semantics itself (registry.DECLINED)

    def __init__(self, uncounted_cap: int = 1, symmetry: bool = False) -> None:
        self.uncounted_cap = uncounted_cap
        self.symmetry = symmetry

    def check(self, instance: Instance, query: Optional[Query] = None, run: RunLike = None) -> Result:
        return _search(instance, resolve_query(instance, query), as_context(run), self.uncounted_cap,
                       self.symmetry)


def _deploy_candidates(inst: Instance, query: Query, uncounted_cap: int) -> list[tuple[int, int, int, int]]:
    """(t, n, pair index, cap) for every creatable, statically feasible pair.

    ``cap`` is the largest count worth reaching: 1 for saturated pairs, the
    multiplicity bound for counted ones, and at least the threshold K of a
    count target that reads the pair (``Query.count_cap``: capping at K is
    exact for the target).
    """
    out = []
    bounds = inst.multiplicity_bound
    for t, pod_type in enumerate(inst.pod_types):
        if not pod_type.creatable:
            continue
        for n in range(len(inst.nodes)):
            if semantics.ever_static_ok(inst, t, n):
                cap = max(bounds.get((t, n), uncounted_cap), query.count_cap((t, n)), semantics.budget_cap(inst, t),
                          semantics.replica_cap(inst, t), semantics.abort_cap(inst, t, n))
                out.append((t, n, inst.pair(t, n), cap))
    return out


def _search(inst: Instance, query: Query, run: RunContext, uncounted_cap: int,
            symmetry: bool = False) -> Result:
    sigma0 = inst.initial_config()
    stats = {"states": 1, "transitions": 0}
    if semantics.query_holds(inst, query, sigma0):
        return Result(Verdict.DEPLOYABLE, "explicit", reason="the target is initially present",
                      stats=stats)
    candidates = _deploy_candidates(inst, query, uncounted_cap)
    orbit = _Orbits(inst, query) if symmetry and not inst.bindings else None
    if orbit is not None:
        stats["node_classes"] = len(orbit.classes)
        sigma0 = orbit.canonical(sigma0)
    parent: dict[Config, tuple[Optional[Config], Optional[Step]]] = {sigma0: (None, None)}
    frontier: deque[Config] = deque([sigma0])
    expanded = 0
    while frontier:
        sigma = frontier.popleft()
        expanded += 1
        if expanded % 1024 == 0:
            run.report("explicit", states=stats["states"], frontier=len(frontier))
        if run.past():
            return _unknown(run.timeout_reason(), stats)
        for succ, step in _successors(inst, sigma, candidates):
            stats["transitions"] += 1
            if orbit is not None:
                succ = orbit.canonical(succ)
            if succ in parent:
                continue
            parent[succ] = (sigma, step)
            stats["states"] += 1
            if semantics.query_holds(inst, query, succ):
                trace = _trace(parent, succ)
                if orbit is not None:
                    trace = orbit.real_trace(trace)
                trace = identity_order(inst, trace, query)
                return Result(Verdict.DEPLOYABLE, "explicit", trace=trace,
                              reason="witness found by breadth-first search", stats=stats)
            if run.max_states is not None and stats["states"] >= run.max_states:
                return _unknown(f"state limit {run.max_states} reached", stats)
            frontier.append(succ)
    from symreach.certify import explicit_states  # a not-deployable answer's certificate only (start-up)

    cert = None
    if orbit is not None:
        # One configuration per orbit is not closed under the transitions, so it
        # is no invariant for the states checker; the unreduced search gives one.
        stats["certificate"] = "none: orbit-reduced search (run without symmetry for one)"
    elif len(parent) <= explicit_states.MAX_STATES:
        cert = explicit_states.StatesCertificate(inst, query, tuple(parent))
    else:
        stats["certificate"] = (f"none: {len(parent)} states exceed the explicit certificate's limit "
                                f"of {explicit_states.MAX_STATES}")
    return Result(Verdict.NOT_DEPLOYABLE, "explicit",
                  reason=f"all {stats['states']} reachable configurations explored; none covers the target",
                  stats=stats, certificate=cert)


class _Orbits:
    """Orbit canonicalisation (``symmetry.canonical``): the search keeps one
    configuration per orbit of the permutations of interchangeable nodes. The
    query's nodes are fixed, so a configuration covers the query iff its
    canonical form does, and the reachable orbits are exactly the orbits of
    reachable configurations (``symreach.encodings.symmetry``, theorem)."""

    def __init__(self, inst: Instance, query: Query) -> None:
        self.inst = inst
        fixed = {n for _, n in query.pairs()}
        if inst.moves.keep_replicas:  # a pinned StatefulSet replica names its nodes
            fixed |= {n for r in inst.replica_targets for _, nodes in r.members
                      if len(nodes) < len(inst.nodes) for n in nodes}
        self.classes = [c for c in node_classes(inst, fixed=fixed)]

    def canonical(self, sigma: Config) -> Config:
        return canonical(self.inst, self.classes, sigma)[0]

    def real_trace(self, steps: tuple[Step, ...]) -> tuple[Step, ...]:
        """Steps between canonical forms, turned into one run from the real sigma0.

        ``where`` maps each real node to its place in the current canonical
        form; a canonical step on node k is the real step on ``where^-1(k)``.
        """
        inst = self.inst
        real = inst.initial_config()
        _, where = canonical(inst, self.classes, real)
        out = []
        for step in steps:
            k = inst.node_index(step.node)
            n = where.index(k)
            t = inst.type_index(step.pod)
            if step.op == DEPLOY:
                real = semantics.deploy(inst, real, t, n)
            else:
                real = semantics.delete(inst, real, t, n, step.holding)
            out.append(semantics.step_of(inst, step.op, t, n, holding=step.holding))
            _, where = canonical(inst, self.classes, real)
        return tuple(out)


def _successors(inst: Instance, sigma: Config, candidates):
    binding = bool(inst.bindings)
    for t, n, p, cap in candidates:
        if (sigma[p] < cap or (binding and semantics.binding_choices(inst, sigma, t, n))) \
                and semantics.deploy_failure(inst, t, n, sigma) is None:
            for choice, succ in (semantics.deploys(inst, sigma, t, n) if binding else
                                 ((None, semantics.deploy(inst, sigma, t, n)),)):
                text = None if choice is None else semantics.choice_text(inst, sigma, t, n, choice)
                yield succ, semantics.step_of(inst, DEPLOY, t, n, binds=text)
    guarded = inst.moves.restricted
    for p, c in enumerate(sigma[:inst.num_pairs] if binding else sigma):
        if c:
            t, n = inst.unpair(p)
            if guarded and semantics.delete_failure(inst, sigma, t, n) is not None:
                continue
            for holding, after in semantics.deletions(inst, sigma, t, n):   # one per distinct DRA holding there
                yield after, semantics.step_of(inst, DELETE, t, n, holding=holding)


def _trace(parent, sigma: Config) -> tuple[Step, ...]:
    steps = []
    while True:
        prev, step = parent[sigma]
        if prev is None:
            break
        steps.append(step)
        sigma = prev
    return tuple(reversed(steps))


def _unknown(reason: str, stats: dict) -> Result:
    return Result(Verdict.UNKNOWN, "explicit", reason=reason, stats=stats)


# The gang search (solvers/gang_explicit.py) explores the same moves over the same parent map.
successors = _successors
trace_back = _trace
# so does the search with nominated pods (solvers/nominated_search.py)
deploy_candidates = _deploy_candidates
