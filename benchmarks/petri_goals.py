"""The goals of the shared Petri nets under ``auto``, with per-engine columns.

Goals: the 45 queries of ``benchmarks.bdd_nets`` (for every net of
``/work/shared/data/petri``, places chosen by coverability depth — the BFS
level of the marking graph at which the place is first marked — plus the
first never-markable place; see ``bdd_nets.choose_goals``). answers.json
lists 1,263 places in all (474 in BART alone): at 120 s per engine and goal
on two shared cores the whole list does not fit in a session, so these 45
are the goals; ``--nets`` narrows them.

One process per job (``symreach.bench.runner.run_job``: wall-clock and memory
limits), ``auto`` at ``--timeout`` (120 s by default) and, with
``--engines``, each named single engine at ``--engine-timeout``. Every
decided verdict is compared with answers.json (a disagreement is printed in
bold and counted). Written to ``benchmarks/results/petri_goals.md`` after
every goal, with the raw results beside it (``.json``).

    python -m benchmarks.petri_goals [--timeout 120] [--engines bdd,ic3,bmc]
                                     [--engine-timeout 120] [--nets A,B] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Optional

from benchmarks.bdd_nets import add_goal_options, goal_instances
from symreach.bench.runner import Job, JobResult, run_job

OUT = Path(__file__).resolve().parent / "results" / "petri_goals.md"
DECIDED = ("deployable", "not-deployable")


def answered_by(r: JobResult) -> str:
    """Which engine (or preprocessing step) gave ``auto``'s verdict."""
    if r.verdict not in DECIDED:
        return "—"
    s = r.stats or {}
    by = (s.get("portfolio") or {}).get("answered_by")
    return by or s.get("decided_by") or "preprocessing"


def cell(r: Optional[JobResult], expected: str) -> str:
    """A time, ``—`` when undecided (with the status when not a plain timeout)."""
    if r is None:
        return ""
    if r.verdict in DECIDED:
        mark = "" if r.verdict == expected else " **WRONG**"
        return f"{r.time_s:.2f}{mark}"
    return "—" if r.status in ("unknown", "timeout") else f"— ({r.status})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_goal_options(ap, memory_mb=4096)  # --timeout: auto's limit per goal
    ap.add_argument("--engines", default="", help="single engines for the extra columns")
    ap.add_argument("--engine-timeout", type=float, default=120.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    head = ["# Goals of the shared Petri nets under `auto`", "",
            f"`python -m benchmarks.petri_goals --timeout {args.timeout:g}"
            + (f" --engines {','.join(engines)} --engine-timeout {args.engine_timeout:g}" if engines else "")
            + f"`; {platform.machine()}, Python {platform.python_version()}, 2 cores shared with "
            f"other work (load average at the start {os.getloadavg()[0]:.1f}), one process per job, "
            f"{args.memory_mb} MB per job. Goals: the queries of `benchmarks.bdd_nets` (see the "
            "module docstring); depth = BFS level (firings) at which the place is first marked. "
            "Times are the wall time of `engine.check`; — = not decided within the limit.", "",
            "| " + " | ".join(["net", "goal", "depth", "expected", "auto verdict", "answered by",
                               "auto s", *(f"{e} s" for e in engines)]) + " |",
            "|---|---|---|---|---|---|---|" + "---|" * len(engines)]
    rows: list[str] = []
    raw: list[dict] = []
    decided = wrong = 0
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="petri-goals-") as work:
        for name, goal, expected, depth, inst in goal_instances(args.nets, args.bfs_cap):
            res = {"auto": run_job(Job(inst, "auto"), args.timeout, args.memory_mb, work)}
            for e in engines:
                res[e] = run_job(Job(inst, e), args.engine_timeout, args.memory_mb, work)
            auto = res["auto"]
            if auto.verdict in DECIDED:
                decided += auto.verdict == expected
                wrong += auto.verdict != expected
            cells = [name, goal, depth, expected, auto.verdict, answered_by(auto), cell(auto, expected),
                     *(cell(res[e], expected) for e in engines)]
            rows.append("| " + " | ".join(cells) + " |")
            raw.append({"net": name, "goal": goal, "depth": depth, "expected": expected,
                        "results": {e: r.to_json() for e, r in res.items()}})
            print(rows[-1], flush=True)
            summary = [f"auto decided {decided} of {len(rows)} goals within {args.timeout:g} s "
                       f"(wrong: {wrong}); total wall time {time.perf_counter() - t_start:.0f} s, "
                       f"load average at the end {os.getloadavg()[0]:.1f}."]
            for e in engines:
                n = sum(1 for r in raw if r["results"][e]["verdict"] in DECIDED)
                summary.append(f"- {e}: decided {n} of {len(raw)} within {args.engine_timeout:g} s")
            args.out.write_text("\n".join(head + rows + [""] + summary) + "\n")
            args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1, default=str))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
