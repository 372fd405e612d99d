"""The ``auto`` portfolio: round-robin schedule, who answered, no worker left behind."""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symreach import semantics
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.solvers.portfolio import DEFAULT_RACE, AutoEngine
from symreach.solvers.schedule import (
    early_engine,
    favourite,
    holders,
    pilot_engines,
    race_engines,
    round_robin,
    second_engine,
)
from tests.sat_helpers import pyramid_instance

ROOT = Path(__file__).resolve().parent.parent


def test_round_robin_shares_cores_equally():
    engines = ["bdd", "ic3", "bmc"]
    held = {e: 0 for e in engines}
    for i in range(30):
        running = round_robin(engines, 2, i)
        assert len(running) == 2
        for e in running:
            held[e] += 1
    assert held == {"bdd": 20, "ic3": 20, "bmc": 20}   # 2/3 of the slices each
    assert round_robin(engines, 3, 5) == set(engines)
    assert [round_robin(engines, 1, i) for i in range(3)] == [{"bdd"}, {"ic3"}, {"bmc"}]


def test_the_favourite_holds_a_core_and_the_others_share_the_rest():
    engines = ["bdd", "ic3", "bmc", "abc-pdr"]
    held = {e: 0 for e in engines}
    for i in range(30):
        running = holders(engines, "bmc", 2, i)
        assert len(running) == 2 and "bmc" in running
        for e in running:
            held[e] += 1
    assert held == {"bdd": 10, "ic3": 10, "bmc": 30, "abc-pdr": 10}
    assert holders(["bdd", "ic3"], "bmc", 2, 0) == {"bdd", "ic3"}   # the favourite gave up
    assert holders(engines, "bmc", 1, 1) == round_robin(engines, 1, 1)   # no core to reserve


def test_favourite_by_size():
    assert favourite(45, ["bdd", "ic3", "bmc"]) == "bdd"      # pebbling pyramid h = 8, after the pilot
    assert favourite(45, ["ic3", "bmc"]) is None
    assert favourite(1427, ["bdd", "ic3", "bmc"]) == "bmc"    # IBM703
    assert favourite(1427, ["bdd", "ic3"]) is None            # BMC not in the race
    assert favourite(1150, ["bdd", "ic3", "bmc"], nodes=200) == "ic3"   # hard/kubernetes 200x100
    assert favourite(84, ["bdd", "ic3", "bmc"], nodes=50) is None


def test_second_engine_lazy_first_then_abc_on_large_clusters():
    race = ["bdd", "ic3", "bmc", "lazy", "abc-pdr"]
    assert second_engine(1427, race, 1, lazy_running=True) == "lazy"
    assert second_engine(1427, race, 1, lazy_running=False) is None       # a net: no second
    assert second_engine(1150, race, 200, lazy_running=False) == "abc-pdr"
    assert second_engine(1150, race[:-1], 200, lazy_running=False) is None  # ABC not installed
    assert second_engine(84, race, 50, lazy_running=False) is None         # small: equal shares


def test_bmc_only_pilots_on_small_systems():
    engines = ["bdd", "ic3", "bmc", "abc-pdr"]
    assert race_engines(45, engines) == ["bdd", "ic3", "abc-pdr"]
    assert race_engines(1427, engines) == engines
    assert race_engines(45, ["bmc"]) == ["bmc"]   # never an empty race


def test_small_instances_are_answered_in_process_by_the_pilots():
    """No fork on pyramid h = 3: IC3 and the BDDs, side by side in this process,
    prove k = 4 not deployable and find the k = 5 witness (a pilot budget no
    machine can exhaust here)."""
    for k, verdict in ((4, Verdict.NOT_DEPLOYABLE), (5, Verdict.DEPLOYABLE)):
        res = AutoEngine(engines=("bdd", "ic3", "bmc"), pilot_s=60).check(
            pyramid_instance(3, k), limits=Limits(timeout_s=120))
        port = res.stats["portfolio"]
        assert res.verdict is verdict and port["pilots"] == ["ic3", "bdd"] and port["pilot_s"] == 60
        assert port["answered_by"] in ("ic3", "bdd") and "slices" not in port   # no race
        assert not mp.active_children()


