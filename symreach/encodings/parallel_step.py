"""Parallel BMC steps: any set of deletions, then a set of non-interfering deploys.

A single-action step makes a witness as deep as it is long: one Petri-net
firing of Appendix B costs a deployment per produced place, and independent
deployments on different nodes of a cluster each cost a step. Planning as
satisfiability removes that cost with parallel steps (Rintanen, Heljanko,
Niemelä, "Planning as satisfiability: parallel plans and algorithms for plan
search", AIJ 2006). This module gives the step of ``BmcEngine(parallel=True)``,
in the *exists-step* form with one fixed order of the deploy actions:

    s --(deletions)--> m --(deploys D, applied in the fixed order)--> s'

- ``m`` is ``s`` after any set of deletions (``CnfLowering.deletions``);
- every ``a`` in ``D`` has its guard and its ``pre`` cube true **in m**;
- ``s'`` is ``m`` updated by the ``post`` of every ``a`` in ``D``;
- no ``a, b`` in ``D`` with ``a`` before ``b`` in the order such that ``a``
  *may disable* ``b`` (below).

Encoding size. "May disable" is often a clique: in Appendix B every start
pod's guard forbids every other start pod, and pairwise clauses cost
quadratically many per step. The guard of ``b`` is walked from its root
through the sub-circuits it does not share with other guards (``AND``,
``OR``, ``NOT``, tracking polarity) down to *units*: variables, comparisons
and shared sub-circuits (e.g. "some start pod is present"). A unit's
*writers* are the deploys that may move it in the direction that hurts; its
*readers* are the deploys whose guards reach it. "Some writer before
position i is selected" is a chain of auxiliary variables (the linear
exists-step encoding of Rintanen et al.), and a reader at position i is
forbidden together with it: O(writers + readers) clauses per unit and step.

``a`` may disable ``b`` when ``a`` writes a variable that ``b``'s guard reads
in a way that ``a``'s change could falsify:

- a presence bit that the guard reads *antitonely* (``down`` below: under an
  odd number of negations, or with a positive weight in a ``<=`` comparison);
  a deploy only ever raises presence bits (0 -> 1, or 1 -> 1 for a counter);
- any counter bit the guard reads at all (an increment flips bits both ways).

Every step with no conflicting pair (in particular every set of pairwise
non-interfering deploys, the *forall-step* condition "guards hold before the
step and stay true in whatever order") is allowed; the fixed order lets a
one-way interference through as well, by putting the disabled action first.

Soundness of the unit walk: the guard is a monotone function of its units
along the walked private ``AND``/``OR``/``NOT`` path (with polarity), so if
no unit moves in its hurting direction the guard cannot fall.

Linearisation (why every step is a sequence of real transitions, so that the
decoded trace replays): list the deletions of the step first, then the
deploys of ``D`` in the fixed order ``a_1, ..., a_r``. Deletions are always
enabled while the pod is present (``m`` only lowers counts of ``s``). Let
``m_0 = m`` and ``m_i = m_{i-1}`` updated by ``a_i``'s post. Claim: ``a_i``
is enabled in ``m_{i-1}``. (1) Its ``pre`` cube holds: it holds in ``m`` and
mentions only ``a_i``'s own variables, which no other action of the system
writes (actions write only their own pair's variables, and ``D`` has at most
one deploy per pair since it is a set of actions). (2) Its guard holds: the
guard is true in ``m``; ``m_{i-1}`` differs from ``m`` only on variables
written by ``a_1 .. a_{i-1}``, none of which may disable ``a_i``, so every
such variable is a presence bit that was raised and that the guard reads
only monotonely (``x`` not in ``down(guard)``); by induction on the circuit
(``down``/``up`` are the variables through which raising can lower/raise a
node), a node is non-decreasing in every variable outside its ``down`` set,
so the guard is still true. Then ``m_r = s'`` because the writes are disjoint.
Hence a path of ``k`` parallel steps is a path of single transitions; and a
single-action step is a parallel step, so reachability (and the shortest
witness, in steps) can only get better. The trace is the linearised list,
replayed by ``semantics.replay`` before it leaves the engine.
"""

from __future__ import annotations

import heapq
from typing import Hashable

from symreach.encodings.circuit import AND, CONST, NOT, OR, PB, VAR, Circuit
from symreach.encodings.cnf import CnfLowering
from symreach.encodings.system import TransitionSystem
from symreach.result import DEPLOY

