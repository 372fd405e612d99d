"""Seeded random Kubernetes-like clusters in instance format v1.

``generate_cluster(nodes, pod_types, seed)`` builds a ``semantics: kubernetes``
instance (a plain dict, YAML-serializable) with

- zones ``zone-a``, ``zone-b``, ... (label ``topology.kubernetes.io/zone``);
- node pools (label ``pool``): ``system`` (control plane, tainted
  ``node-role.kubernetes.io/control-plane:NoSchedule``), ``general``,
  ``highmem``, ``public``, and ``gpu`` (tainted ``nvidia.com/gpu=present:NoSchedule``,
  with ``nvidia.com/gpu`` capacity); every node lists ``cpu``, ``memory`` and
  ``pods`` capacity, and a ``disk`` label;
- pod types that together use every constraint kind: resource requests,
  ``nodeSelector``, required node affinity, tolerations, required pod
  affinity and anti-affinity with topology ``kubernetes.io/hostname`` and
  ``topology.kubernetes.io/zone`` (including self-affinity and
  self-anti-affinity), hard topology spread (``DoNotSchedule``, ``maxSkew``,
  sometimes ``minDomains``) and host ports; two namespaces; one
  ``creatable: false`` type when there are at least 5 types;
- an initial configuration that respects static filters and capacity, and a
  query (a pod on a node, or on any node of a pool).

When ``pod_types >= 9`` every constraint kind is guaranteed to occur: type i
always gets kind ``KINDS[i % len(KINDS)]``, plus random extras.

``small=True`` produces tiny instances (2-3 nodes, 2-4 types, ``pods``
capacity 2-3 and a cpu capacity that binds) for exhaustive differential
testing against the explicit-state engine.

Deterministic: the same arguments give the same document (and the same YAML
with ``sort_keys=False``). Scales to thousands of nodes.
"""

from __future__ import annotations

import random
from typing import Any, Optional

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
GPU = "nvidia.com/gpu"

KINDS = ("nodeSelector", "nodeAffinity", "podAffinity", "podAntiAffinity", "spread",
         "hostPort", "zoneAffinity", "zoneAntiAffinity", "tolerations")

_APPS = ("web", "api", "worker", "cache", "db", "batch", "ml", "ingress", "metrics",
         "queue", "search", "auth")
_NAMESPACES = ("default", "payments")


def _cpu(milli: int) -> str:
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def _mem(mi: int) -> str:
    return f"{mi // 1024}Gi" if mi % 1024 == 0 else f"{mi}Mi"


# ---------------------------------------------------------------------------
# nodes
# ---------------------------------------------------------------------------

