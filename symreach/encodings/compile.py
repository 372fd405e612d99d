"""``Instance`` + ``Query`` -> ``TransitionSystem`` (both profiles).

Each guard is ``Hard(t, n, sigma)`` of ``symreach.semantics`` written as a
circuit over the modelled pairs, check by check:

- capacity: one PB node per resource, ``sum_u w(u) * count(u, n) <= C - need``
  (kubernetes: the ``pods`` unit when the node lists ``pods``; a zero request
  is not checked; paper: every resource of the node or of t);
- host ports (kubernetes): no pod on n shares a (protocol, port);
- spread: ``count(v_n) + self - count(d) <= maxSkew`` for every eligible
  domain d when there are at least minDomains of them (the global minimum
  unrolled into one difference-of-sums PB node per domain), else
  ``count(v_n) + self <= maxSkew``;
- affinity: paper, per term: a witness in D_tau(n), or t matches the term
  and no matching pod exists anywhere; kubernetes: a pod matching all terms
  in each term's domain, or (t matches all terms and no pod matching all
  terms on a node carrying one of the keys); a missing key fails;
- anti-affinity: no matching pod in D_tau(n) (missing key: no constraint);
  kubernetes also: no pod of a type whose anti-affinity term matches t in
  that term's domain of n.

The target is the query's DNF of presence variables, conjoined with one PB
node ``sum of counters >= K`` per count target.

Pairs outside the may-be-present fixpoint read as 0; types outside the cone
do not exist (their pods are extras, deleted by ``realize_trace``).
"""

from __future__ import annotations

from typing import Optional

from symreach import semantics
from symreach.model import KUBERNETES, PODS_RESOURCE, Instance, Pair, Query, ports_conflict
from symreach.result import DELETE, DEPLOY
from symreach.encodings.circuit import Circuit, Term, counter_terms
from symreach.encodings.preprocess import Preprocessed, preprocess
from symreach.encodings.system import Action, Move, PairVars, TransitionSystem
from symreach.encodings.system_size import refuse

# Spread constraints over at least this many domains compare each count with a
# shared minimum (``_Compiler._within_min``), not with every other domain.
SHARED_MIN_DOMAINS = 64


def compile_system(inst: Instance, query: Optional[Query] = None,
                   pre: Optional[Preprocessed] = None, type_order: str = "level") -> TransitionSystem:
    """Compile the (preprocessed) instance. ``type_order``: "level" (affinity
    DAG depth, sources first), "reverse-level", or "index"."""
    query = query or inst.query
    if query is None:
        raise ValueError("no query given")
    if pre is None:
        pre = preprocess(inst, query, try_greedy=False)
    refuse(inst, pre.cone, pre.may, pre.deployable_pairs, pre.counted)   # under a ceiling, before building
    return _Compiler(inst, query, pre, type_order).build()


def type_levels(inst: Instance, types) -> dict[int, int]:
    """Longest witness-path depth of each type: Kahn's order on the witness
    graph (u -> t when u can witness t); types on cycles get one more than
    their deepest already-levelled witness. O(types + edges)."""

    types = sorted(types)
    members = set(types)
    preds = {t: sorted(u for u in semantics.affinity_witness_types(inst, t) if u in members and u != t) for t in types}
    succs: dict[int, list[int]] = {t: [] for t in types}
    for t in types:
        for u in preds[t]:
            succs[u].append(t)
    indeg = {t: len(preds[t]) for t in types}
    level = {t: 0 for t in types}
    queue = [t for t in types if indeg[t] == 0]
    done: set[int] = set()
    while queue:
        u = queue.pop()
        done.add(u)
        for t in succs[u]:
            level[t] = max(level[t], level[u] + 1)
            indeg[t] -= 1
            if indeg[t] == 0:
                queue.append(t)
    for t in types:
        if t not in done:
            level[t] = max([level[u] + 1 for u in preds[t] if u in done] + [level[t]])
    return level


