"""DynamicResources' Filter over every order of pools and slices the scheduler may take (v1.35).

``GatherPools`` flattens a Go map (the pool order is drawn per node) over the slices PreFilter
listed once per cycle (the informer's order, drawn per cycle); the structured allocator's
depth-first search takes devices in that order. Without an error the search is exhaustive and the
order changes nothing; with one, it decides whether the search meets the error before a fit.
``allocate`` is existential over the orders, as reachability asks: a fit if some order fits, an
error only if every order errs, ``Outcome.outcomes`` naming every outcome seen.

The orders are not enumerated: ``runs`` chooses the order lazily, while the search runs. A run
(``dra_allocator.Allocator.walk``) asks for the next pool, or the next slice of a pool, only when
its search goes that far; a run that ends before it needs a choice stands for every order that
agrees so far. At a choice, pools (slices) the search cannot tell apart are one option: equal
``Allocator.signature`` of their devices (what every selector gives, attributes, counters, whether
allocated), slices up to their order inside the pool. Slices no selector matches nor errs on, and
pools of them, are never visited by the search in any way that counts, so they are left out. So
the cost follows how far into the order the runs look and how many distinct slices they meet
there, not pools! * prod(slices!). The search budget's ``dra-orders`` guard (``symreach.search_budget``,
20,000 runs by default) stops pathological inputs only (a caveat then): the random states need at most
4 runs; 7 pools a constraint tells apart, each run meeting an error only after scanning them, need
1,962 leaves of 5,040 orders (0.3 s), 8 pass it.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial, prod
from typing import Iterator, Optional

from symreach import search_budget
from symreach.frontends.dra_allocator import Allocator, Device, Outcome, Pool, allocate_in_order
from symreach.frontends.k8s_volumes import as_dict, as_list

Key = tuple[str, str]   # (driver, pool)


def order_count(pools: list[Pool]) -> int:
    """How many orders of pools and, inside each, of slices the scheduler may take."""
    return factorial(len(pools)) * prod(factorial(len(p.slices)) for p in pools)


class _Choose(Exception):
    """The run needs the next pool or slice; ``options``: one per kind the search can tell apart."""

    def __init__(self, options: list[int]) -> None:
        super().__init__()
        self.options = options


@dataclass
class _Visible:
    """A pool the search may visit: its slices (each its devices) and signatures."""

    pool: Pool
    slices: list[list[Device]]
    kind: int                 # equal kinds: interchangeable pools
    slice_kinds: list[int]    # equal kinds: interchangeable slices of this pool


class _Order:
    """One prefix of choices (pool, then its slices, then the next pool ...) as a walk of the search."""

    def __init__(self, pools: list[_Visible], prefix: tuple[int, ...]) -> None:
        self.pools, self.prefix = pools, prefix

    def walk(self) -> Iterator[tuple[Pool, Optional[Device]]]:
        taken = 0

        def pick(left: list[int], kinds: list[int]) -> int:
            nonlocal taken
            first: dict[int, int] = {}
            for i in left:
                first.setdefault(kinds[i], i)
            if len(first) == 1:
                return left[0]
            if taken == len(self.prefix):
                raise _Choose(list(first.values()))
            taken += 1
            return self.prefix[taken - 1]

        pools = list(range(len(self.pools)))
        while pools:
            p = pick(pools, [v.kind for v in self.pools])
            pools.remove(p)
            visible = self.pools[p]
            yield visible.pool, None
            slices = list(range(len(visible.slices)))
            while slices:
                s = pick(slices, visible.slice_kinds)
                slices.remove(s)
                for device in visible.slices[s]:
                    yield visible.pool, device


def _visible(claims: list[dict], pools: list[Pool], classes: dict[str, dict], allocated: set,
             fixed: frozenset[Key], distinct: bool = False) -> list[_Visible]:
    """The pools and slices a run can see, with the kinds that tell them apart (``fixed`` pools keep
    their slices' order: one slice of all their devices; ``distinct``: every slice a kind of its own)."""
    kinds = _Kinds(claims, pools, classes, allocated, distinct)
    out = []
    for pool in pools:
        if pool.incomplete or pool.invalid:
            if kinds.every_all:   # only an All request looks at such a pool: it errs naming it
                out.append(_Visible(pool, [], kinds.of(("broken", pool.driver, pool.name, pool.incomplete)), []))
            continue
        slices = [list(s) for s in pool.slices]
        if (pool.driver, pool.name) in fixed:
            slices = [[d for s in slices for d in s]]
        shown = [(devices, kinds.slice(devices)) for devices in slices]
        shown = [(devices, k) for devices, k in shown if k is not None]
        if shown:
            out.append(_Visible(pool, [d for d, _ in shown], kinds.of(("pool", tuple(sorted(k for _, k in shown)))),
                                [k for _, k in shown]))
    return out


class _Kinds:
    """Numbers for what the search can tell apart, over one set of claims and allocated devices."""

    def __init__(self, claims: list[dict], pools: list[Pool], classes: dict[str, dict], allocated: set,
                 distinct: bool = False) -> None:
        self.distinct = distinct   # which devices a run takes counts, not only its verdict
        self.scratch = Allocator(claims, pools, classes, allocated, errors_as_false=True)
        devices = [as_dict(as_dict(c.get("spec")).get("devices")) for c in claims]
        requests = [as_dict(r) for d in devices for r in as_list(d.get("requests"))]
        self.every_all = any(b.get("allocationMode") == "All" for r in requests
                             for b in [as_dict(x) for x in as_list(r.get("firstAvailable"))]
                             + [as_dict(r.get("exactly"))])
        # an All request under a claim's constraint errs naming the device: then names tell devices apart
        constrained = any(as_list(d.get("constraints")) for d in devices)
        self.named = self.every_all and constrained
        self.typed = constrained   # only a constraint reads the typed attributes
        self.kinds: dict[object, int] = {}

    def of(self, value: object) -> int:
        return self.kinds.setdefault(value, len(self.kinds))

    def slice(self, devices: list[Device]) -> Optional[int]:
        """The slice's kind; None when no selector matches nor errs on a device of it and none says a
        caveat: the search then never counts it, wherever it stands."""
        signatures = [self.scratch.signature(d) for d in devices]
        if not self.typed:
            signatures = [sig[:1] + sig[2:] for sig in signatures]
        if all(value is False and not caveats for sig in signatures for value, caveats in sig[0]):
            return None
        if self.distinct:
            return self.of(tuple((sig, d.key) for sig, d in zip(signatures, devices)))
        return self.of(tuple((sig, d.key) if self.named else sig for sig, d in zip(signatures, devices)))


def slice_kinds(claims: list[dict], pool: Pool, classes: dict[str, dict], allocated: set,
                distinct: bool = False) -> list[Optional[int]]:
    """Per slice of ``pool``: its kind (equal kinds: the search cannot tell the slices apart; ``distinct``:
    nor which devices it takes), None where the search never counts it."""
    kinds = _Kinds(claims, [pool], classes, allocated, distinct)
    return [kinds.slice(list(devices)) for devices in pool.slices]


def runs(claims: list[dict], pools: list[Pool], classes: dict[str, dict], allocated: set,
         fixed: frozenset[Key] = frozenset(), allowance: Optional[search_budget.Allowance] = None,
         distinct: bool = False) -> Optional[list[Outcome]]:
    """One outcome per class of orders the search cannot tell apart (``fixed`` pools' slices in the
    order given; ``distinct``: nor which devices it takes, ``k8s_dra_state``); None once its runs pass
    ``allowance`` (by default its own, the ``dra-orders`` guard)."""
    allowance = search_budget.Allowance(search_budget.DRA_ORDERS) if allowance is None else allowance
    visible = _visible(claims, pools, classes, allocated, fixed, distinct)
    stack: list[tuple[int, ...]] = [()]
    out: list[Outcome] = []
    while stack:
        prefix = stack.pop()
        if allowance.spend():
            return None
        try:
            out.append(allocate_in_order(claims, pools, classes, allocated, sequence=_Order(visible, prefix).walk))
        except _Choose as choice:
            stack.extend(prefix + (o,) for o in reversed(choice.options))
    return out


def allocate(claims: list[dict], pools: list[Pool], classes: dict[str, dict], allocated: set,
             where: str = "") -> Outcome:
    """What DynamicResources' Filter says on the node for the claims to allocate, over the runs of the
    scheduler: a fit when some order of pools and slices fits (that order's results), an error only
    when every order errs, else the failure. The order given (pools sorted, slices in input order)
    is tried first; where an error is involved every other order that can differ is (``runs``), and
    ``outcomes`` names each outcome."""
    several = order_count(pools) > 1
    first = allocate_in_order(claims, pools, classes, allocated, several)
    if not several or (not first.error and not first.met_error):
        return first
    found = runs(claims, pools, classes, allocated)
    if found is None:
        first.caveats.append(f"DRA{where}: the scheduler visits pools and slices in a random order; on another order "
                             "the allocator may meet an error at another point (the verdict, its reasons and "
                             "whether it aborts the pod's cycle are those of the first order: telling the orders "
                             f"apart went {search_budget.past(search_budget.DRA_ORDERS)})")
        return first
    return combine(first, found)


def combine(first: Outcome, others: list[Outcome]) -> Outcome:
    """The verdict over the orders: the first fit (``first`` if it fits), else a failure, else the
    first order's error; ``outcomes`` every distinct outcome, the caveats of all."""
    every = [first] + others
    chosen = next((o for o in every if o.reason is None), None) or next((o for o in every if not o.error), None) or first
    seen = {o.reason for o in every}
    if len(seen) > 1:
        chosen.outcomes = tuple(sorted(seen, key=lambda r: (r is not None, r or "")))
    chosen.caveats = list(dict.fromkeys(c for o in every for c in o.caveats))
    return chosen
