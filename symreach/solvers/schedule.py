"""Which engines ``auto`` runs, which one gets a core of its own, and who holds a core when.

The schedule is learnt from the benchmark families by one cheap feature, the
number of (pod type, node) pairs that preprocessing leaves possible
(``len(pre.may)``, about the number of state bits), and is deterministic:

- **more than 128 pairs on one node** (the MCC nets of Appendix B, rings
  and philosophers of 8 and more): BMC with parallel steps is the favourite
  and holds one core for the whole run. It finds the witnesses
  (shallow_nets.md; mcc family 18 of 32 against bdd 11 and ic3 11 in
  summary.md) and is the best engine on 17 of the 21 instances of that size
  that some engine decides in results.csv; the BDDs of these systems blow
  up.
- **more than 128 pairs on several nodes** (clusters: the hard family from
  100 nodes on): IC3 is the favourite and ABC's pdr the second. On the
  eight such instances some engine decides in results.csv, IC3 is the best
  on three (hard/kubernetes 100x60 and 200x100: 0.12-0.86 s) and ABC's pdr
  on the other five (hard/paper 100x60: 1.05 s against IC3 2.2 s and BMC
  3.0 s; hard/kubernetes 500x200: pdr alone, 2.8-3.4 s); BMC is never the
  best there, and with it as the favourite ``auto`` took 4-8x the best
  engine's time (ic3 0.86 s, ``auto`` 7.0 s).
- **up to 128 pairs** (pebbling, small nets, small rings, mutexes and
  philosophers): no engine dominates (BDD on pebbling and on the
  violations, BMC on the small nets' witnesses, ABC's pdr on philosophers'
  violations n = 4, 6), so on several nodes every engine gets an equal
  share of the race. Two engines
  chosen by the number of nodes (``pilot_engines``) first run side by side
  in ``auto``'s own process (``portfolio.AutoEngine._pilot``), which answers
  most small instances, both verdicts, before anything forks, while the
  early worker (``early_engine``) holds the second core; BMC then stays out
  of the race (``race_engines``). On one node the BDDs are the favourite of
  that race, which starts only after the pilot's 10 s (``portfolio.
  PILOT_BESIDE_S``): the instances of one node that no engine decides within
  seconds are the not-deployable pebblings, which only the BDDs decide
  (pyramid h = 8 to 13 not deployable: 0.5 s to 50-65 CPU s; IC3 and ABC's pdr
  none of them within 15 s, results.csv and bdd_alternation.md), and
  with a third of a core the BDDs took 121 s (unknown) for pyramid h = 13,
  k = 14, which they decide alone in 52-66 CPU s.

The lazy-deletion search joins the race only when its in-process pilot
(``portfolio.AutoEngine._lazy_pilot``) stopped at the pilot's limit (not when
it declined the instance or exhausted its space); it is then the *second*:
it holds the second core alone for the first ``SECOND_ALONE_S["lazy"]``
seconds of the race, then takes every other slice of the rotation beside
the favourite. On the shallow goals of the shared nets the lazy search's
wins take 1-8 s alone (Lamport, Peterson, TokenRing, IBM703;
shallow_nets.md), the deep ones of petri_goals.md up to 31 s (Peterson
IsEndLoop_2_1_2: 23-31 s alone, ``auto`` 98.7 s when the lazy search had
the core alone for only 8 s); with only half a core from the start
``auto`` took 2-4x as long. The price is that bdd, ic3 and ABC's pdr start
that much later on such instances, and on these systems (one node, more
than 128 pairs: the encoded nets, rings, philosophers) they are the best
engine on none of the instances of results.csv that take more than 0.03 s
(BART TrainState_1_1_5 in shallow_nets.md: ic3 alone 3.0 s, BMC 3.4 s).
On large clusters ABC's pdr is the second and holds the core alone for
``SECOND_ALONE_S["abc-pdr"]`` seconds: it decides their hardest instances
in 1-3.4 s alone.

With a favourite, the other ``jobs - 1`` cores rotate round robin among the
other engines in slices, so each gets ``(jobs - 1) / (N - 1)`` of a core:
1/2 with three engines on two cores, 1/3 with ABC's ``pdr`` as a fourth.
Without one, each gets ``jobs / N``. An engine that gives up leaves the
rotation; when the favourite gives up, every core rotates among the rest.
With one core there is no core to reserve.

ABC's ``pdr`` joins when ``berkeley-abc`` is installed: it is the only
engine that decides some instances within the limits (philosophers'
violations n >= 4, hard paper clusters 100x60; results.csv and
hard_clusters.md), while ABC's ``bmc3`` and ``reach`` decide nothing that
``pdr`` or our engines do not decide faster, so they stay out.
"""

