"""Compare two ``benchmarks.run_all`` outputs job by job: verdicts and CPU time.

    python -m benchmarks.compare_runs BEFORE/results.csv AFTER/results.csv [--floor 0.1]

Jobs are paired by (instance, engine). A *disagreement* is a pair both runs
decided differently; a pair decided in one run only (a limit met in the
other) is counted apart, since limits depend on the load. CPU ratios
(after / before) are taken over the pairs both runs decided, per engine, as
a geometric mean; pairs below ``--floor`` CPU seconds in either run are left
out (timer and start-up noise dominates there) and counted. Prints a
markdown report; exit status 1 when a verdict disagrees.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import Optional

import click

DECIDED = ("deployable", "not-deployable")


def read_jobs(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(path, newline="") as f:
        return {(row["instance"], row["engine"]): row for row in csv.DictReader(f)}


def _cpu(row: dict[str, str]) -> Optional[float]:
    try:
        return float(row["cpu_s"])
    except (KeyError, TypeError, ValueError):
        return None


def _load(jobs: dict[tuple[str, str], dict[str, str]]) -> str:
    values = [float(r[k]) for r in jobs.values() for k in ("load_start", "load_end") if r.get(k)]
    return f"{min(values):.1f}-{max(values):.1f}" if values else "n/a"


def compare(before: dict, after: dict, floor: float) -> tuple[str, int]:
    common = sorted(set(before) & set(after))
    disagree, one_sided, same = [], [], 0
    ratios: dict[str, list[float]] = {}
    small: dict[str, int] = {}
    for key in common:
        vb, va = before[key]["verdict"], after[key]["verdict"]
        if vb in DECIDED and va in DECIDED:
            if vb != va:
                disagree.append((key, vb, va))
                continue
            same += 1
            cb, ca = _cpu(before[key]), _cpu(after[key])
            if cb is None or ca is None or cb < floor or ca < floor:
                small[key[1]] = small.get(key[1], 0) + 1
            else:
                ratios.setdefault(key[1], []).append(ca / cb)
        elif (vb in DECIDED) != (va in DECIDED):
            one_sided.append((key, vb, va))
    lines = [f"jobs: {len(before)} before, {len(after)} after, {len(common)} in both; "
             f"load (1-min average at the jobs' start and end) before {_load(before)}, after {_load(after)}",
             "",
             f"- decided by both, same verdict: {same}",
             f"- decided by both, different verdict: **{len(disagree)}**",
             f"- decided in one run only (a limit met in the other): {len(one_sided)}"]
    lines += [f"  - {inst} {eng}: before {vb}, after {va}" for (inst, eng), vb, va in disagree + one_sided]
    lines += ["", f"CPU after / before over the jobs both decided, each run at least {floor:g} CPU s:", "",
              "| engine | jobs | geometric mean | min | max | below the floor |", "|---|---:|---:|---:|---:|---:|"]
    everything: list[float] = []
    for engine in sorted(set(ratios) | set(small)):
        rs = ratios.get(engine, [])
        everything += rs
        if rs:
            gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
            lines.append(f"| {engine} | {len(rs)} | {gm:.2f} | {min(rs):.2f} | {max(rs):.2f} | {small.get(engine, 0)} |")
        else:
            lines.append(f"| {engine} | 0 | - | - | - | {small.get(engine, 0)} |")
    if everything:
        gm = math.exp(sum(math.log(r) for r in everything) / len(everything))
        lines.append(f"| all | {len(everything)} | {gm:.2f} | {min(everything):.2f} | {max(everything):.2f} "
                     f"| {sum(small.values())} |")
    return "\n".join(lines) + "\n", len(disagree)


@click.command()
@click.argument("before", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("after", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--floor", type=click.FloatRange(min=0), default=0.1, show_default=True,
              help="Leave out of the ratios jobs under this many CPU seconds in either run.")
def main(before: Path, after: Path, floor: float) -> None:
    text, disagreements = compare(read_jobs(before), read_jobs(after), floor)
    click.echo(text, nl=False)
    sys.exit(1 if disagreements else 0)


if __name__ == "__main__":
    main(prog_name="python -m benchmarks.compare_runs")
