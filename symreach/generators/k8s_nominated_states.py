"""Random cluster states with pod priorities and nominated pods, for the kso differential.

``k8s_states`` leaves nominations and priorities out. Here each of its states
gets, with some probability: ``spec.priority`` on its pods (as the API server
stores it, from a small set so that ties are common), one to three more
pending pods nominated (``status.nominatedNodeName``) to one of its nodes,
and a nomination of the state's own pending pod. Every pending pod of a state
is a question: ``NominatedState.pending`` lists them. ``small_states`` are
smaller states whose pending pods often fit, for walks of several deployments.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Optional

from symreach.generators.k8s_states import Obj, random_pod, random_states

PRIORITIES = (-5, 0, 0, 10, 10, 100)
_APPS = ("a", "b")
_KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone")


@dataclass
class NominatedState:
    objects: list[Obj]
    pending: list[str]                 # every pending pod, "namespace/name"
    nodes: list[str] = field(default_factory=list)
    nominated: int = 0                 # pending pods with status.nominatedNodeName


def _is_pending(obj: Obj) -> bool:
    return obj["kind"] == "Pod" and not obj["spec"].get("nodeName")


def _key(obj: Obj) -> str:
    return f"{obj['metadata'].get('namespace') or 'default'}/{obj['metadata']['name']}"


def _nominee(rng: random.Random, objects: list[Obj], name: str, namespaces: list[str], nodes: list[str]) -> Obj:
    """A pending pod to nominate: a copy of a pod of the state (the pending one's spec and labels, so that
    its ports, spread and affinity meet the question's; or a running one's, with its anti-affinity) or a
    new random pod; sometimes with a large CPU request, so that it takes a node's room."""
    pods = [o for o in objects if o["kind"] == "Pod" and not o["metadata"].get("deletionTimestamp")]
    draw = rng.random()
    if pods and draw < 0.7:
        source = rng.choice([o for o in pods if _is_pending(o)] or pods) if draw < 0.4 else rng.choice(pods)
        pod = copy.deepcopy(source)
        pod["metadata"] = {k: v for k, v in pod["metadata"].items() if k in ("namespace", "labels")}
        pod["metadata"]["name"] = name
        pod["spec"].pop("nodeName", None)
        pod.pop("status", None)
    else:
        pod = random_pod(rng, name, rng.choice(namespaces), nodes, None)
    pod["metadata"]["uid"] = f"uid-{name}"
    if rng.random() < 0.3:
        for container in pod["spec"]["containers"]:
            container.setdefault("resources", {}).setdefault("requests", {})["cpu"] = rng.choice(("1", "2", "4"))
            limits = container["resources"].get("limits")
            if isinstance(limits, dict):
                limits.pop("cpu", None)
    return pod


def nominated_states(count: int, seed: int) -> list[NominatedState]:
    """``count`` states from one seed (``k8s_states.random_states`` of the same seed, then this module's
    own draws): the same arguments give the same states."""
    rng = random.Random(seed * 7919 + 17)
    out = []
    for state in random_states(count, seed):
        objects = state.objects
        nodes = state.nodes
        namespaces = sorted({_key(o).split("/")[0] for o in objects if o["kind"] == "Pod"} | {"default"})
        prioritised = rng.random() < 0.8
        if prioritised:
            for obj in objects:
                if obj["kind"] == "Pod" and rng.random() < 0.8:
                    obj["spec"]["priority"] = rng.choice(PRIORITIES)
        nominated = 0
        if rng.random() < 0.85:
            for k in range(rng.choice((1, 1, 2, 3))):
                pod = _nominee(rng, objects, f"nom{k}", namespaces, nodes)
                if prioritised:
                    pod["spec"]["priority"] = rng.choice(PRIORITIES)
                pod["status"] = {"phase": "Pending", "nominatedNodeName": rng.choice(nodes)}
                objects.append(pod)
                nominated += 1
        own = next((o for o in objects if _is_pending(o) and _key(o) == state.pending), None)
        if own is not None and rng.random() < 0.25:
            own.setdefault("status", {})["nominatedNodeName"] = rng.choice(nodes)
            nominated += 1
        pending = [_key(o) for o in objects if _is_pending(o) and (o.get("status") or {}).get("phase")
                   not in ("Succeeded", "Failed")]
        out.append(NominatedState(objects, pending, nodes, nominated))
    return out


def _small_pod(rng: random.Random, name: str, nodes: list[str], node: Optional[str]) -> Obj:
    """A pod from a small vocabulary (CPU, one host port, app label, anti-affinity, spread, affinity), so
    that pending pods often fit somewhere and meet each other's ports, labels and terms."""
    container: Obj = {"name": "c", "image": "registry.k8s.io/pause:3.10",
                      "resources": {"requests": {"cpu": rng.choice(("500m", "1", "1", "2"))}}}
    if rng.random() < 0.3:
        container["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
    app = rng.choice(_APPS)
    spec: Obj = {"containers": [container], "priority": rng.choice(PRIORITIES)}
    terms: Obj = {}
    if rng.random() < 0.25:
        terms["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": rng.choice(_APPS)}}, "topologyKey": rng.choice(_KEYS)}]}
    if rng.random() < 0.1:
        terms["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": rng.choice(_APPS)}}, "topologyKey": rng.choice(_KEYS)}]}
    if terms:
        spec["affinity"] = terms
    if rng.random() < 0.25:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": rng.choice(_KEYS),
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    status: Obj = {"phase": "Running" if node else "Pending"}
    if node:
        spec["nodeName"] = node
    elif rng.random() < 0.6:
        status["nominatedNodeName"] = rng.choice(nodes)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": app}},
            "spec": spec, "status": status}


def small_states(count: int, seed: int) -> list[NominatedState]:
    """States for walks: 2-3 nodes of 2-4 CPUs in two zones, 0-3 running pods and 2-4 pending ones of
    ``_small_pod``'s vocabulary, most pending ones nominated."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        nodes = [f"n{i}" for i in range(rng.choice((2, 3)))]
        objects: list[Obj] = [{"apiVersion": "v1", "kind": "Node",
                               "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n,
                                                                  "topology.kubernetes.io/zone": f"z{i % 2}"}},
                               "status": {"allocatable": {"cpu": rng.choice(("2", "3", "4")), "memory": "8Gi",
                                                          "pods": "110"}}} for i, n in enumerate(nodes)]
        objects += [_small_pod(rng, f"r{i}", nodes, rng.choice(nodes)) for i in range(rng.choice((0, 1, 2, 3)))]
        pending = [_small_pod(rng, f"p{i}", nodes, None) for i in range(rng.choice((2, 3, 4)))]
        objects += pending
        out.append(NominatedState(objects, [_key(p) for p in pending], nodes,
                                  sum(1 for p in pending if "nominatedNodeName" in p["status"])))
    return out
