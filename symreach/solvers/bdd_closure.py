"""Unguarded bit deletes: the reached sets they close, and the closure pass.

A *closure action* is a delete whose guard is TRUE and whose one move flips
one presence bit 1 -> 0 (``closure_actions``). For such a delete of ``v``:

- **Backward**, the set ``B`` of states that reach the target is upward
  closed in ``v``: if ``S`` (``v`` = 0) is in ``B``, so is ``S`` with
  ``v`` = 1, since that state can first delete ``v`` (the guard always
  holds, the move's pre ``v`` = 1 does) and is then ``S``. Its pre-image
  on a set ``R`` is ``v & R|v=0``, so ``R`` is closed under it exactly when
  ``R`` is upward closed in ``v``.
- **Forward**, the reachable set is downward closed in ``v`` (delete ``v``
  from a reachable state), and the delete's image ``~v & R|v=1`` adds
  nothing exactly when ``R`` is downward closed in ``v``.

Applying each closure action's image once, in any order, closes ``R`` in
all their variables (for the upward case: after ``v``, ``w``, the set
holds every state that drops to ``R`` by removing any subset of
``{v, w}``; by induction any subset of the closure variables; the forward
case is the mirror). After such a pass, every closure action is idle on
``R`` until some other image grows it, so a chaining run may skip them
then (they count towards the idle cycle that ends a chaining run).
``bdd.Reachability`` makes one such pass, after its first sweep.

Why one pass: plain cyclic chaining's second sweep on pebbling pyramids is
almost entirely delete images growing R towards its upward closure, in the
sweep's order, with intermediate sets several times the final one; then a
whole idle cycle re-applies every delete and deploy to the final set. The
pass closes bottom-first (``closure_order``), which keeps R's peak during
the pass lowest. The measurements (the backward run's time, the peaks by
order) are in ``benchmarks/results/bdd_alternation.md``.
"""

from __future__ import annotations

from symreach.encodings.circuit import AND, PB, Circuit
from symreach.result import DEPLOY


def closure_actions(system) -> list[int]:
    """Indices of the unguarded single-bit deletes (see the module docstring)."""
    counted = {v for pv in system.pairs.values() if pv.counted
               for v in (pv.present,) + pv.count_bits}
    out = []
    for i, a in enumerate(system.actions):
        if a.op == DEPLOY or a.guard != Circuit.TRUE or len(a.moves) != 1 or len(a.writes) != 1:
            continue
        m = a.moves[0]
        v = a.writes[0]
        if v in counted or m.pre != ((v, True),) or m.post != ((v, False),):
            continue
        out.append(i)
    return out


def closure_order(sym, idx: list[int]) -> list[int]:
    """The closure actions bottom-first: the deletes of the variables
    lowest in the BDD order first: on pyramids R's peak during the pass
    is then lowest, and so is the pass's time (``bdd_alternation.md``,
    ``design_measurements.md``)."""
    def level(i: int) -> int:
        return sym.bdd.level_of_var(sym.names[sym.system.actions[i].writes[0]])

    return sorted(idx, key=lambda i: (-level(i), i))


class ReadDomain:
    """The reached set cut down to the states some deploy's image reads.

    An image reads ``R`` only through ``R|src`` conjoined with the move's
    guard ``gpre``: backward ``pre_cube & gpre & R|post``, forward
    ``(R|pre & gpre) & post_cube``. With ``Q`` the union over the deploys'
    moves of ``P|pre & src_cube`` (src: post backward, pre forward; ``P``
    the guard's PB conjuncts, so ``P|pre`` contains ``gpre``), ``Q|src``
    contains ``gpre``, so ``(R & Q)|src & gpre = R|src & gpre``:
    every deploy image of ``R & Q`` *is* its image of ``R``. On pebbling
    ``Q`` is about "at most k pebbles", and ``R & Q`` shares the capacity
    sum's counting structure, so the conjunctions with ``gpre`` get cheap,
    though ``R & Q`` has about as many nodes as ``R`` (measured in
    ``benchmarks/results/bdd_alternation.md``).

    ``of(R)`` caches ``R & Q`` for the last ``R`` it was asked about, so a
    stretch of images that grow nothing pays one conjunction."""

    def __init__(self, sym, forward: bool) -> None:
        bdd = sym.bdd
        c = sym.system.circuit
        q = bdd.false
        self.members: set[int] = set()
        for i, a in enumerate(sym.system.actions):
            if a.op != DEPLOY:
                continue
            self.members.add(i)
            # the guard's PB conjuncts only: a superset of the guard, so Q
            # still covers it, and without the affinity literals the union
            # stays a plain count ("1 to k pebbles"; with them R & Q grew
            # slower than R on pyramids)
            node = c.node(a.guard)
            kids = node.children if node.kind == AND else (a.guard,)
            pb = bdd.true
            for ch in kids:
                if c.node(ch).kind == PB:
                    pb &= sym.lower(ch)
            for pre, post, _, pre_cube, post_cube in sym.moves[i]:
                q |= bdd.let(pre, pb) & (pre_cube if forward else post_cube)
        self.q = q
        self._src = None
        self._out = None

    def of(self, r):
        if self._src is None or self._src != r:
            self._src, self._out = r, r & self.q
        return self._out


def close_set(bdd, f, names: set[str], upward: bool):
    """``f`` closed upward (backward runs) or downward (forward) in the
    variables ``names`` at once: the result of a whole closure pass, by one
    memoised walk of ``f``'s DAG instead of one image per variable. With
    ``lo``/``hi`` the closed cofactors at a node's variable ``x``: upward,
    a state with ``x`` = 1 is in the closure when it is with ``x`` dropped
    or kept, so the node becomes ``ite(x, hi | lo, lo)``; downward
    ``ite(x, hi, hi | lo)``; other variables keep ``ite(x, hi, lo)``.
    (Variables not on a path: ``f`` does not read them, nor does its
    closure.)"""
    memo: dict[int, object] = {}
    true, false = bdd.true, bdd.false

    def walk(u):
        if u == true or u == false:
            return u
        key = int(u)
        out = memo.get(key)
        if out is not None:
            return out
        x = u.var
        lo, hi = (~u.low, ~u.high) if u.negated else (u.low, u.high)
        lo, hi = walk(lo), walk(hi)
        if x in names:
            if upward:
                hi = hi | lo
            else:
                lo = hi | lo
        if lo == hi:
            out = lo
        elif hi.negated:  # CUDD's canonical form: the then-edge is never complemented
            out = ~bdd.find_or_add(x, ~lo, ~hi)
        else:
            out = bdd.find_or_add(x, lo, hi)
        memo[key] = out
        return out

    return walk(f)
