"""Explicit search with lazy deletions: deep witnesses of monotone-guard instances.

In the Appendix-B encoding of a Petri net one firing costs five deploys, and
the encoded state space is large mostly because of *when* pods are deleted.
This engine never deletes for its own sake: its only action is

    lazy(p): delete the present pods of ``blockers(p)``, then deploy p,

enabled in a presence state s when p is absent and every affinity term of p
has a witness in ``s \\ blockers(p)`` (``symreach.solvers.lazy_moves``
compiles both to bitmasks; a state is an int). The search is breadth-first,
so a witness has the fewest lazy moves (deploys).

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

**Lemma (completeness).** In the fragment, for every configuration r
reachable by single deploys and deletions there is a state s reachable by
lazy moves with ``support(r) ⊆ s``.

*Proof.* Induction on the run. sigma0: s0 = support(sigma0). Deletion
r -> r - q: support shrinks, the same s covers it. Deploy of p in r with
support(r) ⊆ s: if p ∈ s, then support(r + p) ⊆ s. Otherwise Hard(p, r)
holds, so r contains no pod of ``blockers(p)`` (b), hence
``support(r) ⊆ s \\ blockers(p)``; each affinity term of p has a witness in
r (c; no bootstrap in the fragment), so one in ``s \\ blockers(p)``
(monotone). Thus lazy(p) is enabled in s and leads to
``(s \\ blockers(p)) ∪ {p} ⊇ support(r + p)``. QED.

Since a presence target is upward closed, a reachable configuration covering
it gives a lazy state covering it: **BFS over lazy states finds a witness
whenever one exists** (given time). Conversely every lazy move is a real run
(soundness): deleting is always allowed, and after the deletions no blocker
is present, every term has its witness, static and capacity checks hold
(capacity never binds in the fragment). The lemma also says that the
downward closure of the lazy states is an inductive invariant, so an
exhausted search proves ``not-deployable``; this engine emits no
certificate for it that an independent checker could re-check, so it
reports ``unknown`` instead ("lazy space exhausted").

Every witness is expanded to single actions from the real sigma0 (each
present blocker deleted as many times as it has pods, then the deploy) and
replayed with ``semantics.replay`` before it is returned.

Speed: each move is indexed by the bits of its most selective affinity
mask, so a state only tries the moves one of its pods can enable (plus the
moves without affinity); a test is a few ANDs.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from dataclasses import replace
from typing import Optional

from symreach import semantics
from symreach.model import Instance, Query
from symreach.result import DELETE, DEPLOY, Result, Step, Verdict
from symreach.solvers.base import Limits
from symreach.solvers.fast_paths import begin_check
from symreach.solvers.lazy_moves import (
    Move,
    bit_indices,
    bits_of,
    capacity_binds,
    classes,
    compile_moves,
    fragment_problem,
    project,
)

ENGINE = "lazy"
# ``stats["outcome"]`` of an unknown: why, for ``auto`` (only LIMIT is worth running on)
DECLINED, EXHAUSTED, LIMIT = "declined", "exhausted", "limit"
CLOCK_EVERY = 64  # expanded states between progress reports and clock reads


class LazySearchEngine:
    """Search over lazy-deletion moves (see the module docstring).

    ``fast_paths=False`` skips the preprocessing's verdicts (not its pruning),
    so that tests exercise the search itself; ``guided=False`` searches
    breadth-first only (shortest lazy witnesses)."""

    name = ENGINE

    def __init__(self, fast_paths: bool = True, guided: bool = True) -> None:
        self.fast_paths = fast_paths
        self.guided = guided

    def check(self, instance: Instance, query: Optional[Query] = None,
              limits: Limits = Limits()) -> Result:
        begun = begin_check(instance, query, limits, ENGINE, self.fast_paths)
        if begun.decided is not None:
            return begun.decided
        result = search(instance, begun.query, begun.pre.deployable_pairs, limits, begun.start,
                        self.guided)
        result.time_s = time.perf_counter() - begun.start
        if result.verdict is Verdict.DEPLOYABLE:
            semantics.replay(instance, result.trace, begun.query)
        return result


def search(inst: Instance, query: Query, candidates, limits: Limits, start: float,
           guided: bool = True) -> Result:
    """The lazy search from sigma0 over ``candidates`` (pairs), within ``limits``:
    breadth-first, or (``guided``) alternately breadth-first and best-first by
    ``goal_distance`` (``_Frontier``)."""
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
    deadline = None if limits.timeout_s is None else start + limits.timeout_s
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
        if limits.max_states is not None and len(parent) >= limits.max_states:
            stats["states"] = len(parent)
            return _unknown(f"state limit {limits.max_states} reached", stats, LIMIT)
        if expanded % CLOCK_EVERY == 0:
            stats["states"] = len(parent)
            limits.report(ENGINE, states=len(parent), frontier=len(frontier))
            if deadline is not None and time.perf_counter() > deadline:
                return _unknown(f"timeout after {limits.timeout_s:g} s", stats, LIMIT)
    stats["states"] = len(parent)
    return _unknown(f"lazy space exhausted ({len(parent)} states) without covering the target; "
                    "the engine has no certificate for not-deployable", stats, EXHAUSTED)


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
    the best-first half dives toward the goal. Measured on the deep net goals
    (60 s each): pure best-first won LamportFastMutEx P-ifyi_15_4 (8.5 s, BFS
    timed out) and lost P-fordo_12_1 (timed out, BFS 8.5 s)."""

    def __init__(self, dist: Optional[dict[int, int]]) -> None:
        self.dist = dist
        self.fifo: deque = deque()
        self.heap: list = []
        self.count = 0
        self.expanded: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self.fifo) or bool(self.heap)

    def __len__(self) -> int:
        return len(self.fifo) + len(self.heap)

    def push(self, s: int, depth: int, enabled) -> None:
        self.fifo.append((s, depth, enabled))
        if self.dist is None:
            return
        far = len(self.dist) + 1
        h = min((self.dist.get(q, far) for q in bit_indices(s)), default=far)
        self.count += 1
        heapq.heappush(self.heap, (h, depth, self.count, s, enabled))

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
        for move in moves:
            if s & move.rep or move.bit in seen:
                continue
            seen.add(move.bit)
            stats["tests"] += 1
            r = s & ~move.blockers
            if all(r & need for need in move.needs):
                out.append(move)
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
