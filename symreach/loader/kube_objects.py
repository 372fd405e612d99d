"""Kubernetes sub-objects of a pod spec: tolerations, affinity, topology spread.

Each parser accepts exactly the fields of the Kubernetes API object (so a
manifest fragment pastes in unchanged) and validates them as the API server
would. Parts that never constrain scheduling (preferred* terms,
ScheduleAnyway constraints, tolerationSeconds) are validated, then dropped.
The results are still label-level specs; ``resolve`` turns them into index sets.
"""

from __future__ import annotations

from typing import Optional

from symreach.loader.labels import (
    LabelSelector,
    NodeSelector,
    Toleration,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
    parse_toleration,
)
from symreach.loader.shapes import FieldError, Path, choice, integer, mapping, sequence, string, string_list
from symreach.records import record

DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"

_TERM_FIELDS = ("labelSelector", "namespaces", "topologyKey", "namespaceSelector", "matchLabelKeys", "mismatchLabelKeys")
_SPREAD_FIELDS = (
    "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
    "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys",
)
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@record
class TermSpec:
    """A required PodAffinityTerm, still in label form. ``path`` locates it for errors."""

    selector: LabelSelector
    namespaces: tuple[str, ...]
    namespace_selector: Optional[LabelSelector]  # None: field absent (not the null selector)
    topology_key: str
    match_label_keys: tuple[str, ...]
    mismatch_label_keys: tuple[str, ...]
    path: Path


