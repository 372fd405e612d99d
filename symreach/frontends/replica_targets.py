"""The ``controllers:`` section for ``--keep-replicas`` (SPEC 5.2), from a Kubernetes input.

For every Deployment, ReplicaSet (one without its Deployment in the input)
and StatefulSet of the input: its ``spec.replicas`` and the pod types of the
running pods it owns (its template's type and older revisions'). A
StatefulSet also lists its running pods by name with the nodes their own
claims allow (``<template>-<set>-<ordinal>`` bound to a PV with node
affinity or a zone: the volume plugins' verdict for the pod's full spec,
``k8s_volume_filters.pod_volumes``), so a replica comes back under its name
where its volume is. ``loader.controllers`` reads the section.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

from symreach.frontends.k8s_volume_filters import pod_volumes

KINDS = ("Deployment", "ReplicaSet", "StatefulSet")
_ORDINAL = re.compile(r"-(\d+)\Z")


class ReplicaTargets:
    """Collects, pod by pod, what each controller runs; ``section`` writes the v1 entries."""

    def __init__(self) -> None:
        self.types: dict[tuple[str, str, str], set[str]] = {}
        self.pods: dict[tuple[str, str, str], list[tuple[str, Optional[list[str]]]]] = {}

    def running(self, workload, type_name: str, pod_name: str, node: str, spec: dict, volumes, nodes: list[dict]) -> None:
        """A running pod that ``workload`` (the top controller, e.g. the Deployment of its ReplicaSet) owns."""
        if workload is None or workload.kind not in KINDS:
            return
        key = (workload.kind, workload.namespace, workload.name)
        self.types.setdefault(key, set()).add(type_name)
        if workload.kind == "StatefulSet":
            found = pod_volumes(volumes, spec, workload.namespace, pod_name, nodes)
            allowed = [] if found.prefilter is not None else [n["name"] for n in nodes if n["name"] not in found.filters]
            if node not in allowed:
                allowed.append(node)  # it runs there
            self.pods.setdefault(key, []).append((pod_name, None if len(allowed) == len(nodes) else allowed))

    def section(self, workloads: Iterable, replicas_of: Callable[[object], int]) -> list[dict]:
        """One entry per top-level controller (``workloads``: none owned by another in the input)."""
        out = []
        for workload in workloads:
            key = (workload.kind, workload.namespace, workload.name)
            if workload.kind not in KINDS or workload.type_name is None:
                continue
            entry: dict = {"kind": workload.kind, "name": workload.name, "namespace": workload.namespace,
                           "replicas": replicas_of(workload),
                           "podTypes": sorted(self.types.get(key, set()) | {workload.type_name})}
            pods = sorted(self.pods.get(key, ()), key=lambda p: _ordinal(p[0]))
            if pods:
                entry["pods"] = [{"name": name} if nodes is None else {"name": name, "nodes": nodes}
                                 for name, nodes in pods]
            out.append(entry)
        return out


def _ordinal(name: str) -> tuple[int, str]:
    match = _ORDINAL.search(name)
    return (int(match.group(1)) if match else 1 << 30, name)
