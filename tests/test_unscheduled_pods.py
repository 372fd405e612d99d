"""Pods the scheduler does not try: not silently analysed as schedulable.

The scheduling queue's PreEnqueue (the SchedulingGates plugin) keeps a gated pod out of every
scheduling cycle until a controller removes its gates, so the Filter phase never sees it before.
symreach answers as if the gates were removed, and says so: a warning naming the pod, and a
caveat on every answer about the pod's type (``Y*`` in the matrix, ``caveats`` under check).
Likewise a pending pod being deleted (``metadata.deletionTimestamp``): ``scheduleOne`` skips it
(``skipPodSchedule``).
"""

from __future__ import annotations

from symreach.frontends.kubernetes import load_kubernetes_documents

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
CONTAINERS = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]


def _pod(name: str, gates: list | None = None, node: str | None = None) -> dict:
    spec: dict = {"containers": CONTAINERS}
    if gates is not None:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _gate_caveats(report) -> dict[str, list[str]]:
    return {name: [c for c in caveats if "schedulingGates" in c] for name, caveats in report.caveats.items()
            if any("schedulingGates" in c for c in caveats)}


def test_gated_pending_pod_is_warned_and_its_answers_marked():
    inst, report = load_kubernetes_documents([NODE, _pod("gated", ["example.com/quota"]), _pod("free")], "<state>")
    assert list(_gate_caveats(report)) == ["default/gated"]
    [caveat] = _gate_caveats(report)["default/gated"]
    assert "example.com/quota" in caveat and "PreEnqueue" in caveat
    assert any("schedulingGates" in w and "Pod default/gated" in w for w in report.warnings)


def test_empty_gates_are_no_gates():
    _, report = load_kubernetes_documents([NODE, _pod("open", [])], "<state>")
    assert _gate_caveats(report) == {}
    assert not any("schedulingGates" in w for w in report.warnings)


def test_a_deployment_template_with_gates_marks_its_type():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": CONTAINERS,
                                                 "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}}}}
    _, report = load_kubernetes_documents([NODE, deployment], "<state>")
    assert [c for cs in _gate_caveats(report).values() for c in cs] and \
        all("kueue.x-k8s.io/admission" in c for cs in _gate_caveats(report).values() for c in cs)


def test_pending_pod_being_deleted_is_warned_and_marked():
    dying = _pod("dying")
    dying["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    running = _pod("running", node="n1")
    running["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"   # terminating, modelled: no caveat
    _, report = load_kubernetes_documents([NODE, dying, running, _pod("free")], "<state>")
    marked = {name for name, caveats in report.caveats.items() if any("skipPodSchedule" in c for c in caveats)}
    assert marked == {"default/dying"}
    assert sum("skipPodSchedule" in w for w in report.warnings) == 1
