"""Seeded Kubernetes-like clusters that preprocessing does not decide.

``generators.clusters`` draws constraints independently, so the may-fixpoint
or a fast path almost always answers before an engine runs. Here the
constraints are *composed* the way a service mesh composes them, so that
reaching the query needs a long plan of deletions and deployments:

- **a dependency pyramid of services** (``svc-L-i``, level ``L = 1..h``,
  ``i = 0..h-L``): ``svc-L-i`` requires pod affinity to ``svc-(L-1)-i`` and
  ``svc-(L-1)-(i+1)``, by *hostname* for ``L >= 2`` (sidecar-style
  co-location) and by *zone* from level 1 to the data layer. In the
  ``kubernetes`` profile a pod counts for required affinity only when it
  matches every term, so there one term accepts *either* parent and
  ``svc-L-i`` is anti-affine (hostname) to tier ``L-2``, which must leave
  the host before level ``L`` arrives; the gateway is anti-affine to tier
  ``h-1``;
- **self-affine StatefulSets** at level 0 (``db-i``): each requires affinity
  to its own app by zone, and one replica already runs in some zone, so new
  replicas can only join that zone (or the last one must be deleted first:
  the bootstrap rule of each profile applies);
- **anti-affinity pools**: ``cache-j`` replicas repel every ``pool: cache``
  pod by hostname (at most one cache per node); the gateway needs one;
- **hard topology spread**: ``web`` spreads over zones with ``maxSkew: 1``
  and ``minDomains`` = number of zones (``DoNotSchedule``), with an
  unbalanced initial placement;
- **a chain of required affinity across zones and hostnames** to the query:
  ``gateway`` needs the pyramid's apex and a cache on its host and ``web`` in
  its zone;
- **tight capacity**: mesh nodes (label ``pool: mesh``, where the services
  are pinned by ``nodeSelector``) fit ``h + 3`` service pods of 250m CPU, the
  query node only ``k``; the initial configuration fills them with
  ``batch-*`` pods;
- the remaining workloads are independent tiers (``app-*``) with random
  hostname/zone affinity and anti-affinity among themselves.

On the query node the pyramid is black pebbling (paper Appendix C) with ``k``
pebbles, but zone-scoped edges, the StatefulSets and the shared capacity of
the other mesh nodes change the price, so the answer is *not* known in
closed form: benchmarks cross-check the engines against each other and, on
small sizes, against the explicit engine. ``k`` alternates with the seed
between ``h`` and ``h + 1`` (at least 3: gateway, apex and a cache share
the host), which gives both answers at most sizes.

Sizes: 20-500 nodes, 10-200 workloads; both profiles (``semantics``).
Deterministic: the same arguments give the same document.
"""

from __future__ import annotations

import random
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
SERVICE_MILLI = 250


def _sel(**labels: str) -> dict[str, Any]:
    return {"matchLabels": dict(labels)}


