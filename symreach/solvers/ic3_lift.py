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
   deletions reach its value in ``m``). Where the system guards deletions
   (``TransitionSystem.deletion_guard``, the gang system), ``P`` also holds
   a justification of that guard at ``s``, and a model that deleted nothing
   lifts to ``M`` itself (no deletion is then needed).

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

from symreach.encodings.circuit import AND, CONST, NOT, OR, VAR, Circuit
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
        self.counted_vars = frozenset(v for v, (_, pv) in self.pair_of.items() if pv.counted)
        self._plans: dict[int, list[tuple]] = {}  # guard -> its cone, children first (_plan)
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
        guard = self.system.deletion_guard
        if guard != Circuit.TRUE:
            if all(s[v] == m[v] for v in self.pair_of):   # no deletion: the mid cube itself
                return mid, Hop((), (), act)
            deleting = self.justify(guard, s)   # the deletions need their guard at s
        pred: dict[int, bool] = {}
        clear: list[int] = []
        counted: dict[Pair, PairVars] = {}
        counted_vars = self.counted_vars
        for v, b in mid.items():
            if v in counted_vars:
                p, pv = self.pair_of[v]
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
        if guard != Circuit.TRUE:
            pred.update(deleting)
        return pred, Hop(tuple(sorted(clear)), tuple(lower), act)

    @staticmethod
    def count(pv: PairVars, state: State) -> int:
        return sum(1 << j for j, b in enumerate(pv.count_bits) if state[b])

    def _plan(self, root: int) -> list[tuple]:
        """``root``'s cone, children first, as (node, kind, children, weights, bound);
        a PB node's weights are paired with its children in (|weight|, child) order,
        the order in which its slack absorbs them."""
        c = self.system.circuit
        plan = []
        for i in c.topological([root]):
            nd = c.node(i)
            if nd.kind in (AND, OR, NOT, VAR, CONST):
                plan.append((i, nd.kind, nd.children, (), 0))
            else:
                terms = tuple(sorted(zip(nd.weights, nd.children), key=lambda t: (abs(t[0]), t[1])))
                plan.append((i, nd.kind, tuple(ch for _, ch in terms), tuple(w for w, _ in terms), nd.bound))
        self._plans[root] = plan
        return plan

    def justify(self, root: int, state: State) -> dict[int, bool]:
        """A set of state literals that forces ``root`` to its value in ``state``."""
        plan = self._plans.get(root) or self._plan(root)
        value: dict[int, bool] = {}
        total: dict[int, int] = {}
        info: dict[int, tuple] = {}
        for entry in plan:
            i, k, ch = entry[0], entry[1], entry[2]
            info[i] = entry
            if k == VAR:
                value[i] = state[i]
            elif k == AND:
                value[i] = all(value[x] for x in ch)
            elif k == OR:
                value[i] = any(value[x] for x in ch)
            elif k == NOT:
                value[i] = not value[ch[0]]
            elif k == CONST:
                value[i] = bool(i)
            else:
                t = total[i] = sum(w for w, x in zip(entry[3], ch) if value[x])
                value[i] = t <= entry[4]
        out: dict[int, bool] = {}
        seen: set[int] = set()
        stack = [root]
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            _, k, ch, ws, bound = info[i]
            if k == VAR:
                out[i] = state[i]
            elif k == NOT:
                stack.append(ch[0])
            elif k == AND or k == OR:
                want = k == OR  # the controlling value
                if value[i] == want:
                    hits = [x for x in ch if value[x] == want]
                    # prefer a child already justified, else a variable
                    pick = next((x for x in hits if x in seen), None)
                    if pick is None:
                        pick = next((x for x in hits if info[x][1] == VAR), hits[0])
                    stack.append(pick)
                else:
                    stack.extend(ch)
            elif k != CONST:
                self._justify_pb(ch, ws, bound, total[i], value[i], state, out)
        return out

    @staticmethod
    def _justify_pb(children, weights, bound: int, total: int, holds: bool, state: State,
                    out: dict[int, bool]) -> None:
        """The terms that could move the sum across the bound if freed; the slack
        absorbs the lightest first (``children`` come in that order)."""
        if holds:
            slack = bound - total
            for w, ch in zip(weights, children):
                if (w > 0) != state[ch]:
                    if abs(w) <= slack:
                        slack -= abs(w)
                    else:
                        out[ch] = state[ch]
        else:
            slack = total - bound - 1
            for w, ch in zip(weights, children):
                if (w > 0) == state[ch]:
                    if abs(w) <= slack:
                        slack -= abs(w)
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
