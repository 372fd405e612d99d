"""The portfolio's workers (``solvers.workers``): the resident engine behind its
gate, engines stopping when cancelled, and process workers paused and stopped.

Nothing here measures time: a paused engine is recognised by a step counter
that does not move, and every wait has a generous bound only against hangs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import sys
import threading
from multiprocessing.connection import wait

import pytest

from symreach.result import Verdict
from symreach.run import RunContext
from symreach.solvers.base import Limits
from symreach.solvers.registry import make_engine
from symreach.solvers.workers import Gate, ResidentWorker, spawn
from tests.sat_helpers import pyramid_instance


def _stepping(gate: Gate, steps: list[int], stop: threading.Event) -> threading.Thread:
    """A thread that counts steps, with a check (``RunContext.past``) after each."""
    run = RunContext(cancel=gate)

    def body() -> None:
        try:
            while not stop.is_set() and not run.past():
                steps[0] += 1
        finally:
            gate.finish()

    thread = threading.Thread(target=body)
    thread.start()
    return thread


def test_a_parked_engine_takes_no_step_until_the_gate_opens():
    gate, steps, stop = Gate(), [0], threading.Event()
    thread = _stepping(gate, steps, stop)
    for _ in range(5):
        gate.park()   # returns only once the thread waits at a check
        frozen = steps[0]
        for _ in range(1000):
            assert steps[0] == frozen
        gate.open()
        moved = steps[0]
        for _ in range(10_000):   # it steps again once the gate is open
            if steps[0] > moved:
                break
            threading.Event().wait(0.001)
        assert steps[0] > moved
    stop.set()
    thread.join(timeout=60)
    assert not thread.is_alive()


def test_cancel_ends_a_closed_or_open_run_and_park_never_waits_for_a_finished_one():
    for close_first in (True, False):
        gate, steps, stop = Gate(), [0], threading.Event()
        thread = _stepping(gate, steps, stop)
        if close_first:
            gate.park()
        gate.cancel()
        thread.join(timeout=60)
        assert not thread.is_alive() and gate.cancelled
        gate.park()   # the run is over: returns at once


@pytest.mark.parametrize("engine", ["bdd", "ic3", "bmc", "lazy"])
def test_engines_stop_at_their_next_check_once_cancelled(engine):
    """Every engine decides its instance (pyramid h = 4; the lazy search: the
    mutual exclusion of 6 philosophers, which takes it thousands of states)
    alone within seconds; cancelled before it starts, it must give up instead
    (no deadline set)."""
    from symreach.frontends.reduction_petri import encode_petri
    from symreach.generators.nets import philosophers
    from symreach.loader import load_document
    from symreach.solvers.lazy_search import LazySearchEngine

    if engine == "lazy":
        family = philosophers(6)
        inst = load_document(encode_petri(family.net, family.never_marked))
        make = lambda: LazySearchEngine(fast_paths=False)  # noqa: E731
    else:
        inst, make = pyramid_instance(4, 6), lambda: make_engine(engine)
    assert make().check(inst, run=Limits()).verdict is not Verdict.UNKNOWN
    gate = Gate()
    gate.cancel()
    out = []

    def body():
        out.append(make().check(inst, run=RunContext(cancel=gate)))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(timeout=120)
    assert out and out[0].verdict is Verdict.UNKNOWN


def test_a_resident_answers_through_its_sentinel_and_a_paused_one_waits():
    inst = pyramid_instance(3, 5)
    resident = ResidentWorker("ic3", inst, inst.query, RunContext())
    try:
        assert wait([resident.sentinel], timeout=120)
        assert not resident.alive()
        result, error = resident.outcome()
        assert error is None and result.verdict is Verdict.DEPLOYABLE
    finally:
        resident.stop()
    hard = pyramid_instance(9, 10)   # IC3 needs far more than one check's worth of work
    resident = ResidentWorker("ic3", hard, hard.query, RunContext())
    try:
        resident.park()
        assert resident.alive() and not wait([resident.sentinel], timeout=0.2)
    finally:
        resident.stop()   # cancelled while parked: ends at once
    result, _ = resident.outcome()
    assert result.verdict is Verdict.UNKNOWN


def test_a_process_worker_is_paused_resumed_and_stopped(tmp_path):
    inst = pyramid_instance(3, 5)
    worker = spawn(mp.get_context("fork"), "ic3", inst, inst.query, RunContext(), str(tmp_path / "out"))
    try:
        assert worker.detached.wait(60)
        worker.pause()
        worker.resume()
        assert wait([worker.sentinel], timeout=120)
        result, error = worker.outcome()
        assert error is None and result.verdict is Verdict.DEPLOYABLE
    finally:
        worker.stop()
    hard = pyramid_instance(10, 11)
    worker = spawn(mp.get_context("fork"), "ic3", hard, hard.query, RunContext(), str(tmp_path / "hard"))
    assert worker.detached.wait(60)
    worker.pause()
    worker.stop()   # a paused worker is resumed so that it can die
    assert not worker.alive()
    result, error = worker.outcome()
    assert result is None and "exit code" in error


@pytest.mark.parametrize("engine", ["ic3", "bdd"])
def test_a_forked_workers_certificate_arrives_with_its_type(tmp_path, engine):
    """The certificate is pickled as it is (``certify.dispatch.Certificate``), not as text."""
    from symreach.certify.dispatch import Certificate

    inst = pyramid_instance(3, 4)
    worker = spawn(mp.get_context("fork"), engine, inst, inst.query, RunContext(), str(tmp_path / "out"))
    try:
        assert wait([worker.sentinel], timeout=120)
        result, error = worker.outcome()
    finally:
        worker.stop()
    assert error is None and result.verdict is Verdict.NOT_DEPLOYABLE
    assert type(result.certificate) is Certificate and result.certificate.check(inst, inst.query)[0]


def _program_children(besides: frozenset[int] = frozenset()) -> list[tuple[int, str]]:
    """(pid, state) of every child process of this process but ``besides``, zombies included."""
    found = []
    for task in os.listdir("/proc/self/task"):
        try:   # a thread may end between the listing and the read: its children moved to another
            with open(f"/proc/self/task/{task}/children") as handle:
                children = set(handle.read().split())
        except OSError:
            continue
        for pid in children - {str(p) for p in besides}:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    found.append((int(pid), stat.read().rsplit(")", 1)[1].split()[0]))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not shutil.which("berkeley-abc") or not sys.platform.startswith("linux"),
                    reason="berkeley-abc not installed, or no /proc")
def test_a_resident_abc_stops_with_its_gate_and_leaves_no_child_when_cancelled():
    """``auto`` runs ABC's pdr in a thread of its own process (``solvers.child``): a
    closed gate stops the program, a cancel kills and reaps it, from this thread.
    Pyramid h = 8 (not deployable) takes ABC's pdr far longer than this test waits."""
    others = frozenset(pid for pid, _ in _program_children())  # another test's, if any
    hard = pyramid_instance(8, 9)
    resident = ResidentWorker("abc-pdr", hard, hard.query, RunContext())
    try:
        for _ in range(1200):  # generous: up to 120 s to compile and start ABC
            if _program_children(others):
                break
            threading.Event().wait(0.1)
        (pid, _), = _program_children(others)
        for gate_open in (False, True, False):
            resident.resume() if gate_open else resident.pause()
            states = []
            for _ in range(600):
                states = [state for _, state in _program_children(others)]
                if (states == ["T"]) != gate_open:
                    break
                threading.Event().wait(0.1)
            assert len(states) == 1 and (states == ["T"]) != gate_open  # stopped while closed
        assert resident.cpu_s() > 0
    finally:
        resident.stop()   # cancelled while paused: killed and reaped before stop returns
    assert _program_children(others) == []
    assert not os.path.exists(f"/proc/{pid}")
    result, error = resident.outcome()
    assert error is None and result.verdict is Verdict.UNKNOWN and "cancelled" in result.reason
