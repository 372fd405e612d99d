"""The default engine: fast paths first, then the engines side by side on the cores.

Preprocessing (static pruning, may-fixpoint, Theorem 5, the fixpoint's
deployment order) decides many real queries in polynomial time. What is left
is PSPACE-hard and no engine dominates: BDDs win on pebbling and on nets with
a small reached set, IC3 on some nets and clusters, BMC with parallel steps
(``symreach.encodings.parallel_step``) finds shallow witnesses of large nets
that neither fixpoint engine reaches (benchmarks/results/shallow_nets.md),
the lazy-deletion search (``symreach.solvers.lazy_search``) the deep ones.

Schedule (which engine, when, where: ``symreach.solvers.schedule``).
Preprocessing runs once, here; the workers fork after it and reuse it
(``RunContext.prepared``). Systems of at most ``TINY_PAIRS`` may-pairs are
first searched explicitly in this process (capped at ``TINY_STATES``): that
decides them before any worker forks (and, from the command line, before
any engine module is imported). The lazy search then runs alone in this process for
up to ``LAZY_ALONE_S``: it declines at once outside its fragment and answers
most encoded-net goals before anything forks. On large one-node systems,
while it still runs, solos follow (``schedule.after_lazy``). Then the race: the favourite
forks onto a core of its own for the whole run; the *resident* (the lazy
search if it still runs, which thus never restarts, else IC3 on small
systems) goes on in this process (``workers.ResidentWorker``); the other
engines fork at once on large systems and share the remaining ``jobs - 1``
cores with the resident in a rotation, where a *second* (the lazy search,
or ABC's pdr) holds a core alone for a while first; on small systems they
fork ``LATE_AFTER_S`` later, and from then on all share all cores equally
(unless the lazy search is the second). Workers without a core are paused: a process by
``SIGSTOP`` to its group (so that ABC's child process stops too), the
resident at its next deadline check (``workers.Gate``; a resident ABC's
program by ``SIGSTOP`` from the gate, ``solvers.child``). The rotation moves
every ``slice_s`` seconds. So an answer the favourite finds alone after
``t`` seconds comes from ``auto`` after about ``t``, and one that another
engine finds alone after ``t`` comes after about ``t * (N - 1) / (jobs -
1)`` plus a slice. The schedule depends only on the instance and the
clock, not on load. An engine that gives up (``unknown`` before the limit,
or an error) leaves the rotation and the others share its core.

Slice length (``DEFAULT_SLICE_S``): with long slices an engine that needs
just over one slice of CPU waits out a whole paused slice; two signals per
slice cost microseconds.

Why not the alternatives (each measured on a 2-core machine; the figures are
in ``benchmarks/results/auto_schedule.md``). Letting the OS share the
processes on two cores is fair but not deterministic and gives no engine a
whole core. Equal round robin gave BMC 2/3 of a core with three engines and
lost the deepest shallow witnesses to the race. Running engines one after
another on a split limit loses any answer a single engine finds after its
share of the limit. Two engines taking turns in threads of this process gave
each half a core where two cores were free, so the BDDs' not-deployable
pebblings came several times later than with the BDDs alone. Restarting the
lazy search in a worker after its time alone lost the deep goals it finds
alone just within the limit.

The first conclusive answer wins, the others are stopped; ``engine`` names
the one that answered (``auto/bmc``) and ``stats["portfolio"]`` records
the schedule.
"""

from __future__ import annotations

import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Union

from symreach.errors import LimitReached
from symreach.records import record
from symreach.semantics import unencoded_volume_checks
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.solvers.abc_binary import abc_available
from symreach.solvers.base import RunLike, as_context
from symreach.solvers.goal_plan import CAPACITY
from symreach.solvers.heap import CheckHeap, collector_off
from symreach.solvers.schedule import (
    ABC_ENGINE,
    LAZY_ENGINE,
    OUR_ENGINES,
    SECOND_ALONE_S,
    after_lazy,
    bmc_instead_of_lazy,
    favourite,
    holders,
    late_engines,
    lazy_alone_for,
    lazy_first,
    race_engines,
    resident_engine,
    second_engine,
    solo_engines,
    solo_options,
)

