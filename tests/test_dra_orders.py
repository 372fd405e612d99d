"""The exact search over the orders of pools and slices (``dra_orders``) against every order.

Random small situations (pools, slices, devices with or without the attributes the selectors read,
so CEL runtime errors; counts, ``All``, ``firstAvailable``, ``matchAttribute``, admin access,
allocated and incomplete pools): ``dra_orders.runs`` and ``dra_orders.allocate`` must give what
running the allocator in each of pools! * prod(slices!) orders gives.
"""

from __future__ import annotations

import random
from itertools import permutations, product

from symreach import search_budget
from symreach.search_budget import Budget
from symreach.frontends import dra_orders
from symreach.frontends.dra_allocator import Outcome, Pool, allocate_in_order, gather_pools

D = "d"
EXPRESSIONS = [f'device.attributes["{D}"].numa == 0', f'device.attributes["{D}"].model == "t4"',
               f'device.attributes["{D}"].numa >= 0', "true"]
CLASSES = {"c0": {"spec": {}}, "c1": {"spec": {"selectors": [{"cel": {"expression": EXPRESSIONS[0]}}]}},
           "c2": {"spec": {"selectors": [{"cel": {"expression": EXPRESSIONS[1]}}]}}}


def _every_order(pools: list[Pool]) -> list[list[Pool]]:
    out = []
    for order in permutations(pools):
        for inner in product(*[list(permutations(p.slices)) for p in order]):
            out.append([Pool(p.driver, p.name, list(s), p.incomplete, p.invalid) for p, s in zip(order, inner)])
    return out


def _brute(claims: list[dict], pools: list[Pool], allocated: set) -> tuple[Outcome, list[Outcome]]:
    """``dra_orders.allocate`` by enumeration (what it did below its old 120-order cap), and every order's outcome."""
    every = [allocate_in_order(claims, order, CLASSES, allocated) for order in _every_order(pools)]
    first = allocate_in_order(claims, pools, CLASSES, allocated, dra_orders.order_count(pools) > 1)
    if dra_orders.order_count(pools) == 1 or (not first.error and not first.met_error):
        return first, every
    return dra_orders.combine(first, every), every   # the same verdict over the outcomes; the search differs


def _request(rng: random.Random, name: str) -> dict:
    def body() -> dict:
        out: dict = {"deviceClassName": rng.choice(sorted(CLASSES))}
        if rng.random() < 0.15:
            out["allocationMode"] = "All"
        else:
            out["count"] = rng.choice([1, 1, 2])
        if rng.random() < 0.4:
            out["selectors"] = [{"cel": {"expression": rng.choice(EXPRESSIONS)}}]
        if rng.random() < 0.1:
            out["adminAccess"] = True
        return out
    if rng.random() < 0.2:
        return {"name": name, "firstAvailable": [dict(body(), name=f"s{i}") for i in range(2)]}
    return {"name": name, "exactly": body()}


def _situation(rng: random.Random) -> tuple[list[dict], list[Pool], set]:
    slices = []
    for p in range(rng.randint(1, 3)):
        count = rng.randint(1, 3)
        listed = count - (rng.random() < 0.1)   # sometimes a slice missing: an incomplete pool
        for k in range(listed):
            devices = []
            for i in range(rng.randint(0, 2)):
                attributes = {}
                if rng.random() < 0.7:
                    attributes["numa"] = {"int": rng.choice([0, 1])}
                if rng.random() < 0.6:
                    attributes["model"] = {"string": rng.choice(["t4", "a100"])}
                devices.append({"name": f"x{k}{i}", "attributes": attributes})
            slices.append({"spec": {"driver": D, "allNodes": True, "devices": devices,
                                    "pool": {"name": f"p{p}", "generation": 1, "resourceSliceCount": count}}})
    pools = gather_pools(slices, {"name": "n"}, lambda spec, node: True)
    claims = []
    for c in range(rng.choice([1, 1, 2])):
        requests = [_request(rng, f"r{r}") for r in range(rng.randint(1, 2))]
        spec: dict = {"devices": {"requests": requests}}
        if rng.random() < 0.25:
            spec["devices"]["constraints"] = [{"matchAttribute": f"{D}/numa"}]
        claims.append({"metadata": {"name": f"c{c}", "namespace": "default"}, "spec": spec})
    devices = [d.key for p in pools for d in p.devices]
    allocated = {k for k in devices if rng.random() < 0.1}
    return claims, pools, allocated


def _results(outcome: Outcome) -> tuple:
    return tuple(tuple((label, d.key) for label, d in claim) for claim in outcome.results)


