"""The benchmark families: instances with their size, series and known answer.

Every family yields ``symreach.bench.runner.BenchInstance`` objects holding a
format-v1 document. Sizes grow within a *series* (one family, one polarity),
so the runner can stop an engine on a series once it failed at a smaller size.

- ``pyramid`` / ``tree``: Appendix C pebbling of ``generators.dags.pyramid(h)``
  and ``binary_tree(h)``; the price is h+2, so k = h+2 is deployable and
  k = h+1 is not (size: h).
- ``mcc``: Appendix B encoding of the one-safe nets of
  ``/work/shared/data/petri`` with goals from ``answers.json``: the coverable
  place a breadth-first search over markings marks last (the deepest
  question) and one marked at about half that depth; the first and the last
  never-markable place when the answers list any (size: state bits = pod
  types of the encoding). Per net and polarity the shallower goal is asked
  first, and an engine that fails on it is not asked the deeper one.
- ``ring`` / ``mutex`` / ``philosophers``: ``generators.nets`` families at
  growing n, goal the documented coverable place and the violation place
  (size: n).
- ``cluster``: ``generators.clusters.generate_cluster`` at growing node and
  pod-type counts, a few seeds; no ground truth, engines are checked against
  each other (size: nodes).
- ``hard``: ``generators.hard_clusters.generate_hard_cluster`` (service
  pyramids under tight capacity, self-affine StatefulSets, anti-affinity
  pools, hard spread) at growing nodes x workloads, both profiles, two
  seeds; preprocessing does not decide them, engines are checked against
  each other (size: nodes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional, Sequence

from symreach.bench.runner import BenchInstance
from symreach.frontends.petri_net import PetriNet, read_pnml
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.frontends.reduction_petri import encode_petri
from symreach.generators import clusters, dags, hard_clusters, nets
from benchmarks.shared_data import PETRI_DIR

PETRI_DATA = PETRI_DIR
DEPLOYABLE, NOT_DEPLOYABLE = "deployable", "not-deployable"


@dataclass(frozen=True)
class Plan:
    """Sizes of every family for one kind of run."""

    pyramid: Sequence[int]
    tree: Sequence[int]
    mcc_nets: Optional[Sequence[str]]  # None: every net in PETRI_DATA
    net_sizes: Sequence[int]
    clusters: Sequence[tuple[int, int]]  # (nodes, pod types)
    cluster_seeds: Sequence[int]
    timeout_s: float = 10.0  # per job
    family_timeout_s: dict = field(default_factory=dict)  # family -> per-job limit
    hard: Sequence[tuple[int, int]] = ()  # (nodes, workloads) of the hard family
    hard_seeds: Sequence[int] = (0, 1)

    def timeout_for(self, family: str) -> float:
        return self.family_timeout_s.get(family, self.timeout_s)


FULL = Plan(pyramid=(2, 3, 4, 5, 6, 7, 8), tree=(2, 3, 4, 5, 6), mcc_nets=None,
            net_sizes=(2, 3, 4, 6, 8, 12, 16),
            clusters=((4, 5), (8, 9), (16, 12), (32, 18), (64, 24)), cluster_seeds=(1, 2),
            timeout_s=8.0, family_timeout_s={"pyramid": 15.0, "tree": 15.0, "mcc": 4.0, "hard": 10.0},
            hard=((20, 10), (50, 30), (100, 60), (200, 100), (500, 200)))
QUICK = Plan(pyramid=(2, 3), tree=(2,), mcc_nets=("ERK-PT-000001", "Sudoku-PT-AN01"),
             net_sizes=(2,), clusters=((4, 5),), cluster_seeds=(1,), timeout_s=3.0,
             hard=((20, 10),), hard_seeds=(1,))

FAMILIES = ("pyramid", "tree", "mcc", "ring", "mutex", "philosophers", "cluster", "hard")


def pebbling(kind: str, heights: Sequence[int]) -> Iterator[BenchInstance]:
    make = dags.pyramid if kind == "pyramid" else dags.binary_tree
    for h in heights:
        dag = make(h)
        for k, expected in ((h + 2, DEPLOYABLE), (h + 1, NOT_DEPLOYABLE)):
            doc = encode_pebbling(dag.vertices, dag.edges, dag.target, k)
            yield BenchInstance(f"{kind}/h{h}/k{k}", kind, h, document=doc, expected=expected,
                                series=f"{kind}/{expected}",
                                meta={"h": h, "k": k, "vertices": len(dag.vertices)})


def first_marked_depth(net: PetriNet, max_markings: int = 50_000,
                       max_depth: Optional[int] = None) -> dict[str, int]:
    """For every place some marking marks: the least number of firings to mark it
    (breadth-first over markings, stopped after ``max_markings`` or after the
    level ``max_depth``)."""
    start = frozenset(net.initial)
    depth_of = {p: 0 for p in start}
    seen, frontier, depth = {start}, [start], 0
    while frontier and len(seen) < max_markings and (max_depth is None or depth < max_depth):
        depth += 1
        nxt = []
        for m in frontier:
            for t in net.transitions:
                if t.pre <= m:
                    m2 = (m - t.pre) | t.post
                    if m2 not in seen:
                        seen.add(m2)
                        nxt.append(m2)
                        for p in m2:
                            depth_of.setdefault(p, depth)
        frontier = nxt
    return depth_of


def mcc_goals(net: PetriNet, answer: dict) -> list[tuple[str, str, int]]:
    """(goal place, expected verdict, firings or -1) of one net."""
    depth = first_marked_depth(net)
    coverable = set(answer.get("coverable") or ())
    order = {p: i for i, p in enumerate(net.places)}
    marked = sorted((p for p in depth if p in coverable), key=lambda p: (depth[p], -order[p]))
    goals: list[tuple[str, str, int]] = []
    if marked:
        deep = marked[-1]
        half = min(marked, key=lambda p: (abs(depth[p] - depth[deep] / 2), order[p]))
        for p in dict.fromkeys([half, deep]):
            goals.append((p, DEPLOYABLE, depth[p]))
    never = list(answer.get("not_coverable") or ())
    for p in dict.fromkeys(never[:1] + never[-1:]):
        goals.append((p, NOT_DEPLOYABLE, -1))
    return goals


def mcc(names: Optional[Sequence[str]] = None, data: Path = PETRI_DATA) -> Iterator[BenchInstance]:
    answers_path = data / "answers.json"
    if not answers_path.exists():
        return
    answers = json.loads(answers_path.read_text())
    for name in sorted(answers) if names is None else names:
        path = data / f"{name}.pnml"
        if name not in answers or not path.exists():
            continue
        net = read_pnml(path)
        rank = {DEPLOYABLE: 0, NOT_DEPLOYABLE: 0}
        for goal, expected, firings in mcc_goals(net, answers[name]):
            doc = encode_petri(net, goal)
            bits = len(doc["podTypes"]) * len(doc["nodes"])
            # Within one net and polarity the shallower goal goes first; an engine
            # that fails on it is not run on the deeper one.
            yield BenchInstance(f"mcc/{name}/{goal}", "mcc", bits, document=doc, expected=expected,
                                series=f"mcc/{name}/{expected}", rank=rank[expected],
                                meta={"net": name, "goal": goal, "places": len(net.places),
                                      "transitions": len(net.transitions), "firings": firings})
            rank[expected] += 1


def net_family(kind: str, sizes: Sequence[int]) -> Iterator[BenchInstance]:
    make = nets.FAMILIES[kind]
    for n in sizes:
        fam = make(n)
        for goal, expected in ((fam.coverable, DEPLOYABLE), (fam.never_marked, NOT_DEPLOYABLE)):
            if goal is None:
                continue
            doc = encode_petri(fam.net, goal)
            yield BenchInstance(f"{kind}/n{n}/{goal}", kind, n, document=doc, expected=expected,
                                series=f"{kind}/{expected}",
                                meta={"n": n, "goal": goal, "bits": len(doc["podTypes"])})


def cluster_family(sizes: Sequence[tuple[int, int]], seeds: Sequence[int]) -> Iterator[BenchInstance]:
    for seed in seeds:
        for nodes, types in sizes:
            doc = clusters.generate_cluster(nodes=nodes, pod_types=types, seed=seed)
            yield BenchInstance(f"cluster/s{seed}/{nodes}x{types}", "cluster", nodes, document=doc,
                                series=f"cluster/s{seed}",
                                meta={"nodes": nodes, "pod_types": types, "seed": seed})


def hard_family(sizes: Sequence[tuple[int, int]], seeds: Sequence[int]) -> Iterator[BenchInstance]:
    for profile in ("paper", "kubernetes"):
        for seed in seeds:
            for nodes, workloads in sizes:
                doc = hard_clusters.generate_hard_cluster(nodes, workloads, seed, profile)
                yield BenchInstance(f"hard/{profile}/s{seed}/{nodes}x{workloads}", "hard", nodes, document=doc,
                                    series=f"hard/{profile}/s{seed}",
                                    meta={"nodes": nodes, "workloads": workloads, "seed": seed,
                                          "profile": profile})


def build(plan: Plan, families: Sequence[str] = FAMILIES) -> list[BenchInstance]:
    out: list[BenchInstance] = []
    for family in families:
        if family in ("pyramid", "tree"):
            out += pebbling(family, getattr(plan, family))
        elif family == "mcc":
            out += mcc(plan.mcc_nets)
        elif family in nets.FAMILIES:
            out += net_family(family, plan.net_sizes)
        elif family == "cluster":
            out += cluster_family(plan.clusters, plan.cluster_seeds)
        elif family == "hard":
            out += hard_family(plan.hard, plan.hard_seeds)
        else:
            raise ValueError(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")
    return out
