"""How often does symreach agree with the real kube-scheduler? Long differential run.

    python -m benchmarks.kso_agreement --states 5000 --seed 1 --traces 500
    python -m benchmarks.kso_agreement --states 1000 --seed 101 --results benchmarks/results/kso_agreement.md
    python -m benchmarks.kso_agreement --volumes --states 1000 --seed 301 --traces 40
    python -m benchmarks.kso_agreement --volumes --states 1000 --seed 301 --binding-steps 2
    python -m benchmarks.kso_agreement --volumes --contested --states 1000 --seed 601 --binding-steps 2

Generates seeded random cluster states (``symreach.generators.k8s_states``),
asks kso and symreach for every node's verdict and first failing plugin, and
prints: states, node verdicts, fit agreement, plugin agreement, and the
disagreements per class (with one example state each, written to
``--examples DIR`` as YAML); ``--results FILE`` appends one table row per run
(seed, states, states with volumes / DaemonSet pods / resize status /
terminating pods, node verdicts, fit and plugin+reason agreement, load). Then replays ``--traces`` witness traces of
symreach's explicit engine step by step on kso; ``--binding-steps K`` walks K
deployments from every state whose pods bind claims and asks kso about the
binding pod types after each (``benchmarks.kso_binding_steps``). Every run also asks kso about a
new pod of each resized running pod's type (``benchmarks.kso_resize_probes``). Node verdicts that
depend on the scheduler's informer order (claims competing for equal-size PVs; ``--contested`` adds
such claims to bare pending pods) are counted apart and judged against kso's outcomes over several
runs (``benchmarks.kso_order``), the walk probes' as the states' own. Exit status 0
when everything agrees, 1 otherwise, 2 when kso is missing or an argument is bad.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Optional

from benchmarks.kso_harness import (
    Disagreement,
    Verdict,
    compare,
    find_kso,
    kso_verdicts,
    kso_verdicts_single,
    state_yaml,
    symreach_verdicts,
)
from benchmarks.kso_binding_steps import binding_caveats, compare_walks, walk
from benchmarks.kso_order import RUNS, contest, judge, order_nodes, outcome_sets, seen, symreach_runs
from benchmarks.kso_replay import replay, witnesses
from benchmarks.kso_resize_probes import resize_probes
from symreach.generators.k8s_states import random_states


def differential(states_n: int, seed: int, kso: Path, workers: int, examples: Optional[Path],
                 results: Optional[Path] = None, volumes: bool = False, contested: bool = False) -> bool:
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    states = _states(states_n, seed, volumes, contested)
    answers = kso_verdicts(states, kso, workers=workers)
    t_kso = time.perf_counter() - t0
    disagreements: list[Disagreement] = []
    ordered: list[tuple[int, dict[str, Verdict]]] = []   # states whose verdict depends on the informer order
    load_errors: Counter[str] = Counter()
    verdicts = fit_same = plugin_same = 0
    for i, state in enumerate(states):
        try:
            ours = symreach_verdicts(state)
        except Exception as exc:  # a state symreach refuses is a disagreement too
            load_errors[f"{type(exc).__name__}: {str(exc).split(': ')[-1][:100]}"] += 1
            continue
        random_on = set(order_nodes(state)) if volumes else set()
        if random_on:   # kso's one answer there is random: judged against its runs (``kso_order``)
            ordered.append((i, {node: ours[node] for node in random_on}))
        found = [d for d in compare(i, answers[i], ours) if d.node not in random_on]
        disagreements += found
        for node, theirs in answers[i].items():
            if node in random_on:
                continue
            verdicts += 1
            fit_same += (theirs is None) == (ours[node] is None)
            plugin_same += (theirs and theirs[0]) == (ours[node] and ours[node][0])
    print(f"states: {states_n} (seed {seed}); node verdicts: {verdicts}; kso {t_kso:.0f} s, "
          f"total {time.perf_counter() - t0:.0f} s")
    print(f"fit agreement:    {_pct(fit_same, verdicts)}")
    print(f"plugin agreement: {_pct(plugin_same, verdicts)}")
    same = verdicts - len(disagreements)
    print(f"plugin+reason agreement: {_pct(same, verdicts)}")
    print(f"reason disagreements: {len(disagreements)} ({sum(d.fit for d in disagreements)} on fit)")
    print(f"states symreach refused to load: {sum(load_errors.values())}")
    for message, count in load_errors.most_common():
        print(f"  {count:5d}  {message}")
    classes = Counter(d.cls for d in disagreements)
    first = {}
    for d in disagreements:
        first.setdefault(d.cls, d)
    for cls, count in classes.most_common():
        example = first[cls]
        print(f"  {count:5d}  {cls}  (e.g. state {example.state}, node {example.node})")
        if examples is not None:
            examples.mkdir(parents=True, exist_ok=True)
            (examples / f"state-{example.state}.yaml").write_text(state_yaml(states[example.state]))
    if results is not None:
        _append_row(results, seed, states, verdicts, fit_same, plugin_same, same, sum(load_errors.values()), load,
                    time.perf_counter() - t0)
    probes_agree = resized_types(states, kso)
    return not disagreements and not load_errors and probes_agree and informer_order(states, ordered, kso)


def _states(states_n: int, seed: int, volumes: bool, contested: bool) -> list:
    """The seed's random states; ``contested``: a bare pending pod's claims compete for equal-size
    PVs where ``kso_order.contest`` can add them (the rng is the seed's, after the states)."""
    states = random_states(states_n, seed, volumes)
    if not contested:
        return states
    import random

    rng = random.Random(seed)
    return [contest(s, rng) or s for s in states]


def informer_order(states: list, ordered: list[tuple[int, dict]], kso: Path) -> bool:
    """The node verdicts that depend on the informer order, against kso's outcomes over ``RUNS``
    runs each (``kso_order.judge``): symreach fits iff some run fitted."""
    t0 = time.perf_counter()
    verdicts = agree = fits = sets = in_set = in_set_seen = 0
    wrong = []
    for i, single in ordered:
        theirs = outcome_sets(states[i], kso)
        runs = symreach_runs(states[i])
        for node in single:
            ours = runs[node]
            verdicts += 1
            fits += None in ours
            if len(ours) > 1:   # a refusal whose reason the scheduler's run decides: the set, judged whole
                sets, in_set, in_set_seen = sets + 1, in_set + len(ours), in_set_seen + seen(ours, theirs[node])
            if judge(ours, theirs[node]):
                agree += 1
            else:
                wrong.append((i, node, sorted(map(str, ours)), theirs[node]))
    print(f"informer order: {len(ordered)} states, {verdicts} node verdicts that depend on it ({fits} fit), "
          f"judged against kso's outcomes over {RUNS} runs each: {_pct(agree, verdicts)}; "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"refusals whose reason the scheduler's run decides: {sets} nodes, symreach's sets hold {in_set} "
          f"reasons, {in_set_seen} of them seen in kso's runs")
    for i, node, verdict, outcomes in wrong[:10]:
        print(f"  state {i} node {node}: symreach {verdict}, kso gave {sorted(map(str, outcomes))}")
    return not wrong


def resized_types(states: list, kso: Path) -> bool:
    """New pods of the types of resized running pods (``benchmarks.kso_resize_probes``)."""
    t0 = time.perf_counter()
    asked, tally, wrong = resize_probes(states, kso)
    print(f"resized pods: {asked} states with resized running pods; new pods of their types asked on every node: "
          f"{tally.verdicts} verdicts; {_agreement(tally)}; {time.perf_counter() - t0:.0f} s")
    return _no_probe_disagreement(wrong)


def _agreement(tally) -> str:
    return f"fit {_pct(tally.fit_same, tally.verdicts)}, plugin+reason {_pct(tally.same, tally.verdicts)}"


def _no_probe_disagreement(wrong: list) -> bool:
    """Prints the first disagreements of probe pods (``kso_binding_steps.compare_walks``)."""
    for q, probe, node, theirs, ours in wrong[:10]:
        print(f"  state {q.state} step {q.step}: {probe} ({q.probes[probe]}) on {node}: kso {theirs} vs symreach {ours}")
    return not wrong


_HEADER = ("| seed | states | with volumes | DaemonSet pods (without their DaemonSet) | resize status | terminating "
           "| node verdicts | fit | plugin | plugin+reason | refused | load (1 min) | s |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")


def _append_row(path: Path, seed: int, states: list, verdicts: int, fit: int, plugin: int, same: int, refused: int,
                load: float, seconds: float) -> None:
    """One table row per run: what the states held and how far symreach agreed with kso."""
    def having(test) -> int:
        return sum(1 for s in states if any(test(o) for o in s.objects))

    volumes = having(lambda o: o["kind"] in ("PersistentVolumeClaim", "StorageClass"))
    daemon = having(lambda o: o["kind"] == "Pod" and "DaemonSet" in str(o["metadata"].get("ownerReferences")))
    orphan = sum(1 for s in states if any("DaemonSet" in str(o["metadata"].get("ownerReferences")) for o in s.objects)
                 and not any(o["kind"] == "DaemonSet" for o in s.objects))
    resize = having(lambda o: "containerStatuses" in (o.get("status") or {}))
    dying = having(lambda o: "deletionTimestamp" in o["metadata"])
    if not path.exists():
        path.write_text(_HEADER)
    with path.open("a") as out:
        out.write(f"| {seed} | {len(states)} | {volumes} | {daemon} ({orphan}) | {resize} | {dying} | {verdicts} "
                  f"| {fit} | {plugin} | {same} | {refused} | {load:.1f} | {seconds:.0f} |\n")


def binding_steps(states_n: int, seed: int, kso: Path, steps: int, volumes: bool, contested: bool = False) -> bool:
    """Walks of ``steps`` deployments from the seed's states that bind claims, each step asked of kso."""
    import random

    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    rng = random.Random(seed)
    states = _states(states_n, seed, volumes, contested)
    questions = [q for i, state in enumerate(states) for q in walk(i, state, rng, steps)]
    tally, wrong = compare_walks(questions, kso)
    bound, marked, kinds = binding_caveats(states)
    print(f"claim bindings: {bound} of {states_n} states bind claims; {marked} carry a claim-binding caveat "
          f"({', '.join(f'{k}: {n}' for k, n in kinds.most_common()) or 'none'})")
    walked = len({q.state for q in questions})
    print(f"binding walks: {walked} states with claim bindings, {tally.questions} steps ({tally.binding_steps} binding "
          f"claims, {tally.chosen_steps} of them one of several bindings the scheduler may choose); probe verdicts "
          f"after them: {tally.verdicts} ({tally.ordered} depend on the informer's order, {tally.ordered_fit} fit: "
          f"judged against kso's outcomes over {RUNS} runs); {_agreement(tally)}; load {load:.1f}, "
          f"{time.perf_counter() - t0:.0f} s")
    return _no_probe_disagreement(wrong)


def check_batching(count: int, seed: int, kso: Path) -> bool:
    states = random_states(count, seed)
    same = kso_verdicts(states, kso) == [kso_verdicts_single(s, kso) for s in states]
    print(f"batched kso answers equal single runs on {count} states: {same}")
    return same


def witness_replay(traces: int, seed: int, kso: Path, workers: int, volumes: bool = False) -> bool:
    t0 = time.perf_counter()
    found = witnesses(traces, seed, max_tries=100 if volumes else 50, volumes=volumes)
    t_find = time.perf_counter() - t0
    steps = replay(found, kso) if found else []
    deploys = sum(len(s) for s in steps)
    refused = [(w.index, node) for w, ws in zip(found, steps) for node, verdict in ws if verdict is not None]
    lengths = Counter(len(w.trace) for w in found)
    print(f"witness traces: {len(found)} (seed {seed}; lengths {dict(sorted(lengths.items()))}); "
          f"deployments replayed on kso: {deploys}; refused by kso: {len(refused)}; "
          f"search {t_find:.0f} s, total {time.perf_counter() - t0:.0f} s")
    for index, node in refused[:10]:
        print(f"  scenario {index}: a deployment on {node} refused")
    return len(found) == traces and not refused


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.3f}% ({part}/{whole})" if whole else "n/a"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kso_agreement", description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--traces", type=int, default=0, help="witness traces to replay on kso")
    parser.add_argument("--workers", type=int, default=6, help="kso processes at once (they mostly wait)")
    parser.add_argument("--check-batching", type=int, default=0, metavar="N",
                        help="also compare batched and single kso runs on N states")
    parser.add_argument("--examples", type=Path, help="write one example state per disagreement class here")
    parser.add_argument("--results", type=Path, help="append this run's figures as a table row to this file")
    parser.add_argument("--binding-steps", type=int, default=0, metavar="K",
                        help="walk K claim-binding deployments from each state and ask kso after each")
    parser.add_argument("--volumes", action="store_true",
                        help="volume-dense states and witness scenarios (generators.k8s_states.volume_state)")
    parser.add_argument("--contested", action="store_true",
                        help="with --volumes: bare pending pods get two claims competing for equal-size PVs "
                             "(benchmarks.kso_order.contest)")
    args = parser.parse_args(argv)
    if args.states < 0 or args.traces < 0 or args.workers < 1 or args.binding_steps < 0:
        print("error: --states, --traces and --binding-steps must be >= 0, --workers >= 1", file=sys.stderr)
        return 2
    kso = find_kso()
    if kso is None:
        print("error: kso not found (expected at ../shared/tools/kso/kso)", file=sys.stderr)
        return 2
    ok = True
    if args.check_batching:
        ok &= check_batching(args.check_batching, args.seed, kso)
    if args.states:
        ok &= differential(args.states, args.seed, kso, args.workers, args.examples, args.results, args.volumes,
                           args.contested)
    if args.states and args.binding_steps:
        ok &= binding_steps(args.states, args.seed, kso, args.binding_steps, args.volumes, args.contested)
    if args.traces:
        ok &= witness_replay(args.traces, args.seed, kso, args.workers, args.volumes)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
