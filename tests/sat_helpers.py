"""Shared helpers of the SAT-engine tests (instances)."""

from __future__ import annotations

from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import pyramid
from symreach.loader import load_document


def pyramid_instance(h: int, k: int):
    d = pyramid(h)
    return load_document(encode_pebbling(d.vertices, d.edges, d.target, k))


def blockers_instance(n_blockers: int = 5) -> dict:
    """The target needs a witness and the absence of ``n_blockers`` initial pods
    (anti-affinity): explicit BFS needs n+2 single operations, BMC 2 steps."""
    blockers = [f"b{i}" for i in range(n_blockers)]
    types = [{"name": b, "labels": {"app": b}, "requests": {"cpu": "0"}} for b in blockers]
    types.append({"name": "w", "labels": {"app": "w"}, "requests": {"cpu": "0"}})
    types.append({"name": "t", "labels": {"app": "t"}, "requests": {"cpu": "0"}, "affinity": {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": blockers}]},
             "topologyKey": "kubernetes.io/hostname"}]}}})
    return {"version": 1, "semantics": "paper", "nodes": [{"name": "n0", "capacity": {"cpu": "4"}}],
            "podTypes": types, "initial": [{"pod": b, "node": "n0", "count": 1} for b in blockers],
            "query": {"pod": "t", "node": "n0"}}