if TYPE_CHECKING:  # imported on use (pickle, multiprocessing): small checks end before any race
    from symreach.solvers.workers import ProcessWorker, ResidentWorker

DEFAULT_RACE = OUR_ENGINES  # plus ABC's pdr when berkeley-abc is installed (``default_engines``)
DEFAULT_SLICE_S = 0.1
# how long the lazy search runs alone before the race (``_lazy_alone``)
LAZY_ALONE_S = 1.5
# on small systems the engines beyond the favourite and the resident start this
# much later (``schedule.late_engines``): most small instances are decided by one
# of those two within it (results.csv), which a third engine's set-up would slow;
# the later, the longer ABC's pdr waits where it is the best (figures:
# benchmarks/results/design_measurements.md)
LATE_AFTER_S = 0.1
# systems this small are first searched explicitly, in this process (``AutoEngine._tiny``)
TINY_PAIRS = 12
TINY_STATES = 5000
# goal regression (``_plan``) is tried on systems up to this many (pod type, node) pairs,
# for at most PLAN_WORK / pairs steps: each of its steps copies the configuration (the
# hard clusters of 500 x 200, 100,000 pairs: a 19-step witness in 0.02-0.03 s of CPU)
PLAN_PAIRS = 200_000
PLAN_WORK = 20_000_000
# the engines that may run in ``auto``'s own process; ABC's pdr waits there for its program,
# which the resident's gate stops and kills (``solvers.child``): no fork before its answer
IN_PROCESS = frozenset(OUR_ENGINES + (ABC_ENGINE,))
RESIDENT_SWITCH_S = 0.0002  # the interpreter's switch interval during a race (``_schedule``)
_GRACE_S = 5.0  # how long past the limit the parent waits for workers to report

Worker = Union["ProcessWorker", "ResidentWorker"]


def default_engines() -> tuple[str, ...]:
    """bdd, ic3, bmc, lazy, and ABC's pdr when the binary is installed."""
    return OUR_ENGINES + ((ABC_ENGINE,) if abc_available() else ())


@record(frozen=False)
class _Race:
    """One run's race: its plan and what became of it."""

    engines: list[str]  # in rotation order, the favourite first
    first: Optional[str]
    second: Optional[str]
    resident: Optional[str]
    late: list[str]
    outs: dict[str, str]
    workers: dict[str, Worker] = field(default_factory=dict)
    unknown: list[Result] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    solos: list[tuple[str, float]] = field(default_factory=list)  # alone first (``_solos``)
    options: dict[str, dict] = field(default_factory=dict)  # of solo residents (``solo_options``)

    def record(self) -> dict:
        return {"engines": list(self.engines), "favourite": self.first, "second": self.second,
                "resident": self.resident, "late": self.late or None,
                "solos": [name for name, _ in self.solos] or None, "options": self.options or None}


