"""How long the exact search over the Filter phase's runs takes (``filter_runs.runs_past``).

    python -m benchmarks.filter_runs_scale --nodes 100,300,1000 --zones 1,2,3 --limit 20 [--against REV]

For each node count and zone count, zones of about equal size with the scheduler's k, chunk size and
16 workers: about 2k feasible nodes spread over the zones (k + 1 may stay unfiltered), zone 1 two
erring nodes, zone 0 a growing number of them (a step of nodes/(20 zones), from its others, then
from its feasible nodes), the rest others; the erring nodes grow until no run misses them. The
last two steps (the answer's edge, where the search is longest) are timed for any node and for a node
of zone 0 as ``semantics.cycle_runs_past`` asks (the constructed runs of ``zone_runs_past`` first,
then the exact search), with its bound lifted; a call over ``--limit`` seconds is stopped and
reported as such.
Prints a table: nodes, zones, chunks, whether ``exact_domain`` holds, the largest time, the answers
at the edge and whether ``semantics.zone_runs_past`` (the constructed runs) finds them, and the load.
``--against REV``: the same steps also with ``filter_runs`` as of git revision REV (from f824704, whose
``runs_past`` takes ``bound``), side by side in one run: its time, whether it answers the same, and its
``exact_domain``.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import types
from typing import Optional

from symreach import filter_runs, semantics
from symreach.model import num_feasible_nodes_to_find


class _Late(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Late()


def timed(zones: tuple, own: Optional[int], k: int, chunk: int, limit: float,
          module: types.ModuleType = filter_runs) -> tuple[Optional[bool], float]:
    """(answer or None when stopped, seconds) of ``module``'s search."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.process_time()
    try:   # as semantics.cycle_runs_past: the constructed runs first
        answer = semantics.zone_runs_past(dict(enumerate(zones)), own, k) or \
            module.runs_past(zones, own, k, chunk, filter_runs.PARALLELISM, bound=LIFTED)
    except _Late:
        answer = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return answer, time.process_time() - start


LIFTED = 10 ** 100   # no bound: the search's own time


def _exact_domain(nodes: int, count: int, k: int, sizes: list[int], module: types.ModuleType = filter_runs) -> bool:
    return module.exact_domain(nodes, count, k, sizes=sizes)   # the default search budget's


def revision(rev: str) -> types.ModuleType:
    """``symreach/filter_runs.py`` as of git revision ``rev``, as a module of its own."""
    source = subprocess.run(["git", "show", f"{rev}:symreach/filter_runs.py"], check=True, capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))).stdout
    module = types.ModuleType(f"filter_runs_{rev}")
    sys.modules[module.__name__] = module   # dataclasses and annotations look their module up
    exec(compile(source, f"{rev}:symreach/filter_runs.py", "exec"), module.__dict__)
    return module


def edge(nodes: int, count: int, limit: float, old: Optional[types.ModuleType] = None) -> dict:
    """The last two steps before no run misses the erring nodes, timed (and with ``old``'s search)."""
    sizes = [nodes // count + (i < nodes % count) for i in range(count)]
    k, chunk = num_feasible_nodes_to_find(nodes), filter_runs.chunk_size(nodes)
    step = max(1, nodes // (20 * count))
    feasible = [min(s - 2, (2 * k + 2) // count) for s in sizes]   # about 2k feasible: k + 1 to spare
    worst, answers, built = 0.0, [], []
    erring = 1
    previous = None
    edge_steps = []
    while True:
        spec = [(feasible[0] - max(0, erring - (sizes[0] - feasible[0])), erring)] + \
            [(feasible[i], 2 if i == 1 else 0) for i in range(1, count)]
        zones = tuple((f, s - f - r, r) for s, (f, r) in zip(sizes, spec))
        if zones[0][0] < 1 or sum(f for f, _, _ in zones) <= k:
            break
        got = []
        for own in (None, 0):
            answer, spent = timed(zones, own, k, chunk, limit)
            worst = max(worst, spent)
            got.append(answer)
        constructed = [semantics.zone_runs_past(dict(enumerate(zones)), own, k) for own in (None, 0)]
        if got[0] is None or not got[0] or got[1] is None:
            answers, built = (previous or ([], []))[0] + [got], (previous or ([], []))[1] + [constructed]
            edge_steps = (previous or ([], [], []))[2] + [zones]
            break
        previous = ([got], [constructed], [zones])
        erring += step
    row = {"nodes": nodes, "zones": count, "chunks": -(-nodes // chunk), "k": k,
           "exact_domain": _exact_domain(nodes, count, k, sizes), "worst": worst,
           "answers": answers, "constructed": built, "stopped": any(a is None for g in answers for a in g)}
    if old is not None:   # the previous search on the same edge steps
        times, same = [], True
        for zones, got in zip(edge_steps, answers):
            for own, answer in zip((None, 0), got):
                theirs, spent = timed(zones, own, k, chunk, limit, old)
                times.append(None if theirs is None else spent)
                same = same and (theirs is None or answer is None or theirs == answer)
        row.update(old_worst=None if None in times else max(times, default=0.0), same=same,
                   old_domain=_exact_domain(nodes, count, k, sizes, old))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="100,200,300,500,1000,2000,5000")
    ap.add_argument("--zones", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--limit", type=float, default=20.0, help="seconds a call may take")
    ap.add_argument("--against", default=None, metavar="REV", help="also time filter_runs as of this git revision")
    args = ap.parse_args()
    old = revision(args.against) if args.against else None
    print(f"load before: {os.getloadavg()}")
    extra = f" {args.against} exact_domain | {args.against} worst s | same answers |" if old else ""
    print("| nodes | zones | chunks | k | exact_domain | worst s | edge answers (any, n) | zone_runs_past |" + extra)
    print("|---|---|---|---|---|---|---|---|" + "---|---|---|" * bool(old))
    for nodes in map(int, args.nodes.split(",")):
        for count in map(int, args.zones.split(",")):
            row = edge(nodes, count, args.limit, old)
            worst = f">{args.limit:g}" if row["stopped"] else f"{row['worst']:.3f}"
            line = (f"| {nodes} | {count} | {row['chunks']} | {row['k']} | {row['exact_domain']} | {worst} | "
                    f"{row['answers']} | {row['constructed']} |")
            if old:
                theirs = f">{args.limit:g}" if row["old_worst"] is None else f"{row['old_worst']:.3f}"
                line += f" {row['old_domain']} | {theirs} | {row['same']} |"
            print(line, flush=True)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
