"""The ``auto`` portfolio: round-robin schedule, who answered, no worker left behind."""

from __future__ import annotations

import json
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
    favourite,
    holders,
    late_engines,
    race_engines,
    resident_engine,
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


def test_favourite_by_size_and_nodes():
    engines = ["bdd", "ic3", "bmc"]
    assert favourite(45, engines) == "bdd"                  # pebbling pyramid h = 8
    assert favourite(84, engines, nodes=50) == "bmc"        # hard/paper 50x30
    assert favourite(1427, engines) == "bmc"                # IBM703
    assert favourite(1150, engines, nodes=200) == "ic3"     # hard/kubernetes 200x100
    assert favourite(45, ["ic3", "bmc"]) is None            # the BDDs not in the race
    assert favourite(1427, ["bdd", "ic3"]) is None


def test_second_engine_lazy_while_it_runs_else_abc_pdr_on_large_clusters():
    race = ["bdd", "ic3", "bmc", "lazy", "abc-pdr"]
    assert second_engine(1427, race, 1, lazy_running=True) == "lazy"
    assert second_engine(45, race, 1, lazy_running=True) == "lazy"
    assert second_engine(1427, race, 1, lazy_running=False) is None       # a net: no second
    assert second_engine(1150, race, 200, lazy_running=False) == "abc-pdr"
    assert second_engine(45, race, 1, lazy_running=False) is None         # small: equal shares
    assert second_engine(1150, race[:-1], 200, lazy_running=False) is None  # ABC not installed


def test_small_systems_race_without_bmc_on_one_node_and_without_the_bdds_on_several():
    engines = ["bdd", "ic3", "bmc", "abc-pdr"]
    assert race_engines(45, engines) == ["bdd", "ic3", "abc-pdr"]
    assert race_engines(84, engines, nodes=50) == ["ic3", "bmc", "abc-pdr"]
    assert race_engines(1427, engines) == engines
    assert race_engines(45, ["bmc"]) == ["bmc"]   # never an empty race


def test_the_resident_is_the_running_lazy_search_else_ic3_on_small_systems():
    engines = ["bdd", "ic3", "lazy", "abc-pdr"]
    assert resident_engine(1427, engines, "bmc", lazy_running=True) == "lazy"
    assert resident_engine(45, engines, "bdd", lazy_running=False) == "ic3"
    assert resident_engine(84, engines, "bmc", lazy_running=False) == "ic3"
    assert resident_engine(1427, engines, "bmc", lazy_running=False) is None   # every engine forks
    assert resident_engine(45, ["bdd", "abc-pdr"], "bdd", lazy_running=False) is None


def test_late_engines_on_small_systems_only_abc_pdr_first():
    engines = ["bdd", "ic3", "bmc", "abc-pdr"]
    assert late_engines(45, engines, "bdd", "ic3") == ["abc-pdr", "bmc"]
    assert late_engines(45, ["bdd", "ic3"], "bdd", "ic3") == []
    assert late_engines(1427, engines, "bmc", None) == []


def test_small_instances_are_answered_by_the_favourite_or_the_resident():
    """Pyramid h = 3: IC3's trial, then the BDDs, each alone in this process (the
    resident is the one that ran last), prove k = 4 not deployable and find the
    k = 5 witness; nothing is left running."""
    for k, verdict in ((4, Verdict.NOT_DEPLOYABLE), (5, Verdict.DEPLOYABLE)):
        res = AutoEngine(engines=("bdd", "ic3", "bmc")).check(pyramid_instance(3, k),
                                                              run=Limits(timeout_s=120))
        port = res.stats["portfolio"]
        assert res.verdict is verdict and port["favourite"] == "bdd"
        assert port["solos"] == ["ic3", "bdd"] and port["resident"] == port["answered_by"]
        assert port["answered_by"] in ("ic3", "bdd") and "bmc" not in port["engines"]
        assert not mp.active_children()


