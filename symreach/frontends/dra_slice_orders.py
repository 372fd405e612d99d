"""One order of a pool's slices per scheduling cycle, shared by every node (kube-scheduler v1.35).

DynamicResources' PreFilter lists the ResourceSlices once per cycle (``ListWithDeviceTaintRules``)
and hands that list to ``structured.NewAllocator``; Filter's ``Allocate`` then runs per node, and
``GatherPools`` takes each pool's slices in that list's order (the order of pools is a Go map's,
drawn per node). ``dra_orders.allocate`` is existential per node: a node fits if some order of
pools and slices fits, errs only if every order errs. The exact reading, with one slice order sigma
for the cycle: the pod lands on n iff under ONE sigma n fits (some pool order) and no node passing
its earlier filters errs (every pool order errs there).

``inexact_fits`` names the nodes where the per-node model can differ from that. Per node it is exact
for a node n that fits under some sigma whose erring nodes are exactly those erring under every sigma
(the nodes the model records as erring, ``cycle_abort``): the joint condition then holds in a state
iff none of those passes its earlier filters, which is the model's. A node that fits under no sigma
fails (or errs) in both readings; a node erring under every sigma errs in both. So only a fitting node
whose every fitting sigma makes another node err (where the others do not) can differ (it happens:
``tests/test_dra_slice_orders.py`` holds a case). For such a pod the front end records ``cycle_table``,
each sigma's fitting and erring nodes (v1 ``dra.cycleOrders``, ``Instance.cycle_orders``), and the
semantics reads the joint condition from it (``semantics.abort_failure``). The sigmas tried are those
the allocator can tell apart (``dra_orders.slice_kinds``: interchangeable slices one choice, slices no
selector reads last), each node's orders under one sigma ``dra_orders.runs``' exact search; past the
search budget's guards against pathological inputs (``symreach.search_budget``: ``dra-cycle-orders``,
``dra-cycle-searches``; the random states stay far below)
no table is recorded and every fit is marked with a caveat. Each allocation state a witness reaches
has its own table (``k8s_dra_state``). Above 101 nodes the early stop counts as feasible, under
sigma, the nodes that fit under sigma (``semantics.cycle_runs_past``'s ``fitting``).
"""

from __future__ import annotations

from itertools import product
from math import prod
from typing import Callable, Iterator, Optional

from symreach import search_budget
from symreach.frontends.dra_allocator import Pool
from symreach.frontends.dra_orders import runs, slice_kinds

Key = tuple[str, str]   # (driver, pool)


def shared_pools(pools_of: dict[str, list[Pool]]) -> dict[Key, list[int]]:
    """Pools with several slices that reach several nodes -> the ids of their slices (with devices)."""
    seen: dict[Key, set[str]] = {}
    ids: dict[Key, set[int]] = {}
    for node, pools in pools_of.items():
        for p in pools:
            if p.incomplete or p.invalid:
                continue
            seen.setdefault((p.driver, p.name), set()).add(node)
            ids.setdefault((p.driver, p.name), set()).update(s[0].slice_id for s in p.slices if s)
    return {k: sorted(ids[k]) for k, nodes in seen.items() if len(nodes) > 1 and len(ids[k]) > 1}


def _arrangements(kinds: list[int]) -> Iterator[list[int]]:
    """Every distinct order of the multiset ``kinds``."""
    if not kinds:
        yield []
        return
    for k in sorted(set(kinds)):
        rest = list(kinds)
        rest.remove(k)
        for tail in _arrangements(rest):
            yield [k] + tail


def cycle_orders(shared: dict[Key, list[int]], kinds: dict[int, Optional[int]]) -> Optional[list[dict[int, int]]]:
    """The cycle orders of the shared pools' slices the search can tell apart, as a rank per slice id:
    slices of one kind (``kinds``: ``dra_orders.slice_kinds``) take their places in id order, slices
    it never counts (None) go last. None past the ``dra-cycle-orders`` guard."""
    per_pool: list[list[list[int]]] = []
    for ids in shared.values():
        counted = [i for i in ids if kinds.get(i) is not None]
        orders = []
        for arrangement in _arrangements([kinds[i] for i in counted]):
            queues = {k: [i for i in counted if kinds[i] == k] for k in set(arrangement)}
            orders.append([queues[k].pop(0) for k in arrangement] + [i for i in ids if i not in counted])
            if search_budget.over(search_budget.DRA_CYCLE_ORDERS, len(orders)):
                return None
        per_pool.append(orders)
    if search_budget.over(search_budget.DRA_CYCLE_ORDERS, prod(len(o) for o in per_pool)):
        return None
    return [{sid: rank for order in choice for rank, sid in enumerate(order)} for choice in product(*per_pool)]


def _ranked(pools: list[Pool], shared: dict[Key, list[int]], rank: dict[int, int]) -> list[Pool]:
    """The node's pools with each shared pool's slices in the cycle order ``rank``."""
    return [Pool(p.driver, p.name, sorted(p.slices, key=lambda s: rank.get(s[0].slice_id, -1) if s else -1),
                 p.incomplete, p.invalid) if (p.driver, p.name) in shared else p for p in pools]


Table = list[tuple[set[str], dict[str, tuple[str, ...]]]]   # per cycle order: fitting nodes, erring -> errors


