"""Seeded random tiny instances (format v1 dicts) for property and differential tests.

Tiny on purpose: 1-3 nodes and 2-4 pod types, so the explicit engine explores
them exhaustively, with small capacities so that capacity binds. Every
constraint kind can appear; ``features`` switches kinds off for fragment tests.
"""

from __future__ import annotations

import random
from typing import Iterable, Optional

ALL_FEATURES = frozenset({"capacity", "taints", "selector", "affinity", "anti", "spread",
                          "ports", "creatable", "initial", "namespaces"})
APPS = ("a", "b", "c", "d")
ZONES = ("z1", "z2")


def _selector(rng: random.Random) -> Optional[dict]:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return {}
    if roll < 0.8:
        return {"matchLabels": {"app": rng.choice(APPS)}}
    op = rng.choice(["In", "NotIn", "Exists"])
    expr = {"key": rng.choice(["app", "tier"]), "operator": op}
    if op != "Exists":
        expr["values"] = rng.sample(list(APPS), rng.randint(1, 2))
    return {"matchExpressions": [expr]}


def random_doc(seed: int, profile: Optional[str] = None,
               features: Iterable[str] = ALL_FEATURES, replicas: int = 1) -> dict:
    """``replicas`` > 1 copies each of 1-2 random nodes that many times (same
    labels, taints, capacity; initial pods still drawn per copy), for symmetry tests."""
    rng = random.Random(seed)
    features = frozenset(features)
    profile = profile or rng.choice(["paper", "kubernetes"])
    kube = profile == "kubernetes"
    n_nodes = rng.randint(1, 3) if replicas == 1 else rng.randint(1, 2)
    n_types = rng.randint(2, 4)
    nodes = []
    for i in range(n_nodes):
        node = {"name": f"n{i}", "labels": {"zone": rng.choice(ZONES)},
                "capacity": {"cpu": str(rng.randint(1, 3))}}
        if kube and rng.random() < 0.3:
            node["capacity"]["pods"] = rng.randint(1, 3)
        if "capacity" not in features:
            node["capacity"] = {"cpu": "100"}
        if "taints" in features and rng.random() < 0.25:
            node["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        if rng.random() < 0.3:
            node["labels"]["disk"] = "ssd"
        nodes.append(node)
    if replicas > 1:
        nodes = [{**node, "name": f"{node['name']}r{j}"} for node in nodes for j in range(replicas)]
    types = []
    for i in range(n_types):
        t: dict = {"name": f"t{i}", "labels": {"app": APPS[i % len(APPS)]},
                   "requests": {"cpu": str(rng.randint(0, 2))}}
        if rng.random() < 0.3:
            t["labels"]["tier"] = rng.choice(APPS)
        if "namespaces" in features and kube and rng.random() < 0.2:
            t["namespace"] = "other"
        if "creatable" in features and rng.random() < 0.15:
            t["creatable"] = False
        if "taints" in features and rng.random() < 0.3:
            t["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        if "selector" in features and rng.random() < 0.2:
            t["nodeSelector"] = {"disk": "ssd"}
        affinity: dict = {}
        if "affinity" in features and rng.random() < 0.6:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": _selector(rng), "topologyKey": rng.choice(["kubernetes.io/hostname", "zone"])}
                for _ in range(rng.randint(1, 2))]}
        if "anti" in features and rng.random() < 0.35:
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": _selector(rng), "topologyKey": rng.choice(["kubernetes.io/hostname", "zone"])}]}
        if affinity:
            t["affinity"] = affinity
        if "spread" in features and rng.random() < 0.25:
            t["topologySpreadConstraints"] = [{
                "maxSkew": rng.randint(1, 2), "topologyKey": rng.choice(["zone", "kubernetes.io/hostname"]),
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                "minDomains": rng.randint(1, 2)}]
            t["maxPerNode"] = 2
        if "ports" in features and kube and rng.random() < 0.15:
            t["hostPorts"] = [{"port": 8080}]
        types.append(t)
    # Spread-counted types need a bound: give every type one, small enough to explore.
    if any("topologySpreadConstraints" in t for t in types):
        for t in types:
            t.setdefault("maxPerNode", 2)
    initial = []
    if "initial" in features:
        for t in types:
            for node in nodes:
                if rng.random() < 0.2:
                    initial.append({"pod": t["name"], "node": node["name"], "count": 1})
    target = rng.choice(types)
    doc = {"version": 1, "semantics": profile, "nodes": nodes, "podTypes": types,
           "initial": initial, "query": {"pod": target["name"], "node": rng.choice(nodes)["name"]}}
    if kube and any(t.get("namespace") == "other" for t in types):
        doc["namespaces"] = [{"name": "default"}, {"name": "other"}]
    return doc


def random_systems(profile: str, seeds: Iterable[int] = range(200)):
    """``(instance, compiled system)`` for every seed whose random document loads."""
    from symreach.encodings.compile import compile_system
    from symreach.errors import InputError
    from symreach.loader import load_document

    for seed in seeds:
        try:
            inst = load_document(random_doc(seed, profile))
        except InputError:
            continue
        yield inst, compile_system(inst, inst.query)
