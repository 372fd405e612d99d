"""A cockroachdb-like Kubernetes dump: a StatefulSet with required anti-affinity whose only
free node is busy with ~25 pods, one of them a DaemonSet pod.

Replicas already run on the two other nodes, so the next replica can only go
to ``busy``; the ordinary pods there use 7 of its 8 CPUs (20 small pods of
250m, ``big`` pods of 500m) plus 100m of node-exporter and 100m of the static pod kube-proxy. A replica needs 2
CPUs: deleting three big pods is the shortest way, and no DaemonSet or
static pod needs to go.
"""

from __future__ import annotations

from typing import Any

HOST = "kubernetes.io/hostname"


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, "topology.kubernetes.io/zone": "z1"}},
            "spec": {}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def _container(cpu: str) -> list[dict[str, Any]]:
    return [{"name": "main", "image": "example", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]


def _pod(ns: str, name: str, labels: dict, owner_kind: str, owner: str, node: str, cpu: str,
         affinity: dict | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": _container(cpu), "nodeName": node}
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind, "name": owner,
                                              "controller": True, "uid": f"uid-{owner}"}]},
            "spec": spec, "status": {"phase": "Running"}}


def _workload(kind: str, ns: str, name: str, labels: dict, cpu: str, replicas: int,
              affinity: dict | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": _container(cpu)}
    if affinity:
        spec["affinity"] = affinity
    body: dict[str, Any] = {"selector": {"matchLabels": labels},
                            "template": {"metadata": {"labels": labels}, "spec": spec}}
    if kind != "DaemonSet":
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
            "spec": body}


def busy_node_dump(small: int = 20, big: int = 4) -> dict[str, Any]:
    """The dump as one ``v1/List``; the target is ``default/cockroachdb`` on ``busy``."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cockroachdb"}}, "topologyKey": HOST}]}}
    items = [_node("busy"), _node("n2"), _node("n3")]
    items.append(_workload("StatefulSet", "default", "cockroachdb", {"app": "cockroachdb"}, "2", 3, anti))
    items.append(_workload("DaemonSet", "kube-system", "node-exporter", {"app": "node-exporter"}, "100m", 0))
    for i, node in enumerate(("n2", "n3")):
        items.append(_pod("default", f"cockroachdb-{i}", {"app": "cockroachdb"}, "StatefulSet", "cockroachdb",
                          node, "2", anti))
    for node in ("busy", "n2", "n3"):
        items.append(_pod("kube-system", f"node-exporter-{node}", {"app": "node-exporter"}, "DaemonSet",
                          "node-exporter", node, "100m"))
    mirror = _pod("kube-system", "kube-proxy-busy", {"component": "kube-proxy"}, "Node", "busy", "busy", "100m")
    mirror["metadata"]["ownerReferences"][0]["apiVersion"] = "v1"
    items.append(mirror)
    for i in range(small):
        app = f"web-{i // 2}"
        items.append(_workload("Deployment", "shop", app, {"app": app}, "250m", 2)) if i % 2 == 0 else None
        items.append(_pod("shop", f"{app}-{i}", {"app": app}, "ReplicaSet", f"{app}-rs", "busy", "250m"))
    for i in range(big):
        app = f"batch-{i // 2}"
        items.append(_workload("Deployment", "jobs", app, {"app": app}, "500m", 2)) if i % 2 == 0 else None
        items.append(_pod("jobs", f"{app}-{i}", {"app": app}, "ReplicaSet", f"{app}-rs", "busy", "500m"))
    return {"apiVersion": "v1", "kind": "List", "items": items}
