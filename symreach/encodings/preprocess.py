"""Sound preprocessing before any symbolic engine: cone, pruning, fixpoint, fragments.

Steps, in order (each reported in ``Preprocessed.stats``):

1. **Affinity cone of influence.** The least set of types ``C`` that contains
   the target types and is closed under: the types that can witness an
   affinity term of a member (paper: ``term.selects`` of each term;
   kubernetes: the intersection of the selects of all terms, the only pods
   that ever witness or block the bootstrap), and the types a spread
   constraint of a member counts.

   *Theorem.* The target is coverable from sigma0 iff it is coverable in the
   system restricted to ``C`` started from sigma0 restricted to ``C``.
   *Proof.* (<=) A run of the restricted system is a run of the real system
   once every pod of a type outside ``C`` has been deleted first (deletions
   are always allowed): both evaluate the same guards on the same
   configurations. (=>) Let sigma_0..sigma_k be a real run covering the
   target and let pi(sigma) keep only the pods of types in ``C``. Deletes
   map to deletes or stutters. For a deployment of t in C on n at sigma_i,
   Hard(t, n, pi(sigma_i)) holds: static checks do not read sigma; capacity,
   host ports, t's own anti-affinity and existing pods' anti-affinity are
   anti-monotone (removing pods never falsifies them); every affinity test
   of t, positive (a witness in D_tau(n)) or negative (the bootstrap
   waiver's "no matching pod anywhere / on a keyed node"), reads only pods of
   its witness types, which are in ``C``, so it has the same value in
   sigma_i and pi(sigma_i); spread counts and the global minimum read only
   counted types, also in ``C``. Deployments of types outside C are
   stutters under pi. The target pairs are of types in C, so pi(sigma_k)
   covers it. QED. NodeVolumeLimits is the one check of t that a pod can
   help (a volume another pod on n already uses is no new attachment), so
   where an attach limit can bind the closure also takes the types sharing
   a named volume with a member (``attach_sharers``); removing any other
   pod only lowers the count. Host ports and existing anti-affinity therefore need no
   closure rule; removing pods never disables a guard of the cone. The pods
   outside the cone are deleted lazily by ``realize_trace`` only when one of
   them would actually block a deployment.

2. **Static pruning.** A pair (t, n) with t in C can be deployed only if t is
   creatable and ``Hard`` minus affinity holds in the empty configuration
   (static filters, capacity of t alone, spread label/eligibility and
   ``self <= maxSkew``, kubernetes: every affinity key on n): capacity,
   ports, anti-affinity and spread are anti-monotone in the sense that the
   empty configuration is the most permissive one (for spread,
   ``count(v_n) >= gmin`` always, so the skew is smallest at 0).

3. **May-be-present least fixpoint** (SPEC 2.2): start from the pairs of
   sigma0 (types in C) and add a candidate pair when each affinity term has
   a witness pair already in the set within its domain, or the bootstrap
   waiver could apply (t matches the term / all terms). A witness that can
   never run beside the new pod (``coexist.clash``: a host port or the
   capacity of the same node, anti-affinity either way) does not count.
   Otherwise anti-affinity, capacity between different pods and spread are
   ignored, so the set over-approximates every reachable support: pairs
   outside it are the constant 0 and get no variable. A target alternative outside it is
   impossible; if all are, the verdict is ``not-deployable`` with the
   fixpoint as certificate.

4. **Fragments.** ``affinity-free``: every target type has no affinity term;
   then the target pair is deployable iff it is initially present or
   ``Hard(t*, n*, 0)`` and t* is creatable (Theorem 5; the empty
   configuration is reachable and is the most permissive for an
   affinity-free guard, see step 2). ``monotone``: the cone types have no
   anti-affinity (own or, through symmetry, existing), no spread, no host
   ports, no self-affinity bootstrap (the waiver is a negative test) and
   capacity never binds on the fixpoint; then deploying the fixpoint pairs
   in the order they were added is a legal run, so the fixpoint is exact.
   Otherwise ``pspace-hard``. Independently of the fragment, the justified
   deployment order of the fixpoint is tried as a witness and kept if it
   replays.

5. **Count targets** (``Query.counts``: K pods on a set of pairs). The cone
   theorem holds as stated (the target pairs' types are in C and pi keeps
   their pods). The fixpoint argument holds for presence, so a count target
   none of whose pairs is in the fixpoint is impossible. Theorem 5 and the
   fixpoint's exactness speak of one pod only (K pods of an affinity-free
   type still compete for capacity and repel each other through their own
   anti-affinity), so neither decides a count target: the engine does. Every
   pair a count target reads gets a counter (``add_count_targets``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Iterable, Optional

from symreach import semantics
from symreach.certify import may_fixpoint as may_certificate
from symreach.certify import static_filter, theorem5
from symreach.model import KUBERNETES, PODS_RESOURCE, Instance, Pair, Query
from symreach.records import record
from symreach.result import DEPLOY, Result, Step, Verdict
from symreach.run import RunContext
from symreach.encodings.coexist import clash
from symreach.encodings.realize import realize_trace

AFFINITY_FREE = "affinity-free"
MONOTONE = "monotone"
PSPACE_HARD = "pspace-hard"


@record(frozen=False)
class Preprocessed:
    instance: Instance
    query: Query
    cone: frozenset[int]
    may: frozenset[Pair]
    deployable_pairs: frozenset[Pair]   # candidate deploy actions (t creatable, static ok)
    counted: dict[Pair, int]            # counted pairs of the cone (subset of may) -> bound
    abstract_initial: dict[Pair, int]   # sigma0 on the cone, saturated pairs capped at 1
    fragment: str
    stats: dict[str, Any] = field(default_factory=dict)
    decided: Optional[Result] = None    # a fast-path verdict with its evidence


# ---- step 1: cone ------------------------------------------------------------

def affinity_cone(inst: Instance, query: Query) -> frozenset[int]:
    cone: set[int] = {t for t, _ in query.pairs()}
    sharers = attach_sharers(inst)
    work = list(cone)
    while work:
        t = work.pop()
        succ = set(semantics.affinity_witness_types(inst, t)) | sharers.get(t, set())
        for h in inst.pod_types[t].spread:
            succ |= h.counts
        for u in succ - cone:
            cone.add(u)
            work.append(u)
    return frozenset(cone)


def attach_sharers(inst: Instance) -> dict[int, set[int]]:
    """Where a CSI attach limit can bind (``semantics.attach_binds``), each type's types
    sharing a named volume with it (``semantics.attach_shared``; step 1); else none."""
    if not semantics.attach_binds(inst):
        return {}
    users = [u for u, pod in enumerate(inst.pod_types) if pod.attach]
    return {t: set(semantics.attach_shared(inst, t)) for t in users}


# ---- step 2: static pruning -------------------------------------------------

def fits_alone(inst: Instance, t: int, n: int) -> bool:
    """``Hard(t, n, 0)`` without affinity (and creatability): see step 2."""
    if inst.static_block[t][n] is not None:
        return False
    pod, node = inst.pod_types[t], inst.nodes[n]
    if inst.profile == KUBERNETES:
        if PODS_RESOURCE in node.capacity and node.capacity[PODS_RESOURCE] < 1:
            return False
        for r, need in pod.requests.items():
            if r != PODS_RESOURCE and need > 0 and need > node.capacity.get(r, 0):
                return False
        if any(term.topology.domain_of[n] is None for term in pod.affinity):
            return False
    else:
        for r in set(node.capacity) | set(pod.requests):
            if semantics.request(inst, t, r) > node.capacity.get(r, 0):
                return False
    for h in pod.spread:
        if h.topology.domain_of[n] is None or n not in h.eligible or int(h.self_match) > h.max_skew:
            return False
    return True


# ---- step 3: may-be-present fixpoint -----------------------------------------

def may_fixpoint(inst: Instance, cone: frozenset[int], candidates: set[Pair],
                 initial: frozenset[Pair]) -> tuple[dict[Pair, int], dict[Pair, tuple[Pair, ...]]]:
    """Least fixpoint; returns the round each pair entered (0 = sigma0) and,
    for pairs added by a witness, the witness pair of each term.

    Rounds as in the definition (a pair enters in round r when every term has
    a witness among the pairs of rounds < r), computed by a worklist: a pair
    that fails waits on the first term without a witness, keyed by the term's
    witness types, topology and the pair's domain, and is looked at again
    only in the round after a pair of those types enters that domain (nothing
    else can give the term a witness: witness lists only grow, and whether a
    witness can run beside the pair is fixed). Each round looks at its pairs
    in sorted order and each domain's witnesses in (type, entry) order, so
    rounds and witnesses are those of the round-by-round definition."""
    added: dict[Pair, int] = {p: 0 for p in initial}
    why: dict[Pair, tuple[Pair, ...]] = {}
    kube = inst.profile == KUBERNETES
    by_type: dict[int, list[int]] = {}
    # (witness types, topology id) -> domain -> type -> nodes, in entry order
    lists: dict[tuple[frozenset[int], int], dict[int, dict[int, list[int]]]] = {}
    topos: dict[int, object] = {}
    waiting: dict[tuple[frozenset[int], int], dict[int, list[Pair]]] = {}
    # type -> the keys of ``lists`` / ``waiting`` whose witness types hold it: a pair that
    # enters looks only at those (scanning every key per pair was half of preprocessing
    # on BART's 2,234 pairs)
    lists_of: dict[int, list[tuple[frozenset[int], int]]] = {}
    waiting_of: dict[int, list[tuple[frozenset[int], int]]] = {}
    witness_types = {t: semantics.affinity_witness_types(inst, t) for t in {t for t, _ in candidates}}

    def enter(pairs: list[Pair]) -> list[Pair]:
        """Record pairs that entered; return the waiting pairs they may unblock."""
        woken: list[Pair] = []
        for (u, m) in pairs:
            by_type.setdefault(u, []).append(m)
            for key in lists_of.get(u, ()):
                d = topos[key[1]].domain_of[m]
                if d is not None:
                    lists[key].setdefault(d, {}).setdefault(u, []).append(m)
            for key in waiting_of.get(u, ()):
                d = topos[key[1]].domain_of[m]
                per_domain = waiting[key]
                if d is not None and d in per_domain:
                    woken.extend(per_domain.pop(d))
        return woken

    def doms(selects: frozenset[int], topo) -> dict[int, dict[int, list[int]]]:
        key = (selects, id(topo))
        d = lists.get(key)
        if d is None:
            topos[id(topo)] = topo
            d = {}
            for u in sorted(selects):
                for m in by_type.get(u, ()):
                    dm = topo.domain_of[m]
                    if dm is not None:
                        d.setdefault(dm, {}).setdefault(u, []).append(m)
            lists[key] = d
            for u in selects:
                lists_of.setdefault(u, []).append(key)
        return d

    def witness(t: int, n: int, selects: frozenset[int], topo) -> Optional[Pair]:
        """The first pair of ``n``'s domain that can run beside ``(t, n)``."""
        d = topo.domain_of[n]
        if d is None:
            return None
        per_type = doms(selects, topo).get(d)
        if not per_type:
            return None
        for u in sorted(per_type):
            for m in per_type[u]:
                if not clash(inst, t, n, u, m):
                    return (u, m)
        return None

    def wait(p: Pair, selects: frozenset[int], topo) -> None:
        d = topo.domain_of[p[1]]
        if d is not None:   # a node without the key never gets a witness
            topos[id(topo)] = topo
            key = (selects, id(topo))
            if key not in waiting:
                waiting[key] = {}
                for u in selects:
                    waiting_of.setdefault(u, []).append(key)
            waiting[key].setdefault(d, []).append(p)

    enter(list(added))
    pending = sorted(candidates - set(added))
    rnd = 0
    while pending:
        rnd += 1
        new: list[Pair] = []
        for (t, n) in pending:
            terms = inst.pod_types[t].affinity
            ok, wit = True, []
            if kube and terms:
                w = witness_types[t]
                for term in terms:
                    hit = witness(t, n, w, term.topology)
                    if hit is None:
                        ok = False
                        if t not in w:
                            wait((t, n), w, term.topology)
                        break
                    wit.append(hit)
                if not ok and t in w:
                    ok, wit = True, []
            else:
                for term in terms:
                    hit = witness(t, n, term.selects, term.topology)
                    if hit is not None:
                        wit.append(hit)
                    elif t not in term.selects:
                        ok = False
                        wait((t, n), term.selects, term.topology)
                        break
            if ok:
                added[(t, n)] = rnd
                why[(t, n)] = tuple(wit)
                new.append((t, n))
        if not new:
            break
        pending = sorted(set(enter(new)))
    return added, why


