"""Does symreach's DynamicResources model agree with the real plugin? Differential run.

    python -m benchmarks.kso_dra_agreement --states 1000 --seed 1 --results benchmarks/results/kso_dra_agreement.md
    python -m benchmarks.kso_dra_agreement --walks 400 --steps 4 --seed 1 --results benchmarks/results/kso_dra_agreement.md

The shared kso runs no DRA, so this asks a *variant* of it built with the
DynamicResources plugin (``--kso``, default ``/work/wt/dra-kso/kso``; how it
was built: ``docs/dra.md``). States come from
``symreach.generators.k8s_dra_states``; each node's verdict and first failing
plugin + reasons are compared (``benchmarks.kso_harness``). Prints states,
node verdicts, fit and plugin+reason agreement, DynamicResources verdicts
among them, the reasons matched by pattern (an error whose text Go's random
map order or a pointer picks: symreach's reason marks its text and carries the
pattern of every one, ``symreach.reasons.marked_reason``, and kso's text agrees
when the pattern admits it), disagreement classes with an example each (``--examples DIR``);
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
from pathlib import Path
from typing import Optional

from benchmarks.kso_dra_verdicts import Ours, agrees, by_pattern, judged, kso_error, ours_for, reason_sets
from benchmarks.kso_dra_walks import walk_verdicts
from benchmarks.kso_harness import Verdict, dump, kso_verdicts_single, state_yaml
from symreach.reasons import is_filter_error
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_states import State
from symreach.generators.k8s_dra_states import random_dra_states

DEFAULT_KSO = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
PATTERNED = ("reasons matched by pattern: {} (an error whose text Go's random map order or a pointer picks: "
             "kso's text is one symreach's marked reason admits, not necessarily the one it shows)")


def kso_dra_verdicts(state: State, kso: Path) -> dict[str, Verdict]:
    """kso's verdicts; an allocator error (kso stops on it, as the scheduler aborts the pod's cycle)
    is that error on every node."""
    try:
        return kso_verdicts_single(state, kso)
    except RuntimeError as exc:
        return {node: kso_error(str(exc)) for node in state.nodes}


def symreach_dra_verdicts(state: State, reported: Verdict = None) -> tuple[dict[str, Verdict], list[str]]:
    """``symreach_dra`` without the orders: the verdicts and the pending type's caveats."""
    ours = symreach_dra(state, reported)
    return ours.verdicts, ours.caveats


