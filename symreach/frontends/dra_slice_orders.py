"""One order of a pool's slices per scheduling cycle, shared by every node (kube-scheduler v1.35).

DynamicResources' PreFilter lists the ResourceSlices once per cycle (``ListWithDeviceTaintRules``)
and hands that list to ``structured.NewAllocator``; Filter's ``Allocate`` then runs per node, and
``GatherPools`` takes each pool's slices in that list's order (the order of pools is a Go map's,
drawn per node). ``dra_allocator.allocate`` is existential per node: a node fits if some order of
pools and slices fits, errs only if every order errs. The exact reading, with one slice order sigma
for the cycle: the pod lands on n iff under ONE sigma n fits (some pool order) and no node passing
its earlier filters errs (every pool order errs there).

``inexact_fits`` names the nodes where the per-node model can differ from that. Per node it is exact
for a node n that fits under some sigma whose erring nodes are exactly those erring under every sigma
(the nodes the model records as erring, ``cycle_abort``): the joint condition then holds in a state
iff none of those passes its earlier filters, which is the model's. A node that fits under no sigma
fails (or errs) in both readings; a node erring under every sigma errs in both. So only a fitting node
whose every fitting sigma makes another node err (where the others do not) can differ; such nodes keep
a caveat, as do all fitting nodes beyond ``dra_allocator.ORDERS`` orders or ``BUDGET`` searches.
"""

from __future__ import annotations

from itertools import permutations, product
from math import factorial, prod
from typing import Optional

from symreach.frontends.dra_allocator import ORDERS, Pool, allocate_in_order

Key = tuple[str, str]   # (driver, pool)
BUDGET = 20_000          # searches tried over every cycle order and node before marking every fit instead


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


def cycle_orders(shared: dict[Key, list[int]]) -> Optional[list[dict[int, int]]]:
    """Every order of the shared pools' slices as a rank per slice id (None beyond ``ORDERS``)."""
    if prod(factorial(len(v)) for v in shared.values()) > ORDERS:
        return None
    out = []
    for choice in product(*[list(permutations(v)) for v in shared.values()]):
        out.append({sid: rank for order in choice for rank, sid in enumerate(order)})
    return out


def _run_count(pools: list[Pool], shared: dict[Key, list[int]]) -> int:
    """How many orders a node has under one cycle order (pools, and the slices of unshared pools)."""
    return factorial(len(pools)) * prod(factorial(len(p.slices)) for p in pools if (p.driver, p.name) not in shared)


def _node_runs(pools: list[Pool], shared: dict[Key, list[int]], rank: dict[int, int]) -> list[list[Pool]]:
    """The node's orders under one cycle order: pools in any order, a shared pool's slices as ``rank``
    says, the other pools' slices in any order."""
    fixed = [(p.driver, p.name) in shared for p in pools]
    ranked = [Pool(p.driver, p.name, sorted(p.slices, key=lambda s: rank.get(s[0].slice_id, -1) if s else -1),
                   p.incomplete, p.invalid) if f else p for p, f in zip(pools, fixed)]
    inner = [[p.slices] if f else list(permutations(p.slices)) for p, f in zip(ranked, fixed)]
    out = []
    for picks in product(*inner):
        base = [Pool(p.driver, p.name, list(s), p.incomplete, p.invalid) for p, s in zip(ranked, picks)]
        out.extend(list(order) for order in permutations(base))
    return out


def inexact_fits(claims: list[dict], pools_of: dict[str, list[Pool]], classes: dict[str, dict], allocated: set,
                 fitting: list[str]) -> list[str]:
    """Of the nodes the per-node model lets the pod fit (``fitting``), those where one slice order per
    cycle may forbid it in some state (the module's condition); every one of them when there are too
    many orders to try."""
    shared = shared_pools(pools_of)
    if not shared or not fitting:
        return []
    orders = cycle_orders(shared)
    if orders is None or any(_run_count(p, shared) > ORDERS for p in pools_of.values()) or \
            len(orders) * sum(_run_count(p, shared) for p in pools_of.values()) > BUDGET:
        return list(fitting)
    table: list[tuple[set[str], set[str]]] = []   # per cycle order: (fitting nodes, erring nodes)
    for rank in orders:
        fits, errs = set(), set()
        for node, pools in pools_of.items():
            outcomes = [allocate_in_order(claims, run, classes, allocated) for run in _node_runs(pools, shared, rank)]
            if any(o.reason is None for o in outcomes):
                fits.add(node)
            elif all(o.error for o in outcomes):
                errs.add(node)
        table.append((fits, errs))
    return judge(table, fitting)


def judge(table: list[tuple[set[str], set[str]]], fitting: list[str]) -> list[str]:
    """The fitting nodes with no cycle order that fits them and errs only where every order errs."""
    always = set.intersection(*[errs for _, errs in table]) if table else set()
    return [n for n in fitting if not any(n in fits and errs <= always for fits, errs in table)]
