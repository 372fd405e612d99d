"""Issue 27's classes of disagreement with the real kube-scheduler (kso): DaemonSet
pods without their DaemonSet, in-place resizes, terminating pods, volumes. One
minimal state per class with kso's answer written down, as in ``test_kso_classes``;
``test_expectations_are_kso_answers`` re-asks kso where it is installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pytest
import yaml

from benchmarks.kso_harness import any_state, find_kso, normalized, parse_reason, symreach_verdicts
from tests.test_kso_classes import C, kso_answer, node, pod, state_of

AFF = "NodeAffinity"
CPU = ("NodeResourcesFit", ("Insufficient cpu",))
SPREAD = ("PodTopologySpread", ("node(s) didn't match pod topology spread constraints",))
TERMINATING = ", labels: {app: web}, deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30"
WEB_SPREAD = ("  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
              "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n")
PREFILTER_AFF = (AFF, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))


def resized(requests: str, statuses: str, conditions: str = "") -> str:
    """A bound pod on n1 with container requests ``requests`` (cpu per container) and resize status."""
    containers = ", ".join(f"{{name: c{i}, image: pause, resources: {{requests: {{cpu: '{r}'}}}}}}"
                           for i, r in enumerate(requests.split()))
    return pod("big", f"  nodeName: n1\n  containers: [{containers}]\n") + (
        f"status: {{phase: Running, containerStatuses: [{statuses}]{conditions}}}\n")


def status(i: int, fields: str) -> str:
    return f"{{name: c{i}, ready: true, restartCount: 0, image: pause, imageID: '', {fields}}}"


def cpu_pod(name: str, cpu: str) -> str:
    return pod(name, f"  containers: [{{name: c0, image: pause, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n")


RESIZED_TO_3 = "status: {phase: Running, containerStatuses: [" + status(0, "resources: {requests: {cpu: '3'}}") + "]}\n"


def rs_pod(name: str, cpu: str, bound: str = "", state: str = "") -> str:
    """A pod of ReplicaSet web-7c9f (not in the input) requesting ``cpu``."""
    meta = (", labels: {app: web, pod-template-hash: 7c9f}, ownerReferences: [{apiVersion: apps/v1, "
            "kind: ReplicaSet, name: web-7c9f, uid: u-rs, controller: true}]")
    return pod(name, bound + f"  containers: [{{name: c0, image: pause, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n",
               meta=meta) + state


def ds_pod(name: str, pin: str, bound: bool) -> str:
    """A pod the DaemonSet controller made for node ``pin``, its DaemonSet not in the input."""
    meta = (", labels: {app: ds1}, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds1, "
            "uid: u1, controller: true}]")
    spec = ("  nodeName: %s\n" % pin if bound else "") + C + (
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchFields: [{key: metadata.name, operator: In, values: [%s]}]}]}}}\n" % pin)
    return pod(name, spec, meta=meta)


SC_WFFC = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local, annotations: "
           "{storageclass.kubernetes.io/is-default-class: 'true'}}\nprovisioner: kubernetes.io/no-provisioner\n"
           "volumeBindingMode: WaitForFirstConsumer\n")
SC_EBS = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: ebs}\nprovisioner: ebs.csi.aws.com\n"


def pv(name: str, spec: str, meta: str = "", phase: str = "Available") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}{meta}}}\n"
            f"spec: {{capacity: {{storage: 10Gi}}, accessModes: [ReadWriteOnce]{spec}}}\nstatus: {{phase: {phase}}}\n")


def pvc(name: str, spec: str = "", meta: str = "") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: default{meta}}}\n"
            f"spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 10Gi}}}}{spec}}}\n")


def uses(*claims: str) -> str:
    return "  volumes: [" + ", ".join(f"{{name: v{i}, persistentVolumeClaim: {{claimName: {c}}}}}"
                                      for i, c in enumerate(claims)) + "]\n"


def bound_pvc(name: str, volume: str) -> str:
    return pvc(name, f", storageClassName: ebs, volumeName: {volume}",
               ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}")


def csi_pv(name: str, claim: str) -> str:
    return pv(name, f", storageClassName: ebs, csi: {{driver: ebs.csi.aws.com, volumeHandle: {name}}}, "
                    f"claimRef: {{namespace: default, name: {claim}}}", phase="Bound")


LOCAL_N2 = (", storageClassName: local, local: {path: /x}, nodeAffinity: {required: {nodeSelectorTerms: "
            "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]}]}}")
CSINODE_N1 = ("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec: {drivers: [{name: "
              "ebs.csi.aws.com, nodeID: i1, allocatable: {count: 2}}]}\n")
CSINODE_1 = CSINODE_N1.replace("count: 2", "count: 1")
DISK = ("VolumeRestrictions", ("node(s) had no available disk",))
LOCAL_N1 = LOCAL_N2.replace("values: [n2]", "values: [n1]")
STS_WEB = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n"
           "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
           "    spec: {containers: [{name: c, image: pause}]}\n  volumeClaimTemplates: [{metadata: {name: data}, "
           "spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 10Gi}}}}]\n")


def replica(name: str, on: Optional[str]) -> str:
    """A pod the StatefulSet controller made for ``name``, with its own claim ``data-<name>``."""
    meta = (", labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, "
            "uid: u-web, controller: true}]")
    return pod(name, (f"  nodeName: {on}\n" if on else "") + C + f"  volumes: [{{name: data, persistentVolumeClaim: "
               f"{{claimName: data-{name}}}}}]\n", meta=meta)


def disk(source: str) -> str:
    return f"  volumes: [{{name: d, {source}}}]\n"
VB = "VolumeBinding"


# class name -> (documents, pending pod, kso's verdicts)
CLASSES: dict[str, tuple[list[str], str, dict]] = {
    # Each pod of a DaemonSet that is not in the input keeps its own node pin.
    "daemonset_pods_without_daemonset": (
        [node("n1"), node("n2"), ds_pod("ds1-a", "n1", True), ds_pod("ds1-b", "n2", False)],
        "default/ds1-b", {"n1": PREFILTER_AFF, "n2": None}),
    # In-place resize: each container is charged max(spec, status resources.requests,
    # allocatedResources) when its status has ``resources`` (1 -> 2 and 2 -> 1 hold 2 + 2).
    "resize_charges_max_per_container": (
        [node("n1"), resized("1 2", status(0, "resources: {requests: {cpu: '2'}}") + ", "
                             + status(1, "resources: {requests: {cpu: '1'}}")),
         pod("incoming", "  containers: [{name: c, image: pause, resources: {requests: {cpu: '1'}}}]\n")],
        "default/incoming", {"n1": CPU}),
    # ... allocatedResources alone (no ``resources`` in the status) do not count ...
    "resize_allocated_without_actual_ignored": (
        [node("n1"), resized("1", status(0, "allocatedResources: {cpu: '3'}")),
         pod("incoming", "  containers: [{name: c, image: pause, resources: {requests: {cpu: '3'}}}]\n")],
        "default/incoming", {"n1": None}),
    # ... and an Infeasible resize drops the spec: max(actual, allocated) only.
    "resize_infeasible_ignores_spec": (
        [node("n1"), resized("3", status(0, "allocatedResources: {cpu: '1'}, resources: {requests: {cpu: '1'}}"),
                             ", conditions: [{type: PodResizePending, status: 'True', reason: Infeasible}]"),
         pod("incoming", "  containers: [{name: c, image: pause, resources: {requests: {cpu: '3'}}}]\n")],
        "default/incoming", {"n1": None}),
    # ... while a new pod of the resized pod's spec holds its spec: a copy of ``big`` (cpu 1 where
    # the running one holds 3) fits beside it; ``test_new_pods_of_a_resized_pods_type_hold_the_spec``
    # asks symreach the same about the type new ``big`` pods get.
    "resize_new_pod_of_the_spec_holds_the_spec": (
        [node("n1"), resized("1", status(0, "resources: {requests: {cpu: '3'}}")), cpu_pod("big-copy", "1")],
        "default/big-copy", {"n1": None}),
    # A pending pod of a ReplicaSet not in the input, its running sibling resized (spec 1, holds 3) ...
    "resize_sibling_of_absent_replicaset_holds_the_spec": (
        [node("n1"), rs_pod("web-a", "1", "  nodeName: n1\n", RESIZED_TO_3), rs_pod("web-b", "1")],
        "default/web-b", {"n1": None}),
    # ... or its spec resized too (a resize patches the spec): the pending pod is asked with its own.
    "resize_patched_spec_of_absent_replicaset_sibling": (
        [node("n1"), rs_pod("web-a", "3", "  nodeName: n1\n", RESIZED_TO_3), rs_pod("web-b", "1")],
        "default/web-b", {"n1": None}),
    # A pending pod of a ReplicaSet not in the input joins no type of another spec's volumes: not the
    # bare pod whose spec is identical but which holds a ReadWriteOncePod claim.
    "absent_controller_pod_keeps_its_own_volumes": (
        [node("n1"), SC_EBS, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a").replace("[ReadWriteOnce]", "[ReadWriteOncePod]"),
         pod("holder", "  nodeName: n1\n  containers: [{name: c0, image: pause, resources: {requests: {cpu: '1'}}}]\n"
             + uses("a"), meta=", labels: {app: web}"), rs_pod("web-b", "1")],
        "default/web-b", {"n1": None}),
    # The running sibling still holds 3: a pod of cpu 2 does not fit beside it.
    "resize_sibling_still_holds_the_resize": (
        [node("n1"), rs_pod("web-a", "1", "  nodeName: n1\n", RESIZED_TO_3), rs_pod("web-b", "1"),
         cpu_pod("two", "2")],
        "default/two", {"n1": CPU}),
    # PodTopologySpread skips terminating pods (deletionTimestamp) ...
    "terminating_pods_not_spread_counted": (
        [node("n1"), node("n2"), pod("old-1", "  nodeName: n1\n" + C, meta=TERMINATING),
         pod("old-2", "  nodeName: n1\n" + C, meta=TERMINATING),
         pod("live", "  nodeName: n2\n" + C, meta=", labels: {app: web}"),
         pod("incoming", C + WEB_SPREAD, meta=", labels: {app: web}")],
        "default/incoming", {"n1": None, "n2": SPREAD}),
    # ... while they still hold resources and match (anti-)affinity.
    "terminating_pods_hold_resources_and_affinity": (
        [node("n1", status="{allocatable: {cpu: '1', memory: 8Gi, pods: '110'}}"), node("n2"),
         pod("old", "  nodeName: n1\n  containers: [{name: c, image: pause, resources: {requests: {cpu: '1'}}}]\n",
             meta=TERMINATING),
         pod("old-db", "  nodeName: n2\n" + C, meta=TERMINATING.replace("web", "db")),
         pod("incoming", "  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]\n"
             "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
             "{matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}]}}\n")],
        "default/incoming", {"n1": CPU, "n2": ("InterPodAffinity", ("node(s) didn't match pod anti-affinity rules",))}),
    # Volumes (kso's own cases 12-20 are tests/data/kso_cases). A claim without a class gets the
    # default one (admission): here a WaitForFirstConsumer class whose only PV is local to n2.
    "volume_claim_gets_default_class": (
        [node("n1"), node("n2"), SC_WFFC, pv("local-n2", LOCAL_N2), pvc("data"), pod("incoming", C + uses("data"))],
        "default/incoming", {"n1": (VB, ("node(s) didn't find available persistent volumes to bind",)), "n2": None}),
    # VolumeBinding lists every reason: a bound volume's affinity and no PV for the other claim.
    "volume_binding_lists_every_reason": (
        [node("n1"), node("n2"), SC_WFFC, pv("local-n2", LOCAL_N2), pv("pv-b", LOCAL_N2.replace("n2]", "n1]")
                                                                         + ", claimRef: {namespace: default, name: b}",
                                                                         phase="Bound"),
         pvc("a"), pvc("b", ", volumeName: pv-b", ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}"),
         pod("incoming", C + uses("a", "b"))],
        "default/incoming", {"n1": (VB, ("node(s) didn't find available persistent volumes to bind",)),
                             "n2": (VB, ("node(s) didn't match PersistentVolume's node affinity",))}),
    # A bound claim whose volume is missing: VolumeZone's PreFilter rejects every node.
    "volume_bound_to_missing_pv": (
        [node("n1"), SC_EBS, pv("other", ", storageClassName: ebs"), bound_pvc("data", "gone"),
         pod("incoming", C + uses("data"))],
        "default/incoming", {"n1": ("VolumeZone", ('persistentvolume "gone" not found',))}),
    # A generic ephemeral volume whose claim the controller has not created yet.
    "volume_ephemeral_claim_not_created": (
        [node("n1"), SC_WFFC,
         pod("incoming", C + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
             "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]\n")],
        "default/incoming", {"n1": (VB, ('waiting for ephemeral volume controller to create the persistentvolumeclaim '
                                         '"incoming-scratch"',))}),
    # NodeVolumeLimits counts a volume that two running pods share once (limit 2: one more fits n1) ...
    "volume_limit_counts_shared_volume_once": (
        [node("n1"), SC_EBS, CSINODE_N1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"), csi_pv("pv-b", "b"),
         bound_pvc("b", "pv-b"), pod("r1", "  nodeName: n1\n" + C + uses("a")),
         pod("r2", "  nodeName: n1\n" + C + uses("a")), pod("incoming", C + uses("b"))],
        "default/incoming", {"n1": None}),
    # A stored pod (uid) relabelled after creation: its selectors keep the matchLabelKeys value the
    # API server merged then (ver In [v1]); the scheduler uses them as stored.
    "relabelled_pod_keeps_merged_selector": (
        [node("n1"), node("n2"), pod("a", "  nodeName: n1\n" + C, meta=", labels: {app: web, ver: v1}"),
         pod("incoming", C + "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}, matchExpressions: "
             "[{key: ver, operator: In, values: [v1]}]}, matchLabelKeys: [ver]}]}}\n",
             meta=", uid: u-1, labels: {app: web, ver: v2}")],
        "default/incoming", {"n1": ("InterPodAffinity", ("node(s) didn't match pod anti-affinity rules",)),
                             "n2": None}),
    # A namespace without a Namespace object exists in any cluster (NamespaceLifecycle admission);
    # kso is given it with its default label only (``kso_harness.admitted``), as symreach assumes.
    "namespace_without_object_exists_with_default_label": (
        [node("n1"), node("n2"), pod("db", "  nodeName: n1\n" + C, meta=", labels: {app: db}", namespace="team-b"),
         pod("incoming", C + "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}, namespaceSelector: "
             "{matchLabels: {kubernetes.io/metadata.name: team-b}}}]}}\n")],
        "default/incoming", {"n1": ("InterPodAffinity", ("node(s) didn't match pod anti-affinity rules",)),
                             "n2": None}),
    # ... and adds the volumes VolumeAttachments attach to the node (even the incoming pod's own).
    "volume_limit_counts_volume_attachments": (
        [node("n1"), SC_EBS, CSINODE_N1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"), csi_pv("pv-b", "b"),
         bound_pvc("b", "pv-b"), pod("r1", "  nodeName: n1\n" + C + uses("a")),
         "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: "
         "ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv-b}}\n", pod("incoming", C + uses("b"))],
        "default/incoming", {"n1": ("NodeVolumeLimits", ("node(s) exceed max volume count",))}),
    # ... a volume a running pod on the node already uses is no new attachment: it fits under a
    # limit the node has already reached (limit 1, r1 uses a, the incoming pod uses a) ...
    "volume_limit_shared_volume_adds_none": (
        [node("n1"), SC_EBS, CSINODE_1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"),
         pod("r1", "  nodeName: n1\n" + C + uses("a")), pod("incoming", C + uses("a"))],
        "default/incoming", {"n1": None}),
    # ... only its volumes no pod there uses are new (limit 2: r1 holds a, r2 holds c; a is
    # shared, b is new: 2 + 1 > 2) ...
    "volume_limit_counts_only_new_volumes": (
        [node("n1"), SC_EBS, CSINODE_N1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"), csi_pv("pv-b", "b"),
         bound_pvc("b", "pv-b"), csi_pv("pv-c", "c"), bound_pvc("c", "pv-c"),
         pod("r1", "  nodeName: n1\n" + C + uses("a")), pod("r2", "  nodeName: n1\n" + C + uses("c")),
         pod("incoming", C + uses("a", "b"))],
        "default/incoming", {"n1": ("NodeVolumeLimits", ("node(s) exceed max volume count",))}),
    # ... (limit 2, only r1 with a: a shared, b new: 1 + 1 fits) ...
    "volume_limit_partly_shared_fits": (
        [node("n1"), SC_EBS, CSINODE_N1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"), csi_pv("pv-b", "b"),
         bound_pvc("b", "pv-b"), pod("r1", "  nodeName: n1\n" + C + uses("a")),
         pod("incoming", C + uses("a", "b"))],
        "default/incoming", {"n1": None}),
    # ... and a VolumeAttachment of a volume a running pod uses counts once with it (limit 2).
    "volume_limit_attachment_of_a_running_pods_volume_counts_once": (
        [node("n1"), SC_EBS, CSINODE_N1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"), csi_pv("pv-b", "b"),
         bound_pvc("b", "pv-b"), pod("r1", "  nodeName: n1\n" + C + uses("a")),
         "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: "
         "ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv-a}}\n", pod("incoming", C + uses("b"))],
        "default/incoming", {"n1": None}),
    # VolumeRestrictions' disk conflicts between in-tree disks written into pods: the same GCE disk
    # read-only everywhere is fine, a writer conflicts; an EBS volume always; rbd when monitors overlap.
    "inline_gce_disk_read_only_everywhere_shares": (
        [node("n1"), pod("r1", "  nodeName: n1\n" + C + disk("gcePersistentDisk: {pdName: pd1, readOnly: true}")),
         pod("incoming", C + disk("gcePersistentDisk: {pdName: pd1, readOnly: true}"))],
        "default/incoming", {"n1": None}),
    "inline_gce_disk_conflicts_with_a_writer": (
        [node("n1"), node("n2"), pod("r1", "  nodeName: n1\n" + C + disk("gcePersistentDisk: {pdName: pd1}")),
         pod("incoming", C + disk("gcePersistentDisk: {pdName: pd1, readOnly: true}"))],
        "default/incoming", {"n1": DISK, "n2": None}),
    "inline_ebs_volume_always_conflicts": (
        [node("n1"), pod("r1", "  nodeName: n1\n" + C + disk("awsElasticBlockStore: {volumeID: vol-1, readOnly: true}")),
         pod("incoming", C + disk("awsElasticBlockStore: {volumeID: vol-1, readOnly: true}"))],
        "default/incoming", {"n1": DISK}),
    "inline_rbd_conflicts_only_with_overlapping_monitors": (
        [node("n1"), node("n2"),
         pod("r1", "  nodeName: n1\n" + C + disk("rbd: {monitors: [m1, m2], pool: p, image: img}")),
         pod("r2", "  nodeName: n2\n" + C + disk("rbd: {monitors: [m3], pool: p, image: img}")),
         pod("incoming", C + disk("rbd: {monitors: [m2], pool: p, image: img, readOnly: true}"))],
        "default/incoming", {"n1": DISK, "n2": None}),
    "inline_iscsi_read_only_everywhere_shares": (
        [node("n1"), node("n2"),
         pod("r1", "  nodeName: n1\n" + C + disk("iscsi: {targetPortal: '10.0.0.1:3260', iqn: q1, lun: 0, readOnly: true}")),
         pod("r2", "  nodeName: n2\n" + C + disk("iscsi: {targetPortal: '10.0.0.1:3260', iqn: q1, lun: 0}")),
         pod("incoming", C + disk("iscsi: {targetPortal: '10.0.0.1:3260', iqn: q1, lun: 0, readOnly: true}"))],
        "default/incoming", {"n1": None, "n2": DISK}),
    # NodeVolumeLimits counts a migrated in-tree inline volume as its CSI driver's (the node has a
    # CSINode) ...
    "migrated_inline_ebs_counts_against_the_csi_limit": (
        [node("n1"), SC_EBS, CSINODE_1, csi_pv("pv-b", "b"), bound_pvc("b", "pv-b"),
         pod("r1", "  nodeName: n1\n" + C + disk("awsElasticBlockStore: {volumeID: vol-1}")),
         pod("incoming", C + uses("b"))],
        "default/incoming", {"n1": ("NodeVolumeLimits", ("node(s) exceed max volume count",))}),
    # ... under the CSI volume's own name: the PV whose handle is that volume is no new one.
    "migrated_inline_ebs_and_its_csi_pv_count_once": (
        [node("n1"), SC_EBS, CSINODE_1, csi_pv("vol-1", "b"), bound_pvc("b", "vol-1"),
         pod("r1", "  nodeName: n1\n" + C + disk("awsElasticBlockStore: {volumeID: vol-1}")),
         pod("incoming", C + uses("b"))],
        "default/incoming", {"n1": None}),
    # A StatefulSet replica's own claim (<template>-<set>-<ordinal>) bound to a local PV pins it to
    # that PV's node (the set and its other replica in the input).
    "statefulset_replica_claim_pins_it": (
        [node("n1"), node("n2"), SC_WFFC, STS_WEB,
         pv("pv-0", LOCAL_N1 + ", claimRef: {namespace: default, name: data-web-0}", phase="Bound"),
         pv("pv-1", LOCAL_N2 + ", claimRef: {namespace: default, name: data-web-1}", phase="Bound"),
         pvc("data-web-0", ", storageClassName: local, volumeName: pv-0",
             ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}"),
         pvc("data-web-1", ", storageClassName: local, volumeName: pv-1",
             ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}"),
         replica("web-0", "n1"), replica("web-1", None)],
        "default/web-1", {"n1": (VB, ("node(s) didn't match PersistentVolume's node affinity",)), "n2": None}),
    # VolumeZone reads ``persistentVolumeClaim`` volumes only: a generic ephemeral volume's claim bound
    # to a PV of another zone does not stop the pod there (VolumeBinding checks the PV's node affinity).
    "volume_zone_skips_ephemeral_claims": (
        [node("n1", labels="{kubernetes.io/hostname: n1, topology.kubernetes.io/zone: z1}"), SC_EBS,
         pv("pv-e", ", storageClassName: ebs, csi: {driver: ebs.csi.aws.com, volumeHandle: pv-e}, claimRef: "
                    "{namespace: default, name: incoming-scratch}", meta=", labels: {topology.kubernetes.io/zone: z2}",
            phase="Bound"),
         pvc("incoming-scratch", ", storageClassName: ebs, volumeName: pv-e",
             ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}, ownerReferences: [{apiVersion: v1, kind: Pod, "
             "name: incoming, uid: u-in, controller: true}]"),
         pod("incoming", C + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
             "[ReadWriteOnce], storageClassName: ebs, resources: {requests: {storage: 10Gi}}}}}}]\n",
             meta=", uid: u-in")],
        "default/incoming", {"n1": None}),
    # ... and a terminating pod still holds its ReadWriteOncePod claim.
    "volume_rwop_held_by_terminating_pod": (
        [node("n1"), SC_EBS, csi_pv("pv-a", "a"),
         bound_pvc("a", "pv-a").replace("[ReadWriteOnce]", "[ReadWriteOncePod]"),
         pod("old", "  nodeName: n1\n" + C + uses("a"), meta=TERMINATING), pod("incoming", C + uses("a"))],
        "default/incoming", {"n1": ("VolumeRestrictions", (
            "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "
            "another pod",))}),
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


def type_verdicts(name: str, type_name: str) -> dict:
    """symreach's verdict for a new pod of ``type_name`` on every node, in the class's σ0."""
    from symreach import semantics
    from symreach.frontends.kubernetes import load_kubernetes_documents

    state = _state(name)
    inst, _ = load_kubernetes_documents(state.objects, "<state>")
    t, sigma = inst.type_index(type_name), inst.initial_config()
    out = {}
    for n, node_ in enumerate(inst.nodes):
        failure = semantics.node_failure(inst, t, n, sigma)
        out[node_.name] = None if failure is None else (failure.plugin, failure.reasons)
    return out


def test_new_pods_of_a_resized_pods_type_hold_the_spec():
    """A resized running pod is a non-creatable type of its own (what it holds); the type new pods
    of its spec get holds the spec: kso's answer for a pending copy (was Insufficient cpu)."""
    from symreach.frontends.kubernetes import load_kubernetes_documents

    name = "resize_new_pod_of_the_spec_holds_the_spec"
    inst, report = load_kubernetes_documents(_state(name).objects, "<state>")
    assert report.attachments["default/big"] == "default/resized/big"
    assert report.resized == {"default/big": "default/big"}
    assert [(p.name, p.creatable) for p in inst.pod_types] == [
        ("default/big", True), ("default/resized/big", False), ("default/big-copy", True)]
    assert type_verdicts(name, "default/big") == CLASSES[name][2] == {"n1": None}
    # The ReplicaSet's pods: new ones (the pending pod's type) hold the spec; the resized one holds 3.
    sibling = "resize_sibling_of_absent_replicaset_holds_the_spec"
    inst, report = load_kubernetes_documents(_state(sibling).objects, "<state>")
    assert report.pending["default/web-b"] == report.resized["default/web-a"] == "default/web"
    assert type_verdicts(sibling, "default/web") == CLASSES[sibling][2]


