"""Random volume objects and pod states for ``k8s_states``: claims, PersistentVolumes,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments; DaemonSet pods with and
without their DaemonSet, in-place resize status and terminating pods.

Everything is in the form the API server stores (claims bound with ``volumeName``,
the ``bind-completed`` annotation and the PV's ``claimRef``), dense in the cases
the volume plugins distinguish: bound volumes with node affinity or only zone
labels, Available local and zonal PVs for WaitForFirstConsumer claims, classes
with and without a provisioner, allowedTopologies and storage capacity, missing
claims, unbound Immediate claims, ReadWriteOncePod claims in use, CSI attach limits (volumes
shared between pods, VolumeAttachments, running pods' generic ephemeral volumes), a pending pod's
generic ephemeral claim (created or not, its pod's or another's, bound or not), in-tree EBS
PVs and inline in-tree disks (disk conflicts, migrated attach limits); a pending pod's running
sibling of a ReplicaSet not in the input, resized.
"""

from __future__ import annotations

import random
from typing import Any, Optional

from symreach.frontends.k8s_controllers import pin_daemon_pod
from symreach.generators.clusters import HOSTNAME, ZONE
from symreach.loader.shapes import copy_plain

Obj = dict[str, Any]

EBS = "ebs.csi.aws.com"
CAP = "cap.csi.example.com"
GCE_PD = "pd.csi.storage.gke.io"
_ZONES = ("z1", "z2", "z3")
_SIZES = ("5Gi", "10Gi", "50Gi")
_MODES = (["ReadWriteOnce"], ["ReadWriteOnce"], ["ReadWriteOncePod"], ["ReadWriteMany"],
          ["ReadWriteOnce", "ReadWriteMany"])
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"


