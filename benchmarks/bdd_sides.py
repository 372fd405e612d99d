"""CPU of each side of the bidirectional BDD search, and the backward search alone.

    python -m benchmarks.bdd_sides --instances tree/h6/k7,pyramid/h8/k9 --pyramids 11:12 --repeats 3

Why ``auto`` runs the BDDs backward only where goal regression ran out of room
on the node (``schedule.SOLO_OPTIONS_NO_PLAN``): on the not-deployable
pebblings the backward side decides and the forward side's images are lost.
Each job is a fresh process (``--one``); the side times are the engine's
``side_time_s`` with the engine module's clock read as process CPU time (the
search runs in one thread), the totals are CPU seconds of ``check``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _instance(spec: str):
    if spec.startswith("pyramid:"):
        from symreach.frontends.reduction_pebbling import encode_pebbling
        from symreach.generators.dags import pyramid
        from symreach.loader import load_document

        h, k = (int(x) for x in spec.split(":")[1:])
        dag = pyramid(h)
        return load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))
    from benchmarks.families import FULL, build
    from symreach.loader import load_document

    found = next(i for i in build(FULL, [spec.split("/")[0]]) if i.id == spec)
    return load_document(found.document, filename=spec)


def one(spec: str, direction: str) -> dict:
    """One check in this process: verdict, CPU, CPU per side."""
    import symreach.solvers.bdd as bdd_module
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import make_engine

    bdd_module.time = types.SimpleNamespace(perf_counter=time.process_time)  # side_time_s in CPU
    instance = _instance(spec)
    engine = make_engine("bdd", direction=direction)
    start = time.process_time()
    result = engine.check(instance, instance.query, Limits(timeout_s=600))
    return {"verdict": result.verdict.value, "cpu_s": time.process_time() - start,
            "sides": result.stats.get("side_time_s") or {}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", default="tree/h5/k6,tree/h6/k7,pyramid/h8/k9")
    parser.add_argument("--pyramids", default="11:12", help="h:k,... beyond run_all's")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    specs = [s for s in args.instances.split(",") if s]
    specs += [f"pyramid:{p}" for p in args.pyramids.split(",") if p]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    load0 = os.getloadavg()[0]
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeats):
        for spec in specs:
            for direction in ("bidirectional", "backward"):
                out = subprocess.run([sys.executable, "-m", "benchmarks.bdd_sides", "--one", spec, direction],
                                     cwd=ROOT, env=env, capture_output=True, text=True, check=True)
                runs.setdefault((spec, direction), []).append(json.loads(out.stdout.splitlines()[-1]))
    print(f"{args.repeats} rounds, one job at a time; 1-minute load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end. Medians, CPU s.\n")
    print("| instance | verdict | bidirectional | its forward side | its backward side | backward alone "
          "| alone / bidirectional |")
    print("|---|---|---|---|---|---|---|")
    for spec in specs:
        both, back = runs[(spec, "bidirectional")], runs[(spec, "backward")]
        med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
        fwd = statistics.median(r["sides"].get("forward", 0.0) for r in both)
        bwd = statistics.median(r["sides"].get("backward", 0.0) for r in both)
        print(f"| {spec} | {both[0]['verdict']} | {med(both, 'cpu_s'):.3f} | {fwd:.3f} | {bwd:.3f} "
              f"| {med(back, 'cpu_s'):.3f} | {med(back, 'cpu_s') / med(both, 'cpu_s'):.2f} |")


if __name__ == "__main__":
    main()