def test_a_lone_resident_answers_without_any_fork(monkeypatch):
    import symreach.solvers.workers as workers

    def no_fork(*args, **kwargs):
        raise AssertionError("forked")

    monkeypatch.setattr(workers, "spawn", no_fork)  # the portfolio imports it on use
    inst = pyramid_instance(3, 5)
    res = AutoEngine(engines=("ic3", "bmc")).check(inst, run=Limits(timeout_s=120))
    assert res.verdict is Verdict.DEPLOYABLE and res.engine == "auto/ic3"
    assert res.stats["portfolio"]["resident"] == "ic3" and res.stats["portfolio"]["late"] is None
    semantics.replay(inst, res.trace, inst.query)


def test_a_late_engine_answers_where_the_resident_cannot(monkeypatch):
    """BMC as the resident never proves "not deployable"; the explicit engine,
    started late, does, and BMC is stopped at its next check."""
    import symreach.solvers.portfolio as portfolio

    monkeypatch.setattr(portfolio, "race_engines", lambda may, engines, nodes: list(engines))
    monkeypatch.setattr(portfolio, "resident_engine", lambda may, engines, first, running: "bmc")
    res = AutoEngine(engines=("bmc", "explicit")).check(pyramid_instance(2, 3),
                                                        run=Limits(timeout_s=120))
    port = res.stats["portfolio"]
    assert res.verdict is Verdict.NOT_DEPLOYABLE and res.engine == "auto/explicit"
    assert port["resident"] == "bmc" and port["late"] == ["explicit"]
    assert not mp.active_children()


def test_the_lazy_search_goes_on_into_the_race_without_restarting(monkeypatch):
    """The violation of 8 philosophers (more than 128 pairs): the lazy search
    proves it in seconds, BMC never; with no time alone, and the net taken for
    a wide one (``schedule.after_lazy``), BMC runs alone (forked) with the lazy
    search paused, then the race runs both; the lazy search keeps its search:
    one run of it, whose answer ``auto`` reports."""
    from symreach.frontends.reduction_petri import encode_petri
    from symreach.generators.nets import philosophers
    from symreach.loader import load_document
    from symreach.solvers import schedule
    from symreach.solvers.lazy_search import LazySearchEngine

    monkeypatch.setattr(schedule, "WIDE_PAIRS_PER_ROUND", 1)
    monkeypatch.setattr(schedule, "WIDE_LAZY_ROUND", 100)  # the lazy search starts first
    monkeypatch.setattr(schedule, "BMC_AFTER_LAZY", (("bmc", 0.3),))

    runs = []
    real = LazySearchEngine.check

    def counted(self, *args, **kwargs):
        runs.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(LazySearchEngine, "check", counted)
    family = philosophers(8)
    inst = load_document(encode_petri(family.net, family.never_marked))
    res = AutoEngine(engines=("bmc", "lazy"), lazy_alone_s=0).check(inst, run=Limits(timeout_s=300))
    port = res.stats["portfolio"]
    assert res.verdict is Verdict.NOT_DEPLOYABLE and res.engine == "auto/lazy"
    assert port["favourite"] == "bmc" and port["resident"] == port["second"] == "lazy"
    assert port["solos"] == ["bmc"] and port["slices"] > 0 and runs == [1]   # the race, one run
    assert not mp.active_children()


def test_bmc_is_in_the_default_race():
    assert "bmc" in DEFAULT_RACE and "bdd" in DEFAULT_RACE and "ic3" in DEFAULT_RACE


@pytest.mark.parametrize("jobs", [1, 2])
def test_deployable_answer_names_its_engine(jobs):
    inst = pyramid_instance(2, 4)   # price 4: deployable, not decided by preprocessing
    res = AutoEngine(jobs=jobs, slice_s=0.2, tiny_pairs=0, goal_plan=False).check(
        inst, run=Limits(timeout_s=120))
    assert res.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, res.trace, inst.query)
    port = res.stats["portfolio"]
    assert res.engine == f"auto/{port['answered_by']}"
    assert port["answered_by"] in AutoEngine().engines and port["jobs"] == jobs
    assert not mp.active_children()


@pytest.mark.parametrize("k, verdict", [(3, Verdict.NOT_DEPLOYABLE), (4, Verdict.DEPLOYABLE)])
def test_tiny_systems_are_decided_by_the_explicit_search_without_a_race(monkeypatch, k, verdict):
    import symreach.solvers.portfolio as portfolio

    def no_race(*args, **kwargs):
        raise AssertionError("raced")

    monkeypatch.setattr(portfolio.AutoEngine, "_schedule", no_race)
    inst = pyramid_instance(2, k)   # price 4
    res = AutoEngine().check(inst, run=Limits(timeout_s=120))
    assert res.verdict is verdict and res.engine == "auto/explicit"
    assert res.stats["portfolio"]["tiny"] is True
    if verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, res.trace, inst.query)
    else:
        assert res.certificate is not None


