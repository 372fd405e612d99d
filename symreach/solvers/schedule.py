"""Which engines ``auto`` runs, which one gets a core of its own, and who holds a core when.

The schedule is learnt from the benchmark families by one cheap feature, the
number of (pod type, node) pairs that preprocessing leaves possible
(``len(pre.may)``, about the number of state bits), and is deterministic:

- **more than 128 pairs** (the MCC nets of Appendix B, rings and
  philosophers of 8 and more, large clusters): BMC with parallel steps is
  the favourite and holds one core for the whole run. It finds the
  witnesses (shallow_nets.md; mcc family 18 of 32 against bdd 11 and ic3 11
  in summary.md) and is the best engine on 17 of the 21 instances of that
  size that some engine decides in results.csv; the BDDs of these systems
  blow up.
- **up to 128 pairs** (pebbling, small nets, small rings, mutexes and
  philosophers): no engine dominates (BDD on pebbling and on the
  violations, BMC on the small nets' witnesses, ABC's pdr on philosophers'
  violations n = 4, 6), so every engine gets an equal share. BMC first runs
  alone for 0.1 s in ``auto``'s own process (``portfolio.AutoEngine``'s
  pilot), which answers most easy deployable goals before anything forks.

The lazy-deletion search joins the race only when its in-process pilot
(``portfolio.AutoEngine._lazy_pilot``) stopped at the pilot's limit (not when
it declined the instance or exhausted its space); it is then the *second*:
it holds the second core alone for the first ``SECOND_ALONE_S`` seconds of
the race, then takes every other slice of the rotation beside the
favourite. On the shallow goals of the shared nets the lazy search's wins
take 1-8 s alone (Lamport, Peterson, TokenRing, IBM703; shallow_nets.md),
and with only half a core from the start ``auto`` took 2-4x as long; the
price is that bdd, ic3 and ABC's pdr start that much later on such
instances (BART TrainState_1_1_5: ic3 alone 3 s).

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
SECOND_ALONE_S = 8.0  # how long the second engine holds a core alone (docstring)


def favourite(may_pairs: int, engines: Sequence[str]) -> str | None:
    """The engine that holds a core of its own on a system of ``may_pairs``
    possible pairs, or None for equal shares."""
    if may_pairs <= SMALL_PAIRS or "bmc" not in engines:
        return None
    return "bmc"


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
