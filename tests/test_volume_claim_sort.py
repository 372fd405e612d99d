"""The order VolumeBinding matches a pod's claims in: ``sort.Sort(byPVCSize)``, which past 12 claims
is not stable (``go_sort``), so equal requests may be matched in another order than the pod lists them.

kso's answer (v1.35.4, shared/tools/kso) is written in: ``sort.Sort`` is deterministic, so one run says it.
"""

from __future__ import annotations

import pytest
import yaml

from benchmarks.kso_harness import any_state, find_kso, kso_verdicts_single, normalized, symreach_answer
from symreach.frontends.go_sort import go_sort
from symreach.frontends.k8s_volume_matching import Claim, Runs, requested
from symreach.frontends.k8s_volumes import VolumeIndex
from tests.test_kso_classes import C, node, pod
from tests.test_kso_classes_27 import SC_WFFC, pv, pvc, uses

LOCAL_N1 = (", storageClassName: local, local: {path: /x}, nodeAffinity: {required: {nodeSelectorTerms: "
            "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]}}")
SIZES = [3, 1, 1, 3, 1, 2, 1, 1, 1, 1, 1, 2, 1]   # Gi, the pod's claims in its order
A, B = 1, 9    # claims of 1Gi: a (ReadWriteMany, any PV) and b (only tier=fast); Go matches b before a
BOTH = "[ReadWriteOnce, ReadWriteMany]"


def sorted_claims_docs(a: int = A, b: int = B) -> list[dict]:
    """13 claims; a may take pv-fast (1Gi) or pv-plain (2Gi), b only pv-fast, each other claim the
    tier=other PV of its size. In the pod's order a comes first, takes pv-fast (the smaller) and b
    finds nothing; sort.Sort puts b first (its pattern-defeating quicksort is not stable), b takes
    pv-fast, a pv-plain: the pod fits n1. With a and b's places exchanged, the other way round."""
    names = ["a" if k == a else "b" if k == b else f"c{k}" for k in range(len(SIZES))]
    docs = [node("n1"), SC_WFFC,
            pv("pv-fast", LOCAL_N1, meta=", labels: {tier: fast}").replace("[ReadWriteOnce]", BOTH)
            .replace("10Gi", "1Gi"),
            pv("pv-plain", LOCAL_N1).replace("[ReadWriteOnce]", BOTH).replace("10Gi", "2Gi")]
    for k, (name, size) in enumerate(zip(names, SIZES)):
        if name == "a":
            spec = ", storageClassName: local"
            docs.append(pvc(name, spec).replace("[ReadWriteOnce]", "[ReadWriteMany]").replace("10Gi", f"{size}Gi"))
        elif name == "b":
            docs.append(pvc(name, ", storageClassName: local, selector: {matchLabels: {tier: fast}}")
                        .replace("10Gi", f"{size}Gi"))
        else:
            docs.append(pvc(name, ", storageClassName: local, selector: {matchLabels: {tier: other}}")
                        .replace("10Gi", f"{size}Gi"))
            docs.append(pv(f"pv-{name}", LOCAL_N1, meta=", labels: {tier: other}").replace("10Gi", f"{size}Gi"))
    docs.append(pod("incoming", C + uses(*names)))
    return [yaml.safe_load(d) for d in docs]


NO_PV = ("VolumeBinding", ("node(s) didn't find available persistent volumes to bind",))
# kso v1.35.4 (shared/tools/kso) on sorted_claims_docs(a, b), 8 runs each (16:35 UTC, load 2.2), every run
# alike. symreach before go_sort (the pod's order for equal requests) answered each the other way round.
KSO = {(A, B): {"n1": None}, (B, A): {"n1": NO_PV}}


def test_go_sort_is_not_the_stable_order_here():
    stable = sorted(range(len(SIZES)), key=SIZES.__getitem__)
    go = [k for _, k in go_sort([(s, k) for k, s in enumerate(SIZES)], lambda x, y: x[0] < y[0])]
    assert stable.index(A) < stable.index(B) and go.index(B) < go.index(A)


def test_runs_match_the_claims_in_go_s_order():
    docs = sorted_claims_docs()
    index = VolumeIndex()
    for d in docs:
        index.add(d["kind"], d, d["metadata"].get("namespace") or "default", d["metadata"]["name"])
    index.settle()
    claims = [Claim(d["metadata"]["name"], d, False) for d in docs if d["kind"] == "PersistentVolumeClaim"]
    order = Runs(index, claims, {"kubernetes.io/hostname": "n1"}).order
    assert [requested(c) for c in order] == sorted(requested(c) for c in claims)
    names = [c.name for c in order]
    assert names.index("b") < names.index("a") and len(names) == 13


@pytest.mark.parametrize("a, b", sorted(KSO))
def test_the_verdict_is_go_s_order_s_and_kso_s(a, b):
    verdicts, caveats = symreach_answer(any_state(sorted_claims_docs(a, b), "default/incoming"))
    assert verdicts == KSO[(a, b)] and caveats == []


@pytest.mark.slow
@pytest.mark.skipif(find_kso() is None, reason="kso (shared/tools/kso) not available")
def test_kso_agrees():
    """Re-asks kso (twice per state): its answers are the ones written in."""
    kso = find_kso()
    assert kso is not None
    for (a, b), written in KSO.items():
        state = any_state(sorted_claims_docs(a, b), "default/incoming")
        for _ in range(2):
            assert {n: normalized(v) for n, v in kso_verdicts_single(state, kso).items()} == written
