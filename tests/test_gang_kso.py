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


# ---- the scheduler's cycle for a CompositePodGroup, checked by kso step by step ------------------

CYCLE_SCENARIOS = 16


def composite_scenario(seed: int) -> list[dict]:
    """A root CompositePodGroup over 2-3 PodGroups whose members need each other (affinity to
    another leaf's members, anti-affinity, zone spread, capacity), on 2-4 small nodes."""
    rng = random.Random(1000 + seed)
    nodes = [f"n{i}" for i in range(rng.randint(2, 4))]
    objects = [_node(n, rng) for n in nodes]
    for i in range(rng.randint(0, 2)):
        objects.append(_pod(f"bg{i}", rng.choice(["m0", "web"]), rng.randint(0, 1), rng.choice(nodes)))
    leaves = rng.randint(2, 3)
    objects.append({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                    "metadata": {"name": "root", "namespace": "ml"},
                    "spec": {"schedulingPolicy": {"gang": {"minGroupCount": rng.randint(1, leaves)}}}})
    for k in range(leaves):
        app = f"m{k}"
        spec: dict = {"schedulingGroup": {"podGroupName": app}}
        if k > 0 and rng.random() < 0.5:
            spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term("m0", rng.choice([HOST, ZONE]))]}}
        elif rng.random() < 0.4:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term(app, HOST)]}}
        if rng.random() < 0.3:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable":
                                                  "DoNotSchedule", "labelSelector": {"matchLabels": {"app": app}}}]
        count = rng.randint(1, 3)
        policy = {"basic": {}} if rng.random() < 0.3 else {"gang": {"minCount": rng.randint(1, count)}}
        objects.append({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
                        "metadata": {"name": app, "namespace": "ml"},
                        "spec": {"parentCompositePodGroupName": "root", "schedulingPolicy": policy}})
        cpu = rng.randint(0, 2)
        objects += [_pod(f"{app}-{i}", app, cpu, spec=copy.deepcopy(spec)) for i in range(count)]
    return objects


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
def test_composite_cycle_runs_agree_with_kso_member_by_member():
    """Every member a simulated run assumes is feasible on its node for kso in the state before it
    (missed groups' pods reverted), and every member it skips is refused by kso on every node; the
    hierarchy's gang step from the current state is replayed on kso member by member too."""
    from benchmarks.operator_kso import node_objects, running_pods
    from symreach import gangs
    from symreach.export.traces import pod_manifest

    states: list[State] = []
    claims: list[tuple[str, object]] = []     # (node the run chose, or None: fits nowhere)
    runs = steps = 0
    for seed in range(CYCLE_SCENARIOS):
        objects = composite_scenario(seed)
        inst, _ = load_kubernetes_documents(objects, f"<composite {seed}>")
        cycle = gangs.scheduler_cycle(inst, gangs.gang_of(inst, "ml/root"), inst.initial_config())
        nodes = node_objects(inst, objects)
        step = answer(inst, "ml/root").placement_now or ()
        steps += bool(step)
        for run in (cycle.failing, cycle.succeeding, tuple(step)):
            if not run:
                continue
            runs += 1
            for config, entry in gangs.run_states(inst, inst.initial_config(), run):
                if isinstance(entry, gangs.Mark):
                    continue
                t, n = entry
                pending = pod_manifest(inst.pod_types[t], f"member-{len(states)}", inst.nodes[0].name, pin="nodeName")
                del pending["spec"]["nodeName"]
                states.append(State(nodes + running_pods(inst, config) + [pending],
                                    f"ml/member-{len(states)}", [node.name for node in inst.nodes]))
                claims.append(None if n is None else inst.nodes[n].name)
    verdicts = kso_verdicts(states, KSO, workers=2)
    wrong = [(s.pending, node, v) for s, node, v in zip(states, claims, verdicts)
             if (node is not None and v[node] is not None) or (node is None and any(x is None for x in v.values()))]
    assert not wrong, wrong[:3]
    skipped = sum(node is None for node in claims)
    assert runs >= 30 and steps >= 14 and len(states) >= 100 and skipped >= 5, (runs, steps, len(states), skipped)
