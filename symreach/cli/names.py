"""The names operators type, resolved to what the model knows.

``--pod`` accepts a pod type (``ns/name``, or ``name`` when one namespace
has it), ``KIND/NAME`` as kubectl spells it (``deploy/``, ``rs/``, ``sts/``,
``ds/``, ``job/``, ``cronjob/``, ``po/``), and a running pod's own name
(its type), each within ``-n NAMESPACE`` when given. A name that resolves to
nothing is an input error with the closest names (did-you-mean) and, with
``--list-targets``, every candidate. Nodes and label keys get the same.
"""

from __future__ import annotations

from dataclasses import field
from typing import Iterable, Optional

from symreach.errors import InputError
from symreach.model import Instance, daemonset_groups
from symreach.records import record

KINDS = {
    "deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
    "rs": "ReplicaSet", "replicaset": "ReplicaSet", "replicasets": "ReplicaSet",
    "sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
    "ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
    "job": "Job", "jobs": "Job", "cronjob": "CronJob", "cronjobs": "CronJob", "cj": "CronJob",
    "rc": "ReplicationController", "replicationcontroller": "ReplicationController",
    "po": "Pod", "pod": "Pod", "pods": "Pod",
}
SHOWN = 10  # candidates named in an error without --list-targets


@record(frozen=False)
class Targets:
    """Every name ``--pod`` accepts, and what each resolves to."""

    types: list[str]                                   # pod types and DaemonSets (rows), in order
    workloads: dict[str, str] = field(default_factory=dict)   # "Kind ns/name" -> type
    pods: dict[str, str] = field(default_factory=dict)        # "ns/pod" -> type
    nodes: list[str] = field(default_factory=list)
    label_keys: list[str] = field(default_factory=list)
    pinned: frozenset[str] = frozenset()               # a DaemonSet's pod type per node, ns/name@node
    namespace: dict[str, str] = field(default_factory=dict)   # pod type or DaemonSet -> its namespace

    def namespaces_of(self, namespace: Optional[str]) -> "Targets":
        """Only what lives in ``namespace`` (``-n`` as a filter); all when None."""
        if namespace is None:
            return self
        def inside(name: str) -> bool:
            return name.split(" ", 1)[-1].split("/", 1)[0] == namespace

        def of(type_name: str) -> bool:
            return self.namespace.get(type_name, "") == namespace or inside(type_name)
        return Targets([t for t in self.types if of(t)], {k: v for k, v in self.workloads.items() if inside(k)},
                       {k: v for k, v in self.pods.items() if inside(k)}, self.nodes, self.label_keys,
                       frozenset(t for t in self.pinned if of(t)), self.namespace)


def targets_of(instance: Instance, report: object = None) -> Targets:
    groups = daemonset_groups(instance)
    members = {t for row in groups.values() for t in row.values()}
    types = [p.name for t, p in enumerate(instance.pod_types) if t not in members] + list(groups)
    keys = sorted({k for n in instance.nodes for k in n.labels})
    namespace = {p.name: p.namespace for p in instance.pod_types}
    namespace.update({g: instance.pod_types[next(iter(row.values()))].namespace for g, row in groups.items() if row})
    return Targets(types, dict(getattr(report, "workloads", {}) or {}),
                   dict(getattr(report, "attachments", {}) or {}), [n.name for n in instance.nodes], keys,
                   frozenset(instance.pod_types[t].name for t in members), namespace)


def resolve_pod(targets: Targets, name: str, namespace: Optional[str] = None) -> str:
    """The pod type (or DaemonSet) ``name`` means; InputError with did-you-mean when none."""
    known = set(targets.types) | targets.pinned
    if name in known and (namespace is None or targets.namespace.get(name) == namespace
                          or name.startswith(namespace + "/")):
        return name
    kind, slash, rest = name.partition("/")
    if slash and kind.lower() in KINDS and "/" not in rest:
        found = _by_kind(targets, KINDS[kind.lower()], rest, namespace)
        if found is not None:
            return found
    elif "/" not in name:
        scope = targets.namespaces_of(namespace)
        for pool in ([t for t in scope.types if t.split("/", 1)[-1] == name],
                     [v for k, v in scope.pods.items() if k.split("/", 1)[-1] == name],
                     [v for k, v in scope.workloads.items() if k.split("/", 1)[-1] == name]):
            if len(set(pool)) == 1:
                return pool[0]
            if len(pool) > 1:
                raise InputError(f"ambiguous pod type '{name}': it names {', '.join(sorted(set(pool)))}; "
                                 "give namespace/name or -n NAMESPACE", field_path="--pod")
    elif name in targets.pods:  # ns/pod-name
        return targets.pods[name]
    raise InputError(f"unknown pod type '{name}'{suggestion(name, _spellings(targets, namespace))}"
                     f"{candidates(targets.namespaces_of(namespace).types, 'pod types')}", field_path="--pod")


