"""Small cluster states with nominated pods (``tests/test_nominated_kso.py``), one class each."""

from __future__ import annotations

from typing import Optional


def node(name: str, cpu: str = "2", pods: str = "110", zone: Optional[str] = None) -> dict:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods}}}


def pod(name: str, *, cpu: str = "1", priority: Optional[int] = 0, nominated: Optional[str] = None,
        on: Optional[str] = None, labels: Optional[dict] = None, port: Optional[int] = None, **spec: object) -> dict:
    container: dict = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    if port is not None:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    body: dict = {"containers": [container], **spec}
    if priority is not None:
        body["priority"] = priority
    if on:
        body["nodeName"] = on
    status: dict = {"phase": "Running" if on else "Pending"}
    if nominated:
        status["nominatedNodeName"] = nominated
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels or {"app": name}},
            "spec": body, "status": status}


def anti(app: str) -> dict:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}


def affinity(app: str) -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}


def spread(app: str) -> list:
    return [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": app}}}]


def rwop_claim(name: str, on_node: Optional[str] = None) -> list[dict]:
    """A ReadWriteOncePod claim bound to its local PV (pinned by hostname to ``on_node``, else a CSI
    volume any node can use)."""
    pv_spec: dict = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod"], "storageClassName": "",
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": name}}
    if on_node:
        pv_spec["local"] = {"path": f"/mnt/{name}"}
        pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [on_node]}]}]}}
    else:
        pv_spec["csi"] = {"driver": "csi.example.com", "volumeHandle": f"vol-{name}"}
    return [{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
             "spec": pv_spec, "status": {"phase": "Bound"}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "", "volumeName": f"pv-{name}",
                      "resources": {"requests": {"storage": "1Gi"}}},
             "status": {"phase": "Bound", "accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Gi"}}}]


def claim_volume(claim: str) -> list[dict]:
    return [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]


def in_tree_disk(name: str) -> dict:
    return {"name": "disk", "gcePersistentDisk": {"pdName": name}}


NODES = [node("n1"), node("n2")]

# name -> the state's objects (every pending pod is asked about on every node)
CASES: dict[str, list[dict]] = {
    # q (priority 100) is nominated to n1 and takes its 2 CPUs: p (0) does not fit there.
    "higher-priority-takes-cpu": NODES + [pod("q", cpu="2", priority=100, nominated="n1"), pod("p")],
    # Equal priority: added too.
    "equal-priority": NODES + [pod("q", cpu="2", priority=5, nominated="n1"), pod("p", priority=5)],
    # Lower priority: the nominated pod is not added.
    "lower-priority-ignored": NODES + [pod("q", cpu="2", priority=-5, nominated="n1"), pod("p")],
    # The nominated pod's anti-affinity would repel p from n1, but InterPodAffinity's PreFilter skips
    # (p has no terms, no running pod's anti-affinity matches p): the nominated pod is not looked at.
    "nominated-anti-affinity": NODES + [pod("q", cpu="100m", priority=10, nominated="n1", affinity=anti("p")),
                                        pod("p", cpu="100m")],
    # ... unless InterPodAffinity runs: a running pod's anti-affinity matches p (on n2), so PreFilter
    # does not skip and the nominated pod's term counts on n1 (AddPod).
    "nominated-anti-affinity-counted": [node("n1"), node("n2"), node("n3"),
                                        pod("r", cpu="100m", on="n2", affinity=anti("p")),
                                        pod("q", cpu="100m", priority=10, nominated="n1", affinity=anti("p")),
                                        pod("p", cpu="100m")],
    # p's own anti-affinity against the nominated pod.
    "own-anti-affinity": NODES + [pod("q", cpu="100m", priority=10, nominated="n1"),
                                  pod("p", cpu="100m", affinity=anti("q"))],
    # The nominated pod holds host port 8080 on n1.
    "host-port": NODES + [pod("q", cpu="100m", priority=10, nominated="n1", port=8080),
                          pod("p", cpu="100m", port=8080)],
    # The nominated pod counts in p's spread: n1 would hold 1 more than n2 before p.
    "spread": NODES + [pod("q", cpu="100m", priority=10, nominated="n1", labels={"app": "s"},
                           topologySpreadConstraints=spread("s")),
                       pod("p", cpu="100m", labels={"app": "s"}, topologySpreadConstraints=spread("s"))],
    # A pod's own nomination is never added (same UID): q fits n1; r (same priority) does not.
    "own-nomination": NODES + [pod("q", cpu="2", priority=0, nominated="n1"), pod("r", cpu="2", priority=0)],
    # p's pod affinity is met only with the nominated pod: the second run (without it) refuses.
    "affinity-second-run": NODES + [pod("q", cpu="100m", priority=10, nominated="n1", labels={"app": "q"}),
                                    pod("p", cpu="100m", affinity=affinity("q"))],
    # Two nominations to n1 and a running pod: p (20) counts both (3 CPUs taken), p0 (60) neither.
    "running-pods-and-two-nominations": [node("n1", cpu="3"), node("n2", cpu="3"),
                                         pod("a", cpu="1", on="n1"),
                                         pod("q1", cpu="1", priority=50, nominated="n1"),
                                         pod("q2", cpu="1", priority=20, nominated="n1"),
                                         pod("p", cpu="1", priority=20), pod("p0", cpu="1", priority=60)],
    # The nominated pod does not tolerate n1's taint: the scheduler adds it to n1 all the same.
    "nominated-where-it-would-not-fit": [dict(node("n1"), spec={"taints": [{"key": "k", "effect": "NoSchedule"}]}),
                                         node("n2"),
                                         pod("q", cpu="2", priority=100, nominated="n1"),
                                         pod("p", tolerations=[{"key": "k", "operator": "Exists"}])],
    # Pods the queue does not nominate: gated (PreEnqueue), another scheduler's, bound already.
    "not-nominated": NODES + [pod("g", cpu="2", priority=100, nominated="n1", schedulingGates=[{"name": "w"}]),
                              pod("o", cpu="2", priority=100, nominated="n1", schedulerName="other"),
                              dict(pod("b", cpu="1", priority=100, on="n2"),
                                   status={"phase": "Running", "nominatedNodeName": "n1"}),
                              pod("p")],
    # A nomination to a node not in the input filters nothing.
    "nominated-to-a-missing-node": NODES + [pod("q", cpu="2", priority=100, nominated="gone"), pod("p")],
    # q (nominated to n1) and p share a ReadWriteOncePod claim no running pod uses: VolumeRestrictions'
    # PreFilter skips for p (no in-tree disk, no conflict yet), AddPod too, so q's use counts nowhere.
    "rwop-nominated-skipped": NODES + rwop_claim("c") + [
        pod("q", cpu="100m", priority=10, nominated="n1", volumes=claim_volume("c")),
        pod("p", cpu="100m", volumes=claim_volume("c"))],
    # ... so the first run on n1 goes on to VolumeBinding (the PV is pinned to n2) and refuses there.
    "rwop-nominated-skipped-binding": NODES + rwop_claim("c", on_node="n2") + [
        pod("q", cpu="100m", priority=10, nominated="n1", volumes=claim_volume("c")),
        pod("p", cpu="100m", volumes=claim_volume("c"))],
    # p also mounts an in-tree disk: PreFilter does not skip, and AddPod counts q's use of the claim on n1.
    "rwop-nominated-with-disk": NODES + rwop_claim("c") + [
        pod("q", cpu="100m", priority=10, nominated="n1", volumes=claim_volume("c")),
        pod("p", cpu="100m", volumes=claim_volume("c") + [in_tree_disk("pd1")])],
}
