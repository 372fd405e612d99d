"""Gang witnesses replayed through the real kube-scheduler (kso), member by member.

Random Kubernetes states with a PodGroup whose pending members depend on
each other (affinity to another member, anti-affinity among themselves,
zone spread, capacity). For each gang step symreach finds from the current
state, member i is asked of kso in the state with the running pods and
members 0..i-1 bound where the step put them: kso must find member i's node
feasible. Skipped where ``shared/tools/kso/kso`` is absent.
"""

from __future__ import annotations

import copy
import random

import pytest

from benchmarks.kso_harness import State, find_kso, kso_verdicts
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.solvers.gang_explicit import answer

KSO = find_kso()
SCENARIOS = 60
HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"


def _node(name: str, rng: random.Random) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, ZONE: rng.choice("ab")}},
            "status": {"allocatable": {"cpu": str(rng.randint(2, 4)), "pods": str(rng.randint(2, 4))}}}


def _pod(name: str, app: str, cpu: int, node: str = "", spec: dict | None = None) -> dict:
    body = dict(spec or {})
    body["containers"] = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": str(cpu)}}}]
    if node:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", "labels": {"app": app}},
            "spec": body}


def _term(app: str, key: str) -> dict:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def scenario(seed: int) -> tuple[list[dict], dict[str, dict]]:
    """Objects, and per member spec base name a pending Pod object of it."""
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(rng.randint(2, 4))]
    objects = [_node(n, rng) for n in nodes]
    for i in range(rng.randint(0, 3)):
        objects.append(_pod(f"bg{i}", rng.choice(["m0", "m1", "web"]), rng.randint(0, 1), rng.choice(nodes)))
    specs: dict[str, dict] = {}
    total = 0
    for k in range(rng.randint(1, 2)):
        app = f"m{k}"
        spec: dict = {"schedulingGroup": {"podGroupName": "g"}}
        affinity: dict = {}
        if k == 1 and rng.random() < 0.6:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term("m0", rng.choice([HOST, ZONE]))]}
        if rng.random() < 0.4:
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(app, HOST)]}
        if affinity:
            spec["affinity"] = affinity
        if rng.random() < 0.3:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable":
                                                  "DoNotSchedule", "labelSelector": {"matchLabels": {"app": app}}}]
        cpu = rng.randint(0, 2)
        count = rng.randint(1, 3)
        total += count
        specs[f"ml/g/{app}"] = _pod(app, app, cpu, spec=spec)
        for i in range(count):
            objects.append(_pod(f"{app}-{i}", app, cpu, spec=copy.deepcopy(spec)))
    objects.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": "g", "namespace": "ml"},
                    "spec": {"schedulingPolicy": {"gang": {"minCount": rng.randint(1, total)}}}})
    return objects, specs


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
def test_gang_steps_replay_on_kso_member_by_member():
    states: list[State] = []
    expected: list[str] = []
    witnesses = 0
    for seed in range(SCENARIOS):
        objects, specs = scenario(seed)
        inst, _ = load_kubernetes_documents(objects, f"<scenario {seed}>")
        ans = answer(inst, "ml/g")
        if ans.placement_now is None:
            continue
        witnesses += 1
        bound = [o for o in objects if o["kind"] != "PodGroup" and
                 (o["kind"] != "Pod" or o["spec"].get("nodeName"))]
        for i, (t, n) in enumerate(ans.placement_now):
            pending = copy.deepcopy(specs[inst.pod_types[t].name])
            pending["metadata"]["name"] = f"member-{i}"
            states.append(State(bound + [pending], f"ml/member-{i}", [o["metadata"]["name"] for o in objects
                                                                     if o["kind"] == "Node"]))
            expected.append(inst.nodes[n].name)
            placed = copy.deepcopy(pending)
            placed["spec"]["nodeName"] = inst.nodes[n].name
            bound = bound + [placed]
    verdicts = kso_verdicts(states, KSO, workers=2)
    refused = [(s.pending, node, v[node]) for s, node, v in zip(states, expected, verdicts) if v[node] is not None]
    assert not refused
    assert witnesses >= 20 and len(states) >= 40, (witnesses, len(states))
