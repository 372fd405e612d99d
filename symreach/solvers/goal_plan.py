"""A cheap witness attempt by goal regression, which ``auto`` runs before any engine.

To place a pod of type t on node n whose required affinity is not met yet,
place a witness of every unmet term on n first (recursively), the witness
that needs the most pods at once first (Sethi-Ullman order), then t, then
delete the witnesses this step created. On dependency structures where
required affinity is the only obstacle this is the classic register-saving
order: on pebbling DAGs it pebbles a binary tree of height h with h + 2
pebbles and a pyramid with h + 2 (recomputing shared vertices). Where a step
does not fit on its node, pods there that the plan does not read are deleted
first (``_make_room``; pods no affinity term reads before the others); where it
is refused for another reason (anti-affinity, spread, a budget) the attempt
gives up at once. A term whose domain holds other nodes than n (a zone) gets
its witness on one of those (``_site``), placed by the same rule there and
left standing: n's room goes to the terms only n can meet, and siblings read
the same witness; where that placement gives up, its steps are taken back and
the witness goes on n (``_beside``). A term that selects t itself and that no
other type can witness (a self-affine StatefulSet running only in another
zone) is met by its waiver (``_bootstrap``): every pod it selects is deleted,
then t deploys as the first replica. Of several witness types the one whose
chain down ends at pods already running is taken (``_cost``). Apart from
``_beside``'s take-back (at most ``MAX_RETRIES`` per attempt) it never
backtracks, so it also gives up where a term leaves more than
``MAX_CHOICES`` types to choose from, and at once where its plan would hold
more pods on the node than fit (``room_for``). Every step is checked by
the executable semantics as it is taken and the whole trace is replayed
before it is returned, so a returned trace is a witness; ``None`` proves
nothing. Its cost is bounded by ``max_steps`` (steps taken back included).

Measured (benchmarks/results/auto_schedule.md): the deployable binary trees
of run_all, where ABC's pdr is the best single engine (h = 5, 6: 0.2-1.3 CPU
s, IC3 1.4-3.4 s), are decided here in milliseconds; so are 9 of the 10
Kubernetes-profile hard clusters (IC3 or ABC's pdr: up to 2.5 s on 500 x 200;
benchmarks/results/auto_targets/hard_and_pebbling.md), and since ``_site`` and
``_bootstrap`` all 10 of them and 5 of the 6 deployable paper-profile ones of
run_all (s1 500 x 200 runs past its step cap there): hard/paper/s1/100x60 in
0.02 CPU s of ``auto`` against 1.3 s for ABC's pdr, s1 200 x 100 (no single
engine within 10 s) in 0.21 s (auto_targets/goal_plan_zones.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from symreach import semantics
from symreach.model import KUBERNETES, Instance, Query
from symreach.reasons import insufficient
from symreach.result import DELETE, DEPLOY, Step
from symreach.run import RunContext

MAX_STEPS = 20_000  # steps of one attempt; 2^(h+2) for a pyramid of height h
_POLL = 256  # steps between two looks at the run's deadline
# a term that more types than this can witness is a guess the attempt (which never
# backtracks) does not take: on the encoded nets exploring those choices cost 10-30 ms
MAX_CHOICES = 4
# nodes of a term's domain looked at for one where a witness deploys at once (``_site``):
# a zone of the 500-node hard clusters has 167, all full; each look costs a capacity sum
SITE_LOOKS = 8
# witnesses placed on another node of the domain that may fail and be taken back
# (``_beside``) in one attempt: each failure repeats at most the steps it took back
MAX_RETRIES = 16


# ``_cost`` evaluations in one attempt: the hard clusters' chains (500 nodes) take at most
# 44; on the large encoded nets an unbounded look-ahead cost 0.1 s of CPU per attempt
COST_LOOKS = 128

CAPACITY = "capacity"  # ``Attempt.gave_up``: a step did not fit on its node
OTHER = "other"  # anything else: another filter, a choice not taken, the step cap, the time


class _GiveUp(Exception):
    """The attempt met a step it cannot take, or ran out of steps or time."""


class _OutOfWork(_GiveUp):
    """The attempt ran out of steps or time: no other choice is tried."""


@dataclass
class Attempt:
    """What goal regression found: a replayed witness, or why it gave up (``CAPACITY``
    or ``OTHER``; nothing is proved either way)."""

    trace: Optional[tuple[Step, ...]]
    gave_up: Optional[str] = None


def plan_witness(inst: Instance, query: Query, run: Optional[RunContext] = None,
                 max_steps: int = MAX_STEPS) -> Optional[tuple[Step, ...]]:
    """A replayed witness for ``query``, or None (nothing is proved by None)."""
    return attempt(inst, query, run, max_steps).trace


def attempt(inst: Instance, query: Query, run: Optional[RunContext] = None,
            max_steps: int = MAX_STEPS) -> Attempt:
    """Goal regression on each alternative of ``query`` until one gives a witness."""
    if inst.bindings or query.counts or inst.moves.keep_replicas:
        return Attempt(None, OTHER)
    why = OTHER
    for alternative in query.alternatives:
        planner = _Planner(inst, run, max_steps)
        try:
            pairs = sorted(alternative)
            if len(pairs) > 1:
                pairs.sort(key=lambda p: -planner.need(p[0], frozenset()))
            for t, n in pairs:
                planner.room_for(t, n)
                planner.achieve(t, n, frozenset())
        except _GiveUp as stop:
            why = str(stop) or OTHER
            continue
        except RecursionError:
            why = OTHER
            continue
        if semantics.query_holds(inst, query, planner.sigma):
            trace = tuple(planner.steps)
            semantics.replay(inst, trace, query)
            return Attempt(trace)
    return Attempt(None, why)


class _Planner:
    """One attempt: the configuration so far, the steps taken, the needs computed."""

    def __init__(self, inst: Instance, run: Optional[RunContext], max_steps: int) -> None:
        self.inst, self.run, self.max_steps = inst, run, max_steps
        self.sigma = inst.initial_config()
        self.steps: list[Step] = []
        self.work = 0  # steps taken, those of a choice taken back (``_beside``) included
        self.retries = MAX_RETRIES  # ``_beside``: witnesses elsewhere that may still fail
        self.needs: dict[int, int] = {}
        self.costs: dict[tuple[int, int, bool], float] = {}  # ``_cost``
        # the types some required affinity term reads: ``_make_room`` deletes the others first
        self.read = frozenset().union(*(term.selects for pt in inst.pod_types for term in pt.affinity))

    def _step(self, op: str, t: int, n: int) -> None:
        if self.work >= self.max_steps:
            raise _OutOfWork
        if self.run is not None and self.work % _POLL == 0 and self.run.past():
            raise _OutOfWork
        self.work += 1
        if op == DEPLOY:
            self.sigma = semantics.deploy(self.inst, self.sigma, t, n)
        else:
            self.sigma = semantics.delete(self.inst, self.sigma, t, n)
        self.steps.append(semantics.step_of(self.inst, op, t, n))

    def _why(self, t: int, n: int) -> str:
        return CAPACITY if semantics.capacity_failure(self.inst, t, n, self.sigma) else OTHER

    def _terms(self, t: int) -> list[frozenset[int]]:
        """The types that can witness each of t's terms (kubernetes: one pod must match
        every term, so every term reads the intersection)."""
        terms = self.inst.pod_types[t].affinity
        if self.inst.profile == KUBERNETES and terms:
            both = semantics.affinity_witness_types(self.inst, t)
            return [both for _ in terms]
        return [term.selects for term in terms]

    def need(self, t: int, stack: frozenset[int]) -> int:
        """Pods present at once while t is placed from nothing (Sethi-Ullman)."""
        if t in self.needs:
            return self.needs[t]
        subs = []
        for selects in self._terms(t):
            if len(selects) > MAX_CHOICES:
                subs.append(1)  # ``achieve`` gives up there: not worth exploring
                continue
            options = [self.need(u, stack | {t}) for u in selects if u not in stack and u != t]
            if options:
                subs.append(min(options))
        subs.sort(reverse=True)
        need = max([len(subs) + 1] + [x + i for i, x in enumerate(subs)])
        self.needs[t] = need
        return need

    def _witness(self, t: int, n: int, selects: frozenset[int], stack: frozenset[int]) -> Optional[int]:
        """The type to place for one unmet term of t on n: creatable, not on the stack,
        the least need."""
        options = [u for u in selects if u != t and u not in stack and self.inst.pod_types[u].creatable]
        if len(options) > MAX_CHOICES:
            return None
        if len(options) < 2:
            return options[0] if options else None
        least = min(self.need(u, stack) for u in options)
        options = [u for u in options if self.need(u, stack) == least]
        if len(options) < 2:
            return options[0]
        return min(options, key=lambda u: (self._cost(u, n, stack), u))

    def _cost(self, u: int, n: int, stack: frozenset[int], local: bool = False) -> float:
        """Pods present at once while u is placed on n from the initial configuration
        (Sethi-Ullman, as ``need``, but a term met in its domain costs nothing and one
        without a creatable option is infinite): a witness is chosen by the whole chain
        below it, so the plan takes the branch that ends at pods already running (a
        self-affine StatefulSet's zone). Remembered for the attempt, as ``need`` is:
        recomputed after every step, it cost the deep pebblings several times more.
        ``local``: only the terms whose domain is n alone count (their witnesses must
        stand on n itself; the others may be met elsewhere)."""
        key = (u, n, local)
        if key in self.costs:
            return self.costs[key]
        if len(self.costs) >= COST_LOOKS:
            return 0  # looked far enough: the remaining choices fall back to the type order
        self.costs[key] = math.inf  # a cycle back to u is no way to place it
        inst, subs = self.inst, []
        for selects, term in zip(self._terms(u), inst.pod_types[u].affinity):
            nodes = term.topology.domain_nodes(n)
            if n not in nodes or (local and len(nodes) > 1) \
                    or semantics.present_on(inst, self.sigma, selects, nodes):
                continue
            options = [w for w in selects if w != u and w not in stack and inst.pod_types[w].creatable]
            if not options or len(options) > MAX_CHOICES:
                return math.inf
            subs.append(min(self._cost(w, n, stack | {u}, local) for w in options))
        subs.sort(reverse=True)
        self.costs[key] = max([len(subs) + 1] + [x + i for i, x in enumerate(subs)])
        return self.costs[key]

    def achieve(self, t: int, n: int, stack: frozenset[int]) -> None:
        """A pod of t on n, with the pods it needed on the way removed again."""
        inst = self.inst
        if self.sigma[inst.pair(t, n)] > 0:
            return
        if semantics.deploy_failure(inst, t, n, self.sigma) is None:
            self._step(DEPLOY, t, n)
            return
        term_nodes = [term.topology.domain_nodes(n) for term in inst.pod_types[t].affinity]
        wanted: list[int] = []
        for selects, nodes in zip(self._terms(t), term_nodes):
            if n not in nodes or semantics.present_on(inst, self.sigma, selects, nodes):
                continue
            u = self._witness(t, n, selects, stack)
            if u is None:
                self._bootstrap(t, selects)
                continue
            if self._beside(t, u, n, nodes, stack):  # n's room is not spent on it
                continue
            if u not in wanted:
                wanted.append(u)
        if not wanted:  # refused for another reason than affinity
            self._make_room(t, n, stack)
            self._step(DEPLOY, t, n)
            return
        if len(wanted) > 1:
            wanted.sort(key=lambda u: -self.need(u, stack | {t}))
        created = []
        for u in wanted:
            if self.sigma[inst.pair(u, n)] == 0:
                self.achieve(u, n, stack | {t})
                created.append(u)
        self._make_room(t, n, stack)
        self._step(DEPLOY, t, n)
        for u in reversed(created):
            if semantics.delete_failure(inst, self.sigma, u, n) is None:
                self._step(DELETE, u, n)

    def _bootstrap(self, t: int, selects: frozenset[int]) -> None:
        """Meet t's own term by its waiver: delete every pod the term selects, anywhere
        (a self-affine StatefulSet moving to another zone); give up where the term is not
        t's own, another type could witness it, or a deletion is refused."""
        inst = self.inst
        if t not in selects or not inst.pod_types[t].creatable or any(
                u != t and inst.pod_types[u].creatable for u in selects):
            raise _GiveUp
        for u in sorted(selects):
            for m in range(len(inst.nodes)):
                while self.sigma[inst.pair(u, m)] > 0:
                    if semantics.delete_failure(inst, self.sigma, u, m) is not None:
                        raise _GiveUp
                    self._step(DELETE, u, m)

    def _beside(self, t: int, u: int, n: int, nodes: frozenset[int], stack: frozenset[int]) -> bool:
        """Place a witness of u for t's term on another node of the term's domain
        (``_site``) and leave it there; where that fails, take its steps back and return
        False (u then goes on n itself). At most ``MAX_RETRIES`` failures per attempt, so
        nested failures cannot multiply; the steps taken back count for ``max_steps``."""
        site = self._site(u, n, nodes)
        if site == n or self.retries <= 0:
            return False
        sigma, taken = self.sigma, len(self.steps)
        try:
            self.achieve(u, site, stack | {t})
        except _OutOfWork:
            raise
        except _GiveUp:
            self.retries -= 1
            self.sigma = sigma
            del self.steps[taken:]
            return False
        return True

    def _site(self, u: int, n: int, nodes: frozenset[int]) -> int:
        """Where a witness of u for a term of a pod on n goes: another node of the term's
        domain that u's static filters allow, one where it deploys at once first (then
        the lowest index); n itself where there is none."""
        inst = self.inst
        others = [m for m in sorted(nodes) if m != n and semantics.ever_static_ok(inst, u, m)]
        if not others:
            return n
        return next((m for m in others[:SITE_LOOKS]
                     if semantics.deploy_failure(inst, u, m, self.sigma) is None), others[0])

    def room_for(self, t: int, n: int) -> None:
        """Give up at once (``CAPACITY``) where the plan for t would hold more pods on n
        at once than n has room for, even with every other pod gone: counting only the
        terms that n alone can meet (``_cost(local=True)``: the pebbling part of the
        plan). On the not-deployable pebblings the attempt otherwise found that out
        only at the last of its 2^h steps (0.35 s of CPU at pyramid h = 12, past the
        step cap above); on the paper profile's hard clusters it is the feature that
        tells the not-deployable ones (``schedule.SOLOS_NO_PLAN``)."""
        inst = self.inst
        capacity = inst.nodes[n].capacity
        if not capacity:  # the encoded nets: nothing to count
            return
        peak = self._cost(t, n, frozenset(), local=True)
        if peak == math.inf or peak <= 1:
            return
        cone, todo = {t}, [t]  # every type those terms may place on n
        while todo:
            u = todo.pop()
            for term in inst.pod_types[u].affinity:
                if term.topology.domain_nodes(n) == frozenset((n,)):
                    todo += [w for w in term.selects if w not in cone]
                    cone |= term.selects
        for resource, room in capacity.items():
            if peak * min(semantics.request(inst, u, resource) for u in cone) > room:
                raise _GiveUp(CAPACITY)

    def _make_room(self, t: int, n: int, stack: frozenset[int]) -> None:
        """Delete pods from n until t fits its capacity, or give up: only pods the plan
        does not read (no witness type of t or of a type it is placing, not t itself),
        the largest request of the missing resource first; t must then deploy."""
        inst = self.inst
        if semantics.deploy_failure(inst, t, n, self.sigma) is None:
            return
        if semantics.capacity_failure(inst, t, n, self.sigma) is None:
            raise _GiveUp(OTHER)
        kept = {t}.union(*(semantics.affinity_witness_types(inst, x) for x in stack | {t}))
        resources = {insufficient(r): r for r in (*inst.nodes[n].capacity, *inst.pod_types[t].requests)}
        while failing := semantics.capacity_failures(inst, t, n, self.sigma):
            short = [resources[f] for f in failing if f in resources]
            spare = [u for u in range(len(inst.pod_types)) if u not in kept
                     and self.sigma[inst.pair(u, n)] > 0
                     and any(semantics.request(inst, u, r) > 0 for r in short)
                     and semantics.delete_failure(inst, self.sigma, u, n) is None]
            if not spare:
                raise _GiveUp(CAPACITY)
            self._step(DELETE, max(spare, key=lambda u: (u not in self.read, sum(
                semantics.request(inst, u, r) for r in short), -u)), n)
        if semantics.deploy_failure(inst, t, n, self.sigma) is not None:
            raise _GiveUp(self._why(t, n))