class _Compiler:
    def __init__(self, inst: Instance, query: Query, pre: Preprocessed, type_order: str) -> None:
        self.inst, self.query, self.pre = inst, query, pre
        self.c = Circuit()
        self.type_order = type_order
        self.pairs: dict[Pair, PairVars] = {}
        self.kube = inst.profile == KUBERNETES
        self._any_memo: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        self._here_memo: dict[int, list[int]] = {}
        # id(spread constraint) -> (domain -> its count's terms, [AND_d count(d) >= k for k = 0..])
        self._spread_memo: dict[tuple[int, int], int] = {}
        self._doms_memo: dict[int, list[int]] = {}
        self._min_memo: dict[int, tuple[dict[int, list[Term]], list[int]]] = {}

    # ---- variables ----------------------------------------------------------
    def _node_order(self) -> list[int]:
        topos = {}
        for t in self.pre.cone:
            pod = self.inst.pod_types[t]
            for term in pod.affinity + pod.anti_affinity:
                topos[id(term.topology)] = term.topology
            for h in pod.spread:
                topos[id(h.topology)] = h.topology
        ts = sorted(topos.values(), key=lambda tp: len(tp.members))

        def key(n: int):
            return tuple(-1 if tp.domain_of[n] is None else tp.domain_of[n] for tp in ts) + (n,)
        return sorted(range(len(self.inst.nodes)), key=key)

    def _declare(self) -> list[int]:
        lv = type_levels(self.inst, self.pre.cone)
        if self.type_order == "level":
            tkey = lambda t: (lv[t], t)  # noqa: E731
        elif self.type_order == "reverse-level":
            tkey = lambda t: (-lv[t], t)  # noqa: E731
        else:
            tkey = lambda t: t  # noqa: E731
        types = sorted(self.pre.cone, key=tkey)
        order: list[int] = []
        for n in self._node_order():
            for t in types:
                p = (t, n)
                if p not in self.pre.may:
                    continue
                present = self.c.var(("present", t, n))
                order.append(present)
                bound = self.pre.counted.get(p)
                bits: tuple[int, ...] = ()
                if bound is not None:
                    bits = tuple(self.c.var(("count", t, n, j)) for j in range(bound.bit_length()))
                    order.extend(bits)
                self.pairs[p] = PairVars(present, bits, bound or 1)
        return order

    def pres(self, t: int, n: int) -> int:
        pv = self.pairs.get((t, n))
        return pv.present if pv is not None else Circuit.FALSE

    def count_terms(self, t: int, n: int, w: int) -> list[Term]:
        pv = self.pairs.get((t, n))
        if pv is None or w == 0:
            return []
        return counter_terms(pv.count_bits, w) if pv.counted else [(w, pv.present)]

    def any_present(self, types, nodes) -> int:
        """OR of the presence variables of ``types`` x ``nodes``, memoised: the
        same selector/domain (e.g. an anti-affinity to a label every control
        type carries) recurs in many guards, and rebuilding it each time made
        compilation quadratic."""
        key = (tuple(types), tuple(nodes))
        u = self._any_memo.get(key)
        if u is None:
            u = self._any_memo[key] = self.c.any_(self.pres(t, m) for t in key[0] for m in key[1])
        return u

    def _here(self, n: int) -> list[int]:
        """Cone types with a modelled pair on node ``n`` (memoised per node)."""
        h = self._here_memo.get(n)
        if h is None:
            h = self._here_memo[n] = [u for u in self.pre.cone if (u, n) in self.pairs]
        return h

    # ---- guards -----------------------------------------------------------
    def capacity(self, t: int, n: int) -> int:
        inst, c = self.inst, self.c
        node = inst.nodes[n]
        here = self._here(n)
        parts = []
        if self.kube:
            if PODS_RESOURCE in node.capacity:
                terms = [tm for u in here for tm in self.count_terms(u, n, 1)]
                parts.append(c.pb_le(terms, node.capacity[PODS_RESOURCE] - 1))
            for r, need in inst.pod_types[t].requests.items():
                if r == PODS_RESOURCE or need <= 0:
                    continue
                terms = [tm for u in here for tm in self.count_terms(u, n, semantics.request(inst, u, r))]
                parts.append(c.pb_le(terms, node.capacity.get(r, 0) - need))
        else:
            for r in sorted(set(node.capacity) | set(inst.pod_types[t].requests)):
                terms = [tm for u in here for tm in self.count_terms(u, n, semantics.request(inst, u, r))]
                parts.append(c.pb_le(terms, node.capacity.get(r, 0) - semantics.request(inst, t, r)))
        return c.all_(parts)

    def ports(self, t: int, n: int) -> int:
        mine = self.inst.pod_types[t].host_ports
        if not self.kube or not mine:
            return Circuit.TRUE
        return self.c.all_(self.c.not_(self.pres(u, n)) for u in self.pre.cone
                           if ports_conflict(mine, self.inst.pod_types[u].host_ports))

    def spread(self, t: int, n: int) -> int:
        c = self.c
        parts = []
        for h in self.inst.pod_types[t].spread:
            dn = h.topology.domain_of[n]
            if dn is None or n not in h.eligible:
                return Circuit.FALSE
            parts.append(self._spread_part(h, dn))
        return c.all_(parts)

    def _spread_part(self, h, dn: int) -> int:
        """The guard of one spread constraint on a node of domain ``dn``: it depends on
        the domain only, so it is built once per domain (a zone spread over 20,000
        nodes rebuilt it, a sum over a third of the nodes, for every pair)."""
        key = (id(h), dn)
        hit = self._spread_memo.get(key)
        if hit is not None:
            return hit
        c = self.c
        parts: list[int] = []
        doms = self._doms_memo.get(id(h))
        if doms is None:
            doms = self._doms_memo[id(h)] = sorted({h.topology.domain_of[m] for m in h.eligible} - {None})

        def dcount(d: int, sign: int) -> list[Term]:
            return [tm for m in sorted(h.topology.members[d] & h.eligible)
                    for u in sorted(h.counts) for tm in self.count_terms(u, m, sign)]
        slack = h.max_skew - int(h.self_match)
        if len(doms) >= max(h.min_domains, SHARED_MIN_DOMAINS):
            parts.append(self._within_min(h, doms, dn, slack))
        elif len(doms) >= h.min_domains and doms:
            for d in doms:
                if d == dn:
                    parts.append(c.const(slack >= 0))
                else:
                    parts.append(c.pb_le(dcount(dn, 1) + dcount(d, -1), slack))
        else:
            parts.append(c.pb_le(dcount(dn, 1), slack))
        u = self._spread_memo[key] = c.all_(parts)
        return u

    def _within_min(self, h, doms: list[int], dn: int, slack: int) -> int:
        """``count(dn) - min_d count(d) <= slack`` as ``AND_k (count(dn) <= slack + k OR min >= k + 1)``
        for k up to the minimum's largest value (equivalent to ``OR_k (min >= k AND count(dn) <=
        slack + k)``: take k = min), with ``min >= k`` (an AND over every domain) built once per
        constraint and k. The pairwise form (one comparison per domain in every pair's guard) is
        quadratic in nodes for a hostname spread: hours at 20,000 nodes; so was the OR form,
        in memory: ``and_`` flattens ``min >= k``'s domains into each conjunction (one 1,000-node
        cone: 88.8 MB compiled, 54.3 MB now, ``benchmarks/system_size.py``); an OR keeps it shared."""
        c = self.c
        memo = self._min_memo.get(id(h))
        if memo is None:
            counts = {d: [tm for m in sorted(h.topology.members[d] & h.eligible)
                          for u in sorted(h.counts) for tm in self.count_terms(u, m, 1)] for d in doms}
            top = min(sum(w for w, _ in terms) for terms in counts.values())  # the minimum's largest value
            at_least = [c.all_(c.not_(c.pb_le(counts[d], k - 1)) for d in doms) if k else Circuit.TRUE
                        for k in range(top + 1)]
            memo = self._min_memo[id(h)] = (counts, at_least)
        counts, at_least = memo
        above = at_least[1:] + [Circuit.FALSE]   # min >= k + 1 (never past the largest value)
        return c.all_(c.or_(c.pb_le(counts[dn], slack + k), above[k]) for k in range(len(at_least)))

    def affinity(self, t: int, n: int) -> int:
        c, inst = self.c, self.inst
        terms = inst.pod_types[t].affinity
        if not terms:
            return Circuit.TRUE
        allnodes = range(len(inst.nodes))
        if not self.kube:
            parts = []
            for term in terms:
                ok = self.any_present(sorted(term.selects), sorted(term.topology.domain_nodes(n)))
                if t in term.selects:
                    ok = c.or_(ok, c.not_(self.any_present(sorted(term.selects), allnodes)))
                parts.append(ok)
            return c.all_(parts)
        if any(term.topology.domain_of[n] is None for term in terms):
            return Circuit.FALSE
        w = sorted(frozenset.intersection(*(term.selects for term in terms)))
        witness = c.all_(self.any_present(w, sorted(term.topology.domain_nodes(n))) for term in terms)
        if t not in w:
            return witness
        keyed = [m for m in allnodes if any(term.topology.domain_of[m] is not None for term in terms)]
        return c.or_(witness, c.not_(self.any_present(w, keyed)))

    def anti(self, t: int, n: int) -> int:
        c, inst = self.c, self.inst
        parts = [c.not_(self.any_present(sorted(term.selects), sorted(term.topology.domain_nodes(n))))
                 for term in inst.pod_types[t].anti_affinity]
        if self.kube:
            for u in sorted(self.pre.cone):
                for term in inst.pod_types[u].anti_affinity:
                    if t in term.blocks and term.topology.domain_of[n] is not None:
                        parts.append(c.not_(self.any_present([u], sorted(term.topology.domain_nodes(n)))))
        return c.all_(parts)

    def guard(self, t: int, n: int) -> int:
        if self.inst.static_block[t][n] is not None or not self.inst.pod_types[t].creatable:
            return Circuit.FALSE
        return self.c.and_(self.ports(t, n), self.capacity(t, n), self.spread(t, n),
                           self.affinity(t, n), self.anti(t, n))

    # ---- actions -------------------------------------------------------------
    def _moves(self, pv: PairVars, deploy: bool) -> tuple[Move, ...]:
        if not pv.counted:
            return (Move(((pv.present, not deploy),), ((pv.present, deploy),)),)

        def cube(v: int) -> tuple[tuple[int, bool], ...]:
            return ((pv.present, v > 0),) + tuple((b, bool(v >> j & 1)) for j, b in enumerate(pv.count_bits))
        if deploy:
            return tuple(Move(cube(v), cube(v + 1)) for v in range(pv.bound))
        return tuple(Move(cube(v), cube(v - 1)) for v in range(1, pv.bound + 1))

    def build(self) -> TransitionSystem:
        inst, pre, c = self.inst, self.pre, self.c
        order = self._declare()
        actions: list[Action] = []
        for p, pv in self.pairs.items():
            writes = (pv.present,) + pv.count_bits
            if p in pre.deployable_pairs:
                g = self.guard(*p)
                if g != Circuit.FALSE:
                    actions.append(Action(DEPLOY, p[0], p[1], g, writes, self._moves(pv, True)))
            actions.append(Action(DELETE, p[0], p[1], Circuit.TRUE, writes, self._moves(pv, False)))
        initial: dict[int, bool] = {v: False for v in order}
        for p, cnt in pre.abstract_initial.items():
            pv = self.pairs[p]
            initial[pv.present] = cnt > 0
            for j, b in enumerate(pv.count_bits):
                initial[b] = bool(cnt >> j & 1)
        target = c.any_(c.all_(self.pres(t, n) for t, n in sorted(alt)) for alt in self.query.alternatives)
        for ct in self.query.counts:
            # sum of the counters >= K; preprocessing gave every read pair a counter
            terms = [tm for t, n in sorted(ct.pairs) for tm in self.count_terms(t, n, 1)]
            target = c.and_(target, c.pb_ge(terms, ct.at_least))
        extras: dict[Pair, int] = {}
        for p, cnt in inst.initial.items():
            diff = cnt - pre.abstract_initial.get(p, 0)
            if diff > 0:
                extras[p] = diff
        stats = dict(pre.stats)
        stats.update(state_vars=len(order), actions=len(actions),
                     counted_pairs=sum(1 for pv in self.pairs.values() if pv.counted),
                     circuit_nodes=len(c))
        return TransitionSystem(c, tuple(order), self.pairs, initial, tuple(actions), target,
                                tuple(t.name for t in inst.pod_types),
                                tuple(n.name for n in inst.nodes), extras, tuple(sorted(pre.cone)), stats)
