"""Seeded random Kubernetes cluster states, as the API server would store them.

A *state* is what one scheduling decision sees: Namespaces, Nodes, bound Pods
and one pending Pod. ``random_state(rng, index)`` builds one as plain
Kubernetes objects (dicts that dump to YAML), dense in every field the
kube-scheduler's Filter plugins read, so that a differential test can ask the
real scheduler (kso) and symreach the same question and compare per node.

Only states the API server accepts are produced (validation rules noted where
they shape the choice), in their *stored* form: ``matchLabelKeys`` and
``mismatchLabelKeys`` already merged into the label selectors, as
``PrepareForCreate`` does for pod affinity and topology spread.

Volumes (``k8s_volume_states``: claims, PersistentVolumes, StorageClasses,
CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments), DaemonSet pods with and without
their DaemonSet, in-place resize status (also on a running pod of the pending pod's ReplicaSet,
which is not in the input) and terminating pods are included.
Deliberate omissions, each something symreach leaves out of scope (README,
semantics): DRA claims, nominated pods and priorities, and inline (non-claim)
volumes. Some pods are relabelled after the API server
merged their ``matchLabelKeys`` (they carry a ``uid``), and some namespaces
have no Namespace object (the harness gives kso the one the cluster must have).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional

from symreach.export.traces import PAUSE_IMAGE as PAUSE
from symreach.generators.clusters import HOSTNAME, ZONE
from symreach.generators.k8s_volume_states import (VolumeWorld, daemonset_pods, replicaset_sibling, resize_status,
                                                   terminating)
from symreach.loader.v1 import NAMESPACE_NAME_LABEL as METADATA_NAME

Obj = dict[str, Any]

REGION = "topology.kubernetes.io/region"
GPU = "example.com/gpu"

_ZONES = ("z1", "z2", "z3")
_RANKS = ("1", "3", "5", "7", "10", "20", "007", "1_0", "99999999999999999999", "x")
_APPS = ("web", "db", "cache")
_TIERS = ("front", "back")
_VERSIONS = ("v1", "v2")
NAMESPACES = ("default", "team-a", "team-b")
_TAINT_KEYS = ("dedicated", "gpu", "node.kubernetes.io/unschedulable", "spot")
_TAINT_VALUES = ("", "infra", "gpu")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PORTS = (80, 443, 8080)
_PROTOCOLS = (None, "TCP", "UDP", "SCTP")
_HOST_IPS = (None, None, "", "0.0.0.0", "127.0.0.1", "10.0.0.1", "::")
_TOPOLOGY_KEYS = (HOSTNAME, ZONE, ZONE, REGION)
_POD_LABEL_KEYS = ("app", "tier", "ver")


@dataclass
class State:
    """One scheduling question: the objects, and which pod is pending."""

    objects: list[Obj]
    pending: str                      # "namespace/name" of the pending pod
    nodes: list[str] = field(default_factory=list)



def _cpu(milli: int) -> str:
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def _mem(mi: int) -> str:
    return f"{mi // 1024}Gi" if mi % 1024 == 0 else f"{mi}Mi"


# ---- nodes and namespaces ----------------------------------------------------

def random_node(rng: random.Random, name: str) -> Obj:
    labels: dict[str, str] = {}
    if rng.random() < 0.8:
        labels[HOSTNAME] = name if rng.random() < 0.9 else "shared-host"
    if rng.random() < 0.75:
        labels[ZONE] = rng.choice(_ZONES)
    if rng.random() < 0.3:
        labels[REGION] = rng.choice(("r1", "r2"))
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(("ssd", "hdd"))
    if rng.random() < 0.5:
        labels["rank"] = rng.choice(_RANKS)
    if rng.random() < 0.3:
        labels["pool"] = rng.choice(("public", "private"))
    resources: dict[str, str] = {"cpu": _cpu(rng.choice((500, 1000, 1500, 2000, 4000))),
                                 "memory": _mem(rng.choice((512, 1024, 2048, 4096)))}
    roll = rng.random()
    if roll < 0.7:
        resources["pods"] = str(rng.choice((1, 2, 3, 4, 110)))
    elif roll < 0.8:
        resources["pods"] = "0"
    if rng.random() < 0.3:
        resources[GPU] = str(rng.choice((0, 1, 2)))
    if rng.random() < 0.2:
        resources["ephemeral-storage"] = _mem(rng.choice((1024, 4096)))
    status: Obj = {}
    if rng.random() < 0.15:
        status["capacity"] = resources          # capacity only: allocatable defaults to it
    else:
        status["allocatable"] = resources
        if rng.random() < 0.3:
            status["capacity"] = dict(resources)
    spec: Obj = {}
    taints = []
    for key in rng.sample(_TAINT_KEYS, rng.choice((0, 0, 0, 1, 1, 2))):
        taint: Obj = {"key": key, "effect": rng.choice(_EFFECTS)}
        value = rng.choice(_TAINT_VALUES)
        if value:
            taint["value"] = value
        taints.append(taint)
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.12:
        spec["unschedulable"] = True
    node: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}
    if labels:
        node["metadata"]["labels"] = labels
    if spec:
        node["spec"] = spec
    return node


def random_namespace(rng: random.Random, name: str) -> Obj:
    labels: dict[str, str] = {}
    if name != "default" or rng.random() < 0.3:
        if rng.random() < 0.7:
            labels["team"] = rng.choice(("a", "b"))
        if rng.random() < 0.4:
            labels["env"] = rng.choice(("prod", "dev"))
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


# ---- pod parts -----------------------------------------------------------------

def _pod_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if rng.random() < 0.85:
        labels["app"] = rng.choice(_APPS)
    if rng.random() < 0.4:
        labels["tier"] = rng.choice(_TIERS)
    if rng.random() < 0.4:
        labels["ver"] = rng.choice(_VERSIONS)
    return labels


def _resources(rng: random.Random) -> Obj:
    """A container's resources: requests, limits only, both, or nothing."""
    roll = rng.random()
    if roll < 0.25:
        return {}
    amounts: dict[str, str] = {}
    if rng.random() < 0.8:
        amounts["cpu"] = _cpu(rng.choice((0, 100, 250, 500, 1000, 1500)))
    if rng.random() < 0.6:
        amounts["memory"] = _mem(rng.choice((128, 256, 512, 1024)))
    if rng.random() < 0.08:
        amounts["ephemeral-storage"] = _mem(rng.choice((512, 2048)))
    gpu = rng.random() < 0.15
    if roll < 0.45:
        out: Obj = {"limits": amounts}              # limits only: requests default to them
    elif roll < 0.6:
        limits = {k: v for k, v in amounts.items()}
        out = {"requests": amounts, "limits": limits}
    else:
        out = {"requests": amounts}
    if gpu:  # extended resources: requests must equal limits (API validation)
        count = str(rng.choice((1, 2)))
        out.setdefault("limits", {})[GPU] = count
        if "requests" in out:
            out["requests"][GPU] = count
    return {k: v for k, v in out.items() if v}