def test_pilots_by_number_of_nodes():
    engines = ["bdd", "ic3", "bmc", "lazy", "abc-pdr"]
    assert pilot_engines(1, engines) == ["ic3", "bdd"]    # pebbling, small nets
    assert pilot_engines(20, engines) == ["ic3", "bmc"]   # small clusters
    assert pilot_engines(20, ["bdd", "ic3"]) == ["ic3"]


def test_early_worker_is_the_lazy_search_when_running_else_abc_pdr():
    engines = ["bdd", "ic3", "lazy", "abc-pdr"]
    assert early_engine(engines, lazy_running=True) == "lazy"
    assert early_engine(engines, lazy_running=False) == "abc-pdr"
    assert early_engine(engines[:-1], lazy_running=False) is None   # ABC not installed


def test_the_early_workers_answer_ends_the_pilot(monkeypatch):
    """BMC alone pilots a not-deployable pyramid, which it can never decide, for
    up to 60 s; the early worker (the explicit engine here) decides it in
    milliseconds once forked, and the pilot returns its answer."""
    import symreach.solvers.portfolio as portfolio

    monkeypatch.setattr(portfolio, "pilot_engines", lambda nodes, engines: ["bmc"])
    monkeypatch.setattr(portfolio, "early_engine", lambda engines, lazy_running: "explicit")
    inst = pyramid_instance(2, 3)
    res = AutoEngine(engines=("bmc", "explicit"), pilot_s=60).check(inst, limits=Limits(timeout_s=120))
    port = res.stats["portfolio"]
    assert res.verdict is Verdict.NOT_DEPLOYABLE and res.engine == "auto/explicit"
    assert port["answered_by"] == "explicit" and port["early"] == ["explicit"]
    assert not mp.active_children()


def test_an_early_worker_that_gives_up_ends_the_pilot(monkeypatch):
    """The early worker (the explicit engine, stopped by a one-state limit) gives
    up at once; the pilot (BMC, which never proves "not deployable") then ends
    instead of holding one core for its 60 s, and the race decides."""
    import symreach.solvers.portfolio as portfolio

    monkeypatch.setattr(portfolio, "pilot_engines", lambda nodes, engines: ["bmc"])
    monkeypatch.setattr(portfolio, "early_engine", lambda engines, lazy_running: "explicit")
    inst = pyramid_instance(2, 3)
    res = AutoEngine(engines=("bmc", "explicit", "ic3"), pilot_s=60).check(
        inst, limits=Limits(timeout_s=120, max_states=1))
    port = res.stats["portfolio"]
    assert res.verdict is Verdict.NOT_DEPLOYABLE and port["answered_by"] == "ic3"
    assert port["pilot_end"] == "early worker gave up" and port["early"] == ["explicit"]
    assert not mp.active_children()


def test_bmc_is_in_the_default_race():
    assert "bmc" in DEFAULT_RACE and "bdd" in DEFAULT_RACE and "ic3" in DEFAULT_RACE


@pytest.mark.parametrize("jobs", [1, 2])
def test_deployable_answer_names_its_engine(jobs):
    inst = pyramid_instance(2, 4)   # price 4: deployable, not decided by preprocessing
    res = AutoEngine(jobs=jobs, slice_s=0.2).check(inst, limits=Limits(timeout_s=120))
    assert res.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, res.trace, inst.query)
    port = res.stats["portfolio"]
    assert res.engine == f"auto/{port['answered_by']}"
    assert port["answered_by"] in AutoEngine().engines and port["jobs"] == jobs
    assert not mp.active_children()