CASES = sorted(p for p in (Path(__file__).parent / "data" / "kso_cases").glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_kso_volume_cases(case):
    """kso's own volume cases (copied from shared/tools/kso/cases, with its answers)."""
    expected = json.loads(case.with_suffix(".expected.json").read_text())
    objects = [o for doc in yaml.safe_load_all(case.read_text()) if doc
               for o in (doc["items"] if doc.get("kind") == "List" else [doc])]
    got = symreach_verdicts(any_state(objects, expected["pod"]))
    want = {n: None if n in expected["feasible"] else parse_reason(expected["reasons"][n]) for n in got}
    assert got == want


def test_volume_cases_are_all_there():
    assert len(CASES) == 9


def test_namespace_without_object_marks_answers_that_read_namespace_labels():
    from symreach.frontends.kubernetes import load_kubernetes_documents

    _, report = load_kubernetes_documents(_state("namespace_without_object_exists_with_default_label").objects, "<s>")
    assert list(report.caveats) == ["default/incoming"]
    assert "team-b" in report.caveats["default/incoming"][0] and "default" in report.caveats["default/incoming"][0]


def test_shared_volume_under_an_attach_limit_carries_no_caveat():
    """The class left open last session is modelled: no caveat on the answer any more."""
    from symreach.frontends.kubernetes import load_kubernetes_documents

    _, report = load_kubernetes_documents(_state("volume_limit_shared_volume_adds_none").objects, "<state>")
    assert report.caveats == {}


def test_filter_verdict_that_depends_on_the_informer_order_is_existential():
    """Claims a (ReadWriteOnce) and b (ReadWriteMany), PVs pv-a (both modes) and pv-b (ReadWriteOnce) of
    equal size: ``findMatchingVolumes`` gives a the first of the two its informer lists (Go map order),
    and b finds a PV only if a took pv-b. kso, asked 16 times about this state, said "node(s) didn't
    find available persistent volumes to bind" 15 times and fit once (64 more runs:
    ``tests/test_volume_order.py``): some run of the scheduler fits, so the pod can reach n1
    (reachability is existential over the scheduler's runs) and nothing is left to mark."""
    from symreach.frontends.kubernetes import load_kubernetes_documents

    docs = [node("n1"), SC_WFFC, pv("pv-a", LOCAL_N1).replace("[ReadWriteOnce]", "[ReadWriteOnce, ReadWriteMany]"),
            pv("pv-b", LOCAL_N1), pvc("a"), pvc("b").replace("[ReadWriteOnce]", "[ReadWriteMany]"),
            pod("incoming", C + uses("a", "b"))]
    state = any_state([yaml.safe_load(d) for d in docs], "default/incoming")
    assert symreach_verdicts(state) == {"n1": None}
    _, report = load_kubernetes_documents(state.objects, "<state>")
    assert report.caveats == {}


def test_ephemeral_claim_taking_another_drivers_pv_is_state():
    """An ephemeral claim of class ebs (provisioner ebs.csi.aws.com) that may take an Available PV of
    another CSI driver, n1 limiting ebs: a deployed pod's volume then counts under the PV's driver
    (``getCSIDriverInfo``). The type's pods holding such a PV are state (a pod slot, ``pods of
    default/web``; deletions name what their pod holds: ``tests/test_volume_holdings.py``), so no
    mark; a class without such a PV has no slot."""
    from symreach.frontends.kubernetes import load_kubernetes_documents

    sc = SC_EBS.replace("provisioner: ebs.csi.aws.com\n", "provisioner: ebs.csi.aws.com\n"
                        "volumeBindingMode: WaitForFirstConsumer\n")
    other = pv("pv-o", ", storageClassName: ebs, csi: {driver: other.csi.example.com, volumeHandle: pv-o}")
    scratch = ("  volumes: [{name: s, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], "
               "storageClassName: ebs, resources: {requests: {storage: 10Gi}}}}}}]\n")
    web = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n"
           "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
           + "".join("    " + line + "\n" for line in (C + scratch).splitlines()))
    docs = [yaml.safe_load(d) for d in (node("n1"), node("n2"), sc, CSINODE_N1, other, web)]
    inst, report = load_kubernetes_documents(docs, "<state>")
    assert not any("another CSI driver" in c for cs in report.caveats.values() for c in cs)
    assert "pods of default/web" in [b.claim for b in inst.bindings]
    inst, report = load_kubernetes_documents([d for d in docs if d["metadata"]["name"] != "pv-o"], "<state>")
    assert not any(b.claim.startswith("pods of") for b in inst.bindings)