def _ports(rng: random.Random, used: set[tuple[int, str]]) -> list[Obj]:
    ports = []
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
        number = rng.choice(_PORTS)
        protocol = rng.choice(_PROTOCOLS)
        key = (number, protocol or "TCP")
        if key in used:  # API validation: a (hostPort, protocol) pair once per pod
            continue
        used.add(key)
        port: Obj = {"containerPort": number, "hostPort": number}
        if protocol:
            port["protocol"] = protocol
        host_ip = rng.choice(_HOST_IPS)
        if host_ip is not None:
            port["hostIP"] = host_ip
        ports.append(port)
    return ports


def _container(rng: random.Random, name: str, used_ports: set[tuple[int, str]], *, ports: bool) -> Obj:
    container: Obj = {"name": name, "image": PAUSE}
    resources = _resources(rng)
    if resources:
        container["resources"] = resources
    if ports:
        chosen = _ports(rng, used_ports)
        if chosen:
            container["ports"] = chosen
    return container


def _pod_spec(rng: random.Random) -> Obj:
    used: set[tuple[int, str]] = set()
    spec: Obj = {"containers": [_container(rng, f"c{i}", used, ports=True)
                                for i in range(rng.choice((1, 1, 2)))]}
    inits = []
    for i in range(rng.choice((0, 0, 0, 1, 2))):
        sidecar = rng.random() < 0.5
        init = _container(rng, f"init{i}", used, ports=sidecar)
        if sidecar:
            init["restartPolicy"] = "Always"
        inits.append(init)
    if inits:
        spec["initContainers"] = inits
    if rng.random() < 0.1:
        spec["overhead"] = {"cpu": _cpu(rng.choice((50, 250))), "memory": _mem(64)}
    if rng.random() < 0.05:
        # Pod-level resources (beta in v1.35); limits must cover the containers' limits.
        spec["resources"] = {"limits": {"cpu": "4", "memory": "4Gi"}}
        if rng.random() < 0.5:
            spec["resources"]["requests"] = {"cpu": _cpu(rng.choice((250, 1000)))}
    return spec


