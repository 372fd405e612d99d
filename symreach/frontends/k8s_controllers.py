"""What Kubernetes controllers and admission do to pods, as far as scheduling sees it.

The front end needs this knowledge to relate running pods to the templates
they came from (owner references, the labels controllers add, the tolerations
admission plugins add) and to build the pods the DaemonSet controller creates.
"""

from __future__ import annotations

import json
import re
from typing import Optional

from symreach.loader.shapes import Path

# Where each workload kind keeps its pod template.
TEMPLATE_PATHS: dict[str, Path] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
# Labels that controllers add to the pods they create; ignored when matching
# a running pod to a template.
CONTROLLER_LABELS = frozenset({
    "pod-template-hash",
    "controller-revision-hash",
    "pod-template-generation",
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "job-name",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-completion-index",
})

# The DaemonSet controller's AddOrUpdateDaemonPodTolerations (daemonset_util.go).
DAEMONSET_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
HOST_NETWORK_TOLERATION = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists",
                           "effect": "NoSchedule"}
# Added to every pod by the DefaultTolerationSeconds admission plugin.
_ADMISSION_TOLERATION_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")

_NODE_NAME_FIELD = "metadata.name"


def controller_ref(meta: dict) -> Optional[dict]:
    """The controlling owner reference (``controller: true``), else the first one."""
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return None
    refs = [r for r in refs if isinstance(r, dict) and r.get("kind") and r.get("name")]
    for ref in refs:
        if ref.get("controller") is True:
            return ref
    return refs[0] if refs else None


def implied_parent(kind: str, name: str, labels: dict) -> Optional[tuple[str, str]]:
    """The Deployment (CronJob) of a ReplicaSet (Job) that is not in the input, from naming conventions."""
    if kind == "ReplicaSet":
        pod_hash = labels.get("pod-template-hash")
        if pod_hash and name.endswith("-" + pod_hash):
            return "Deployment", name[: -len(pod_hash) - 1]
    if kind == "Job":
        match = re.fullmatch(r"(.+)-\d+", name)
        if match:
            return "CronJob", match.group(1)
    return None


def controller_base_name(kind: str, name: str, labels: dict) -> str:
    parent = implied_parent(kind, name, labels)
    return parent[1] if parent else name


def without_controller_labels(body: dict) -> dict:
    out = dict(body)
    labels = {k: v for k, v in _mapping(body.get("labels")).items() if k not in CONTROLLER_LABELS}
    if labels:
        out["labels"] = labels
    else:
        out.pop("labels", None)
    return out


def signature(body: dict, *, strict: bool) -> str:
    """The scheduling-relevant spec of a pod type as a canonical string.

    Lenient: what a controller never changes between template and pod
    (labels without controller labels, requests, host ports, node selector,
    pod (anti-)affinity, hard spread). Strict adds tolerations (without the
    admission plugin's timed ones) and required node affinity, which the
    DaemonSet controller and admission plugins rewrite.
    """
    # Shapes are validated later, with line numbers; a malformed body still gets a signature.
    affinity = _mapping(body.get("affinity"))
    parts = {
        "namespace": body.get("namespace"),
        "labels": {k: v for k, v in _mapping(body.get("labels")).items() if k not in CONTROLLER_LABELS},
        "requests": body.get("requests") or {},
        "hostPorts": body.get("hostPorts") or [],
        "nodeSelector": body.get("nodeSelector") or {},
        "podAffinity": _required(affinity.get("podAffinity")),
        "podAntiAffinity": _required(affinity.get("podAntiAffinity")),
        "spread": [c for c in _sequence(body.get("topologySpreadConstraints"))
                   if isinstance(c, dict) and c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"],
    }
    if strict:
        parts["tolerations"] = [t for t in _sequence(body.get("tolerations")) if not _admission_toleration(t)]
        parts["nodeAffinity"] = _required(affinity.get("nodeAffinity"))
        parts["nodeName"] = body.get("nodeName")
    return json.dumps(parts, sort_keys=True, default=str)


def _mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _sequence(value: object) -> list:
    return value if isinstance(value, list) else []


def _required(part: object) -> object:
    if isinstance(part, dict):
        return part.get("requiredDuringSchedulingIgnoredDuringExecution")
    return None


def _admission_toleration(tol: object) -> bool:
    return (isinstance(tol, dict) and tol.get("key") in _ADMISSION_TOLERATION_KEYS
            and tol.get("effect") == "NoExecute" and tol.get("tolerationSeconds") is not None)


def required_node_terms(spec: dict) -> Optional[list]:
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict) or not isinstance(affinity.get("nodeAffinity"), dict):
        return None
    required = affinity["nodeAffinity"].get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        return None
    terms = required.get("nodeSelectorTerms")
    return terms if isinstance(terms, list) else None


