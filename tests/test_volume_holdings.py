"""Deletions that name what their pod holds: an ephemeral claim bound to a PV of another CSI driver
than its class's provisioner, where a node limits one of them (issue 27).

Class ``ebs`` (WaitForFirstConsumer, provisioner ebs.csi.aws.com) has one Available PV of another
driver, pv-o (other.csi.example.com). n1 limits ebs to 2 attachments (CSINode). The Deployment
``web`` has a generic ephemeral volume of class ebs; web-1 runs on n1 holding a provisioned ebs
volume (pv-e). The pending bare pod ``x`` uses two bound ebs volumes. ``CSILimits.Filter`` counts
a running pod's claim under its bound PV's driver (``getCSIDriverInfo``): a web pod deployed on n1
takes pv-o and counts under other.csi.example.com; then deleting web-1 (ebs) lets x fit n1,
deleting the pv-o holder does not. The deletion names what its pod holds; both outcomes are
reachable; replay refuses a forged holding. ``KSO`` holds kso's answers for x on the states the
steps reach, written as the cluster holds them; ``test_expectations_are_kso_answers`` re-asks kso.
"""

from __future__ import annotations

import copy

import pytest

from benchmarks.kso_harness import any_state, find_kso, kso_verdicts_single, symreach_verdicts, verdicts_at
from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import CountTarget, Query
from symreach.result import DELETE, DEPLOY, Step, Verdict

LIMIT = ("NodeVolumeLimits", ("node(s) exceed max volume count",))
OTHER = "PV pv-o (other.csi.example.com)"
OWNER = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": True}]
SCRATCH = {"name": "s", "ephemeral": {"volumeClaimTemplate": {"spec": {
    "accessModes": ["ReadWriteOnce"], "storageClassName": "ebs", "resources": {"requests": {"storage": "10Gi"}}}}}}
# x's verdicts (n1, n2) on each state: the input; web-2 deployed on n1 (taking pv-o); then the pv-o
# holder deleted; or web-1 (ebs) deleted instead
KSO = {"input": {"n1": LIMIT, "n2": None}, "deployed": {"n1": LIMIT, "n2": None},
       "other deleted": {"n1": LIMIT, "n2": None}, "ebs deleted": {"n1": None, "n2": None}}


def _pv(name: str, driver: str, cls: str = "ebs", claim: str = "", phase: str = "Available") -> dict:
    spec = {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
            "csi": {"driver": driver, "volumeHandle": f"vol-{name}"}}
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
            "status": {"phase": phase}}


def _claim(name: str, volume: str, cls: str = "ebs", pod: str = "") -> dict:
    meta: dict = {"name": name, "namespace": "default", "uid": f"uid-{name}",
                  "annotations": {"pv.kubernetes.io/bind-completed": "yes"}}
    if pod:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": f"uid-{pod}",
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": cls, "volumeName": volume,
                     "resources": {"requests": {"storage": "10Gi"}}},
            "status": {"phase": "Bound"}}


def _web(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"web-{i}", "namespace": "default", "uid": f"uid-web-{i}", "labels": {"app": "web"},
                         "ownerReferences": OWNER},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "pause"}], "volumes": [SCRATCH]},
            "status": {"phase": "Running"}}


