"""``auto`` on the gang question: the explicit and the BDD engine race (issue 28).

Each runs in a forked child (``processes.die_with_parent``: none outlives
the command); the first decided answer wins and the other child is killed
by its pid. The explicit search wins on small reachable sets and large
gangs (its gang step cuts by node symmetry), the BDD fixpoint on large
background state spaces. Both answers are replayed (witnesses) or carry a
certificate that ``certify`` re-checks, as each engine alone does. With
both undecided the explicit answer is returned. Engine errors in a child
(an AssertionError is an engine bug) are raised again here.

One exception to "first wins": an explicit "never" on a large instance.
Its ``symreach-gang-states/1`` certificate is re-checked by a plain search
without node symmetry (``certify/gang_states.py``), whose budget shrinks
with the number of pairs, so on hundreds of nodes ``certify`` may run out
of budget on a valid certificate (measured: 64 anti-affine replicas on 500
nodes). There the BDD's ``symreach-gang-bdd/1`` certificate, which the
checker re-checks in seconds, is worth a short wait: up to
``max(GRACE_MIN_S, GRACE_FACTOR x`` the explicit time), within the time limit.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing.connection import wait
from typing import Optional

from symreach.model import Instance
from symreach.solvers.gang_explicit import GangAnswer

RACERS = ("explicit", "bdd")
CHECKABLE_PAIRS = 100   # above this, the explicit certificate's checker has under 50,000 configurations
GRACE_MIN_S = 2.0
GRACE_FACTOR = 5.0


def _solve(engine: str, inst: Instance, name: str, timeout_s: Optional[float],
           max_states: Optional[int]) -> GangAnswer:
    if engine == "explicit":
        from symreach.solvers.gang_explicit import answer

        return answer(inst, name, timeout_s, max_states)
    from symreach.solvers.gang_symbolic import answer as symbolic

    return symbolic(inst, name, engine, timeout_s)


def _child(conn, engine: str, inst: Instance, name: str, timeout_s: Optional[float],
           max_states: Optional[int]) -> None:
    from symreach.solvers.processes import die_with_parent

    die_with_parent()
    try:
        conn.send(("ok", _solve(engine, inst, name, timeout_s, max_states)))
    except BaseException as exc:   # reported to the parent, which raises it again
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _receive(conn, engine: str, proc) -> tuple[str, object]:
    """A child's message, the child joined; an engine bug (AssertionError) or a dead child raises."""
    try:
        kind, payload = conn.recv()
    except EOFError:
        kind, payload = "error", f"the {engine} child died (exit code {proc.exitcode})"
    proc.join()
    if kind == "error" and payload.startswith(("AssertionError", "the ")):
        raise AssertionError(f"auto/{engine}: {payload}")
    return kind, payload


def _checkable_never(pending: dict, grace_s: float, timeout_s: Optional[float],
                     start: float) -> Optional[GangAnswer]:
    """The bdd child's answer if it says "never" within ``grace_s`` (and the time limit)."""
    for conn, (engine, proc) in list(pending.items()):
        if engine != "bdd":
            continue
        left = grace_s if timeout_s is None else min(grace_s, timeout_s - (time.monotonic() - start))
        if left <= 0 or not wait([conn], timeout=left):
            return None
        del pending[conn]
        try:
            kind, payload = _receive(conn, engine, proc)
        finally:
            conn.close()
        if kind == "ok" and payload.result.verdict.value == "not-deployable":
            return payload
    return None


def race(inst: Instance, name: str, timeout_s: Optional[float] = None,
         max_states: Optional[int] = None) -> GangAnswer:
    """The first decided gang answer of ``RACERS``."""
    start = time.monotonic()
    ctx = multiprocessing.get_context("fork")
    pending = {}
    for engine in RACERS:
        here, there = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(there, engine, inst, name, timeout_s, max_states), daemon=True)
        proc.start()
        there.close()
        pending[here] = (engine, proc)
    undecided: dict[str, GangAnswer] = {}
    stopped: list[str] = []
    try:
        while pending:
            for conn in wait(list(pending)):
                engine, proc = pending.pop(conn)
                kind, payload = _receive(conn, engine, proc)
                if kind == "error":
                    stopped.append(f"{engine}: {payload}")
                    continue   # a limit (memory) in one child: the other may still decide
                if payload.result.verdict.value != "unknown":
                    elapsed = time.monotonic() - start
                    payload.notes.append(f"auto: {engine} decided first, after {elapsed:.2f} s")
                    if engine == "explicit" and payload.result.verdict.value == "not-deployable" \
                            and inst.num_pairs > CHECKABLE_PAIRS:
                        better = _checkable_never(pending, max(GRACE_MIN_S, GRACE_FACTOR * elapsed), timeout_s,
                                                  start)
                        if better is not None:
                            better.notes.append(f"auto: explicit said never first ({elapsed:.2f} s); the bdd "
                                                "answer is kept for its certificate, which certify re-checks "
                                                "quickly on large instances")
                            return better
                    return payload
                undecided[engine] = payload
    finally:
        for conn, (_, proc) in pending.items():
            if proc.pid is not None and proc.is_alive():
                os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            conn.close()
    if "explicit" in undecided:
        return undecided["explicit"]
    if undecided:
        return next(iter(undecided.values()))
    raise MemoryError("every engine of auto stopped: " + "; ".join(stopped))
