"""IC3 against ABC's ``pdr`` on the instances of the benchmark suite, side by side.

Every instance of ``benchmarks.families`` (the full plan unless ``--families``
narrows it) is asked by ``ic3`` and ``abc-pdr`` in fresh processes
(``symreach.bench.runner``), interleaved, with the suite's per-family limits,
so both engines see the same machine load. Series are *not* cut at the first
failure (``stop_series=False``): the point is which instances each engine
decides. Reports solved counts per family, the instances only one engine
decides, and the geometric mean of ic3/abc-pdr time over the instances both
decide (each time floored at 0.01 s).

    python -m benchmarks.ic3_vs_pdr [--families pyramid,tree,...] [--timeout S] [--before REV]

``--before REV`` adds a third engine, IC3 as it was at git revision REV
(``symreach/solvers/ic3.py`` and ``ic3_lift.py`` of REV, extracted into a
temporary package; everything else is this checkout's), in the same
interleaved run, so before and after see the same load.

Results: benchmarks/results/ic3_vs_pdr.md.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks import families
from symreach.bench import runner as bench
from symreach.solvers.abc import abc_available

OUT = Path(__file__).resolve().parent / "results" / "ic3_vs_pdr.md"
ENGINES = ("ic3", "abc-pdr")


def decided(r: bench.JobResult) -> bool:
    return r.verdict in ("deployable", "not-deployable")


def extract_before(rev: str) -> str:
    """IC3 at ``rev`` as package ``ic3_before`` in a new temporary folder, put on
    PYTHONPATH for the job processes; returns its engine spec."""
    root = Path(__file__).resolve().parents[1]
    folder = Path(tempfile.mkdtemp(prefix="ic3-before-"))
    pkg = folder / "ic3_before"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("ic3", "ic3_lift"):
        src = subprocess.run(["git", "-C", str(root), "show", f"{rev}:symreach/solvers/{name}.py"],
                             capture_output=True, text=True, check=True).stdout
        (pkg / f"{name}.py").write_text(src.replace("from symreach.solvers.ic3_lift import",
                                                    "from ic3_before.ic3_lift import"))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(folder)] + ([os.environ["PYTHONPATH"]]
                                                                if os.environ.get("PYTHONPATH") else []))
    return "ic3_before.ic3:Ic3Engine"


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", default=",".join(f for f in families.FAMILIES if f != "cluster"))
    ap.add_argument("--timeout", type=float, default=None, help="one limit for every family")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--before", metavar="REV", help="also run IC3 as of this git revision")
    args = ap.parse_args()
    if not abc_available():
        raise SystemExit("berkeley-abc is not installed")
    plan = families.FULL
    names = [f.strip() for f in args.families.split(",") if f.strip()]
    instances = families.build(plan, names)
    before = extract_before(args.before) if args.before else None
    engines = ENGINES + ((before,) if before else ())
    jobs = []
    for inst in instances:
        limit = args.timeout or plan.timeout_for(inst.family)
        jobs.extend(bench.Job(inst, e, timeout_s=limit) for e in engines)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    results = bench.run_jobs(jobs, timeout_s=args.timeout or plan.timeout_s, memory_mb=2048, parallel=2,
                             stop_series=False,
                             on_result=lambda r: print(f"{r.instance:50s} {r.engine:8s} {r.verdict:15s} "
                                                       f"{r.time_s or 0:.2f}", flush=True))
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()
    by: dict[str, dict[str, bench.JobResult]] = {}
    for r in results:
        by.setdefault(r.instance, {})[r.engine] = r
    wrong = [(i, e) for i, d in by.items() for e, r in d.items()
             if decided(r) and r.expected and r.verdict != r.expected]
    lines = ["# IC3 vs ABC pdr on the benchmark suite", "",
             f"`python -m benchmarks.ic3_vs_pdr --families {args.families}"
             + (f" --timeout {args.timeout:g}" if args.timeout else "")
             + (f" --before {args.before}" if args.before else "") + "`"
             + f"; {len(by)} instances, {len(engines)} engines interleaved, 2 jobs at a time on 2 shared cores "
             f"({platform.machine()}, Python {platform.python_version()}); per-family limits of the full "
             f"plan ({', '.join(f'{f}: {plan.timeout_for(f):g} s' for f in names)}); series not cut. "
             f"Wall time {wall:.0f} s; load average (1, 5, 15 min) {load0[0]:.1f}, {load0[1]:.1f}, "
             f"{load0[2]:.1f} at the start, {load1[0]:.1f}, {load1[1]:.1f}, {load1[2]:.1f} at the end."
             + (f" `ic3 before`: IC3 as of `{args.before}` (`--before`), same run." if before else ""), "",
             "| family | instances | ic3 solved | abc-pdr solved | only ic3 | only abc-pdr | "
             "geomean ic3/pdr (both solved) |", "|---|---|---|---|---|---|---|"]
    all_ratios: list[float] = []
    only_pdr: list[str] = []
    only_ic3: list[str] = []
    for fam in names:
        rows = {i: d for i, d in by.items() if next(iter(d.values())).family == fam}
        s = {e: sum(1 for d in rows.values() if e in d and decided(d[e])) for e in ENGINES}
        oi = [i for i, d in rows.items() if decided(d["ic3"]) and not decided(d["abc-pdr"])]
        op = [i for i, d in rows.items() if decided(d["abc-pdr"]) and not decided(d["ic3"])]
        ratios = [max(d["ic3"].time_s, 0.01) / max(d["abc-pdr"].time_s, 0.01)
                  for d in rows.values() if decided(d["ic3"]) and decided(d["abc-pdr"])]
        all_ratios += ratios
        only_pdr += op
        only_ic3 += oi
        lines.append(f"| {fam} | {len(rows)} | {s['ic3']} | {s['abc-pdr']} | {len(oi)} | {len(op)} | "
                     f"{geomean(ratios):.2f} |")
    tot = {e: sum(1 for d in by.values() if decided(d[e])) for e in ENGINES}
    lines.append(f"| **all** | {len(by)} | {tot['ic3']} | {tot['abc-pdr']} | {len(only_ic3)} | "
                 f"{len(only_pdr)} | {geomean(all_ratios):.2f} |")
    lines += ["", f"Wrong verdicts against known answers: {len(wrong)}" + (f" ({wrong})" if wrong else "") + ".",
              "", "Decided by abc-pdr only:", ""]
    for i in only_pdr:
        d = by[i]
        lines.append(f"- {i}: abc-pdr {d['abc-pdr'].verdict} in {d['abc-pdr'].time_s:.2f} s; ic3 "
                     f"{d['ic3'].status} at {d['ic3'].limit_s:g} s")
    lines += ["", "Decided by ic3 only:", ""]
    for i in only_ic3:
        d = by[i]
        lines.append(f"- {i}: ic3 {d['ic3'].verdict} in {d['ic3'].time_s:.2f} s; abc-pdr "
                     f"{d['abc-pdr'].status}")
    if before:
        lines += before_summary(by, before)
    head = ["ic3 before"] if before else []
    lines += ["", "| instance | " + "".join(f"{e} | s | " for e in head + ["ic3", "abc-pdr"]),
              "|---|" + "---|---|" * (len(head) + 2)]
    for i, d in by.items():
        cells = [d[before]] if before else []
        cells += [d["ic3"], d["abc-pdr"]]
        lines.append(f"| {i} | " + "".join(f"{r.verdict} | {r.time_s or 0:.2f} | " for r in cells))
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:20]))


def before_summary(by: dict[str, dict[str, bench.JobResult]], before: str) -> list[str]:
    """Solved counts before/after and the instances that changed sides."""
    gained = [i for i, d in by.items() if decided(d["ic3"]) and not decided(d[before])]
    lost = [i for i, d in by.items() if decided(d[before]) and not decided(d["ic3"])]
    ratios = [max(d["ic3"].time_s, 0.01) / max(d[before].time_s, 0.01)
              for d in by.values() if decided(d["ic3"]) and decided(d[before])]
    n_before = sum(1 for d in by.values() if decided(d[before]))
    n_after = sum(1 for d in by.values() if decided(d["ic3"]))
    return ["", f"IC3 before: {n_before} solved; after: {n_after}; geomean after/before over the "
            f"{len(ratios)} both solve: {geomean(ratios):.2f}.",
            "Decided after but not before: " + (", ".join(gained) or "none") + ".",
            "Decided before but not after: " + (", ".join(lost) or "none") + "."]


if __name__ == "__main__":
    main()
