"""Nominated pods: does symreach's Filter verdict with nominations agree with the real scheduler's?

    python -m benchmarks.kso_nominated_agreement --states 300 --seed 1
    python -m benchmarks.kso_nominated_agreement --states 300 --seed 1 --results benchmarks/results/kso_nominated.md
    python -m benchmarks.kso_nominated_agreement --states 200 --seed 1 --walks 3

Random states with priorities and nominated pods (``symreach.generators.k8s_nominated_states``); every
pending pod of each state on every node, asked of the kso variant with nominated pods
(``benchmarks/kso_nominated``, ``KSO_NOMINATED`` or ``--kso``) and of
``k8s_nominated_filter.nominated_failure`` in the loaded configuration. Prints states, node verdicts,
fit and plugin+reason agreement, how many verdicts the nominations changed (against plain
``semantics.node_failure``) and the disagreements per class. Exit 0 when everything agrees, 1
otherwise, 2 when the variant is missing.

``--walks K``: from each state without volume objects (and as many ``small_states``), K deployments of pending pods chosen at random
among symreach's fitting (pod, node) pairs; after each, kso is asked again on the objects with that pod
bound, and symreach answers on the first instance with the configuration deployed and the pod's
nomination ended (``k8s_nominated_filter``'s bookkeeping of a witness, ``trace_holds``).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

import random

from benchmarks.kso_harness import (Verdict, admitted, compare, has_volume_objects, kso_pending, normalized,
                                    verdicts_at)
from symreach import semantics
from symreach.frontends.k8s_nominated_filter import nominated_failure
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_nominated_states import NominatedState, nominated_states, small_states

DEFAULT_VARIANT = Path(os.environ.get("KSO_NOMINATED", "/work/wt/nom-kso/kso"))


def symreach_pending(state: NominatedState) -> tuple[dict[str, dict[str, Verdict]], dict[str, dict[str, Verdict]]]:
    """Every pending pod's verdicts with the nominations in force, and without them (plain node_failure)."""
    inst, report = load_kubernetes_documents(copy.deepcopy(admitted(state.objects)), "<state>")
    sigma = inst.initial_config()
    ours: dict[str, dict[str, Verdict]] = {}
    plain: dict[str, dict[str, Verdict]] = {}
    for pod in state.pending:
        type_name = report.pending[pod]
        ours[pod] = {}
        for node in state.nodes:
            failure = nominated_failure(inst, report.nominated, type_name, node, sigma, pod=pod)
            ours[pod][node] = None if failure is None else (failure.plugin, failure.reasons)
        plain[pod] = verdicts_at(inst, inst.type_index(type_name), sigma, state.nodes)
    return ours, plain


def walk(state: NominatedState, steps: int, kso: Path, rng: random.Random, stats: Counter, classes: Counter) -> None:
    """``steps`` deployments of pending pods from ``state``, each step's verdicts compared (see module doc)."""
    objects = copy.deepcopy(admitted(state.objects))
    inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<state>")
    index = report.nominated
    sigma = inst.initial_config()
    active = list(index.nominations)
    pending = list(state.pending)
    for _ in range(steps):
        if not pending:
            return
        theirs = kso_pending([objects], [pending], [state.nodes], kso, workers=1)[0]
        fitting = []
        for pod in pending:
            ours = {}
            for node in state.nodes:
                failure = nominated_failure(inst, index, report.pending[pod], node, sigma, pod=pod, nominations=active)
                ours[node] = None if failure is None else (failure.plugin, failure.reasons)
                fitting += [(pod, node)] if failure is None else []
            plain = verdicts_at(inst, inst.type_index(report.pending[pod]), sigma, state.nodes)
            for node in state.nodes:
                stats["walk verdicts"] += 1
                stats["walk agrees"] += normalized(theirs[pod][node]) == normalized(ours[node])
                stats["walk verdicts changed by nominations (kso)"] += \
                    normalized(theirs[pod][node]) != normalized(plain[node])
            for d in compare(0, theirs[pod], ours):
                classes["walk: " + d.cls] += 1
        if not fitting:
            return
        pod, node = rng.choice(fitting)
        stats["walk steps"] += 1
        stats["walk steps ending a nomination"] += any(nom.pod == pod for nom in active)
        sigma = semantics.deploy(inst, sigma, inst.type_index(report.pending[pod]), inst.node_index(node))
        active = [nom for nom in active if nom.pod != pod]
        pending.remove(pod)
        for obj in objects:
            if obj["kind"] == "Pod" and f"{obj['metadata'].get('namespace') or 'default'}/{obj['metadata']['name']}" == pod:
                obj["spec"]["nodeName"] = node
                obj.setdefault("status", {})["phase"] = "Running"