def _label_selector(rng: random.Random, *, allow_null: bool = True) -> Optional[Obj]:
    """A label selector over pod labels: null, ``{}``, or some requirements."""
    roll = rng.random()
    if allow_null and roll < 0.06:
        return None
    if roll < 0.12:
        return {}
    selector: Obj = {}
    if rng.random() < 0.7:
        selector["matchLabels"] = {"app": rng.choice(_APPS)}
    exprs = []
    for _ in range(rng.choice((0, 0, 1, 2))):
        key = rng.choice(_POD_LABEL_KEYS)
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        expr: Obj = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            pool = {"app": _APPS, "tier": _TIERS, "ver": _VERSIONS}[key]
            expr["values"] = sorted(rng.sample(pool, rng.choice((1, 2))))
        exprs.append(expr)
    if exprs:
        selector["matchExpressions"] = exprs
    return selector


def _merge_label_keys(selector: Obj, keys: list[str], owner_labels: dict[str, str], operator: str) -> None:
    """What the API server's PrepareForCreate does with matchLabelKeys / mismatchLabelKeys."""
    for key in keys:
        if key in owner_labels:
            selector.setdefault("matchExpressions", []).append(
                {"key": key, "operator": operator, "values": [owner_labels[key]]})


def _namespace_selector(rng: random.Random) -> Obj:
    return rng.choice((
        {},
        {"matchLabels": {"team": "a"}},
        {"matchExpressions": [{"key": "team", "operator": "In", "values": ["a", "b"]}]},
        {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]},
        {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
        {"matchExpressions": [{"key": "env", "operator": "Exists"}]},
        {"matchLabels": {METADATA_NAME: "team-b"}},
    ))


def _affinity_term(rng: random.Random, owner_labels: dict[str, str]) -> Obj:
    term: Obj = {"topologyKey": rng.choice(_TOPOLOGY_KEYS)}
    selector = _label_selector(rng)
    if selector is not None:
        term["labelSelector"] = selector
        keys = [k for k in _POD_LABEL_KEYS if rng.random() < 0.15]
        mismatch = [k for k in _POD_LABEL_KEYS if k not in keys and rng.random() < 0.1]
        if keys:
            term["matchLabelKeys"] = keys
            _merge_label_keys(selector, keys, owner_labels, "In")
        if mismatch:
            term["mismatchLabelKeys"] = mismatch
            _merge_label_keys(selector, mismatch, owner_labels, "NotIn")
    roll = rng.random()
    if roll < 0.2:
        term["namespaces"] = sorted(rng.sample(NAMESPACES, rng.choice((1, 2))))
    if 0.1 < roll < 0.35:
        term["namespaceSelector"] = _namespace_selector(rng)
    return term


def _pod_affinity(rng: random.Random, labels: dict[str, str], *, pending: bool) -> Obj:
    affinity: Obj = {}
    n_aff = rng.choice((0, 0, 1, 1, 2, 3)) if pending else rng.choice((0, 0, 0, 0, 1))
    n_anti = rng.choice((0, 0, 1, 1, 2)) if pending else rng.choice((0, 0, 0, 1, 1))
    if n_aff:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution":
                                   [_affinity_term(rng, labels) for _ in range(n_aff)]}
    if n_anti:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution":
                                       [_affinity_term(rng, labels) for _ in range(n_anti)]}
    return affinity


def _node_requirement(rng: random.Random) -> Obj:
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    if op in ("Gt", "Lt"):
        return {"key": "rank", "operator": op, "values": [rng.choice(("0", "4", "9", "15", "1_0", "abc"))]}
    key = rng.choice((ZONE, "disk", "pool", HOSTNAME, "rank"))
    req: Obj = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        pool = {ZONE: _ZONES, "disk": ("ssd", "hdd"), "pool": ("public", "private"),
                HOSTNAME: ("n0", "n1", "n2", "shared-host"), "rank": _RANKS}[key]
        req["values"] = sorted(rng.sample(pool, rng.choice((1, 2))))
    return req


