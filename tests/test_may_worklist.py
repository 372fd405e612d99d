"""The may-be-present fixpoint's worklist gives the rounds and witnesses of the
round-by-round definition (a plain transcription below)."""

from __future__ import annotations

from symreach import semantics
from symreach.encodings.coexist import clash
from symreach.encodings.preprocess import affinity_cone, fits_alone, may_fixpoint
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.model import KUBERNETES, Instance, Pair, Query
from tests.random_instances import random_doc


def rounds(inst: Instance, candidates: set[Pair], initial: frozenset[Pair]):
    """Every round looks at every pending pair against the pairs of earlier rounds."""
    added: dict[Pair, int] = {p: 0 for p in initial}
    why: dict[Pair, tuple[Pair, ...]] = {}
    pending = sorted(candidates - set(added))
    kube = inst.profile == KUBERNETES
    rnd = 0
    while pending:
        rnd += 1
        before = list(added)

        def witness(t: int, n: int, selects, topo):
            d = topo.domain_of[n]
            if d is None:
                return None
            for u in sorted(selects):
                for (v, m) in before:
                    if v == u and topo.domain_of[m] == d and not clash(inst, t, n, u, m):
                        return (u, m)
            return None

        new, rest = [], []
        for (t, n) in pending:
            terms = inst.pod_types[t].affinity
            if kube and terms:
                w = semantics.affinity_witness_types(inst, t)
                hits = [witness(t, n, w, term.topology) for term in terms]
                ok, wit = None not in hits, tuple(hits)
                if not ok and t in w:
                    ok, wit = True, ()
            else:
                hits = [witness(t, n, term.selects, term.topology) for term in terms]
                ok = all(h is not None or t in term.selects for h, term in zip(hits, terms))
                wit = tuple(h for h in hits if h is not None)
            if ok:
                new.append(((t, n), wit))
            else:
                rest.append((t, n))
        if not new:
            break
        for p, wit in new:
            added[p], why[p] = rnd, wit
        pending = rest
    return added, why


def test_worklist_equals_rounds_on_random_instances_and_clusters():
    docs = [random_doc(s + 52000) for s in range(150)]
    docs += [generate_cluster(24, 30, seed=s, pools=3) for s in range(2)]
    compared = nontrivial = 0
    for doc in docs:
        inst = load_document(doc)
        initial = frozenset(p for p, c in inst.initial.items() if c)
        for t in range(len(inst.pod_types)):
            cone = affinity_cone(inst, Query((frozenset({(t, 0)}),)))
            cand = {(u, m) for u in cone if inst.pod_types[u].creatable
                    for m in range(len(inst.nodes)) if fits_alone(inst, u, m)}
            got = may_fixpoint(inst, cone, set(cand), initial)
            want = rounds(inst, set(cand), initial)
            assert got == want and list(got[0]) == list(want[0]), (doc.get("nodes"), t)
            compared += 1
            nontrivial += max(want[0].values(), default=0) > 1
    assert compared > 400 and nontrivial > 20
