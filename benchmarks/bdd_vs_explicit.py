"""BDD engine vs the explicit engine on the paper's reductions (not a unit test).

- Appendix C pebbling: pyramids and binary trees by height h, at k = h+1
  (not deployable) and k = h+2 (deployable; both are the known prices);
- Appendix B: the MCC nets of /work/shared/data/petri, one coverable and one
  non-coverable goal place each (answers.json gives the truth);
- generated clusters (1,000 nodes, 300 pod types) when the generator exists.

Writes benchmarks/results/bdd_vs_explicit.md. Single process; run with
``python benchmarks/bdd_vs_explicit.py [--max-h 9] [--timeout 120]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from symreach.frontends.reduction_pebbling import encode_pebbling  # noqa: E402
from symreach.generators.dags import binary_tree, pyramid  # noqa: E402
from symreach.loader import load_document  # noqa: E402
from symreach.result import Verdict  # noqa: E402
from symreach.solvers.base import Limits  # noqa: E402
from symreach.solvers.bdd import BddEngine  # noqa: E402
from symreach.solvers.explicit import ExplicitEngine  # noqa: E402
from benchmarks.shared_data import PETRI_DIR

PETRI = PETRI_DIR


def run(engine, inst, timeout):
    t = time.perf_counter()
    r = engine.check(inst, run=Limits(timeout_s=timeout))
    return r, time.perf_counter() - t


def fmt_bdd(r, dt):
    s = r.stats
    return (f"{r.verdict.value} | {dt:.2f} | {s.get('peak_nodes', '-')} | {s.get('reached_nodes', '-')} | "
            f"{s.get('iterations', '-')} | {s.get('image_calls', '-')}")


def pebbling_rows(shape, heights, timeout, explicit_timeout, lines):
    lines.append(f"\n### {shape}\n")
    lines.append("| h | vertices | k | expected | BDD verdict | BDD s | peak nodes | reached nodes | "
                 "sweeps | images | explicit | explicit s |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    largest = None
    for h in heights:
        dag = pyramid(h) if shape == "pyramid" else binary_tree(h)
        all_ok = True
        for k, expected in ((h + 1, Verdict.NOT_DEPLOYABLE), (h + 2, Verdict.DEPLOYABLE)):
            inst = load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))
            r, dt = run(BddEngine(), inst, timeout)
            ok = r.verdict is expected
            all_ok &= ok and dt <= timeout
            if len(dag.vertices) <= 21:
                e, edt = run(ExplicitEngine(), inst, explicit_timeout)
                ex = (e.verdict.value, f"{edt:.2f}")
            else:
                ex = ("skipped", "-")
            lines.append(f"| {h} | {len(dag.vertices)} | {k} | {expected.value} | {fmt_bdd(r, dt)} | "
                         f"{ex[0]} | {ex[1]} |")
            print(lines[-1], flush=True)
        if all_ok:
            largest = h
        else:
            break
    lines.append(f"\nLargest {shape} height with both k decided within {timeout:g} s: {largest}\n")
    return largest


def petri_rows(timeout, explicit_timeout, lines):
    from symreach.frontends.petri_net import read_net
    from symreach.frontends.reduction_petri import encode_petri

    answers = json.loads((PETRI / "answers.json").read_text())
    lines.append("\n### Petri nets (Appendix B encoding)\n")
    lines.append("| net | goal | expected | BDD verdict | BDD s | peak nodes | reached nodes | sweeps | images "
                 "| explicit | explicit s |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in sorted(answers):
        ans = answers[name]
        net = read_net(PETRI / f"{name}.pnml")
        goals = []
        if ans.get("coverable"):
            goals.append((ans["coverable"][-1], Verdict.DEPLOYABLE))
        if ans.get("not_coverable"):
            goals.append((ans["not_coverable"][0], Verdict.NOT_DEPLOYABLE))
        for goal, expected in goals:
            inst = load_document(encode_petri(net, goal))
            r, dt = run(BddEngine(), inst, timeout)
            e, edt = run(ExplicitEngine(), inst, explicit_timeout)
            mark = "" if r.verdict in (expected, Verdict.UNKNOWN) else " **MISMATCH**"
            lines.append(f"| {name} | {goal} | {expected.value} | {fmt_bdd(r, dt)}{mark} | "
                         f"{e.verdict.value} | {edt:.2f} |")
            print(lines[-1], flush=True)


def cluster_rows(timeout, lines, seeds=range(5)):
    try:
        from symreach.generators.clusters import generate_cluster
    except ImportError:
        lines.append("\n(cluster generator not available)\n")
        return
    lines.append("\n### Generated clusters: 1,000 nodes, 300 pod types, one query each\n")
    lines.append("| seed | load s | verdict | decided by | cone types | modelled pairs | check s |")
    lines.append("|---|---|---|---|---|---|---|")
    for seed in seeds:
        t = time.perf_counter()
        inst = load_document(generate_cluster(nodes=1000, pod_types=300, seed=seed))
        lt = time.perf_counter() - t
        r, dt = run(BddEngine(), inst, timeout)
        s = r.stats
        lines.append(f"| {seed} | {lt:.2f} | {r.verdict.value} | {s.get('decided_by', 'bdd fixpoint')} | "
                     f"{s.get('cone_types')} | {s.get('state_vars', s.get('pairs_may'))} | {dt:.2f} |")
        print(lines[-1], flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-h", type=int, default=13)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--explicit-timeout", type=float, default=30.0)
    ap.add_argument("--skip-petri", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/bdd_vs_explicit.md"))
    args = ap.parse_args()
    lines = ["# BDD engine vs explicit engine", "",
             f"Machine: {platform.machine()}, Python {platform.python_version()}, single process. "
             f"BDD engine defaults (bidirectional chaining on whole reached sets, interleaved deletes, "
             f"static order target-first, no dynamic reordering). Timeout {args.timeout:g} s (BDD), "
             f"{args.explicit_timeout:g} s (explicit). Times include preprocessing, compilation, "
             "witness extraction and replay, and certificate dumping.",
             "", "## Pebbling (Appendix C)"]
    pebbling_rows("pyramid", range(2, args.max_h + 1), args.timeout, args.explicit_timeout, lines)
    pebbling_rows("binary tree", range(2, 7), args.timeout, args.explicit_timeout, lines)
    if not args.skip_petri:
        petri_rows(min(args.timeout, 30.0), min(args.explicit_timeout, 10.0), lines)
    cluster_rows(args.timeout, lines)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