def test_not_deployable_comes_from_a_prover_with_the_others_paused_and_stopped():
    inst = pyramid_instance(2, 3)   # price 4: not deployable with 3 pebbles
    res = AutoEngine(engines=("bmc", "bdd", "ic3"), jobs=1, slice_s=0.1).check(
        inst, run=Limits(timeout_s=120))
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert res.stats["portfolio"]["answered_by"] in ("bdd", "ic3")
    assert res.certificate is not None
    assert not mp.active_children()   # the others, paused or not, were stopped


def test_limit_gives_unknown_with_every_reason():
    inst = pyramid_instance(2, 3)
    res = AutoEngine(engines=("bmc",), jobs=2).check(inst, run=Limits(timeout_s=1.0))
    assert res.verdict is Verdict.UNKNOWN
    hard = pyramid_instance(6, 7)   # neither engine decides it within a second
    res = AutoEngine(engines=("bmc", "ic3"), jobs=1, slice_s=0.1).check(hard, run=Limits(timeout_s=1.0))
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
              "AutoEngine(goal_plan=False).check(pyramid_instance(13, 14), run=Limits(timeout_s=600))\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=str(ROOT),
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        workers: list[int] = []
        # lazy declines the pebbling encoding (capacity binds) at once and stays out;
        # on a system this small of one node BMC is out of the race, and after IC3's
        # trial the BDDs run alone in the parent (``schedule.SOLOS``; without goal
        # regression, which would leave them alone for longer), then IC3 and
        # ABC's pdr fork; nothing decides pyramid h = 13 (not deployable) within a minute
        count = len([e for e in AutoEngine().available if e not in ("lazy", "bmc", "bdd")])
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
    res = AutoEngine(engines=("abc-pdr", "bmc"), jobs=1, slice_s=0.1).check(inst, run=Limits(timeout_s=120))
    assert res.verdict is Verdict.NOT_DEPLOYABLE   # BMC never proves: ABC answered, paused and resumed
    assert res.engine == "auto/abc-pdr" and res.stats["portfolio"]["answered_by"] == "abc-pdr"
    assert "ABC's verdict" in res.reason
    assert not mp.active_children()


@pytest.mark.skipif(not __import__("shutil").which("berkeley-abc"), reason="berkeley-abc not installed")
def test_abc_pdr_alone_on_a_large_paper_cluster_runs_in_autos_process(monkeypatch):
    """A large cluster of the paper profile (300 may-pairs on 100 nodes): ABC's pdr is the
    solo (``schedule.SOLOS``) and runs as the resident, its program a child of this
    process (``solvers.child``), not in a forked worker. It needs about 0.5 of its 4 CPU
    seconds alone here."""
    import symreach.solvers.workers as workers
    from symreach.generators.hard_clusters import generate_hard_cluster
    from symreach.loader import load_document

    def no_fork(*args, **kwargs):
        raise AssertionError("forked")

    monkeypatch.setattr(workers, "spawn", no_fork)
    inst = load_document(generate_hard_cluster(100, 60, 0, "paper"))
    res = AutoEngine().check(inst, run=Limits(timeout_s=120))
    port = res.stats["portfolio"]
    assert res.verdict is Verdict.NOT_DEPLOYABLE and res.engine == "auto/abc-pdr", res.reason
    assert port["solos"] == ["abc-pdr"] and port["resident"] == "abc-pdr" and port["slices"] == 0
    assert res.stats["abc_cpu_s"] > 0 and "ABC's verdict" in res.reason
    assert not mp.active_children()


