"""BDD side of a ``TransitionSystem``: circuit lowering and per-action images.

``SymbolicSystem`` declares one BDD variable per state variable in the static
order of ``TransitionSystem.state_vars``, lowers guards and the target
(``PB`` nodes by the memoised recursion ``f(i, r) = ite(x_i, f(i+1, r-w_i),
f(i+1, r))`` over the terms in level order), and precomputes, for every move
``m`` of every action, the guard cofactored at ``m.pre``. Images need no
primed variables because every action writes only its own pair::

    post_m(S) = (S|pre  &  G|pre)  &  post_cube      (forward)
    pre_m(S)  = pre_cube  &  G|pre  &  S|post        (backward)

The guard is read in the pre-state: it is cofactored at ``pre`` before the
written variables are overwritten by ``post``.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

from symreach.encodings.circuit import AND, CONST, NOT, OR, PB, VAR, Circuit
from symreach.encodings.system import Action, TransitionSystem
from symreach.run import RunContext
from symreach.solvers.bdd_sweep_order import poll
from symreach.solvers.cudd_memory import cap_manager

try:  # pragma: no cover - depends on the installed wheel
    import dd.cudd as _bdd_mod

    BACKEND = "cudd"
except ImportError:  # pragma: no cover
    import dd.autoref as _bdd_mod

    BACKEND = "autoref"


# a manager for at most this many state variables starts with CUDD's memory target at
# SMALL_MANAGER_BYTES instead of dd's 1 GiB: its start-up then costs about 1 ms of CPU
# instead of 6-12 (the small pebblings' whole BDD run is 15-30 ms); the target bounds
# only how far CUDD grows its cache and unique tables before collecting (about 400,000
# nodes), and BDDs over so few variables stay far below it (tree h = 4: 31 variables,
# 14,000 nodes at the peak); larger systems keep dd's default
SMALL_MANAGER_VARS = 32
SMALL_MANAGER_BYTES = 64 * 1024 * 1024


def new_manager(state_vars: Optional[int] = None):
    """A manager (``state_vars``: how many variables it will hold, when known)."""
    small = BACKEND == "cudd" and state_vars is not None and state_vars <= SMALL_MANAGER_VARS
    bdd = _bdd_mod.BDD(memory_estimate=SMALL_MANAGER_BYTES) if small else _bdd_mod.BDD()
    bdd.configure(reordering=False)
    if BACKEND == "cudd":
        cap_manager(bdd)
    return bdd


def reorder(bdd) -> None:
    if BACKEND == "cudd":
        _bdd_mod.reorder(bdd)
    else:  # pragma: no cover
        bdd.reorder()


def manager_nodes(bdd) -> int:
    """The manager's node count, dead nodes included: a counter read.
    (``len(bdd)`` is ``Cudd_CheckZeroRef``, a walk of the whole unique table,
    linear in the nodes: on large pyramids every 32nd image cost as much as
    a sweep.)"""
    if BACKEND != "cudd":  # pragma: no cover - the fallback backend
        return len(bdd)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return int(bdd.statistics()["n_nodes"])


def bdd_var_name(name) -> str:
    """A BDD variable name for a circuit variable name (tuples joined by ':')."""
    if isinstance(name, tuple):
        return ":".join(str(x) for x in name)
    return str(name)


class SymbolicSystem:
    """BDDs of one transition system (see the module docstring)."""

    def __init__(self, system: TransitionSystem, bdd=None, run: RunContext | None = None,
                 order: Sequence[int] | None = None) -> None:
        """``order``: the BDD variable order (a permutation of
        ``system.state_vars``, top first); default ``system.state_vars``."""
        self.system = system
        self.bdd = bdd if bdd is not None else new_manager(len(system.state_vars))
        c = system.circuit
        self.names = {v: bdd_var_name(c.var_name(v)) for v in system.state_vars}
        if len(set(self.names.values())) != len(self.names):
            raise ValueError("state variable names collide")
        order = tuple(system.state_vars) if order is None else tuple(order)
        if sorted(order) != sorted(system.state_vars):
            raise ValueError("order is not a permutation of the state variables")
        for v in order:
            self.bdd.declare(self.names[v])
        self._memo: dict[int, Any] = {}
        t0 = time.perf_counter()
        self.guards = []
        for a in system.actions:
            self.guards.append(self.lower(a.guard))
            if run is not None and run.past():
                raise TimeoutError("deadline reached while building guard BDDs")
        self.target = self.lower(system.target)
        self.consistent = self._consistent()
        self.initial = self.bdd.cube({self.names[v]: b for v, b in system.initial.items()})
        self.moves: list[list[tuple[dict, dict, Any, Any, Any]]] = []
        for a, g in zip(system.actions, self.guards):
            rows = []
            for m in a.moves:
                pre = {self.names[v]: b for v, b in m.pre}
                post = {self.names[v]: b for v, b in m.post}
                gpre = self.bdd.let(pre, g)
                if gpre == self.bdd.false:
                    continue
                rows.append((pre, post, gpre, self.bdd.cube(pre), self.bdd.cube(post)))
            self.moves.append(rows)
        self._memo.clear()
        self.build_time_s = time.perf_counter() - t0
        self.top_level = [self._top_level(i) for i in range(len(system.actions))]

    # ---- lowering -----------------------------------------------------------
    def lower(self, root: int):
        c, bdd, memo = self.system.circuit, self.bdd, self._memo
        for i in c.topological([root]):
            if i in memo:
                continue
            node = c.node(i)
            k = node.kind
            if k == CONST:
                u = bdd.true if i == Circuit.TRUE else bdd.false
            elif k == VAR:
                u = bdd.var(self.names[i])
            elif k == NOT:
                u = ~memo[node.children[0]]
            elif k == AND:
                u = bdd.true
                for ch in node.children:
                    u &= memo[ch]
                    if u == bdd.false:
                        break
            elif k == OR:
                u = bdd.false
                for ch in node.children:
                    u |= memo[ch]
                    if u == bdd.true:
                        break
            elif k == PB:
                u = self._pb(node.children, node.weights, node.bound)
            else:  # pragma: no cover
                raise ValueError(k)
            memo[i] = u
        return memo[root]

    def _pb(self, children, weights, bound):
        """``sum w_i x_i <= bound`` by ``f(i, r) = ite(x_i, f(i+1, r-w_i), f(i+1, r))``,
        terms in level order, memoised on (i, r), cut by the remaining min/max sums."""
        bdd = self.bdd
        terms = sorted(zip(children, weights), key=lambda cw: bdd.level_of_var(self.names[cw[0]]))
        n = len(terms)
        lo_rest = [0] * (n + 1)
        hi_rest = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            w = terms[i][1]
            lo_rest[i] = lo_rest[i + 1] + min(w, 0)
            hi_rest[i] = hi_rest[i + 1] + max(w, 0)
        vars_ = [bdd.var(self.names[v]) for v, _ in terms]
        ws = [w for _, w in terms]
        # the (i, r) cells reachable from (0, bound), level by level (iterative:
        # spread sums over many nodes exceed Python's recursion limit)
        cells: list[set[int]] = [set() for _ in range(n + 1)]
        cells[0].add(bound)
        for i in range(n):
            for r in cells[i]:
                if hi_rest[i] <= r or lo_rest[i] > r:
                    continue
                cells[i + 1].add(r - ws[i])
                cells[i + 1].add(r)
        below: dict[int, Any] = {}
        for i in range(n, -1, -1):
            here: dict[int, Any] = {}
            for r in cells[i]:
                if hi_rest[i] <= r:
                    here[r] = bdd.true
                elif lo_rest[i] > r:
                    here[r] = bdd.false
                else:
                    here[r] = bdd.ite(vars_[i], below[r - ws[i]], below[r])
            below = here
        return below[bound]

    def _consistent(self):
        """States where every counter is within its bound and present == (count != 0)."""
        bdd = self.bdd
        out = bdd.true
        for pv in self.system.pairs.values():
            if not pv.counted:
                continue
            ok = bdd.false
            for v in range(pv.bound + 1):
                cube = {self.names[pv.present]: v > 0}
                cube.update({self.names[b]: bool(v >> j & 1) for j, b in enumerate(pv.count_bits)})
                ok |= bdd.cube(cube)
            out &= ok
        return out

    def _top_level(self, i: int) -> int:
        a: Action = self.system.actions[i]
        sup = set(self.bdd.support(self.guards[i])) | {self.names[v] for v in a.writes}
        return min(self.bdd.level_of_var(x) for x in sup)

    # ---- images -------------------------------------------------------------
    def post(self, i: int, s):
        """Successors of the states ``s`` under action ``i``."""
        bdd = self.bdd
        out = bdd.false
        for pre, _, gpre, _, post_cube in self.moves[i]:
            u = bdd.let(pre, s)
            if u == bdd.false:
                continue
            u &= gpre
            if u != bdd.false:
                out |= u & post_cube
        return out

    def pre(self, i: int, s):
        """Predecessors of the states ``s`` under action ``i``."""
        bdd = self.bdd
        out = bdd.false
        for _, post, gpre, pre_cube, _ in self.moves[i]:
            u = bdd.let(post, s)
            if u == bdd.false:
                continue
            u &= gpre
            if u != bdd.false:
                out |= u & pre_cube
        return out

    def new_states(self, i: int, r, forward: bool, test: bool = True):
        """``image(i, r) & ~r`` without building the image: per move,
        ``D = r|src & ~r|dst`` (the states of ``r`` whose move leads out of
        ``r``) is conjoined with the guard, so the guard (whose capacity sum
        reads every pair of a node) meets the small set D instead of the
        whole ``r``. ``test``: first ask CUDD's ``Cudd_bddAndAbstract`` with
        every variable quantified whether ``G|pre & D`` is satisfiable at
        all; it stops at the first satisfying path and builds no node, so an
        image that adds nothing (the closing cycle of a chaining run) costs
        a walk instead of a conjunction. Measured slower than the whole
        image on pyramids: their backward sets are not upward closed, so D
        is about as large as r."""
        bdd = self.bdd
        out = bdd.false
        for pre, post, gpre, pre_cube, post_cube in self.moves[i]:
            src, dst, cube = (pre, post, post_cube) if forward else (post, pre, pre_cube)
            d = bdd.let(src, r)
            if d == bdd.false:
                continue
            d &= ~bdd.let(dst, r)
            if d == bdd.false:
                continue
            if test and not self.meets(gpre, d):
                continue
            u = d & gpre
            if u != bdd.false:
                out |= u & cube
        return out

    def meets(self, u, v) -> bool:
        """``u & v`` is satisfiable, decided without building ``u & v``
        (``dd.cudd.and_exists`` over every variable; other backends build it)."""
        if BACKEND != "cudd":  # pragma: no cover - the fallback backend
            return (u & v) != self.bdd.false
        return _bdd_mod.and_exists(u, v, self._all_names) == self.bdd.true

    @property
    def _all_names(self) -> list[str]:
        names = getattr(self, "_names_cache", None)
        if names is None:
            names = self._names_cache = list(self.bdd.vars)
        return names

    def state_of(self, u) -> dict[int, bool]:
        """One full state (circuit variable ids) in the non-empty set ``u``."""
        names = [self.names[v] for v in self.system.state_vars]
        assignment = self.bdd.pick(u, care_vars=names)
        return {v: bool(assignment[self.names[v]]) for v in self.system.state_vars}

    def cube_of(self, state: dict[int, bool]):
        return self.bdd.cube({self.names[v]: b for v, b in state.items()})


def force_order(system: TransitionSystem, iterations: int = 40, run=None) -> list[int]:
    """A static BDD variable order by the FORCE heuristic (Aloul, Markov,
    Sakallah, GLSVLSI 2003) over the "guard reads" hypergraph.

    Units are the modelled pairs (a pair's presence bit and counter bits stay
    together, in ``state_vars`` order). Every conjunct of a deploy guard gives
    a hyperedge {written pair} + {pairs the conjunct reads}, the target one
    more; conjuncts reading more than ``max(8, sqrt(#pairs))`` pairs (hubs,
    e.g. "no ready pod anywhere", a capacity sum over the whole node) are
    left out: they pull every unit towards the middle. Each iteration moves
    every unit to the mean centre of gravity of its hyperedges and re-ranks;
    the order with the smallest total hyperedge span is kept. Starts from
    ``state_vars``; deterministic. Nothing here is specific to one reduction;
    on the Appendix B nets it groups each place's token types with the
    control types of the transitions around it. Polls ``run`` (``TimeoutError``)."""
    import math

    c = system.circuit
    unit_of: dict[int, int] = {}
    units: list[list[int]] = []
    for pv in system.pairs.values():
        for v in (pv.present,) + pv.count_bits:
            unit_of[v] = len(units)
        units.append([pv.present, *pv.count_bits])
    pos0 = {v: k for k, v in enumerate(system.state_vars)}
    n = len(units)
    if n <= 2:
        return list(system.state_vars)
    cap = max(8, math.isqrt(n))
    supp_memo: dict[int, frozenset[int]] = {}

    def supp(node: int) -> frozenset[int]:
        u = supp_memo.get(node)
        if u is None:
            u = supp_memo[node] = frozenset(unit_of[v] for v in c.support(node) if v in unit_of)
        return u

    edges: set[tuple[int, ...]] = set()
    for a in system.actions:
        if a.op != "deploy" or a.guard <= 1:
            continue
        poll(run, "choosing the BDD variable order")
        me = unit_of[a.writes[0]]
        node = c.node(a.guard)
        for conj in (node.children if node.kind == AND else (a.guard,)):
            s = supp(conj)
            if 0 < len(s) <= cap:
                edges.add(tuple(sorted(s | {me})))
    tgt = supp(system.target)
    if 1 < len(tgt) <= cap:
        edges.add(tuple(sorted(tgt)))
    edge_list = sorted(e for e in edges if len(e) > 1)
    if not edge_list:
        return list(system.state_vars)
    incident: list[list[int]] = [[] for _ in range(n)]
    for k, e in enumerate(edge_list):
        for u in e:
            incident[u].append(k)
    rank = sorted(range(n), key=lambda u: pos0[units[u][0]])
    pos = [0.0] * n
    for r, u in enumerate(rank):
        pos[u] = float(r)

    def span(p) -> float:
        return sum(max(p[u] for u in e) - min(p[u] for u in e) for e in edge_list)

    best, best_span = list(rank), span(pos)
    for _ in range(iterations):
        poll(run, "choosing the BDD variable order")
        cog = [sum(pos[u] for u in e) / len(e) for e in edge_list]
        new = [sum(cog[k] for k in incident[u]) / len(incident[u]) if incident[u] else pos[u]
               for u in range(n)]
        rank = sorted(range(n), key=lambda u: (new[u], pos[u], u))
        for r, u in enumerate(rank):
            pos[u] = float(r)
        sp = span(pos)
        if sp < best_span:
            best, best_span = list(rank), sp
        elif sp == best_span:
            break
    return [v for u in best for v in units[u]]
