"""The default engine: fast paths first, then BDD, IC3 and BMC time-sliced on the cores.

Preprocessing (static pruning, may-fixpoint, Theorem 5, the fixpoint's
deployment order) decides many real queries in polynomial time. What is left
is PSPACE-hard and no engine dominates: BDDs win on pebbling and on nets with
a small reached set, IC3 on some nets, BMC with parallel steps
(``symreach.encodings.parallel_step``) finds shallow witnesses of large nets
that neither fixpoint engine reaches (benchmarks/results/shallow_nets.md).

Schedule (``symreach.solvers.schedule``). Preprocessing runs once, here;
the workers fork after it and reuse it (``Limits.prepared``). The
lazy-deletion search (``symreach.solvers.lazy_search``) then runs in this
process for 1 s (``_lazy_pilot``): it declines at once outside its
fragment and answers most encoded-net goals, shallow or deep, before
anything forks. On small systems IC3, the BDDs and BMC next run in this
process for 0.2, 0.15 and 0.1 s (``_pilot``). Then every
engine runs in its own process, for the rest of the limit. On large systems
BMC, the engine that wins there, holds one core throughout and the other
engines share the remaining ``jobs - 1`` cores; on small ones all share all
cores equally (the feature and the data: ``schedule``). Engines without a
core are
paused (``SIGSTOP`` to the worker's process group, so that ABC's child
process stops too) and the rotation moves every ``slice_s`` seconds. So an
answer the favourite finds alone after ``t`` seconds comes from ``auto``
after about ``t``, and one that another engine finds alone after ``t``
comes after about ``t * (N - 1) / (jobs - 1)`` (2 t for three engines on
two cores, 3 t with ABC's ``pdr`` as a fourth), plus a slice; with equal
shares after ``t * N / jobs``. The schedule
depends only on the instance and the clock, not on load. An engine that
gives up (``unknown`` before the limit, or an error) leaves the rotation
and the others share its core.

Slice length. 0.1 s: with 1 s slices an engine that needs 1.01 s of CPU
waits out a whole paused slice (Angiogenesis KdStarG: IC3 alone 1.0 s,
``auto`` 2.9 s with 1 s slices); two signals per slice cost microseconds.

Why not the alternatives. Letting the OS share the processes on two cores
is fair but not deterministic and gives no engine a whole core. Equal
round robin (the former schedule) gives BMC 2/3 of a core with three
engines and lost the deepest shallow witnesses to the race (15 of 71 goals
in the first shallow_nets.md). Running engines one after another on a split
limit loses any answer a single engine finds after its share of the limit.

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
from symreach.solvers.schedule import (
    ABC_ENGINE,
    LAZY_ENGINE,
    OUR_ENGINES,
    SECOND_ALONE_S,
    favourite,
    holders,
    is_small,
    race_engines,
    second_engine,
)

DEFAULT_RACE = OUR_ENGINES  # plus ABC's pdr when berkeley-abc is installed (``default_engines``)
DEFAULT_SLICE_S = 0.1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# in-process tries on small systems before forking, and their budgets (see ``_pilot``)
PILOTS = (("ic3", 0.2), ("bdd", 0.15), ("bmc", 0.1))
LAZY_PILOT_S = 1.0  # the lazy-deletion search's in-process try (see ``_lazy_pilot``)
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

    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # held by the parent while forking
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


def default_engines() -> tuple[str, ...]:
    """bdd, ic3, bmc, and ABC's pdr when the binary is installed."""
    from symreach.solvers.abc import abc_available

    return OUR_ENGINES + ((ABC_ENGINE,) if abc_available() else ())


def _signal(proc, sig: int) -> None:
    """``sig`` to the worker's process group (ABC runs as the worker's child), or to
    the worker alone when it could not get a group of its own."""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
    except ProcessLookupError:
        pass


