"""IC3 invariant certificates: the text format and an independent SAT checker.

Format (``symreach-sat-invariant/1``), one clause per line over named state
variables, after a header of ``#`` lines whose values are JSON::

    # symreach-sat-invariant/1
    # instance: "pebbling.yaml"
    # profile: "paper"
    # query: [[["P-v3_0", "n"]]]
    # cone: ["P-v0_0", ...]
    # pairs: [{"pod": "P-v0_0", "node": "n", "bits": 0, "bound": 1}, ...]
    -present[P-v0_0@n] -present[P-v1_0@n]
    count[S@n#0] -present[F@n]

``present[T@N]`` is "some pod of type T runs on N"; ``count[T@N#j]`` is bit j
(least significant first) of the multiplicity counter of a pair some spread
constraint counts (``bits > 0`` in ``pairs``). What the certificate claims:
on the abstract system of the ``cone`` types (a saturated pair is one bit,
a counted pair a counter capped at ``bound``, every other pair of a cone type
is **absent**), the conjunction Inv of the clauses and of "every unlisted
cone pair is absent" holds initially, is preserved by every deploy and
delete, and excludes the target.

The checker (``check_certificate``) rebuilds that system from the
``Instance`` alone. It does not use ``encodings.compile`` or
``encodings.cnf``: every ``Hard(t, n)`` is written afresh from SPEC 2 /
``semantics`` as a deliberately plain CNF (presence disjunctions by Tseitin,
every sum -- capacity, spread counts and skews -- as a sequential weighted
counter "prefix sum >= v" that is forced upwards), in a fresh MiniSat. It
checks, in order:

1. the cone contains the target types and is closed (affinity witnesses per
   profile, spread-counted types), so the cone theorem of
   ``encodings.preprocess`` applies; every pair a cone spread constraint
   counts is a counter, counters are wide enough and at least the initial
   count, a counter's bound is either the instance's explicit ``maxPerNode``
   bound or a deployment at the bound must be impossible from Inv;
2. the initial configuration (restricted to the cone, saturated pairs capped
   at one) satisfies every clause and has no pod on an unlisted pair;
3. for every deploy and delete of every cone pair and every move (counter
   value), ``Inv(s) & guard(s) & pre(s) & -C(post)`` is unsatisfiable for
   every clause C that mentions the pair (the other clauses are untouched by
   the action); deploying an unlisted pair must therefore be impossible;
4. ``Inv & alternative & counts`` is unsatisfiable for every target
   alternative, where ``counts`` (header ``counts``, optional) says every
   count target's sum reaches its ``atLeast``; a pair a count target reads
   must be a counter.

Saturation (SPEC 2.2) and the cone theorem are the facts taken on trust,
with their count analogue: a pair only a count target reads may be capped
at the target's threshold (``model.Query.count_cap``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

from pysat.solvers import Solver

from symreach.certify.count_sentences import clause_text
from symreach.certify.counter_width import width_problem
from symreach.certify.guards import cone_problem, forbidding
from symreach.certify.names import vacuous
from symreach.model import KUBERNETES, Instance, Query, ports_conflict

FORMAT = "symreach-sat-invariant/1"
_VAR = re.compile(r"^(-?)(present|count)\[(.+)\]$")


# ---- the certificate --------------------------------------------------------------

@dataclass
class InvariantCertificate:
    """An inductive invariant as clauses over named state variables.

    ``clauses``: lists of ``(name, value)``; a name is ``("present", pod, node)``
    or ``("count", pod, node, j)`` with pod/node *names*; the literal holds when
    the variable has ``value``.
    """

    instance: str
    profile: str
    query: list[list[tuple[str, str]]]
    cone: list[str]
    pairs: list[dict[str, Any]]
    clauses: list[list[tuple[tuple, bool]]] = field(default_factory=list)
    # count targets: {"pairs": [[pod, node], ...], "atLeast": K}, conjoined with the query
    counts: list[dict[str, Any]] = field(default_factory=list)
    # the canonical digest of the instance it is bound to (``certify.digest``; "" unbound)
    digest: str = ""

    @classmethod
    def from_system(cls, inst: Instance, query: Query, system, lemmas) -> "InvariantCertificate":
        tn, nn = system.type_names, system.node_names

        def name(v: int) -> tuple:
            nm = system.circuit.var_name(v)
            return (nm[0], tn[nm[1]], nn[nm[2]]) + tuple(nm[3:])
        clauses = [[(name(v), b) for v, b in cl] for cl in lemmas]
        pairs = [{"pod": tn[t], "node": nn[n], "bits": len(pv.count_bits), "bound": pv.bound}
                 for (t, n), pv in sorted(system.pairs.items())]
        q = [sorted((tn[t], nn[n]) for t, n in alt) for alt in query.alternatives]
        counts = [{"pairs": sorted([tn[t], nn[n]] for t, n in ct.pairs), "atLeast": ct.at_least}
                  for ct in query.counts]
        return cls(inst.source, inst.profile, q, sorted(tn[t] for t in system.cone), pairs, clauses, counts)

    # ---- text -----------------------------------------------------------------
    @staticmethod
    def var_text(name: tuple) -> str:
        if name[0] == "present":
            return f"present[{name[1]}@{name[2]}]"
        return f"count[{name[1]}@{name[2]}#{name[3]}]"

    def dumps(self) -> str:
        lines = [f"# {FORMAT}",
                 f"# instance: {json.dumps(self.instance)}",
                 f"# profile: {json.dumps(self.profile)}",
                 f"# query: {json.dumps(self.query)}",
                 f"# cone: {json.dumps(self.cone)}",
                 f"# pairs: {json.dumps(self.pairs)}"]
        if self.counts:
            lines.append(f"# counts: {json.dumps(self.counts)}")
        if self.digest:
            lines.append(f"# digest: {json.dumps(self.digest)}")
        for r in self.render().splitlines():
            lines.append(f"## {r}")
        for cl in self.clauses:
            lines.append(" ".join(("" if b else "-") + self.var_text(nm) for nm, b in cl))
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str) -> "InvariantCertificate":
        header: dict[str, Any] = {}
        clauses = []
        seen_format = False
        for no, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("##"):
                continue
            if line.startswith("#"):
                body = line[1:].strip()
                if body == FORMAT:
                    seen_format = True
                    continue
                key, sep, value = body.partition(":")
                if not sep:
                    raise ValueError(f"line {no}: bad header line")
                try:
                    header[key.strip()] = json.loads(value)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"line {no}: bad JSON in header {key.strip()!r}: {exc}") from None
                continue
            clause = []
            for tok in line.split():
                m = _VAR.match(tok)
                if not m:
                    raise ValueError(f"line {no}: bad literal {tok!r}")
                neg, kind, body = m.groups()
                if kind == "present":
                    pod, at, node = body.rpartition("@")
                    name: tuple = ("present", pod, node)
                else:
                    pn, hs, j = body.rpartition("#")
                    pod, at, node = pn.rpartition("@")
                    if not hs or not j.isdigit():
                        raise ValueError(f"line {no}: bad counter bit {tok!r}")
                    name = ("count", pod, node, int(j))
                if not at or not pod or not node:
                    raise ValueError(f"line {no}: bad variable {tok!r}")
                clause.append((name, not neg))
            clauses.append(clause)
        if not seen_format:
            raise ValueError(f"not a {FORMAT} certificate (missing '# {FORMAT}' line)")
        for key in ("query", "cone", "pairs"):
            if key not in header:
                raise ValueError(f"missing header {key!r}")
        try:
            query = [[(str(p), str(n)) for p, n in alt] for alt in header["query"]]
            pairs = [{"pod": str(p["pod"]), "node": str(p["node"]), "bits": int(p["bits"]),
                      "bound": int(p["bound"])} for p in header["pairs"]]
            counts = [{"pairs": [[str(p), str(n)] for p, n in ct["pairs"]], "atLeast": int(ct["atLeast"])}
                      for ct in header.get("counts", [])]
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"bad query or pairs header: {exc}") from None
        return cls(str(header.get("instance", "")), str(header.get("profile", "")), query,
                   [str(c) for c in header["cone"]], pairs, clauses, counts, str(header.get("digest") or ""))

    # ---- readable ----------------------------------------------------------------
    def render(self) -> str:
        """One sentence per clause, e.g. "never: S-a and F-b on n together"."""
        out = []
        for cl in self.clauses:
            pos = [nm for nm, b in cl if b]
            neg = [nm for nm, b in cl if not b]
            if all(nm[0] == "present" for nm in pos + neg):
                def pn(nms):
                    nodes = {nm[2] for nm in nms}
                    if len(nodes) == 1:
                        return " and ".join(nm[1] for nm in nms) + f" on {nms[0][2]}"
                    return " and ".join(f"{nm[1]}@{nm[2]}" for nm in nms)
                if not pos:
                    out.append(f"never: {pn(neg)}" + (" together" if len(neg) > 1 else ""))
                elif not neg:
                    out.append("always: " + " or ".join(f"{nm[1]}@{nm[2]}" for nm in pos))
                else:
                    out.append(f"whenever {pn(neg)}: also " + " or ".join(f"{nm[1]}@{nm[2]}" for nm in pos))
            else:  # counter bits: the pod counts the clause forbids
                out.append(clause_text(cl, {(p["pod"], p["node"]): p["bits"] for p in self.pairs})
                           or "a pair's presence agrees with its counter")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()


# ---- the independent checker ---------------------------------------------------------

class CertificateError(Exception):
    pass


def check_certificate(inst: Instance, cert: InvariantCertificate | str,
                      query: Optional[Query] = None) -> tuple[bool, str]:
    """Re-check a certificate against ``inst``; returns (accepted, message).

    The query checked is the certificate's; when ``query`` is given it must
    be the same target."""
    try:
        if isinstance(cert, str):
            cert = InvariantCertificate.loads(cert)
        checker = _Checker(inst, cert, query)
        try:
            checker.run()
        finally:
            checker.solver.delete()
    except CertificateError as exc:
        return False, str(exc)
    return True, (f"certificate accepted: {len(cert.clauses)} clauses form an inductive invariant "
                  "that holds initially and excludes the target")


class _Checker:
    def __init__(self, inst: Instance, cert: InvariantCertificate, query: Optional[Query]) -> None:
        self.inst, self.cert = inst, cert
        self.kube = inst.profile == KUBERNETES
        self.solver = Solver(name="minisat22")
        self.nvars = 0
        tix = {t.name: i for i, t in enumerate(inst.pod_types)}
        nix = {n.name: i for i, n in enumerate(inst.nodes)}

        def pair(pod: str, node: str):
            if pod not in tix:
                raise CertificateError(f"unknown pod type {pod!r}")
            if node not in nix:
                raise CertificateError(f"unknown node {node!r}")
            return tix[pod], nix[node]
        if cert.profile and cert.profile != inst.profile:
            raise CertificateError(f"certificate is for profile {cert.profile!r}, instance is {inst.profile!r}")
        self.alts = [frozenset(pair(p, n) for p, n in alt) for alt in cert.query]
        self.counts = [(frozenset(pair(p, n) for p, n in ct["pairs"]), ct["atLeast"]) for ct in cert.counts]
        problem = vacuous(self.alts, self.counts)
        if problem:
            raise CertificateError(f"vacuous target: {problem}")
        if query is not None and (set(self.alts) != set(query.alternatives) or
                                  set(self.counts) != {(ct.pairs, ct.at_least) for ct in query.counts}):
            raise CertificateError("the certificate is for another query")
        self.cone = set()
        for c in cert.cone:
            if c not in tix:
                raise CertificateError(f"unknown pod type {c!r} in cone")
            self.cone.add(tix[c])
        self.bits: dict[tuple[int, int], tuple[int, int]] = {}
        for p in cert.pairs:
            key = pair(p["pod"], p["node"])
            if key in self.bits:
                raise CertificateError(f"pair {p['pod']}@{p['node']} listed twice")
            self.bits[key] = (p["bits"], p["bound"])
            if width_problem(*self.bits[key]):
                raise CertificateError(f"{p['pod']}@{p['node']}: {width_problem(*self.bits[key])}")
        self.clauses = []
        for cl in cert.clauses:
            lits = []
            for nm, val in cl:
                t, n = pair(nm[1], nm[2])
                lits.append(((nm[0], t, n) + tuple(nm[3:]), val))
            self.clauses.append(lits)
        self.present: dict[tuple[int, int], int] = {}
        self.counter: dict[tuple[int, int], list[int]] = {}

    # ---- plain CNF helpers ---------------------------------------------------------
    def fresh(self) -> int:
        self.nvars += 1
        return self.nvars

    def add(self, clause: Sequence[int]) -> None:
        self.solver.add_clause(list(clause))

    def or_(self, lits: Sequence[int]) -> int:
        """A literal equivalent to the disjunction (0 literals: a false literal)."""
        g = self.fresh()
        for x in lits:
            self.add([g, -x])
        self.add([-g] + list(lits))
        return g

    def and_(self, lits: Sequence[int]) -> int:
        return -self.or_([-x for x in lits])

    def at_most(self, h: int, terms: list[tuple[int, int]], bound: int) -> None:
        """``h -> sum(w * lit) <= bound`` for integer weights of either sign, by a
        sequential weighted counter whose "prefix sum >= v" variables are forced
        upwards by the literals."""
        pos = []
        for w, x in terms:
            if w < 0:
                pos.append((-w, -x))
                bound -= w
            elif w > 0:
                pos.append((w, x))
        if bound < 0:
            self.add([-h])
            return
        if sum(w for w, _ in pos) <= bound:
            return
        cap = bound + 1
        prev: dict[int, int] = {}
        for w, x in pos:
            new: dict[int, int] = {}

            def at(v: int) -> int:
                v = min(v, cap)
                if v not in new:
                    new[v] = self.fresh()
                return new[v]
            for v, y in prev.items():
                self.add([-y, at(v)])
                self.add([-y, -x, at(v + w)])
            self.add([-x, at(w)])
            prev = new
        if cap in prev:
            self.add([-h, -prev[cap]])

    # ---- the state --------------------------------------------------------------------
    def _declare(self) -> None:
        inst = self.inst
        for t in sorted(self.cone):
            for n in range(len(inst.nodes)):
                p = self.fresh()
                self.present[(t, n)] = p
                bits, bound = self.bits.get((t, n), (0, 1))
                if bits:
                    bs = [self.fresh() for _ in range(bits)]
                    self.counter[(t, n)] = bs
                    nonzero = self.or_(bs)
                    self.add([-p, nonzero])
                    self.add([p, -nonzero])
                    for v in range(bound + 1, 1 << bits):  # Inv includes count <= bound
                        self.add([-b if v >> j & 1 else b for j, b in enumerate(bs)])
                if (t, n) not in self.bits:
                    self.add([-p])  # Inv: an unlisted cone pair is absent

    def var(self, name: tuple) -> int:
        key = (name[1], name[2])
        if key[0] not in self.cone:
            raise CertificateError(f"variable of a type outside the cone: {self.inst.pod_types[key[0]].name}")
        if name[0] == "present":
            return self.present[key]
        bs = self.counter.get(key)
        if bs is None or name[3] >= len(bs):
            raise CertificateError(f"no counter bit {name[3]} for {self._pn(key)}")
        return bs[name[3]]

    def count_terms(self, t: int, n: int, w: int) -> list[tuple[int, int]]:
        if t not in self.cone or w == 0:
            return []
        bs = self.counter.get((t, n))
        if bs:
            return [(w << j, b) for j, b in enumerate(bs)]
        return [(w, self.present[(t, n)])]

    def any_present(self, types: Iterable[int], nodes: Iterable[int]) -> int:
        nodes = list(nodes)
        return self.or_([self.present[(u, m)] for u in sorted(types) if u in self.cone for m in nodes])

    def count_cap(self, p) -> int:
        """The largest threshold of a count target reading ``p`` (0: none)."""
        return max((k for ps, k in self.counts if p in ps), default=0)

    def _pn(self, p) -> str:
        return f"{self.inst.pod_types[p[0]].name}@{self.inst.nodes[p[1]].name}"

    # ---- Hard(t, n), written afresh from SPEC 2 ---------------------------------------
    def request(self, t: int, r: str) -> int:
        if self.kube and r == "pods":
            return 1
        return self.inst.pod_types[t].requests.get(r, 0)

    def hard(self, t: int, n: int) -> int:
        """A literal h with h -> Hard(t, n, s) on the abstract state."""
        inst, h = self.inst, self.fresh()
        pod, node = inst.pod_types[t], inst.nodes[n]
        cone = sorted(self.cone)
        if inst.static_block[t][n] is not None or not pod.creatable:
            self.add([-h])
            return h
        if self.kube and pod.host_ports:
            for u in cone:
                if ports_conflict(pod.host_ports, inst.pod_types[u].host_ports):
                    self.add([-h, -self.present[(u, n)]])
        if self.kube:
            checks = []
            if "pods" in node.capacity:
                checks.append(("pods", node.capacity["pods"] - 1))
            for r, need in pod.requests.items():
                if r != "pods" and need > 0:
                    checks.append((r, node.capacity.get(r, 0) - need))
        else:
            checks = [(r, node.capacity.get(r, 0) - self.request(t, r))
                      for r in sorted(set(node.capacity) | set(pod.requests))]
        for r, room in checks:
            self.at_most(h, [tm for u in cone for tm in self.count_terms(u, n, self.request(u, r))], room)
        for sc in pod.spread:
            dn = sc.topology.domain_of[n]
            if dn is None or n not in sc.eligible:
                self.add([-h])
                continue
            doms = sorted({sc.topology.domain_of[m] for m in sc.eligible} - {None})

            def cnt(d: int, sign: int) -> list[tuple[int, int]]:
                return [tm for m in sorted(sc.topology.members[d] & sc.eligible)
                        for u in sorted(sc.counts) for tm in self.count_terms(u, m, sign)]
            room = sc.max_skew - int(sc.self_match)
            if doms and len(doms) >= sc.min_domains:
                for d in doms:
                    self.at_most(h, cnt(dn, 1) + cnt(d, -1), room)
            else:
                self.at_most(h, cnt(dn, 1), room)
        terms = pod.affinity
        everywhere = range(len(inst.nodes))
        if terms and not self.kube:
            for term in terms:
                ok = self.any_present(term.selects, term.topology.domain_nodes(n))
                if t in term.selects:
                    ok = self.or_([ok, -self.any_present(term.selects, everywhere)])
                self.add([-h, ok])
        elif terms:
            if any(term.topology.domain_of[n] is None for term in terms):
                self.add([-h])
            else:
                both = frozenset.intersection(*(term.selects for term in terms))
                witness = self.and_([self.any_present(both, term.topology.domain_nodes(n)) for term in terms])
                if t in both:
                    keyed = [m for m in everywhere if any(term.topology.domain_of[m] is not None for term in terms)]
                    witness = self.or_([witness, -self.any_present(both, keyed)])
                self.add([-h, witness])
        for selects, nodes in forbidding(inst, t, n, cone):
            self.add([-h, -self.any_present(selects, nodes)])
        return h

    # ---- the checks -----------------------------------------------------------------------
    def _structure(self) -> None:
        inst = self.inst
        need = {t for alt in self.alts for t, _ in alt} | {t for ps, _ in self.counts for t, _ in ps}
        problem = cone_problem(inst, self.cone, need)
        if problem:
            raise CertificateError(problem)
        counted: set[tuple[int, int]] = set()
        for t in self.cone:
            for sc in inst.pod_types[t].spread:
                for m in sc.eligible:
                    if sc.topology.domain_of[m] is not None:
                        counted |= {(u, m) for u in sc.counts}
        self.spread_counted = counted
        for p, (bits, bound) in self.bits.items():
            if p[0] not in self.cone:
                raise CertificateError(f"listed pair {self._pn(p)} is outside the cone")
            init = self.inst.initial.get(p, 0)
            if p in counted and not bits:
                raise CertificateError(f"pair {self._pn(p)} is counted by a spread constraint but has no counter")
            if not bits and self.count_cap(p) > 1:
                raise CertificateError(f"pair {self._pn(p)} is read by a count target but has no counter")
            if bits and (bound < max(init, 1) or bound >= 1 << bits):
                raise CertificateError(f"counter of {self._pn(p)}: bad bound {bound} for {bits} bits")

    def _initial_ok(self) -> None:
        state: dict[int, bool] = {}
        for (t, n), p in self.present.items():
            c = self.inst.initial.get((t, n), 0)
            if c and (t, n) not in self.bits:
                raise CertificateError(f"initially present pair {self._pn((t, n))} is not listed")
            state[p] = c > 0
            for j, b in enumerate(self.counter.get((t, n), ())):
                state[b] = bool(c >> j & 1)
        for cl in self.clauses:
            if not any(state[self.var(nm)] == val for nm, val in cl):
                raise CertificateError(f"the initial configuration violates clause: {self._text(cl)}")

    def _text(self, cl) -> str:
        names = [(nm[0], self.inst.pod_types[nm[1]].name, self.inst.nodes[nm[2]].name) + tuple(nm[3:])
                 for nm, _ in cl]
        return " ".join(("" if val else "-") + InvariantCertificate.var_text(x)
                        for x, (_, val) in zip(names, cl)) or "(empty clause)"

    def _inv(self) -> None:
        for cl in self.clauses:
            self.add([self.var(nm) if val else -self.var(nm) for nm, val in cl])

    def _moves(self, p, deploy: bool):
        """(pre literals, post values {var: bool}) of every move of deploy/delete of p."""
        pv = self.present[p]
        bs = self.counter.get(p)
        if not bs:
            return [([-pv] if deploy else [pv], {pv: deploy})]
        bound = self.bits[p][1]
        out = []
        rng = range(0, bound) if deploy else range(1, bound + 1)
        for v in rng:
            v2 = v + 1 if deploy else v - 1
            pre = [b if v >> j & 1 else -b for j, b in enumerate(bs)]
            post = {b: bool(v2 >> j & 1) for j, b in enumerate(bs)}
            post[pv] = v2 > 0
            out.append((pre, post))
        return out

    def _preserved(self, p, guard: Optional[int], deploy: bool) -> None:
        mine = set([self.present[p]] + list(self.counter.get(p, ())))
        touching = []
        for cl in self.clauses:
            lits = [(self.var(nm), val) for nm, val in cl]
            if any(x in mine for x, _ in lits):
                touching.append((cl, lits))
        for pre, post in self._moves(p, deploy):
            base = pre + ([guard] if guard is not None else [])
            for cl, lits in touching:
                if any(x in post and post[x] == val for x, val in lits):
                    continue
                rest = [-x if val else x for x, val in lits if x not in mine]
                if self.solver.solve(assumptions=base + rest):
                    op = "deploy" if deploy else "delete"
                    raise CertificateError(f"not inductive: {op} {self._pn(p)} can violate clause "
                                           f"{self._text(cl)}")

    def run(self) -> None:
        self._structure()
        self._declare()
        self._initial_ok()
        self._inv()
        reached = []
        for ps, k in self.counts:  # h -> sum of the counts >= k
            h = self.fresh()
            self.at_most(h, [(-w, x) for u, m in sorted(ps) for w, x in self.count_terms(u, m, 1)], -k)
            reached.append(h)
        for alt in self.alts:
            if self.solver.solve(assumptions=[self.present[p] for p in sorted(alt)] + reached):
                names = ", ".join(self._pn(p) for p in sorted(alt))
                raise CertificateError(f"the invariant does not exclude the target ({names})")
        inst = self.inst
        for t in sorted(self.cone):
            for n in range(len(inst.nodes)):
                p = (t, n)
                if inst.pod_types[t].creatable and inst.static_block[t][n] is None:
                    h = self.hard(t, n)
                    if p not in self.bits:
                        if self.solver.solve(assumptions=[h]):
                            raise CertificateError(f"not inductive: unlisted pair {self._pn(p)} (claimed "
                                                   "absent) can be deployed")
                        continue
                    self._preserved(p, h, True)
                    if p in self.counter:
                        bound = self.bits[p][1]
                        mpn = inst.pod_types[t].max_per_node
                        user = mpn is not None and (bound >= mpn or
                                                    bound >= inst.multiplicity_bound.get(p, bound + 1))
                        at_bound = [b if bound >> j & 1 else -b for j, b in enumerate(self.counter[p])]
                        capped = p not in self.spread_counted and bound >= self.count_cap(p) > 0
                        if not user and not capped and self.solver.solve(assumptions=[h] + at_bound):
                            raise CertificateError(f"a deployment of {self._pn(p)} at its counter bound "
                                                   f"{bound} is possible")
                if p in self.bits:
                    self._preserved(p, None, False)
