"""Operator witnesses (issue 29, ``--moves operator``) replayed through the real kube-scheduler (kso).

For every witness the explicit engine returns under operator moves, the trace
is walked step by step from the current state: a deletion (an eviction) must
pass the semantics' guards (budgets still hold after it, the pod is not
protected) and is applied; a deployment is asked of kso in the state before
it -- the Node objects, every pod of that state bound to its node, and the
deployed pod pending -- and kso must find the step's node feasible. Pods are
written as the kubectl export writes them (``export.traces.pod_manifest``),
so what kso sees is what an operator would apply.

Sources: ``examples/pdb-blocks.yaml`` and ``examples/pdb-longer.yaml`` (every
creatable pod type on every node whose operator answer is deployable), and
random Kubernetes dumps (``kso_replay.random_scenario``: a chain of pending
pods that need each other, running pods in the way) with PodDisruptionBudgets
over the running pods.

    python -m benchmarks.operator_kso [--random N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import yaml

from benchmarks.kso_harness import Verdict, find_kso, kso_verdicts
from benchmarks.kso_replay import random_scenario
from symreach import semantics
from symreach.export.traces import pod_manifest
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_states import State
from symreach.loader import load_text
from symreach.loader.moves import rules_for, with_moves
from symreach.model import Config, Instance, Query
from symreach.result import DELETE, Step, Verdict as Answer
from symreach.solvers.base import Limits
from symreach.solvers.explicit import ExplicitEngine

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("examples/pdb-blocks.yaml", "examples/pdb-longer.yaml")
MAX_STATES = 3_000   # per question: deterministic, unlike a timeout


@dataclass
class OperatorWitness:
    """A deployable operator answer: the instance (with its moves), its Node objects, the trace."""

    label: str
    inst: Instance
    nodes: list[dict]
    trace: tuple[Step, ...]

    @property
    def evictions(self) -> int:
        return sum(step.op == DELETE for step in self.trace)


def node_objects(inst: Instance, objects: Optional[Sequence[dict]] = None) -> list[dict]:
    """The input's Node and Namespace objects, or Nodes written from the model (a v1 file)."""
    if objects is not None:
        return [o for o in objects if o.get("kind") in ("Node", "Namespace")]
    out = []
    for node in inst.nodes:
        allocatable = {r: (f"{v}m" if r == "cpu" else str(v)) for r, v in node.capacity.items()}
        allocatable.setdefault("pods", "110")   # a v1 node without a pod limit: the kubelet's default
        spec: dict = {}
        if node.taints:
            spec["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints]
        if node.unschedulable:
            spec["unschedulable"] = True
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name, "labels": dict(node.labels)},
                    "spec": spec, "status": {"allocatable": allocatable, "capacity": dict(allocatable)}})
    return out


def operator_witness(label: str, inst: Instance, nodes: list[dict], t: int, n: int,
                     moves: str = "operator") -> Optional[OperatorWitness]:
    """The explicit engine's witness for type t on node n under ``--moves operator`` (or the
    paper's moves), if deployable."""
    inst = with_moves(inst, rules_for(inst, moves))
    query = Query((frozenset({(t, n)}),), f"{inst.pod_types[t].name} on {inst.nodes[n].name}")
    result = ExplicitEngine().check(inst, query, Limits(max_states=MAX_STATES))
    if result.verdict is not Answer.DEPLOYABLE:
        return None
    return OperatorWitness(f"{label}: {query.description}", inst, nodes, tuple(result.trace))


def deploy_states(w: OperatorWitness) -> list[tuple[State, str]]:
    """Each deployment of the trace as a kso question in the state before it; deletions are
    checked against the operator guards and applied (``GuardError`` if one is refused)."""
    inst, config = w.inst, w.inst.initial_config()
    out = []
    for i, step in enumerate(w.trace):
        t, n = inst.type_index(step.pod), inst.node_index(step.node)
        if step.op == DELETE:
            refused = semantics.delete_failure(inst, config, t, n)
            if refused is not None:
                raise GuardError(f"{w.label}: step {i + 1} {step.pod} on {step.node}: {refused}")
            config = semantics.delete(inst, config, t, n)
            continue
        pending = pod_manifest(inst.pod_types[t], f"replay-step-{i}", step.node, pin="nodeName")
        del pending["spec"]["nodeName"]
        objects = w.nodes + running_pods(inst, config) + [pending]
        out.append((State(objects, f"{inst.pod_types[t].namespace}/replay-step-{i}",
                          [node.name for node in inst.nodes]), step.node))
        config = semantics.deploy(inst, config, t, n)
    return out


class GuardError(Exception):
    """A witness deletion the operator guards refuse: an engine bug."""


def running_pods(inst: Instance, config: Config) -> list[dict]:
    """Every pod of ``config`` bound to its node, one manifest per pod."""
    out = []
    for p, count in enumerate(config):
        t, n = inst.unpair(p)
        for k in range(count):
            out.append(pod_manifest(inst.pod_types[t], f"run-{t}-{n}-{k}", inst.nodes[n].name, pin="nodeName"))
    return out