def test_not_deployable_comes_from_a_prover_with_bmc_paused_and_stopped():
    inst = pyramid_instance(2, 3)   # price 4: not deployable with 3 pebbles
    res = AutoEngine(engines=("bmc", "bdd", "ic3"), jobs=1, slice_s=0.1).check(
        inst, limits=Limits(timeout_s=120))
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert res.stats["portfolio"]["answered_by"] in ("bdd", "ic3")
    assert res.certificate is not None
    assert not mp.active_children()   # bmc, paused or not, was stopped


def test_limit_gives_unknown_with_every_reason():
    inst = pyramid_instance(2, 3)
    res = AutoEngine(engines=("bmc",), jobs=2).check(inst, limits=Limits(timeout_s=1.0))
    assert res.verdict is Verdict.UNKNOWN
    hard = pyramid_instance(6, 7)   # neither engine decides it within a second
    res = AutoEngine(engines=("bmc", "ic3"), jobs=1, slice_s=0.1).check(hard, limits=Limits(timeout_s=1.0))
    assert res.verdict is Verdict.UNKNOWN
    assert res.stats["portfolio"]["answered_by"] is None
    assert not mp.active_children()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_workers_die_with_a_killed_parent():
    """Workers run in their own sessions (fair CPU shares), so the parent's
    process group no longer reaches them: PR_SET_PDEATHSIG must."""
    script = ("from tests.sat_helpers import pyramid_instance\n"
              "from symreach.solvers.portfolio import AutoEngine\n"
              "from symreach.solvers.base import Limits\n"
              "AutoEngine(pilot_s=0.1).check(pyramid_instance(10, 11), limits=Limits(timeout_s=600))\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=str(ROOT),
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        workers: list[int] = []
        # lazy declines the pebbling encoding (capacity binds) in its pilot and stays out;
        # on a system this small BMC only pilots (``schedule.race_engines``); no pilot
        # decides pyramid h = 10 within 0.1 s, and the race then forks every worker
        count = len([e for e in AutoEngine().available if e not in ("lazy", "bmc")])
        for _ in range(600):  # generous: up to 60 s for the workers to start
            workers = _children(proc.pid)
            if len(workers) == count:
                break
            time.sleep(0.1)
        assert len(workers) == count
    finally:
        proc.kill()
        proc.wait()
    for _ in range(600):
        if not any(_alive(w) for w in workers):
            break
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)


def test_abc_pdr_joins_the_race_exactly_when_installed():
    from symreach.solvers.abc import abc_available

    assert ("abc-pdr" in AutoEngine().engines) == abc_available()
    assert AutoEngine(engines=("bdd", "bmc")).engines == ("bdd", "bmc")


@pytest.mark.skipif(not __import__("shutil").which("berkeley-abc"), reason="berkeley-abc not installed")
def test_an_abc_answer_names_abc_and_says_whose_verdict_it_is():
    inst = pyramid_instance(2, 3)   # not deployable
    res = AutoEngine(engines=("abc-pdr", "bmc"), jobs=1, slice_s=0.1).check(inst, limits=Limits(timeout_s=120))
    assert res.verdict is Verdict.NOT_DEPLOYABLE   # BMC never proves: ABC answered, paused and resumed
    assert res.engine == "auto/abc-pdr" and res.stats["portfolio"]["answered_by"] == "abc-pdr"
    assert "ABC's verdict" in res.reason
    assert not mp.active_children()


def test_the_workers_reuse_the_parents_preprocessing(monkeypatch):
    """Preprocessing runs once: the engines get it through ``Limits.prepared``."""
    from symreach.encodings import preprocess as pre_mod
    from symreach.solvers import fast_paths

    calls = []
    real = pre_mod.preprocess

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fast_paths, "preprocess", counting)
    inst = pyramid_instance(2, 4)
    res = AutoEngine(engines=("bmc",), jobs=1).check(inst, limits=Limits(timeout_s=120))
    assert res.verdict is Verdict.DEPLOYABLE and len(calls) == 1
