"""The volume objects the kube-scheduler reads, settled as a running cluster has them.

PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities are indexed by name. Hand-written states are settled the
way the API server and the PV controller would leave them a moment later (as
kso does): a claim without ``storageClassName`` gets the default StorageClass,
a PV without ``status.phase`` becomes ``Bound`` when its ``claimRef`` names a
claim bound to it (else ``Available``), and a claim whose ``volumeName`` names
a PV free for it gets the ``bind-completed`` annotation (and the PV its
claimRef). ``k8s_volume_filters`` evaluates the volume plugins on this index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

VOLUME_KINDS = frozenset({"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                          "CSIStorageCapacity", "VolumeAttachment"})
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


@dataclass
class VolumeIndex:
    """The volume objects of the input, by name, settled (``settle``) before use."""

    volumes: dict[str, dict] = field(default_factory=dict)
    claims: dict[tuple[str, str], dict] = field(default_factory=dict)
    classes: dict[str, dict] = field(default_factory=dict)
    csi_nodes: dict[str, dict] = field(default_factory=dict)
    csi_drivers: dict[str, dict] = field(default_factory=dict)
    capacities: list[dict] = field(default_factory=list)
    attachments: list[dict] = field(default_factory=list)
    default_class: Optional[str] = None
    kinds: set[str] = field(default_factory=set)   # kinds the input has at all

    def add(self, kind: str, data: dict, namespace: str, name: str) -> None:
        self.kinds.add(kind)
        if kind == "PersistentVolume":
            self.volumes[name] = data
        elif kind == "PersistentVolumeClaim":
            self.claims[(namespace, name)] = data
        elif kind == "StorageClass":
            self.classes[name] = data
            if any(annotations(data).get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS):
                self.default_class = name
        elif kind == "CSINode":
            self.csi_nodes[name] = data
        elif kind == "CSIDriver":
            self.csi_drivers[name] = data
        elif kind == "CSIStorageCapacity":
            self.capacities.append(data)
        elif kind == "VolumeAttachment":
            self.attachments.append(data)

    def settle(self) -> list[str]:
        """Apply what admission and the PV controller would do; returns what changed."""
        changes = []
        for (ns, name), claim in self.claims.items():
            spec = as_dict(claim.get("spec"))
            if "storageClassName" not in spec and self.default_class is not None:
                claim["spec"] = dict(spec, storageClassName=self.default_class)
                changes.append(f"claim {ns}/{name} gets the default StorageClass {self.default_class!r}")
        for name, volume in self.volumes.items():
            if as_dict(volume.get("status")).get("phase"):
                continue
            ref = as_dict(as_dict(volume.get("spec")).get("claimRef"))
            claim = self.claims.get((ref.get("namespace") or "default", ref.get("name") or ""))
            bound = claim is not None and as_dict(claim.get("spec")).get("volumeName") == name
            volume["status"] = dict(as_dict(volume.get("status")), phase="Bound" if bound else "Available")
        for (ns, name), claim in self.claims.items():
            volume_name = as_dict(claim.get("spec")).get("volumeName")
            volume = self.volumes.get(volume_name) if isinstance(volume_name, str) else None
            if volume is None or BIND_COMPLETED in annotations(claim):
                continue
            ref = as_dict(as_dict(volume.get("spec")).get("claimRef"))
            if ref and (ref.get("name") != name or (ref.get("namespace") or "default") != ns):
                continue
            meta = claim.setdefault("metadata", {})
            meta["annotations"] = dict(annotations(claim), **{BIND_COMPLETED: "yes"})
            volume.setdefault("spec", {})["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": name}
            volume["status"] = dict(as_dict(volume.get("status")), phase="Bound")
            changes.append(f"claim {ns}/{name} is bound to PersistentVolume {volume_name!r}")
        return changes

    def claim_class(self, claim: dict) -> str:
        """``GetPersistentVolumeClaimClass``: the class name, "" for none."""
        name = as_dict(claim.get("spec")).get("storageClassName")
        if isinstance(name, str):
            return name
        return as_dict(as_dict(claim.get("metadata")).get("annotations")).get("volume.beta.kubernetes.io/storage-class", "")

    def delayed(self, claim: dict) -> bool:
        """``IsDelayBindingMode``: the claim's class binds at the first consumer (a missing class does not)."""
        storage_class = self.classes.get(self.claim_class(claim))
        return storage_class is not None and storage_class.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER

    def attach_limits(self, node: str) -> dict[str, int]:
        """A node's CSI attach limits per driver, from its CSINode's ``allocatable.count``."""
        out: dict[str, int] = {}
        for driver in as_list(as_dict(self.csi_nodes.get(node, {}).get("spec")).get("drivers")):
            driver = as_dict(driver)
            count = as_dict(driver.get("allocatable")).get("count")
            if isinstance(count, int) and not isinstance(count, bool) and isinstance(driver.get("name"), str):
                out[driver["name"]] = count
        return out


    def attached(self, node: str) -> dict[str, set[str]]:
        """The CSI volumes VolumeAttachments attach to ``node``, per attacher (their PV must
        exist and be a CSI volume), named ``attacher/volumeHandle`` as the scheduler does."""
        out: dict[str, set[str]] = {}
        for attachment in self.attachments:
            spec = as_dict(attachment.get("spec"))
            attacher = spec.get("attacher")
            pv = self.volumes.get(as_dict(spec.get("source")).get("persistentVolumeName") or "")
            csi = as_dict(pv.get("spec")).get("csi") if pv is not None else None
            if spec.get("nodeName") == node and isinstance(attacher, str) and attacher and isinstance(csi, dict):
                out.setdefault(attacher, set()).add(f"{attacher}/{as_dict(csi).get('volumeHandle') or ''}")
        return out


def bound(claim: dict) -> bool:
    """``isPVCFullyBound``: a volume name and the bind-completed annotation."""
    return bool(as_dict(claim.get("spec")).get("volumeName")) and BIND_COMPLETED in annotations(claim)


def annotations(obj: dict) -> dict:
    return as_dict(as_dict(obj.get("metadata")).get("annotations"))


def statefulset_claim(owner_name: str):
    """A predicate for the claims a StatefulSet made for its pods: ``<template>-<set>-<ordinal>``."""
    pattern = re.compile(rf".+-{re.escape(owner_name)}-\d+\Z")
    return lambda claim: bool(pattern.match(claim))


def as_dict(value: object) -> dict:
    """``value`` if it is a mapping, else an empty one (objects are not validated here)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list:
    """``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []
