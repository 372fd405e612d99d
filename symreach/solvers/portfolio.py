"""The default engine: fast paths first, then BDD, IC3 and BMC time-sliced on the cores.

Preprocessing (static pruning, may-fixpoint, Theorem 5, the fixpoint's
deployment order) decides many real queries in polynomial time. What is left
is PSPACE-hard and no engine dominates: BDDs win on pebbling and on nets with
a small reached set, IC3 on some nets, BMC with parallel steps
(``symreach.encodings.parallel_step``) finds shallow witnesses of large nets
that neither fixpoint engine reaches (benchmarks/results/shallow_nets.md).

Schedule. Every engine runs in its own process from the start, for the whole
limit, and at most ``jobs`` of them hold a core at any time: the others are
paused (``SIGSTOP``) and the schedule rotates every ``slice_s`` seconds,
round robin (slice ``i`` runs engines ``i*jobs .. i*jobs+jobs-1`` modulo
their number). So each of ``N`` engines gets ``jobs/N`` of a core's time
(2/3 for three engines on two cores) in every window of ``N`` slices, and an
answer that engine ``E`` alone finds after ``t`` seconds of CPU comes from
``auto`` after about ``t * N / jobs`` seconds (1.5 t for three engines on
two cores) plus a slice, and the schedule is deterministic (it depends only
on the clock, not on load). An engine that gives up (``unknown`` before the
limit, or an error) leaves the rotation and the others share its core.

Slice length. 0.1 s: with 1 s slices an engine that needs 1.01 s of CPU
waits out a whole paused slice (Angiogenesis KdStarG: IC3 alone 1.0 s,
``auto`` 2.9 s with 1 s slices); two signals per slice cost microseconds.

Why not the alternatives. Letting the OS share three processes on two cores
is as fair but not deterministic. Racing two engines for the whole limit
(the former ``auto``: BDD and IC3) leaves out BMC, which alone finds the
shallow witnesses of the large nets (benchmarks/results/shallow_nets.md).
Running engines one after another on a split limit loses any answer a
single engine finds after its share of the limit. Remaining cost: a fixed
~0.2-0.4 s (fork, a second preprocessing in the worker, pickling), which
dominates only on instances every engine decides in well under a second.

Results come back through a file each worker writes before it exits: the
parent reads it only after the process is gone, so a paused worker can never
leave a half-written message behind. The first conclusive answer wins, the
others are stopped; ``engine`` names the one that answered (``auto/bmc``)
and ``stats["portfolio"]`` records the schedule.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import sys
import tempfile
import time
from dataclasses import replace
from multiprocessing.connection import wait
from pathlib import Path
from typing import Optional, Sequence

from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.solvers.base import Limits

DEFAULT_RACE = ("bdd", "ic3", "bmc")
DEFAULT_SLICE_S = 0.1
_GRACE_S = 5.0  # how long past the limit the parent waits for workers to report


def _detach(parent: int) -> None:
    """Give the worker its own session, and make it die with its parent.

    Linux shares the CPU fairly between *sessions* (autogroup) before it
    shares it between a session's processes: workers left in ``auto``'s
    session would split one share between them, and on a loaded machine
    each engine of the portfolio would run several times slower than the
    same engine run alone (measured: BMC on Angiogenesis DAG 3.7 s alone,
    10 s as one of two workers with no pausing at all). In its own session
    each worker competes like a separate engine run. A new session also
    leaves the parent's process group: ``die_with_parent`` (PR_SET_PDEATHSIG)
    kills the worker when the parent dies (even by SIGKILL, even while
    paused), the worker's group is registered with the command line's
    supervisor (``symreach.solvers.processes``), and the parent stops it in
    every other case.
    """
    from symreach.solvers.processes import die_with_parent, register_group

    die_with_parent()  # never outlive the command, whatever kills it
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setsid()
    except OSError:
        return
    register_group(os.getpgid(0))  # the CLI supervisor kills this group with its own


def _run_engine(name: str, instance: Instance, query: Query, limits: Limits, out: str,
                parent: int, detached) -> None:
    """Worker body: run one engine; pickle ``(result, error)`` to ``out`` (certificate as text)."""
    from symreach.solvers.registry import make_engine

    _detach(parent)
    detached.set()  # from now on the parent may pause this worker
    try:
        result = make_engine(name).check(instance, query, limits)
        cert = result.certificate
        if cert is not None and not isinstance(cert, (str, dict, list)):
            result.certificate = cert.dumps() if hasattr(cert, "dumps") else str(cert)
        payload = (result, None)
    except Exception as exc:  # reported to the parent, which decides
        payload = (None, f"{type(exc).__name__}: {exc}")
    tmp = out + ".tmp"
    with open(tmp, "wb") as fh:
        pickle.dump(payload, fh)
    os.replace(tmp, out)


def spawn_worker(ctx, name: str, instance: Instance, query: Query, limits: Limits, out: str):
    """Start one engine's worker process (the only place workers are created).

    Returns the process and an event set once the worker is detached: a worker
    paused before that would survive a killed parent, stopped forever."""
    detached = ctx.Event()
    proc = ctx.Process(target=_run_engine,
                       args=(name, instance, query, limits, out, os.getpid(), detached), daemon=True)
    proc.start()
    return proc, detached


def round_robin(engines: Sequence[str], jobs: int, slice_index: int) -> set[str]:
    """The engines that hold a core during slice ``slice_index``."""
    n = len(engines)
    if n <= jobs:
        return set(engines)
    return {engines[(slice_index * jobs + j) % n] for j in range(jobs)}


class AutoEngine:
    name = "auto"

    def __init__(self, engines: Sequence[str] = DEFAULT_RACE, jobs: int = 2,
                 slice_s: float = DEFAULT_SLICE_S) -> None:
        self.engines = tuple(dict.fromkeys(engines))  # one worker per engine name
        self.jobs = max(1, jobs)
        self.slice_s = slice_s
        # import the engines' modules now (CUDD, python-sat): every worker inherits
        # them through fork instead of paying the import inside the time limit
        self.available = self._available()

    def check(self, instance: Instance, query: Optional[Query] = None,
              limits: Limits = Limits()) -> Result:
        from symreach.solvers.fast_paths import begin_check

        begun = begin_check(instance, query, limits, "auto/preprocess", fast_paths=True)
        if begun.decided is not None:
            return begun.decided
        start, query, pre = begun.start, begun.query, begun.pre
        engines = self.available
        if len(engines) == 1:
            result = self._single(engines[0], instance, query, limits, start)
        else:
            result = self._race(engines, instance, query, limits, start)
        result.stats.setdefault("preprocess", pre.stats)
        result.time_s = time.perf_counter() - start
        return result

    def _available(self) -> list[str]:
        from symreach.solvers.registry import available_engines

        names = [e for e in self.engines if e in available_engines()]
        return names or ["explicit"]

    def _single(self, name, instance, query, limits, start) -> Result:
        from symreach.solvers.registry import make_engine

        result = make_engine(name).check(instance, query, _remaining(limits, start))
        result.engine = f"auto/{result.engine}"
        return result

    def _race(self, engines: list[str], instance, query, limits, start) -> Result:
        ctx = mp.get_context("fork")
        remaining = _remaining(limits, start)
        schedule = {"engines": list(engines), "jobs": self.jobs, "slice_s": self.slice_s}
        with tempfile.TemporaryDirectory(prefix="symreach-auto-") as tmp:
            outs = {name: str(Path(tmp) / f"{name}.pickle") for name in engines}
            workers = {name: spawn_worker(ctx, name, instance, query, remaining, outs[name])
                       for name in engines}
            procs = {name: proc for name, (proc, _) in workers.items()}
            detached = {name: ev for name, (_, ev) in workers.items()}
            unknown: list[Result] = []
            errors: list[str] = []
            try:
                return self._supervise(procs, detached, outs, limits, start, schedule, unknown, errors)
            finally:
                _stop_all(procs)

    def _supervise(self, procs, detached, outs, limits, start, schedule, unknown, errors) -> Result:
        rotation = list(procs)
        paused: set[str] = set()
        slice_index, slice_end = 0, time.perf_counter() + self.slice_s
        self._apply(procs, detached, round_robin(rotation, self.jobs, slice_index), paused)
        while rotation:
            now = time.perf_counter()
            if limits.timeout_s is not None and now - start > limits.timeout_s + _GRACE_S:
                break
            if now >= slice_end:
                slice_index += 1
                slice_end = now + self.slice_s
                self._apply(procs, detached, round_robin(rotation, self.jobs, slice_index), paused)
            ready = wait([procs[n].sentinel for n in rotation], timeout=max(0.0, slice_end - now))
            for name in [n for n in rotation if procs[n].sentinel in ready]:
                procs[name].join()
                rotation.remove(name)
                result, error = _read(outs[name], procs[name].exitcode)
                if error is not None:
                    errors.append(f"{name}: {error}")
                elif result.verdict is not Verdict.UNKNOWN:
                    result.engine = f"auto/{result.engine}"
                    result.stats["portfolio"] = dict(schedule, answered_by=name, slices=slice_index + 1)
                    return result
                else:
                    unknown.append(result)
            if ready and rotation:  # a core came free: give it to the next engine now
                self._apply(procs, detached, round_robin(rotation, self.jobs, slice_index), paused)
        reasons = [f"{r.engine}: {r.reason}" for r in unknown] + errors
        return Result(Verdict.UNKNOWN, "auto", reason="; ".join(reasons) or "no engine answered",
                      stats={"portfolio": dict(schedule, answered_by=None, slices=slice_index + 1)})

    @staticmethod
    def _apply(procs, detached, running: set[str], paused: set[str]) -> None:
        """Pause every live worker outside ``running`` (once it is detached, else at
        a later slice) and resume those in it."""
        for name, proc in procs.items():
            if not proc.is_alive():
                continue
            if name in running and name in paused:
                os.kill(proc.pid, signal.SIGCONT)
                paused.discard(name)
            elif name not in running and name not in paused and detached[name].is_set():
                os.kill(proc.pid, signal.SIGSTOP)
                paused.add(name)


def _read(path: str, exitcode: Optional[int]) -> tuple[Optional[Result], Optional[str]]:
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        return None, f"process died with exit code {exitcode}"


def _stop_all(procs) -> None:
    """Terminate every worker still alive (a paused one is resumed so it can die)."""
    for proc in procs.values():
        if proc.is_alive():
            proc.terminate()
            try:
                os.kill(proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
    for proc in procs.values():
        proc.join(timeout=2)
        if proc.is_alive():
            proc.kill()
            proc.join()  # SIGKILL cannot be ignored, even by a paused process


def _remaining(limits: Limits, start: float) -> Limits:
    if limits.timeout_s is None:
        return limits
    left = max(0.0, limits.timeout_s - (time.perf_counter() - start))
    return replace(limits, timeout_s=left)