Step = Hashable


class Monotonicity:
    """``down(i)`` / ``up(i)``: variables whose raising may lower / raise node ``i``.

    Over-approximations by structural induction (memoised on the hash-consed
    DAG): a ``VAR`` raises itself; ``NOT`` swaps the sets; ``AND``/``OR`` take
    unions; a ``PB`` node ``sum w*x <= b`` is lowered by raising an ``x`` of
    positive weight and raised by raising one of negative weight.
    """

    def __init__(self, circuit: Circuit) -> None:
        self.circuit = circuit
        self._memo: dict[int, tuple[frozenset[int], frozenset[int]]] = {}

    def sets(self, root: int) -> tuple[frozenset[int], frozenset[int]]:
        """``(down, up)`` of ``root``."""
        memo, c = self._memo, self.circuit
        if root in memo:
            return memo[root]
        for i in c.fresh_below(root, memo.__contains__):
            nd = c.node(i)
            if nd.kind == CONST:
                memo[i] = (frozenset(), frozenset())
            elif nd.kind == VAR:
                memo[i] = (frozenset(), frozenset((i,)))
            elif nd.kind == NOT:
                d, u = memo[nd.children[0]]
                memo[i] = (u, d)
            elif nd.kind in (AND, OR):
                ds, us = zip(*(memo[ch] for ch in nd.children))
                memo[i] = (frozenset().union(*ds), frozenset().union(*us))
            elif nd.kind == PB:
                memo[i] = (frozenset(x for x, w in zip(nd.children, nd.weights) if w > 0),
                           frozenset(x for x, w in zip(nd.children, nd.weights) if w < 0))
            else:  # pragma: no cover
                raise ValueError(f"unknown node kind {nd.kind}")
        return memo[root]

    def down(self, root: int) -> frozenset[int]:
        return self.sets(root)[0]

    def support(self, root: int) -> frozenset[int]:
        d, u = self.sets(root)
        return d | u


Unit = tuple[int, int]  # (circuit node, polarity +1 / -1 under which the guard reads it)


class Interference:
    """Writers and readers of every unit (see the module docstring)."""

    def __init__(self, system: TransitionSystem) -> None:
        circuit = system.circuit
        self.mono = mono = Monotonicity(circuit)
        self.deploys = [i for i, a in enumerate(system.actions) if a.op == DEPLOY]
        counter_bits: set[int] = set()
        for pv in system.pairs.values():
            counter_bits.update(pv.count_bits)
        writer: dict[int, int] = {}
        for i in self.deploys:
            for v in system.actions[i].writes:
                writer[v] = i
        # a node is shared when two parents (or two deploys, as their guard) use it
        roots = [system.actions[b].guard for b in self.deploys]
        refs: dict[int, int] = {}
        for g in roots:
            refs[g] = refs.get(g, 0) + 1
        for node in circuit.topological(sorted(set(roots))):
            for ch in set(circuit.node(node).children):
                refs[ch] = refs.get(ch, 0) + 1
        self.readers: dict[Unit, list[int]] = {}
        self.writers: dict[Unit, list[int]] = {}

        # Units of different guards often read equal variable sets (BART: 3,975 units,
        # sets of ~800 bits): computed once per distinct set (frozensets hash in C),
        # this took most of the Interference's time on BART (design_measurements.md).
        known: dict[Hashable, list[int]] = {}

        def hurting_writers(node: int, pol: int) -> list[int]:
            down, up = mono.sets(node)
            lowering = down if pol > 0 else up
            key: Hashable = (lowering, down | up) if counter_bits else lowering
            got = known.get(key)
            if got is None:
                ws = {writer[v] for v in lowering if v in writer and v not in counter_bits}
                ws |= {writer[v] for v in (down | up) & counter_bits if v in writer}
                got = known[key] = sorted(ws)
            return got

        for b in self.deploys:
            root = system.actions[b].guard
            stack: list[Unit] = [(root, 1)]
            seen: set[Unit] = set()
            while stack:
                unit = stack.pop()
                if unit in seen:
                    continue
                seen.add(unit)
                node, pol = unit
                if unit not in self.writers:
                    self.writers[unit] = hurting_writers(node, pol)
                if not self.writers[unit]:
                    continue
                nd = circuit.node(node)
                shared = refs.get(node, 0) >= 2
                if nd.kind == NOT and not shared:
                    stack.append((nd.children[0], -pol))
                elif nd.kind in (AND, OR) and not shared:
                    stack.extend((ch, pol) for ch in nd.children)
                else:
                    self.readers.setdefault(unit, []).append(b)
        self.writers = {u: w for u, w in self.writers.items() if u in self.readers}

    def order(self) -> list[int]:
        """A fixed deploy order putting readers before writers where it can.

        Kahn's algorithm on the graph reader -> unit -> writer; the next node is
        the one with the fewest unplaced predecessors, smallest id first
        (deterministic). On a cycle (e.g. a clique of mutual anti-affinity)
        that number is positive and the chain clauses keep the conflict. A lazy
        heap of ``(waiting, id)`` makes it O(E log V).
        """
        n = len(self.deploys)
        ids = {a: k for k, a in enumerate(self.deploys)}
        units = sorted(self.readers)
        succs: list[list[int]] = [[] for _ in range(n + len(units))]
        preds = [0] * (n + len(units))
        for j, u in enumerate(units):
            uid = n + j
            for b in self.readers[u]:
                succs[ids[b]].append(uid)
                preds[uid] += 1
            for a in self.writers[u]:
                succs[uid].append(ids[a])
                preds[ids[a]] += 1
        heap = [(w, i) for i, w in enumerate(preds)]
        heapq.heapify(heap)
        placed = [False] * len(preds)
        order: list[int] = []
        while heap:
            w, nxt = heapq.heappop(heap)
            if placed[nxt] or w != preds[nxt]:
                continue
            placed[nxt] = True
            if nxt < n:
                order.append(self.deploys[nxt])
            for s in succs[nxt]:
                if not placed[s]:
                    preds[s] -= 1
                    heapq.heappush(heap, (preds[s], s))
        return order


