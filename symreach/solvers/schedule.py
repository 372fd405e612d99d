"""Which engines ``auto`` runs, which one holds a core of its own, which one runs
in ``auto``'s own process, and who holds a core when.

The schedule is learnt from the benchmark families by one cheap feature, the
number of (pod type, node) pairs that preprocessing leaves possible
(``len(pre.may)``, about the number of state bits), and the number of nodes;
it is deterministic. The measurements behind each rule are in
``benchmarks/results/auto_schedule.md``: re-measure there before changing one.
Each row names the *favourite*, which holds one core of its own (with two
cores or more: for the whole run on large systems, until the late engines
start on small ones), and what holds the other:

- **more than ``SMALL_PAIRS`` pairs on one node** (encoded nets, rings,
  philosophers): BMC with parallel steps, which finds their witnesses; the
  BDDs of these systems blow up.
- **more than ``SMALL_PAIRS`` pairs on several nodes** (large clusters): IC3,
  with ABC's pdr as the *second*; between them they are the best engine on
  every such instance, and BMC as the favourite made ``auto`` several times
  slower.
- **up to ``SMALL_PAIRS`` pairs**: what is decided at all is decided within
  seconds by one of two engines chosen by the number of nodes, so both start
  at once, each on a core: on one node the BDDs (the favourite: the
  not-deployable pebblings) and IC3 (the *resident*: the deployable ones); on
  several nodes BMC (the favourite: the paper clusters' witnesses) and IC3
  (the resident: the not-deployable ones and the Kubernetes-profile
  clusters). The other engines start ``portfolio.LATE_AFTER_S`` later
  (forking them at once slowed the two that decide; ``late_engines``), and
  from then on all share all cores equally (BMC stays out on one node and the
  BDDs on several: ``race_engines``), because each of them is the best on
  some of these instances and none may wait for another.

The *resident* runs in a thread of ``auto``'s own process
(``workers.ResidentWorker``): no fork stands between it and its answer,
which matters where the best engine needs a fraction of a second. The
lazy-deletion search is always the resident while it runs: it starts first,
alone, in ``auto``'s process (``portfolio.LAZY_ALONE_S``), declines at once
outside its fragment and answers most encoded-net goals, shallow or deep,
before anything forks. When it is still searching at the end of that time it
keeps its search (nothing restarts). On large one-node systems solos follow
(``after_lazy``; racing both engines doubled ``auto``'s CPU there): BMC alone,
the lazy search paused, where the goal is shallow in a wide net, else the lazy
search alone for longer. Then it becomes the second in the race: it holds the core
beside the favourite alone for the first ``SECOND_ALONE_S["lazy"]`` seconds,
then takes every other slice of the rotation (with half a core from the start
its deep wins took several times as long). Where that shallow goal of a wide net
is from round ``WIDE_LAZY_ROUND`` on, past the lazy search's reach (``lazy_first``),
BMC runs alone first, in ``auto``'s process, and the lazy search joins only the
race. The price is that bdd, ic3 and ABC's pdr start that much later on those
systems, where they are rarely the best engine. On large clusters ABC's pdr is the second, alone for
``SECOND_ALONE_S["abc-pdr"]`` seconds: it decides their hardest instances.

Before all of this, goal regression (``goal_plan``) tries a witness in ``auto``'s
process: required affinity placed first, in Sethi-Ullman order, no backtracking.
It decides the deployable pebblings in milliseconds (ABC's pdr, the best single
engine on the deployable trees, needs 0.2-1.3 s). When it gives up because a step
did not fit on its node, that is the feature of the next rule: on a small one-node
system the BDDs then run alone first, for up to 240 s (``SOLOS_NO_PLAN``); on a
small cluster IC3 runs first, without BMC's trial.

Before the race (with two cores or more, once the lazy search is out), *solo*
engines run alone, one after the other, each for its CPU seconds (``SOLOS``):
where one engine answers nearly every instance of a kind, engines racing
beside it only cost CPU (issue 31: ``auto`` against the best single engine in
CPU seconds). On small one-node systems IC3 has a short trial (its deployable
pebblings take 0.01-0.05 s) and the BDDs then run alone for 1.5 s (the
not-deployable ones); on small clusters of the paper profile BMC has the
trial and IC3 follows, on Kubernetes-profile ones IC3 runs first; on large
clusters ABC's pdr (paper) or IC3 (Kubernetes) runs alone for 4 s. They run
in ``auto``'s process (a later one replaces an earlier one, which restarts
forked in the race: a fork costs more than the trial); ABC's pdr too, its
program stopped and killed through the resident's gate (``solvers.child``):
forked, it cost ``auto`` 1.09-1.11x ABC's pdr alone on paper 100x60.

Beside the favourite, the other ``jobs - 1`` cores rotate round robin among
the other engines in slices, so each gets ``(jobs - 1) / (N - 1)`` of a
core; a second gets half of that rotation once its time alone is over.
Without a favourite (one core; small systems once the late engines run),
all share equally. An engine that gives up
leaves the rotation; when the favourite gives up, every core rotates among
the rest.

ABC's ``pdr`` joins when ``berkeley-abc`` is installed: it is the only
engine that decides some instances within the limits, while ABC's ``bmc3``
and ``reach`` decide nothing that ``pdr`` or our engines do not decide
faster, so they stay out.
"""

