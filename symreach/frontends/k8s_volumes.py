"""Volumes that decide placement: PersistentVolumes, claims and StorageClasses (SPEC 2.1).

What the kube-scheduler's VolumeBinding filter does with a *bound* claim is
modelled exactly: the pod may only go where the PersistentVolume's
``spec.nodeAffinity.required`` matches (local volumes, zonal disks). That is a
static node constraint, ANDed here into the pod's required node affinity, so
the rest of symreach needs no notion of volumes.

Everything else about volumes becomes a warning caveat instead of a silent
"anywhere": a claim that is not in the input, a bound claim whose volume is
not in the input, an unbound claim or a ``volumeClaimTemplate`` (StatefulSets,
generic ephemeral volumes) unless its StorageClass lets it bind anywhere
(``WaitForFirstConsumer``, no ``allowedTopologies``, a dynamic provisioner),
and legacy zone labels on volumes (the VolumeZone filter). Attach limits
(NodeVolumeLimits), CSI storage capacity and ReadWriteOncePod conflicts are
out of scope, and said so in README and SPEC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from symreach.loader.shapes import copy_plain

VOLUME_KINDS = frozenset({"PersistentVolume", "PersistentVolumeClaim", "StorageClass"})
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")
NO_PROVISIONER = "kubernetes.io/no-provisioner"
ZONE_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region",
               "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region")


@dataclass
class VolumeIndex:
    """The PersistentVolumes, claims and StorageClasses of the input, by name."""

    volumes: dict[str, dict] = field(default_factory=dict)
    claims: dict[tuple[str, str], dict] = field(default_factory=dict)
    classes: dict[str, dict] = field(default_factory=dict)
    default_class: Optional[str] = None

    def add(self, kind: str, data: dict, namespace: str, name: str) -> None:
        if kind == "PersistentVolume":
            self.volumes[name] = data
        elif kind == "PersistentVolumeClaim":
            self.claims[(namespace, name)] = data
        elif kind == "StorageClass":
            self.classes[name] = data
            annotations = _dict(_dict(data.get("metadata")).get("annotations"))
            if any(annotations.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS):
                self.default_class = name

    def binds_anywhere(self, class_name: Optional[str]) -> tuple[bool, str]:
        """Whether a new claim of this class can be provisioned wherever the pod is scheduled."""
        name = class_name if class_name is not None else self.default_class
        if name == "":
            return False, "it names no StorageClass, so it binds only to an existing volume"
        if name is None:
            return False, "no StorageClass is named and no default StorageClass is in the input"
        storage_class = self.classes.get(name)
        if storage_class is None:
            return False, f"its StorageClass {name!r} is not in the input"
        if storage_class.get("volumeBindingMode") != "WaitForFirstConsumer":
            return False, f"StorageClass {name!r} binds immediately, wherever the provisioner chooses"
        if storage_class.get("allowedTopologies"):
            return False, f"StorageClass {name!r} restricts topologies (allowedTopologies)"
        if storage_class.get("provisioner") == NO_PROVISIONER:
            return False, f"StorageClass {name!r} has no provisioner: only existing volumes bind"
        return True, ""

    def constrain(self, spec: dict, namespace: str, skip_claim=None) -> tuple[list[list[dict]], list[str]]:
        """(PV node-affinity terms to AND in, caveats) for the claims of a pod spec.

        ``skip_claim(name)`` leaves out claims made from a StatefulSet's
        ``volumeClaimTemplates`` (a pod of a StatefulSet carries them; its template does not).
        """
        pins: list[list[dict]] = []
        caveats: list[str] = []
        for volume in spec.get("volumes") or []:
            if not isinstance(volume, dict):
                continue
            source = volume.get("persistentVolumeClaim")
            if isinstance(source, dict) and isinstance(source.get("claimName"), str):
                claim_name = source["claimName"]
                if skip_claim is not None and skip_claim(claim_name):
                    continue
                pin, caveat = self.claim_constraint(namespace, claim_name)
                if pin is not None:
                    pins.append(pin)
                if caveat:
                    caveats.append(caveat)
            ephemeral = volume.get("ephemeral")
            if isinstance(ephemeral, dict):
                template = _dict(_dict(ephemeral.get("volumeClaimTemplate")).get("spec"))
                ok, why = self.binds_anywhere(template.get("storageClassName"))
                if not ok:
                    caveats.append(f"ephemeral volume {volume.get('name')!r}: {why}; where it can bind is not modelled")
        return pins, caveats

    def statefulset_caveats(self, namespace: str, name: str, templates: list) -> list[str]:
        """Caveats for a StatefulSet's ``volumeClaimTemplates`` and for its replicas' existing claims."""
        caveats = []
        for template in templates:
            template = _dict(template)
            ok, why = self.binds_anywhere(_dict(template.get("spec")).get("storageClassName"))
            if not ok:
                caveats.append(f"volumeClaimTemplate {_dict(template.get('metadata')).get('name')!r}: {why}; each "
                               "replica's volume may tie it to a node or zone, which is not modelled")
        of_replica = statefulset_claim(name)
        for claim_namespace, claim in self.claims:
            if claim_namespace == namespace and of_replica(claim) and self.claim_constraint(namespace, claim)[0]:
                caveats.append(f"claim {namespace}/{claim} of a replica is bound to a node-pinned volume; replicas "
                               "pinned one by one are not modelled (every replica may go where the template allows)")
                break
        return caveats

    def claim_constraint(self, namespace: str, claim_name: str) -> tuple[Optional[list[dict]], str]:
        claim = self.claims.get((namespace, claim_name))
        if claim is None:
            return None, f"claim {namespace}/{claim_name} is not in the input; where its volume lets the pod run is unknown"
        spec = _dict(claim.get("spec"))
        volume_name = spec.get("volumeName")
        if not volume_name:
            ok, why = self.binds_anywhere(spec.get("storageClassName"))
            return None, "" if ok else f"claim {namespace}/{claim_name} is not bound and {why}"
        volume = self.volumes.get(volume_name)
        if volume is None:
            return None, (f"claim {namespace}/{claim_name} is bound to PersistentVolume {volume_name!r}, "
                          "which is not in the input")
        terms = node_affinity_terms(volume)
        zones = [k for k in ZONE_LABELS if k in _dict(_dict(volume.get("metadata")).get("labels"))]
        caveat = ""
        if zones and terms is None:
            caveat = (f"PersistentVolume {volume_name!r} carries zone labels ({', '.join(zones)}) but no node "
                      "affinity; the VolumeZone filter is not modelled")
        return terms, caveat


def node_affinity_terms(volume: dict) -> Optional[list[dict]]:
    """The node selector terms of a PersistentVolume's required node affinity, if any."""
    required = _dict(_dict(_dict(volume.get("spec")).get("nodeAffinity")).get("required"))
    terms = required.get("nodeSelectorTerms")
    return copy_plain(terms) if isinstance(terms, list) and terms else None


def and_node_terms(body: dict, pin: list[dict]) -> None:
    """AND the terms ``pin`` into the pod body's required node affinity (OR of terms on each side).

    (A1 or A2) and (B1 or B2) = (A1 and B1) or (A1 and B2) or ...; a term is a
    conjunction, so two terms AND by concatenating their expressions and fields.
    """
    affinity = body.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    own = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not own:
        combined = copy_plain(pin)
    else:
        combined = []
        for a in own:
            for b in pin:
                term: dict = {}
                for key in ("matchExpressions", "matchFields"):
                    items = list(_dict(a).get(key) or []) + list(_dict(b).get(key) or [])
                    if items:
                        term[key] = copy_plain(items)
                combined.append(term)
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": combined}


def statefulset_claim(owner_name: str):
    """A predicate for the claims a StatefulSet made for its pods: ``<template>-<set>-<ordinal>``."""
    pattern = re.compile(rf".+-{re.escape(owner_name)}-\d+\Z")
    return lambda claim: bool(pattern.match(claim))


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}
