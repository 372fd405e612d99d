"""The BDD engine on the Petri nets of /work/shared/data/petri (Appendix B).

For every net, three goal places chosen by their *coverability depth* (the
first BFS level of the net's marking graph at which the place is marked;
BFS capped at ``--bfs-cap`` markings, which only matters for
LamportFastMutEx-PT-4, whose ``coverable`` list in answers.json is a lower
bound, so only places it lists are used):

- nets with a never-markable place: a coverable place at the median depth,
  one at the largest depth, and the first never-markable place;
- other nets: the shallowest coverable place not marked initially (initially
  marked ones are decided by the fast paths), the median and the deepest.

One process per query (``symreach.bench.runner.run_job``: wall-clock and memory
limits), BDD engine defaults, 120 s limit. Ground truth: answers.json.
Results: benchmarks/results/bdd_nets.md (rewritten after every query).

    python -m benchmarks.bdd_nets [--timeout 120] [--nets NAME,...]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Iterator

from benchmarks.families import first_marked_depth
from benchmarks.shared_data import PETRI_DIR
from symreach.bench.runner import BenchInstance, Job, run_job
from symreach.frontends.petri_net import PetriNet, read_net
from symreach.frontends.reduction_petri import encode_petri

DATA = PETRI_DIR
OUT = Path(__file__).resolve().parent / "results" / "bdd_nets.md"


def place_depths(net: PetriNet, cap: int) -> dict[str, int]:
    """First BFS level (in transition firings) at which each place is marked,
    over at most ``cap`` markings of the (1-safe) marking graph."""
    return first_marked_depth(net, cap)


def choose_goals(net: PetriNet, ans: dict, cap: int) -> list[tuple[str, str, str]]:
    """(place, expected verdict, depth as text) triples; see the module docstring."""
    depth = place_depths(net, cap)
    listed = [p for p in ans.get("coverable") or [] if p in depth]
    cov = sorted(listed, key=lambda p: (depth[p], p))
    never = ans.get("not_coverable") or []
    nonzero = [p for p in cov if depth[p] > 0] or cov
    picks: list[str] = []
    if never:
        wanted = [nonzero[len(nonzero) // 2], nonzero[-1]]
    else:
        wanted = [nonzero[0], nonzero[len(nonzero) // 2], nonzero[-1]]
    for p in wanted + cov:  # too few distinct depths: fill up in depth order
        if p not in picks and len(picks) < len(wanted):
            picks.append(p)
    out = [(p, "deployable", str(depth[p])) for p in picks]
    if never:
        out.append((never[0], "not-deployable", "never"))
    return out


def add_goal_options(ap: argparse.ArgumentParser, memory_mb: int) -> None:
    """The options every per-goal net benchmark shares."""
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--memory-mb", type=int, default=memory_mb)
    ap.add_argument("--bfs-cap", type=int, default=200_000)
    ap.add_argument("--nets", default="")


def goal_instances(nets: str, bfs_cap: int) -> Iterator[tuple[str, str, str, str, BenchInstance]]:
    """(net, goal, expected, depth, instance) for the chosen goals of the
    nets named in ``nets`` (comma-separated; every net of answers.json when empty)."""
    answers = json.loads((DATA / "answers.json").read_text())
    for name in (nets.split(",") if nets else sorted(answers)):
        net = read_net(DATA / f"{name}.pnml")
        for goal, expected, depth in choose_goals(net, answers[name], bfs_cap):
            yield name, goal, expected, depth, BenchInstance(
                id=f"{name}:{goal}", family="petri", document=encode_petri(net, goal), expected=expected)


def fmt(x, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def write(lines_head: list[str], rows: list[str], summary: list[str]) -> None:
    OUT.write_text("\n".join(lines_head + rows + [""] + summary) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    add_goal_options(ap, memory_mb=6000)
    args = ap.parse_args()
    head = ["# BDD engine on the Petri-net benchmark (Appendix B encoding)", "",
            f"`python -m benchmarks.bdd_nets --timeout {args.timeout:g}`; {platform.machine()}, "
            f"Python {platform.python_version()}, 2 shared cores, one process per query "
            f"(`symreach.bench.runner.run_job`, {args.memory_mb} MB limit). BDD engine defaults "
            "(bidirectional chaining, variable order `auto`: FORCE order over the guard-reads "
            "hypergraph when the witness graph is cyclic, as on every net here). "
            "Goal places by coverability depth (BFS level of the marking graph, see the module "
            "docstring); ground truth answers.json. Time is the wall time of `engine.check` "
            "(preprocessing, compilation, fixpoint, witness replay, certificate).", "",
            "| net | goal place | depth | expected | BDD verdict | agrees | time s | peak nodes "
            "| reached nodes | sweeps | images | direction |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows: list[str] = []
    n_ok = n_wrong = n_unknown = 0
    within = 0
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bdd-nets-") as work:
        for name, goal, expected, depth, inst in goal_instances(args.nets, args.bfs_cap):
            r = run_job(Job(inst, "bdd"), args.timeout, args.memory_mb, work)
            s = r.stats or {}
            if r.verdict in ("deployable", "not-deployable"):
                agrees = "yes" if r.verdict == expected else "**NO**"
                if r.verdict == expected:
                    n_ok += 1
                    within += int((r.time_s or 0) <= args.timeout)
                else:
                    n_wrong += 1
            else:
                agrees = "—"
                n_unknown += 1
            verdict = r.verdict if r.status in ("ok", "unknown") else f"{r.verdict} ({r.status})"
            rows.append(f"| {name} | {goal} | {depth} | {expected} | {verdict} | {agrees} | "
                        f"{fmt(r.time_s)} | {fmt(s.get('peak_nodes'))} | {fmt(s.get('reached_nodes'))} | "
                        f"{fmt(s.get('iterations'))} | {fmt(s.get('image_calls'))} | "
                        f"{fmt(s.get('decided_direction', s.get('decided_by')))} |")
            print(rows[-1], flush=True)
            summary = [f"Decided and agreeing: {n_ok} of {len(rows)}; wrong: {n_wrong}; "
                       f"unknown/timeout: {n_unknown}. Total wall time "
                       f"{time.perf_counter() - t_start:.0f} s."]
            write(head, rows, summary)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
