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
anything forks. On small systems two engines chosen by the system's
shape (IC3 and the BDDs on one node, IC3 and BMC on several:
``schedule.pilot_engines``) next run side by side in threads of this
process, taking turns on one core (``_pilot``, ``turns``); if they have not
answered within ``EARLY_AFTER_S``, the *early worker* (ABC's pdr, or the
lazy search when its pilot ran out of time: ``schedule.early_engine``)
takes the second core in a process of its own. Then every engine runs in
its own process, for the rest of the limit. On large systems a favourite
(BMC on one node, IC3 on several) holds one core throughout and the other
engines share the remaining ``jobs - 1`` cores; on small ones of one node
the BDDs do, on small ones of several nodes all share all cores equally (the
feature and the data: ``schedule``). Engines without a
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
import queue
import signal
import sys
import tempfile
import threading
import time
from dataclasses import replace
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable, Optional, Sequence

from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.solvers.base import Limits
from symreach.solvers.schedule import (
    ABC_ENGINE,
    LAZY_ENGINE,
    OUR_ENGINES,
    SECOND_ALONE_S,
    early_engine,
    favourite,
    holders,
    is_small,
    pilot_engines,
    race_engines,
    second_engine,
)
from symreach.solvers.turns import Turns

DEFAULT_RACE = OUR_ENGINES  # plus ABC's pdr when berkeley-abc is installed (``default_engines``)
DEFAULT_SLICE_S = 0.1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# how long the interleaved pilot of a small system runs (see ``_pilot``): alone,
# and while an early worker holds the second core
PILOT_S = 0.5
PILOT_BESIDE_S = 10.0
# the early worker starts once the pilot has run this long without an answer:
# forking sooner slows the pilot on the instances it answers at once (pyramid
# h = 5, k = 6: 0.33 s instead of 0.11 s, the child's copy-on-write faults and
# its set-up competing with the pilot)
EARLY_AFTER_S = 0.25
PILOT_SLICE_S = 0.01
POLL_S = 0.02  # how often the pilot looks at the early worker  # the pilots' turns (``turns.Turns``): a few IC3 queries or BDD images
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
        """``pilot_s``: the interleaved pilot's budget instead of ``PILOT_S`` / ``PILOT_BESIDE_S``."""
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
            result = self._schedule(engines, len(pre.may), len(instance.nodes), instance, query, limits, start)
        result.stats.setdefault("preprocess", pre.stats)
        result.time_s = time.perf_counter() - start
        return result

    def _schedule(self, engines: list[str], may_pairs: int, nodes: int, instance, query, limits,
                  start) -> Result:
        """The lazy pilot; on small systems the interleaved pilot, with the early
        worker on the second core; then the race (module docstring)."""
        first = favourite(may_pairs, engines, nodes) if self.jobs >= 2 else None
        result, engines, lazy_running = self._lazy_pilot(engines, first, instance, query, limits, start)
        if result is not None:
            return result
        second = second_engine(may_pairs, engines, nodes, lazy_running) if first else None
        small = is_small(may_pairs) and self.slice_s > 0
        with tempfile.TemporaryDirectory(prefix="symreach-auto-") as tmp:
            outs = {name: str(Path(tmp) / f"{name}.pickle") for name in engines}
            started: dict = {}
            notes: dict = {}  # how the pilot ended, for the race's schedule record
            try:
                if small:
                    early = early_engine(engines, lazy_running) if self.jobs >= 2 else None

                    def start_early() -> None:
                        started.update(self._spawn([early], instance, query, _remaining(limits, start), outs))

                    def early_answer() -> tuple[bool, Optional[Result]]:
                        return self._early_answer(started, outs, engines, first)

                    seconds = self.pilot_s if self.pilot_s is not None else (
                        PILOT_BESIDE_S if early else PILOT_S)
                    result = self._pilot(pilot_engines(nodes, engines), seconds, engines, first,
                                         instance, query, limits, start,
                                         (start_early, early_answer) if early else None, notes)
                    if result is not None:
                        return result
                    engines = race_engines(may_pairs, engines)
                return self._race(engines, first, instance, query, limits, start, second, outs, started,
                                  notes)
            finally:
                _stop_all({name: proc for name, (proc, _) in started.items()})

    def _available(self) -> list[str]:
        from symreach.solvers.registry import available_engines

        names = [e for e in self.engines if e in available_engines()]
        return names or ["explicit"]

    def _single(self, name, instance, query, limits, start) -> Result:
        from symreach.solvers.registry import make_engine

        result = make_engine(name).check(instance, query, _remaining(limits, start))
        result.engine = f"auto/{result.engine}"
        return result

    def _pilot(self, names: list[str], seconds: float, engines: list[str], first: Optional[str],
               instance, query, limits, start,
               early: Optional[tuple[Callable[[], None],
                                     Callable[[], tuple[bool, Optional[Result]]]]] = None,
               notes: Optional[dict] = None) -> Optional[Result]:
        """``names`` side by side in threads of this process for ``seconds`` (or what
        is left of the limit), before the race forks; the first decided answer, or None.

        Small systems only. Forking the workers and stopping them costs ~0.15-0.3 s,
        more than the whole run of the best engine on most small instances of the
        suite (results.csv: IC3 decides pyramids and trees up to h = 4 in 0.01-0.06 s,
        the BDDs the not-deployable pyramids up to h = 8 in 0.06-0.5 s, BMC the
        small paper clusters' witnesses in 0.09-0.14 s). Which engine wins is not
        known in advance (``schedule.pilot_engines``): run one after the other, the
        first pilot's budget is lost whenever the second wins (pyramid h = 7, k = 8:
        the BDDs 0.16 s, ``auto`` 0.86 s with IC3 piloting first for 0.2 s). Side
        by side, taking turns of ``PILOT_SLICE_S`` on this process's core
        (``turns.Turns``: CUDD and the SAT solvers hold the interpreter lock, so one
        engine runs at a time anyway), each keeps its progress and the winner
        answers after about twice its own time. Once one answers, the others stop
        at their next deadline check (``base.past``).

        ``early``: (start, answer) of the early worker. ``start`` forks it once the
        pilot has run for ``EARLY_AFTER_S`` without an answer, with every pilot
        parked at a check (``Turns.hold``); ``answer`` is polled every
        ``POLL_S``: the worker's decided answer ends the pilot, and so does its
        giving up (the race then puts both cores to work; ``notes`` records it).

        While the early worker holds the second core the pilot runs longer
        (``PILOT_BESIDE_S``): the race would restart the same engines from scratch
        with 2/3 of a core each, where in the pilot each keeps its progress at half
        a core (tree h = 6, k = 7, the BDDs alone 2.7 s: ``auto`` 7.9 s with a 4 s
        pilot followed by the race, load 2-3). An unknown is discarded and the
        engine starts again in the race; an error is recorded and the race
        reports it if that engine fails there too."""
        from symreach.solvers.registry import make_engine

        left = _remaining(limits, start).timeout_s
        budget = seconds if left is None else min(seconds, left)
        if not names or budget <= 0:
            return None
        pilot_limits = replace(limits, timeout_s=budget)
        turns = Turns(len(names), PILOT_SLICE_S)
        done: "queue.SimpleQueue[tuple[str, Optional[Result], Optional[str]]]" = queue.SimpleQueue()

        def run(name: str) -> None:
            with turns.taking_part():
                try:
                    done.put((name, make_engine(name).check(instance, query, pilot_limits), None))
                except Exception as exc:  # noqa: BLE001 - recorded below, and the race runs it again
                    done.put((name, None, f"{type(exc).__name__}: {exc}"))

        threads = [threading.Thread(target=run, args=(name,), name=f"auto-pilot-{name}", daemon=True)
                   for name in names]
        for thread in threads:
            thread.start()
        answer, errors = None, []
        early_at = time.perf_counter() + EARLY_AFTER_S
        start_early, early_answer = early if early is not None else (None, None)
        pending = len(threads)
        try:
            while pending and answer is None:
                try:
                    name, result, error = done.get(timeout=None if early is None else POLL_S)
                except queue.Empty:
                    if start_early is not None and time.perf_counter() >= early_at:
                        turns.hold()  # every pilot parked at a check: nothing half-done is forked
                        try:
                            start_early()
                        finally:
                            turns.release()
                        start_early = None
                    elif start_early is None and early_answer is not None:
                        finished, answer = early_answer()
                        if finished and answer is None:
                            if notes is not None:
                                notes["pilot_end"] = "early worker gave up"
                            break  # the second core is free: the race uses both
                    continue
                pending -= 1
                if error is not None:
                    errors.append(f"{name}: {error}")
                elif result is not None and result.verdict is not Verdict.UNKNOWN:
                    answer = self._label(result, name, engines, first, pilot_s=budget, pilots=names)
        finally:
            turns.cancel()
            for thread in threads:
                thread.join()
        if answer is not None and errors:
            answer.stats["portfolio"]["pilot_errors"] = errors
        return answer

    def _early_answer(self, started: dict, outs: dict[str, str], engines: list[str],
                      first: Optional[str]) -> tuple[bool, Optional[Result]]:
        """Whether the early worker has finished, and its decided answer if it has
        one (an unknown or an error stays in its file for the race to report)."""
        for name, (proc, _) in started.items():
            if proc.is_alive():
                return False, None
            result, _error = _read(outs[name], proc.exitcode)
            if result is not None and result.verdict is not Verdict.UNKNOWN:
                return True, self._label(result, name, engines, first, early=[name])
        return True, None

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
            self._label(result, name, engines, first, pilot_s=budget)
        return result

    def _label(self, result: Result, name: str, engines: list[str], first: Optional[str],
               **schedule) -> Result:
        """Name ``auto`` in a pilot's decided answer and record the schedule."""
        result.engine = f"auto/{result.engine}"
        result.stats["portfolio"] = {"engines": list(engines), "jobs": self.jobs, "slice_s": self.slice_s,
                                     "favourite": first, "answered_by": name, **schedule}
        return result

    def _spawn(self, names: list[str], instance, query, limits: Limits, outs: dict[str, str]) -> dict:
        """Fork a worker per name: ``{name: (process, detached event)}``."""
        ctx = mp.get_context("fork")
        # a stop signal in the middle of a fork would run the command's handler inside
        # an at-fork hook ("Exception ignored"): hold such signals until every worker
        # exists (the workers unblock them first thing, in ``_detach``)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            return {name: spawn_worker(ctx, name, instance, query, limits, outs[name]) for name in names}
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def _race(self, engines: list[str], first: Optional[str], instance, query, limits, start,
              second: Optional[str], outs: dict[str, str], started: dict,
              notes: Optional[dict] = None) -> Result:
        """Every engine in its own process, scheduled by ``_supervise``; ``started``:
        the workers already running (the early worker of a small system), adopted."""
        schedule = {"engines": list(engines), "jobs": self.jobs, "slice_s": self.slice_s,
                    "favourite": first, "second": second, "early": list(started) or None, **(notes or {})}
        order = sorted((e for e in engines if e not in started), key=lambda name: name != first)
        workers = {name: w for name, w in started.items() if name in engines}  # adopted
        workers.update(self._spawn(order, instance, query, _remaining(limits, start), outs))
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