def _pool_plan(count: int, small: bool, rng: random.Random) -> list[str]:
    """The pool of each node, system pool first."""
    if small:
        pools = ["general"] * count
        # Make one node special so that static filters matter.
        pools[-1] = rng.choice(["system", "gpu", "public"])
        return pools
    n_system = 1 if count < 20 else 3
    n_gpu = max(1, count // 10) if count >= 4 else 0
    n_public = max(1, count // 8) if count >= 3 else 0
    n_highmem = max(1, count // 6) if count >= 5 else 0
    pools = (["system"] * n_system + ["gpu"] * n_gpu + ["public"] * n_public
             + ["highmem"] * n_highmem)
    pools = pools[:count]
    pools += ["general"] * (count - len(pools))
    return pools


def _nodes(count: int, small: bool, rng: random.Random) -> list[dict[str, Any]]:
    n_zones = 2 if small else max(1, min(3, count // 2))
    zones = [f"zone-{chr(ord('a') + i)}" for i in range(n_zones)]
    out = []
    for i, pool in enumerate(_pool_plan(count, small, rng)):
        zone = zones[i % n_zones]
        labels = {ZONE: zone, "pool": pool, "disk": "ssd" if rng.random() < 0.6 else "hdd",
                  "kubernetes.io/os": "linux"}
        taints: list[dict[str, str]] = []
        if small:
            cpu = rng.choice([1000, 2000])
            capacity: dict[str, Any] = {"cpu": _cpu(cpu), "memory": _mem(rng.choice([2048, 4096])),
                                        "pods": rng.choice([2, 3])}
        else:
            cpu = {"system": 4000, "gpu": 16000, "highmem": 16000}.get(pool, rng.choice([4000, 8000]))
            mem = {"highmem": 131072, "gpu": 65536}.get(pool, cpu * 4)
            capacity = {"cpu": _cpu(cpu), "memory": _mem(mem), "pods": 110}
        if pool == "system":
            labels[CONTROL_PLANE] = ""
            taints.append({"key": CONTROL_PLANE, "effect": "NoSchedule"})
        elif pool == "gpu":
            labels["accelerator"] = "nvidia"
            capacity[GPU] = 1 if small else 4
            taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
        node: dict[str, Any] = {"name": f"{pool}-{i}", "labels": labels, "capacity": capacity}
        if taints:
            node["taints"] = taints
        out.append(node)
    return out


# ---------------------------------------------------------------------------
# pod types
# ---------------------------------------------------------------------------

def _selector(app: str) -> dict[str, Any]:
    return {"matchLabels": {"app": app}}


def _term(app: str, key: str, namespace: Optional[str] = None) -> dict[str, Any]:
    term: dict[str, Any] = {"labelSelector": _selector(app), "topologyKey": key}
    if namespace is not None:
        term["namespaces"] = [namespace]
    return term


POOL_KINDS = ("system", "general", "highmem", "public", "gpu", "batch", "compute", "memory",
              "spot", "edge")


def _pooled_nodes(count: int, pools: int, rng: random.Random) -> list[dict[str, Any]]:
    """Node pools as in managed clusters: every node of a pool has the pool's labels,
    taints and capacity, only its name (hostname) and zone differ; pools span 3 zones."""
    zones = [f"zone-{chr(ord('a') + i)}" for i in range(min(3, max(1, count)))]
    kinds = [POOL_KINDS[i % len(POOL_KINDS)] + ("" if i < len(POOL_KINDS) else f"-{i}")
             for i in range(max(1, pools))]
    sizes = [min(3, count)] + [0] * (len(kinds) - 1)
    rest = count - sizes[0]
    for i in range(1, len(kinds)):
        sizes[i] = rest // (len(kinds) - 1) + (1 if i - 1 < rest % (len(kinds) - 1) else 0)
    if len(kinds) == 1:
        sizes[0] = count
    out = []
    for pool, size in zip(kinds, sizes):
        base = pool.split("-")[0]
        cpu = {"system": 4000, "gpu": 16000, "highmem": 16000}.get(base, rng.choice([4000, 8000, 16000]))
        mem = {"highmem": 131072, "gpu": 65536}.get(base, cpu * 4)
        labels = {"pool": pool, "disk": rng.choice(["ssd", "hdd"]), "kubernetes.io/os": "linux",
                  "node.kubernetes.io/instance-type": f"{base}-{cpu // 1000}x"}
        capacity: dict[str, Any] = {"cpu": _cpu(cpu), "memory": _mem(mem), "pods": 110}
        taints: list[dict[str, str]] = []
        if base == "system":
            labels[CONTROL_PLANE] = ""
            taints.append({"key": CONTROL_PLANE, "effect": "NoSchedule"})
        elif base == "gpu":
            labels["accelerator"] = "nvidia"
            capacity[GPU] = 4
            taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
        for j in range(size):
            name = f"{pool}-{j}"
            node: dict[str, Any] = {"name": name,
                                    "labels": {**labels, ZONE: zones[j % len(zones)], HOSTNAME: name},
                                    "capacity": dict(capacity)}
            if taints:
                node["taints"] = [dict(t) for t in taints]
            out.append(node)
    return out


def _pod_types(count: int, nodes: list[dict[str, Any]], small: bool,
               rng: random.Random) -> list[dict[str, Any]]:
    pools = sorted({n["labels"]["pool"] for n in nodes})
    zones = sorted({n["labels"][ZONE] for n in nodes})
    apps = [f"{_APPS[i % len(_APPS)]}-{i}" for i in range(count)]
    namespaces = [(_NAMESPACES[1] if (not small and i % 4 == 3) else _NAMESPACES[0])
                  for i in range(count)]
    types = []
    for i in range(count):
        app, ns = apps[i], namespaces[i]
        kinds = {k for k in KINDS if rng.random() < (0.35 if small else 0.25)}
        if not small:
            kinds.add(KINDS[i % len(KINDS)])
        pt: dict[str, Any] = {"name": app}
        if ns != "default":
            pt["namespace"] = ns
        pt["labels"] = {"app": app, "tier": rng.choice(["frontend", "backend", "data"])}
        if small:
            requests: dict[str, str] = {"cpu": _cpu(rng.choice([250, 500, 750, 1000])),
                                        "memory": _mem(rng.choice([256, 512, 1024]))}
        else:
            requests = {"cpu": _cpu(rng.choice([100, 250, 500, 1000, 2000])),
                        "memory": _mem(rng.choice([128, 256, 512, 1024, 4096]))}
        pt["requests"] = requests
        if not small and count >= 5 and i == count - 1:
            pt["creatable"] = False  # a legacy singleton that exists only initially

        # --- static node selection ------------------------------------------
        home = None
        if "tolerations" in kinds and ("gpu" in pools or "system" in pools):
            home = rng.choice([p for p in ("gpu", "system") if p in pools])
        tolerations = []
        if home == "gpu":
            tolerations.append({"key": GPU, "operator": "Exists", "effect": "NoSchedule"})
            requests[GPU] = "1"
        elif home == "system":
            tolerations.append({"key": CONTROL_PLANE, "operator": "Exists",
                                "effect": "NoSchedule"})
        if tolerations:
            pt["tolerations"] = tolerations
        if "nodeSelector" in kinds:
            if home == "gpu":
                pt["nodeSelector"] = {"accelerator": "nvidia"}
            elif home is None and rng.random() < 0.5:
                pt["nodeSelector"] = {"pool": rng.choice([p for p in pools
                                                          if p not in ("gpu", "system")]
                                                         or pools)}
            else:
                pt["nodeSelector"] = {"disk": "ssd"}
        affinity: dict[str, Any] = {}
        if "nodeAffinity" in kinds:
            if len(zones) > 1 and rng.random() < 0.6:
                expr = {"key": ZONE, "operator": "In",
                        "values": sorted(rng.sample(zones, rng.randint(1, len(zones) - 1)))}
            else:
                expr = {"key": "pool", "operator": "NotIn", "values": ["system"]}
            affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}

        # --- inter-pod affinity ---------------------------------------------
        pos, neg = [], []
        others = [j for j in range(count) if j != i]
        for kind, key, bucket in (("podAffinity", HOSTNAME, pos), ("zoneAffinity", ZONE, pos),
                                  ("podAntiAffinity", HOSTNAME, neg),
                                  ("zoneAntiAffinity", ZONE, neg)):
            if kind not in kinds:
                continue
            if bucket is neg and rng.random() < 0.6 or not others:
                j = i  # self-anti-affinity (one replica per domain) / self-affinity
            else:
                j = rng.choice(others)
            bucket.append(_term(apps[j], key, namespaces[j] if namespaces[j] != ns else None))
        if pos:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": pos}
        if neg:
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": neg}
        if affinity:
            pt["affinity"] = affinity

        # --- spread and ports -------------------------------------------------
        if "spread" in kinds:
            key = ZONE if rng.random() < 0.6 else HOSTNAME
            tsc: dict[str, Any] = {"maxSkew": rng.choice([1, 1, 2]), "topologyKey": key,
                                   "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": _selector(app)}
            if key == ZONE and len(zones) > 1 and rng.random() < 0.3:
                tsc["minDomains"] = len(zones)
            pt["topologySpreadConstraints"] = [tsc]
        if "hostPort" in kinds:
            pt["hostPorts"] = [{"port": rng.choice([8080, 9090, 9100]), "protocol": "TCP"}]
        types.append(pt)
    return types


# ---------------------------------------------------------------------------
# initial configuration (static filters and capacity only)
# ---------------------------------------------------------------------------

_UNITS = {"Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3}


def _amount(resource: str, q: Any) -> int:
    """Quantities as emitted above: cpu in millicores, memory in bytes."""
    s = str(q)
    if s.endswith("m"):
        return int(s[:-1])
    for suffix, mult in _UNITS.items():
        if s.endswith(suffix):
            return int(s[: -len(suffix)]) * mult
    return int(s) * (1000 if resource == "cpu" else 1)


def _static_ok(pt: dict[str, Any], node: dict[str, Any]) -> bool:
    labels = node["labels"]
    for k, v in pt.get("nodeSelector", {}).items():
        if labels.get(k) != v:
            return False
    tolerated = {t["key"] for t in pt.get("tolerations", [])}
    if any(t["key"] not in tolerated for t in node.get("taints", [])):
        return False
    na = pt.get("affinity", {}).get("nodeAffinity")
    if na:
        for term in na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]:
            for e in term["matchExpressions"]:
                inside = labels.get(e["key"]) in e["values"]
                if inside != (e["operator"] == "In"):
                    return False
    return True


def _initial(types: list[dict[str, Any]], nodes: list[dict[str, Any]], small: bool,
             rng: random.Random) -> list[dict[str, Any]]:
    """A few pods of inter-pod-constraint-free types (and the legacy singleton)."""
    used = [dict.fromkeys(n["capacity"], 0) for n in nodes]
    placed: dict[tuple[str, str], int] = {}
    budget = rng.randint(0, 2) if small else max(1, len(nodes) // 4)
    candidates = [pt for pt in types
                  if not {"podAffinity", "podAntiAffinity"} & set(pt.get("affinity", {}))
                  and not pt.get("topologySpreadConstraints") and not pt.get("hostPorts")]
    legacy = [pt for pt in types if pt.get("creatable") is False]
    wanted = legacy + [rng.choice(candidates) for _ in range(budget) if candidates]
    for pt in wanted:
        order = list(range(len(nodes)))
        rng.shuffle(order)
        for ni in order:
            node = nodes[ni]
            if not _static_ok(pt, node):
                continue
            need = {r: _amount(r, q) for r, q in pt["requests"].items()}
            need["pods"] = 1
            cap = {r: _amount(r, q) for r, q in node["capacity"].items()}
            if all(used[ni].get(r, 0) + a <= cap.get(r, 0) for r, a in need.items() if a):
                for r, a in need.items():
                    used[ni][r] = used[ni].get(r, 0) + a
                key = (pt["name"], node["name"])
                placed[key] = placed.get(key, 0) + 1
                break
    return [{"pod": p, "node": n, "count": c} for (p, n), c in placed.items()]


def generate_cluster(nodes: int = 10, pod_types: int = 10, seed: int = 0,
                     small: bool = False, pools: Optional[int] = None) -> dict[str, Any]:
    """A random cluster instance (format v1, ``semantics: kubernetes``).

    ``pools`` switches to realistic node pools (``_pooled_nodes``): nodes of
    one pool are interchangeable up to hostname and zone.
    """
    tag = "" if pools is None else f":pools={pools}"
    rng = random.Random(f"symreach-cluster:{seed}:{nodes}:{pod_types}:{small}{tag}")
    if small:
        nodes = min(max(nodes, 2), 3)
        pod_types = min(max(pod_types, 2), 4)
    if nodes < 1 or pod_types < 1:
        raise ValueError("need at least one node and one pod type")
    if pools is not None and not small:
        node_docs = _pooled_nodes(nodes, pools, rng)
    else:
        node_docs = _nodes(nodes, small, rng)
    types = _pod_types(pod_types, node_docs, small, rng)
    initial = _initial(types, node_docs, small, rng)
    creatable = [pt for pt in types if pt.get("creatable", True)]
    target = rng.choice(creatable or types)
    if not small and rng.random() < 0.3:
        query: dict[str, Any] = {"pod": target["name"], "nodeSelector": {"pool": "public"}
                                 if any(n["labels"]["pool"] == "public" for n in node_docs)
                                 else {"pool": "general"}}
    else:
        # Prefer a node that passes the target's static filters: the question is
        # then decided by capacity and inter-pod constraints, not trivially.
        fitting = [n for n in node_docs if _static_ok(target, n)] or node_docs
        query = {"pod": target["name"], "node": rng.choice(fitting)["name"]}
    doc: dict[str, Any] = {"version": 1, "semantics": "kubernetes"}
    if any(pt.get("namespace") for pt in types):
        doc["namespaces"] = [{"name": "default"},
                             {"name": "payments", "labels": {"team": "payments"}}]
    doc.update({"nodes": node_docs, "podTypes": types, "initial": initial, "query": query})
    return doc