class AutoEngine:
    name = "auto"

    def __init__(self, engines: Optional[Sequence[str]] = None, jobs: int = 2,
                 slice_s: float = DEFAULT_SLICE_S, pilot_s: Optional[float] = None) -> None:
        """``pilot_s``: every small-system pilot's budget instead of ``PILOTS``'."""
        engines = default_engines() if engines is None else engines
        self.engines = tuple(dict.fromkeys(engines))  # one worker per engine name
        self.jobs = max(1, jobs)
        self.slice_s = slice_s
        self.pilot_s = pilot_s
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
        from symreach.solvers.fast_paths import Prepared

        limits = replace(limits, prepared=Prepared(instance, query, pre))
        engines = self.available
        if len(engines) == 1:
            result = self._single(engines[0], instance, query, limits, start)
        else:
            may_pairs, nodes = len(pre.may), len(instance.nodes)
            first = favourite(may_pairs, engines, nodes) if self.jobs >= 2 else None
            result, engines, lazy_running = self._lazy_pilot(engines, first, instance, query, limits, start)
            second = second_engine(may_pairs, engines, nodes, lazy_running) if first else None
            if result is None and is_small(may_pairs) and self.slice_s > 0:
                result = self._pilot(engines, first, instance, query, limits, start)
                engines = race_engines(may_pairs, engines)
            if result is None:
                result = self._race(engines, first, instance, query, limits, start, second)
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

    def _pilot(self, engines: list[str], first: Optional[str], instance, query, limits,
               start) -> Optional[Result]:
        """IC3, BDD, then BMC, each for its ``PILOTS`` budget in this process, before
        anything forks (small systems only: there every engine would get only a
        share of the race, and the engines' set-up is cheap).

        Forking the workers and stopping them costs ~0.15-0.3 s (a fork of this
        process per engine, then reaping them), more than the whole run of the
        best engine on most small instances of the suite (results.csv: IC3 decides
        pyramids and trees up to h = 4 and the small hard clusters in 0.01-0.06 s,
        both verdicts; BMC the small paper clusters' and nets' witnesses in
        0.03-0.1 s; ResAllocation p_0_1: BMC 0.10 s, ``auto`` 0.36 s without a
        pilot). All three honour a 0.1 s deadline to within ~20 ms on such systems
        (pyramids h <= 8, ERK: 0.10-0.12 s), so the pilots delay the race by at
        most about 0.5 s. The budgets are a little over the times of the
        instances each engine wins (IC3 0.01-0.18 s, the BDDs 0.04-0.08 s, BMC
        0.03-0.11 s), with room for a loaded machine. An unknown is discarded and
        the engine starts again in the race (BMC does not:
        ``schedule.race_engines``)."""
        for name, seconds in PILOTS:
            if name in engines:
                budget = seconds if self.pilot_s is None else self.pilot_s
                result = self._in_process(name, budget, engines, first, instance, query, limits, start)
                if result.verdict is not Verdict.UNKNOWN:
                    return result
        return None

    def _lazy_pilot(self, engines: list[str], first: Optional[str], instance, query, limits,
                    start) -> tuple[Optional[Result], list[str], bool]:
        """The lazy-deletion search for ``LAZY_PILOT_S`` seconds in this process.

        It declines at once outside its fragment, finds the witnesses of small
        encoded nets in milliseconds (ERK Raf1Star_RKIP: 0.01 s, where forking
        the race cost ``auto`` 0.4 s) and the deep ones of the shared nets in
        seconds, where BMC needs hundreds of steps. Returns its answer, or the
        engines for the race -- without it when it declined or exhausted its
        space (running it again would only repeat that) -- and whether it stopped
        only at the pilot's limit (it then takes half of the rotation beside the
        favourite: ``schedule.second_engine``)."""
        if LAZY_ENGINE not in engines or self.slice_s <= 0:
            return None, engines, False
        from symreach.solvers.lazy_search import LIMIT

        result = self._in_process(LAZY_ENGINE, LAZY_PILOT_S, engines, first, instance, query, limits, start)
        if result.verdict is not Verdict.UNKNOWN:
            return result, engines, False
        if result.stats.get("outcome") != LIMIT:
            return None, [e for e in engines if e != LAZY_ENGINE], False
        return None, engines, True

    def _in_process(self, name: str, seconds: float, engines: list[str], first: Optional[str], instance,
                    query, limits, start) -> Result:
        """``name`` for at most ``seconds`` (and what is left of the limit) in this process,
        before anything forks; a decided answer is labelled and carries the schedule."""
        from symreach.solvers.registry import make_engine

        left = _remaining(limits, start).timeout_s
        budget = seconds if left is None else min(seconds, left)
        result = make_engine(name).check(instance, query, replace(limits, timeout_s=budget))
        if result.verdict is not Verdict.UNKNOWN:
            result.engine = f"auto/{result.engine}"
            result.stats["portfolio"] = {"engines": list(engines), "jobs": self.jobs, "slice_s": self.slice_s,
                                         "favourite": first, "answered_by": name, "pilot_s": budget}
        return result

    def _race(self, engines: list[str], first: Optional[str], instance, query, limits, start,
              second: Optional[str] = None) -> Result:
        ctx = mp.get_context("fork")
        remaining = _remaining(limits, start)
        schedule = {"engines": list(engines), "jobs": self.jobs, "slice_s": self.slice_s,
                    "favourite": first, "second": second}
        with tempfile.TemporaryDirectory(prefix="symreach-auto-") as tmp:
            outs = {name: str(Path(tmp) / f"{name}.pickle") for name in engines}
            order = sorted(engines, key=lambda name: name != first)  # the favourite starts first
            # a stop signal in the middle of a fork would run the command's handler inside
            # an at-fork hook ("Exception ignored"): hold such signals until every worker
            # exists (the workers unblock them first thing, in ``_detach``)
            held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
            try:
                workers = {name: spawn_worker(ctx, name, instance, query, remaining, outs[name])
                           for name in order}
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            procs = {name: proc for name, (proc, _) in workers.items()}
            detached = {name: ev for name, (_, ev) in workers.items()}
            unknown: list[Result] = []
            errors: list[str] = []
            try:
                return self._supervise(procs, detached, outs, limits, start, schedule, unknown, errors,
                                       first, second)
            finally:
                _stop_all(procs)

    def _supervise(self, procs, detached, outs, limits, start, schedule, unknown, errors,
                   first: Optional[str], second: Optional[str] = None) -> Result:
        rotation = list(procs)
        paused: set[str] = set()
        alone_s = SECOND_ALONE_S.get(second, 0.0)  # 0 when there is no second
        favoured = (second, int(alone_s / self.slice_s) if self.slice_s > 0 else 0)
        slice_index, slice_end = 0, time.perf_counter() + self.slice_s
        self._apply(procs, detached, holders(rotation, first, self.jobs, slice_index, *favoured), paused)
        while rotation:
            now = time.perf_counter()
            if limits.timeout_s is not None and now - start > limits.timeout_s + _GRACE_S:
                break
            if now >= slice_end:
                slice_index += 1
                slice_end = now + self.slice_s
                self._apply(procs, detached,
                            holders(rotation, first, self.jobs, slice_index, *favoured), paused)
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
                self._apply(procs, detached,
                            holders(rotation, first, self.jobs, slice_index, *favoured), paused)
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
                _signal(proc, signal.SIGCONT)
                paused.discard(name)
            elif name not in running and name not in paused and detached[name].is_set():
                _signal(proc, signal.SIGSTOP)
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
            _signal(proc, signal.SIGCONT)
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