class VolumeWorld:
    """The volume objects of one state, and the claims pods may use, per namespace."""

    def __init__(self, rng: random.Random, nodes: list[str], namespaces: list[str]) -> None:
        self.rng = rng
        self.nodes = nodes
        self.namespaces = namespaces
        self.objects: list[Obj] = []
        self.claims: dict[str, list[str]] = {ns: [] for ns in namespaces}
        self.classes: list[str] = []
        self._pv_count = 0
        self._build()

    # ---- the objects -----------------------------------------------------------------
    def _build(self) -> None:
        rng = self.rng
        self._classes()
        if rng.random() < 0.6:
            self._csi_nodes()
        if CAP in self._provisioners() and rng.random() < 0.8:
            self.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": CAP},
                                 "spec": {"storageCapacity": rng.random() < 0.8}})
            for zone in rng.sample(_ZONES, rng.choice((1, 2, 3))):
                cap: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                            "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"},
                            "storageClassName": "cap", "capacity": rng.choice(("1Gi", "8Gi", "100Gi")),
                            "nodeTopology": {"matchLabels": {ZONE: zone}}}
                if rng.random() < 0.2:
                    cap["maximumVolumeSize"] = rng.choice(("4Gi", "20Gi"))
                self.objects.append(cap)
        for _ in range(rng.choice((0, 1, 2, 3, 4))):
            self._available_pv()
        for ns in self.namespaces:
            for _ in range(rng.choice((0, 1, 2, 3))):
                self._claim(ns)
        csi = [o["metadata"]["name"] for o in self.objects if o["kind"] == "PersistentVolume" and "csi" in o["spec"]]
        for i in range(rng.choice((0, 0, 0, 1, 2))):
            self.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                 "metadata": {"name": f"va{i}"},
                                 "spec": {"attacher": EBS, "nodeName": rng.choice(self.nodes),
                                          "source": {"persistentVolumeName": rng.choice(csi + ["gone"])}},
                                 "status": {"attached": rng.random() < 0.8}})

    def _provisioners(self) -> set[str]:
        return {o.get("provisioner") for o in self.objects if o["kind"] == "StorageClass"}

    def _classes(self) -> None:
        rng = self.rng
        kinds = rng.sample(("std", "wffc", "local", "cap", "zonal"), rng.choice((1, 2, 3, 4)))
        default = rng.choice(kinds + [None, None])
        for name in kinds:
            sc: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                       "provisioner": {"local": "kubernetes.io/no-provisioner", "cap": CAP}.get(name, EBS)}
            if name != "std" or rng.random() < 0.5:
                sc["volumeBindingMode"] = "Immediate" if name == "std" else "WaitForFirstConsumer"
            if name == "zonal":
                sc["allowedTopologies"] = [{"matchLabelExpressions": [
                    {"key": ZONE, "values": sorted(rng.sample(_ZONES, rng.choice((1, 2))))}]}]
            if name == default:
                sc["metadata"]["annotations"] = {DEFAULT_CLASS: "true"}
            self.objects.append(sc)
            self.classes.append(name)

    def _csi_nodes(self) -> None:
        for node in self.nodes:
            if self.rng.random() < 0.7:
                drivers = []
                for name in (EBS, GCE_PD):
                    if name == GCE_PD and self.rng.random() < 0.7:
                        continue
                    driver: Obj = {"name": name, "nodeID": f"i-{node}"}
                    if self.rng.random() < 0.8:
                        driver["allocatable"] = {"count": self.rng.choice((0, 1, 1, 2, 2, 3))}
                    drivers.append(driver)
                self.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                     "metadata": {"name": node}, "spec": {"drivers": drivers}})

    def _pv(self, storage_class: str, modes: list[str], *, size: Optional[str] = None) -> Obj:
        rng = self.rng
        self._pv_count += 1
        name = f"pv{self._pv_count}"
        spec: Obj = {"capacity": {"storage": size or rng.choice(_SIZES)}, "accessModes": modes,
                     "storageClassName": storage_class}
        meta: Obj = {"name": name}
        roll = rng.random()
        if storage_class == "local" or roll < 0.3:
            spec["local"] = {"path": f"/mnt/{name}"}
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": HOSTNAME, "operator": "In", "values": [rng.choice(self.nodes + ["ghost"])]}]}]}}
        elif roll < 0.38:   # an in-tree EBS volume, counted as the CSI driver's (migration)
            spec["awsElasticBlockStore"] = {"volumeID": f"vol-{name}"}
        else:
            spec["csi"] = {"driver": EBS, "volumeHandle": f"vol-{name}"}
            if roll < 0.65:
                spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": ZONE, "operator": "In", "values": sorted(rng.sample(_ZONES, rng.choice((1, 2))))}]}]}}
            elif roll < 0.85:
                meta["labels"] = {ZONE: rng.choice(_ZONES + ("z1__z2",))}
        pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}
        self.objects.append(pv)
        return pv

    def _available_pv(self) -> None:
        storage_class = self.rng.choice(self.classes)
        pv = self._pv(storage_class, self.rng.choice(_MODES))
        pv["status"] = {"phase": "Available"}

    def _claim(self, namespace: str) -> None:
        rng = self.rng
        name = f"c{sum(len(c) for c in self.claims.values())}"
        modes = rng.choice(_MODES)
        spec: Obj = {"accessModes": modes, "resources": {"requests": {"storage": rng.choice(_SIZES)}}}
        roll = rng.random()
        storage_class = rng.choice(self.classes)
        if roll < 0.1:
            spec["storageClassName"] = rng.choice(("", "gone"))
        elif roll < 0.9 or not any(DEFAULT_CLASS in (o["metadata"].get("annotations") or {})
                                   for o in self.objects if o["kind"] == "StorageClass"):
            spec["storageClassName"] = storage_class
        meta: Obj = {"name": name, "namespace": namespace}
        claim: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
        if rng.random() < 0.45 and "storageClassName" in spec and spec["storageClassName"] in self.classes:
            pv = self._pv(spec["storageClassName"], modes, size=spec["resources"]["requests"]["storage"])
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
            pv["status"] = {"phase": "Bound"}
            spec["volumeName"] = pv["metadata"]["name"]
            meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            claim["status"] = {"phase": "Bound"}
        self.objects.append(claim)
        self.claims[namespace].append(name)

    # ---- pods ------------------------------------------------------------------------
    def volumes_for(self, namespace: str, *, pending: bool, pod_name: str = "incoming") -> list[Obj]:
        """A pod's volumes: claims of its namespace (often one another pod uses too), sometimes a
        missing one, an ephemeral one (a running pod's with its claim bound), in-tree inline disks."""
        rng = self.rng
        out: list[Obj] = []
        names = set()
        for i in range(rng.choice((0, 1, 1, 2) if pending else (0, 0, 1, 1, 2))):
            pool = self.claims[namespace]
            if pool and rng.random() < 0.9:
                claim = rng.choice(pool)
            else:
                claim = "missing"
            if claim in names:
                continue
            names.add(claim)
            out.append({"name": f"v{i}", "persistentVolumeClaim": {"claimName": claim}})
        if rng.random() < (0.05 if pending else 0.08):
            out.append({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}})
            if not pending and "std" in self.classes:
                self._ephemeral_claim(namespace, pod_name, f"{pod_name}-scratch")
            elif pending and rng.random() < 0.6:
                self._pending_ephemeral_claim(namespace, pod_name)
        if rng.random() < 0.2:
            out += inline_disks(rng)
        return out

    def _ephemeral_claim(self, namespace: str, owner: str, name: str) -> None:
        """The claim the ephemeral volume controller made for a running pod (its controller
        owner reference names the pod's uid ``uid-<pod>``), bound to a CSI PV."""
        pv = self._pv("std", ["ReadWriteOnce"], size="1Gi")
        pv["spec"].pop("local", None)
        pv["spec"].pop("awsElasticBlockStore", None)
        pv["spec"].pop("nodeAffinity", None)
        pv["spec"]["csi"] = {"driver": EBS, "volumeHandle": f"vol-{pv['metadata']['name']}"}
        pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
        pv["status"] = {"phase": "Bound"}
        self.objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                             "metadata": {"name": name, "namespace": namespace,
                                          "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                                          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "controller": True,
                                                               "name": owner, "uid": f"uid-{owner}"}]},
                             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "std",
                                      "volumeName": pv["metadata"]["name"], "resources": {"requests": {"storage": "1Gi"}}},
                             "status": {"phase": "Bound"}})


    def _pending_ephemeral_claim(self, namespace: str, owner: str) -> None:
        """The claim the ephemeral volume controller made for a pending pod: controlled by the pod
        (``uid-<namespace>-<pod>``, the uid kso gives a pod without one) or by another pod, of one of
        the classes (a WaitForFirstConsumer one binds when the pod is scheduled), rarely bound."""
        rng = self.rng
        uid = f"uid-{namespace}-{owner}" if rng.random() < 0.75 else "uid-other"
        spec: Obj = {"accessModes": ["ReadWriteOnce"], "storageClassName": rng.choice(self.classes),
                     "resources": {"requests": {"storage": "1Gi"}}}
        meta: Obj = {"name": f"{owner}-scratch", "namespace": namespace,
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "controller": True, "name": owner,
                                          "uid": uid}]}
        if rng.random() < 0.2:
            pv = self._pv(spec["storageClassName"], ["ReadWriteOnce"], size="1Gi")
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": meta["name"]}
            pv["status"] = {"phase": "Bound"}
            spec["volumeName"] = pv["metadata"]["name"]
            meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        self.objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec})

    def statefulset(self, namespace: str, template_spec: Obj, labels: dict[str, str],
                    stored: bool = False) -> tuple[list[Obj], str]:
        """A StatefulSet ``db`` with a volumeClaimTemplate ``data``: its object, each replica's own
        claim ``data-db-<i>`` (bound to a local, zonal or CSI PV, or unbound), the replicas before
        the last bound to nodes, the last pending; returns the objects and the pending pod's name.
        ``stored``: the template's selectors were merged with labels since changed, so each pod
        carries a ``uid`` (``stored_pod_meta``)."""
        rng = self.rng
        replicas = rng.choice((1, 2, 3))
        template = copy_plain(template_spec)
        template.pop("volumes", None)
        storage_class = rng.choice(self.classes)
        out: list[Obj] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": namespace},
                           "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "serviceName": "db",
                                    "template": {"metadata": {"labels": dict(labels)}, "spec": copy_plain(template)},
                                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                                        "accessModes": rng.choice(_MODES), "storageClassName": storage_class,
                                        "resources": {"requests": {"storage": "10Gi"}}}}]}}]
        owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "db-uid", "controller": True}]
        for i in range(replicas):
            claim = f"data-db-{i}"
            self._replica_claim(namespace, claim, storage_class)
            body: Obj = copy_plain(template)
            body["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
            if i < replicas - 1:
                body["nodeName"] = rng.choice(self.nodes)
            out.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": stored_pod_meta(f"db-{i}", namespace, labels, owner, stored), "spec": body})
        return out, f"db-{replicas - 1}"

    def _replica_claim(self, namespace: str, name: str, storage_class: str) -> None:
        spec: Obj = {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": "10Gi"}}}
        claim: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {"name": name, "namespace": namespace}, "spec": spec}
        if self.rng.random() < 0.75:
            pv = self._pv(storage_class, ["ReadWriteOnce"], size="10Gi")
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
            pv["status"] = {"phase": "Bound"}
            spec["volumeName"] = pv["metadata"]["name"]
            claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            claim["status"] = {"phase": "Bound"}
        self.objects.append(claim)


def inline_disks(rng: random.Random) -> list[Obj]:
    """One or two in-tree disks written into the pod, from small pools so that pods share them."""
    out = []
    for i in range(rng.choice((1, 1, 2))):
        kind = rng.choice(("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi", "azureDisk", "cinder"))
        read_only = rng.random() < 0.5
        source: Obj = {
            "gcePersistentDisk": {"pdName": rng.choice(("pd1", "pd2"))},
            "awsElasticBlockStore": {"volumeID": rng.choice(("vol-i1", "vol-i2", "aws://z1/vol-i1"))},
            "rbd": {"monitors": rng.sample(["m1", "m2", "m3"], rng.choice((1, 2))), "pool": "rbd",
                    "image": rng.choice(("img1", "img2"))},
            "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": rng.choice(("iqn.a", "iqn.b")), "lun": 0},
            "azureDisk": {"diskName": "d1", "diskURI": rng.choice(("/subs/d1", "/subs/d2")), "kind": "Managed"},
            "cinder": {"volumeID": rng.choice(("c1", "c2"))},
        }[kind]
        if read_only:
            source["readOnly"] = True
        out.append({"name": f"disk{i}", kind: source})
    return out


