"""Timing of the gang question on a 500-node cluster with a 64-member gang (issue 28).

Three instances, built in memory: ``train`` (a launcher and 63 GPU workers
that need the launcher's zone, queued workers first: the scheduler's cycle
fails, a placement exists), ``homogeneous`` (64 identical 1-GPU workers,
no inter-pod constraint: the cycle succeeds for every choice) and ``spread`` (64 replicas with hostname
anti-affinity on a pool of 63 nodes: never). Prints one line per instance:
verdict, scheduler cycle, wall time, explored gang states.

    python -m benchmarks.gang_timing
"""

from __future__ import annotations

import time

from symreach.loader import load_document
from symreach.solvers.gang_explicit import answer

NODES, ZONES = 500, 5


def _nodes(pool_of) -> list[dict]:
    return [{"name": f"n{i:03d}", "labels": {"topology.kubernetes.io/zone": f"z{i % ZONES}", "pool": pool_of(i)},
             "capacity": {"cpu": "16", "nvidia.com/gpu": 1, "pods": 110}} for i in range(NODES)]


def train() -> dict:
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"role": "launcher"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}
    return {"version": 1, "nodes": _nodes(lambda i: "gpu"),
            "podTypes": [{"name": "launcher", "labels": {"role": "launcher"}, "requests": {"cpu": "1"}},
                         {"name": "worker", "labels": {"role": "worker"}, "affinity": affinity,
                          "requests": {"cpu": "4", "nvidia.com/gpu": 1}}],
            "groups": [{"name": "ml/train", "policy": {"gang": {"minCount": 64}},
                        "members": [{"pod": "worker", "count": 63}, {"pod": "launcher", "count": 1}]}]}


def spread() -> dict:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return {"version": 1, "nodes": _nodes(lambda i: "db" if i < 63 else "web"),
            "podTypes": [{"name": "replica", "labels": {"app": "db"}, "requests": {"cpu": "1"},
                          "nodeSelector": {"pool": "db"}, "affinity": anti}],
            "groups": [{"name": "db/replicas", "policy": {"gang": {"minCount": 64}},
                        "members": [{"pod": "replica", "count": 64}]}]}


def homogeneous() -> dict:
    return {"version": 1, "nodes": _nodes(lambda i: "gpu"),
            "podTypes": [{"name": "worker", "requests": {"cpu": "4", "nvidia.com/gpu": 1}}],
            "groups": [{"name": "ml/plain", "policy": {"gang": {"minCount": 64}},
                        "members": [{"pod": "worker", "count": 64}]}]}


def main() -> None:
    cases = (("train", train(), "ml/train"), ("spread", spread(), "db/replicas"),
             ("homogeneous", homogeneous(), "ml/plain"))
    for label, doc, group in cases:
        inst = load_document(doc)
        start = time.perf_counter()
        ans = answer(inst, group, timeout_s=120)
        wall = time.perf_counter() - start
        cycle = None if ans.cycle is None else ans.cycle.outcome
        print(f"{label}: {len(inst.nodes)} nodes, {ans.members} members: {ans.result.verdict.value}, "
              f"scheduler cycle {cycle}, placement now {ans.placement_now is not None}, {wall:.2f} s, "
              f"gang states {ans.result.stats.get('gang_states')}")


if __name__ == "__main__":
    main()
