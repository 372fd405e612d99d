"""Counter abstraction: interchangeable nodes become counts of nodes per local state.

A pool of ``N`` identical nodes costs ``N x |cone|`` presence bits in the
concrete encoding (``compile.py``). Here every class of interchangeable nodes
(``symmetry.node_classes`` over the cone of influence, the query's nodes
fixed, so they are classes of one) is a *group* ``g``, and the state is, per
group and per *local state* ``s`` (the set of cone types present on a node,
saturated as in SPEC 2.2), the number ``c(g, s)`` of nodes of ``g`` in
local state ``s``: a binary counter of ``bit_length(|g|)`` bits plus a
"non-zero" bit. A class of one is a group too (its counters are one-hot
bits).

Supported subset (anything else falls back to ``compile.py``, and the
reason is reported in the result's stats as ``counters``): no pair counted
by a spread constraint or a count target (``Preprocessed.counted`` empty;
all pairs saturated), at most ``MAX_LOCAL_STATES`` local states per group
and ``MAX_COUNTERS`` counters in all, and every domain a guard reads
contains a group wholly, or not at all, or (a hostname-like domain) only
the node that moves.

Transitions. ``deploy(t)`` in group ``g`` from ``s`` (``t`` not in ``s``) to
``s + {t}`` moves one node: ``c(g, s) -= 1``, ``c(g, s + {t}) += 1``, guarded
by the *local* part of ``Hard`` (static filters, creatability, capacity,
host ports), which depends on ``s`` only and is evaluated once with
``semantics`` on a node holding exactly ``s``, and by the *global* part
(affinity, anti-affinity, existing pods' anti-affinity), a circuit over the
non-zero bits: ``present(S, D)`` is the OR over the groups inside ``D`` of
the non-zero bits of their local states meeting ``S`` (or the constant
``s meets S`` when ``D`` is the moving node alone). ``delete(t)`` moves a
node from ``s`` to ``s - {t}``, unguarded. The move's enabledness
``c(g, s) >= 1`` is in its pre cubes (see "Moves").

*Theorem (exactness).* Let ``alpha`` map a saturated configuration of the
cone to the counts ``c(g, s) = |{n in g : loc(n) = s}|``. Then
``R = {(sigma, alpha(sigma))}`` is a bisimulation between the concrete
saturated system (the one ``compile.py`` encodes) and the counter system,
and the target (which reads only the query's nodes, each a group of one,
through ``c(g, s)`` of its own group) has the same value on related states.
So the target is coverable in one iff in the other.
*Proof.* For ``n`` in group ``g`` with ``loc(n) = s``, ``Hard(t, n, sigma)``
reads (``semantics.node_failure``): the static row of ``n``, capacity and
ports of the pods on ``n`` (functions of ``s``), and presence tests
``present(S, D)`` over domains ``D_tau(n)``, the keyed nodes of the
kubernetes bootstrap, or all nodes. By the class definition
(``symmetry``) every node of a group has the same static rows on the cone
and, for every topology the cone uses, the same domain, or no key, or a
singleton domain; so ``D`` contains each other group wholly or not at all,
and contains of ``g`` all of it, none of it, or ``n`` alone. Then
``present(S, D)`` is true in ``sigma`` iff some group ``h`` inside ``D``
has a node whose local state meets ``S`` (iff some ``c(h, s') > 0`` with
``s'`` meeting ``S``), or ``D`` is ``{n}`` and ``s`` meets ``S``: a
function of ``alpha(sigma)`` and ``s`` only, which is what the compiled
guard computes. (Forth) a concrete step ``(t, n)`` from ``sigma`` is
enabled iff the counter action ``(t, g, s)`` is enabled at
``alpha(sigma)`` (``c(g, s) >= 1`` because of ``n``), and both change
exactly ``n``'s local state, so the successors are related. (Back) if the
counter action ``(t, g, s)`` is enabled at ``alpha(sigma)``, some ``n`` in
``g`` has ``loc(n) = s``; ``(t, n)`` is enabled in ``sigma`` by the same
equivalence, and its successor is related to the counter successor. The
initial states are related (``alpha`` of the saturated sigma0). QED.
Saturation and the cone of influence are the ones ``compile.py`` relies on
(``preprocess`` steps 1-3); types outside the cone are deleted lazily by
``realize_trace`` exactly as for the concrete system.

Moves. A counter move would need one (pre, post) cube per pair of counter
values (``O(|g|^2)``). Instead the cubes are carry patterns: decrement
"bits ``0..k-1`` = 0, bit ``k`` = 1" becomes "bits ``0..k-1`` = 1, bit ``k``
= 0" (and clears the non-zero bit on the cube that reads exactly 1),
increment the dual: ``O(bits^2)`` cubes per action. Such a move's pre and
post cubes mention the *same* variables (a subset of ``writes``); every
other variable keeps its value. The BDD engine's images (cofactor by the
pre cube, conjoin the post cube) implement exactly that; the SAT encodings
assume full cubes, so only the BDD engine reads a ``CounterSystem``
(``symreach.solvers.bdd``), and BMC/IC3 keep the concrete encoding.

Search. The BDD engine searches a counter system forward only (backward
images from the target range over counter values no group can hold).
Reaching ``c(g, s) = k`` takes ``k`` images of the same action, so a proof
of not-deployable costs about one chaining sweep per node of a pool, while
witnesses usually appear in the first sweeps; ``--counters auto`` therefore
gives the counters ``AUTO_SWEEPS`` sweeps on pools of at least ``MIN_POOL``
nodes and then hands over to ``compile.py`` (``build_system``;
``solvers.bdd``). Moving ``2**j`` nodes at once (guarded by the guard and the
guard with ``s'`` occupied: sound, since the guards read only non-zero bits)
was tried and measured 10-50x slower: the accelerated images build
arithmetic-heavy BDDs.

Witnesses. ``concretize`` turns a counter trace into node steps: a node of
the group in local state ``s`` is picked (the first in name order) and
keeps its identity for the rest of the trace; the result goes through
``realize_trace`` and ``semantics.replay`` like every trace.

Not-deployable. The counter invariant is exported as its list of states
(``invariant_states``) and re-checked by ``symreach.certify.counter_invariant``,
which evaluates guards with ``semantics`` on concrete configurations and
re-derives the groups' interchangeability itself (it shares nothing with
this compiler).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from symreach import semantics
from symreach.encodings.circuit import Circuit
from symreach.encodings.preprocess import Preprocessed
from symreach.encodings.realize import realize_trace
from symreach.encodings.symmetry import node_classes
from symreach.encodings.system import Action, Move, PairVars, TransitionSystem
from symreach.model import KUBERNETES, Instance, Query
from symreach.result import DELETE, DEPLOY, Step

# Local states per group: a node's local state is a subset of the cone types it
# may hold; beyond 64 the one-counter-per-state encoding stops paying.
MAX_LOCAL_STATES = 64
# Counters in all: each carries O(bits^2) move cubes per action.
MAX_COUNTERS = 4096
# ``auto``: try the counter system when some group has at least this many nodes
# (benchmarks/results/counter_pools.md: at 10 nodes per pool the concrete BDD is
# faster, at 50 the counters find witnesses faster) ...
MIN_POOL = 32
# ... for this many forward sweeps (witnesses came in 1 sweep there); proving
# not-deployable takes about one sweep per node of a pool on counters, so past
# the budget the concrete encoding decides.
AUTO_SWEEPS = 4
COUNTER_MODES = ("auto", "on", "off")

LocalState = frozenset[int]


class Unsupported(Exception):
    """The instance is outside the supported subset; the message says why."""


@dataclass(frozen=True)
class Group:
    """A class of interchangeable nodes, its local states and its counters."""

    nodes: tuple[int, ...]
    states: tuple[LocalState, ...]
    initial_state: LocalState
    counters: tuple[Optional[PairVars], ...]  # per state; None: the counter is constant

    @property
    def rep(self) -> int:
        return self.nodes[0]


@dataclass
class CounterSystem(TransitionSystem):
    """A ``TransitionSystem`` over counters; ``moves_of[i]`` = (group, s, s') of action i.

    ``pairs`` holds the counters as pseudo-pairs ``(-1 - g, state index)`` so
    that the engine's consistency constraint (non-zero bit == counter != 0,
    counter <= |group|) covers them."""

    groups: tuple[Group, ...] = ()
    moves_of: tuple[tuple[int, LocalState, LocalState], ...] = ()
    pre: Optional[Preprocessed] = None

    def concretize(self, instance: Instance, query: Query, actions: Sequence[int]
                   ) -> Optional[tuple[Step, ...]]:
        """A real, replayed trace for a counter trace (action indices), or None."""
        state_of: dict[int, LocalState] = {}
        for g in self.groups:
            for n in g.nodes:
                state_of[n] = g.initial_state
        steps = []
        for i in actions:
            gi, s, s2 = self.moves_of[i]
            a = self.actions[i]
            node = next((n for n in self.groups[gi].nodes if state_of[n] == s), None)
            if node is None:
                return None
            state_of[node] = s2
            steps.append((a.op, a.type_index, node))
        assert self.pre is not None
        return realize_trace(instance, self.pre.abstract_initial, steps, query)


Cube = tuple[tuple[int, bool], ...]


def decrement_cubes(pv: PairVars) -> list[tuple[Cube, Cube]]:
    """Carry-pattern cubes of ``counter -= 1`` (pre and post over the same variables);
    they match exactly the values >= 1, once each."""
    if not pv.counted:
        return [(((pv.present, True),), ((pv.present, False),))]
    bits, out = pv.count_bits, []
    for k in range(1, len(bits)):
        low = tuple((bits[j], False) for j in range(k))
        lowp = tuple((bits[j], True) for j in range(k))
        out.append((low + ((bits[k], True),), lowp + ((bits[k], False),)))
    # odd values: from exactly 1 the counter becomes 0 (non-zero bit cleared)
    zeros = tuple((bits[j], False) for j in range(1, len(bits)))
    out.append((((bits[0], True),) + zeros + ((pv.present, True),),
                ((bits[0], False),) + zeros + ((pv.present, False),)))
    for j in range(1, len(bits)):
        mid = tuple((bits[i], False) for i in range(1, j)) + ((bits[j], True),)
        out.append((((bits[0], True),) + mid, ((bits[0], False),) + mid))
    return out


def increment_cubes(pv: PairVars) -> list[tuple[Cube, Cube]]:
    """Carry-pattern cubes of ``counter += 1``; they match every value but all-ones
    (never reached: a counter's width holds its group's size)."""
    if not pv.counted:
        return [(((pv.present, False),), ((pv.present, True),))]
    bits = pv.count_bits
    out = [(((bits[0], False), (pv.present, False)), ((bits[0], True), (pv.present, True))),
           (((bits[0], False), (pv.present, True)), ((bits[0], True), (pv.present, True)))]
    for k in range(1, len(bits)):
        low = tuple((bits[j], True) for j in range(k))
        lowz = tuple((bits[j], False) for j in range(k))
        out.append((low + ((bits[k], False), (pv.present, True)),
                    lowz + ((bits[k], True), (pv.present, True))))
    return out


def move_cubes(src: PairVars, dst: PairVars) -> tuple[Move, ...]:
    """One node from counter ``src`` to counter ``dst``: every pair of carry patterns."""
    return tuple(Move(p1 + p2, q1 + q2) for p1, q1 in decrement_cubes(src)
                 for p2, q2 in increment_cubes(dst))


class _SparseConfig:
    """A configuration with pods only on a few pairs, indexable like ``Config``."""

    def __init__(self, counts: dict[int, int]) -> None:
        self.counts = counts

    def __getitem__(self, i: int) -> int:
        return self.counts.get(i, 0)


def local_ok(inst: Instance, t: int, n: int, s: LocalState) -> bool:
    """The local part of ``Hard(t, n, .)`` on a node holding exactly ``s``:
    static filters, creatability, host ports and capacity, by ``semantics``."""
    if inst.static_block[t][n] is not None or not inst.pod_types[t].creatable:
        return False
    sigma = _SparseConfig({inst.pair(u, n): 1 for u in s})
    if inst.profile == KUBERNETES and not semantics.ports_ok(inst, t, n, sigma):  # type: ignore[arg-type]
        return False
    return not semantics.capacity_failures(inst, t, n, sigma)  # type: ignore[arg-type]


def _local_states(inst: Instance, pre: Preprocessed, rep: int, s0: LocalState) -> list[LocalState]:
    """Local states reachable from ``s0`` by single deploys (local guard only) and deletes."""
    mine = sorted(u for u in pre.cone if (u, rep) in pre.may)
    deployable = [u for u in mine if (u, rep) in pre.deployable_pairs]
    seen = {s0: None}
    work = [s0]
    while work:
        s = work.pop()
        nxt = [s - {u} for u in s] + [s | {u} for u in deployable
                                      if u not in s and local_ok(inst, u, rep, s)]
        for s2 in nxt:
            if s2 not in seen:
                if len(seen) >= MAX_LOCAL_STATES:
                    raise Unsupported(f"node {inst.nodes[rep].name} has more than {MAX_LOCAL_STATES} "
                                      "local states")
                seen[s2] = None
                work.append(s2)
    return sorted(seen, key=lambda s: (len(s), sorted(s)))


def largest_pool(inst: Instance, query: Query, pre: Preprocessed) -> int:
    """The size of the largest class of interchangeable nodes for this query."""
    fixed = {n for _, n in query.pairs()}
    return max((len(c) for c in node_classes(inst, pre.cone, fixed)), default=0)


def compile_counters(inst: Instance, query: Query, pre: Preprocessed) -> CounterSystem:
    """The counter system of the preprocessed instance, or ``Unsupported``."""
    return _CounterCompiler(inst, query, pre).build()


class _CounterCompiler:
    def __init__(self, inst: Instance, query: Query, pre: Preprocessed) -> None:
        self.inst, self.query, self.pre = inst, query, pre
        self.c = Circuit()
        self.kube = inst.profile == KUBERNETES
        self.group_of: list[int] = [0] * len(inst.nodes)
        self.groups: list[Group] = []
        self._overlap: dict[int, tuple[frozenset[int], dict[int, int]]] = {}
        self._memo: dict[tuple, int] = {}
        self._keep: list[frozenset[int]] = []  # node sets whose id() is a memo key stay alive

    # ---- groups and counters ------------------------------------------------
    def _groups(self) -> list[int]:
        inst, pre = self.inst, self.pre
        if pre.counted:
            raise Unsupported("counted pairs (spread constraints or count targets)")
        if any(inst.pod_types[t].spread for t in pre.cone):
            raise Unsupported("spread constraints in the cone")
        fixed = {n for _, n in self.query.pairs()}
        order: list[int] = []
        ncounters = 0
        for cls in node_classes(inst, pre.cone, fixed):
            gi = len(self.groups)
            rep = cls[0]
            s0 = frozenset(u for u in pre.cone if pre.abstract_initial.get((u, rep), 0) > 0)
            for n in cls:
                self.group_of[n] = gi
                if frozenset(u for u in pre.cone if pre.abstract_initial.get((u, n), 0) > 0) != s0:
                    raise Unsupported("a class whose nodes start in different local states")  # pragma: no cover
            states = _local_states(inst, pre, rep, s0)
            counters: list[Optional[PairVars]] = []
            if len(states) == 1:
                counters.append(None)
            else:
                ncounters += len(states)
                if ncounters > MAX_COUNTERS:
                    raise Unsupported(f"more than {MAX_COUNTERS} counters")
                width = len(cls).bit_length()
                for k in range(len(states)):
                    nz = self.c.var(("nonzero", gi, k))
                    order.append(nz)
                    if len(cls) == 1:
                        counters.append(PairVars(nz))
                    else:
                        bits = tuple(self.c.var(("ncount", gi, k, j)) for j in range(width))
                        order.extend(bits)
                        counters.append(PairVars(nz, bits, len(cls)))
            self.groups.append(Group(tuple(cls), tuple(states), s0, tuple(counters)))
        return order

    def nonzero(self, gi: int, k: int) -> int:
        pv = self.groups[gi].counters[k]
        if pv is None:
            return Circuit.TRUE  # a group with one local state: all its nodes are in it
        return pv.present

    # ---- presence -----------------------------------------------------------
    def overlap(self, nodes: frozenset[int]) -> dict[int, int]:
        """Per group, how many of its nodes lie in ``nodes`` (memoised per set)."""
        hit = self._overlap.get(id(nodes))
        if hit is not None and hit[0] is nodes:
            return hit[1]
        out: dict[int, int] = {}
        for m in nodes:
            g = self.group_of[m]
            out[g] = out.get(g, 0) + 1
        self._overlap[id(nodes)] = (nodes, out)
        return out

    def present(self, types: Iterable[int], nodes: frozenset[int], mover: int, s: LocalState) -> int:
        """``present(types, nodes)`` seen from a node of group ``mover`` in state ``s``."""
        types = frozenset(types)
        key = (types, id(nodes), mover, s) if len(nodes) == 1 else (types, id(nodes))
        u = self._memo.get(key)
        if u is not None:
            return u
        parts = []
        for gi, k in self.overlap(nodes).items():
            g = self.groups[gi]
            if k == len(g.nodes):
                parts.extend(self.nonzero(gi, j) for j, st in enumerate(g.states) if st & types)
            elif gi == mover and len(nodes) == 1 and g.rep in nodes:
                parts.append(self.c.const(bool(s & types)))
            else:
                raise Unsupported("a domain that splits a class of interchangeable nodes")
        self._keep.append(nodes)
        u = self._memo[key] = self.c.any_(parts)
        return u

    # ---- guards (the global part of Hard; see the module docstring) ----------
    def guard(self, t: int, gi: int, s: LocalState) -> int:
        c, inst = self.c, self.inst
        rep = self.groups[gi].rep
        allnodes = frozenset(range(len(inst.nodes)))
        pod = inst.pod_types[t]
        parts = []
        terms = pod.affinity
        if terms and not self.kube:
            for term in terms:
                ok = self.present(term.selects, term.topology.domain_nodes(rep), gi, s)
                if t in term.selects:
                    ok = c.or_(ok, c.not_(self.present(term.selects, allnodes, gi, s)))
                parts.append(ok)
        elif terms:
            if any(term.topology.domain_of[rep] is None for term in terms):
                return Circuit.FALSE
            w = frozenset.intersection(*(term.selects for term in terms))
            witness = c.all_(self.present(w, term.topology.domain_nodes(rep), gi, s) for term in terms)
            if t in w:
                keyed = frozenset(m for m in allnodes if any(term.topology.domain_of[m] is not None
                                                             for term in terms))
                witness = c.or_(witness, c.not_(self.present(w, keyed, gi, s)))
            parts.append(witness)
        for term in pod.anti_affinity:
            parts.append(c.not_(self.present(term.selects, term.topology.domain_nodes(rep), gi, s)))
        if self.kube:
            for u in sorted(self.pre.cone):
                for term in inst.pod_types[u].anti_affinity:
                    if t in term.blocks and term.topology.domain_of[rep] is not None:
                        parts.append(c.not_(self.present([u], term.topology.domain_nodes(rep), gi, s)))
        return c.all_(parts)

    # ---- moves ---------------------------------------------------------------
    def _action(self, op: str, t: int, gi: int, k: int, k2: int, guard: int) -> Optional[Action]:
        g = self.groups[gi]
        src, dst = g.counters[k], g.counters[k2]
        assert src is not None and dst is not None
        moves = move_cubes(src, dst)
        first, second = (dst, src) if op == DEPLOY else (src, dst)
        writes = (first.present,) + first.count_bits + (second.present,) + second.count_bits
        return Action(op, t, g.rep, guard, writes, moves)

    def build(self) -> CounterSystem:
        inst, pre, c = self.inst, self.pre, self.c
        order = self._groups()
        actions: list[Action] = []
        moves_of: list[tuple[int, LocalState, LocalState]] = []
        for gi, g in enumerate(self.groups):
            if len(g.states) == 1:
                continue
            index = {s: k for k, s in enumerate(g.states)}
            for k, s in enumerate(g.states):
                for t in sorted(s):
                    a = self._action(DELETE, t, gi, k, index[s - {t}], Circuit.TRUE)
                    actions.append(a)
                    moves_of.append((gi, s, s - {t}))
                for t in sorted(pre.cone):
                    s2 = s | {t}
                    if t in s or s2 not in index or (t, g.rep) not in pre.deployable_pairs:
                        continue
                    if not local_ok(inst, t, g.rep, s):
                        continue
                    guard = self.guard(t, gi, s)
                    if guard == Circuit.FALSE:
                        continue
                    actions.append(self._action(DEPLOY, t, gi, k, index[s2], guard))
                    moves_of.append((gi, s, s2))
        initial: dict[int, bool] = {v: False for v in order}
        pairs: dict = {}
        for gi, g in enumerate(self.groups):
            for k, pv in enumerate(g.counters):
                if pv is None:
                    continue
                pairs[(-1 - gi, k)] = pv
                value = len(g.nodes) if g.states[k] == g.initial_state else 0
                initial[pv.present] = value > 0
                for j, b in enumerate(pv.count_bits):
                    initial[b] = bool(value >> j & 1)
        target = c.any_(c.all_(self._on(t, n) for t, n in sorted(alt)) for alt in self.query.alternatives)
        extras = {}
        for p, cnt in inst.initial.items():
            diff = cnt - pre.abstract_initial.get(p, 0)
            if diff > 0:
                extras[p] = diff
        stats = dict(pre.stats)
        stats.update(state_vars=len(order), actions=len(actions), counters=len(pairs),
                     groups=len(self.groups), largest_group=max((len(g.nodes) for g in self.groups), default=0),
                     local_states=sum(len(g.states) for g in self.groups),
                     move_cubes=sum(len(a.moves) for a in actions), circuit_nodes=len(c))
        return CounterSystem(c, tuple(order), pairs, initial, tuple(actions), target,
                             tuple(p.name for p in inst.pod_types), tuple(n.name for n in inst.nodes),
                             extras, tuple(sorted(pre.cone)), stats,
                             groups=tuple(self.groups), moves_of=tuple(moves_of), pre=pre)

    def _on(self, t: int, n: int) -> int:
        """Presence of ``t`` on the query node ``n`` (a group of one)."""
        gi = self.group_of[n]
        g = self.groups[gi]
        return self.c.any_(self.nonzero(gi, k) for k, s in enumerate(g.states) if t in s)


def build_system(inst: Instance, query: Query, pre: Preprocessed, mode: str = "auto",
                 type_order: str = "level") -> TransitionSystem:
    """The system the BDD engine runs: counters when ``mode`` is "on", or "auto" and
    some class has ``MIN_POOL`` nodes; else (or when unsupported) the concrete one.
    ``stats["counters"]`` always says which, and why."""
    from symreach.encodings.compile import compile_system

    if mode not in COUNTER_MODES:
        raise ValueError(f"unknown counters mode {mode!r}")
    why = "off (as asked)"
    if mode != "off":
        pool = largest_pool(inst, query, pre)
        if mode == "auto" and pool < MIN_POOL:
            why = f"off (largest class of interchangeable nodes: {pool} < {MIN_POOL})"
        else:
            try:
                cs = compile_counters(inst, query, pre)
                cs.stats["counters"] = f"on (largest class: {pool} nodes)"
                return cs
            except Unsupported as exc:
                why = f"fallback to the concrete encoding: {exc}"
    system = compile_system(inst, query, pre, type_order=type_order)
    system.stats["counters"] = why
    return system