from __future__ import annotations

from typing import Sequence

from symreach.model import KUBERNETES, PAPER

OUR_ENGINES = ("bdd", "ic3", "bmc", "lazy")
LAZY_ENGINE = "lazy"
ABC_ENGINE = "abc-pdr"
SMALL_PAIRS = 128  # the feature threshold above (family data in benchmarks/results/auto_schedule.md)
# the favourite by (small system, one node) (docstring)
FAVOURITES = {(True, True): "bdd", (True, False): "bmc", (False, True): "bmc", (False, False): "ic3"}
SMALL_RESIDENT = "ic3"  # the resident of a small system once the lazy search is out (docstring)
# how long the second engine holds a core alone (docstring)
SECOND_ALONE_S = {LAZY_ENGINE: 30.0, ABC_ENGINE: 4.0}


# engines that run alone before the race, in order, each for its CPU seconds, by (small, one
# node, profile); None: any profile; TRIAL: IC3's short trial, which grows with the system
# (``trial_s``). ``solo_engines``; figures in benchmarks/results/auto_schedule.md
TRIAL = -1.0
SOLOS: dict[tuple[bool, bool, str | None], tuple[tuple[str, float], ...]] = {
    (True, True, None): ((SMALL_RESIDENT, TRIAL), ("bdd", 1.5)),
    (True, False, PAPER): (("bmc", TRIAL), ("ic3", 1.5)),
    (True, False, KUBERNETES): (("ic3", 1.5),),
    (False, False, PAPER): ((ABC_ENGINE, 4.0),),
    (False, False, KUBERNETES): (("ic3", 4.0),),
}
# the plan instead when goal regression gave up because a step did not fit on its node:
# on small one-node systems these are (in run_all) exactly the not-deployable pebblings,
# where the BDDs are the best from 0.06 s on (up to pyramid h = 13, 37-66 s, which nothing
# else decides) and IC3's trial only delayed them; a race beside them takes CPU and, once
# all engines share the cores, a third of the BDDs' core (auto_schedule.md). The budget
# must cover the largest of them: a solo that runs out restarts forked in the race, so
# pyramid h = 14 (61 CPU s for the BDDs at load 14, bdd_pyramids.md) would pay twice
# under a 60 s budget
SOLOS_NO_PLAN: dict[tuple[bool, bool], tuple[tuple[str, float], ...]] = {
    (True, True): (("bdd", 240.0),),
    # small clusters whose goal needs more pods on its node at once than fit (the paper
    # profile's hard clusters of one seed, not deployable): IC3 decides them, and the
    # BMC trial before it was two thirds of auto's CPU (auto_targets/hard_and_pebbling.md)
    (True, False): (("ic3", 1.5),),
}
# and the options of those solos: on a small one-node system the BDDs search backward only.
# The bidirectional default gives the forward side images until its work matches the
# backward side's; on the not-deployable pebblings the backward side decides and the
# forward one only finds witnesses, so its images are lost: 4-11 % of the BDDs' CPU
# (tree h = 6, k = 7: 0.09-0.13 of 0.94-1.18 CPU s; pyramid h = 12: 0.41 of 9.9), while
# backward alone runs the same images of its side and yields the same kind of
# certificate (the complement of the backward set). A deployable goal is found backward
# too, when the backward fixpoint reaches sigma0 (auto_targets/abc_and_pebbling.md)
SOLO_OPTIONS_NO_PLAN: dict[tuple[bool, bool], dict[str, dict]] = {
    (True, True): {"bdd": {"direction": "backward"}},
}
# after the lazy search's time alone (``portfolio.LAZY_ALONE_S``) without an answer, on a
# large one-node system (an encoded net): the solos before the race. Racing BMC beside the
# lazy search doubled ``auto``'s CPU there, and each decided what the other did not. BMC
# decides only shallow goals (its unrolling grows with the depth) of wide nets: many pairs
# become possible in each may-fixpoint round (concurrent components, which its parallel
# steps take at once and among which the lazy search branches): BART, 118 pairs a round,
# the widest net of the suite by far (the others 7-49). There BMC runs alone, the lazy
# search paused; everywhere else the lazy search goes on alone (auto_targets/nets.md)
SHALLOW_GOAL_ROUND = 16   # the goal's may-fixpoint round (``preprocess``: ``goal_round``)
WIDE_PAIRS_PER_ROUND = 64  # may-pairs per may-fixpoint round (``may_rounds``)
BMC_AFTER_LAZY = (("bmc", 2.0),)          # shallow goals of wide nets
LAZY_AFTER_LAZY = ((LAZY_ENGINE, 6.5),)   # everything else
# the lazy search's time alone before BMC on those (``lazy_alone_for``): on BART it finds the
# shallower goals in 0.45-0.54 CPU s (its goal rounds 4 and 7), BMC them in 0.6-1.1 s
WIDE_LAZY_ALONE_S = 1.0
# from this goal round on, a wide net's goal is past the lazy search's reach: its states grow
# with the pairs that each round makes possible (BART, after shared preprocessing: rounds 4 and
# 7 0.3-0.45 CPU s, round 10 4.6 s, round 13 not in 8.8 s; BMC 0.55, 1.5, 1.4, 2.9 s), so BMC
# runs alone first, in ``auto``'s process, and the lazy search only in the race
# (``lazy_first``; auto_targets/lazy_bmc.md)
WIDE_LAZY_ROUND = 9
# BMC's time alone there (``bmc_instead_of_lazy``): longer than after the lazy search, since
# BMC is the only engine that decides these goals (BART rounds 10-16: bdd, ic3 and ABC's pdr
# none within 4 CPU s in results.csv, nor in shallow_nets.md) and round 13 takes it 3.7 CPU s
BMC_INSTEAD_OF_LAZY = (("bmc", 6.0),)
TRIAL_BASE_S = 0.03
TRIAL_PER_PAIR_S = 0.001
# BMC's trial is half as long again: at load 20 it needed 0.095-0.105 CPU s on paper
# s1 50x30 (84 pairs), and one auto run of three lost its answer to a 0.114 s trial (IC3
# then took 0.53 s); where BMC's trial fails, goal regression now mostly sends the small
# clusters to IC3 first (``SOLOS_NO_PLAN``) (auto_targets/hard_and_pebbling.md). Since goal
# regression places zone witnesses on other nodes (``goal_plan._site``), it answers the paper
# s1 clusters up to 200x100 before any trial (auto_targets/goal_plan_zones.md)
TRIAL_SCALE = {"bmc": 1.5}


