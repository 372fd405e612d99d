"""Engines taking turns in one process (``solvers.turns``), and engines stopping when cancelled.

Turn lengths are measured on an injected clock that the working threads
advance themselves, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import threading

import pytest

from symreach.result import Verdict
from symreach.solvers.base import Limits, past
from symreach.solvers.registry import make_engine
from symreach.solvers.turns import Turns
from tests.sat_helpers import pyramid_instance


class StepClock:
    """Time advances only when a thread says its step took so long."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _worker(turns: Turns, clock: StepClock, cost: float, steps: int, log: list, inside: list) -> None:
    with turns.taking_part():
        for _ in range(steps):
            inside.append(1)
            assert len(inside) == 1, "two threads ran at once"
            clock.now += cost
            log.append((threading.current_thread().name, clock.now))
            inside.pop()
            if past(None):
                break


def _run(costs: dict[str, float], steps: int, slice_s: float):
    clock = StepClock()
    turns = Turns(len(costs), slice_s, clock=clock)
    log: list = []
    inside: list = []
    threads = [threading.Thread(target=_worker, name=n, args=(turns, clock, c, steps, log, inside))
               for n, c in costs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive()
    return log


def test_threads_alternate_and_never_run_together():
    log = _run({"a": 1.0, "b": 1.0}, steps=50, slice_s=2.0)
    names = [n for n, _ in log]
    assert names.count("a") == names.count("b") == 50
    # a turn is two unit steps: the run switches about every two steps
    switches = sum(1 for x, y in zip(names, names[1:]) if x != y)
    assert switches >= 40


def test_time_used_stays_balanced_whatever_the_step_costs():
    """A cheap-step and a dear-step engine: while both run, neither is ahead
    of the other by more than one dear step plus a slice."""
    costs = {"cheap": 1.0, "dear": 7.0}
    log = _run(costs, steps=40, slice_s=3.0)
    used = {"cheap": 0.0, "dear": 0.0}
    for name, _ in log:
        used[name] += costs[name]
        if used["dear"] < 40 * 7.0 and used["cheap"] < 40 * 1.0:
            assert abs(used["cheap"] - used["dear"]) <= 7.0 + 3.0 + 1.0


def test_cancel_ends_every_turn():
    clock = StepClock()
    turns = Turns(3, 0.0, clock=clock)
    seen: list[bool] = []

    def body():
        with turns.taking_part():
            while not past(None):
                clock.now += 1
            seen.append(True)

    threads = [threading.Thread(target=body) for _ in range(3)]
    for t in threads:
        t.start()
    turns.cancel()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive()
    assert seen == [True, True, True]


def test_hold_parks_every_thread_until_release():
    clock = StepClock()
    turns = Turns(1, 0.0, clock=clock)
    steps = [0]
    stop = threading.Event()

    def body():
        with turns.taking_part():
            while not stop.is_set() and not past(None):
                steps[0] += 1
                clock.now += 1

    thread = threading.Thread(target=body)
    thread.start()
    for _ in range(5):
        turns.hold()
        frozen = steps[0]
        for _ in range(1000):   # the worker cannot step while the turn is held here
            assert steps[0] == frozen
        turns.release()
    stop.set()
    thread.join(timeout=60)
    assert not thread.is_alive()


@pytest.mark.parametrize("engine", ["bdd", "ic3", "bmc"])
def test_engines_stop_at_their_next_check_once_cancelled(engine):
    """Pyramid h = 4: every engine decides k = 6 in well under a second alone;
    cancelled before it starts, it must give up instead (no deadline set)."""
    inst = pyramid_instance(4, 6)
    assert make_engine(engine).check(inst, limits=Limits()).verdict is Verdict.DEPLOYABLE
    out = []

    def body():
        turns = Turns(1)
        with turns.taking_part():
            turns.cancel()
            out.append(make_engine(engine).check(inst, limits=Limits()))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(timeout=120)
    assert out and out[0].verdict is Verdict.UNKNOWN


def test_bmc_under_turns_finds_the_same_witness_depth(monkeypatch):
    """Under turns BMC solves in conflict-budgeted calls (``bmc._solve_in_turns``),
    here of a single conflict each, so that nearly every call runs out and is
    resumed: the answer and the depth are those of one whole call."""
    import symreach.solvers.bmc as bmc

    monkeypatch.setattr(bmc, "TURN_CONFLICTS", 1)
    for h, k in ((3, 5), (4, 6), (2, 4), (5, 7)):
        inst = pyramid_instance(h, k)
        alone = make_engine("bmc").check(inst, limits=Limits())
        out = []

        def body():
            with Turns(1).taking_part():
                out.append(make_engine("bmc").check(inst, limits=Limits()))

        thread = threading.Thread(target=body)
        thread.start()
        thread.join(timeout=120)
        assert out[0].verdict is alone.verdict is Verdict.DEPLOYABLE
        assert out[0].stats["depth"] == alone.stats["depth"]
