"""Lowering a ``TransitionSystem`` to CNF: frame copies, Tseitin, PB via BDDs.

Variables come from one python-sat ``IDPool`` keyed by meaning, so a model
decodes without bookkeeping:

- ``("present", t, n, step)`` / ``("count", t, n, j, step)``: the circuit
  variable's name plus the step (any hashable: ``0, 1, ...`` for states,
  ``("mid", k)`` for the state after the deletions of BMC step k);
- ``("gate", node, step)``: Tseitin output of a circuit node at a step;
- ``("pb", node, i, lo, step)``: a node of the BDD of a PB comparison;
- ``("act", i, step)``: the selector of action ``i`` on the step *into*
  ``step``; ``("move", i, j, step)`` the move it takes (counters only);
- ``("true",)``: the constant.

Pseudo-Boolean comparisons
    ``PB`` nodes are lowered through a reduced ordered BDD of the comparison
    (Eén & Sörensson 2006; interval memoisation of Abío et al. 2012): terms
    are normalised to positive weights over literals, sorted by decreasing
    weight, and ``f(i, r) = ite(l_i, f(i+1, r - w_i), f(i+1, r))`` is built
    once per *interval* of residuals ``r`` with equal function. Each BDD node
    is one variable with its full (two-way) ``ite`` definition, so the node
    may sit under any polarity (guards, NOT, targets) and unit propagation is
    arc-consistent. Why not ``pysat.pb.PBEnc``: it needs the ``pindakaas``
    extension (absent from the stock install), and it encodes a *constraint*,
    not a reified comparison, while our guards need ``sel -> PB`` per step and
    the circuit may negate a PB node. Measured (clauses): the Appendix C
    capacity guard, 10 unit weights ``<= 3``: ours 28 BDD nodes / 168 clauses
    (two-way, usable under any polarity), PBEnc 56 and a pysat totalizer 80
    (one direction only); 28 terms ``<= 6``: 154 / 924 vs 294 / 515; twelve
    millicore requests in {100..2000} ``<= 4000``: 32 nodes / 192 clauses vs
    PBEnc 202. The size overhead is the price of reification and is
    irrelevant next to the per-query Python cost of IC3. ``pb_bdd`` is shared
    with the AIGER exporter, which turns each node into a multiplexer.

Transitions
    ``single_step`` encodes ``s --a--> t`` for exactly one action of the
    system (or none, with ``stutter``): an at-most-one selector (sequential
    counter), ``sel -> guard(s)``, the action's move (``pre`` at s, ``post``
    at t) and frame axioms "a variable changes only if a selector of an
    action writing it is on". ``bmc_step`` is the BMC step of ``BmcEngine``:
    first any set of deletions (every presence bit may drop, every counter
    may decrease, ``present`` follows the counter), then at most one deploy
    whose guard is read *after* the deletions, so the step is a sequence of
    real transitions with the deletions first.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Optional, Sequence

from pysat.card import CardEnc, EncType
from pysat.formula import IDPool

from symreach.encodings.circuit import AND, CONST, NOT, OR, PB, VAR, Circuit
from symreach.encodings.system import Action, TransitionSystem
from symreach.result import DEPLOY

Step = Hashable

# ---- PB comparisons as BDDs (shared with the AIGER exporter) --------------------

PB_FALSE, PB_TRUE = -1, -2  # constant children of ``pb_bdd`` nodes


def pb_bdd(weights: Sequence[int], bound: int):
    """The ROBDD of ``sum(weights[i] * x_i) <= bound`` for non-negative weights.

    Returns ``(root, nodes)`` where ``root`` is ``PB_TRUE`` / ``PB_FALSE`` or an
    index into ``nodes``; ``nodes[k] = (i, hi, lo)`` means ``ite(x_i, hi, lo)``
    with children constants or smaller indices (children first). Variable order is the
    order of ``weights`` (sort by decreasing weight before calling).
    """
    n = len(weights)
    rest = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        rest[i] = rest[i + 1] + weights[i]
    memo: list[list[tuple[float, float, int]]] = [[] for _ in range(n + 1)]
    nodes: list[tuple[int, int, int]] = []
    unique: dict[tuple[int, int, int], int] = {}
    inf = float("inf")

    def build(i: int, r: int):
        # returns (result, lo, hi): result valid for every residual in [lo, hi]
        if r < 0:
            return PB_FALSE, -inf, -1
        if r >= rest[i]:
            return PB_TRUE, rest[i], inf
        for lo, hi, res in memo[i]:
            if lo <= r <= hi:
                return res, lo, hi
        w = weights[i]
        t, lo1, hi1 = build(i + 1, r - w)
        f, lo0, hi0 = build(i + 1, r)
        lo, hi = max(lo1 + w, lo0), min(hi1 + w, hi0)
        if t == f:
            res = t
        else:
            key = (i, t, f)
            res = unique.get(key)
            if res is None:
                res = len(nodes)
                nodes.append(key)
                unique[key] = res
        memo[i].append((lo, hi, res))
        return res, lo, hi

    root, _, _ = build(0, bound)
    return root, nodes


def normalise_pb(children: Sequence[int], weights: Sequence[int], bound: int):
    """``sum w*x <= bound`` -> positive weights over (var, polarity), decreasing weight."""
    terms = []
    for x, w in zip(children, weights):
        if w < 0:
            terms.append((-w, x, False))  # w*x = w - |w|*(not x)
            bound -= w
        else:
            terms.append((w, x, True))
    terms.sort(key=lambda t: (-t[0], t[1]))
    return terms, bound


# ---- the lowering ---------------------------------------------------------------

class CnfLowering:
    """Lowers circuit nodes and transition steps of one system to clauses.

    Clauses are appended to ``self.clauses`` (or passed to ``sink`` when
    given); ``flush()`` returns and clears the pending list.
    """

    def __init__(self, system: TransitionSystem, pool: Optional[IDPool] = None,
                 sink: Optional[Callable[[list[int]], None]] = None) -> None:
        self.system = system
        self.circuit: Circuit = system.circuit
        self.pool = pool if pool is not None else IDPool()
        self.clauses: list[list[int]] = []
        self._sink = sink
        self._lit: dict[tuple[int, Step], int] = {}
        self._true = self.pool.id(("true",))
        self._emit([self._true])
        self._writers: dict[int, list[int]] = {}
        for i, a in enumerate(system.actions):
            for v in a.writes:
                self._writers.setdefault(v, []).append(i)

    # ---- plumbing ---------------------------------------------------------------
    def _emit(self, clause: list[int]) -> None:
        if self._sink is not None:
            self._sink(clause)
        else:
            self.clauses.append(clause)

    def clause(self, lits: Iterable[int]) -> None:
        """Add a clause, simplifying the constant literal away."""
        t = self._true
        out = []
        for lit in lits:
            if lit == t:
                return
            if lit != -t:
                out.append(lit)
        self._emit(out)

    def flush(self) -> list[list[int]]:
        out, self.clauses = self.clauses, []
        return out

    @property
    def true(self) -> int:
        return self._true

    # ---- variables ----------------------------------------------------------------
    def var(self, v: int, step: Step) -> int:
        """The SAT variable of state variable ``v`` (circuit id) at ``step``."""
        return self.pool.id(self.circuit.var_name(v) + (step,))

    def initial_units(self, step: Step = 0) -> list[int]:
        return [self.var(v, step) if b else -self.var(v, step) for v, b in self.system.initial.items()]

    # ---- Tseitin --------------------------------------------------------------------
    def lit(self, node: int, step: Step) -> int:
        """A literal equivalent to circuit node ``node`` at ``step``."""
        key = (node, step)
        got = self._lit.get(key)
        if got is not None:
            return got
        c = self.circuit
        for i in c.fresh_below(node, lambda j: (j, step) in self._lit):
            nd = c.node(i)
            k = nd.kind
            if k == CONST:
                out = self._true if i else -self._true
            elif k == VAR:
                out = self.var(i, step)
            elif k == NOT:
                out = -self._lit[(nd.children[0], step)]
            elif k == AND or k == OR:
                kids = [self._lit[(ch, step)] for ch in nd.children]
                g = self.pool.id(("gate", i, step))
                if k == AND:
                    for x in kids:
                        self.clause([-g, x])
                    self.clause([g] + [-x for x in kids])
                else:
                    for x in kids:
                        self.clause([g, -x])
                    self.clause([-g] + kids)
                out = g
            elif k == PB:
                out = self._pb(i, nd, step)
            else:  # pragma: no cover
                raise ValueError(f"unknown node kind {k}")
            self._lit[(i, step)] = out
        return self._lit[key]

    def _pb(self, i: int, nd, step: Step) -> int:
        terms, bound = normalise_pb(nd.children, nd.weights, nd.bound)
        root, nodes = pb_bdd([w for w, _, _ in terms], bound)
        lits: list[int] = []

        def ref(x: int) -> int:
            if x == PB_TRUE:
                return self._true
            if x == PB_FALSE:
                return -self._true
            return lits[x]
        for k, (j, hi, lo) in enumerate(nodes):
            _, v, pos = terms[j]
            x = self.var(v, step)
            x = x if pos else -x
            d = self.pool.id(("pb", i, k, step))
            h, l_ = ref(hi), ref(lo)
            # d <-> ite(x, h, l); hi implies lo (fewer resources left), so the
            # two monotone clauses h -> d and -l -> -d are added for propagation.
            self.clause([-x, -h, d])
            self.clause([x, -l_, d])
            self.clause([-x, h, -d])
            self.clause([x, l_, -d])
            self.clause([-h, d])
            self.clause([l_, -d])
            lits.append(d)
        return ref(root)

    # ---- transitions ------------------------------------------------------------------
    def selector(self, i: int, step: Step) -> int:
        return self.pool.id(("act", i, step))

    def _action(self, i: int, a: Action, s: Step, t: Step) -> int:
        sel = self.selector(i, t)
        self.clause([-sel, self.lit(a.guard, s)])
        if len(a.moves) == 1:
            m = a.moves[0]
            for v, b in m.pre:
                self.clause([-sel, self.var(v, s) if b else -self.var(v, s)])
            for v, b in m.post:
                self.clause([-sel, self.var(v, t) if b else -self.var(v, t)])
        else:
            mvs = []
            for j, m in enumerate(a.moves):
                mv = self.pool.id(("move", i, j, t))
                mvs.append(mv)
                self.clause([-mv, sel])
                for v, b in m.pre:
                    self.clause([-mv, self.var(v, s) if b else -self.var(v, s)])
                for v, b in m.post:
                    self.clause([-mv, self.var(v, t) if b else -self.var(v, t)])
            self.clause([-sel] + mvs)
        return sel

    def _at_most_one(self, sels: list[int]) -> None:
        if len(sels) <= 1:
            return
        if len(sels) <= 6:
            for x in range(len(sels)):
                for y in range(x + 1, len(sels)):
                    self.clause([-sels[x], -sels[y]])
            return
        enc = CardEnc.atmost(lits=sels, bound=1, vpool=self.pool, encoding=EncType.seqcounter)
        for cl in enc.clauses:
            self.clause(cl)

    def _frame(self, s: Step, t: Step, sel_of: dict[int, int]) -> None:
        for v in self.system.state_vars:
            x, y = self.var(v, s), self.var(v, t)
            ws = [sel_of[i] for i in self._writers.get(v, ()) if i in sel_of]
            self.clause([-x, y] + ws)
            self.clause([x, -y] + ws)

    def single_step(self, s: Step, t: Step, stutter: bool = True,
                    actions: Optional[Sequence[int]] = None) -> dict[int, int]:
        """``s -> t`` by at most one (exactly one unless ``stutter``) of ``actions``
        (default: all). Returns action index -> selector literal."""
        idx = range(len(self.system.actions)) if actions is None else actions
        sel_of = self.set_step(s, t, idx)
        sels = list(sel_of.values())
        self._at_most_one(sels)
        if not stutter:
            self.clause(sels)
        return sel_of

    def set_step(self, s: Step, t: Step, actions: Iterable[int]) -> dict[int, int]:
        """``s -> t`` by any set of ``actions`` at once: each selected action's guard
        and pre cube read at ``s``, its post at ``t``, frame axioms for the rest.
        Sound only for actions writing disjoint variables (deploys of distinct
        pairs); callers restrict which sets may be selected. Returns index -> selector."""
        sel_of = {i: self._action(i, self.system.actions[i], s, t) for i in actions}
        self._frame(s, t, sel_of)
        return sel_of

    # ---- the BMC step: deletions, then one deployment ----------------------------------
    def deletions(self, s: Step, m: Step) -> None:
        """``m`` is ``s`` after any set of deletions (none where the system's
        ``deletion_guard`` is false at ``s``)."""
        guard = self.system.deletion_guard
        if guard != Circuit.TRUE:
            g = self.lit(guard, s)
            for v in self.system.state_vars:
                self.clause([g, -self.var(v, m), self.var(v, s)])
                self.clause([g, self.var(v, m), -self.var(v, s)])
        for pv in self.system.pairs.values():
            if not pv.counted:
                self.clause([-self.var(pv.present, m), self.var(pv.present, s)])
                continue
            bits_s = [self.var(b, s) for b in pv.count_bits]
            bits_m = [self.var(b, m) for b in pv.count_bits]
            self._le(bits_m, bits_s)
            pm = self.var(pv.present, m)
            self.clause([-pm] + bits_m)
            for b in bits_m:
                self.clause([pm, -b])

    def _le(self, a: list[int], b: list[int]) -> None:
        """value(a) <= value(b) for two LSB-first bit vectors (MSB-first chain)."""
        # eq_j: the bits above j agree so far; le holds if at the first difference a=0, b=1.
        eq = self._true
        for j in range(len(a) - 1, -1, -1):
            x, y = a[j], b[j]
            # under eq, not (x and not y)
            self.clause([-eq, -x, y])
            if j:
                e = self.pool.id(("le-eq", x, y))
                # e <- eq and x == y  (only this direction is needed: e used as a premise)
                self.clause([-e, eq])
                self.clause([-e, -x, y])
                self.clause([-e, x, -y])
                self.clause([e, -eq, x, y])
                self.clause([e, -eq, -x, -y])
                eq = e

    def bmc_step(self, k: int) -> tuple[dict[int, int], Step]:
        """State ``k`` -> mid ``("mid", k+1)`` (deletions) -> state ``k+1`` (one deploy
        or none). Returns (deploy action index -> selector, the mid step)."""
        mid = ("mid", k + 1)
        self.deletions(k, mid)
        deploys = [i for i, a in enumerate(self.system.actions) if a.op == DEPLOY]
        return self.single_step(mid, k + 1, stutter=True, actions=deploys), mid

    def macro_step(self, s: Step, mid: Step, t: Step) -> dict[int, int]:
        """IC3's transition relation: ``s`` -> ``mid`` by any set of deletions, then
        ``mid`` -> ``t`` by at most one deployment (guard read at ``mid``). It
        contains every single deploy (no deletion) and every single delete (no
        deploy), so an invariant inductive for it is inductive for the actions.
        Returns deploy action index -> selector (at ``t``)."""
        self.deletions(s, mid)
        deploys = [i for i, a in enumerate(self.system.actions) if a.op == DEPLOY]
        return self.single_step(mid, t, stutter=True, actions=deploys)

    # ---- decoding ---------------------------------------------------------------------
    def state_of(self, model: set[int] | Callable[[int], bool], step: Step) -> dict[int, bool]:
        get = model.__contains__ if isinstance(model, (set, frozenset)) else model
        return {v: bool(get(self.var(v, step))) for v in self.system.state_vars}