def _node_selector_term(rng: random.Random, nodes: list[str]) -> Obj:
    term: Obj = {}
    exprs = [_node_requirement(rng) for _ in range(rng.choice((0, 1, 1, 2)))]
    if exprs:
        term["matchExpressions"] = exprs
    if rng.random() < 0.25:
        names = nodes + ["ghost"]
        term["matchFields"] = [{"key": "metadata.name", "operator": rng.choice(("In", "In", "NotIn")),
                                "values": [rng.choice(names)]} for _ in range(rng.choice((1, 1, 2)))]
    return term


def _node_affinity(rng: random.Random, nodes: list[str]) -> Obj:
    terms = [_node_selector_term(rng, nodes) for _ in range(rng.choice((1, 1, 2)))]
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}


def _tolerations(rng: random.Random) -> list[Obj]:
    out = []
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        roll = rng.random()
        if roll < 0.1:
            tol: Obj = {"operator": "Exists"}                          # tolerates everything
        elif roll < 0.2:
            tol = {"operator": "Exists", "effect": rng.choice(_EFFECTS)}
        elif roll < 0.5:
            tol = {"key": rng.choice(_TAINT_KEYS), "operator": "Exists"}
        else:
            tol = {"key": rng.choice(_TAINT_KEYS), "value": rng.choice(_TAINT_VALUES)}
            op = rng.choice((None, "Equal", ""))                       # "" means Equal
            if op is not None:
                tol["operator"] = op
        if "effect" not in tol and rng.random() < 0.5:
            tol["effect"] = rng.choice(_EFFECTS)
        if tol.get("effect") == "NoExecute" and rng.random() < 0.3:
            tol["tolerationSeconds"] = 300
        out.append(tol)
    return out