# ---- step 4: fragments and fast paths --------------------------------------

def self_bootstrap(inst: Instance, t: int) -> bool:
    """Whether t could use the self-affinity waiver (SPEC 2.1): a negative test,
    so a present pod can disable it (outside every monotone fragment)."""
    terms = inst.pod_types[t].affinity
    if not terms:
        return False
    if inst.profile == KUBERNETES:
        return t in semantics.affinity_witness_types(inst, t)
    return any(t in term.selects for term in terms)


def _capacity_binds(inst: Instance, pairs) -> bool:
    on: dict[int, list[int]] = {}
    for t, n in pairs:
        on.setdefault(n, []).append(t)
    for n, types in on.items():
        node = inst.nodes[n]
        res = set(node.capacity)
        for t in types:
            res |= set(inst.pod_types[t].requests)
        for r in res:
            if inst.profile == KUBERNETES and r == PODS_RESOURCE and r not in node.capacity:
                continue
            total = sum(semantics.request(inst, t, r) for t in types)
            if total > node.capacity.get(r, 0):
                return True
    return False


def _is_monotone(inst: Instance, cone: frozenset[int], may) -> bool:
    for t in cone:
        pod = inst.pod_types[t]
        if pod.anti_affinity or pod.spread or self_bootstrap(inst, t):
            return False
        if inst.profile == KUBERNETES and (pod.host_ports or pod.disks):
            return False
    return not _capacity_binds(inst, may) and not semantics.attach_binds(inst)