def test_a_benchmark_job_imports_what_checks_import_on_first_use_for_every_engine():
    """The benchmark's job imports the modules a check imports on first use (the certificate's
    normalisation, ABC's AIGER lowering) before it times any engine's check, every engine alike
    (``registry.ANSWER_MODULES``); constructing ``auto``, with or without ``preload``, imports
    neither (the command line's start-up). A module check in fresh interpreters, not a timing."""
    from symreach.solvers.registry import ANSWER_MODULES

    def loaded(code: str, modules: tuple[str, ...]) -> list[str]:
        probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))"
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    auto = "from symreach.solvers.portfolio import AutoEngine\nAutoEngine(preload={})"
    assert loaded(auto.format(True), ANSWER_MODULES) == []
    assert loaded(auto.format(False), ANSWER_MODULES) == []
    for engine in ("bdd", "lazy", "abc-pdr", "auto"):
        job = f"from symreach.bench.runner import resolve_engine\nresolve_engine({engine!r})"
        assert loaded(job, ANSWER_MODULES) == sorted(ANSWER_MODULES), engine


def test_the_workers_reuse_the_parents_preprocessing(monkeypatch):
    """Preprocessing runs once: the engines get it through ``RunContext.prepared``."""
    from symreach.encodings import preprocess as pre_mod
    from symreach.solvers import fast_paths

    calls = []
    real = pre_mod.preprocess

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fast_paths, "preprocess", counting)
    inst = pyramid_instance(2, 4)
    res = AutoEngine(engines=("bmc",), jobs=1).check(inst, run=Limits(timeout_s=120))
    assert res.verdict is Verdict.DEPLOYABLE and len(calls) == 1


def test_solo_plan_by_kind_of_system():
    from symreach.solvers.schedule import ABC_ENGINE, solo_engines, trial_s

    engines = ["bdd", "ic3", "bmc", ABC_ENGINE]
    assert solo_engines(20, engines, 1, "paper") == [("ic3", trial_s(20)), ("bdd", 1.5)]
    assert solo_engines(20, engines, 5, "paper") == [("bmc", trial_s(20, "bmc")), ("ic3", 1.5)]
    assert trial_s(84, "bmc") == 1.5 * trial_s(84)  # BMC's trial: half as long again
    assert solo_engines(20, engines, 5, "kubernetes") == [("ic3", 1.5)]
    assert solo_engines(500, engines, 50, "paper") == [(ABC_ENGINE, 4.0)]
    assert solo_engines(500, engines, 50, "kubernetes") == [("ic3", 4.0)]
    assert solo_engines(500, engines, 1, "paper") == []  # encoded nets: the race as before
    assert solo_engines(500, ["ic3", "bdd"], 50, "paper") == []  # without ABC, no plan for it


def test_solo_engines_answer_small_pebblings_without_a_race():
    """On a small one-node system IC3's trial, then the BDDs alone, decide both
    answers before any race; every witness replays."""
    checked = 0
    for k, verdict in ((5, Verdict.NOT_DEPLOYABLE), (6, Verdict.DEPLOYABLE), (7, Verdict.DEPLOYABLE)):
        inst = pyramid_instance(4, k)
        res = AutoEngine(engines=("bdd", "ic3", "bmc", "lazy"), tiny_pairs=0).check(inst, run=Limits(timeout_s=120))
        port = res.stats["portfolio"]
        assert res.verdict is verdict and port["solos"] == ["ic3", "bdd"], port
        assert port["answered_by"] in ("ic3", "bdd") and port["slices"] == 0, port
        if verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, res.trace, inst.query)
        checked += 1
    assert checked == 3
    assert not mp.active_children()


def test_where_goal_regression_ran_out_of_room_the_bdd_solo_searches_backward():
    """A small one-node system whose goal needs more pods on its node than fit (the
    not-deployable pebblings): the BDDs alone, backward only (``SOLO_OPTIONS_NO_PLAN``),
    and their certificate (the complement of the backward set) checks."""
    from symreach.solvers.schedule import solo_options

    assert solo_options(20, 1, regression_full=True) == {"bdd": {"direction": "backward"}}
    assert solo_options(20, 1, regression_full=False) == {}
    assert solo_options(20, 5, regression_full=True) == {}
    assert solo_options(500, 1, regression_full=True) == {}
    checked = 0
    for h in (4, 5):
        inst = pyramid_instance(h, h + 1)
        res = AutoEngine(engines=("bdd", "ic3", "bmc", "lazy"), tiny_pairs=0,
                         goal_plan=True).check(inst, run=Limits(timeout_s=120))
        port = res.stats["portfolio"]
        assert res.verdict is Verdict.NOT_DEPLOYABLE and port["answered_by"] == "bdd", port
        assert port["solos"] == ["bdd"] and port["options"] == {"bdd": {"direction": "backward"}}
        assert res.stats["decided_direction"] == "backward" and "forward" not in res.stats["side_images"]
        ok, why = res.certificate.check(inst, inst.query)
        assert ok, why
        checked += 1
    assert checked == 2
    assert not mp.active_children()