def symreach_dra(state: State, reported: Verdict = None) -> Ours:
    """symreach's own verdicts for the state's pending pod (``kso_dra_verdicts.ours_for``)."""
    inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    name = report.pending.get(state.pending, state.pending)
    return ours_for(inst, inst.type_index(name), inst.initial_config(), state, report.caveats.get(name, []), reported)


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
    verdicts = fit_same = plugin_same = dra = order = aborted = ours_aborted = blocked = patterned = 0
    with_sets: list[int] = []
    for i, (state, theirs) in enumerate(zip(states, answers)):
        if isinstance(theirs, str):
            kso_errors[theirs.splitlines()[-1][-120:]] += 1
            continue
        ours = symreach_dra(state, next(iter(theirs.values()), None))
        if reason_sets(ours):
            with_sets.append(i)
        left, other = judged(theirs, ours, i)
        order += other
        patterned += by_pattern(theirs, ours, i)
        first = next(iter(theirs.values()), None)
        aborted += first is not None and is_filter_error(first[1][0])
        ours_aborted += bool(theirs) and all(v is not None and is_filter_error(v[1][0]) for v in ours.verdicts.values())
        blocked += len(ours.blocked)
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
    sets_ok = order_reasons(states, with_sets, kso, classes, example)
    elapsed = time.perf_counter() - t0
    print(f"states {states_n} (seed {seed}), node verdicts {verdicts}, DynamicResources verdicts {dra}")
    print(f"fit agreement {fit_same}/{verdicts}, plugin+reason agreement {plugin_same}/{verdicts}")
    print(f"of which {order} agree with another run of the scheduler (an order of pools and slices whose "
          "outcome symreach lists, not its own run)")
    print(PATTERNED.format(patterned))
    print(f"cycles aborted on an allocator error: kso {aborted}, symreach {ours_aborted} "
          f"({blocked} node verdicts where the pod would fit but for the abort)")
    print(f"kso errors {sum(kso_errors.values())}: {dict(kso_errors)}")
    print(f"time {elapsed:.1f} s wall (kso {t_kso:.1f} s), load {load:.1f} at start")
    _classes(classes, example, examples, lambda k: (f"dra-{k}.yaml", state_yaml(states[k])))
    ok = not classes and not kso_errors and sets_ok
    if results is not None:
        new = not results.exists()
        with results.open("a") as out:
            if new:
                out.write("# symreach vs kso with DynamicResources (variant build, docs/dra.md)\n\n"
                          "| seed | states | node verdicts | DynamicResources verdicts | fit agree | "
                          "plugin+reason agree | kso errors | wall s | load (1 min) |\n"
                          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            by_order = f" ({order} another run)" if order else ""
            by_order += f" ({patterned} by pattern)" if patterned else ""
            out.write(f"| {seed} | {states_n} ({aborted} aborted cycles) | {verdicts} | {dra} | {fit_same} | {plugin_same}{by_order} | "
                      f"{sum(kso_errors.values())} | {elapsed:.0f} | {load:.1f} -> {os.getloadavg()[0]:.1f} |\n")
    return ok


RUNS = 24   # variant runs per state with a reason set: a 1-in-4 reason is missed with probability 0.1 %


def order_reasons(states: list[State], indices: list[int], kso: Path, classes: Counter, example: dict) -> bool:
    """States with a node refused in every order of pools and slices whose reason depends on the order
    (``reason_sets``), asked of the variant ``RUNS`` more times: every answer must be one symreach lists
    (a disagreement otherwise, counted in ``classes``); prints how many of symreach's reasons it gave."""
    nodes = held = got = wrong = 0
    for i in indices:
        outcomes: dict[str, set] = {}
        for _ in range(RUNS):
            theirs = kso_dra_verdicts(states[i], kso)
            left, _ = judged(theirs, symreach_dra(states[i], next(iter(theirs.values()), None)), i)
            wrong += len(left)
            for d in left:
                classes[d.cls] += 1
                example.setdefault(d.cls, i)
            for node, verdict in theirs.items():
                outcomes.setdefault(node, set()).add(verdict)
        for node, ours in reason_sets(symreach_dra(states[i])).items():
            seen = [o for o in ours if any(agrees(o, v) for v in outcomes.get(node, ()))]
            nodes, held, got = nodes + 1, held + len(ours), got + len(seen)
    print(f"refusals whose reason the order of pools and slices decides: {len(indices)} states, {nodes} nodes, "
          f"symreach's sets hold {held} reasons, {got} of them seen in {RUNS} more variant runs each; "
          f"answers outside the sets: {wrong}")
    return not wrong


def run_walks(walks_n: int, steps: int, seed: int, kso: Path, workers: int, examples: Optional[Path],
              results: Optional[Path], errors: bool = False) -> bool:
    """Allocation walks (``kso_dra_walks``): each state reached, every claim user that could go next;
    ``errors``: with allocator errors (the scheduler's abort of the cycle)."""
    import random
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    counts: dict = {}
    states, rows = walk_verdicts(random.Random(seed), walks_n, steps, kso, workers, errors, counts)
    classes: Counter[str] = Counter()
    example: dict[str, int] = {}
    for r in rows:
        if r.kso != r.symreach and not r.other and not r.patterned:
            cls = f"{r.pod.split('/')[1].rstrip('0123456789')}: kso {r.kso} vs symreach {r.symreach}"
            classes[cls] += 1
            example.setdefault(cls, r.state)
    verdicts = len(rows)
    dra = sum(r.kso is not None and r.kso[0] == "DynamicResources" for r in rows)
    fit_same = sum((r.kso is None) == (r.symreach is None) or r.other for r in rows)
    plugin_same = sum(r.kso == r.symreach or r.other or r.patterned for r in rows)
    other = sum(r.other for r in rows)
    patterned = sum(r.patterned for r in rows)
    blocked = sum(r.blocked for r in rows)
    aborted = len({(r.state, r.pod) for r in rows if r.kso is not None and is_filter_error(r.kso[1][0])})
    moved = sum(r.kso != r.static for r in rows)
    elapsed = time.perf_counter() - t0
    print(f"walks {walks_n} (seed {seed}, up to {steps} steps), walked states {len(states)}, node verdicts {verdicts}, "
          f"DynamicResources verdicts {dra}")
    print(f"fit agreement {fit_same}/{verdicts}, plugin+reason agreement {plugin_same}/{verdicts}")
    print(f"of which {other} agree with another run of the scheduler (an outcome symreach lists for another order)")
    print(PATTERNED.format(patterned))
    print(f"pods whose cycle the variant aborted on an allocator error: {aborted} "
          f"({blocked} node verdicts where the pod would fit but for the abort)")
    print(f"verdicts that differ from those of the input's allocation state (the model before): {moved}")
    print(f"deletions that named one of several holdings (pods of a type on a node holding different devices): "
          f"{counts.get('choices', 0)}")
    print(f"deployments that picked one of several outcomes (the devices the scheduler's order of pools and slices "
          f"decides): {counts.get('deploy choices', 0)}")
    print(f"time {elapsed:.1f} s wall, load {load:.1f} at start")
    _classes(classes, example, examples, lambda k: (f"walk-{k}.yaml", dump(states[k])))
    if results is not None:
        with results.open("a") as out:
            with_errors = f", with allocator errors: {aborted} aborted cycles" if errors else ""
            by_order = f" ({other} another run)" if other else ""
            by_order += f" ({patterned} by pattern)" if patterned else ""
            out.write(f"| {seed} | {len(states)} walked states ({walks_n} walks, <= {steps} steps; "
                      f"{moved} verdicts differ from the input allocation's{with_errors}) | {verdicts} | {dra} | "
                      f"{fit_same} | {plugin_same}{by_order} | 0 | {elapsed:.0f} | {load:.1f} -> "
                      f"{os.getloadavg()[0]:.1f} |\n")
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
    ap.add_argument("--errors", action="store_true", help="walks with allocator errors (the cycle's abort)")
    args = ap.parse_args(argv)
    if not (args.kso.is_file() and os.access(args.kso, os.X_OK)):
        print(f"kso variant with DynamicResources not found at {args.kso}", file=sys.stderr)
        return 2
    if args.walks:
        return 0 if run_walks(args.walks, args.steps, args.seed, args.kso, args.workers, args.examples,
                              args.results, args.errors) else 1
    return 0 if run(args.states, args.seed, args.kso, args.workers, args.examples, args.results) else 1


if __name__ == "__main__":
    sys.exit(main())