def justification_closure(why: dict[Pair, tuple[Pair, ...]], goal: Iterable[Pair]) -> set[Pair]:
    """The pairs ``goal`` needs by the fixpoint's justification ``why``, ``goal`` included."""
    out: set[Pair] = set()
    work = list(goal)
    while work:
        p = work.pop()
        if p in out:
            continue
        out.add(p)
        work.extend(why.get(p, ()))
    return out


def greedy_witness(inst: Instance, query: Query, added: dict[Pair, int],
                   why: dict[Pair, tuple[Pair, ...]]) -> Optional[tuple[Step, ...]]:
    """Deploy the justification closure of an alternative in fixpoint order; the
    rest of sigma0 is deleted lazily. Returns a replayed trace or None."""
    for alt in sorted(query.alternatives, key=lambda a: sorted(a)):
        if not all(p in added for p in alt):
            continue
        need = justification_closure(why, alt)
        init = {p: 1 for p in need if added[p] == 0}
        steps = [(DEPLOY, t, n) for (t, n) in sorted((p for p in need if p not in init),
                                                      key=lambda p: (added[p], p))]
        trace = realize_trace(inst, init, steps, query)
        if trace is not None:
            return trace
    return None


def preprocess(inst: Instance, query: Query, engine: str = "preprocess",
               try_greedy: bool = True, run: Optional[RunContext] = None) -> Preprocessed:
    """``run``: polled between the phases (``LimitReached`` when it must stop)."""
    run = run if run is not None else RunContext()
    stats: dict[str, Any] = {}
    cone = affinity_cone(inst, query)
    stats["types"] = len(inst.pod_types)
    stats["cone_types"] = len(cone)
    sigma0 = inst.initial
    initial = frozenset(p for p in sigma0 if p[0] in cone)
    candidates: set[Pair] = set()
    for t in sorted(cone):
        run.check("preprocessing")
        if not inst.pod_types[t].creatable:
            continue
        for n in range(len(inst.nodes)):
            if fits_alone(inst, t, n):
                candidates.add((t, n))
    stats["pairs_total"] = inst.num_pairs
    stats["pairs_cone"] = len(cone) * len(inst.nodes)
    stats["pairs_static_ok"] = len(candidates)
    added, why = may_fixpoint(inst, cone, candidates, initial)
    run.check("preprocessing")
    may = frozenset(added)
    stats["pairs_may"] = len(may)
    stats["may_rounds"] = max(added.values(), default=0)
    counted = _counted_pairs(inst, cone, may)
    add_count_targets(inst, query, may, counted)
    abstract_initial = {p: (c if p in counted else 1) for p, c in sigma0.items() if p in may}
    pre = Preprocessed(inst, query, cone, may, frozenset(candidates & may), counted,
                       abstract_initial, PSPACE_HARD, stats)
    targets = query.pairs()
    if all(not inst.pod_types[t].affinity for t, _ in targets):
        pre.fragment = AFFINITY_FREE
    elif _is_monotone(inst, cone, may):
        pre.fragment = MONOTONE
    stats["fragment"] = pre.fragment

    def done(verdict: Verdict, reason: str, trace=(), cert=None, how=""):
        stats["decided_by"] = how
        pre.decided = Result(verdict, engine, fragment=pre.fragment, trace=tuple(trace),
                             reason=reason, stats=stats, certificate=cert)

    if semantics.query_holds(inst, query, inst.initial_config()):
        done(Verdict.DEPLOYABLE, "the target is initially present", how="initial")
        return pre
    static = static_filter.make_certificate(inst, query)
    if static is not None:
        done(Verdict.NOT_DEPLOYABLE, "a static filter stops every alternative of the target: "
             + "; ".join(f"{b['pod']} on {b['node']}: {b['reason']}" for b in static["blocked"]),
             cert=static, how="static-filter")
        return pre
    if pre.fragment == AFFINITY_FREE and not query.counts and all(len(alt) == 1 for alt in query.alternatives):
        for alt in sorted(query.alternatives, key=sorted):
            (t, n), = alt
            if inst.pod_types[t].creatable and semantics.hard(inst, t, n, (0,) * inst.num_pairs):
                trace = realize_trace(inst, {}, [(DEPLOY, t, n)], query)
                if trace is not None:
                    done(Verdict.DEPLOYABLE, "Theorem 5: the target type is affinity-free and "
                         "Hard(t*, n*, 0) holds", trace, how="theorem-5")
                    return pre
        cert = theorem5.make_certificate(inst, query)
        if cert is not None:
            done(Verdict.NOT_DEPLOYABLE, "Theorem 5: the target type is affinity-free, not initially "
                 "present, and Hard(t*, n*, 0) fails: "
                 + "; ".join(f"{b['pod']} on {b['node']}: {b['reason']}" for b in cert["blocked"]),
                 cert=cert, how="theorem-5")
            return pre
    alive = [alt for alt in query.alternatives if alt <= may]
    if any(not ct.pairs & may for ct in query.counts):
        alive = []  # a count target none of whose pairs can ever hold a pod
    if not alive:
        done(Verdict.NOT_DEPLOYABLE,
             "no alternative of the target lies in the may-be-present fixpoint "
             f"({len(may)} pairs over {len(cone)} cone types; docs/semantics.md, over-approximation)",
             cert=may_certificate.make_certificate(inst, query, cone, may), how="may-fixpoint")
        return pre
    # the may-fixpoint round by which the target can first be present: how deep the goal
    # lies (``solvers.schedule``: BMC's depth grows with it, the lazy search wins deep goals)
    stats["goal_round"] = min(max((added[p] for p in alt), default=0) for alt in alive)
    if query.counts:
        # Theorem 5 and the fixpoint's exactness speak of presence only: with
        # K pods, capacity and anti-affinity between the target's own pods
        # matter, so a count target is left to the engine.
        return pre
    if try_greedy or pre.fragment == MONOTONE:
        trace = greedy_witness(inst, query, added, why)
        if trace is not None:
            done(Verdict.DEPLOYABLE, "the may-be-present fixpoint's justified deployment order "
                 "replays", trace, how="fixpoint-order")
            return pre
        if pre.fragment == MONOTONE:
            # exactness says this cannot happen; let the engine decide and say so
            stats["monotone_greedy_failed"] = True
    return pre


