"""What a comparison of engines concludes: winners, ratios, PAR-2, unique solves.

Pure functions of the job results (``symreach.bench.runner.JobResult``), shared
by ``symreach bench``, the benchmark harness and the plots, so that a table and
the plot beside it count the same things. A job's time is ``metric`` (``time_s``,
the wall time of ``engine.check``, or ``cpu_s``); times are floored at
``FLOOR_S`` so that ratios of instant answers stay finite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable, Optional, Sequence

from symreach.bench.runner import JobResult

FLOOR_S = 1e-3
METRICS = ("time_s", "cpu_s")


def engines_in(results: Iterable[JobResult]) -> list[str]:
    """The engines, in the order of their first result."""
    return list(dict.fromkeys(r.engine for r in results))


def instances_in(results: Iterable[JobResult]) -> list[str]:
    return list(dict.fromkeys(r.instance for r in results))


def seconds(r: JobResult, metric: str = "time_s") -> float:
    """The job's time in ``metric``, floored at ``FLOOR_S`` (0 when not measured)."""
    return max(getattr(r, metric) or 0.0, FLOOR_S)


def limit_of(r: JobResult, metric: str = "time_s") -> float:
    """The limit the job ran under in ``metric`` (the wall limit when no CPU limit was set)."""
    if metric == "cpu_s" and r.cpu_limit_s:
        return r.cpu_limit_s
    return r.limit_s or r.cpu_limit_s or 0.0


def by_instance(results: Iterable[JobResult]) -> dict[str, dict[str, JobResult]]:
    out: dict[str, dict[str, JobResult]] = {}
    for r in results:
        out.setdefault(r.instance, {})[r.engine] = r
    return out


@dataclass(frozen=True)
class Winner:
    instance: str
    engine: Optional[str]  # None when no engine decided the instance
    best_s: Optional[float]


def winners(results: Sequence[JobResult], metric: str = "time_s") -> dict[str, Winner]:
    """Per instance, the engine that decided it fastest (first in engine order on ties)."""
    out = {}
    for inst, cells in by_instance(results).items():
        solved = [r for r in cells.values() if r.solved]
        best = min(solved, key=lambda r: seconds(r, metric)) if solved else None
        out[inst] = Winner(inst, best.engine if best else None, seconds(best, metric) if best else None)
    return out


def ratio_to_best(r: JobResult, win: Winner, metric: str = "time_s") -> Optional[float]:
    """The job's time over the instance's best, for a decided job."""
    if not r.solved or win.best_s is None:
        return None
    return seconds(r, metric) / win.best_s


def par2(results: Sequence[JobResult], engine: str, metric: str = "time_s") -> Optional[float]:
    """Mean penalised time of ``engine``: its time when decided, twice the limit otherwise."""
    scores = [seconds(r, metric) if r.solved else 2.0 * limit_of(r, metric)
              for r in results if r.engine == engine]
    return sum(scores) / len(scores) if scores else None


def unique_solves(results: Sequence[JobResult]) -> dict[str, list[str]]:
    """Per engine, the instances it alone decided."""
    out: dict[str, list[str]] = {e: [] for e in engines_in(results)}
    for inst, cells in by_instance(results).items():
        solved = [e for e, r in cells.items() if r.solved]
        if len(solved) == 1:
            out[solved[0]].append(inst)
    return out


@dataclass(frozen=True)
class PairStats:
    a: str
    b: str
    both: int
    a_only: int
    b_only: int
    neither: int
    a_faster: int
    geo_mean: Optional[float]  # of a/b over the instances both decided


def pair_stats(results: Sequence[JobResult], a: str, b: str, metric: str = "time_s") -> PairStats:
    """How ``a`` and ``b`` compare on the instances both ran."""
    both = a_only = b_only = neither = a_faster = 0
    logs = []
    for cells in by_instance(results).values():
        x, y = cells.get(a), cells.get(b)
        if x is None or y is None:
            continue
        if x.solved and y.solved:
            both += 1
            ratio = seconds(x, metric) / seconds(y, metric)
            a_faster += ratio < 1
            logs.append(math.log(ratio))
        elif x.solved:
            a_only += 1
        elif y.solved:
            b_only += 1
        else:
            neither += 1
    geo = math.exp(sum(logs) / len(logs)) if logs else None
    return PairStats(a, b, both, a_only, b_only, neither, a_faster, geo)


def all_pairs(results: Sequence[JobResult], metric: str = "time_s") -> list[PairStats]:
    return [pair_stats(results, a, b, metric) for a, b in combinations(engines_in(results), 2)]


def engine_summary_rows(results: Sequence[JobResult], metric: str = "time_s"
                        ) -> tuple[list[str], list[list[str]]]:
    """Per engine: decided / jobs, fastest on, alone on, PAR-2."""
    wins = winners(results, metric)
    unique = unique_solves(results)
    headers = ["engine", "solved", "fastest", "only solver", "PAR-2 s"]
    rows = []
    for engine in engines_in(results):
        rs = [r for r in results if r.engine == engine]
        score = par2(results, engine, metric)
        rows.append([engine, f"{sum(r.solved for r in rs)}/{len(rs)}",
                     str(sum(w.engine == engine for w in wins.values())), str(len(unique[engine])),
                     "-" if score is None else f"{score:.3g}"])
    return headers, rows


def pair_rows(results: Sequence[JobResult], metric: str = "time_s") -> tuple[list[str], list[list[str]]]:
    """Per engine pair: both decided, geometric mean of a/b, a faster, only a, only b, neither."""
    headers = ["a", "b", "both", "geo-mean a/b", "a faster", "only a", "only b", "neither"]
    rows = [[p.a, p.b, str(p.both), "-" if p.geo_mean is None else f"{p.geo_mean:.3g}",
             str(p.a_faster), str(p.a_only), str(p.b_only), str(p.neither)]
            for p in all_pairs(results, metric)]
    return headers, rows