class ParallelSteps:
    """Adds parallel BMC steps to a ``CnfLowering`` (see the module docstring)."""

    def __init__(self, low: CnfLowering) -> None:
        self.low = low
        inter = Interference(low.system)
        self.deploys = inter.deploys
        self.order = inter.order()
        self.position = {a: p for p, a in enumerate(self.order)}
        # per unit, in order: segments (writers, then the readers that follow them)
        self.chains: list[list[tuple[list[int], list[int]]]] = []
        for unit in sorted(inter.readers):
            events = [(self.position[b], 0, b) for b in inter.readers[unit]]
            events += [(self.position[a], 1, a) for a in inter.writers[unit]]
            events.sort()  # a reader sorts before its own write
            segments: list[tuple[list[int], list[int]]] = []
            for _, is_writer, action in events:
                if is_writer:
                    if not segments or segments[-1][1]:
                        segments.append(([], []))
                    segments[-1][0].append(action)
                elif segments:  # readers before every writer are never disabled
                    segments[-1][1].append(action)
            while segments and not segments[-1][1]:
                segments.pop()
            if segments:
                self.chains.append(segments)

    def step(self, k: int) -> tuple[dict[int, int], Step]:
        """State ``k`` -> mid ``("mid", k+1)`` (deletions) -> state ``k+1`` (a set of
        deploys). Returns (deploy index -> selector, the mid step)."""
        low = self.low
        mid = ("mid", k + 1)
        low.deletions(k, mid)
        sel_of = low.set_step(mid, k + 1, self.deploys)
        for c, segments in enumerate(self.chains):
            self._chain(c, segments, sel_of, k + 1)
        return sel_of, mid

    def _chain(self, c: int, segments, sel_of: dict[int, int], step: Step) -> None:
        """Forbid a reader together with any selected writer placed before it:
        ``before`` is "some writer of the segments so far is selected"."""
        low = self.low
        before: int | None = None
        for s, (writers, readers) in enumerate(segments):
            if before is None and len(writers) == 1:
                now = sel_of[writers[0]]
            else:
                now = low.pool.id(("before", c, s, step))
                for a in writers:
                    low.clause([-sel_of[a], now])
                if before is not None:
                    low.clause([-before, now])
            for b in readers:
                low.clause([-sel_of[b], -now])
            before = now

    def linearise(self, selected: set[int]) -> list[int]:
        """The selected deploys of one step in the order they replay."""
        return [a for a in self.order if a in selected]