def cycle_table(claims: list[dict], pools_of: dict[str, list[Pool]], classes: dict[str, dict],
                allocated: set) -> Optional[Table]:
    """Per cycle order the search can tell apart: the nodes where some pool order fits, and those
    where every one errs with their errors (distinct, in the runs' order); [] without a shared pool;
    None past the guards (``dra-cycle-orders``, ``dra-cycle-searches``)."""
    shared, orders = _shared_orders(claims, pools_of, classes, allocated)
    if not shared:
        return []
    if orders is None:
        return None
    fixed = frozenset(shared)
    allowance = search_budget.Allowance(search_budget.DRA_CYCLE_SEARCHES)   # every order's and node's runs share it
    table: Table = []
    for rank in orders:
        fits: set[str] = set()
        errs: dict[str, tuple[str, ...]] = {}
        for node, pools in pools_of.items():
            outcomes = runs(claims, _ranked(pools, shared, rank), classes, allocated, fixed, allowance)
            if outcomes is None:
                return None
            if any(o.reason is None for o in outcomes):
                fits.add(node)
            elif all(o.error for o in outcomes):
                errs[node] = tuple(dict.fromkeys(o.reason or "" for o in outcomes))
        if (fits, errs) not in table:
            table.append((fits, errs))
    return table


def _shared_orders(claims: list[dict], pools_of: dict[str, list[Pool]], classes: dict[str, dict], allocated: set,
                   distinct: bool = False) -> tuple[dict[Key, list[int]], Optional[list[dict[int, int]]]]:
    """The shared pools and the cycle orders of their slices the search can tell apart (``distinct``:
    nor which devices it takes); no orders past the ``dra-cycle-orders`` guard."""
    shared = shared_pools(pools_of)
    kinds: dict[int, Optional[int]] = {}
    for key in shared:   # a slice's kind is the same on every node: its devices are
        by_id = {s[0].slice_id: s for pools in pools_of.values() for p in pools if (p.driver, p.name) == key
                 and not p.incomplete and not p.invalid for s in p.slices if s}
        union = Pool(key[0], key[1], list(by_id.values()))
        kinds.update(zip(by_id, slice_kinds(claims, union, classes, allocated, distinct)))
    return shared, (cycle_orders(shared, kinds) if shared else [])


def order_outcomes(claims: list[dict], pools_of: dict[str, list[Pool]], node: str, classes: dict[str, dict],
                   allocated: set, key: Callable[[list], object]) -> Optional[list[tuple[frozenset, frozenset[str]]]]:
    """Per cycle order (telling devices apart): the assignments (each as ``key`` gives it) some order of
    ``node``'s pools fits with (none where none fits) and the nodes where every pool order errs; []
    without a shared pool; None past the guards (``dra-cycle-orders``, ``dra-cycle-searches``)."""
    shared, orders = _shared_orders(claims, pools_of, classes, allocated, True)
    if orders is None:
        return None
    allowance = search_budget.Allowance(search_budget.DRA_CYCLE_SEARCHES)
    fixed = frozenset(shared)
    out = []
    for rank in orders if shared else []:
        found = runs(claims, _ranked(pools_of[node], shared, rank), classes, allocated, fixed, allowance, distinct=True)
        errs = set()
        for other, pools in pools_of.items():
            theirs = runs(claims, _ranked(pools, shared, rank), classes, allocated, fixed, allowance) \
                if other != node and found is not None else []
            if theirs is None:
                return None
            if theirs and all(o.error for o in theirs):
                errs.add(other)
        if found is None:
            return None
        out.append((frozenset(key(o.results) for o in found if o.reason is None), frozenset(errs)))
    return out


def every_outcome_lands(per_order: list[tuple[frozenset, frozenset[str]]]) -> bool:
    """Whether, in every state where the pod can land on the node (``order_outcomes``: some cycle order
    fits it and none of the nodes erring under it passes its earlier filters), every assignment some
    order fits with can come. The orders landing in a state where order o lands are at least those
    whose erring nodes are among o's, so it is enough that those give every assignment, for each o."""
    every = frozenset().union(*(fits for fits, _ in per_order)) if per_order else frozenset()
    return all(frozenset().union(*(f for f, e in per_order if f and e <= errs)) == every
               for fits, errs in per_order if fits)


def inexact_fits(claims: list[dict], pools_of: dict[str, list[Pool]], classes: dict[str, dict], allocated: set,
                 fitting: list[str]) -> list[str]:
    """Of the nodes the per-node model lets the pod fit (``fitting``), those where one slice order per
    cycle may forbid it in some state (the module's condition); every one of them past the guards
    (``dra-cycle-orders``, ``dra-cycle-searches``)."""
    if not fitting:
        return []
    return table_inexact(cycle_table(claims, pools_of, classes, allocated), fitting)


def table_inexact(table: Optional[Table], fitting: list[str]) -> list[str]:
    """``inexact_fits`` from a ``cycle_table``: every fitting node past the guards (None), none
    without a shared pool ([])."""
    if table is None:
        return list(fitting)
    return judge([(fits, set(errs)) for fits, errs in table], fitting) if table else []


def judge(table: list[tuple[set[str], set[str]]], fitting: list[str]) -> list[str]:
    """The fitting nodes with no cycle order that fits them and errs only where every order errs."""
    always = set.intersection(*[errs for _, errs in table]) if table else set()
    return [n for n in fitting if not any(n in fits and errs <= always for fits, errs in table)]
