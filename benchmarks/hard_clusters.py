"""Every engine on the hard realistic cluster family, side by side.

``benchmarks.families.hard_family`` (``symreach.generators.hard_clusters``):
service pyramids under tight capacity, self-affine StatefulSets,
anti-affinity pools and hard spread, 20-500 nodes, 10-200 workloads, both
profiles, two seeds. Each job runs in a fresh process
(``symreach.bench.runner``), two at a time, series (profile, seed) cut at an
engine's first failure. There is no closed-form answer: a disagreement
between two engines that decide an instance fails the run (exit 1), and the
explicit engine joins on the sizes it can enumerate.

    python -m benchmarks.hard_clusters [--timeout 15] [--engines ...] [--sizes 20x10,50x30]

Results: benchmarks/results/hard_clusters.md (the table and the largest size
each engine decides per profile).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

from benchmarks import families
from symreach.bench import runner as bench
from symreach.solvers.abc import abc_available

OUT = Path(__file__).resolve().parent / "results" / "hard_clusters.md"
ENGINES = ("explicit", "bdd", "bmc", "ic3", "abc-pdr", "abc-reach")


def decided(r: bench.JobResult) -> bool:
    return r.verdict in ("deployable", "not-deployable")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=15.0)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--sizes", default=",".join(f"{n}x{w}" for n, w in families.FULL.hard))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e and (abc_available() or not e.startswith("abc-"))]
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    instances = list(families.hard_family(sizes, families.FULL.hard_seeds))
    jobs = [bench.Job(inst, e) for inst in instances for e in engines]
    t0 = time.perf_counter()
    results = bench.run_jobs(jobs, timeout_s=args.timeout, memory_mb=2048, parallel=2,
                             on_result=lambda r: print(f"{r.instance:36s} {r.engine:9s} {r.status:8s} "
                                                       f"{r.verdict:15s} {r.time_s or 0:.2f}", flush=True))
    wall = time.perf_counter() - t0
    by: dict[str, dict[str, bench.JobResult]] = {}
    for r in results:
        by.setdefault(r.instance, {})[r.engine] = r
    disagree = []
    for i, d in by.items():
        verdicts = {r.verdict for r in d.values() if decided(r)}
        if len(verdicts) > 1:
            disagree.append(i)
    lines = ["# Hard realistic clusters: every engine", "",
             f"`python -m benchmarks.hard_clusters --timeout {args.timeout:g}`; {len(by)} instances x "
             f"{len(engines)} engines, 2 jobs at a time on 2 shared cores ({platform.machine()}, Python "
             f"{platform.python_version()}), {args.timeout:g} s and 2048 MB per job, a series (profile, "
             f"seed) stops for an engine after its first failure (`skip`). Wall time {wall:.0f} s.", "",
             "Engines disagreeing on a decided instance: "
             + (", ".join(disagree) if disagree else "none") + ".", "",
             "| instance | state bits | " + " | ".join(engines) + " |",
             "|---|---|" + "---|" * len(engines)]
    for i, d in by.items():
        bits = next((r.stats.get("state_vars") for r in d.values() if r.stats.get("state_vars")), "")
        cells = []
        for e in engines:
            r = d.get(e)
            if r is None:
                cells.append("")
            elif decided(r):
                cells.append(f"{r.verdict} {r.time_s:.2f}")
            else:
                cells.append(r.status)
        lines.append(f"| {i} | {bits} | " + " | ".join(cells) + " |")
    lines += ["", "Largest size (nodes x workloads) each engine decides, per profile:", "",
              "| engine | paper | kubernetes |", "|---|---|---|"]
    for e in engines:
        best = {}
        for prof in ("paper", "kubernetes"):
            got = [(r.meta["nodes"], r.meta["workloads"]) for d in by.values() for r in d.values()
                   if r.engine == e and decided(r) and r.meta.get("profile") == prof]
            best[prof] = "x".join(map(str, max(got))) if got else "-"
        lines.append(f"| {e} | {best['paper']} | {best['kubernetes']} |")
    decided_by = {}
    for d in by.values():
        for r in d.values():
            if decided(r) and r.stats.get("decided_by"):
                decided_by[r.stats["decided_by"]] = decided_by.get(r.stats["decided_by"], 0) + 1
    lines += ["", "Jobs decided by a preprocessing fast path: "
              + (", ".join(f"{k}: {v}" for k, v in sorted(decided_by.items())) if decided_by else "none") + "."]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(1 if disagree else 0)


if __name__ == "__main__":
    main()