def trial_s(may_pairs: int, engine: str = SMALL_RESIDENT) -> float:
    """A short trial of the engine that answers most instances of a kind quickly
    (IC3 the deployable pebblings: 0.01-0.05 s of CPU; BMC the paper clusters'
    witnesses: 0.04-0.10 s), growing with the state bits; the engine after it
    loses only this much where the trial fails."""
    return (TRIAL_BASE_S + TRIAL_PER_PAIR_S * may_pairs) * TRIAL_SCALE.get(engine, 1.0)


def solo_engines(may_pairs: int, engines: Sequence[str], nodes: int, profile: str,
                 regression_full: bool = False) -> list[tuple[str, float]]:
    """The engines that run alone, one after the other, before the race (``SOLOS``):
    where one engine is the best on nearly every instance of a kind, a race beside
    it only costs CPU. ``regression_full``: goal regression (``goal_plan``) gave up
    because a step did not fit on its node, so on a small one-node system the BDDs go
    first, on a small cluster IC3 (``SOLOS_NO_PLAN``). An engine not in ``engines`` is
    left out of the plan."""
    small, one = is_small(may_pairs), nodes <= 1
    plan = SOLOS.get((small, one, profile), SOLOS.get((small, one, None), ()))
    if regression_full:
        plan = SOLOS_NO_PLAN.get((small, one), plan)
    return [(name, trial_s(may_pairs, name) if seconds == TRIAL else seconds)
            for name, seconds in plan if name in engines]