def _counted_pairs(inst: Instance, cone: frozenset[int], may: frozenset[Pair]) -> dict[Pair, int]:
    """Pairs of the fixpoint that a spread constraint of a cone type counts, with bounds."""
    counted: dict[Pair, int] = {}
    for t in cone:
        for h in inst.pod_types[t].spread:
            for m in h.eligible:
                if h.topology.domain_of[m] is None:
                    continue
                for u in h.counts:
                    if (u, m) in may and (u, m) not in counted:
                        counted[(u, m)] = multiplicity_bound(inst, u, m)
    return counted


def add_count_targets(inst: Instance, query: Query, pairs, counted: dict[Pair, int]) -> None:
    """Give every pair a count target reads (among ``pairs``) a counter.

    A pair a spread constraint already counts keeps its bound. Any other pair
    is capped at the target's threshold K (``Query.count_cap``: capping at K
    is exact for the target), or lower when ``maxPerNode`` or capacity alone
    bounds it; never
    below its initial count. So a count target needs no ``maxPerNode``.
    """
    for ct in query.counts:
        for p in sorted(ct.pairs & frozenset(pairs)):
            if p in counted:
                continue
            bound = query.count_cap(p)
            mpn = inst.pod_types[p[0]].max_per_node
            if mpn is not None:
                bound = min(bound, mpn)  # compiled guards leave maxPerNode to the counter's bound
            try:
                bound = min(bound, multiplicity_bound(inst, *p))
            except ValueError:
                pass  # nothing else bounds it: K does
            counted[p] = max(bound, inst.initial.get(p, 0), 1)