def _spread(rng: random.Random, labels: dict[str, str]) -> list[Obj]:
    out = []
    keys = rng.sample((HOSTNAME, ZONE, REGION), rng.choice((1, 1, 2)))
    for key in keys:
        constraint: Obj = {"maxSkew": rng.choice((1, 1, 2)), "topologyKey": key,
                           "whenUnsatisfiable": "DoNotSchedule" if rng.random() < 0.85 else "ScheduleAnyway"}
        selector = _label_selector(rng)
        if selector is not None:
            constraint["labelSelector"] = selector
            if rng.random() < 0.2:
                mk = [rng.choice(_POD_LABEL_KEYS)]
                constraint["matchLabelKeys"] = mk
                _merge_label_keys(selector, mk, labels, "In")
        if constraint["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.25:
            constraint["minDomains"] = rng.choice((1, 2, 3, 4))
        if rng.random() < 0.25:
            constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.25:
            constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        out.append(constraint)
    return out


# ---- pods and states -------------------------------------------------------------

def random_pod(rng: random.Random, name: str, namespace: str, nodes: list[str], node: Optional[str],
         labels: Optional[dict[str, str]] = None) -> Obj:
    """A pod; its labels are fixed before anything is merged into its selectors
    (relabelling a stored pod leaves merged matchLabelKeys stale: see the module doc)."""
    pending = node is None
    labels = _pod_labels(rng) if labels is None else labels
    spec = _pod_spec(rng)
    if not pending:
        spec["nodeName"] = node
    if pending and rng.random() < 0.3:
        spec["nodeSelector"] = {rng.choice((ZONE, "disk", "pool")): rng.choice(("z1", "z2", "ssd", "public"))}
    affinity = _pod_affinity(rng, labels, pending=pending)
    if pending and rng.random() < 0.35:
        affinity["nodeAffinity"] = _node_affinity(rng, nodes)
    if affinity:
        spec["affinity"] = affinity
    tolerations = _tolerations(rng) if pending or rng.random() < 0.2 else []
    if tolerations:
        spec["tolerations"] = tolerations
    if rng.random() < (0.4 if pending else 0.15):
        spec["topologySpreadConstraints"] = _spread(rng, labels)
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def random_state(rng: random.Random, index: int = 0) -> State:
    """One random state; ``index`` only names it."""
    nodes = [f"n{i}" for i in range(rng.choice((1, 2, 3, 3, 4, 5)))]
    namespaces = list(NAMESPACES[: rng.choice((1, 2, 3, 3))])
    objects: list[Obj] = [random_namespace(rng, ns) for ns in namespaces]
    if rng.random() < 0.15:  # a dump without Namespace objects for some namespace
        del objects[rng.randrange(len(objects))]
    objects += [random_node(rng, name) for name in nodes]
    world = VolumeWorld(rng, nodes, namespaces) if rng.random() < 0.45 else None
    made = len(world.objects) if world is not None else 0
    if world is not None:
        objects += world.objects[:made]
    for i in range(rng.choice((0, 1, 2, 3, 4, 5, 6, 8))):
        ns = rng.choice(namespaces)
        pod = random_pod(rng, f"p{i}", ns, nodes, rng.choice(nodes))
        if world is not None:
            _add_volumes(pod, world.volumes_for(ns, pending=False, pod_name=f"p{i}"))
            if any("ephemeral" in v for v in pod["spec"].get("volumes", ())):
                pod["metadata"]["uid"] = f"uid-p{i}"   # its ephemeral claim's owner
        if rng.random() < 0.1:
            resize_status(rng, pod)
        if rng.random() < 0.08:
            terminating(pod)
        if rng.random() < 0.1:
            relabel(rng, pod)
        objects.append(pod)
    if world is not None:   # the claims the running pods' generic ephemeral volumes made
        objects += world.objects[made:]
        made = len(world.objects)
    namespace = rng.choice(namespaces)
    incoming = random_pod(rng, "incoming", namespace, nodes, None)
    if rng.random() < 0.1:
        relabel(rng, incoming)
    if world is not None:
        _add_volumes(incoming, world.volumes_for(namespace, pending=True))
        objects += world.objects[made:]   # the claim the pending pod's ephemeral volume made, if any
        made = len(world.objects)
    if world is not None and rng.random() < 0.15:
        pods, pending = world.statefulset(namespace, incoming["spec"], incoming["metadata"].get("labels") or {},
                                          stored="uid" in incoming["metadata"])
        return State(objects + world.objects[made:] + pods, f"{namespace}/{pending}", nodes)
    if rng.random() < 0.12:
        pods, daemonset = daemonset_pods(rng, incoming["spec"], incoming["metadata"].get("labels") or {}, namespace,
                                         nodes, rng.choice(nodes), stored="uid" in incoming["metadata"])
        objects += pods + ([daemonset] if daemonset else [])
    else:
        objects.append(incoming)
        if rng.random() < 0.08 and not any("ephemeral" in v for v in incoming["spec"].get("volumes", ())):
            objects.append(replicaset_sibling(rng, incoming, nodes))
    return State(objects, f"{namespace}/incoming", nodes)


def relabel(rng: random.Random, pod: Obj) -> None:
    """A stored pod (``uid``) whose labels changed after the API server merged its
    ``matchLabelKeys`` into its selectors."""
    pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    labels = pod["metadata"].setdefault("labels", {})
    key = rng.choice(_POD_LABEL_KEYS)
    labels[key] = rng.choice({"app": _APPS, "tier": _TIERS, "ver": _VERSIONS}[key])


def _add_volumes(pod: Obj, volumes: list[Obj]) -> None:
    if volumes:
        pod["spec"]["volumes"] = volumes


def random_states(count: int, seed: int, volumes: bool = False) -> list[State]:
    """``count`` states from one seed: the same arguments give the same states.
    ``volumes``: volume-dense states (``volume_state``)."""
    rng = random.Random(seed)
    return [volume_state(rng, i) if volumes else random_state(rng, i) for i in range(count)]


def volume_state(rng: random.Random, index: int = 0) -> State:
    """A state in which the volume plugins decide: volume objects always, and the static
    obstacles that most random states stop at removed (node taints and cordons, the incoming
    pod's node selection, spread constraints, host ports and requests), so that most nodes
    reach VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone."""
    while True:
        state = random_state(rng, index)
        if any(o["kind"] in ("PersistentVolumeClaim", "StorageClass") for o in state.objects):
            break
    ns, name = state.pending.split("/")
    for obj in state.objects:
        if obj["kind"] == "Node":
            obj.get("spec", {}).pop("taints", None)
            obj.get("spec", {}).pop("unschedulable", None)
        elif obj["kind"] == "Pod" and obj["metadata"]["name"] == name and obj["metadata"].get("namespace") == ns:
            spec = obj["spec"]
            for key in ("nodeSelector", "affinity", "topologySpreadConstraints", "tolerations"):
                spec.pop(key, None)
            for container in spec.get("containers", []) + spec.get("initContainers", []):
                container.pop("ports", None)
                container.pop("resources", None)
            spec.pop("resources", None)
            spec.pop("overhead", None)
    return state