def test_the_search_gives_what_every_order_gives():
    rng = random.Random(27)
    compared = differing = erring = pruned = 0
    for _ in range(3000):
        claims, pools, allocated = _situation(rng)
        if not 1 < dra_orders.order_count(pools) <= 288:
            continue
        expected, every = _brute(claims, pools, allocated)
        found = dra_orders.runs(claims, pools, CLASSES, allocated)
        assert found is not None
        assert {o.reason for o in found} == {o.reason for o in every}
        assert {c for o in found for c in o.caveats} == {c for o in every for c in o.caveats}
        assert {_results(o) for o in found if o.reason is None} <= {_results(o) for o in every if o.reason is None}
        got = dra_orders.allocate(claims, pools, CLASSES, allocated)
        assert (got.reason, got.error, got.outcomes, set(got.caveats)) == \
            (expected.reason, expected.error, expected.outcomes, set(expected.caveats))
        assert got.reason is not None or _results(got) in {_results(o) for o in every if o.reason is None}
        compared += 1
        differing += len({o.reason for o in every}) > 1
        erring += any(o.error for o in every)
        pruned += len(found) < len(every)
    assert compared >= 2000 and differing >= 300 and erring >= 1000 and pruned >= 1500, \
        (compared, differing, erring, pruned)


def test_telling_devices_apart_the_search_gives_every_orders_devices():
    """``runs(distinct=True)`` (``k8s_dra_state``'s deploy choices): the assignments its fitting runs
    give are exactly those some order gives, however many orders it needs."""
    rng = random.Random(28)
    compared = several = 0
    for _ in range(1500):
        claims, pools, allocated = _situation(rng)
        if not 1 < dra_orders.order_count(pools) <= 288:
            continue
        every = [allocate_in_order(claims, order, CLASSES, allocated) for order in _every_order(pools)]
        found = dra_orders.runs(claims, pools, CLASSES, allocated, distinct=True)
        assert found is not None
        want = {_results(o) for o in every if o.reason is None}
        assert {_results(o) for o in found if o.reason is None} == want
        compared += 1
        several += len(want) > 1
    assert compared >= 1200 and several >= 150, (compared, several)   # 1,252 and 194


def test_interchangeable_slices_are_one_choice():
    """Eight slices of one pool, each a device lacking the attribute the class reads but one: 8! orders,
    the search tells apart only where the good slice stands among the failing ones (first: a fit)."""
    slices = [{"spec": {"driver": D, "allNodes": True, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 8},
                        "devices": [{"name": f"x{k}", "attributes": {"numa": {"int": 0}} if k == 5 else {}}]}}
              for k in range(8)]
    pools = gather_pools(slices, {"name": "n"}, lambda spec, node: True)
    claim = {"metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c1"}}]}}}
    assert dra_orders.order_count(pools) == 40320
    found = dra_orders.runs([claim], pools, CLASSES, set())
    assert found is not None and len(found) == 2
    got = dra_orders.allocate([claim], pools, CLASSES, set())
    assert got.reason is None and [d.name for _, d in got.results[0]] == ["x5"] and not got.caveats
    assert got.outcomes[0] is None and "no such key: numa" in str(got.outcomes[1])


def test_past_the_guard_the_first_order_stands_with_a_caveat():
    """The search needs 4 runs: under a ``dra-orders`` guard of 3 the first order's error stands, with a
    caveat naming the guard, its value and the budget that raises it; 4 times that is exact again."""
    claims, pools, allocated = _pathological()
    found = dra_orders.runs(claims, pools, CLASSES, allocated)
    assert found is not None and len(found) == 4 and len({o.reason for o in found}) == 2
    exact = dra_orders.allocate(claims, pools, CLASSES, allocated)
    assert exact.outcomes[0] is None and not exact.caveats
    low = Budget(limits={search_budget.DRA_ORDERS: 3})
    with search_budget.loading(low) as load:
        assert dra_orders.runs(claims, pools, CLASSES, allocated) is None
        got = dra_orders.allocate(claims, pools, CLASSES, allocated)
    assert got.error and not got.outcomes and load.departed == {search_budget.DRA_ORDERS}
    assert got.caveats == ["DRA: the scheduler visits pools and slices in a random order; on another order the "
                           "allocator may meet an error at another point (the verdict, its reasons and whether it "
                           "aborts the pod's cycle are those of the first order: telling the orders apart went past "
                           "the search budget of 3 allocator runs (dra-orders); a search budget of 4 raises it)"]
    with search_budget.loading(Budget(4, low.limits)) as load:
        raised = dra_orders.allocate(claims, pools, CLASSES, allocated)
    assert (raised.reason, raised.outcomes, raised.caveats) == (exact.reason, exact.outcomes, [])
    assert load.departed == set()   # 12 runs: as the default's


def _pathological() -> tuple[list[dict], list[Pool], set]:
    """Four pools of devices a constraint tells apart, one erring: the erring one's place decides."""
    slices = [{"spec": {"driver": D, "allNodes": True, "pool": {"name": f"p{k}", "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": "x", "attributes": {"numa": {"int": 1}, "model": {"string": f"m{k}"}}
                                     if k else {}}]}} for k in range(4)]
    pools = gather_pools(slices, {"name": "n"}, lambda spec, node: True)
    claim: dict = {"metadata": {"name": "c", "namespace": "default"},
                   "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c0", "selectors": [
                       {"cel": {"expression": EXPRESSIONS[2]}}]}}], "constraints": [{"matchAttribute": f"{D}/model"}]}}}
    return [claim], pools, set()