def test_after_the_lazy_search_alone_by_the_goals_depth_and_the_nets_width():
    """Large one-node systems only: BMC alone next on a shallow goal of a wide net
    (BART: 2,234 may-pairs over 20 rounds, goal in round 10), else the lazy search
    goes on alone (IBM703's deep goal, Lamport's shallow one of a narrow net, the
    philosophers' violation)."""
    from symreach.solvers.schedule import BMC_AFTER_LAZY, LAZY_AFTER_LAZY, after_lazy

    engines = ["bdd", "ic3", "bmc", "lazy"]
    cases = [((2234, engines, 1, 10, 19), list(BMC_AFTER_LAZY)),    # BART TrainState_1_1_3
             ((2234, engines, 1, 16, 19), list(BMC_AFTER_LAZY)),    # BART TrainState_1_1_1
             ((1427, engines, 1, 154, 157), list(LAZY_AFTER_LAZY)),  # IBM703 task_s00000745
             ((2234, engines, 1, 17, 19), list(LAZY_AFTER_LAZY)),   # deep in a wide net
             ((992, engines, 1, 19, 31), list(LAZY_AFTER_LAZY)),    # Lamport fordo: narrow
             ((159, engines, 1, 10, 11), list(LAZY_AFTER_LAZY)),    # philosophers n8 violation
             ((2234, ["lazy", "ic3"], 1, 10, 19), []),              # no BMC: no plan for it
             ((2234, engines, 2, 10, 19), []),                      # several nodes
             ((100, engines, 1, 10, 0), []),                        # small systems
             ((2234, engines, 1, None, None), [])]                  # depth unknown
    for args, plan in cases:
        assert after_lazy(*args) == plan, args
    assert len(cases) == 10


def test_the_lazy_search_alone_is_shorter_before_bmc_on_its_kind():
    from symreach.solvers.schedule import WIDE_LAZY_ALONE_S, bmc_goal, lazy_alone_for

    assert bmc_goal(2234, 1, 10, 19) and not bmc_goal(1427, 1, 154, 157)
    assert lazy_alone_for(1.5, 2234, 1, 10, 19) == WIDE_LAZY_ALONE_S < 1.5
    assert lazy_alone_for(0.0, 2234, 1, 10, 19) == 0.0        # a shorter choice stays
    assert lazy_alone_for(1.5, 1427, 1, 154, 157) == 1.5       # deep goal
    assert lazy_alone_for(1.5, 2234, 1, None, None) == 1.5     # depth unknown


def test_bmc_alone_instead_of_the_lazy_search_on_deep_goals_of_wide_nets():
    """BART's goals from round 10 on are past the lazy search's reach: BMC alone first."""
    from symreach.solvers.schedule import BMC_INSTEAD_OF_LAZY, bmc_instead_of_lazy, lazy_first

    cases = [((2234, 1, 10, 19), False),    # BART TrainState_1_1_3
             ((2234, 1, 16, 19), False),    # BART TrainState_1_1_1
             ((2234, 1, 7, 19), True),      # BART TrainState_1_1_4: the lazy search's
             ((2234, 1, 17, 19), True),     # deeper than BMC's kind
             ((2234, 2, 10, 19), True),     # several nodes
             ((1427, 1, 154, 157), True),   # IBM703: narrow
             ((159, 1, 10, 11), True),      # philosophers n8: narrow
             ((2234, 1, None, None), True)]  # depth unknown
    for args, first in cases:
        assert lazy_first(*args) is first, args
    assert len(cases) == 8
    assert bmc_instead_of_lazy(["bdd", "bmc", "lazy"]) == list(BMC_INSTEAD_OF_LAZY)
    assert bmc_instead_of_lazy(["bdd", "lazy"]) == []
