"""``auto`` against the per-instance best single engine, from one benchmark run.

Issue 15 asks that the portfolio decide every instance any single engine
(ours or ABC's) decides within the limit, within about 2x of the best one.
This section of ``summary.md`` and the README measures exactly that: for
every instance some engine decided, the fastest single engine and its time,
``auto``'s time, and their ratio. Times under ``FLOOR_S`` count as
``FLOOR_S`` on both sides: below it the ratio measures process start-up
noise (a fork, a thread starting), not the schedule.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from symreach.bench import tables as bench_tables
from symreach.bench.runner import JobResult

AUTO = "auto"
FLOOR_S = 0.05
CPU_SLOW_S = 0.2  # issue 31 item 5: <= 1.0x the best where the best needs more CPU than this


def _geo(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def best_single(rows: Sequence[JobResult], metric: str = "time_s") -> Optional[JobResult]:
    """The fastest decided job of a single engine (not ``auto``) on one instance, by
    ``metric`` (``time_s``: wall; ``cpu_s``: CPU of the job's processes)."""
    solved = [r for r in rows if r.engine != AUTO and r.solved and getattr(r, metric) is not None]
    return min(solved, key=lambda r: getattr(r, metric)) if solved else None


def auto_ratio(auto: Optional[JobResult], best: Optional[JobResult],
               metric: str = "time_s") -> Optional[float]:
    """auto's time over the best single engine's, both floored; None unless both decided."""
    if auto is None or best is None or not auto.solved or getattr(auto, metric) is None:
        return None
    return max(getattr(auto, metric), FLOOR_S) / max(getattr(best, metric), FLOOR_S)


def cpu_lines(pairs: Sequence[tuple[JobResult, JobResult]]) -> list[str]:
    """The issue's criteria in CPU seconds over (auto, best by CPU) pairs both decided."""
    ratios = [auto_ratio(a, b, "cpu_s") for a, b in pairs]
    ratios = [x for x in ratios if x is not None]
    if not ratios:
        return []
    slow = [(a, b) for a, b in pairs if (b.cpu_s or 0) > CPU_SLOW_S]
    within = sum(auto_ratio(a, b, "cpu_s") <= 1.0 for a, b in slow)
    return [f"- CPU seconds (auto: all its processes; best: the single engine with the least "
            f"CPU): geometric mean {_geo(ratios):.2f}, max {max(ratios):.2f}; auto more than 2x "
            f"the best on {sum(x > 2.0 for x in ratios)} of {len(ratios)}; where the best needs "
            f"more than {CPU_SLOW_S:g} s of CPU ({len(slow)} instances) auto is within 1.0x on "
            f"{within}"]


def auto_section(results: Sequence[JobResult]) -> Optional[str]:
    """The markdown section, or None when ``auto`` did not run."""
    by_instance: dict[str, list[JobResult]] = {}
    for r in results:
        by_instance.setdefault(r.instance, []).append(r)
    if not any(r.engine == AUTO for r in results):
        return None
    rows, ratios, per_family, lost, only_auto, unrun, cpu_pairs = [], [], {}, [], [], [], []
    for inst, rs in by_instance.items():
        auto = next((r for r in rs if r.engine == AUTO), None)
        best = best_single(rs)
        if auto is None or (best is None and not auto.solved):
            continue
        if best is None and all(r.status == "skipped" and r.error.startswith("time budget")
                                for r in rs if r.engine != AUTO):
            unrun.append(inst)  # no single engine ran: nothing to compare with
            continue
        ratio = auto_ratio(auto, best)
        if ratio is not None:
            ratios.append(ratio)
            per_family.setdefault(rs[0].family, []).append(ratio)
        elif best is not None:
            lost.append((inst, best, auto))
        else:
            only_auto.append(inst)
        answered = (auto.stats.get("portfolio") or {}).get("answered_by") or "-"
        best_cpu = best_single(rs, "cpu_s")
        cpu_ratio = auto_ratio(auto, best_cpu, "cpu_s")
        if cpu_ratio is not None:
            cpu_pairs.append((auto, best_cpu))
        rows.append([inst, f"{best.engine} {best.time_s:.3f}" if best else "-",
                     bench_tables.cell(auto), answered, f"{ratio:.2f}" if ratio is not None else "-",
                     f"{best_cpu.engine} {best_cpu.cpu_s:.3f}" if best_cpu else "-",
                     f"{auto.cpu_s:.3f}" if auto.solved and auto.cpu_s is not None else "-",
                     f"{cpu_ratio:.2f}" if cpu_ratio is not None else "-"])
    if not rows:
        return None
    lines = ["### auto vs the per-instance best single engine", "",
             f"For every instance some engine decided: the fastest single engine (ours or ABC's) "
             f"and `auto` from the same run, ratio auto / best with both times floored at "
             f"{FLOOR_S:g} s. `auto` jobs ran one at a time on the whole machine (its schedule "
             f"time-slices its engines on 2 cores); the single engines ran 2 at a time, one core each.",
             ""]
    if ratios:
        over = sum(x > 2.0 for x in ratios)
        lines.append(f"- both decided {len(ratios)}: geometric mean {_geo(ratios):.2f}, max "
                     f"{max(ratios):.2f}; auto more than 2x the best on {over}")
        for family, xs in per_family.items():
            lines.append(f"  - {family}: {len(xs)} instances, geometric mean {_geo(xs):.2f}, "
                         f"max {max(xs):.2f}")
    lines += cpu_lines(cpu_pairs)
    lines.append(f"- decided by a single engine and not by auto: {len(lost)}"
                 + "".join(f"\n  - {i}: {b.engine} {b.time_s:.2f} s, auto {bench_tables.cell(a)}"
                           for i, b, a in lost))
    lines.append(f"- decided by auto and by no single engine: {len(only_auto)}"
                 + (f" ({', '.join(only_auto)})" if only_auto else ""))
    if unrun:
        lines.append(f"- decided by auto where the run's time budget left no single engine run: "
                     f"{len(unrun)} (left out above)")
    lines.append("")
    lines.append(bench_tables.format_grid(["instance", "best single, s", "auto", "auto answered by",
                                           "auto / best", "best single, CPU s", "auto CPU s",
                                           "auto / best CPU"], rows, markdown=True))
    return "\n".join(lines)
