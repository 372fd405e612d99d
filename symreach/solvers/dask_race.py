"""``check --executor dask``: the portfolio's engines raced as tasks of a Dask cluster.

For one instance too hard for one machine: each engine of ``auto``'s race
(``portfolio.default_engines``) is one task on the instance shipped once
(the executor's worker plugin). The first *checked* decided answer wins and
the other tasks are cancelled (their futures, and cooperatively through a
Dask ``Event`` their engines' ``RunContext.cancel`` polls). Nothing a worker
says is trusted: the client replays the witness against the semantics
(``registry.finish_result``) and re-checks the certificate with its own
checker (``Certificate.check``); an answer that fails either is dropped.
Faults are the executor's (``DaskExecutor.map``): a lost worker's task is
retried by the scheduler; with every worker or the scheduler lost the
engines not done are ``unknown`` with that reason.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any, Optional, Sequence

from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext

STOP_POLL_S = 0.5   # how often a worker's engine looks whether the race is over


def race_engines_for(instance: Instance, engine: str) -> list[str]:
    """The engines raced: ``engine`` alone, or for ``auto`` its race (explicit
    where only explicit answers: claim bindings, operator moves, volume checks)."""
    if engine != "auto":
        return [engine]
    from symreach import semantics
    from symreach.solvers.portfolio import default_engines

    if instance.bindings or instance.moves.restricted or semantics.unencoded_volume_checks(instance):
        return ["explicit"]
    return list(default_engines())


def run_engine(shared: tuple[Instance, Query], name: str, deadline_at: Optional[float] = None,
               stop: Optional[str] = None, max_states: Optional[int] = None) -> tuple[str, Result]:
    """One engine on a worker (module-level: the workers import it)."""
    from symreach.solvers.registry import make_engine

    instance, query = shared
    run = RunContext.until_wall(deadline_at, max_states=max_states)
    watcher = _watch_stop(stop, run) if stop else None
    try:
        result = make_engine(name).check(instance, query, run)
    finally:
        if watcher is not None:
            watcher.set()
    result.stats.pop("progress", None)
    return name, result


def _watch_stop(name: str, run: RunContext) -> threading.Event:
    """Cancel ``run`` once the client sets the Dask event ``name``; the returned
    event ends the watcher."""
    from distributed import Event

    done = threading.Event()

    def watch() -> None:
        try:
            race_over = Event(name)
            while not done.is_set():
                if race_over.wait(timeout=STOP_POLL_S):
                    run.cancel.cancel()
                    return
        except Exception:  # the scheduler is gone: the deadline still ends the engine
            return

    threading.Thread(target=watch, daemon=True, name="symreach-race-stop").start()
    return done


def checked(instance: Instance, query: Query, result: Result) -> Optional[str]:
    """Why the client refuses a worker's decided ``result`` (None: accepted)."""
    from symreach.solvers.registry import finish_result

    if result.verdict is Verdict.DEPLOYABLE:
        if not result.trace:
            return "deployable without a witness"
        try:
            finish_result(instance, query, result)   # replays the witness here
        except AssertionError as exc:
            return str(exc)
        return None
    if result.certificate is None:
        return "not deployable without a certificate"
    finish_result(instance, query, result)
    ok, message = result.certificate.check(instance, query)
    return None if ok else f"certificate refused: {message}"


def race(executor, instance: Instance, query: Query, run: RunContext, engines: Sequence[str],
         max_states: Optional[int] = None) -> Result:
    """The first checked decided answer of ``engines`` run on ``executor``'s workers."""
    import time

    from distributed import Event

    start = time.perf_counter()
    stop = f"symreach-race-{uuid.uuid4().hex}"
    client = executor.client()
    options: dict[str, Any] = {"deadline_at": run.wall_deadline(), "stop": stop, "max_states": max_states}
    notes: list[str] = []
    unknown: list[Result] = []
    winner: Optional[Result] = None
    results = executor.map(run_engine, (instance, query), list(engines), options,
                           on_error=lambda name, message: (name, message))
    try:
        for name, outcome in results:
            if isinstance(outcome, str):
                notes.append(f"{name}: {outcome}")
                continue
            if outcome.verdict is Verdict.UNKNOWN:
                unknown.append(outcome)
                notes.append(f"{name}: {outcome.reason or 'unknown'}")
                continue
            refused = checked(instance, query, outcome)
            if refused is not None:
                notes.append(f"{name}: answer refused on the client ({refused})")
                continue
            winner = outcome
            break
    finally:
        results.close()   # cancels the tasks still out (DaskExecutor.map)
        try:
            Event(stop, client=client).set()
        except Exception:  # the scheduler is gone: nothing left to stop
            pass
    elapsed = time.perf_counter() - start
    if winner is not None:
        winner.stats["dask_race"] = {"engines": list(engines), "winner": name}
        winner.time_s = elapsed
        return winner
    reason = _unknown_reason(notes, unknown, run)
    return Result(Verdict.UNKNOWN, "auto/dask" if len(engines) > 1 else engines[0], reason=reason,
                  time_s=elapsed, stats={"dask_race": {"engines": list(engines), "winner": None}})


def _unknown_reason(notes: list[str], unknown: list[Result], run: RunContext) -> str:
    """One line: the cluster's fault if there was one, else what the engines said."""
    faults = [n for n in notes if "Dask" in n]
    if faults:
        return faults[0].split(": ", 1)[1]
    if run.timed_out():
        return run.timeout_reason("dask race")
    return "; ".join(notes) or "no engine answered"