def multiplicity_bound(inst: Instance, u: int, m: int) -> int:
    """The instance's bound, else the capacity bound (Definition 3), else an error."""
    b = inst.multiplicity_bound.get((u, m))
    if b is not None:
        return max(b, inst.initial.get((u, m), 0), 1)
    pod, node = inst.pod_types[u], inst.nodes[m]
    caps = []
    for r in set(node.capacity) | set(pod.requests):
        need = semantics.request(inst, u, r)
        if need > 0:
            caps.append(node.capacity.get(r, 0) // need)
    if inst.profile == KUBERNETES and PODS_RESOURCE in node.capacity:
        caps.append(node.capacity[PODS_RESOURCE])
    if not caps:
        raise ValueError(f"pod type {pod.name!r} on node {inst.nodes[m].name!r} is counted by a "
                         "spread constraint but nothing bounds its multiplicity; give maxPerNode")
    return max(min(caps), inst.initial.get((u, m), 0), 1)


def identity(inst: Instance, query: Query) -> Preprocessed:
    """No reduction at all: every type, every pair, every counted pair a counter.

    For oracle tests of the encoding (each compiled guard against
    ``semantics.hard`` on every configuration) and for measuring what the
    preprocessing saves.
    """
    cone = frozenset(range(len(inst.pod_types)))
    pairs = frozenset((t, n) for t in cone for n in range(len(inst.nodes)))
    counted: dict[Pair, int] = {}
    for t in cone:
        for h in inst.pod_types[t].spread:
            for m in h.eligible:
                if h.topology.domain_of[m] is not None:
                    for u in h.counts:
                        counted.setdefault((u, m), multiplicity_bound(inst, u, m))
    add_count_targets(inst, query, pairs, counted)
    abstract_initial = {p: (c if p in counted else 1) for p, c in inst.initial.items()}
    deployable = frozenset(p for p in pairs if inst.pod_types[p[0]].creatable)
    return Preprocessed(inst, query, cone, pairs, deployable, counted, abstract_initial, PSPACE_HARD,
                        {"preprocess": "none"})
