"""Structural lifting for IC3's macro step, and replay of lifted counterexamples.

IC3's transition relation (``CnfLowering.macro_step``) is "delete any set of
pods, then deploy at most one". A satisfiable consecution query gives a model
``s -> m -> t`` (``m`` the state after the deletions) and the deploy ``a`` it
chose (or none). Instead of asking the solver for a smaller predecessor, the
predecessor cube is read off the system's structure:

1. the *mid cube* ``M``: ``a``'s move ``pre`` cube matched by ``m``, a
   *justification* of ``a``'s guard in ``m`` (a sufficient subset of the
   literals the guard reads: one true child of an OR, all children of a true
   AND, a PB comparison's literals minus those its slack absorbs) and the
   successor cube's literals on variables ``a`` does not write. Every state
   of ``M`` takes ``a`` into the successor cube;
2. the *predecessor cube* ``P`` at ``s``: deletions can clear any presence
   bit, so a saturated pair contributes only its *true* literals of ``M``
   (a false literal is reached by deleting); a counted pair that ``M``
   mentions contributes its exact value in ``s`` (from which the model's
   deletions reach its value in ``m``).

Hence from every state of ``P`` the deletions recorded in the ``Hop`` (clear
the false saturated literals of ``M``, lower the counted pairs to their ``m``
values) reach a state of ``M``, and ``a`` then reaches the successor cube:
a chain of lifted obligations whose last cube contains the initial state
*is* a counterexample, and ``replay_hops`` executes it on the system.
On saturated pairs ``P`` has only positive literals, the form the
monotone generalisation of ``symreach.solvers.ic3`` prefers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from symreach.encodings.circuit import AND, CONST, NOT, OR, VAR
from symreach.encodings.system import PairVars, TransitionSystem
from symreach.model import Pair
from symreach.result import DELETE, DEPLOY

State = Mapping[int, bool]


@dataclass(frozen=True)
class Hop:
    """One macro step of a lifted counterexample: deletions, then a deploy."""

    clear: tuple[int, ...]  # saturated presence variables to delete
    lower: tuple[tuple[Pair, int], ...]  # counted pairs lowered to this count
    action: Optional[int]  # deploy action index, None for deletions only


class Lifter:
    """Lifting and justification on one ``TransitionSystem``."""

    def __init__(self, system: TransitionSystem) -> None:
        self.system = system
        self.pair_of: dict[int, tuple[Pair, PairVars]] = {}
        for p, pv in system.pairs.items():
            for v in (pv.present,) + pv.count_bits:
                self.pair_of[v] = (p, pv)
        self._order: dict[int, list[int]] = {}  # guard -> its nodes, children first
        self.delete_of: dict[Pair, int] = {a.pair: i for i, a in enumerate(system.actions) if a.op == DELETE}

    # ---- lifting ----------------------------------------------------------------
    def lift(self, s: State, m: State, act: Optional[int],
             succ: Mapping[int, bool]) -> tuple[dict[int, bool], Hop]:
        """The predecessor literals (state var -> value) of ``succ`` and the hop taken."""
        mid: dict[int, bool] = {}
        written: set[int] = set()
        if act is not None:
            a = self.system.actions[act]
            written = set(a.writes)
            for mv in a.moves:
                if all(m[v] == b for v, b in mv.pre):
                    mid.update(mv.pre)
                    break
            else:  # pragma: no cover - the model satisfies one move
                raise AssertionError("no move matches the model state")
            mid.update(self.justify(a.guard, m))
        for v, b in succ.items():
            if v not in written:
                mid[v] = b
        pred: dict[int, bool] = {}
        clear: list[int] = []
        counted: dict[Pair, PairVars] = {}
        for v, b in mid.items():
            p, pv = self.pair_of[v]
            if pv.counted:
                counted[p] = pv
            elif b:
                pred[v] = True
            else:
                clear.append(v)
        lower = []
        for p, pv in sorted(counted.items()):
            for v in (pv.present,) + pv.count_bits:
                pred[v] = s[v]
            lower.append((p, self.count(pv, m)))
        return pred, Hop(tuple(sorted(clear)), tuple(lower), act)

    @staticmethod
    def count(pv: PairVars, state: State) -> int:
        return sum(1 << j for j, b in enumerate(pv.count_bits) if state[b])

    def justify(self, root: int, state: State) -> dict[int, bool]:
        """A set of state literals that forces ``root`` to its value in ``state``."""
        c = self.system.circuit
        value: dict[int, bool] = {}
        order = self._order.get(root)
        if order is None:
            order = self._order[root] = c.topological([root])
        for i in order:
            nd = c.node(i)
            k = nd.kind
            if k == CONST:
                value[i] = bool(i)
            elif k == VAR:
                value[i] = state[i]
            elif k == NOT:
                value[i] = not value[nd.children[0]]
            elif k == AND:
                value[i] = all(value[ch] for ch in nd.children)
            elif k == OR:
                value[i] = any(value[ch] for ch in nd.children)
            else:
                value[i] = sum(w for w, ch in zip(nd.weights, nd.children) if value[ch]) <= nd.bound
        out: dict[int, bool] = {}
        seen: set[int] = set()
        stack = [root]
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            nd = c.node(i)
            k = nd.kind
            if k == VAR:
                out[i] = state[i]
            elif k == NOT:
                stack.append(nd.children[0])
            elif k in (AND, OR):
                want = k == OR  # the controlling value
                if value[i] == want:
                    hits = [ch for ch in nd.children if value[ch] == want]
                    # prefer a child already justified, else a variable
                    pick = next((ch for ch in hits if ch in seen), None)
                    if pick is None:
                        pick = next((ch for ch in hits if c.kind(ch) == VAR), hits[0])
                    stack.append(pick)
                else:
                    stack.extend(nd.children)
            elif k != CONST:
                self._justify_pb(nd, value[i], state, out)
        return out

    @staticmethod
    def _justify_pb(nd, holds: bool, state: State, out: dict[int, bool]) -> None:
        total = sum(w for w, ch in zip(nd.weights, nd.children) if state[ch])
        # the terms that could move the sum across the bound if freed
        if holds:
            slack = nd.bound - total
            risky = [(w if w > 0 else -w, ch) for w, ch in zip(nd.weights, nd.children)
                     if (w > 0) != state[ch]]
        else:
            slack = total - nd.bound - 1
            risky = [(w if w > 0 else -w, ch) for w, ch in zip(nd.weights, nd.children)
                     if (w > 0) == state[ch]]
        risky.sort()
        for w, ch in risky:
            if w <= slack:
                slack -= w
            else:
                out[ch] = state[ch]

    # ---- counterexamples ---------------------------------------------------------------
    def run_hop(self, state: State, hop: Hop, steps: list[tuple[str, int, int]]) -> Optional[dict[int, bool]]:
        """The state after ``hop`` from ``state`` (its actions appended to ``steps``),
        or None when its deploy is disabled there."""
        system = self.system
        cur = dict(state)

        def delete(p: Pair) -> None:
            nonlocal cur
            nxt = system.successor(system.actions[self.delete_of[p]], cur)
            if nxt is None:  # pragma: no cover - deletions are always enabled
                raise AssertionError(f"cannot delete {p}")
            cur = nxt
            steps.append((DELETE, p[0], p[1]))
        for v in hop.clear:
            if cur[v]:
                delete(self.pair_of[v][0])
        for p, want in hop.lower:
            pv = system.pairs[p]
            while self.count(pv, cur) > want:
                delete(p)
        if hop.action is None:
            return cur
        a = system.actions[hop.action]
        nxt = system.successor(a, cur)
        if nxt is None:
            return None
        steps.append((DEPLOY, a.type_index, a.node_index))
        return nxt

    def replay_hops(self, hops: list[Hop]) -> list[tuple[str, int, int]]:
        """Execute lifted hops from the initial state; the abstract steps (op, t, n).
        Raises AssertionError if a hop is not executable or the target is missed,
        which would be a lifting bug."""
        state: Optional[dict[int, bool]] = dict(self.system.initial)
        steps: list[tuple[str, int, int]] = []
        for hop in hops:
            state = self.run_hop(state, hop, steps)
            if state is None:  # pragma: no cover
                raise AssertionError("lifted counterexample is not executable")
        if not self.system.holds(self.system.target, state):  # pragma: no cover
            raise AssertionError("lifted counterexample misses the target")
        return steps