def term_nonempty(term: object) -> bool:
    return isinstance(term, dict) and bool(term.get("matchExpressions") or term.get("matchFields"))


def pin_daemon_pod(body: dict, node: str, host_network: bool) -> None:
    """What the DaemonSet controller does to a pod it creates for ``node``.

    The controller replaces the required node affinity by ``metadata.name In
    [node]``, but only creates the pod where the template's own node affinity
    matches; adding the pin to each original term expresses both at once.
    """
    pin = {"key": _NODE_NAME_FIELD, "operator": "In", "values": [node]}
    affinity = body.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if terms:
        new_terms = []
        for term in terms:
            if not term_nonempty(term):
                continue  # an empty term matches no node
            term = dict(term)
            term["matchFields"] = list(term.get("matchFields") or []) + [pin]
            new_terms.append(term)
    else:
        new_terms = [{"matchFields": [pin]}]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": new_terms}
    tolerations = list(body.get("tolerations") or [])
    extra = list(DAEMONSET_TOLERATIONS) + ([HOST_NETWORK_TOLERATION] if host_network else [])
    for tol in extra:
        if not any(_same_toleration(tol, t) for t in tolerations):
            tolerations.append(dict(tol))
    body["tolerations"] = tolerations


def _same_toleration(a: dict, b: object) -> bool:
    return isinstance(b, dict) and all(a.get(k) == b.get(k) for k in ("key", "operator", "effect")) \
        and not b.get("value") and b.get("tolerationSeconds") is None


def pinned_node(body: dict) -> Optional[str]:
    """The node a pending DaemonSet pod is pinned to by ``matchFields metadata.name In [node]``."""
    terms = required_node_terms(body) or []
    for term in terms:
        for req in (term.get("matchFields") or []) if isinstance(term, dict) else []:
            if isinstance(req, dict) and req.get("key") == _NODE_NAME_FIELD and req.get("operator") == "In" \
                    and isinstance(req.get("values"), list) and len(req["values"]) == 1:
                return str(req["values"][0])
    return None


def stored(meta: dict) -> bool:
    """Whether an object comes from the API server (it set uid, creationTimestamp or resourceVersion)."""
    return any(meta.get(k) for k in ("uid", "creationTimestamp", "resourceVersion"))


def without_label_keys(body: dict) -> None:
    """Drop ``matchLabelKeys``/``mismatchLabelKeys`` from a stored pod's terms and spread constraints.

    The API server merged them into the label selectors when it created the pod
    (``PrepareForCreate``), with the labels the pod had then; the scheduler uses
    the stored selectors. Merging again with labels changed since would differ.
    """
    affinity = _mapping(body.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        for term in _sequence(_mapping(affinity.get(kind)).get("requiredDuringSchedulingIgnoredDuringExecution")):
            if isinstance(term, dict):
                term.pop("matchLabelKeys", None)
                term.pop("mismatchLabelKeys", None)
    for constraint in _sequence(body.get("topologySpreadConstraints")):
        if isinstance(constraint, dict):
            constraint.pop("matchLabelKeys", None)
