"""Does symreach's DynamicResources model agree with the real plugin? Differential run.

    python -m benchmarks.kso_dra_agreement --states 1000 --seed 1 --results benchmarks/results/kso_dra_agreement.md
    python -m benchmarks.kso_dra_agreement --walks 400 --steps 4 --seed 1 --results benchmarks/results/kso_dra_agreement.md

The shared kso runs no DRA, so this asks a *variant* of it built with the
DynamicResources plugin (``--kso``, default ``/work/wt/dra-kso/kso``; how it
was built: ``docs/dra.md``). States come from
``symreach.generators.k8s_dra_states``; each node's verdict and first failing
plugin + reasons are compared (``benchmarks.kso_harness``). Prints states,
node verdicts, fit and plugin+reason agreement, DynamicResources verdicts
among them, disagreement classes with an example each (``--examples DIR``);
``--results FILE`` appends a table row with the load. Exit 0 when all agree,
1 otherwise, 2 when the variant is missing.

``--walks N`` runs allocation walks instead (``benchmarks.kso_dra_walks``):
up to ``--steps`` moves per walk among the pods using claims, each state
reached written with the claims' allocations as the scheduler leaves them, and
every claim-using pod type that could be scheduled next asked of the variant
and of ``semantics.node_failure`` on the configuration reached.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from benchmarks.kso_dra_walks import walk_verdicts
from benchmarks.kso_harness import Verdict, compare, dump, kso_verdicts_single, state_yaml
from symreach import semantics
from symreach.frontends.dra_allocator import ERROR_PREFIX
from symreach.frontends.k8s_dra import DRA_KINDS, DraIndex, pod_dra
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.reasons import DYNAMIC_RESOURCES_PLUGIN as DRA_PLUGIN, is_filter_error
from symreach.generators.k8s_states import State
from symreach.generators.k8s_dra_states import random_dra_states

DEFAULT_KSO = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))


def kso_dra_verdicts(state: State, kso: Path) -> dict[str, Verdict]:
    """kso's verdicts; an allocator error (kso stops on it, as the scheduler aborts the pod's cycle)
    is that error on every node."""
    try:
        return kso_verdicts_single(state, kso)
    except RuntimeError as exc:
        return {node: kso_error(str(exc)) for node in state.nodes}


def kso_error(text: str) -> Verdict:
    """The allocator error in kso's failure message (RuntimeError for any other failure)."""
    if ERROR_PREFIX not in text:
        raise RuntimeError(text)
    return ("DynamicResources", (ERROR_PREFIX + text.split(ERROR_PREFIX, 1)[1].splitlines()[0],))


@dataclass
class Ours:
    """symreach's answer for the pending pod, in kso's shape (``verdicts``), and what the scheduler's
    random order of pools and slices may give instead (``possible``: per node, each outcome over the
    orders, where several; ``errors``: each error a run may stop on)."""

    verdicts: dict[str, Verdict]
    caveats: list[str]
    possible: dict[str, set] = field(default_factory=dict)
    errors: set = field(default_factory=set)


def symreach_dra_verdicts(state: State, reported: Verdict = None) -> tuple[dict[str, Verdict], list[str]]:
    """``symreach_dra`` without the orders: the verdicts and the pending type's caveats."""
    ours = symreach_dra(state, reported)
    return ours.verdicts, ours.caveats


def symreach_dra(state: State, reported: Verdict = None) -> Ours:
    """symreach's own verdicts, ``semantics.node_failure`` per node, in kso's shape: when the
    semantics aborts the cycle (``semantics.cycle_abort``: a node's own error, every earlier filter
    passing there), kso stops on the error, so the pod's answer is that error on every node. The
    scheduler filters nodes in parallel and kso in its own order, so which erring node's error is
    reported is a race: ``reported`` when symreach has it among the nodes that abort."""
    inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    name = report.pending.get(state.pending, state.pending)
    t = inst.type_index(name)
    sigma = inst.initial_config()
    own = {node: semantics.filter_failure(inst, t, inst.node_index(node), sigma) for node in state.nodes}
    ours = Ours({}, list(report.caveats.get(name, [])))
    abort = semantics.cycle_abort(inst, t, sigma)
    erring = [(DRA_PLUGIN, f.reasons) for f in own.values() if f is not None and is_filter_error(f.reason)]
    for node in state.nodes:
        failure = semantics.node_failure(inst, t, inst.node_index(node), sigma)
        if abort is not None:
            ours.verdicts[node] = reported if reported in erring else (DRA_PLUGIN, abort[1].reasons)
        else:
            ours.verdicts[node] = None if failure is None else (failure.plugin, failure.reasons)
    ours.errors = {v[1][0] for v in erring}
    for node, outcomes in pod_orders(state).items():   # kso evaluates DynamicResources only past the others
        if own[node] is None or own[node].plugin == DRA_PLUGIN:
            ours.possible[node] = {None if r is None else (DRA_PLUGIN, (r,)) for r in outcomes}
            ours.errors |= {r for r in outcomes if r is not None and is_filter_error(r)}
    return ours