def solo_options(may_pairs: int, nodes: int, regression_full: bool) -> dict[str, dict]:
    """The constructor options of the solo engines (``SOLO_OPTIONS_NO_PLAN``), by name."""
    if not regression_full:
        return {}
    return SOLO_OPTIONS_NO_PLAN.get((is_small(may_pairs), nodes <= 1), {})


def bmc_goal(may_pairs: int, nodes: int, goal_round: int | None, may_rounds: int | None) -> bool:
    """A shallow goal of a wide net, large and on one node (``SHALLOW_GOAL_ROUND``,
    ``WIDE_PAIRS_PER_ROUND``): BMC's kind; False when the goal's depth is unknown."""
    if is_small(may_pairs) or nodes > 1 or goal_round is None or may_rounds is None:
        return False
    return goal_round <= SHALLOW_GOAL_ROUND and may_pairs >= WIDE_PAIRS_PER_ROUND * (may_rounds + 1)


def lazy_first(may_pairs: int, nodes: int, goal_round: int | None, may_rounds: int | None) -> bool:
    """Whether the lazy search starts first, alone: not on a goal of BMC's kind
    (``bmc_goal``) from round ``WIDE_LAZY_ROUND`` on, where BMC alone follows at once."""
    return not (bmc_goal(may_pairs, nodes, goal_round, may_rounds)
                and goal_round is not None and goal_round >= WIDE_LAZY_ROUND)


def lazy_alone_for(default_s: float, may_pairs: int, nodes: int, goal_round: int | None,
                 may_rounds: int | None) -> float:
    """How long the lazy search runs alone first: shorter before BMC on its kind."""
    if bmc_goal(may_pairs, nodes, goal_round, may_rounds):
        return min(default_s, WIDE_LAZY_ALONE_S)
    return default_s


def after_lazy(may_pairs: int, engines: Sequence[str], nodes: int, goal_round: int | None,
               may_rounds: int | None) -> list[tuple[str, float]]:
    """The solos while the lazy search still runs after its time alone
    (``lazy_alone_for``), on large one-node systems (``BMC_AFTER_LAZY`` on
    ``bmc_goal``, else ``LAZY_AFTER_LAZY``); none elsewhere or when the goal's depth
    is unknown."""
    if is_small(may_pairs) or nodes > 1 or goal_round is None or may_rounds is None:
        return []
    plan = BMC_AFTER_LAZY if bmc_goal(may_pairs, nodes, goal_round, may_rounds) else LAZY_AFTER_LAZY
    return [(name, seconds) for name, seconds in plan if name in engines]