@record
class SpreadSpec:
    """A DoNotSchedule TopologySpreadConstraint, still in label form."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str
    match_label_keys: tuple[str, ...]
    path: Path


@record
class AffinitySpec:
    node_affinity: Optional[NodeSelector] = None
    pod_affinity: tuple[TermSpec, ...] = ()
    pod_anti_affinity: tuple[TermSpec, ...] = ()


def parse_tolerations(raw: object, path: Path) -> tuple[Toleration, ...]:
    return tuple(parse_toleration(t, path + (i,)) for i, t in enumerate(sequence(raw, path)))


def parse_affinity(raw: object, path: Path) -> AffinitySpec:
    """A v1.Affinity; only the required parts are kept."""
    if raw is None:
        return AffinitySpec()
    body = mapping(raw, path, ("nodeAffinity", "podAffinity", "podAntiAffinity"))
    return AffinitySpec(
        node_affinity=_node_affinity(body.get("nodeAffinity"), path + ("nodeAffinity",)),
        pod_affinity=_pod_affinity(body.get("podAffinity"), path + ("podAffinity",)),
        pod_anti_affinity=_pod_affinity(body.get("podAntiAffinity"), path + ("podAntiAffinity",)),
    )


def _node_affinity(raw: object, path: Path) -> Optional[NodeSelector]:
    if raw is None:
        return None
    body = mapping(raw, path, (_REQUIRED, _PREFERRED))
    ppath = path + (_PREFERRED,)
    for i, item in enumerate(sequence(body.get(_PREFERRED), ppath)):
        pref = mapping(item, ppath + (i,), ("weight", "preference"), required=("weight", "preference"))
        integer(pref["weight"], ppath + (i, "weight"), minimum=1, maximum=100)
        parse_node_selector_term(pref["preference"], ppath + (i, "preference"))
    required = body.get(_REQUIRED)
    return None if required is None else parse_node_selector(required, path + (_REQUIRED,))


def _pod_affinity(raw: object, path: Path) -> tuple[TermSpec, ...]:
    if raw is None:
        return ()
    body = mapping(raw, path, (_REQUIRED, _PREFERRED))
    ppath = path + (_PREFERRED,)
    for i, item in enumerate(sequence(body.get(_PREFERRED), ppath)):
        weighted = mapping(item, ppath + (i,), ("weight", "podAffinityTerm"), required=("weight", "podAffinityTerm"))
        integer(weighted["weight"], ppath + (i, "weight"), minimum=1, maximum=100)
        parse_affinity_term(weighted["podAffinityTerm"], ppath + (i, "podAffinityTerm"))
    rpath = path + (_REQUIRED,)
    return tuple(parse_affinity_term(t, rpath + (i,)) for i, t in enumerate(sequence(body.get(_REQUIRED), rpath)))


def parse_affinity_term(raw: object, path: Path) -> TermSpec:
    """A v1.PodAffinityTerm (topologyKey required)."""
    body = mapping(raw, path, _TERM_FIELDS, required=("topologyKey",))
    key = string(body["topologyKey"], path + ("topologyKey",))
    selector = parse_label_selector(body.get("labelSelector"), path + ("labelSelector",))
    namespaces = tuple(string_list(body.get("namespaces"), path + ("namespaces",)))
    ns_raw = body.get("namespaceSelector")
    ns_selector = None if ns_raw is None else parse_label_selector(ns_raw, path + ("namespaceSelector",))
    match_keys = _label_keys(body, "matchLabelKeys", path)
    mismatch_keys = _label_keys(body, "mismatchLabelKeys", path)
    for kind, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        if keys and body.get("labelSelector") is None:
            raise FieldError(path + (kind,), "must not be set when labelSelector is not set")
    both = sorted(set(match_keys) & set(mismatch_keys))
    if both:
        raise FieldError(path + ("mismatchLabelKeys",), f"key '{both[0]}' is also in matchLabelKeys")
    return TermSpec(selector, namespaces, ns_selector, key, match_keys, mismatch_keys, path)


def parse_spread_constraints(raw: object, path: Path) -> tuple[SpreadSpec, ...]:
    """TopologySpreadConstraints; ScheduleAnyway ones are validated and dropped."""
    out = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(sequence(raw, path)):
        ipath = path + (i,)
        spec, when = _spread(item, ipath)
        if (spec.topology_key, when) in seen:
            raise FieldError(ipath, f"duplicate constraint for topologyKey '{spec.topology_key}' and {when}")
        seen.add((spec.topology_key, when))
        if when == DO_NOT_SCHEDULE:
            out.append(spec)
    return tuple(out)


def _spread(raw: object, path: Path) -> tuple[SpreadSpec, str]:
    body = mapping(raw, path, _SPREAD_FIELDS, required=("maxSkew", "topologyKey", "whenUnsatisfiable"))
    max_skew = integer(body["maxSkew"], path + ("maxSkew",), minimum=1)
    key = string(body["topologyKey"], path + ("topologyKey",))
    when = choice(body["whenUnsatisfiable"], path + ("whenUnsatisfiable",), (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY))
    selector = parse_label_selector(body.get("labelSelector"), path + ("labelSelector",))
    min_domains = 1
    if body.get("minDomains") is not None:
        min_domains = integer(body["minDomains"], path + ("minDomains",), minimum=1)
        if when != DO_NOT_SCHEDULE:
            raise FieldError(path + ("minDomains",), "may only be set when whenUnsatisfiable is DoNotSchedule")
    affinity_policy = choice(body.get("nodeAffinityPolicy"), path + ("nodeAffinityPolicy",), (HONOR, IGNORE), HONOR)
    taints_policy = choice(body.get("nodeTaintsPolicy"), path + ("nodeTaintsPolicy",), (HONOR, IGNORE), IGNORE)
    match_keys = _label_keys(body, "matchLabelKeys", path)
    # A key may also be in labelSelector: since v1.34 the API server merges
    # matchLabelKeys into the selector, so every stored pod looks like that.
    if match_keys and body.get("labelSelector") is None:
        raise FieldError(path + ("matchLabelKeys",), "must not be set when labelSelector is not set")
    spec = SpreadSpec(max_skew, key, selector, min_domains, affinity_policy, taints_policy, match_keys, path)
    return spec, when


def _label_keys(body: dict, field: str, path: Path) -> tuple[str, ...]:
    keys = string_list(body.get(field), path + (field,))
    if len(set(keys)) != len(keys):
        raise FieldError(path + (field,), "contains a duplicate key")
    return tuple(keys)
