"""Issue 27's classes of disagreement with the real kube-scheduler (kso): DaemonSet
pods without their DaemonSet, in-place resizes, terminating pods, volumes. One
minimal state per class with kso's answer written down, as in ``test_kso_classes``;
``test_expectations_are_kso_answers`` re-asks kso where it is installed.
"""

from __future__ import annotations

import pytest

from benchmarks.kso_harness import find_kso, normalized, symreach_verdicts
from tests.test_kso_classes import C, kso_answer, node, pod, state_of

AFF = "NodeAffinity"
PREFILTER_AFF = (AFF, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))


def ds_pod(name: str, pin: str, bound: bool) -> str:
    """A pod the DaemonSet controller made for node ``pin``, its DaemonSet not in the input."""
    meta = (", labels: {app: ds1}, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds1, "
            "uid: u1, controller: true}]")
    spec = ("  nodeName: %s\n" % pin if bound else "") + C + (
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchFields: [{key: metadata.name, operator: In, values: [%s]}]}]}}}\n" % pin)
    return pod(name, spec, meta=meta)


# class name -> (documents, pending pod, kso's verdicts)
CLASSES: dict[str, tuple[list[str], str, dict]] = {
    # Each pod of a DaemonSet that is not in the input keeps its own node pin.
    "daemonset_pods_without_daemonset": (
        [node("n1"), node("n2"), ds_pod("ds1-a", "n1", True), ds_pod("ds1-b", "n2", False)],
        "default/ds1-b", {"n1": PREFILTER_AFF, "n2": None}),
}


def _state(name: str):
    return state_of(CLASSES, name)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_symreach_gives_kso_answer(name):
    assert symreach_verdicts(_state(name)) == CLASSES[name][2]


KSO = find_kso()


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_expectations_are_kso_answers(name):
    assert kso_answer(_state(name)) == {n: normalized(v) for n, v in CLASSES[name][2].items()}


def test_daemonset_pods_without_daemonset_are_one_type_per_node():
    """``check --pod default/ds1 --node n2`` asks about the n2 pod: one type per pin, grouped as a DaemonSet."""
    from symreach.frontends.kubernetes import load_kubernetes_documents
    from symreach.model import daemonset_groups

    inst, _ = load_kubernetes_documents(_state("daemonset_pods_without_daemonset").objects, "<state>")
    assert sorted(p.name for p in inst.pod_types) == ["default/ds1@n1", "default/ds1@n2"]
    assert set(daemonset_groups(inst)["default/ds1"]) == {0, 1}
