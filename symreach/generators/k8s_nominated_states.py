"""Random cluster states with pod priorities and nominated pods, for the kso differential.

``k8s_states`` leaves nominations and priorities out. Here each of its states
gets, with some probability: ``spec.priority`` on its pods (as the API server
stores it, from a small set so that ties are common), one to three more
pending pods nominated (``status.nominatedNodeName``) to one of its nodes,
and a nomination of the state's own pending pod. Every pending pod of a state
is a question: ``NominatedState.pending`` lists them.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

from symreach.generators.k8s_states import Obj, random_pod, random_states

PRIORITIES = (-5, 0, 0, 10, 10, 100)


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
