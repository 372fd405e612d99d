"""Explicit search with lazy deletions: deep witnesses of monotone-guard instances.

In the Appendix-B encoding of a Petri net one firing costs five deploys, and
the encoded state space is large mostly because of *when* pods are deleted.
This engine never deletes for its own sake: its only action is

    lazy(p): delete the present pods of ``blockers(p)``, then deploy p,

enabled in a presence state s when p is absent and every affinity term of p
has a witness in ``s \\ blockers(p)`` (``symreach.solvers.lazy_moves``
compiles both to bitmasks; a state is an int).

**Fragment.** Only presence matters (saturation, SPEC 2.2) and every guard
is the conjunction of (a) static checks, (b) "no pod of ``blockers(p)``"
(own anti-affinity, existing pods' anti-affinity that matches p, host
ports: anti-monotone) and (c) per affinity term "some witness present"
(monotone). Instances with count targets, a hard spread constraint or a
usable self-affinity bootstrap on a candidate type (non-monotone: a present
pod can help or the waiver can be lost), or capacity that can bind
(``lazy_moves.capacity_binds``) are declined with ``unknown`` and the
reason. Candidates are the preprocessing's deployable pairs (cone of
influence and may-fixpoint: pairs outside it can never be deployed).

**Classes.** Pairs that every blocker mask, need mask and goal contains
alike are merged (``lazy_moves.classes``); the state records which classes
are present. Guards read states only through these masks, so a state's
future depends only on its classes (in Appendix B: one class per place).

**Lemma (completeness).** In the fragment, for every configuration r
reachable by single deploys and deletions there is a class state s reachable
by lazy moves with ``cls(support(r)) ⊆ s``.

*Proof.* Induction on the run. sigma0: s0 = cls(support(sigma0)). Deletion
r -> r - q: the classes shrink, the same s covers them. Deploy of p in r:
if cls(p) ∈ s, then cls(support(r + p)) ⊆ s. Otherwise Hard(p, r) holds, so
r contains no pod of ``blockers(p)`` (b), hence ``cls(support(r)) ⊆ s \\
blockers(p)`` (masks are unions of classes); each affinity term of p has a
witness in r (c; no bootstrap in the fragment), so one in ``s \\
blockers(p)`` (monotone). Thus lazy(p) is enabled in s and leads to
``(s \\ blockers(p)) ∪ {cls(p)} ⊇ cls(support(r + p))``. QED.

A presence target is upward closed, so a reachable configuration covering
it gives a lazy state covering it: **the search finds a witness whenever one
exists** (given time). Conversely every lazy move is a real run
(soundness): deleting is always allowed, and after the deletions no blocker
is present, every term has its witness, static and capacity checks hold
(capacity never binds in the fragment).

**Not-deployable.** By the lemma the downward closure of the explored states
is an inductive invariant. When the space is exhausted the engine searches
once more, breadth-first, over every pair of the cone's types (the checker
does not trust the may-fixpoint's pruning) and returns the explored states,
as sets of pairs, in a ``symreach-lazy-closure/1`` certificate that
``symreach.certify.lazy_closure`` re-checks with the semantics alone. If
that search stops at a limit the verdict stays ``unknown``.

**Search order.** Breadth-first alone (``guided=False``: fewest lazy
deploys), or alternately breadth-first and best-first by a static goal
distance (``_Frontier``), the default. Every witness is expanded to single
actions from the real sigma0 (each present blocker deleted as many times as
it has pods, then the deploy), which the registry's wrapper replays before
it is returned. A successor re-tests only the moves its change can affect
(``Graph``); a test is a few ANDs.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import replace
from typing import Optional

from symreach import semantics
from symreach.certify.lazy_closure import ClosureCertificate
from symreach.model import Instance, Pair, Query
from symreach.result import DELETE, DEPLOY, Result, Step, Verdict
from symreach.run import RunContext
from symreach.solvers.fast_paths import PreprocessingEngine
from symreach.solvers.lazy_moves import (
    Move,
    bit_indices,
    bits_of,
    capacity_binds,
    classes,
    compile_moves,
    fits_empty,
    fragment_problem,
    project,
)

ENGINE = "lazy"
# ``stats["outcome"]`` of an unknown: why, for ``auto`` (only LIMIT is worth running on)
DECLINED, EXHAUSTED, LIMIT = "declined", "exhausted", "limit"
CLOCK_EVERY = 64  # expanded states between progress reports and clock reads


class LazySearchEngine(PreprocessingEngine):
    """Search over lazy-deletion moves (see the module docstring).

    ``fast_paths=False`` skips the preprocessing's verdicts (not its pruning),
    so that tests exercise the search itself; ``guided=False`` searches
    breadth-first only (shortest lazy witnesses)."""

    name = ENGINE

    def __init__(self, fast_paths: bool = True, guided: bool = True) -> None:
        self.fast_paths = fast_paths
        self.guided = guided

    def decide(self, instance: Instance, query: Query, pre, run: RunContext) -> Result:
        result = search(instance, query, pre.deployable_pairs, run, self.guided)
        if result.stats.get("outcome") == EXHAUSTED:
            result = prove(instance, query, pre.cone, run, result)
        return result


def prove(inst: Instance, query: Query, cone: frozenset[int], run: RunContext,
          exhausted: Result) -> Result:
    """Not-deployable with a certificate, after a search over the preprocessing's
    candidates exhausted its space: the search again, breadth-first, over every
    pair of the cone's types (the checker, ``certify.lazy_closure``, does not
    trust the may-fixpoint's pruning), whose exhausted space is the invariant.
    ``exhausted`` (unknown) when that search stops at a limit."""
    every = [(t, n) for t in sorted(cone) for n in range(len(inst.nodes))]
    free = frozenset(range(len(inst.pod_types))) - cone
    # the checker also counts the free types' pods against capacity
    loaded = [(t, n) for t in sorted(free) if inst.pod_types[t].creatable
              for n in range(len(inst.nodes)) if inst.static_block[t][n] is None]
    binds = capacity_binds(inst, [(t, n) for t, n in every if inst.pod_types[t].creatable
                                  and inst.static_block[t][n] is None and fits_empty(inst, t, n)]
                           + loaded)
    if binds is not None:
        exhausted.stats["certificate"] = f"none: {binds}"
        return exhausted
    again = search(inst, query, every, run, guided=False, free=free)
    if again.verdict is Verdict.NOT_DEPLOYABLE:
        again.stats["pruned_states"] = exhausted.stats["states"]
        return again
    exhausted.stats["certificate"] = f"none: the unpruned search ended with {again.reason}"
    if again.stats.get("outcome") == LIMIT:  # more time may still prove it
        exhausted.stats["outcome"] = LIMIT
    return exhausted


def search(inst: Instance, query: Query, candidates, run: RunContext,
           guided: bool = True, free: Optional[frozenset[int]] = None) -> Result:
    """The lazy search from sigma0 over ``candidates`` (pairs), within ``run``'s limits:
    breadth-first, or (``guided``) alternately breadth-first and best-first by
    ``goal_distance`` (``_Frontier``). With ``free`` (the types outside the
    cone, when ``candidates`` are all pairs of the others) an exhausted space
    is returned as not-deployable with its closure certificate."""
    stats: dict = {"states": 1, "tests": 0}
    problem = fragment_problem(inst, (t for t, _ in candidates), bool(query.counts))
    moves = compile_moves(inst, candidates) if problem is None else []
    if problem is None:
        problem = capacity_binds(inst, (m.pair for m in moves))
    if problem is not None:
        return _unknown(f"outside the lazy-deletion fragment: {problem}", stats, DECLINED)
    goals = [sum(1 << inst.pair(t, n) for t, n in alt) for alt in query.alternatives]
    rep = classes(moves, goals)
    moves = [replace(m, rep=1 << rep[m.bit.bit_length() - 1])
             for m in moves if m.bit.bit_length() - 1 in rep]
    stats["moves"], stats["classes"] = len(moves), len(set(rep.values()))
    s0 = project(bits_of(inst, inst.initial_config()), rep)
    if _covers(s0, goals):
        return _found(inst, query, {s0: None}, s0, stats)
    graph = Graph(moves)
    parent: dict[int, Optional[tuple[int, Move]]] = {s0: None}
    frontier = _Frontier(goal_distance(moves, goals) if guided else None)
    frontier.push(s0, 0, graph.enabled(s0, moves, stats))
    expanded = 0
    while frontier:
        popped = frontier.pop()
        if popped is None:
            break
        s, depth, enabled = popped
        expanded += 1
        for move in enabled:
            succ = (s & ~move.blockers) | move.rep
            if succ in parent:
                continue
            parent[succ] = (s, move)
            if _covers(succ, goals):
                return _found(inst, query, parent, succ, stats)
            frontier.push(succ, depth + 1, graph.successor(s, succ, move, enabled, stats))
        if run.max_states is not None and len(parent) >= run.max_states:
            stats["states"] = len(parent)
            return _unknown(f"state limit {run.max_states} reached", stats, LIMIT)
        if expanded % CLOCK_EVERY == 0:
            stats["states"] = len(parent)
            run.report(ENGINE, states=len(parent), frontier=len(frontier))
            if run.past():
                return _unknown(run.timeout_reason() if run.timed_out()
                                else "stopped: another engine answered", stats, LIMIT)
    stats["states"] = len(parent)
    if free is not None:
        cert = closure_certificate(inst, query, free, candidates, rep, parent)
        return Result(Verdict.NOT_DEPLOYABLE, ENGINE, certificate=cert, stats=stats,
                      reason=f"the lazy-deletion space ({len(parent)} states) is exhausted; its "
                             "downward closure is an inductive invariant that misses the target")
    return _unknown(f"lazy space exhausted ({len(parent)} states) without covering the target",
                    stats, EXHAUSTED)


def closure_certificate(inst: Instance, query: Query, free: frozenset[int], candidates,
                        rep: dict[int, int], states) -> ClosureCertificate:
    """The explored class states as sets of pairs (the lemma's invariant is their
    downward closure): every member of a present class, plus the non-free pairs
    no mask mentions (their presence changes no guard), keeping only pairs that
    can ever be present (initial, or creatable where the static filters pass)."""
    possible = {pair for pair in candidates if inst.pod_types[pair[0]].creatable
                and inst.static_block[pair[0]][pair[1]] is None}
    possible |= {pair for pair in inst.initial if pair[0] not in free}
    members: dict[int, list[Pair]] = {}
    for q, r in rep.items():
        pair = inst.unpair(q)
        if pair[0] not in free and pair in possible:
            members.setdefault(r, []).append(pair)
    loose = {pair for pair in possible if inst.pair(*pair) not in rep}
    states = list(states)
    present = 0
    for s in states:
        present |= s
    # as the file lists them (``ClosureCertificate.indexed``): members of distinct classes
    # and the loose pairs are disjoint, so no index repeats within a state
    pairs = sorted(loose.union(*(members.get(r, ()) for r in bit_indices(present))))
    index = {pair: i for i, pair in enumerate(pairs)}
    base = sorted(index[pair] for pair in loose)
    of_class = {r: [index[pair] for pair in group] for r, group in members.items()
                if present >> r & 1}
    listed = []
    for s in states:
        got = base.copy()
        for r in bit_indices(s):
            got += of_class.get(r, ())
        got.sort()
        listed.append(got)
    return ClosureCertificate.indexed(inst, query, free, pairs, listed)


def goal_distance(moves: list[Move], goals: list[int]) -> dict[int, int]:
    """Class bit index -> how many moves back from the goal it can help, along
    needs only (deletions and the other needs ignored): the goal's classes are
    0, the witnesses of a move that deploys a class at distance d are at most
    d + 1. A static, deterministic guide for best-first search."""
    by_rep: dict[int, list[Move]] = {}
    for move in moves:
        by_rep.setdefault(move.rep.bit_length() - 1, []).append(move)
    dist: dict[int, int] = {}
    work: deque[int] = deque()
    for goal in goals:
        for q in bit_indices(goal):
            if q not in dist:
                dist[q] = 0
                work.append(q)
    while work:
        c = work.popleft()
        for move in by_rep.get(c, ()):
            for q in bit_indices(move.witnesses):
                if q not in dist:
                    dist[q] = dist[c] + 1
                    work.append(q)
    return dist


class _Frontier:
    """Breadth-first; with a distance map, alternately breadth-first and best-first.

    Every state goes into a FIFO; with ``dist`` also into a heap ordered by the
    least goal distance of its classes, then depth, then insertion. Pops
    alternate between the two and skip states already expanded, so the
    breadth-first half still exhausts the space (completeness is kept) while
    the best-first half dives toward the goal. Neither pure order wins on the
    deep net goals: each decides one that the other misses
    (benchmarks/results/design_measurements.md)."""

    def __init__(self, dist: Optional[dict[int, int]]) -> None:
        self.dist = dist
        self.fifo: deque = deque()
        self.heap: list = []
        self.count = 0
        self.expanded: set[int] = set()
        # the distances in increasing order, and per distance the classes at most that far:
        # a state's least distance by bisection, a few ANDs instead of a pass over its bits
        by_distance: dict[int, int] = {}
        for q, d in (dist or {}).items():
            by_distance[d] = by_distance.get(d, 0) | 1 << q
        self.levels = sorted(by_distance)
        self.within: list[int] = []
        for d in self.levels:
            self.within.append((self.within[-1] if self.within else 0) | by_distance[d])
        self.far = len(dist or {}) + 1

    def distance(self, s: int) -> int:
        """The least goal distance of the classes of s (``far`` when none has one)."""
        within = self.within
        if not within or not s & within[-1]:
            return self.far
        lo, hi = 0, len(within) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if s & within[mid]:
                hi = mid
            else:
                lo = mid + 1
        return self.levels[lo]

    def __bool__(self) -> bool:
        return bool(self.fifo) or bool(self.heap)

    def __len__(self) -> int:
        return len(self.fifo) + len(self.heap)

    def push(self, s: int, depth: int, enabled) -> None:
        self.fifo.append((s, depth, enabled))
        if self.dist is None:
            return
        self.count += 1
        heapq.heappush(self.heap, (self.distance(s), depth, self.count, s, enabled))

    def pop(self):
        """The next state to expand, or None when both queues are spent."""
        if self.dist is None:
            return self.fifo.popleft()
        while self.fifo or self.heap:
            self.count += 1
            if self.heap and (self.count % 2 or not self.fifo):
                _, depth, _, s, enabled = heapq.heappop(self.heap)
            else:
                s, depth, enabled = self.fifo.popleft()
            if s not in self.expanded:
                self.expanded.add(s)
                return s, depth, enabled
        return None


class Graph:
    """Which moves are enabled in a successor, from those enabled in its parent.

    Let succ = (s minus D) ∪ {rep(m)} with D = s ∩ B(m). A move x enabled in
    succ was enabled in s, or has rep(m) in one of its needs (``by_need``),
    or was present in s and deleted by m (``by_rep``): each need of any other
    x that meets succ minus B(x) met s minus B(x) already. A move enabled in
    s stays enabled in succ unless it is now present or one of its witnesses
    is in D; only those are tested again."""

    def __init__(self, moves: list[Move]) -> None:
        self.by_need: dict[int, list[Move]] = {}
        self.by_rep: dict[int, list[Move]] = {}
        self.witnesses = {move.bit: move.witnesses for move in moves}
        for move in moves:
            self.by_rep.setdefault(move.rep, []).append(move)
            for q in bit_indices(move.witnesses):
                self.by_need.setdefault(1 << q, []).append(move)

    def successor(self, s: int, succ: int, move: Move, enabled: tuple[Move, ...],
                  stats: dict) -> tuple[Move, ...]:
        """The moves enabled in ``succ``, reached from s by ``move``."""
        gone = s & move.blockers
        keep: list[Move] = []
        again: list[Move] = list(self.by_need.get(move.rep, ()))
        witnesses = self.witnesses
        for x in enabled:
            if x.rep & succ:
                continue
            if witnesses[x.bit] & gone:
                again.append(x)
            else:
                keep.append(x)
        for q in bit_indices(gone):
            again += self.by_rep.get(1 << q, ())
        if not again:
            return tuple(keep)
        seen = {x.bit for x in keep}
        return tuple(keep) + self.enabled(succ, again, stats, seen)

    @staticmethod
    def enabled(s: int, moves, stats: dict, seen: Optional[set[int]] = None) -> tuple[Move, ...]:
        """The moves among ``moves`` enabled in s (absent, every need met after the
        deletions) and not in ``seen``, each once, in first-seen order."""
        seen = set() if seen is None else seen
        out: list[Move] = []
        tests = 0
        for move in moves:  # the search's inner loop: plain loops, no generator per move
            if s & move.rep or move.bit in seen:
                continue
            seen.add(move.bit)
            tests += 1
            r = s & ~move.blockers
            for need in move.needs:
                if not r & need:
                    break
            else:
                out.append(move)
        stats["tests"] += tests
        return tuple(out)


def _covers(s: int, goals: list[int]) -> bool:
    return any(s & g == g for g in goals)


def _found(inst: Instance, query: Query, parent, end: int, stats: dict) -> Result:
    moves: list[Move] = []
    s = end
    while parent[s] is not None:
        s, move = parent[s]
        moves.append(move)
    moves.reverse()
    stats["states"] = len(parent)
    stats["lazy_moves"] = len(moves)
    return Result(Verdict.DEPLOYABLE, ENGINE, trace=expand(inst, moves),
                  reason=f"witness of {len(moves)} lazy deployments found by the lazy-deletion search",
                  stats=stats)


def expand(inst: Instance, moves: list[Move]) -> tuple[Step, ...]:
    """Single actions from the real sigma0: each move's present blockers deleted
    (every pod of the pair), then its deploy."""
    sigma = list(inst.initial_config())
    out: list[Step] = []
    for move in moves:
        for q in bit_indices(move.blockers):
            t, n = inst.unpair(q)
            out.extend(semantics.step_of(inst, DELETE, t, n) for _ in range(sigma[q]))
            sigma[q] = 0
        t, n = move.pair
        out.append(semantics.step_of(inst, DEPLOY, t, n))
        sigma[inst.pair(t, n)] += 1
    return tuple(out)


def _unknown(reason: str, stats: dict, outcome: str) -> Result:
    stats["outcome"] = outcome
    return Result(Verdict.UNKNOWN, ENGINE, reason=reason, stats=stats)