def replay(witnesses: Sequence[OperatorWitness], kso: Path, workers: int = 2) -> list[list[tuple[str, Verdict]]]:
    """kso's verdict on each deployment's node, per witness, in trace order."""
    plan = [(k, state, node) for k, w in enumerate(witnesses) for state, node in deploy_states(w)]
    verdicts = kso_verdicts([state for _, state, _ in plan], kso, workers=workers)
    out: list[list[tuple[str, Verdict]]] = [[] for _ in witnesses]
    for (k, _, node), verdict in zip(plan, verdicts):
        out[k].append((node, verdict[node]))
    return out


# ---- sources ------------------------------------------------------------------------------------

def example_witnesses(paths: Sequence[str] = EXAMPLES, moves: str = "operator") -> list[OperatorWitness]:
    """Every witness of the examples under ``moves``: each creatable type on each node it may reach."""
    out = []
    for rel in paths:
        path = ROOT / rel
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if "version" in docs[0]:
            inst, objects = load_text(path.read_text(), str(path)), None
        else:
            objects = [item for d in docs for item in (d.get("items") or [d])]
            inst, _ = load_kubernetes_documents(objects, str(path))
        nodes = node_objects(inst, objects)
        for t, pod in enumerate(inst.pod_types):
            for n in range(len(inst.nodes)):
                if pod.creatable and inst.static_block[t][n] is None:
                    w = operator_witness(f"{rel} ({moves})", inst, nodes, t, n, moves)
                    if w is not None and w.trace:   # an empty trace: the pod already runs there
                        out.append(w)
    return out


def with_budgets(rng: random.Random, objects: list[dict]) -> list[dict]:
    """1-2 PodDisruptionBudgets over labels of the running pods (minAvailable or maxUnavailable,
    integers or percentages)."""
    running = [o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName") and o["metadata"].get("labels")]
    out = list(objects)
    for i in range(min(len(running), rng.randint(1, 2))):
        pod = rng.choice(running)
        key, value = rng.choice(sorted(pod["metadata"]["labels"].items()))
        spec: dict = {"selector": {"matchLabels": {key: value}}}
        kind = rng.choice(("minAvailable", "maxUnavailable"))
        spec[kind] = rng.choice((0, 1, 1, 2, "50%")) if kind == "minAvailable" else rng.choice((0, 0, 1, "50%"))
        out.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"pdb-{i}", "namespace": pod["metadata"].get("namespace", "default")},
                    "spec": spec})
    return out


def random_witnesses(count: int, seed: int, max_tries: int = 60) -> tuple[list[OperatorWitness], int]:
    """``count`` operator witnesses from seeded scenarios with budgets; also how many were tried."""
    rng = random.Random(seed)
    out: list[OperatorWitness] = []
    tries = 0
    while len(out) < count and tries < count * max_tries:
        objects, chain = random_scenario(rng)
        objects = with_budgets(rng, objects)
        tries += 1
        inst, _ = load_kubernetes_documents(objects, f"<scenario {tries}>")
        t = inst.type_index(chain[-1])
        for n in range(len(inst.nodes)):
            if inst.static_block[t][n] is None:
                w = operator_witness(f"scenario {tries}", inst, node_objects(inst, objects), t, n)
                if w is not None and len(w.trace) >= 2:
                    out.append(w)
                    break
    return out, tries


def longer_than_paper(w: OperatorWitness) -> bool:
    """Whether the paper's moves reach the same target in fewer steps (a budget lengthened it)."""
    target = w.trace[-1]
    t, n = w.inst.type_index(target.pod), w.inst.node_index(target.node)
    paper = operator_witness("paper", w.inst, w.nodes, t, n, "paper")
    return paper is not None and len(paper.trace) < len(w.trace)


def summary(witnesses: Sequence[OperatorWitness], verdicts: list[list[tuple[str, Verdict]]]) -> dict[str, int]:
    refused = sum(v is not None for per in verdicts for _, v in per)
    return {"witnesses": len(witnesses), "longer than the paper's": sum(map(longer_than_paper, witnesses)),
            "with evictions": sum(w.evictions > 0 for w in witnesses),
            "evictions": sum(w.evictions for w in witnesses), "deploy steps": sum(len(per) for per in verdicts),
            "accepted by kso": sum(v is None for per in verdicts for _, v in per), "refused by kso": refused}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=200, help="random operator witnesses to replay")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    kso = find_kso()
    if kso is None:
        raise SystemExit("kso not found (shared/tools/kso/kso)")
    start = time.monotonic()
    rows = []
    for moves in ("operator", "paper"):
        examples = example_witnesses(moves=moves)
        rows.append((f"examples (pdb-blocks, pdb-longer), {moves} moves", examples, replay(examples, kso)))
    found, tries = random_witnesses(args.random, args.seed)
    rows.append((f"random dumps with PDBs (seed {args.seed}, {tries} tried)", found, replay(found, kso)))
    print(f"load before/after: {os.getloadavg()[0]:.1f}", end="")
    for label, ws, verdicts in rows:
        print(f"\n{label}: {summary(ws, verdicts)}")
        print("  " + "; ".join(f"{w.label} ({len(w.trace)} steps)" for w in ws[:6]) + (" ..." if len(ws) > 6 else ""))
        for w, per in zip(ws, verdicts):
            for node, v in per:
                if v is not None:
                    print(f"  REFUSED {w.label}: {node}: {v}")
    print(f"\n{time.monotonic() - start:.1f} s wall; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