class AutoEngine:
    name = "auto"
    volume_checks = True   # routes such instances to explicit (``check``)

    def __init__(self, engines: Optional[Sequence[str]] = None, jobs: int = 2,
                 slice_s: float = DEFAULT_SLICE_S, lazy_alone_s: float = LAZY_ALONE_S,
                 tiny_pairs: Optional[int] = None, preload: bool = True,
                 goal_plan: Optional[bool] = None) -> None:
        """``lazy_alone_s``: how long the lazy search runs alone before the race;
        ``tiny_pairs``: systems up to this many may-pairs are first searched
        explicitly (``_tiny``; default ``TINY_PAIRS`` with the default engines,
        0 when the caller names the engines: they race exactly those);
        ``goal_plan``: try goal regression's witness first (``_plan``; default: with the
        default engines only);
        ``preload``: import the engines' modules now (CUDD, python-sat), outside
        ``check``'s time, as every other engine is imported before its check;
        the command line passes False, and a race imports them before it forks."""
        if slice_s <= 0:
            raise ValueError("slice_s must be positive")
        self.tiny_pairs = (TINY_PAIRS if engines is None else 0) if tiny_pairs is None else tiny_pairs
        self.goal_plan = (engines is None) if goal_plan is None else goal_plan
        engines = default_engines() if engines is None else engines
        self.engines = tuple(dict.fromkeys(engines))  # one worker per engine name
        self.jobs = max(1, jobs)
        self.slice_s = slice_s
        self.lazy_alone_s = lazy_alone_s
        self.available = self._available()
        if preload:
            self.available = _import_engines(self.available)
            import symreach.solvers.workers  # noqa: F401 - auto's own threads, as an engine's modules

    def check(self, instance: Instance, query: Optional[Query] = None, run: RunLike = None) -> Result:
        ctx = as_context(run)
        if instance.bindings or instance.filter_errors:
            # Claim bindings are state only explicit keeps; the preprocessing reads unbound rows and
            # assumes guards that pods only make stricter (a cycle abort lifted by a full node is not).
            from symreach.solvers.explicit import ExplicitEngine

            return ExplicitEngine().check(instance, query, ctx)
        with CheckHeap() as heap:  # the collector off while preprocessing (``heap``)
            return self._check(instance, query, ctx, heap)

    def _check(self, instance: Instance, query: Optional[Query], ctx: RunContext,
               heap: CheckHeap) -> Result:
        from symreach.solvers.fast_paths import Prologue, begin_check

        try:
            begun = begin_check(instance, query, ctx, "auto/preprocess", fast_paths=True)
        except LimitReached as stop:  # the run ended during preprocessing
            return Result(Verdict.UNKNOWN, self.name, reason=stop.reason)
        if begun.decided is not None:
            return begun.decided
        start, query, pre = begun.start, begun.query, begun.pre
        run = ctx.with_(prepared=Prologue(instance, query, pre))
        engines = self.available
        if unencoded_volume_checks(instance) is not None:
            # Only explicit evaluates the presence-based attach count and disk conflicts: it
            # calls the semantics itself, so its answer is exact (its certificate re-checked).
            engines = ["explicit"]
        tiny = self._tiny(pre, instance, query, run)
        if tiny is None:
            tiny = self._plan(pre, instance, query, run)
        if isinstance(tiny, Result):
            tiny.stats.setdefault("preprocess", pre.stats)
            tiny.time_s = time.perf_counter() - start
            return tiny
        heap.settle()  # preprocessing's structures live on: out of the engines' collections
        if len(engines) == 1:
            result = self._single(engines[0], instance, query, run)
        else:
            result = self._schedule(engines, len(pre.may), len(instance.nodes), instance, query,
                                    run, planned=tiny, depth=(pre.stats.get("goal_round"),
                                                              pre.stats.get("may_rounds")))
        result.stats.setdefault("preprocess", pre.stats)
        result.time_s = time.perf_counter() - start
        return result

    def _available(self) -> list[str]:
        """The engines present here, found without importing them (start-up cost)."""
        from importlib.util import find_spec

        from symreach.solvers.registry import ENGINES

        names = [e for e in self.engines if e in ENGINES and find_spec(ENGINES[e][0]) is not None]
        return names or ["explicit"]

    def _tiny(self, pre, instance, query, run: RunContext) -> Optional[Result]:
        """A small system's answer by the explicit search in this process, or None.

        Up to ``tiny_pairs`` may-pairs a capped breadth-first search decides in
        milliseconds, before any engine module is imported or any worker forks
        (which cost more CPU than the search: CUDD, python-sat, numpy)."""
        if len(pre.may) > self.tiny_pairs:
            return None
        from symreach.solvers.registry import make_engine

        result = make_engine("explicit").check(instance, query, run.with_(max_states=TINY_STATES))
        if result.verdict is Verdict.UNKNOWN:
            return None
        result.fragment = pre.fragment
        return self._label(result, "explicit", {"engines": ["explicit"], "favourite": None,
                                                "resident": "explicit", "tiny": True})

    def _plan(self, pre, instance, query, run: RunContext) -> Union[Result, str, None]:
        """Goal regression's witness (``goal_plan``) as a decided result; else why it gave
        up (a feature of the schedule: ``schedule.solo_engines``), None when it was not
        tried (the named engines only, or a system too large)."""
        if not self.goal_plan or instance.num_pairs > PLAN_PAIRS:
            return None
        from symreach.solvers.goal_plan import MAX_STEPS, attempt

        tried = attempt(instance, query, run,
                        max_steps=min(MAX_STEPS, PLAN_WORK // max(1, instance.num_pairs)))
        if tried.trace is None:
            return tried.gave_up
        result = Result(Verdict.DEPLOYABLE, "goal-plan", fragment=pre.fragment, trace=tried.trace)
        return self._label(result, "goal-plan", {"engines": ["goal-plan"], "favourite": None,
                                                 "resident": "goal-plan"})

    def _single(self, name, instance, query, run: RunContext) -> Result:
        from symreach.solvers.registry import make_engine

        result = make_engine(name).check(instance, query, run)
        result.engine = f"auto/{result.engine}"
        return result

    def _schedule(self, engines: list[str], may_pairs: int, nodes: int, instance, query,
                  run: RunContext, planned: Optional[str] = None,
                  depth: tuple[Optional[int], Optional[int]] = (None, None)) -> Result:
        """The lazy search alone, then the race (module docstring); ``depth``: the goal's
        may-fixpoint round and the fixpoint's rounds (``schedule.after_lazy``)."""
        first = favourite(may_pairs, engines, nodes) if self.jobs >= 2 else None
        switch_s = sys.getswitchinterval()
        with tempfile.TemporaryDirectory(prefix="symreach-auto-") as tmp:
            workers: dict[str, Worker] = {}
            try:
                # the resident's thread holds the interpreter lock nearly always; each
                # time this thread needs it back (a worker answered, a slice ended) it
                # waits up to the switch interval (5 ms by default) several times per
                # answer, a large part of a small instance's run (design_measurements.md)
                sys.setswitchinterval(RESIDENT_SWITCH_S)
                gave_up: list[Result] = []
                alone_s = lazy_alone_for(self.lazy_alone_s, may_pairs, nodes, *depth)
                # goal regression found no room on a node: capacity binds, which the lazy
                # search declines (``lazy_moves.capacity_binds``) after starting (7 ms)
                # and deep goals of wide nets, where BMC alone follows at once (``lazy_first``)
                bmc_first = not lazy_first(may_pairs, nodes, *depth)
                lazy = [e for e in engines if e != LAZY_ENGINE] \
                    if planned == CAPACITY or bmc_first else engines
                answer, lazy_running = self._lazy_alone(lazy, first, instance, query, run,
                                                        workers, gave_up, alone_s)
                if answer is not None:
                    return answer
                # every worker inherits the modules instead of importing them in its time
                engines = [e for e in engines if e in _import_engines(engines)]
                if not lazy_running and not bmc_first:  # it stopped: running it again repeats that
                    engines = [e for e in engines if e != LAZY_ENGINE]
                engines = race_engines(may_pairs, engines, nodes)
                engines.sort(key=lambda name: name != first)
                resident = resident_engine(may_pairs, engines, first, lazy_running)
                if lazy_running:
                    solos = after_lazy(may_pairs, engines, nodes, *depth)
                elif bmc_first:
                    solos = bmc_instead_of_lazy(engines)
                else:
                    solos = [] if self.jobs < 2 else \
                        solo_engines(may_pairs, engines, nodes, instance.profile,
                                     regression_full=planned == CAPACITY)
                if solos and resident is None and solos[0][0] in IN_PROCESS:
                    resident = solos[0][0]  # it starts alone in this process and stays there
                race = _Race(engines, first, second_engine(may_pairs, engines, nodes, lazy_running)
                             if first else None, resident,
                             late_engines(may_pairs, engines, first, resident),
                             {name: str(Path(tmp) / f"{name}.pickle") for name in engines},
                             workers, unknown=gave_up, solos=solos,
                             options={} if lazy_running else
                             solo_options(may_pairs, nodes, regression_full=planned == CAPACITY))
                answer = self._solos(race, instance, query, run)
                return answer if answer is not None else self._race(race, instance, query, run)
            finally:
                for worker in workers.values():
                    worker.stop()
                sys.setswitchinterval(switch_s)

    def _lazy_alone(self, engines: list[str], first: Optional[str], instance, query, run: RunContext,
                    workers: dict[str, Worker], gave_up: list[Result],
                    seconds: float) -> tuple[Optional[Result], bool]:
        """The lazy search as the resident, alone for ``seconds``: its decided
        answer, or whether it still runs (it then stays in ``workers`` and goes on
        in the race). When it stops without an answer (it declined, exhausted its
        space without a certificate, or failed) it leaves the race: running it
        again would only repeat that."""
        if LAZY_ENGINE not in engines:
            return None, False
        from symreach.solvers.workers import ResidentWorker

        lazy = ResidentWorker(LAZY_ENGINE, instance, query, run)
        workers[LAZY_ENGINE] = lazy
        with collector_off():
            _alone(lazy, seconds, run)
        if lazy.alive():
            return None, True
        result, error = lazy.outcome()
        del workers[LAZY_ENGINE]
        lazy.stop()
        if result is not None and result.verdict is not Verdict.UNKNOWN:
            return self._label(result, LAZY_ENGINE, {"engines": list(engines), "favourite": first,
                                                     "resident": LAZY_ENGINE}), False
        if result is not None:
            gave_up.append(result)
        return None, False

    def _label(self, result: Result, name: str, schedule: dict, **more) -> Result:
        """Name ``auto`` in a decided answer and record the schedule."""
        result.engine = f"auto/{result.engine}"
        result.stats["portfolio"] = {**schedule, "jobs": self.jobs, "slice_s": self.slice_s,
                                     "answered_by": name, **more}
        return result

    def _solos(self, race: _Race, instance, query, run: RunContext) -> Optional[Result]:
        """The solo engines, each alone for its CPU seconds (``schedule.solo_engines``,
        ``schedule.after_lazy``), ours in this process (the resident; a later one replaces
        an earlier one, which restarts forked in the race; forked beside the lazy search,
        which never restarts), ABC's pdr too (``IN_PROCESS``). The first decided answer, or None: every solo
        engine stays in ``race.workers``, paused, and goes on in the race."""
        from symreach.solvers.workers import ResidentWorker

        for name, seconds in race.solos:
            if run.remaining() is not None and run.remaining() <= 0:
                return None
            if name in IN_PROCESS and name not in race.workers and race.resident != LAZY_ENGINE:
                # the previous solo resident is stopped (it had a short trial; it restarts
                # forked in the race): a fork of this process costs more than that trial
                if race.resident in race.workers and race.resident != name:
                    race.workers.pop(race.resident).stop()
                race.resident = name
                race.workers[name] = ResidentWorker(name, instance, query, run, race.options.get(name))
            elif name not in race.workers:
                self._fork([name], race, instance, query, run)  # parks the resident first
            worker = race.workers[name]
            worker.resume()
            with collector_off() if name == LAZY_ENGINE else nullcontext():
                _alone(worker, seconds, run)
            if not worker.alive():
                result, error = worker.outcome()
                del race.workers[name]
                if error is not None:
                    race.errors.append(f"{name}: {error}")
                elif result.verdict is not Verdict.UNKNOWN:
                    return self._label(result, name, race.record(), slices=0)
                else:
                    race.unknown.append(result)
                race.engines = [e for e in race.engines if e != name]
                race.late = [e for e in race.late if e != name]
            else:
                worker.pause()
        return None

    def _fork(self, names: list[str], race: _Race, instance, query, run: RunContext) -> None:
        """A worker process per name; the resident waits at a check meanwhile, so the
        children copy no thread in the middle of anything (the race's next share-out
        of the cores resumes it)."""
        if not names:
            return
        from symreach.solvers.workers import ResidentWorker, spawn

        resident = race.workers.get(race.resident) if race.resident else None
        if isinstance(resident, ResidentWorker) and resident.alive():
            resident.park()
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        for name in names:
            race.workers[name] = spawn(ctx, name, instance, query, run, race.outs[name])

    def _race(self, race: _Race, instance, query, run: RunContext) -> Result:
        """The favourite and the others forked (the late ones later), the resident in
        this process, all scheduled by slices until one answers."""
        from multiprocessing.connection import wait

        from symreach.solvers.workers import ResidentWorker

        self._fork([e for e in race.engines if e not in race.late and e != race.resident
                    and e not in race.workers], race, instance, query, run)
        if race.resident and race.resident not in race.workers:
            race.workers[race.resident] = ResidentWorker(race.resident, instance, query, run)
        late_at = time.perf_counter() + LATE_AFTER_S if race.late else None
        rotation = [e for e in race.engines if e in race.workers]
        # the second's time alone, in slices (0 when there is no second)
        alone_until = int(SECOND_ALONE_S.get(race.second, 0.0) / self.slice_s)
        favoured = race.first
        slice_index, slice_end = 0, time.perf_counter() + self.slice_s

        def apply() -> None:
            running = holders(rotation, favoured, self.jobs, slice_index, race.second, alone_until)
            for name in rotation:
                if name in running:
                    race.workers[name].resume()
                else:
                    race.workers[name].pause()

        apply()
        while rotation or late_at is not None:
            now = time.perf_counter()
            if run.deadline is not None and time.monotonic() > run.deadline + _GRACE_S:
                break
            if late_at is not None and (now >= late_at or len(rotation) < self.jobs):
                self._fork(race.late, race, instance, query, run)
                rotation += race.late
                if race.second is None:  # once every engine runs, equal shares (``schedule``)
                    favoured = None
                late_at = None
                apply()
            if now >= slice_end:
                slice_index += 1
                slice_end = now + self.slice_s
                apply()
            until = slice_end if late_at is None else min(slice_end, late_at)
            ready = wait([race.workers[n].sentinel for n in rotation], timeout=max(0.0, until - now))
            for name in [n for n in rotation if race.workers[n].sentinel in ready]:
                rotation.remove(name)
                result, error = race.workers[name].outcome()
                if error is not None:
                    race.errors.append(f"{name}: {error}")
                elif result.verdict is not Verdict.UNKNOWN:
                    return self._label(result, name, race.record(), slices=slice_index + 1)
                else:
                    race.unknown.append(result)
            if ready and rotation:  # a core came free: give it to the next engine now
                apply()
        reasons = [f"{r.engine}: {r.reason}" for r in race.unknown] + race.errors
        return Result(Verdict.UNKNOWN, "auto", reason="; ".join(reasons) or "no engine answered",
                      stats={"portfolio": dict(race.record(), jobs=self.jobs, slice_s=self.slice_s,
                                               answered_by=None, slices=slice_index + 1),
                             "unknown_engines": {r.engine: r.stats for r in race.unknown}})


def _import_engines(names: Sequence[str]) -> list[str]:
    """The engines of ``names`` that import, imported before any worker forks (CUDD,
    python-sat): every worker inherits them instead of paying inside its time limit."""
    import importlib

    from symreach.solvers.registry import ENGINES

    out = []
    for name in names:
        try:
            module = importlib.import_module(ENGINES[name][0])
        except ImportError:
            continue
        if hasattr(module, ENGINES[name][1]):
            out.append(name)
    return out or ["explicit"]


def _alone(worker: "Worker", seconds: float, run: RunContext) -> None:
    """Wait until ``worker`` is done, or has used ``seconds`` of CPU (its time alone must
    not shrink on a loaded machine; wall seconds where its CPU cannot be read), or the
    run's time is up. A poll of its sentinel (``workers.ready``), not ``multiprocessing``'s
    ``wait``: where the lazy search answers alone nothing else needs that package, whose
    import was a percent of such a check's CPU."""
    from symreach.solvers.workers import ready

    cpu0, wall0 = worker.cpu_s(), time.perf_counter()
    while worker.alive():
        cpu = worker.cpu_s()
        used = cpu - cpu0 if cpu is not None and cpu0 is not None else time.perf_counter() - wall0
        left = run.remaining()
        timeout = seconds - used if left is None else min(seconds - used, left)
        if timeout <= 0 or (left is not None and left <= 0):
            return
        ready([worker.sentinel], max(timeout, 0.01))
