"""Issue 27, the claim-binding classes closed: a PV bound to one claim leaves the others' Available
set, a pod with several WaitForFirstConsumer claims binds them together (smallest claim first,
each to the smallest PV that fits), generic ephemeral claims (not created, not the pod's, lost),
and a binding that changes what a pod counts against a CSI attach limit.

Each class is a state, deployments that bind claims (symreach's ``semantics.deploy``), and a
pending probe pod; kso's verdicts for the probe on the state after those deployments (the claims
bound as symreach bound them, ``kso_replay.with_bindings``; the deployed pods running) are
written in, and re-asked where kso is installed.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from benchmarks.kso_harness import admitted, find_kso, kso_pending, normalized
from benchmarks.kso_replay import with_bindings
from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from tests.test_kso_classes import C, node, pod
from tests.test_kso_classes_27 import pv, pvc, uses

VB = "VolumeBinding"
NO_PV = (VB, ("node(s) didn't find available persistent volumes to bind",))
PV_AFFINITY = (VB, ("node(s) didn't match PersistentVolume's node affinity",))
NO_ZONE = ("VolumeZone", ("node(s) had no available volume zone",))
LIMIT = ("NodeVolumeLimits", ("node(s) exceed max volume count",))
N1 = node("n1", "{kubernetes.io/hostname: n1, topology.kubernetes.io/zone: z1}")
N2 = node("n2", "{kubernetes.io/hostname: n2, topology.kubernetes.io/zone: z2}")
LOCAL = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
         "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n")
GP = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gp}\n"
      "provisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\n")
CSINODE_N1 = ("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{name: "
              "ebs.csi.aws.com, nodeID: i1, allocatable: {count: 1}}]}\n")
ON_N2 = (", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, "
         "operator: In, values: [n2]}]}]}}")


def sized(name: str, size: str, extra: str = "", meta: str = "") -> str:
    return pv(name, ", storageClassName: local" + extra, meta=meta).replace("storage: 10Gi", f"storage: {size}")


def claim(name: str, size: str = "10Gi", cls: str = "local") -> str:
    return pvc(name, f", storageClassName: {cls}").replace("storage: 10Gi", f"storage: {size}")


ATTACH = [N1, N2, GP, CSINODE_N1,
          pv("pv-efs", ", storageClassName: gp, csi: {driver: efs.csi.aws.com, volumeHandle: fs-1}"),
          pv("pv-r", ", storageClassName: gp, csi: {driver: ebs.csi.aws.com, volumeHandle: vol-r}, "
                     "claimRef: {namespace: default, name: r}", phase="Bound"),
          pvc("r", ", storageClassName: gp, volumeName: pv-r", ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}"),
          pod("r", "  nodeName: n1\n" + C + uses("r")),
          claim("d", cls="gp"), pod("a", C + uses("d")), pod("b", C + uses("d"))]

# class -> (documents, deployments (pod, node) in order, probe pod, kso's verdicts for the probe)
CLASSES: dict[str, tuple[list[str], list[tuple[str, str]], str, dict]] = {
    # One Available PV, two claims of its class: once a binds d1 to it, d2 has none left.
    "bound_pv_leaves_the_other_claims_available_set": (
        [N1, N2, LOCAL, sized("pv-1", "10Gi"), claim("d1"), claim("d2"),
         pod("a", C + uses("d1")), pod("b", C + uses("d2"))],
        [("a", "n1")], "b", {"n1": NO_PV, "n2": NO_PV}),
    "before_the_binding_the_other_claim_fits": (
        [N1, N2, LOCAL, sized("pv-1", "10Gi"), claim("d1"), claim("d2"),
         pod("a", C + uses("d1")), pod("b", C + uses("d2"))],
        [], "b", {"n1": None, "n2": None}),
    # a's claims big (8Gi, listed first) and small (4Gi): smallest claim first, so small takes
    # pv-9 and big pv-10 (zone z2); a probe using big then fits only z2 (VolumeZone).
    "multi_claim_pod_binds_smallest_claim_first": (
        [N1, N2, LOCAL, sized("pv-9", "9Gi", meta=", labels: {topology.kubernetes.io/zone: z1}"),
         sized("pv-10", "10Gi", meta=", labels: {topology.kubernetes.io/zone: z2}"),
         claim("big", "8Gi"), claim("small", "4Gi"), pod("a", C + uses("big", "small")), pod("p", C + uses("big"))],
        [("a", "n1")], "p", {"n1": NO_ZONE, "n2": None}),
    "multi_claim_pod_the_other_claim": (
        [N1, N2, LOCAL, sized("pv-9", "9Gi", meta=", labels: {topology.kubernetes.io/zone: z1}"),
         sized("pv-10", "10Gi", meta=", labels: {topology.kubernetes.io/zone: z2}"),
         claim("big", "8Gi"), claim("small", "4Gi"), pod("a", C + uses("big", "small")), pod("q", C + uses("small"))],
        [("a", "n1")], "q", {"n1": None, "n2": NO_ZONE}),
    # Two claims of one pod need two PVs: one PV is not enough, on any node.
    "multi_claim_pod_needs_distinct_pvs": (
        [N1, N2, LOCAL, sized("pv-1", "10Gi"), claim("d1"), claim("d2"), pod("a", C + uses("d1", "d2"))],
        [], "a", {"n1": NO_PV, "n2": NO_PV}),
    # d (provisioner ebs) counts as an ebs volume while unbound: n1 (limit 1, one ebs volume
    # attached by r) refuses a; on n2 a binds d to pv-efs (another driver), after which b
    # using d counts nothing against ebs and fits n1.
    "binding_changes_the_attach_count": (
        ATTACH,
        [("a", "n2")], "b", {"n1": None, "n2": None}),
    "unbound_claim_counts_under_its_provisioner": (
        ATTACH,
        [], "b", {"n1": LIMIT, "n2": None}),
    # Generic ephemeral volumes: the claim <pod>-<volume> must exist and be controlled by the pod.
    "ephemeral_claim_not_the_pods": (
        [N1, N2, LOCAL, sized("pv-1", "10Gi"),
         pvc("e-scratch", ", storageClassName: local", ", ownerReferences: [{apiVersion: v1, kind: Pod, name: other, "
                                                       "uid: uid-other, controller: true}]"),
         pod("e", C + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                      "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]\n")],
        [], "e", {n: (VB, ("PVC default/e-scratch was not created for pod default/e (pod is not owner)",))
                  for n in ("n1", "n2")}),
    "ephemeral_claim_of_the_pod_takes_a_pv": (
        [N1, N2, LOCAL, sized("pv-1", "10Gi", ON_N2),
         pvc("e-scratch", ", storageClassName: local", ", ownerReferences: [{apiVersion: v1, kind: Pod, name: e, "
                                                       "uid: uid-default-e, controller: true}]"),
         pod("e", C + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                      "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]\n")],
        [], "e", {"n1": NO_PV, "n2": None}),
    # Provisioned only: the pod's own claim binds nothing a later step sees; a new pod of the
    # type (here e again, once deployed on n1) gets its own claim and fits anywhere.
    "ephemeral_claim_provisioned_binds_nothing_later": (
        [N1, N2, GP,
         pvc("e-scratch", ", storageClassName: gp", ", ownerReferences: [{apiVersion: v1, kind: Pod, name: e, "
                                                    "uid: uid-default-e, controller: true}]"),
         pod("e", C + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                      "[ReadWriteOnce], storageClassName: gp, resources: {requests: {storage: 1Gi}}}}}}]\n")],
        [("e", "n1")], "e", {"n1": None, "n2": None}),
    # e's own claim takes pv-1 when e is scheduled; e's claim goes with e, pv-1 does not come back:
    # d (b's claim) has no PV left.
    "ephemeral_claim_takes_the_pv_from_another_claim": (
        [N1, N2, LOCAL, sized("pv-1", "10Gi"),
         pvc("e-scratch", ", storageClassName: local", ", ownerReferences: [{apiVersion: v1, kind: Pod, name: e, "
                                                       "uid: uid-default-e, controller: true}]"),
         pod("e", C + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                      "[ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}}}}]\n"),
         claim("d"), pod("b", C + uses("d"))],
        [("e", "n1")], "b", {"n1": NO_PV, "n2": NO_PV}),
    "claim_lost": (
        [N1, N2, LOCAL, pvc("gone", ", storageClassName: local, volumeName: pv-gone") + "status: {phase: Lost}\n",
         pod("l", C + uses("gone"))],
        [], "l", {n: (VB, ('persistentvolumeclaim "gone" bound to non-existent persistentvolume "pv-gone"',))
                  for n in ("n1", "n2")}),
}


def documents(name: str) -> list[dict]:
    return [yaml.safe_load(d) for d in CLASSES[name][0]]


def after(name: str):
    """The instance, the configuration after the class's deployments, and the probe's type."""
    _, steps, probe, _ = CLASSES[name]
    inst, _ = load_kubernetes_documents(copy.deepcopy(documents(name)), "<test>")
    sigma = inst.initial_config()
    for pod_name, node_name in steps:
        t, n = inst.type_index(f"default/{pod_name}"), inst.node_index(node_name)
        assert semantics.deploy_failure(inst, t, n, sigma) is None
        sigma = semantics.deploy(inst, sigma, t, n)
    return inst, sigma, inst.type_index(f"default/{probe}")


def kso_state(name: str) -> list[dict]:
    """What kso reads: the volume objects as bound, the deployed pods running, the probe pending
    (a probe that was deployed is asked again under another name)."""
    objects = documents(name)
    _, steps, probe, _ = CLASSES[name]
    inst, sigma, _ = after(name)
    pods = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Pod"}
    base = with_bindings([o for o in objects if o["kind"] != "Pod"], inst, sigma)
    out = base + [p for p in pods.values() if p["spec"].get("nodeName")]
    for k, (pod_name, node_name) in enumerate(steps):
        placed = copy.deepcopy(pods[pod_name])
        placed["metadata"]["name"] = f"placed-{k}"
        placed["spec"]["nodeName"] = node_name
        out.append(placed)
    return out + [pods[probe]]


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_symreach_gives_kso_answer_after_the_bindings(name):
    inst, sigma, t = after(name)
    ours = {}
    for n, node_ in enumerate(inst.nodes):
        failure = semantics.node_failure(inst, t, n, sigma)
        ours[node_.name] = None if failure is None else (failure.plugin, failure.reasons)
    assert ours == CLASSES[name][3]


KSO = find_kso()


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
def test_expectations_are_kso_answers():
    names = sorted(CLASSES)
    probes = [f"default/{CLASSES[n][2]}" for n in names]
    answers = kso_pending([admitted(kso_state(n)) for n in names], [[p] for p in probes], [["n1", "n2"]] * len(names),
                          KSO)
    for name, probe, answer in zip(names, probes, answers):
        assert {k: normalized(v) for k, v in answer[probe].items()} == CLASSES[name][3], name


def test_no_caveat_where_the_bindings_are_modelled():
    """No class keeps a claim-binding caveat (an ephemeral claim taking a PV included)."""
    from benchmarks.kso_binding_steps import BINDING_CAVEATS

    marked = []
    for name in CLASSES:
        inst, report = load_kubernetes_documents(copy.deepcopy(documents(name)), "<test>")
        if any(c.startswith(BINDING_CAVEATS) for cs in report.caveats.values() for c in cs):
            marked.append(name)
    assert marked == []


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
def test_walks_of_binding_deployments_agree_with_kso():
    """Random volume-dense states: after each of two deployments (binding claims where one can),
    every binding pod type's verdicts on every node equal kso's on the state reached."""
    import random

    from benchmarks.kso_binding_steps import compare_walks, walk
    from symreach.generators.k8s_states import random_states

    rng = random.Random(304)
    questions = [q for i, s in enumerate(random_states(40, 304, True)) for q in walk(i, s, rng)]
    tally, wrong = compare_walks(questions, KSO)
    assert not wrong, wrong[:3]
    assert (tally.questions, tally.binding_steps, tally.verdicts) == WALKED


WALKED = (15, 8, 114)   # steps, steps that bound claims, probe verdicts compared