def _by_kind(targets: Targets, kind: str, name: str, namespace: Optional[str]) -> Optional[str]:
    if kind == "Pod":
        table = targets.pods
        keys = [k for k in table if k.split("/", 1)[1] == name]
    else:
        table = targets.workloads
        keys = [k for k in table if k.startswith(kind + " ") and k.split("/", 1)[1] == name]
    if namespace is not None:
        keys = [k for k in keys if k.split(" ", 1)[-1].split("/", 1)[0] == namespace]
    if len({table[k] for k in keys}) > 1:
        raise InputError(f"ambiguous {kind} '{name}': in namespaces "
                         f"{', '.join(sorted(k.split(' ', 1)[-1].split('/')[0] for k in keys))}; give -n NAMESPACE",
                         field_path="--pod")
    return table[keys[0]] if keys else None


def _spellings(targets: Targets, namespace: Optional[str]) -> list[str]:
    """Every way to name a target, for did-you-mean."""
    scope = targets.namespaces_of(namespace)
    out = list(scope.types) + [t.split("/", 1)[-1] for t in scope.types]
    out += [f"{_short(k.split(' ', 1)[0])}/{k.split('/', 1)[1]}" for k in scope.workloads]
    out += [k.split("/", 1)[1] for k in scope.pods]
    return out


def _short(kind: str) -> str:
    return next(alias for alias, full in KINDS.items() if full == kind)


def suggestion(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest known names, or nothing."""
    import difflib  # imported on use: only a misspelt name needs it (start-up)

    close = difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def candidates(names: list[str], what: str) -> str:
    """`` (known pod types: a, b, ... and N more; --list-targets lists them all)``."""
    if not names:
        return f" (no {what})"
    shown = ", ".join(names[:SHOWN])
    more = f" and {len(names) - SHOWN} more; --list-targets lists them all" if len(names) > SHOWN else ""
    return f" (known {what}: {shown}{more})"


def check_node(targets: Targets, node: str, option: str = "--node") -> None:
    if node not in targets.nodes:
        raise InputError(f"unknown node '{node}'{suggestion(node, targets.nodes)}{candidates(targets.nodes, 'nodes')}",
                         field_path=option)


def check_label(targets: Targets, instance: Instance, key: str, value: Optional[str], option: str) -> None:
    """A label key no node has, or (for ``--domain``) a value no node has: say which exist."""
    if key not in targets.label_keys:
        ask = "expected KEY=VALUE; " if value == "" else ""
        raise InputError(f"{ask}no node has label key '{key}'{suggestion(key, targets.label_keys)} "
                         f"(label keys of the nodes: {', '.join(targets.label_keys) or 'none'})", field_path=option)
    values = sorted({n.labels[key] for n in instance.nodes if key in n.labels})
    if value == "":  # the key alone was given
        raise InputError(f"give {key}=VALUE (values of {key}: {', '.join(values)})", field_path=option)
    if value is not None and value not in values:
        raise InputError(f"no node has {key}={value}{suggestion(value, values)} (values of {key}: "
                         f"{', '.join(values)})", field_path=option)


def targets_listing(targets: Targets) -> dict:
    """Everything ``--pod`` and ``--node`` accept, for ``--list-targets``."""
    by_type: dict[str, list[str]] = {}
    for key, value in targets.workloads.items():
        kind, full = key.split(" ", 1)
        by_type.setdefault(value, []).append(f"{_short(kind)}/{full.split('/', 1)[1]}")
    pods: dict[str, int] = {}
    for value in targets.pods.values():
        pods[value] = pods.get(value, 0) + 1
    return {"pod_types": [{"name": t, "names": by_type.get(t, []), "running_pods": pods.get(t, 0)}
                          for t in targets.types],
            "nodes": targets.nodes, "label_keys": targets.label_keys}


def listing_text(listing: dict) -> str:
    lines = [f"pod types ({len(listing['pod_types'])}):"]
    for entry in listing["pod_types"]:
        extra = ", ".join(entry["names"])
        running = f"{entry['running_pods']} running" if entry["running_pods"] else ""
        tail = "; ".join(x for x in (extra, running) if x)
        lines.append(f"  {entry['name']}" + (f"  ({tail})" if tail else ""))
    lines.append(f"nodes ({len(listing['nodes'])}): " + " ".join(listing["nodes"]))
    lines.append(f"label keys ({len(listing['label_keys'])}): " + " ".join(listing["label_keys"]))
    return "\n".join(lines)
