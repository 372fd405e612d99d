"""The default engine: fast paths first, then BDD and IC3 racing in processes.

Preprocessing (static pruning, may-fixpoint, Theorem 5, the fixpoint's
deployment order) decides many real queries in polynomial time. What is left
is PSPACE-hard; no engine dominates there (BDDs win on pebbling-like
instances, IC3 on some nets), so with two cores both run and the first
conclusive answer wins; the other process is stopped.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from dataclasses import replace
from typing import Optional, Sequence

from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.solvers.base import Limits

DEFAULT_RACE = ("bdd", "ic3")
_POLL_S = 0.05


def _run_engine(name: str, instance: Instance, query: Query, limits: Limits, out) -> None:
    """Worker body: run one engine; ship the result with a text certificate."""
    from symreach.solvers.processes import die_with_parent
    from symreach.solvers.registry import make_engine

    die_with_parent()  # never outlive the command, whatever kills it
    try:
        result = make_engine(name).check(instance, query, limits)
        cert = result.certificate
        if cert is not None and not isinstance(cert, (str, dict, list)):
            result.certificate = cert.dumps() if hasattr(cert, "dumps") else str(cert)
        out.put((name, result, None))
    except Exception as exc:  # reported to the parent, which decides
        out.put((name, None, f"{type(exc).__name__}: {exc}"))


class AutoEngine:
    name = "auto"

    def __init__(self, engines: Sequence[str] = DEFAULT_RACE, jobs: int = 2) -> None:
        self.engines = tuple(engines)
        self.jobs = max(1, jobs)

    def check(self, instance: Instance, query: Optional[Query] = None,
              limits: Limits = Limits()) -> Result:
        from symreach.solvers.fast_paths import begin_check

        begun = begin_check(instance, query, limits, "auto/preprocess", fast_paths=True)
        if begun.decided is not None:
            return begun.decided
        start, query, pre = begun.start, begun.query, begun.pre
        engines = self._available()
        if self.jobs == 1 or len(engines) == 1:
            result = self._sequential(engines, instance, query, limits, start)
        else:
            result = self._race(engines[: self.jobs], instance, query, limits, start)
        result.stats.setdefault("preprocess", pre.stats)
        result.time_s = time.perf_counter() - start
        return result

    def _available(self) -> list[str]:
        from symreach.solvers.registry import available_engines

        names = [e for e in self.engines if e in available_engines()]
        return names or ["explicit"]

    def _sequential(self, engines, instance, query, limits, start) -> Result:
        from symreach.solvers.registry import make_engine

        result = None
        for name in engines:
            remaining = _remaining(limits, start)
            result = make_engine(name).check(instance, query, remaining)
            if result.verdict is not Verdict.UNKNOWN:
                break
        result.engine = f"auto/{result.engine}"
        return result

    def _race(self, engines, instance, query, limits, start) -> Result:
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        procs = {name: ctx.Process(target=_run_engine, args=(name, instance, query, limits, out), daemon=True)
                 for name in engines}
        for proc in procs.values():
            proc.start()
        unknown: list[Result] = []
        errors: list[str] = []
        pending = set(engines)
        try:
            while pending:
                if limits.timeout_s is not None and time.perf_counter() - start > limits.timeout_s + 5:
                    break
                try:
                    name, result, error = out.get(timeout=_POLL_S)
                except queue.Empty:
                    for name in list(pending):
                        if not procs[name].is_alive() and procs[name].exitcode not in (0, None):
                            errors.append(f"{name}: process died with exit code {procs[name].exitcode}")
                            pending.discard(name)
                    continue
                pending.discard(name)
                if error is not None:
                    errors.append(f"{name}: {error}")
                elif result.verdict is not Verdict.UNKNOWN:
                    result.engine = f"auto/{result.engine}"
                    result.stats["raced"] = list(engines)
                    return result
                else:
                    unknown.append(result)
        finally:
            for proc in procs.values():
                if proc.is_alive():
                    proc.terminate()
            for proc in procs.values():
                proc.join(timeout=2)
        reasons = [f"{r.engine}: {r.reason}" for r in unknown] + errors
        return Result(Verdict.UNKNOWN, "auto", reason="; ".join(reasons) or "no engine answered",
                      stats={"raced": list(engines)})


def _remaining(limits: Limits, start: float) -> Limits:
    if limits.timeout_s is None:
        return limits
    left = max(0.0, limits.timeout_s - (time.perf_counter() - start))
    return replace(limits, timeout_s=left)
