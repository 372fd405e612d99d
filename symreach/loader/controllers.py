"""Controllers' replica counts in format v1 (``controllers:``), for ``--keep-replicas`` (SPEC 5.2).

Each entry names a Deployment, ReplicaSet or StatefulSet, its ``replicas``
(spec.replicas, default 1), the pod types whose pods it owns and, for a
StatefulSet, its running replicas by name with the nodes their claims allow
(``nodes``; absent: any node). ``resolve_controllers`` turns them into
``model.ReplicaTarget``: the floor is min(replicas, pods running in sigma0),
so a witness keeps what runs and is not asked to place pending replicas.
The Kubernetes front end writes this section from the workloads it reads.
"""

from __future__ import annotations

from typing import Optional, Sequence

from symreach.loader.shapes import FieldError, Path, choice, integer, mapping, sequence, string, string_list
from symreach.model import FrozenDict, Node, Pair, PodType, ReplicaTarget
from symreach.records import record

SECTION = "controllers"
KINDS = ("Deployment", "ReplicaSet", "StatefulSet")
FIELDS = ("kind", "name", "namespace", "replicas", "podTypes", "pods")


@record
class ControllerSpec:
    kind: str
    name: str
    namespace: str
    replicas: int
    pod_types: tuple[str, ...]
    pods: tuple[tuple[str, Optional[tuple[str, ...]]], ...]  # StatefulSet: (pod name, allowed nodes or None)
    path: Path


def parse_controllers(body: dict) -> tuple[ControllerSpec, ...]:
    out: list[ControllerSpec] = []
    seen: set[tuple[str, str, str]] = set()
    for i, item in enumerate(sequence(body.get(SECTION), (SECTION,))):
        path: Path = (SECTION, i)
        raw = mapping(item, path, FIELDS, required=("kind", "name", "podTypes"))
        kind = choice(raw["kind"], path + ("kind",), KINDS)
        name = string(raw["name"], path + ("name",))
        namespace = string(raw.get("namespace") or "default", path + ("namespace",))
        if (kind, namespace, name) in seen:
            raise FieldError(path + ("name",), f"duplicate {kind} '{namespace}/{name}'")
        seen.add((kind, namespace, name))
        replicas = 1 if raw.get("replicas") is None else integer(raw["replicas"], path + ("replicas",), minimum=0)
        pods = []
        for j, pod in enumerate(sequence(raw.get("pods"), path + ("pods",))):
            where = path + ("pods", j)
            if kind != "StatefulSet":
                raise FieldError(where, "only a StatefulSet lists its pods (they keep their identity)")
            entry = mapping(pod, where, ("name", "nodes"), required=("name",))
            nodes = entry.get("nodes")
            pods.append((string(entry["name"], where + ("name",)),
                         None if nodes is None else tuple(string_list(nodes, where + ("nodes",)))))
        out.append(ControllerSpec(kind, name, namespace, replicas,
                                  tuple(string_list(raw["podTypes"], path + ("podTypes",))), tuple(pods), path))
    return tuple(out)


def resolve_controllers(specs: Sequence[ControllerSpec], pod_types: Sequence[PodType], nodes: Sequence[Node],
                        initial: FrozenDict[Pair, int]) -> tuple[ReplicaTarget, ...]:
    type_ids = {p.name: t for t, p in enumerate(pod_types)}
    node_ids = {n.name: i for i, n in enumerate(nodes)}
    out = []
    for spec in specs:
        types = set()
        for j, name in enumerate(spec.pod_types):
            if name not in type_ids:
                raise FieldError(spec.path + ("podTypes", j), f"unknown pod type '{name}'")
            types.add(type_ids[name])
        running = sum(c for (t, _), c in initial.items() if t in types)
        floor = min(spec.replicas, running)
        members = []
        for j, (pod, allowed) in enumerate(spec.pods[:floor]):
            if allowed is None:
                members.append((pod, frozenset(range(len(nodes)))))
                continue
            unknown = [n for n in allowed if n not in node_ids]
            if unknown:
                raise FieldError(spec.path + ("pods", j, "nodes"), f"unknown node '{unknown[0]}'")
            members.append((pod, frozenset(node_ids[n] for n in allowed)))
        if members and len(members) < floor:  # unnamed replicas may run anywhere
            members += [(f"{spec.name}-?{k}", frozenset(range(len(nodes)))) for k in range(floor - len(members))]
        out.append(ReplicaTarget(f"{spec.kind} {spec.namespace}/{spec.name}", frozenset(types), floor,
                                 tuple(members)))
    return tuple(out)