def _affinity(kind: str, terms: list[tuple[dict, str]]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": sel, "topologyKey": key} for sel, key in terms]}}


def pyramid_height(workloads: int) -> int:
    """The largest h whose pyramid (db layer included) uses at most about half
    the workloads, between 2 and 8."""
    h = 2
    while h < 8 and (h + 2) * (h + 3) // 2 + 5 <= max(10, workloads // 2):
        h += 1
    return h


def generate_hard_cluster(nodes: int, workloads: int, seed: int, profile: str = "kubernetes") -> dict:
    """A format-v1 instance (plain dict); see the module docstring."""
    if nodes < 6 or workloads < 10:
        raise ValueError("hard clusters need at least 6 nodes and 10 workloads")
    if profile not in ("kubernetes", "paper"):
        raise ValueError(f"unknown profile {profile!r}")
    rng = random.Random(f"hard-{nodes}-{workloads}-{seed}-{profile}")
    zones = [f"zone-{chr(ord('a') + z)}" for z in range(3)]
    h = pyramid_height(workloads)
    k = max(3, h + seed % 2)
    n_mesh = min(nodes, max(6, nodes // 8))  # two mesh nodes per zone at least
    node_docs, mesh = [], []
    cap: dict[str, int] = {}
    for i in range(nodes):
        is_mesh = i < n_mesh
        name = f"{'mesh' if is_mesh else 'node'}-{i:03d}"
        cpu = (k if i == 0 else h + 3) * SERVICE_MILLI if is_mesh else 4000
        cap[name] = cpu
        node_docs.append({"name": name, "labels": {ZONE: zones[i % 3], "pool": "mesh" if is_mesh else "general"},
                          "capacity": {"cpu": f"{cpu}m", "memory": "64Gi"}})
        if is_mesh:
            mesh.append(name)
    hot = mesh[0]
    hot_zone = zones[0]

    types: list[dict[str, Any]] = []
    initial: list[dict[str, Any]] = []
    used = {m: 0 for m in mesh}

    def place(pod: str, candidates: list[str]) -> None:
        """One pod on a random candidate mesh node with room for it."""
        free = [m for m in candidates if used[m] + SERVICE_MILLI <= cap[m]]
        m = rng.choice(free)
        used[m] += SERVICE_MILLI
        initial.append({"pod": pod, "node": m, "count": 1})

    def service(name: str, labels: dict[str, str], **extra: Any) -> dict[str, Any]:
        pt = {"name": name, "labels": {"app": name, **labels},
              "requests": {"cpu": f"{SERVICE_MILLI}m", "memory": "256Mi"},
              "nodeSelector": {"pool": "mesh"}}
        pt.update(extra)
        types.append(pt)
        return pt

    # data layer: self-affine StatefulSets, one replica running in some zone
    for i in range(h + 1):
        db = f"db-{i}"
        service(db, {"tier": "data"}, affinity=_affinity("podAffinity", [(_sel(app=db), ZONE)]))
        place(db, mesh[1:])
    # the pyramid: zone edges to the data layer, hostname edges above
    kube = profile == "kubernetes"
    for lv in range(1, h + 1):
        for i in range(h + 1 - lv):
            below = [f"db-{j}" if lv == 1 else f"svc-{lv - 1}-{j}" for j in (i, i + 1)]
            key = ZONE if lv == 1 else HOSTNAME
            if not kube:
                aff = _affinity("podAffinity", [(_sel(app=b), key) for b in below])
            else:
                # the kube-scheduler counts a pod for required affinity only if it
                # matches *every* term, so two terms naming two apps never hold:
                # one term accepts either parent, and the tier two levels down
                # must have left the host (anti-affinity), which forces deletions
                aff = _affinity("podAffinity", [(
                    {"matchExpressions": [{"key": "app", "operator": "In", "values": below}]}, key)])
                if lv >= 3:
                    aff.update(_affinity("podAntiAffinity", [(_sel(tier=f"l{lv - 2}"), HOSTNAME)]))
            service(f"svc-{lv}-{i}", {"tier": f"l{lv}"}, affinity=aff)
    apex = f"svc-{h}-0"
    # anti-affinity pool
    n_cache = 2
    for j in range(n_cache):
        service(f"cache-{j}", {"pool": "cache"},
                affinity=_affinity("podAntiAffinity", [(_sel(pool="cache"), HOSTNAME)]))
        place(f"cache-{j}", mesh[1:])
    # hard spread, unbalanced start outside the hot zone
    service("web", {"tier": "edge"}, topologySpreadConstraints=[{
        "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": _sel(app="web"), "minDomains": 3}])
    place("web", [m for j, m in enumerate(mesh) if node_docs[j]["labels"][ZONE] != hot_zone])
    # the query: hostname chain to the apex and a cache, zone chain to web
    if not kube:
        gw_aff = _affinity("podAffinity", [(_sel(app=apex), HOSTNAME), (_sel(pool="cache"), HOSTNAME),
                                           (_sel(app="web"), ZONE)])
    else:  # one pod must match every term: the apex carries the cache's pool label
        next(t for t in types if t["name"] == apex)["labels"]["pool"] = "edge"
        gw_aff = _affinity("podAffinity", [(_sel(app=apex), HOSTNAME), (_sel(pool="edge"), ZONE)])
        gw_aff.update(_affinity("podAntiAffinity", [(_sel(tier=f"l{h - 1}"), HOSTNAME)]))
    service("gateway", {"tier": "edge"}, affinity=gw_aff)
    # fillers: the mesh starts full
    n_batch = 3
    for b in range(n_batch):
        types.append({"name": f"batch-{b}", "labels": {"app": f"batch-{b}", "tier": "batch"},
                      "requests": {"cpu": f"{SERVICE_MILLI}m", "memory": "128Mi"}})
    for m in mesh:
        free = (cap[m] - used[m]) // SERVICE_MILLI
        if free > 0:
            initial.append({"pod": f"batch-{rng.randrange(n_batch)}", "node": m, "count": free})
    # independent tiers up to the workload count
    rest = workloads - len(types)
    apps = [f"app-{j}" for j in range(max(0, rest))]
    for j, app in enumerate(apps):
        pt: dict[str, Any] = {"name": app, "labels": {"app": app, "tier": "misc"},
                              "requests": {"cpu": f"{rng.choice([100, 250, 500])}m", "memory": "256Mi"}}
        aff: dict[str, Any] = {}
        if j > 0 and rng.random() < 0.6:
            aff.update(_affinity("podAffinity", [(_sel(app=apps[rng.randrange(j)]),
                                                  rng.choice([ZONE, HOSTNAME]))]))
        if rng.random() < 0.4:
            aff.update(_affinity("podAntiAffinity", [(_sel(app=app), HOSTNAME)]))
        if aff:
            pt["affinity"] = aff
        types.append(pt)
        if rng.random() < 0.3:
            initial.append({"pod": app, "node": node_docs[rng.randrange(n_mesh, nodes) if nodes > n_mesh
                                                        else 0]["name"], "count": 1})
    merged: dict[tuple[str, str], int] = {}
    for e in initial:
        merged[(e["pod"], e["node"])] = merged.get((e["pod"], e["node"]), 0) + e["count"]
    return {"version": 1, "semantics": profile, "nodes": node_docs, "podTypes": types,
            "initial": [{"pod": p, "node": n, "count": c} for (p, n), c in sorted(merged.items())],
            "query": {"pod": "gateway", "node": hot}}