# ---- pods as controllers and the kubelet leave them ---------------------------------

def daemonset_pods(rng: random.Random, template_spec: Obj, labels: dict[str, str], namespace: str,
                   nodes: list[str], pending_node: Optional[str],
                   stored: bool = False) -> tuple[list[Obj], Optional[Obj]]:
    """The pods the DaemonSet controller made from ``template_spec`` (bound on some nodes,
    pending on ``pending_node``), and the DaemonSet itself half of the time; ``stored`` as in
    ``VolumeWorld.statefulset``.

    The template gets no node selection of its own: the controller replaces a pod's
    required node affinity by its node pin and creates pods only on nodes the
    template selects, which this leaves to every node.
    """
    template_spec = copy_plain(template_spec)  # type: ignore[assignment]
    template_spec.pop("nodeSelector", None)
    (template_spec.get("affinity") or {}).pop("nodeAffinity", None)
    if template_spec.get("affinity") == {}:
        del template_spec["affinity"]
    pods = []
    owner = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds-uid", "controller": True}]
    for node in nodes:
        if node != pending_node and rng.random() < 0.6 or node == pending_node:
            body: Obj = copy_plain(template_spec)  # type: ignore[assignment]
            pin_daemon_pod(body, node, False)
            if node != pending_node:
                body["nodeName"] = node
            name = "incoming" if node == pending_node else f"ds-{node}"
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": stored_pod_meta(name, namespace, labels, owner, stored), "spec": body})
            if node != pending_node and rng.random() < 0.2:
                resize_status(rng, pods[-1])
    daemonset = None
    if rng.random() < 0.5:
        daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": namespace},
                     "spec": {"selector": {"matchLabels": dict(labels)},
                              "template": {"metadata": {"labels": dict(labels)}, "spec": copy_plain(template_spec)}}}
    return pods, daemonset