def agreement(count: int, seed: int, kso: Path, workers: int = 2, examples: Optional[Path] = None,
              walks: int = 0) -> dict:
    states = nominated_states(count, seed)
    answers = kso_pending([admitted(s.objects) for s in states], [s.pending for s in states],
                          [s.nodes for s in states], kso, workers=workers)
    stats: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, (state, theirs) in enumerate(zip(states, answers)):
        stats["states"] += 1
        stats["states with nominations"] += state.nominated > 0
        stats["nominations"] += state.nominated
        try:
            ours, plain = symreach_pending(state)
        except Exception as exc:   # a state symreach refuses is a disagreement too
            cls = f"load: {type(exc).__name__}: {str(exc)[:300]}"
            classes[cls] += 1
            first.setdefault(cls, i)
            continue
        for pod in state.pending:
            for node in state.nodes:
                stats["node verdicts"] += 1
                stats["fit agrees"] += (theirs[pod][node] is None) == (ours[pod][node] is None)
                stats["plugin+reason agrees"] += normalized(theirs[pod][node]) == normalized(ours[pod][node])
                stats["changed by nominations (kso)"] += normalized(theirs[pod][node]) != normalized(plain[pod][node])
            for d in compare(i, theirs[pod], ours[pod]):
                classes[d.cls] += 1
                first.setdefault(d.cls, i)
    rng = random.Random(seed)
    for state in (states + small_states(count, seed)) if walks else ():
        if state.nominated and not has_volume_objects(state):
            stats["walks"] += 1
            walk(state, walks, kso, rng, stats, classes)
    if examples is not None:
        import yaml
        examples.mkdir(parents=True, exist_ok=True)
        for k, (cls, i) in enumerate(sorted(first.items(), key=lambda kv: kv[1])):
            (examples / f"nominated-{seed}-{i}.yaml").write_text(
                f"# {cls}\n" + yaml.safe_dump_all(admitted(states[i].objects), sort_keys=False))
    return {"stats": stats, "classes": classes, "first": first}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kso", type=Path, default=DEFAULT_VARIANT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--examples", type=Path)
    parser.add_argument("--walks", type=int, default=0, help="deployments walked from each state")
    parser.add_argument("--results", type=Path, help="append one table row")
    args = parser.parse_args(argv)
    if not args.kso.exists():
        print(f"kso variant not found: {args.kso} (benchmarks/kso_nominated/README.md)", file=sys.stderr)
        return 2
    out = agreement(args.states, args.seed, args.kso, args.workers, args.examples, args.walks)
    s = out["stats"]
    n = max(1, s["node verdicts"])
    for key in ("states", "states with nominations", "nominations", "node verdicts"):
        print(f"{key}: {s[key]}")
    for key in ("fit agrees", "plugin+reason agrees", "changed by nominations (kso)"):
        print(f"{key}: {s[key]} ({100 * s[key] / n:.2f}%)")
    if args.walks:
        for key in ("walks", "walk steps", "walk steps ending a nomination", "walk verdicts"):
            print(f"{key}: {s[key]}")
        print(f"walk agrees: {s['walk agrees']} ({100 * s['walk agrees'] / max(1, s['walk verdicts']):.2f}%)")
        print(f"walk verdicts changed by nominations (kso): {s['walk verdicts changed by nominations (kso)']}")
    for cls, k in out["classes"].most_common():
        print(f"  {k:5d}  {cls}  (first: state {out['first'][cls]})")
    if args.results is not None:
        new = not args.results.exists()
        with args.results.open("a") as fh:
            if new:
                fh.write("| seed | states | with nominations | nominations | node verdicts | fit agrees | "
                         "plugin+reason agrees | changed by nominations | walks (steps, ending a nomination) | "
                         "walk verdicts | walk agrees | walk verdicts changed by nominations |\n"
                         "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
            w = max(1, s["walk verdicts"])
            fh.write(f"| {args.seed} | {s['states']} | {s['states with nominations']} | {s['nominations']} | "
                     f"{s['node verdicts']} | {100 * s['fit agrees'] / n:.2f}% | "
                     f"{100 * s['plugin+reason agrees'] / n:.2f}% | {s['changed by nominations (kso)']} | "
                     f"{s['walks']} ({s['walk steps']}, {s['walk steps ending a nomination']}) | {s['walk verdicts']} | "
                     f"{100 * s['walk agrees'] / w:.2f}% | {s['walk verdicts changed by nominations (kso)']} |\n")
    return 0 if not out["classes"] and s["fit agrees"] == s["plugin+reason agrees"] == s["node verdicts"] \
        and s["walk agrees"] == s["walk verdicts"] else 1


if __name__ == "__main__":
    sys.exit(main())