def pod_orders(state: State) -> dict[str, tuple]:
    """``k8s_dra.PodDra.orders`` of the pending pod: per node, each outcome over the scheduler's orders
    of pools and slices, where they differ (the front end's own index, rebuilt from the objects)."""
    index = DraIndex()
    pod = None
    for o in state.objects:
        meta = o.get("metadata") or {}
        if o["kind"] in DRA_KINDS:
            index.add(o["kind"], o, meta.get("namespace") or "default", meta.get("name"))
        elif o["kind"] == "Pod" and f"{meta.get('namespace') or 'default'}/{meta['name']}" == state.pending:
            pod = o
    nodes = [{"name": o["metadata"]["name"], "labels": o["metadata"].get("labels") or {}}
             for o in state.objects if o["kind"] == "Node"]
    if pod is None:
        return {}
    meta = pod["metadata"]
    return pod_dra(index, pod.get("spec") or {}, pod.get("status"), meta.get("namespace") or "default", meta,
                   nodes).orders


def judged(theirs: dict[str, Verdict], ours: Ours, index: int) -> tuple[list, int]:
    """The disagreements, and how many node verdicts agree with another run of the scheduler (an order of
    pools and slices other than symreach's, whose outcome symreach lists: ``Ours.possible``)."""
    found = compare(index, theirs, ours.verdicts)
    if not found:
        return [], 0
    kso_err = next(iter(theirs.values()))
    if all(v == kso_err for v in theirs.values()) and kso_err is not None and is_filter_error(kso_err[1][0]):
        # kso stopped on an error: another run's if some node symreach lets pass errs so in some order
        return ([], len(found)) if kso_err[1][0] in ours.errors else (found, 0)
    other = [d for d in found if d.kso in ours.possible.get(d.node, ())]
    return [d for d in found if d not in other], len(other)