def _cluster(running: dict[int, str]) -> list[dict]:
    """The cluster with web pods ``running`` (index -> the PV its ephemeral claim is bound to) on n1;
    the PVs of deleted pods' claims Released."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for n in ("n1", "n2")]
    objects = nodes + [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "ebs"},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
         "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i1", "allocatable": {"count": 2}}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default", "uid": "uid-web"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {
             "metadata": {"labels": {"app": "web"}},
             "spec": {"containers": [{"name": "c", "image": "pause"}], "volumes": [SCRATCH]}}}},
        _pv("x1", "ebs.csi.aws.com", "", "d1", "Bound"), _pv("x2", "ebs.csi.aws.com", "", "d2", "Bound"),
        _claim("d1", "x1", ""), _claim("d2", "x2", ""),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "pause"}], "volumes": [
             {"name": "a", "persistentVolumeClaim": {"claimName": "d1"}},
             {"name": "b", "persistentVolumeClaim": {"claimName": "d2"}}]}}]
    held = {1: "pv-e", 2: "pv-o"}
    for i, volume in held.items():
        if i in running:
            objects += [_web(i), _claim(f"web-{i}-s", volume, pod=f"web-{i}")]
    for name, driver, i in (("pv-e", "ebs.csi.aws.com", 1), ("pv-o", "other.csi.example.com", 2)):
        if i in running:
            objects.append(_pv(name, driver, claim=f"web-{i}-s", phase="Bound"))
        elif name == "pv-o" and "deleted" not in str(running.get(0, "")):
            objects.append(_pv(name, driver))   # never taken: Available
        else:
            objects.append(_pv(name, driver, claim=f"web-{i}-s", phase="Released"))
    return objects


STATES = {"input": {1: "pv-e"}, "deployed": {1: "pv-e", 2: "pv-o"},
          "other deleted": {1: "pv-e", 0: "pv-o deleted"}, "ebs deleted": {2: "pv-o"}}


def _state(name: str):
    return any_state(_cluster(STATES[name]), "default/x")


def test_symreach_gives_kso_answers_on_each_state():
    checked = 0
    for name, want in KSO.items():
        assert symreach_verdicts(_state(name)) == want, name
        checked += 1
    assert checked == 4


@pytest.mark.skipif(find_kso() is None, reason="kso (shared/tools/kso) not available")
def test_expectations_are_kso_answers():
    for name, want in KSO.items():
        assert kso_verdicts_single(_state(name), find_kso()) == want, name


def _loaded():
    inst, report = load_kubernetes_documents(copy.deepcopy(_cluster(STATES["input"])), "<vol>")
    return inst, report, inst.type_index("default/web"), inst.type_index("default/x")


def test_each_holding_is_a_deletion_of_its_own():
    """The semantics follows the steps: deploying web on n1 takes pv-o; a deletion there then has two
    outcomes, named by what the pod holds, with kso's verdicts for x after each. No caveat is left."""
    inst, report, web, x = _loaded()
    assert not any("another CSI driver" in c for cs in report.caveats.values() for c in cs)
    sigma = inst.initial_config()
    assert verdicts_at(inst, x, sigma) == KSO["input"]
    assert semantics.binding_notes(inst, [Step(DEPLOY, "default/web", "n1")])[0].endswith(
        f"its pod holds {OTHER}, counted under that driver")
    sigma = semantics.deploy(inst, sigma, web, 0)
    assert verdicts_at(inst, x, sigma) == KSO["deployed"]
    choices = dict(semantics.deletions(inst, sigma, web, 0))
    assert sorted(choices) == sorted([OTHER, semantics.PLAIN_VOLUME])
    assert verdicts_at(inst, x, choices[OTHER]) == KSO["other deleted"]
    assert verdicts_at(inst, x, choices[semantics.PLAIN_VOLUME]) == KSO["ebs deleted"]


def test_witness_and_forged_deletions():
    """x beside a web pod on n1: explicit finds a witness (replayed); the trace that deletes the pv-o
    holder instead is refused, as is a deletion naming a PV no pod there holds."""
    from symreach.solvers.explicit import ExplicitEngine

    inst, _, web, x = _loaded()
    query = Query((frozenset({(x, 0), (web, 0)}),))
    result = ExplicitEngine().check(inst, query)
    assert result.verdict is Verdict.DEPLOYABLE and len(result.trace) == 3
    semantics.replay(inst, result.trace, query)
    good = (Step(DEPLOY, "default/web", "n1"), Step(DELETE, "default/web", "n1", holding=semantics.PLAIN_VOLUME),
            Step(DEPLOY, "default/x", "n1"))
    semantics.replay(inst, good, query)
    with pytest.raises(semantics.ReplayError, match="illegal"):
        semantics.replay(inst, good[:1] + (Step(DELETE, "default/web", "n1", holding=OTHER),) + good[2:])
    with pytest.raises(semantics.ReplayError, match="holds PV pv-z"):
        semantics.replay(inst, good[:1] + (Step(DELETE, "default/web", "n1", holding="PV pv-z (other.csi.example.com)"),))
    with pytest.raises(semantics.ReplayError, match="must name one of"):
        semantics.replay(inst, good[:1] + (Step(DELETE, "default/web", "n1"),))


def test_certify_checks_every_holdings_deletion():
    """x beside two web pods on n1 is not deployable (ebs limit 2 with one web pod on ebs); the
    states certificate explicit writes is accepted by ``certify``."""
    import json

    from symreach.certify.explicit_states import check_certificate
    from symreach.solvers.explicit import ExplicitEngine

    inst, _, web, x = _loaded()
    query = Query((frozenset({(x, 0)}),), counts=(CountTarget(frozenset({(web, 0)}), 2),))
    result = ExplicitEngine().check(inst, query)
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(result.certificate.dumps())
    assert "pods of default/web" in cert["claims"]
    assert check_certificate(inst, cert)[0]


V1 = """version: 1
semantics: kubernetes
nodes: [{name: n1, capacity: {cpu: 1, pods: 10}}]
podTypes:
- name: p
  volumes:
    binds:
      claims: [default/c]
      states:
      - {bound: [null], %s}
"""


@pytest.mark.parametrize("held,problem", [
    ("heldPods: {n9: 1}", "unknown node 'n9'"),
    ("heldPods: {n1: 0}", "at least 1"),
    ("heldAttach: {n1: {d: x}}", "expected an integer"),
    ("frees: {n1: {PV a (d): 0}}", "on a node of heldPods"),
    ("heldPods: {n1: 1}, frees: {n1: {PV a (d): 1}}", "at most 0"),
])
def test_bad_v1_held_fields(held, problem):
    """A v1 ``binds`` state's pod slot fields are checked, with file, line and field."""
    from symreach.errors import InputError
    from symreach.loader import load_text

    with pytest.raises(InputError) as err:
        load_text(V1 % held, "bad.yaml")
    assert problem in str(err.value) and str(err.value).startswith("bad.yaml:10: podTypes[0].volumes.binds.states[0]")