def stored_pod_meta(name: str, namespace: str, labels: dict[str, str], owner: list[Obj], stored: bool) -> Obj:
    """A controller's pod's metadata. A pod made from a template whose selectors the API server
    merged with labels that have changed since must say it is stored (``uid``): the API server
    would merge a new pod's ``matchLabelKeys`` with its present labels, and symreach does so for a
    pod without a ``uid`` (state 167 of ``kso_agreement --volumes --contested --seed 822``)."""
    meta: Obj = {"name": name, "namespace": namespace, "labels": dict(labels), "ownerReferences": owner}
    if stored:
        meta["uid"] = f"uid-{name}"
    return meta


def resize_status(rng: random.Random, pod: Obj) -> None:
    """In-place resize status on a bound pod: actual and allocated requests differing from the spec."""
    statuses = []
    for container in pod["spec"]["containers"]:
        status: Obj = {"name": container["name"], "ready": True, "restartCount": 0, "image": container["image"],
                       "imageID": ""}
        if rng.random() < 0.7:
            status["resources"] = {"requests": {"cpu": rng.choice(("100m", "500m", "1", "2"))}}
        if rng.random() < 0.6:
            status["allocatedResources"] = {"cpu": rng.choice(("100m", "1", "1500m"))}
        statuses.append(status)
    pod["status"] = {"phase": "Running", "containerStatuses": statuses}
    if rng.random() < 0.25:
        pod["status"]["conditions"] = [{"type": "PodResizePending", "status": "True",
                                        "reason": rng.choice(("Infeasible", "Deferred"))}]


def replicaset_sibling(rng: random.Random, pending: Obj, nodes: list[str]) -> Obj:
    """``pending`` made a pod of a ReplicaSet not in the input, and a running pod of the same
    ReplicaSet and spec on some node, mostly resized in place (new pods of the ReplicaSet hold
    their spec, the running one what its status says)."""
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs-7c9f", "uid": "rs-uid", "controller": True}]
    pending["metadata"]["ownerReferences"] = owner
    sibling: Obj = copy_plain(pending)  # type: ignore[assignment]
    sibling["metadata"]["name"] = pending["metadata"]["name"] + "-sib"
    if "uid" in sibling["metadata"]:
        sibling["metadata"]["uid"] += "-sib"
    sibling["spec"]["nodeName"] = rng.choice(nodes)
    if rng.random() < 0.8:
        resize_status(rng, sibling)
    return sibling


def terminating(pod: Obj) -> None:
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    pod["metadata"]["deletionGracePeriodSeconds"] = 30