def run(states_n: int, seed: int, kso: Path, workers: int, examples: Optional[Path], results: Optional[Path]) -> bool:
    from concurrent.futures import ThreadPoolExecutor
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    states = random_dra_states(states_n, seed)

    def ask(state):
        try:
            return kso_dra_verdicts(state, kso)
        except RuntimeError as exc:
            return str(exc)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(ask, states))
    t_kso = time.perf_counter() - t0
    kso_errors: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    example: dict[str, int] = {}
    verdicts = fit_same = plugin_same = dra = order = 0
    for i, (state, theirs) in enumerate(zip(states, answers)):
        if isinstance(theirs, str):
            kso_errors[theirs.splitlines()[-1][-120:]] += 1
            continue
        left, other = judged(theirs, symreach_dra(state, next(iter(theirs.values()), None)), i)
        order += other
        found = {d.node: d for d in left}
        for node, verdict in theirs.items():
            verdicts += 1
            dra += verdict is not None and verdict[0] == "DynamicResources"
            d = found.get(node)
            fit_same += d is None or not d.fit
            plugin_same += d is None
            if d is not None:
                classes[d.cls] += 1
                example.setdefault(d.cls, i)
    elapsed = time.perf_counter() - t0
    print(f"states {states_n} (seed {seed}), node verdicts {verdicts}, DynamicResources verdicts {dra}")
    print(f"fit agreement {fit_same}/{verdicts}, plugin+reason agreement {plugin_same}/{verdicts}")
    print(f"of which {order} agree with another run of the scheduler (an order of pools and slices whose outcome symreach lists, not its own run)")
    print(f"kso errors {sum(kso_errors.values())}: {dict(kso_errors)}")
    print(f"time {elapsed:.1f} s wall (kso {t_kso:.1f} s), load {load:.1f} at start")
    _classes(classes, example, examples, lambda k: (f"dra-{k}.yaml", state_yaml(states[k])))
    ok = not classes and not kso_errors
    if results is not None:
        new = not results.exists()
        with results.open("a") as out:
            if new:
                out.write("# symreach vs kso with DynamicResources (variant build, docs/dra.md)\n\n"
                          "| seed | states | node verdicts | DynamicResources verdicts | fit agree | "
                          "plugin+reason agree | kso errors | wall s | load (1 min) |\n"
                          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            by_order = f" ({order} another pool order)" if order else ""
            out.write(f"| {seed} | {states_n} | {verdicts} | {dra} | {fit_same} | {plugin_same}{by_order} | "
                      f"{sum(kso_errors.values())} | {elapsed:.0f} | {load:.1f} -> {os.getloadavg()[0]:.1f} |\n")
    return ok


def run_walks(walks_n: int, steps: int, seed: int, kso: Path, workers: int, examples: Optional[Path],
              results: Optional[Path]) -> bool:
    """Allocation walks (``kso_dra_walks``): each state reached, every claim user that could go next."""
    import random
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    states, rows = walk_verdicts(random.Random(seed), walks_n, steps, kso, workers)
    classes: Counter[str] = Counter()
    example: dict[str, int] = {}
    for r in rows:
        if r.kso != r.symreach:
            cls = f"{r.pod.split('/')[1].rstrip('0123456789')}: kso {r.kso} vs symreach {r.symreach}"
            classes[cls] += 1
            example.setdefault(cls, r.state)
    verdicts = len(rows)
    dra = sum(r.kso is not None and r.kso[0] == "DynamicResources" for r in rows)
    fit_same = sum((r.kso is None) == (r.symreach is None) for r in rows)
    plugin_same = sum(r.kso == r.symreach for r in rows)
    moved = sum(r.kso != r.static for r in rows)
    elapsed = time.perf_counter() - t0
    print(f"walks {walks_n} (seed {seed}, up to {steps} steps), walked states {len(states)}, node verdicts {verdicts}, "
          f"DynamicResources verdicts {dra}")
    print(f"fit agreement {fit_same}/{verdicts}, plugin+reason agreement {plugin_same}/{verdicts}")
    print(f"verdicts that differ from those of the input's allocation state (the model before): {moved}")
    print(f"time {elapsed:.1f} s wall, load {load:.1f} at start")
    _classes(classes, example, examples, lambda k: (f"walk-{k}.yaml", dump(states[k])))
    if results is not None:
        with results.open("a") as out:
            out.write(f"| {seed} | {len(states)} walked states ({walks_n} walks, <= {steps} steps; "
                      f"{moved} verdicts differ from the input allocation's) | {verdicts} | {dra} | {fit_same} | "
                      f"{plugin_same} | 0 | {elapsed:.0f} | {load:.1f} -> {os.getloadavg()[0]:.1f} |\n")
    return not classes


def _classes(classes: Counter[str], example: dict[str, int], examples: Optional[Path], text) -> None:
    """Print each disagreement class with its example; write the example's state under ``examples``."""
    for cls, n in classes.most_common():
        print(f"  {n:5d}  {cls}  (state {example[cls]})")
        if examples is not None:
            examples.mkdir(parents=True, exist_ok=True)
            name, body = text(example[cls])
            (examples / name).write_text(body)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kso", type=Path, default=DEFAULT_KSO)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--examples", type=Path)
    ap.add_argument("--results", type=Path)
    ap.add_argument("--walks", type=int, default=0, help="allocation walks instead of random states")
    ap.add_argument("--steps", type=int, default=4)
    args = ap.parse_args(argv)
    if not (args.kso.is_file() and os.access(args.kso, os.X_OK)):
        print(f"kso variant with DynamicResources not found at {args.kso}", file=sys.stderr)
        return 2
    if args.walks:
        return 0 if run_walks(args.walks, args.steps, args.seed, args.kso, args.workers, args.examples,
                              args.results) else 1
    return 0 if run(args.states, args.seed, args.kso, args.workers, args.examples, args.results) else 1


if __name__ == "__main__":
    sys.exit(main())