from __future__ import annotations

from typing import Sequence

OUR_ENGINES = ("bdd", "ic3", "bmc", "lazy")
LAZY_ENGINE = "lazy"
ABC_ENGINE = "abc-pdr"
SMALL_PAIRS = 128  # the feature threshold above (family data in the docstring)
CLUSTER_FAVOURITE = "ic3"  # large systems of several nodes (docstring)
SMALL_ONE_NODE_FAVOURITE = "bdd"  # small systems of one node, once the pilot is over (docstring)
# how long the second engine holds a core alone (docstring)
SECOND_ALONE_S = {LAZY_ENGINE: 30.0, ABC_ENGINE: 4.0}
PILOT_ONLY_ON_SMALL = ("bmc",)  # engines that only pilot on small systems (``race_engines``)
# the engines ``auto`` interleaves in its own process on small systems (``pilot_engines``)
PILOTS_ONE_NODE = ("ic3", "bdd")
PILOTS_CLUSTER = ("ic3", "bmc")


def is_small(may_pairs: int) -> bool:
    """Small systems: in-process pilots first, equal shares in the race."""
    return may_pairs <= SMALL_PAIRS


def race_engines(may_pairs: int, engines: Sequence[str]) -> list[str]:
    """The engines that race after the pilots failed.

    On small systems BMC only pilots: in results.csv it is the best engine on
    no small instance that takes it more than 0.12 s (mutex n=12 crit, paper
    clusters 20x10 and 50x30: 0.05-0.11 s, which the pilot answers), IC3 finds
    the same witnesses, and BMC cannot prove "not deployable". Out of the race
    it leaves the others a larger share: with bdd, ic3 and ABC's pdr on two
    cores each gets 2/3 of a core instead of 1/2."""
    if not is_small(may_pairs):
        return list(engines)
    kept = [e for e in engines if e not in PILOT_ONLY_ON_SMALL]
    return kept or list(engines)


def pilot_engines(nodes: int, engines: Sequence[str]) -> list[str]:
    """The engines of the interleaved pilot on a small system of ``nodes`` nodes.

    From results.csv (run_all, small systems): on one node (pebbling, small
    nets) the best engine is IC3 or the BDDs -- IC3 on the deployable
    pebblings (0.02-0.08 s), the BDDs on the not-deployable ones (0.06-1.6 s,
    where IC3 takes 5-90x longer) -- and BMC is never the best beyond 0.03 s;
    on several nodes (the small hard clusters) IC3 or BMC is (BMC 0.09-0.14 s
    on paper clusters 20x10 and 50x30, IC3 on the rest) and the BDDs never
    are. Whichever of the two is faster, running both side by side costs at
    most about twice its time."""
    wanted = PILOTS_ONE_NODE if nodes <= 1 else PILOTS_CLUSTER
    return [e for e in wanted if e in engines]


def early_engine(engines: Sequence[str], lazy_running: bool) -> str | None:
    """The worker that takes the second core while a small system's pilot holds
    the first: the lazy search when its own pilot stopped only at its limit,
    else ABC's pdr (the best engine on the small trees h = 5, 6 deployable:
    0.40 and 2.5 s against 1.0 and 6.6 s for ours). None: nothing to start."""
    if lazy_running and LAZY_ENGINE in engines:
        return LAZY_ENGINE
    return ABC_ENGINE if ABC_ENGINE in engines else None


def favourite(may_pairs: int, engines: Sequence[str], nodes: int = 1) -> str | None:
    """The engine that holds a core of its own on a system of ``may_pairs``
    possible pairs over ``nodes`` nodes, or None for equal shares."""
    if is_small(may_pairs):
        wanted = SMALL_ONE_NODE_FAVOURITE if nodes <= 1 else None
    else:
        wanted = CLUSTER_FAVOURITE if nodes > 1 else "bmc"
    return wanted if wanted in engines else None


def second_engine(may_pairs: int, engines: Sequence[str], nodes: int,
                  lazy_running: bool) -> str | None:
    """The engine that takes half of the rotation beside the favourite (see the
    module docstring): the lazy search when its pilot stopped only at its
    limit; on large clusters ABC's pdr."""
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
