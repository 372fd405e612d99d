"""Independent checker of BDD invariant certificates (``not-deployable`` verdicts).

The BDD engine's certificate says: "on the abstract system of the cone types
(saturated pairs as one bit, counted pairs as bounded counters, every other
pair of a cone type absent), the set Inv is an inductive invariant that
contains the initial state and misses the target". This module re-checks that
claim from the ``Instance`` alone. It shares no code with the compiler: its
guards are built directly from the SPEC / ``semantics`` definitions with a
deliberately simple method (sums as value-indexed BDD tables ``sum == v``),
in a fresh BDD manager. It checks:

1. the listed cone contains the target types and is closed (affinity
   witnesses per profile, spread-counted types), so the cone theorem of
   ``encodings.preprocess`` applies; every pair a cone spread counts is
   either a counter or unmodelled;
2. ``initial in Inv`` (sigma0 on the cone, saturated pairs capped at 1);
3. ``post(Inv) <= Inv`` for every deploy and delete of every cone type on
   every node; a deployment of an unmodelled pair must be impossible from
   Inv, and a counter at its bound must not be deployable;
4. ``Inv & target == false``;
5. for counters, Inv implies ``present == (count != 0)``.

Premises taken on trust (each proved in its own module): the cone theorem
(``encodings.preprocess``), saturation (SPEC 2.2), a user's explicit
``maxPerNode`` bound of a counted pair, and the cap of a pair that only a
count target reads at that target's threshold (``model.Query.count_cap``).
Count targets (``counts``: ``{pairs, atLeast}``) are part of the target:
Inv must miss "some alternative present and every sum >= atLeast", and a
pair a count target reads must be a counter.

Certificate format (JSON-serialisable dict), ``format: symreach-bdd-invariant/1``:
``cone`` (type names), ``pairs`` (``{pod, node, bits}``, ``bits = 0`` for a
saturated pair, else the counter width; ``bound``), ``variables`` (names
``["present", pod, node]`` / ``["count", pod, node, j]``), ``nodes``
(``[var, low, high]`` for node id ``k + 2``; ids 0/1 are false/true; children
before parents; no complement edges) and ``root``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from symreach.certify.counter_width import width_problem
from symreach.certify.guards import cone_problem, forbidding
from symreach.certify.names import vacuous
from symreach.model import KUBERNETES, PODS_RESOURCE, Instance, Query, ports_conflict

FORMAT = "symreach-bdd-invariant/1"


# ---- writing ------------------------------------------------------------------

def dump_certificate(instance: Instance, query: Query, system, sym, inv) -> dict[str, Any]:
    """Serialise ``inv`` (a BDD of ``sym``) with named variables."""
    tn, nn = system.type_names, system.node_names
    name_of: dict[str, list] = {}
    for v in system.state_vars:
        name = system.circuit.var_name(v)
        name_of[sym.names[v]] = [name[0], tn[name[1]], nn[name[2]]] + list(name[3:])
    bdd = sym.bdd
    order = sorted(name_of, key=bdd.level_of_var)
    var_index = {x: i for i, x in enumerate(order)}
    nodes: list[list[int]] = []
    ids: dict[tuple[int, bool], int] = {}

    def key(u):
        return (int(u.regular if hasattr(u, "regular") else u), u.negated)

    stack = [(inv, False)]
    root_id: Optional[int] = None
    while stack:
        u, expanded = stack.pop()
        if u == bdd.false or u == bdd.true:
            continue
        k = (int(u), False)
        if k in ids:
            continue
        _, lo, hi = bdd.succ(u)
        if u.negated:
            lo, hi = ~lo, ~hi
        if not expanded:
            stack.append((u, True))
            for ch in (lo, hi):
                if ch != bdd.false and ch != bdd.true and (int(ch), False) not in ids:
                    stack.append((ch, False))
            continue

        def ref(ch) -> int:
            if ch == bdd.false:
                return 0
            if ch == bdd.true:
                return 1
            return ids[(int(ch), False)]
        nodes.append([var_index[u.var], ref(lo), ref(hi)])
        ids[k] = len(nodes) + 1
    if inv == bdd.false:
        root_id = 0
    elif inv == bdd.true:
        root_id = 1
    else:
        root_id = ids[(int(inv), False)]
    pairs = [{"pod": tn[t], "node": nn[n], "bits": len(pv.count_bits), "bound": pv.bound}
             for (t, n), pv in sorted(system.pairs.items())]
    cone = sorted(tn[t] for t in system.cone)
    return {"format": FORMAT, "profile": instance.profile, "cone": cone, "pairs": pairs,
            "variables": [name_of[x] for x in order], "nodes": nodes, "root": root_id,
            "query": [sorted([tn[t], nn[n]] for t, n in alt) for alt in query.alternatives],
            "counts": [{"pairs": sorted([tn[t], nn[n]] for t, n in ct.pairs), "atLeast": ct.at_least}
                       for ct in query.counts]}


def write_certificate(cert: dict, path: str) -> None:
    with open(path, "w") as fh:
        json.dump(cert, fh)


# ---- checking -------------------------------------------------------------------

class CertificateError(Exception):
    pass


def check_certificate(inst: Instance, query: Query, cert: dict) -> tuple[bool, str]:
    """Re-check a certificate; returns (accepted, message)."""
    problem = vacuous(query.alternatives, [(ct.pairs, ct.at_least) for ct in query.counts])
    if problem:
        return False, f"vacuous target: {problem}"
    try:
        InvariantChecker(inst, query, cert).run()
    except CertificateError as exc:
        return False, str(exc)
    return True, "certificate accepted: inductive invariant, contains sigma0, misses the target"


class InvariantChecker:
    """The checks of the module docstring; ``certify/gang_bdd.py`` replaces the target and
    the transitions (``target``, ``induction``) for the gang question."""

    def __init__(self, inst: Instance, query: Query, cert: dict) -> None:
        try:
            import dd.cudd as backend
        except ImportError:  # pragma: no cover
            import dd.autoref as backend
        if cert.get("format") != FORMAT:
            raise CertificateError("unknown certificate format")
        self.inst, self.query, self.cert = inst, query, cert
        self.bdd = backend.BDD()
        self._dists: dict[tuple, dict[int, Any]] = {}
        self.t = {p.name: i for i, p in enumerate(inst.pod_types)}
        self.n = {x.name: i for i, x in enumerate(inst.nodes)}
        try:
            self.cone = {self.t[x] for x in cert["cone"]}
            self.pairs = {(self.t[p["pod"]], self.n[p["node"]]): (p["bits"], p["bound"]) for p in cert["pairs"]}
            for width in self.pairs.values():
                if width_problem(*width):
                    raise CertificateError(width_problem(*width))
        except KeyError as exc:
            raise CertificateError(f"unknown name {exc}") from None
        self.vname: dict[tuple, str] = {}
        for i, v in enumerate(cert["variables"]):
            key = (v[0], self.t[v[1]], self.n[v[2]]) + tuple(v[3:])
            self.vname[key] = f"v{i}"
            self.bdd.declare(f"v{i}")
        self.inv = self._load()
        self.spread_counted = {(u, m) for t in self.cone for h in inst.pod_types[t].spread
                               for u in h.counts for m in h.eligible if h.topology.domain_of[m] is not None}

    def _load(self):
        b = self.bdd
        built = [b.false, b.true]
        names = [f"v{i}" for i in range(len(self.cert["variables"]))]
        for var, lo, hi in self.cert["nodes"]:
            if not (0 <= lo < len(built) and 0 <= hi < len(built) and 0 <= var < len(names)):
                raise CertificateError("malformed node list")
            built.append(b.ite(b.var(names[var]), built[hi], built[lo]))
        root = self.cert["root"]
        if not isinstance(root, int) or not 0 <= root < len(built):
            raise CertificateError("the root is not a node of the list")
        return built[root]

    # ---- configuration vocabulary ------------------------------------------
    def var(self, *key):
        name = self.vname.get(key)
        if name is None:
            raise CertificateError(f"missing variable {key}")
        return self.bdd.var(name)

    def present(self, u: int, m: int):
        return self.var("present", u, m) if (u, m) in self.pairs else self.bdd.false

    def eq(self, u: int, m: int, c: int):
        """count(u, m) == c."""
        b = self.bdd
        if (u, m) not in self.pairs:
            return b.true if c == 0 else b.false
        bits, bound = self.pairs[(u, m)]
        if bits == 0:
            return {0: ~self.present(u, m), 1: self.present(u, m)}.get(c, b.false)
        if c >= 1 << bits:
            return b.false
        out = b.true
        for j in range(bits):
            x = self.var("count", u, m, j)
            out &= x if c >> j & 1 else ~x
        return out

    def maxc(self, u: int, m: int) -> int:
        bits, bound = self.pairs.get((u, m), (0, 0))
        return 0 if (u, m) not in self.pairs else (1 if bits == 0 else (1 << bits) - 1)

    def dist(self, weighted):
        """{value: BDD of 'sum == value'} for a list of (weight, u, m); memoised
        (read-only tables): every deploy on a node asks for the same capacity sum
        (pebbling pyramid h = 11: 15 of 21 CPU s of the check before)."""
        key = tuple(weighted)
        table = self._dists.get(key)
        if table is None:
            table = self._dists[key] = self._dist(key)
        return table

    def _dist(self, weighted):
        table = {0: self.bdd.true}
        for w, u, m in weighted:
            if w == 0 or (u, m) not in self.pairs:
                continue
            new: dict[int, Any] = {}
            for v, f in table.items():
                for c in range(self.maxc(u, m) + 1):
                    g = f & self.eq(u, m, c)
                    if g != self.bdd.false:
                        new[v + w * c] = new.get(v + w * c, self.bdd.false) | g
            table = new
        return table

    def le(self, weighted, cap: int):
        out = self.bdd.false
        for v, f in self.dist(weighted).items():
            if v <= cap:
                out |= f
        return out

    def any_present(self, types, nodes):
        out = self.bdd.false
        for u in types:
            for m in nodes:
                out |= self.present(u, m)
        return out

    # ---- Hard(t, n, .) from the SPEC ---------------------------------------
    def request(self, t: int, r: str) -> int:
        if r == PODS_RESOURCE and self.inst.profile == KUBERNETES:
            return 1
        return self.inst.pod_types[t].requests.get(r, 0)

    def hard(self, t: int, n: int):
        inst, b = self.inst, self.bdd
        kube = inst.profile == KUBERNETES
        pod, node = inst.pod_types[t], inst.nodes[n]
        if inst.static_block[t][n] is not None:
            return b.false
        g = b.true
        types = sorted(self.cone)
        if kube and pod.host_ports:
            for u in types:
                if ports_conflict(pod.host_ports, inst.pod_types[u].host_ports):
                    g &= ~self.present(u, n)
        if kube:
            checks = []
            if PODS_RESOURCE in node.capacity:
                checks.append((PODS_RESOURCE, 1, node.capacity[PODS_RESOURCE]))
            for r, need in pod.requests.items():
                if r != PODS_RESOURCE and need > 0:
                    checks.append((r, need, node.capacity.get(r, 0)))
        else:
            checks = [(r, self.request(t, r), node.capacity.get(r, 0))
                      for r in set(node.capacity) | set(pod.requests)]
        for r, need, cap in checks:
            g &= self.le([(self.request(u, r), u, n) for u in types], cap - need)
        for h in pod.spread:
            dn = h.topology.domain_of[n]
            if dn is None or n not in h.eligible:
                return b.false
            doms = {h.topology.domain_of[m] for m in h.eligible} - {None}

            def cnt(d):
                return self.dist([(1, u, m) for u in h.counts for m in h.topology.members[d] & h.eligible])
            mine = cnt(dn)
            if len(doms) >= h.min_domains and doms:
                for d in doms:
                    other = mine if d == dn else cnt(d)
                    ok = b.false
                    for a, fa in mine.items():
                        for c, fc in other.items():
                            if (a + int(h.self_match) - c <= h.max_skew) and (d != dn or a == c):
                                ok |= fa & fc
                    g &= ok
            else:
                g &= self.le([(1, u, m) for u in h.counts for m in h.topology.members[dn] & h.eligible],
                             h.max_skew - int(h.self_match))
        allnodes = range(len(inst.nodes))
        if pod.affinity:
            if kube:
                if any(term.topology.domain_of[n] is None for term in pod.affinity):
                    return b.false
                w = frozenset.intersection(*(term.selects for term in pod.affinity))
                ok = b.true
                for term in pod.affinity:
                    ok &= self.any_present(w, term.topology.domain_nodes(n))
                if t in w:
                    keyed = [m for m in allnodes
                             if any(term.topology.domain_of[m] is not None for term in pod.affinity)]
                    ok |= ~self.any_present(w, keyed)
                g &= ok
            else:
                for term in pod.affinity:
                    ok = self.any_present(term.selects, term.topology.domain_nodes(n))
                    if t in term.selects:
                        ok |= ~self.any_present(term.selects, allnodes)
                    g &= ok
        for selects, nodes in forbidding(inst, t, n, types):
            g &= ~self.any_present(selects, nodes)
        return g

    # ---- the checks ------------------------------------------------------------
    def _cone_closed(self) -> None:
        inst = self.inst
        problem = cone_problem(inst, self.cone, (t for t, _ in self.query.pairs()))
        if problem:
            raise CertificateError(problem)
        for p, (bits, _) in self.pairs.items():
            if bits == 0 and self.query.count_cap(p) > 1:
                raise CertificateError("a pair a count target reads is modelled without a counter")
        for t in self.cone:
            for h in inst.pod_types[t].spread:
                for u in h.counts:
                    for m in h.eligible:
                        if (u, m) in self.pairs and self.pairs[(u, m)][0] == 0 and \
                                h.topology.domain_of[m] is not None:
                            raise CertificateError("a spread-counted pair is modelled without a counter")

    def run(self) -> None:
        self._cone_closed()
        self.check_counters()
        self.check_initial()
        if self.inv & self.target() != self.bdd.false:
            raise CertificateError("the invariant meets the target")
        self.induction()

    def check_counters(self) -> None:
        b, inv = self.bdd, self.inv
        for (u, m), (bits, bound) in self.pairs.items():
            if u not in self.cone:
                raise CertificateError("a modelled pair outside the cone")
            if bits:
                nonzero = ~self.eq(u, m, 0)
                ok = self.present(u, m).equiv(nonzero) if hasattr(self.present(u, m), "equiv") else \
                    (self.present(u, m) & nonzero) | (~self.present(u, m) & ~nonzero)
                if inv & ~ok != b.false:
                    raise CertificateError("the invariant breaks present == (count != 0)")

    def check_initial(self) -> None:
        b, inst, inv = self.bdd, self.inst, self.inv
        init = b.true
        for (u, m), (bits, bound) in self.pairs.items():
            c = inst.initial.get((u, m), 0)
            init &= self.eq(u, m, c if bits else min(c, 1))
            if bits:
                init &= self.present(u, m) if c else ~self.present(u, m)
        for (u, m), c in inst.initial.items():
            if u in self.cone and (u, m) not in self.pairs and c:
                raise CertificateError("an initially present cone pair is not modelled")
        if init & ~inv != b.false:
            raise CertificateError("the initial state is not in the invariant")

    def target(self):
        """The query's target as a BDD."""
        b = self.bdd
        target = b.false
        for alt in self.query.alternatives:
            conj = b.true
            for t, n in alt:
                conj &= self.present(t, n)
            target |= conj
        for ct in self.query.counts:
            reached = b.false
            for v, f in self.dist([(1, u, m) for u, m in sorted(ct.pairs)]).items():
                if v >= ct.at_least:
                    reached |= f
            target &= reached
        return target

    def induction(self) -> None:
        """Every deploy and delete of every cone type on every node stays in the invariant."""
        b, inst, inv = self.bdd, self.inst, self.inv
        for t in sorted(self.cone):
            for n in range(len(inst.nodes)):
                p = (t, n)
                if inst.pod_types[t].creatable:
                    g = inv & self.hard(t, n)
                    if p not in self.pairs:
                        if g != b.false:
                            raise CertificateError(f"deploy of unmodelled pair "
                                                   f"{inst.pod_types[t].name}@{inst.nodes[n].name} is possible")
                    else:
                        self.step(p, g, +1)
                if p in self.pairs:
                    self.step(p, inv, -1)

    def step(self, p, src, delta: int) -> None:
        """``src`` (states where the move is enabled) moved by one pod of ``p`` stays in the invariant."""
        b = self.bdd
        bits, bound = self.pairs[p]
        names = [self.vname[("present",) + p]] + [self.vname[("count",) + p + (j,)] for j in range(bits)]
        top = 1 if bits == 0 else (1 << bits) - 1
        for c in range(top + 1):
            c2 = c + delta
            pre = src & self.eq(*p, c) if bits == 0 else src & self.eq(*p, c)
            if pre == b.false:
                continue
            if c2 < 0:
                continue
            if bits == 0 and c2 > 1:
                continue  # saturation: a present saturated pair is not redeployed
            if bits and c2 > bound:
                mpn = self.inst.pod_types[p[0]].max_per_node
                if mpn is not None and bound >= mpn:
                    continue  # the user's explicit maxPerNode bound is a premise (SPEC 2.2)
                if p not in self.spread_counted and bound >= self.query.count_cap(p) > 0:
                    continue  # capped at a count target's threshold: a premise (Query.count_cap)
                raise CertificateError("a counter can exceed its bound")
            post = b.exist(names, pre) & self.eq(*p, c2)
            if bits:
                post &= self.present(*p) if c2 else ~self.present(*p)
            else:
                post &= self.present(*p) if c2 else ~self.present(*p)
            if post & ~self.inv != b.false:
                pod, node = self.inst.pod_types[p[0]].name, self.inst.nodes[p[1]].name
                raise CertificateError(f"not inductive: {'deploy' if delta > 0 else 'delete'} "
                                       f"{pod}@{node} leaves the invariant")