def bmc_instead_of_lazy(engines: Sequence[str]) -> list[tuple[str, float]]:
    """The solos where the lazy search did not start (``lazy_first``): BMC alone."""
    return [(name, seconds) for name, seconds in BMC_INSTEAD_OF_LAZY if name in engines]


def is_small(may_pairs: int) -> bool:
    """Small systems: two engines at once, the others later (docstring)."""
    return may_pairs <= SMALL_PAIRS


def favourite(may_pairs: int, engines: Sequence[str], nodes: int = 1) -> str | None:
    """The engine that holds a core of its own on a system of ``may_pairs``
    possible pairs over ``nodes`` nodes, or None when it is not available."""
    wanted = FAVOURITES[(is_small(may_pairs), nodes <= 1)]
    return wanted if wanted in engines else None


def race_engines(may_pairs: int, engines: Sequence[str], nodes: int = 1) -> list[str]:
    """The engines of the race. Small systems leave out the engine that is never
    the best on their kind (``benchmarks/results/auto_schedule.md``), which leaves
    the others a larger share once all share the cores: on one node BMC (IC3
    finds the same witnesses, and BMC cannot prove "not deployable"), on several
    nodes the BDDs."""
    if not is_small(may_pairs):
        return list(engines)
    out = "bmc" if nodes <= 1 else "bdd"
    kept = [e for e in engines if e != out]
    return kept or list(engines)


def resident_engine(may_pairs: int, engines: Sequence[str], first: str | None,
                    lazy_running: bool) -> str | None:
    """The engine that runs in ``auto``'s own process: the lazy search while it
    runs, else IC3 on small systems (docstring); None: every engine forks."""
    if lazy_running and LAZY_ENGINE in engines:
        return LAZY_ENGINE
    if is_small(may_pairs) and SMALL_RESIDENT in engines and SMALL_RESIDENT != first:
        return SMALL_RESIDENT
    return None


def late_engines(may_pairs: int, engines: Sequence[str], first: str | None,
                 resident: str | None) -> list[str]:
    """The engines that start only ``portfolio.LATE_AFTER_S`` after the race: on
    small systems every one but the favourite and the resident, ABC's pdr first."""
    if not is_small(may_pairs):
        return []
    late = [e for e in engines if e not in (first, resident)]
    return sorted(late, key=lambda name: name != ABC_ENGINE)


def second_engine(may_pairs: int, engines: Sequence[str], nodes: int,
                  lazy_running: bool) -> str | None:
    """The engine that holds the core beside the favourite alone for a while, then
    takes half of its rotation (see the module docstring): the lazy search while
    it runs; ABC's pdr on large clusters."""
    if lazy_running and LAZY_ENGINE in engines:
        return LAZY_ENGINE
    if not is_small(may_pairs) and nodes > 1 and ABC_ENGINE in engines:
        return ABC_ENGINE
    return None


def round_robin(engines: Sequence[str], jobs: int, slice_index: int) -> set[str]:
    """The engines that hold a core during slice ``slice_index``, all equal."""
    n = len(engines)
    if n <= jobs:
        return set(engines)
    return {engines[(slice_index * jobs + j) % n] for j in range(jobs)}


def holders(engines: Sequence[str], first: str | None, jobs: int, slice_index: int,
            second: str | None = None, second_alone: int = 0) -> set[str]:
    """The engines that hold a core during slice ``slice_index``: ``first`` (when
    still running and there is more than one core) always, the others round robin
    on the remaining cores. ``second`` (when running) holds one of those cores
    alone for the first ``second_alone`` slices, then takes every other slice of
    that rotation, so it gets half of the remaining cores and the rest share the
    other half."""
    if first is None or first not in engines or jobs < 2:
        return round_robin(engines, jobs, slice_index)
    others = [e for e in engines if e != first]
    if second in others and len(others) > jobs - 1:
        rest = [e for e in others if e != second]
        if slice_index < second_alone or slice_index % 2:
            return {first, second} | round_robin(rest, jobs - 2, slice_index // 2)
        return {first} | round_robin(rest, jobs - 1, slice_index // 2)
    return {first} | round_robin(others, jobs - 1, slice_index)
