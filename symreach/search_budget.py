"""The exact searches' guards, and the one budget that scales them all.

The Kubernetes front end follows the scheduler's nondeterminism (orders of pools,
slices and PVs; joint bindings and allocations a witness can reach) by exact
searches. Each has a guard against pathological inputs: past it the answer keeps
the first order's verdict (or leaves the state out) and carries a caveat. A guard
is not a model's limit: with more budget the same code answers exactly, so the
user can raise it. ``GUARDS`` lists each (default, unit, what it bounds, why that
default: ``benchmarks/search_budgets.py`` measures what reaching it costs).

A ``Budget`` is a factor over every guard (``--search-budget FACTOR`` on the
command line) and, for tests and experts, a base value per guard. One factor
serves users best: a caveat names the factor that raises its guard, a guard
costs nothing below its value (it is a ceiling, not a depth), so raising the
others changes nothing where they are not met, and each guard's cost is at most
linear in its value.

The active budget is a context variable set for one load (``loading``; the load
functions take ``budget=``, or ``using`` around any call): no process-wide
state, and each thread or task sees its own. A load notes which guards gave
another outcome than the default budget would (``Load.departed``): the Kubernetes
front end then records the budget in the instance (``Instance.search_budget``),
so a certificate's digest says how the instance was loaded where that changed it.

Imports nothing of the package: front ends import this module, never the reverse.
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Union


@dataclass(frozen=True)
class Guard:
    name: str
    default: int
    unit: str          # what one step of the guard counts, plural
    bounds: str        # which search it bounds, and where
    why: str           # why that default


DRA_ALLOCATOR_STEPS = "dra-allocator-steps"
DRA_ORDERS = "dra-orders"
DRA_CYCLE_ORDERS = "dra-cycle-orders"
DRA_CYCLE_SEARCHES = "dra-cycle-searches"
VOLUME_SEARCH = "volume-search"
VOLUME_BINDINGS = "volume-bindings"
DRA_STATES = "dra-states"
DRA_POOL_ORDERS = "dra-pool-orders"
DRA_STATE_WORK = "dra-state-work"
FILTER_RUNS = "filter-runs"
NOMINATED_SEARCH = "nominated-search"

GUARDS: tuple[Guard, ...] = (   # the times: benchmarks/search_budgets.py, CPU until the guard stops (load 4, 2 cores)
    Guard(DRA_ALLOCATOR_STEPS, 50_000, "allocator steps",
          "one run of the structured allocator's depth-first search on one node (dra_allocator.Allocator.one); "
          "past it: whether distinct matching devices exist, constraints unchecked",
          "0.6 s: 5 of 12 devices and 1 of 2 under a matchAttribute no choice keeps pass it"),
    Guard(DRA_ORDERS, 20_000, "allocator runs",
          "the orders of pools and slices DynamicResources' Filter may take on one node (dra_orders.runs)",
          "1.3 s: the random states need at most 4; 8 pools a constraint tells apart, 2 devices asked and an "
          "error every order meets where it reaches it pass it"),
    Guard(DRA_CYCLE_ORDERS, 5_040, "cycle orders",
          "the distinct orders of a shared pool's slices drawn once per cycle (dra_slice_orders.cycle_orders)",
          "7!: 8 slices a constraint tells apart pass it after 0.05 s; each order is then searched on every "
          "node (dra-cycle-searches)"),
    Guard(DRA_CYCLE_SEARCHES, 20_000, "allocator runs",
          "the searches over every cycle order and node (dra_slice_orders.cycle_table)",
          "1.5 s: as dra-orders; 7 slices a constraint tells apart on 4 nodes pass it"),
    Guard(VOLUME_SEARCH, 1_000_000, "search states",
          "VolumeBinding's PV-matching runs on one node (k8s_volume_matching.Runs)",
          "75 s for a load, whose three searches (the Filter's, the joint bindings' first state's, a "
          "deployment's) each stop at it, about 25 us a state: 13 claims, claim k refusing tier k of 12 tiers x 3 "
          "equal PVs; 12 claims with pairwise different selectors over 10 classes need 486,168"),
    Guard(VOLUME_BINDINGS, 256, "joint bindings",
          "the joint bindings of a group of WaitForFirstConsumer claims (k8s_volume_bindings.explore)",
          "0.6 s: the random states stay below; 9 pods binding 9 interchangeable PVs (512) pass it"),
    Guard(DRA_STATES, 4_096, "joint device allocations",
          "the DRA allocation states reachable from the input's (k8s_dra_state.explore)",
          "1.1 s: 3 nodes x 4 gpus, a Deployment and 3 bare claims pass it; 9 of 300 random allocation walks "
          "pass it or dra-state-work; the v1 document lists every state"),
    Guard(DRA_POOL_ORDERS, 1_000, "allocator runs",
          "the runs over the orders of a node's pools and slices that list which devices a deployment may take "
          "(k8s_dra_state._outcomes, dra_orders.runs telling devices apart), per deployment, node and state; "
          "past it: the input order's devices alone (a caveat)",
          "0.3 s: 8 pools of one device each and 4 asked need 2,081 (70 outcomes, 71 states; "
          "benchmarks/search_budgets.py); one device of 6 such pools needs 7"),
    Guard(DRA_STATE_WORK, 120_000, "states x users x nodes",
          "the DynamicResources evaluations of that exploration (k8s_dra_state.explore)",
          "0.2 s: 6 nodes x 2 gpus, a Deployment and 5 bare claims pass it (each state is evaluated for every "
          "user type on every node)"),
    Guard(FILTER_RUNS, 10 ** 9, "search steps",
          "the exact search over the parallel Filter phase's runs that decides the DRA cycle abort with candidates "
          "in several zones (filter_runs.exact_domain at load, from the zones' node counts; filter_runs.runs_past "
          "per state at solve time, reading the value the instance records); past it: the constructed runs "
          "(semantics.zone_runs_past), a caveat",
          "a bound on the exact search's worst case far above the real count (benchmarks/results/filter_runs_scale.md): "
          "2 equal zones up to 1,698 nodes, 3 up to 405, 4 up to 180, unequal sizes 342, 159, 124; where that search "
          "runs, 1,698 nodes in 2 equal zones took 7.4 s at the answer's edge, 341 in 2 unequal ones 16 s; its cheap "
          "exact stages (filter_runs.segments_cover, windows_cover, the narrowed search) answer those edges in under "
          "0.1 s, and most edges up to 5,000 nodes in 8 zones past the guard"),
    Guard(NOMINATED_SEARCH, 20_000, "search states",
          "the searches around nominated pods (solvers.nominated_search) that matrix runs for its deployable cells "
          "whose witness a nomination blocks, together (cli/nominated_answers); past it: the cells not "
          "re-decided keep their first verdict and the nominated pods' caveat",
          "5.6 s: 6 nodes of 4 CPUs, 4 pending 1-CPU types and a nomination that never ends (the first cell's "
          "search takes it all, about 280 us a state; 700 us on examples/cluster-dump.yaml with one); the random "
          "states' matrices need a few hundred; each search also stops at the matrix's cell timeout"),
)
BY_NAME: dict[str, Guard] = {g.name: g for g in GUARDS}
RAISES = "a search budget of {} raises it"   # the command line names its option there
_RAISES = re.compile(r"a search budget of (\S+) raises it")


def _number(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Budget:
    """``factor`` times each guard's base: its default, or ``limits[name]`` where given."""

    factor: float = 1.0
    limits: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.factor) and self.factor > 0):
            raise ValueError(f"a search budget is a positive finite factor, got {self.factor!r}")
        unknown = sorted(set(self.limits) - set(BY_NAME))
        if unknown:
            raise ValueError(f"unknown guard(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
        object.__setattr__(self, "limits", dict(sorted(self.limits.items())))

    def __hash__(self) -> int:
        return hash((self.factor, tuple(self.limits.items())))

    def limit(self, name: str) -> int:
        base = self.limits.get(name, BY_NAME[name].default)
        return max(1, round(base * self.factor))

    @property
    def is_default(self) -> bool:
        return self.factor == 1 and not self.limits

    def text(self) -> str:
        """How the budget is written (in a digest, in messages): ``4``, ``1 dra-orders=3``."""
        return " ".join([_number(self.factor)] + [f"{k}={v}" for k, v in self.limits.items()])


DEFAULT = Budget()
BudgetLike = Union[Budget, float, int, None]


def as_budget(value: BudgetLike) -> Budget:
    """A ``Budget`` from a factor (None: the active one)."""
    if value is None:
        return active()
    return value if isinstance(value, Budget) else Budget(float(value))


@dataclass
class Load:
    """The budget of one load, and the guards whose outcome it changed from the default budget's."""

    budget: Budget
    departed: set[str] = field(default_factory=set)


_ACTIVE: ContextVar[Load] = ContextVar("symreach.search_budget", default=Load(DEFAULT))


def active() -> Budget:
    return _ACTIVE.get().budget


@contextmanager
def loading(budget: BudgetLike = None) -> Iterator[Load]:
    """Run a load under ``budget`` (None: the active one), noting the guards it departed from."""
    load = Load(as_budget(budget))
    token = _ACTIVE.set(load)
    try:
        yield load
    finally:
        _ACTIVE.reset(token)


using = loading   # the same, read as "use this budget for what follows"


def limit(name: str) -> int:
    """The active budget's value of the guard ``name``."""
    return _ACTIVE.get().budget.limit(name)


def over(name: str, used: int) -> bool:
    """Whether ``used`` steps pass the guard; notes a departure where the default budget's
    outcome differs (a search going past the default without passing the budget, or passing a
    budget below the default). A search calls it at each step, or once with its total."""
    load = _ACTIVE.get()
    passed = used > load.budget.limit(name)
    if passed != (used > BY_NAME[name].default):
        load.departed.add(name)
    return passed


def over_later(name: str, used: int) -> bool:
    """``over`` for a guard whose value a later search reads again (the solve's, of at most ``used``
    steps, stopping at the value the instance records: ``Instance.filter_runs_work``): a departure
    also where ``used`` passes both the default and another value (the later search may stop
    elsewhere)."""
    load = _ACTIVE.get()
    passed = over(name, used)
    value, default = load.budget.limit(name), BY_NAME[name].default
    if value != default and used > min(value, default):
        load.departed.add(name)
    return passed


class Watch:
    """A guard in a hot loop, asked at the cost of one comparison: ``if used > watch.at and
    watch.passed(used)``. ``at`` is the next count ``over`` must see: the default (to note a
    search going past it), then the budget's value."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.limit = limit(name)
        self.at = min(self.limit, BY_NAME[name].default)

    def passed(self, used: int) -> bool:
        if over(self.name, used):
            return True
        self.at = max(self.at, self.limit)
        return False


class Allowance:
    """One guard's budget spent a step at a time, by one search or several sharing it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.used = 0

    def spend(self) -> bool:
        """One more step; True once it passes the guard."""
        self.used += 1
        return over(self.name, self.used)


def past(*names: str, needed: int = 0) -> str:
    """The caveat's words for a guard passed (one of ``names``): its name, value and the budget
    that raises it: four times the active factor (a guard's cost is at most linear in its value),
    or the factor that takes the guard to ``needed`` where the search knows what it needs."""
    budget = active()
    values = " or ".join(f"{budget.limit(n):,} {BY_NAME[n].unit} ({n})" for n in names)
    factor = budget.factor * 4
    if needed:
        factor = max(math.ceil(needed / budget.limits.get(names[0], BY_NAME[names[0]].default)), 1)
    return f"past the search budget of {values}; " + RAISES.format(_number(factor))


def naming_option(text: str, option: str) -> str:
    """``text`` with each "a search budget of F raises it" written as ``option F raises it``."""
    return _RAISES.sub(lambda m: f"{option} {m.group(1)} raises it", text)
