"""Timing of the gang question on a 500-node cluster with a 64-member gang (issue 28).

Four instances, built in memory: ``train`` (a launcher and 63 GPU workers
that need the launcher's zone, queued workers first: the scheduler's cycle
fails, a placement exists), ``homogeneous`` (64 identical 1-GPU workers,
no inter-pod constraint: the cycle succeeds for every choice), ``spread`` (64 replicas with hostname
anti-affinity on a pool of 63 nodes: never) and ``composite`` (a
CompositePodGroup over 8 PodGroups of 8 GPU workers, minGroupCount 8: the
hierarchy's cycle, KEP-6012). Every engine that answers group targets
(``cli.group_check.GROUP_ENGINES``) is timed on each, side by side in one
run, through ``symreach check FILE --group G --engine E --json`` in-process
(load + decide), ``--repeat`` times; the load is printed before and after.

    python -m benchmarks.gang_timing [--repeat 3] [--out benchmarks/results/gang_timing.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from symreach.cli import cli
from symreach.cli.group_check import GROUP_ENGINES

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


def composite() -> dict:
    """8 PodGroups of 8 one-GPU workers under a CompositePodGroup needing all 8."""
    leaves = [{"name": f"ml/part-{k}", "parent": "ml/job", "policy": {"gang": {"minCount": 8}},
               "members": [{"pod": f"worker-{k}", "count": 8}]} for k in range(8)]
    return {"version": 1, "nodes": _nodes(lambda i: "gpu"),
            "podTypes": [{"name": f"worker-{k}", "labels": {"part": str(k)},
                          "requests": {"cpu": "4", "nvidia.com/gpu": 1}} for k in range(8)],
            "groups": [{"name": "ml/job", "composite": True, "policy": {"gang": {"minGroupCount": 8}}}] + leaves}


CASES = (("train", train, "ml/train"), ("homogeneous", homogeneous, "ml/plain"),
         ("spread", spread, "db/replicas"), ("composite", composite, "ml/job"))


def run_once(path: str, group: str, engine: str) -> tuple[float, dict]:
    start = time.perf_counter()
    out = CliRunner().invoke(cli, ["check", path, "--group", group, "--engine", engine, "--json",
                                   "--timeout", "120"], catch_exceptions=False)
    wall = time.perf_counter() - start
    return wall, json.loads(out.output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [f"load before: {os.getloadavg()[0]:.1f}; engines: {', '.join(GROUP_ENGINES)}; "
             f"{args.repeat} runs each, interleaved",
             "", "| gang | engine | answer | scheduler cycle | nodes | members | wall s (min / median) | engine s (median) |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for label, make, _ in CASES:
            paths[label] = str(Path(tmp) / f"{label}.json")
            Path(paths[label]).write_text(json.dumps(make()))
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        answers: dict[tuple[str, str], dict] = {}
        for _ in range(args.repeat):
            for label, _, group in CASES:
                for engine in GROUP_ENGINES:
                    wall, data = run_once(paths[label], group, engine)
                    times.setdefault((label, engine), []).append((wall, float(data.get("time_s") or 0)))
                    answers[(label, engine)] = data
    for label, make, _ in CASES:
        doc = make()
        members = sum(m["count"] for g in doc["groups"] for m in g.get("members", []))
        for engine in GROUP_ENGINES:
            data, runs = answers[(label, engine)], times[(label, engine)]
            walls = [w for w, _ in runs]
            group = data.get("group") or {}
            lines.append(f"| {label} | {engine} ({data.get('engine')}) | {data.get('verdict')} | "
                         f"{group.get('scheduler_cycle')} | {len(doc['nodes'])} | {members} | "
                         f"{min(walls):.2f} / {statistics.median(walls):.2f} | "
                         f"{statistics.median(t for _, t in runs):.2f} |")
    lines += ["", f"load after: {os.getloadavg()[0]:.1f}"]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text("# Gang question timing (issue 28 must-show)\n\n"
                            "`python -m benchmarks.gang_timing --repeat "
                            f"{args.repeat}`, 2-core machine shared by 8 engineers.\n\n" + text + "\n")


if __name__ == "__main__":
    main()
