"""Replay symreach's witness traces against the real kube-scheduler (kso), step by step.

A *scenario* is a random Kubernetes dump in which the target pod needs other
pods first: a chain of pending pods, each requiring (pod affinity) a pod of
the previous one in its node or zone, on nodes with few pod slots and with
running pods in the way. symreach's explicit engine finds a witness trace;
then every deployment of the trace is asked of kso in the state it is made
in: the running pods of the current configuration, bound to their nodes, and
the deployed pod pending. kso must find the step's node feasible.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Optional, Sequence

from benchmarks.kso_harness import Verdict, kso_verdicts
from symreach import semantics
from symreach.frontends.k8s_volume_filters import bound_volume, taken_volume
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators import k8s_states as gen
from symreach.generators.k8s_volume_states import VolumeWorld
from symreach.model import Instance, Query
from symreach.result import DEPLOY, Step, Verdict as Answer
from symreach.solvers.base import Limits
from symreach.solvers.explicit import ExplicitEngine

MAX_STATES = 3_000  # explicit-engine budget per question: deterministic, unlike a timeout


@dataclass
class Witness:
    """A deployable answer: the dump, the target, and the trace symreach returned."""

    index: int
    objects: list[dict]
    target: str                 # pod type "ns/name"
    node: str
    trace: tuple[Step, ...]
    pods_of_type: dict[str, dict]           # pod type -> a Pod object of that type
    initial: dict[tuple[str, str], list[str]]  # (type, node) -> running pod names
    instance: Optional[Instance] = None         # to follow the claims the trace binds


def random_scenario(rng: random.Random, volumes: bool = False) -> tuple[list[dict], list[str]]:
    """A dump with a chain of pending pods; returns the objects and the chain (last = target).
    ``volumes``: with volume objects (``VolumeWorld``) and pods using claims and in-tree disks
    (no generic ephemeral volumes: a replayed pod is renamed, and its claim with it)."""
    nodes = [f"n{i}" for i in range(rng.choice((2, 3, 3)))]
    namespaces = list(gen.NAMESPACES[: rng.choice((1, 2))])
    objects: list[dict] = [gen.random_namespace(rng, ns) for ns in namespaces]
    world = VolumeWorld(rng, nodes, namespaces) if volumes else None
    if world is not None:
        objects += world.objects
    for name in nodes:
        node = gen.random_node(rng, name)
        alloc = node["status"].get("allocatable") or node["status"]["capacity"]
        alloc["pods"] = str(rng.choice((2, 2, 3, 4)))
        node.setdefault("metadata", {}).setdefault("labels", {})[gen.HOSTNAME] = name
        objects.append(node)
    for i in range(rng.choice((1, 2, 3))):
        ns = rng.choice(namespaces)
        objects.append(_with_volumes(world, gen.random_pod(rng, f"run{i}", ns, nodes, rng.choice(nodes)), ns))
    namespace = rng.choice(namespaces)
    chain = []
    for i in range(rng.choice((2, 3, 3))):
        pod = gen.random_pod(rng, f"chain{i}", namespace, nodes, None, labels={"app": f"c{i}"})
        # Fewer static obstacles than a random pending pod: the point is the chain.
        if rng.random() < 0.7:
            pod["spec"].pop("topologySpreadConstraints", None)
        affinity = pod["spec"].setdefault("affinity", {})
        affinity.pop("podAffinity", None)
        if rng.random() < 0.7:
            affinity.pop("nodeAffinity", None)
        if i > 0:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": f"c{i - 1}"}},
                "topologyKey": rng.choice((gen.HOSTNAME, gen.HOSTNAME, gen.ZONE))}]}
        if not affinity:
            del pod["spec"]["affinity"]
        objects.append(_with_volumes(world, pod, namespace))
        chain.append(f"{namespace}/chain{i}")
    return objects, chain


def _with_volumes(world: Optional[VolumeWorld], pod: dict, namespace: str) -> dict:
    if world is not None:
        volumes = [v for v in world.volumes_for(namespace, pending=True) if "ephemeral" not in v]
        if volumes:
            pod["spec"]["volumes"] = volumes
    return pod


def find_witness(index: int, objects: list[dict], chain: Sequence[str], min_steps: int = 2) -> Optional[Witness]:
    """symreach's witness for the chain's last pod on some node, if one needs ``min_steps`` steps."""
    inst, report = load_kubernetes_documents(copy.deepcopy(objects), f"<scenario {index}>")
    target = chain[-1]
    t = inst.type_index(target)
    for n, node in enumerate(inst.nodes):
        if inst.static_block[t][n] is not None:
            continue
        query = Query((frozenset({(t, n)}),), f"{target} on {node.name}")
        result = ExplicitEngine().check(inst, query, Limits(max_states=MAX_STATES))
        if result.verdict is Answer.DEPLOYABLE and len(result.trace) >= min_steps:
            return Witness(index, objects, target, node.name, tuple(result.trace),
                           _pods_of_type(objects, report.attachments), dict(report.initial_pod_names), inst)
    return None


def _pods_of_type(objects: list[dict], attachments: dict[str, str]) -> dict[str, dict]:
    out = {}
    for obj in objects:
        if obj["kind"] != "Pod":
            continue
        full = f"{obj['metadata'].get('namespace', 'default')}/{obj['metadata']['name']}"
        out.setdefault(attachments.get(full, full), obj)
    return out


def step_states(w: Witness) -> list[tuple[gen.State, str]]:
    """For every deployment of the trace: the state it is made in, and the node it targets."""
    base = [o for o in w.objects if o["kind"] != "Pod"]   # Namespaces, Nodes, the volume objects
    nodes = [o["metadata"]["name"] for o in base if o["kind"] == "Node"]
    running: dict[tuple[str, str], list[str]] = {k: list(v) for k, v in w.initial.items()}
    fresh = 0
    out = []
    inst = w.instance
    sigma = inst.initial_config() if inst is not None else ()
    for i, step in enumerate(w.trace):
        key = (step.pod, step.node)
        t, n = (inst.type_index(step.pod), inst.node_index(step.node)) if inst is not None else (0, 0)
        if step.op != DEPLOY:
            running[key].pop()
            sigma = semantics.delete(inst, sigma, t, n, step.holding) if inst is not None else sigma
            continue
        pending = _pod_copy(w.pods_of_type[step.pod], f"replay-step-{i}", None)
        objects = with_bindings(base, inst, sigma) + [_pod_copy(w.pods_of_type[t], name, node)
                                                      for (t, node), names in running.items() for name in names]
        ns = pending["metadata"].get("namespace", "default")
        out.append((gen.State(objects + [pending], f"{ns}/replay-step-{i}", nodes), step.node))
        fresh += 1
        running.setdefault(key, []).append(f"deployed-{fresh}")
        sigma = semantics.deploy_step(inst, sigma, step) if inst is not None else sigma
    return out


def with_bindings(base: list[dict], inst: Optional[Instance], sigma: tuple[int, ...]) -> list[dict]:
    """The volume objects with the claims the trace has bound so far bound, as the scheduler's
    PreBind and the PV controller leave them (``k8s_volume_filters.bound_volume``)."""
    if inst is None or not inst.bindings or not any(sigma[inst.num_pairs:]):
        return base
    out = copy.deepcopy(base)
    claims = {(o["metadata"].get("namespace", "default"), o["metadata"]["name"]): o
              for o in out if o["kind"] == "PersistentVolumeClaim"}
    volumes = {o["metadata"]["name"]: o for o in out if o["kind"] == "PersistentVolume"}
    classes = {o["metadata"]["name"]: o for o in out if o["kind"] == "StorageClass"}
    default = next((c for c in classes.values() if ((c["metadata"].get("annotations") or {})
                                                     .get("storageclass.kubernetes.io/is-default-class") == "true")), None)
    for claim, k in zip(inst.bindings, sigma[inst.num_pairs:]):
        if not k:
            continue
        if claim.outcomes[k - 1].startswith("taken:"):   # PVs ephemeral claims took, gone with their pods
            for pv in claim.outcomes[k - 1][6:].split(","):
                taken = taken_volume(volumes[pv])
                out[out.index(volumes[pv])] = taken
                volumes[pv] = taken
            continue
        key = tuple(claim.claim.split("/", 1))
        pvc = claims[key]
        spec = pvc.get("spec") or {}
        cls = classes.get(spec["storageClassName"]) if "storageClassName" in spec else default
        bound, name, volume = bound_volume(pvc, key[0], key[1], claim.outcomes[k - 1], volumes, cls)
        out[out.index(pvc)] = bound
        if name in volumes:
            out[out.index(volumes[name])] = volume
        else:
            out.append(volume)
    return out


def _pod_copy(pod: dict, name: str, node: Optional[str]) -> dict:
    out = copy.deepcopy(pod)
    out["metadata"]["name"] = name
    out["spec"].pop("nodeName", None)
    if node is not None:
        out["spec"]["nodeName"] = node
    return out


def replay(witnesses: Sequence[Witness], kso) -> list[list[tuple[str, Verdict]]]:
    """kso's verdict on each deployment's node, per witness, in trace order."""
    plan = [(k, state, node) for k, w in enumerate(witnesses) for state, node in step_states(w)]
    verdicts = kso_verdicts([state for _, state, _ in plan], kso)
    out: list[list[tuple[str, Verdict]]] = [[] for _ in witnesses]
    for (k, _, node), verdict in zip(plan, verdicts):
        out[k].append((node, verdict[node]))
    return out


def witnesses(count: int, seed: int, max_tries: int = 50, volumes: bool = False) -> list[Witness]:
    """``count`` witnesses from seeded scenarios (scenarios without a long enough witness are skipped)."""
    rng = random.Random(seed)
    out: list[Witness] = []
    tries = 0
    while len(out) < count and tries < count * max_tries:
        objects, chain = random_scenario(rng, volumes)
        witness = find_witness(tries, objects, chain)
        tries += 1
        if witness is not None:
            out.append(witness)
    return out
