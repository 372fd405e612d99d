"""Chosen instances x engines, repeated, in CPU seconds, optionally for two code trees side by side.

    python -m benchmarks.auto_targets --instances mcc/IBM703-PT-none/ --engines lazy,bmc,auto \\
        --repeats 3 --cpu-limit 4 [--before DIR] [--out FILE.md]

Each job runs as in ``benchmarks.run_all --cpu-limits``: one process per job
(``symreach.bench.runner``), killed when its process tree has used
``--cpu-limit`` CPU seconds after its check began, wall limit ``--wall-factor``
times that; one
job at a time. ``--instances`` are prefixes of ``run_all``'s instance ids
(any family of the full plan). With ``--before DIR`` (another checkout of
the project, e.g. ``git archive main | tar -x -C DIR``) every job runs
once under each tree in turn, ``before`` first, so that both see the
same load; the table gives the median CPU of each and their ratio.
A job of the other tree runs through this file started with that tree on
``PYTHONPATH`` (``--one``), so that it loads that tree's engines and runner.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import click

THIS = Path(__file__).resolve()
AFTER = THIS.parents[1]
DECIDED = ("deployable", "not-deployable")


def _one(instance_id: str, engine: str, cpu_limit: float, wall_factor: float) -> dict:
    """One job with the code of the tree this process imports."""
    from benchmarks.families import FAMILIES, FULL, build, mcc
    from symreach.bench.runner import Job, run_job

    family = instance_id.split("/", 1)[0]
    candidates = mcc([instance_id.split("/")[1]]) if family == "mcc" else \
        build(FULL, [family] if family in FAMILIES else FAMILIES)
    inst = next(i for i in candidates if i.id == instance_id)
    with tempfile.TemporaryDirectory() as tmp:
        res = run_job(Job(inst, engine), wall_factor * cpu_limit, 2048, tmp, cpu_limit_s=cpu_limit)
    portfolio = (res.stats or {}).get("portfolio") or {}
    return {"instance": inst.id, "engine": engine, "status": res.status, "verdict": res.verdict,
            "cpu_s": res.cpu_s, "wall_s": res.time_s, "answered_by": portfolio.get("answered_by"),
            "solos": portfolio.get("solos")}


def _in_tree(tree: Path, instance_id: str, engine: str, cpu_limit: float, wall_factor: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, str(THIS), "--one", instance_id, "--engines", engine,
                          "--cpu-limit", str(cpu_limit), "--wall-factor", str(wall_factor)],
                         cwd=tree, env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cell(rows: list[dict]) -> str:
    """Median CPU over the decided repeats, with how many decided."""
    cpus = [r["cpu_s"] for r in rows if r["verdict"] in DECIDED and r["cpu_s"] is not None]
    if not cpus:
        return f"- (0/{len(rows)})"
    return f"{statistics.median(cpus):.2f} ({len(cpus)}/{len(rows)})"


def _median(rows: list[dict]) -> Optional[float]:
    cpus = [r["cpu_s"] for r in rows if r["verdict"] in DECIDED and r["cpu_s"] is not None]
    return statistics.median(cpus) if len(cpus) == len(rows) else None


@click.command()
@click.option("--instances", default="", help="Comma-separated prefixes of instance ids.")
@click.option("--engines", default="lazy,bmc,auto", show_default=True)
@click.option("--repeats", default=3, show_default=True, type=click.IntRange(1))
@click.option("--cpu-limit", default=4.0, show_default=True, type=float)
@click.option("--wall-factor", default=3.0, show_default=True, type=float,
              help="Each job's wall-clock limit is this times its CPU limit (raise it on a busy "
                   "machine, so that only CPU decides).")
@click.option("--before", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Another tree of the project, run side by side with this one.")
@click.option("--after", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The tree measured as 'after' [this one].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--one", default=None, hidden=True)
def main(instances: str, engines: str, repeats: int, cpu_limit: float, wall_factor: float,
         before: Optional[Path],
         after: Optional[Path], out: Optional[Path], one: Optional[str]) -> None:
    if one is not None:
        print(json.dumps(_one(one, engines, cpu_limit, wall_factor)))
        return
    from benchmarks.families import FULL, build

    prefixes = [p for p in instances.split(",") if p]
    families = sorted({p.split("/", 1)[0] for p in prefixes})
    ids = [i.id for i in build(FULL, families) if any(i.id.startswith(p) for p in prefixes)]
    names = [e for e in engines.split(",") if e]
    trees = ([("before", before.resolve())] if before else []) + [("after", (after or AFTER).resolve())]
    load0, t0 = os.getloadavg()[0], time.time()
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for rep in range(repeats):
        for inst in ids:
            for engine in names:
                for label, tree in trees:
                    row = _in_tree(tree, inst, engine, cpu_limit, wall_factor)
                    runs.setdefault((inst, engine, label), []).append(row)
                    print(f"[{rep + 1}/{repeats}] {label:6s} {engine:6s} {row['status']:8s} "
                          f"cpu {row['cpu_s'] or 0:6.2f} by {row['answered_by']} {inst}",
                          file=sys.stderr, flush=True)
    lines = [f"`python -m benchmarks.auto_targets --instances {instances} --engines {engines} "
             f"--repeats {repeats} --cpu-limit {cpu_limit:g} --wall-factor {wall_factor:g}"
             + (" --before DIR`" if before else "`"),
             "",
             f"CPU seconds of each job's process tree (median over the decided repeats; in "
             f"brackets decided/run), limit {cpu_limit:g} CPU s (wall {wall_factor:g}x that); one job "
             f"at a time; "
             f"{time.time() - t0:.0f} s of wall time; 1-minute load average {load0:.1f} at the "
             f"start, {os.getloadavg()[0]:.1f} at the end. auto/best: auto's median over the "
             f"least median of the other engines (all repeats decided).", ""]
    header = ["instance"] + [f"{e} {label}" for e in names for label, _ in trees]
    if before:
        header += [f"{e} after/before" for e in names]
    singles = [e for e in names if e != "auto"]
    if "auto" in names and singles:
        header += [f"auto/best {label}" for label, _ in trees]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for inst in ids:
        cells = [inst] + [_cell(runs[(inst, e, label)]) for e in names for label, _ in trees]
        if before:
            for e in names:
                a, b = _median(runs[(inst, e, "after")]), _median(runs[(inst, e, "before")])
                cells.append(f"{a / b:.2f}" if a and b else "-")
        if "auto" in names and singles:
            for label, _ in trees:
                best = [m for m in (_median(runs[(inst, e, label)]) for e in singles) if m]
                auto = _median(runs[(inst, "auto", label)])
                cells.append(f"{auto / min(best):.2f}" if auto and best else "-")
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    print(text)


if __name__ == "__main__":
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    main()
