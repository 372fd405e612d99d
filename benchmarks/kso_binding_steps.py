"""Claim bindings against the real kube-scheduler: verdicts after deployments that bind claims.

kso answers one scheduling step. Where a state's pods bind WaitForFirstConsumer
claims when deployed (``Instance.binding_groups``), symreach's answer after such a
deployment depends on the binding it modelled; this walks a few deployments and
asks kso each time. A walk from a random state: pick a deployment the semantics
allows (one that binds claims where there is one), apply it (``semantics.deploys``: one of
the bindings the scheduler may choose, at random),
write the state kso must see (the claims bound as the trace bound them,
``kso_replay.with_bindings``; the deployed pod running on its node), and ask kso
about a fresh pending copy of every pod type that takes part in a binding
(and the deployed one), on every node; symreach answers with
``semantics.node_failure`` in the configuration reached. The pods copied have no
generic ephemeral volume (a copy's claim name would differ) and are not terminating
(``_copyable``); a copy drops the status, so a resized pod's copy is a new pod of its spec.
A probe's node verdict that depends on the informer's order (``kso_order.order_nodes`` on the
state reached: its claims compete for equal-size PVs) is judged as the states' own are: against
kso's outcomes over ``kso_order.RUNS`` runs (``kso_order.judge``), since one kso run answers one
order at random.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Sequence

from benchmarks.kso_harness import Verdict, admitted, kso_pending, normalized
from benchmarks.kso_order import RUNS, judge, order_nodes
from benchmarks.kso_replay import with_bindings
from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_states import State


@dataclass
class Question:
    """One state of a walk: the objects kso reads, each probe pod's type, symreach's verdicts."""

    state: int
    step: int
    objects: list[dict]
    probes: dict[str, str]                          # "ns/probe-k" -> pod type
    ours: dict[str, dict[str, Verdict]]             # probe -> node -> verdict
    binds: bool                                     # the step's deployment bound claims
    chosen: bool = False                            # ... in one of several ways the scheduler may choose
    sets: dict = field(default_factory=dict)        # (probe, node) -> every reason of a run-decided refusal


def walk(index: int, state: State, rng: random.Random, steps: int = 2) -> list[Question]:
    """Up to ``steps`` deployments from the state, with the questions after each."""
    inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    if not inst.binding_groups:
        return []
    pods = {f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}": o
            for o in state.objects if o["kind"] == "Pod"}
    first: dict[int, dict] = {}
    # A resized running pod's own type is not creatable; new pods of its spec get ``report.resized``'s.
    for full, type_name in (list(report.attachments.items()) + list(report.pending.items())
                            + list(report.resized.items())):
        pod = pods.get(full)
        if pod is not None and _copyable(pod):
            first.setdefault(inst.type_index(type_name), pod)
    users = {t for g in inst.binding_groups for t in g.users}
    pending_type = inst.type_index(report.pending.get(state.pending, state.pending))
    probes = sorted(t for t in users | {pending_type} if t in first and inst.pod_types[t].creatable)
    if not probes:
        return []
    base = [o for o in state.objects if o["kind"] != "Pod"]
    running = [o for o in state.objects if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    sigma = inst.initial_config()
    placed: list[dict] = []
    out = []
    for step in range(steps):
        moves = [(t, n) for t in probes for n in range(len(inst.nodes))
                 if semantics.deploy_failure(inst, t, n, sigma) is None]
        binding = [m for m in moves if semantics.binding_choices(inst, sigma, *m)]
        if not moves:
            break
        t, n = rng.choice(binding or moves)
        choices = semantics.deploys(inst, sigma, t, n)   # which PV the scheduler takes: any of its choices
        sigma = (rng.choice(choices) if len(choices) > 1 else choices[0])[1]
        placed.append(_pod_copy(first[t], f"placed-{step}", inst.nodes[n].name))
        named = {}
        probe_pods = []
        for k, u in enumerate(probes):
            pod = _pod_copy(first[u], f"probe-{k}", None)
            named[f"{pod['metadata'].get('namespace', 'default')}/probe-{k}"] = inst.pod_types[u].name
            probe_pods.append(pod)
        ours = {name: {node.name: _verdict(inst, inst.type_index(type_name), m, sigma)
                       for m, node in enumerate(inst.nodes)} for name, type_name in named.items()}
        objects = with_bindings(base, inst, sigma) + running + placed + probe_pods
        sets = {(name, node.name): set(f.alternatives) for name, type_name in named.items()
                for m, node in enumerate(inst.nodes)
                if (f := semantics.node_failure(inst, inst.type_index(type_name), m, sigma)) is not None and f.others}
        out.append(Question(index, step, objects, named, ours, bool(binding), len(choices) > 1, sets))
    return out


def _verdict(inst, t: int, n: int, sigma) -> Verdict:
    failure = semantics.node_failure(inst, t, n, sigma)
    return None if failure is None else (failure.plugin, failure.reasons)


def _copyable(pod: dict) -> bool:
    """Not terminating, no generic ephemeral volume (a copy drops the status: a resized pod's copy
    is a new pod of its spec, as the type of new pods is)."""
    volumes = pod["spec"].get("volumes") or []
    return not pod["metadata"].get("deletionTimestamp") and not any("ephemeral" in v for v in volumes)


def _pod_copy(pod: dict, name: str, node: Optional[str]) -> dict:
    out = copy.deepcopy(pod)
    out["metadata"]["name"] = name
    out["metadata"].pop("uid", None)
    out.pop("status", None)
    out["spec"].pop("nodeName", None)
    if node is not None:
        out["spec"]["nodeName"] = node
    return out


BINDING_CAVEATS = ("claim(s) ",)


def binding_caveats(states: Sequence[State]) -> tuple[int, int, Counter]:
    """(states whose pods bind claims, states with a claim-binding caveat, caveats by kind)."""
    bound = marked = 0
    kinds: Counter = Counter()
    for state in states:
        inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
        bound += bool(inst.binding_groups)
        notes = {c for cs in report.caveats.values() for c in cs if c.startswith(BINDING_CAVEATS)}
        marked += bool(notes)
        kinds.update({_kind(c) for c in notes})
    return bound, marked, kinds


def _kind(caveat: str) -> str:
    for key in ("another CSI driver", "joint bindings", "provisioned", "which reason", "search states"):
        if key in caveat:
            return key
    return caveat


@dataclass
class Tally:
    questions: int = 0
    binding_steps: int = 0
    chosen_steps: int = 0      # binding in one of several ways (which PV: the informer's order)
    verdicts: int = 0
    fit_same: int = 0
    same: int = 0
    ordered: int = 0           # of the verdicts: judged against kso's outcomes over RUNS runs
    ordered_fit: int = 0       # ... where symreach fits


def compare_walks(questions: Sequence[Question], kso, runs: int = RUNS
                  ) -> tuple[Tally, list[tuple[Question, str, str, object, Verdict]]]:
    """kso's verdicts on every probe of every question against symreach's; where the verdict
    depends on the informer's order, kso's outcome set over ``runs`` runs (a disagreement then
    shows that set)."""
    tally = Tally()
    wrong = []
    nodes = [list(next(iter(q.ours.values()))) for q in questions]
    answers = kso_pending([admitted(q.objects) for q in questions], [list(q.probes) for q in questions], nodes, kso)
    ordered = [{probe: set(order_nodes(State(q.objects, probe, names))) for probe in q.probes}
               for q, names in zip(questions, nodes)]
    outcomes = _outcome_sets(questions, [k for k, o in enumerate(ordered) if any(o.values())], nodes, kso, runs - 1)
    for k, (q, theirs) in enumerate(zip(questions, answers)):
        tally.questions += 1
        tally.binding_steps += q.binds
        tally.chosen_steps += q.chosen
        for probe, verdicts in q.ours.items():
            for node, ours in verdicts.items():
                kso_v = theirs[probe][node]
                tally.verdicts += 1
                if node in ordered[k][probe]:
                    seen = outcomes[k][probe][node] | {normalized(kso_v)}
                    tally.ordered += 1
                    tally.ordered_fit += ours is None
                    tally.fit_same += (ours is None) == (None in seen)
                    if judge(q.sets.get((probe, node), ours), seen):
                        tally.same += 1
                    else:
                        wrong.append((q, probe, node, sorted(seen, key=str), ours))
                    continue
                tally.fit_same += (kso_v is None) == (ours is None)
                if normalized(kso_v) == normalized(ours):
                    tally.same += 1
                else:
                    wrong.append((q, probe, node, kso_v, ours))
    return tally, wrong


def _outcome_sets(questions: Sequence[Question], asked: Sequence[int], nodes: Sequence[list[str]], kso, runs: int
                  ) -> dict[int, dict[str, dict[str, set[Verdict]]]]:
    """For the questions at ``asked``, per probe and node: every verdict kso gave over ``runs`` runs."""
    out: dict[int, dict[str, dict[str, set[Verdict]]]] = {
        k: {probe: {node: set() for node in nodes[k]} for probe in questions[k].probes} for k in asked}
    repeated = [k for k in asked for _ in range(max(0, runs))]
    answers = kso_pending([admitted(questions[k].objects) for k in repeated],
                          [list(questions[k].probes) for k in repeated], [nodes[k] for k in repeated], kso)
    for k, answer in zip(repeated, answers):
        for probe, verdicts in answer.items():
            for node, verdict in verdicts.items():
                out[k][probe][node].add(normalized(verdict))
    return out
