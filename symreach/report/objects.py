"""The objects of a cluster as a user wrote them: taints, amounts, selectors, terms, domains.

Explanations name what the user can act on (``dedicated=gpu:NoSchedule``,
``security In [S1]``, ``topology.kubernetes.io/zone=eu-west-1b``, ``1500m``),
never an index or an encoding variable. Terms are read from the pod type's
original fields (``PodType.manifest``); a type built in memory without them
is described by the pod types its term matches.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

from symreach.model import AffinityTerm, Instance, PodType, SpreadConstraint, Taint, Topology

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_BYTES = ("memory", "ephemeral-storage")
HOSTNAME = "kubernetes.io/hostname"


def taint_text(taint: Taint) -> str:
    """``key=value:Effect`` (``key:Effect`` for a taint without value), as kubectl prints it."""
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"


def amount_text(resource: str, amount: int) -> str:
    """A model amount in Kubernetes units: ``1500m`` cpu, ``256Mi`` memory, plain counts otherwise."""
    if resource == "cpu":
        return f"{amount}m"
    if resource in _BYTES or resource.startswith("hugepages-"):
        for suffix, size in _BINARY:
            if amount >= size and amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)


def type_name(inst: Instance, u: int) -> str:
    """A pod type as the user knows it: a DaemonSet's pod for one node (``ns/ds@node``,
    ``model.daemonset_groups``) is the DaemonSet ``ns/ds``."""
    name = inst.pod_types[u].name
    if "@" not in name:
        return name
    workload, _, node = name.rpartition("@")
    return workload if workload and any(n.name == node for n in inst.nodes) else name


def names(inst: Instance, types: Iterable[int], limit: int = 4) -> str:
    """Pod type names, the first ``limit`` of them and how many more."""
    listed = list(dict.fromkeys(type_name(inst, u) for u in sorted(types)))
    if not listed:
        return "no pod type"
    return ", ".join(listed[:limit]) + (f" (+{len(listed) - limit} more)" if len(listed) > limit else "")


def selector_text(raw: Any) -> str:
    """A metav1.LabelSelector as ``app=web, tier In [a, b], canary DoesNotExist``."""
    if raw is None:
        return "no pod (null selector)"
    if not isinstance(raw, Mapping):
        return str(raw)
    parts = [f"{k}={v}" for k, v in (raw.get("matchLabels") or {}).items()]
    for expr in raw.get("matchExpressions") or ():
        parts.append(requirement_text(expr))
    return ", ".join(parts) or "every pod (empty selector)"


def requirement_text(expr: Any) -> str:
    """``key In [a, b]`` / ``key Exists`` / ``key Gt 3``."""
    if not isinstance(expr, Mapping):
        return str(expr)
    values = [str(v) for v in expr.get("values") or ()]
    op = expr.get("operator", "")
    if op in ("In", "NotIn"):
        return f"{expr.get('key')} {op} [{', '.join(values)}]"
    return f"{expr.get('key')} {op}" + (f" {values[0]}" if values else "")


def _required_terms(pod: PodType, field: str) -> Sequence[Any]:
    if pod.manifest is None:
        return ()
    affinity = pod.manifest.get("affinity") or {}
    section = affinity.get(field) if isinstance(affinity, Mapping) else None
    terms = section.get(_REQUIRED) if isinstance(section, Mapping) else None
    return terms if isinstance(terms, (list, tuple)) else ()


def term_text(inst: Instance, t: int, term: AffinityTerm, anti: bool = False) -> str:
    """An (anti-)affinity term of pod type t: its selector as written (with its namespaces
    and label keys), else the pod types it matches."""
    pod = inst.pod_types[t]
    own = pod.anti_affinity if anti else pod.affinity
    raw = _required_terms(pod, "podAntiAffinity" if anti else "podAffinity")
    i = next((j for j, other in enumerate(own) if other is term), None)
    if i is None:
        i = next((j for j, other in enumerate(own) if other == term), None)
    if i is None or i >= len(raw) or not isinstance(raw[i], Mapping):
        return f"a pod of {names(inst, term.selects)}"
    body = raw[i]
    text = selector_text(body.get("labelSelector"))
    for key in body.get("matchLabelKeys") or ():
        text += f", {key} as on {pod.name}"
    for key in body.get("mismatchLabelKeys") or ():
        text += f", {key} not as on {pod.name}"
    if body.get("namespaces"):
        text += f" (namespaces {', '.join(str(n) for n in body['namespaces'])})"
    elif body.get("namespaceSelector") is not None:
        text += f" (namespaces where {selector_text(body['namespaceSelector'])})"
    return text


def spread_text(inst: Instance, t: int, h: SpreadConstraint) -> str:
    """``maxSkew 1 over topology.kubernetes.io/zone for app=web``."""
    pod = inst.pod_types[t]
    i = next((j for j, other in enumerate(pod.spread) if other is h), None)
    raw: Sequence[Any] = ()
    if pod.manifest is not None:
        given = pod.manifest.get("topologySpreadConstraints") or ()
        raw = [c for c in given if isinstance(c, Mapping) and c.get("whenUnsatisfiable", "DoNotSchedule")
               == "DoNotSchedule"]
    if i is not None and i < len(raw):
        what = selector_text(raw[i].get("labelSelector"))
    else:
        what = f"pods of {names(inst, h.counts)}"
    return f"maxSkew {h.max_skew} over {h.topology.key} for {what}"


def domain_text(topology: Topology, n: int, inst: Optional[Instance] = None) -> str:
    """The domain of node n: ``on wk-1`` for hostname, else ``in zone=eu-west-1b``;
    ``""`` when the node lacks the key."""
    d = topology.domain_of[n]
    if d is None:
        return ""
    if topology.key == HOSTNAME and inst is not None and len(topology.members[d]) == 1:
        return f"on {inst.nodes[n].name}"
    return f"in {topology.key}={topology.values[d]}"


def domain_value_text(topology: Topology, d: int) -> str:
    return f"{topology.key}={topology.values[d]}"
