"""``auto`` from several checkouts against the single engines, side by side, in CPU seconds.

    python -m benchmarks.auto_side_by_side --checkout before=/tmp/auto-before --checkout after=. \\
        --families hard,pyramid,tree --repeats 3 --out benchmarks/results/auto_targets/side_by_side.md

Issue 31 item 5 compares ``auto`` with the best single engine in CPU seconds; a
change to ``auto``'s schedule is judged by running the old and the new ``auto``
beside the single engines in one run. Every job is the benchmark runner's child
(``python -m symreach.bench.runner``: load the instance, build the engine, then
the CPU of ``engine.check`` and of the processes it waited for), in a fresh
process with ``PYTHONPATH`` set to its checkout; the single engines run from
the first checkout named ``after`` (else the last one). Jobs run one at a time,
round after round in the same order, so load changes hit them alike. A single
engine that is not within ``KEEP`` times the best single engine of its instance
in the first round is not repeated (it cannot be the best); one that fails
(limit, unknown) is not repeated either. The table gives medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from benchmarks import families

ROOT = Path(__file__).resolve().parents[1]
SINGLES = ("bdd", "ic3", "bmc", "abc-pdr")
KEEP = 2.0  # singles further than this from the first round's best are not repeated
FLOOR_S = 0.05  # as benchmarks/auto_vs_best.py: below it a ratio measures start-up noise


def run_job(checkout: Path, document: dict, name: str, engine: str, cpu_limit_s: float,
            work: str) -> dict:
    """One job: {"verdict", "cpu_s", "by"} ("cpu_s" None when it failed)."""
    spec, out = os.path.join(work, "spec.json"), os.path.join(work, "out.json")
    with open(spec, "w") as handle:
        json.dump({"id": name, "engine": engine, "timeout_s": cpu_limit_s * 3, "memory_mb": 4096,
                   "document": document, "path": None, "query": None, "cpu_limit_s": cpu_limit_s},
                  handle)
    env = dict(os.environ, PYTHONPATH=str(checkout), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        subprocess.run([sys.executable, "-m", "symreach.bench.runner", spec, out], cwd=checkout,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=cpu_limit_s * 6 + 30, start_new_session=True)
        with open(out) as handle:
            got = json.load(handle)
        os.unlink(out)
    except (subprocess.TimeoutExpired, FileNotFoundError, json.JSONDecodeError):
        return {"verdict": "limit", "cpu_s": None, "by": None}
    decided = got.get("status") == "ok"
    portfolio = (got.get("stats") or {}).get("portfolio") or {}
    return {"verdict": got.get("verdict"), "cpu_s": got.get("cpu_s") if decided else None,
            "by": portfolio.get("answered_by"),
            "abc_cpu_s": (got.get("stats") or {}).get("abc_cpu_s")}  # ABC's own, where it ran in-process


def measure(instances, checkouts: dict[str, Path], singles: list[str], repeats: int,
            cpu_limit_s: float, log=print) -> dict:
    """{instance id: {label: [job, ...]}}, labels "auto:<checkout>" and the singles."""
    home = checkouts.get("after", list(checkouts.values())[-1])
    rows: dict[str, dict[str, list[dict]]] = {inst.id: {} for inst in instances}
    dropped: dict[str, set[str]] = {inst.id: set() for inst in instances}
    with tempfile.TemporaryDirectory(prefix="auto-sbs-") as work:
        for round_ in range(repeats):
            for inst in instances:
                jobs = [(f"auto:{label}", path, "auto") for label, path in checkouts.items()]
                jobs += [(e, home, e) for e in singles if e not in dropped[inst.id]]
                for label, path, engine in jobs:
                    job = run_job(path, inst.document, inst.id, engine, cpu_limit_s, work)
                    job["load"] = os.getloadavg()[0]
                    rows[inst.id].setdefault(label, []).append(job)
                    cpu = "-" if job["cpu_s"] is None else f"{job['cpu_s']:.3f}"
                    log(f"[{round_ + 1}/{repeats}] {inst.id:28s} {label:14s} {job['verdict']:15s} "
                        f"{cpu:>7s} {job['by'] or ''} (load {job['load']:.1f})")
                if round_ == 0:
                    firsts = {e: rows[inst.id][e][0]["cpu_s"] for e in singles if e in rows[inst.id]}
                    best = min((c for c in firsts.values() if c is not None), default=None)
                    dropped[inst.id] = {e for e, c in firsts.items()
                                        if c is None or best is None or c > KEEP * max(best, FLOOR_S)}
    return rows


def _median(jobs: list[dict]) -> Optional[float]:
    xs = [j["cpu_s"] for j in jobs if j["cpu_s"] is not None]
    return statistics.median(xs) if xs else None


def table(rows: dict, checkouts: list[str]) -> str:
    """Markdown: per instance the best single engine's median CPU and each auto's, with ratios."""
    autos = [f"auto:{c}" for c in checkouts]
    head = ["instance", "best single (median CPU s)"] + [f"{a} CPU s" for a in autos] \
        + [f"{a} / best" for a in autos] + ["answered by"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for inst, by_label in rows.items():
        singles = {k: _median(v) for k, v in by_label.items() if not k.startswith("auto:")}
        solved = {k: v for k, v in singles.items() if v is not None}
        best = min(solved, key=solved.get) if solved else None
        cells = [inst, f"{best} {solved[best]:.3f}" if best else "none"]
        ratios, answered = [], []
        for a in autos:
            m = _median(by_label.get(a, []))
            cells.append("-" if m is None else f"{m:.3f}")
            ratios.append("-" if m is None or best is None
                          else f"{max(m, FLOOR_S) / max(solved[best], FLOOR_S):.2f}")
            answered.append(",".join(sorted({j["by"] or "?" for j in by_label.get(a, []) if j["cpu_s"]})))
        lines.append("| " + " | ".join(cells + ratios + [" / ".join(answered)]) + " |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", required=True, metavar="LABEL=PATH")
    parser.add_argument("--families", default="hard,pyramid,tree")
    parser.add_argument("--only", default="", help="comma-separated instance ids (default: all)")
    parser.add_argument("--singles", default=",".join(SINGLES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-limit", type=float, default=10.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    checkouts = {c.split("=", 1)[0]: Path(c.split("=", 1)[1]).resolve() for c in args.checkout}
    instances = families.build(families.FULL, args.families.split(","))
    if args.only:
        wanted = set(args.only.split(","))
        instances = [i for i in instances if i.id in wanted]
    load0 = os.getloadavg()[0]
    rows = measure(instances, checkouts, [s for s in args.singles.split(",") if s], args.repeats,
                   args.cpu_limit)
    text = (f"{len(instances)} instances, {args.repeats} rounds, one job at a time, CPU limit "
            f"{args.cpu_limit:g} s; 1-minute load average {load0:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end; checkouts: "
            + ", ".join(f"{k}={v}" for k, v in checkouts.items()) + "\n\n" + table(rows, list(checkouts)))
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
