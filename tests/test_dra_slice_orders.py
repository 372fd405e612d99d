"""One order of a pool's slices per scheduling cycle, shared by every node (``dra_slice_orders``).

v1.35 DynamicResources lists the ResourceSlices once in PreFilter (``ListWithDeviceTaintRules``,
``structured.NewAllocator``) and ``Allocate`` runs per node over that list. ``tests/test_dra_abort.py``'s
shared pool (slice a's device has the numa attribute the class reads, slice b's lacks it: a CEL
runtime error) reaches n1 and n2: per node each could fit or err, but the variant (``KSO_DRA``)
only ever gives both fit or both err, never one of each, as one order for both nodes makes it.
Where the per-node model would differ (a fit only orders making another node err allow), the front
end records each order's fitting and erring nodes (v1 ``dra.cycleOrders``) and the semantics reads
them: the case a search found aborts as the variant does.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import replace
import os
import random
from collections import Counter
from pathlib import Path
from typing import Optional

import pytest
import yaml

from benchmarks.kso_dra_agreement import kso_dra_verdicts, symreach_dra
from benchmarks.kso_dra_cycle_orders import attributes, resource_slice
from benchmarks.kso_harness import any_state, kso_verdicts_single
from symreach import search_budget, reasons
from symreach.search_budget import Budget
from symreach.errors import InputError
from symreach.frontends.kubernetes import kubernetes_to_v1, load_kubernetes_documents
from symreach.loader import load_text
from symreach.model import FrozenDict
from symreach.frontends import dra_orders, dra_slice_orders
from symreach.frontends.dra_allocator import CANNOT_ALLOCATE, Pool, allocate_in_order, gather_pools
from tests.test_dra_abort import ERROR, _shared_pool

VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
RUNS = 16
# The variant's outcomes over RUNS runs (measured: 13 both fit, 3 both err; never mixed, which
# independent per-node orders would give in half the runs).
VARIANT_OUTCOMES = {(None, None), (ERROR, ERROR)}


def test_symreach_fits_both_unmarked_and_lists_the_error():
    ours = symreach_dra(any_state(_shared_pool(), "default/job"))
    assert ours.verdicts == {"n1": None, "n2": None}
    assert ours.possible == {"n1": {None, ERROR}, "n2": {None, ERROR}}
    assert not [c for c in ours.caveats if "once per cycle" in c]


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_the_variant_never_mixes_the_nodes_outcomes():
    seen = Counter()
    for _ in range(RUNS):
        got = kso_dra_verdicts(any_state(_shared_pool(), "default/job"), VARIANT)
        seen[(got["n1"], got["n2"])] += 1
    assert sum(seen.values()) == RUNS
    assert set(seen) <= VARIANT_OUTCOMES and (None, None) in seen


def _joint(table, n, passing) -> bool:
    """The exact reading: one cycle order under which n fits and no passing node errs."""
    return any(n in fits and not (errs & passing) for fits, errs in table)


def _per_node(table, n, passing) -> bool:
    """The model's: n fits under some order, and no passing node errs under every order."""
    always = set.intersection(*[errs for _, errs in table])
    return any(n in fits for fits, _ in table) and not (always & passing)


def test_the_nodes_judge_leaves_out_are_exact_in_every_state():
    """Random outcome tables over 4 nodes: where ``judge`` does not name a fitting node, the joint
    and the per-node readings agree for every set of nodes passing their earlier filters; where it
    names one, some set makes them differ (so the mark is never needless)."""
    rng = random.Random(5)
    nodes = ["n1", "n2", "n3", "n4"]
    checked = named = 0
    for _ in range(400):
        table = []
        for _ in range(rng.randint(1, 4)):
            fits = {n for n in nodes if rng.random() < 0.4}
            errs = {n for n in nodes if n not in fits and rng.random() < 0.4}
            table.append((fits, errs))
        fitting = [n for n in nodes if any(n in f for f, _ in table)]
        marked = dra_slice_orders.judge(table, fitting)
        for n in fitting:
            others = [m for m in nodes if m != n]
            sets = [set(c) | {n} for k in range(len(others) + 1) for c in itertools.combinations(others, k)]
            differs = any(_joint(table, n, p) != _per_node(table, n, p) for p in sets)
            assert differs == (n in marked), (table, n)
            checked += 1
            named += n in marked
    assert checked > 500 and named > 50


def _pools(models: list[str], nodes: list[str]) -> dict[str, list[Pool]]:
    """One pool of one slice per model (a device of that model) reaching every node."""
    slices = [{"spec": {"driver": "d", "allNodes": True, "devices": [{"name": f"x{k}", "attributes": {"model": {"string": m}}}],
                        "pool": {"name": "p", "generation": 1, "resourceSliceCount": len(models)}}}
              for k, m in enumerate(models)]
    return {n: gather_pools(slices, {"name": n}, lambda spec, node: True) for n in nodes}


CLAIM = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
    "requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}], "constraints": [{"matchAttribute": "d/model"}]}}}
CLASSES = {"c": {"spec": {}}}


def test_interchangeable_slices_are_one_cycle_order():
    pools = _pools(["t4"] * 8, ["n1", "n2"])   # 8! orders of slices the search cannot tell apart
    shared = dra_slice_orders.shared_pools(pools)
    kinds = dict(zip(shared[("d", "p")], dra_orders.slice_kinds([CLAIM], pools["n1"][0], CLASSES, set())))
    assert len(set(kinds.values())) == 1 and len(dra_slice_orders.cycle_orders(shared, kinds)) == 1
    assert dra_slice_orders.inexact_fits([CLAIM], pools, CLASSES, set(), ["n1", "n2"]) == []


def test_beyond_the_guard_every_fitting_node_is_marked():
    """Past ``dra-cycle-orders`` (8! orders) or ``dra-cycle-searches`` every fitting node is marked;
    a budget raising the guard gives the table (here: no node marked) again."""
    pools = _pools([f"m{k}" for k in range(8)], ["n1", "n2"])   # 8! orders the constraint tells apart
    shared = dra_slice_orders.shared_pools(pools)
    kinds = dict(zip(shared[("d", "p")], dra_orders.slice_kinds([CLAIM], pools["n1"][0], CLASSES, set())))
    assert dra_slice_orders.cycle_orders(shared, kinds) is None
    assert dra_slice_orders.inexact_fits([CLAIM], pools, CLASSES, set(), ["n1"]) == ["n1"]
    with search_budget.loading(8) as load:   # 40,320 orders, past the default: the load notes it (the digest)
        assert len(dra_slice_orders.cycle_orders(shared, kinds)) == 40320
    assert load.departed == {search_budget.DRA_CYCLE_ORDERS}
    pools = _pools([f"m{k}" for k in range(3)], ["n1", "n2"])
    assert dra_slice_orders.inexact_fits([CLAIM], pools, CLASSES, set(), ["n1"]) == []
    low = Budget(limits={search_budget.DRA_CYCLE_SEARCHES: 5})   # 6 cycle orders, a search each on 2 nodes
    with search_budget.using(low):
        assert dra_slice_orders.inexact_fits([CLAIM], pools, CLASSES, set(), ["n1"]) == ["n1"]
    with search_budget.using(Budget(4, low.limits)):   # 20 >= 12 runs
        assert dra_slice_orders.inexact_fits([CLAIM], pools, CLASSES, set(), ["n1"]) == []


def _brute_table(claims, pools_of, classes) -> list[tuple[set[str], set[str]]]:
    """Per order of the shared pools' slices: the nodes fitting in some order of the rest, those erring in every one."""
    shared = dra_slice_orders.shared_pools(pools_of)
    table = []
    for choice in itertools.product(*[list(itertools.permutations(ids)) for ids in shared.values()]):
        rank = {sid: r for order in choice for r, sid in enumerate(order)}
        fits, errs = set(), set()
        for node, pools in pools_of.items():
            outcomes = []
            for order in itertools.permutations(pools):
                inner = [[sorted(p.slices, key=lambda s: rank.get(s[0].slice_id, -1) if s else -1)]
                         if (p.driver, p.name) in shared else list(itertools.permutations(p.slices)) for p in order]
                for picks in itertools.product(*inner):
                    run = [Pool(p.driver, p.name, list(s), p.incomplete, p.invalid) for p, s in zip(order, picks)]
                    outcomes.append(allocate_in_order(claims, run, classes, set()))
            if any(o.reason is None for o in outcomes):
                fits.add(node)
            elif all(o.error for o in outcomes):
                errs.add(node)
        table.append((fits, errs))
    return table


def test_the_marked_nodes_are_those_every_order_gives():
    """Random shared and node-local pools over 3 nodes: the front end's table (a search per cycle
    order the search can tell apart, ``cycle_table``) has the rows enumerating every cycle order and
    every node's orders gives, so ``inexact_fits`` names what they name; and the model's verdict
    (``semantics.node_failure`` on the v1 type the front end writes, ``cycleOrders`` where a node is
    named) is the one-order-per-cycle reading for every set of nodes passing their earlier filters."""
    from tests.test_dra_orders import CLASSES as classes, EXPRESSIONS

    rng = random.Random(11)
    compared = marked = judged = 0
    for i in range(1500):
        slices = []
        for k in range(rng.randint(2, 3)):
            slices.append({"spec": {"driver": "d", "allNodes": True, "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 0},
                                    "devices": [{"name": f"s{k}", "attributes": attributes(rng)}]}})
        for n in ("n1", "n2", "n3"):
            for k in range(rng.randint(0, 2)):
                slices.append({"spec": {"driver": "d", "nodeName": n, "pool": {"name": f"l{n}", "generation": 1, "resourceSliceCount": 0},
                                        "devices": [{"name": f"x{k}", "attributes": attributes(rng)}]}})
        for s in slices:
            pool = s["spec"]["pool"]
            pool["resourceSliceCount"] = sum(1 for t in slices if t["spec"]["pool"]["name"] == pool["name"])
        pools_of = {n: gather_pools(slices, {"name": n}, lambda spec, node: spec.get("allNodes") or spec.get("nodeName") == node["name"])
                    for n in ("n1", "n2", "n3")}
        selectors = [{"cel": {"expression": e}} for e in rng.sample(EXPRESSIONS, rng.randint(1, 2))]
        claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [
            {"name": "r", "exactly": {"deviceClassName": "c0", "count": rng.choice([1, 2]), "selectors": selectors}}]}}}
        if i == 0:   # first, the one marked case a random search over richer claims found
            slices, claim = _MARKED_SLICES, _MARKED_CLAIM
            pools_of = {n: gather_pools(slices, {"name": n}, lambda spec, node: spec.get("allNodes") or
                                        spec.get("nodeName") == node["name"]) for n in ("n1", "n2", "n3")}
        table = _brute_table([claim], pools_of, classes)
        fitting = [n for n in pools_of if any(n in fits for fits, _ in table)]
        expected = dra_slice_orders.judge(table, fitting)
        assert dra_slice_orders.inexact_fits([claim], pools_of, classes, set(), fitting) == expected
        recorded = dra_slice_orders.cycle_table([claim], pools_of, classes, set())
        if recorded:   # no shared pool: [] (every node's own orders decide)
            assert _rows(recorded) == _rows([(f, dict.fromkeys(e, ())) for f, e in table])
            judged += _model_is_the_joint_reading(recorded, table, bool(expected))
        compared += bool(fitting)
        marked += bool(expected)
    assert compared >= 1000 and marked >= 1 and judged >= 300, (compared, marked, judged)


def _rows(table) -> set:
    return {(frozenset(fits), frozenset(errs)) for fits, errs in table}


def _model_is_the_joint_reading(recorded, table, named: bool) -> int:
    """For every set of nodes passing their earlier filters (the others unschedulable): the node
    verdicts of the v1 type the front end writes (``k8s_dra.dra_field``: per-node verdicts, the
    table where a node is named) are ``_joint``'s. How many sets were judged (0: no node errs)."""
    from symreach import semantics
    from symreach.loader import load_document

    nodes = ["n1", "n2", "n3"]
    if not any(errs for _, errs in recorded):
        return 0
    dra: dict = {"filter": []}
    for n in nodes:
        if not any(n in fits for fits, _ in recorded):
            every = all(n in errs for _, errs in recorded)
            why = recorded[0][1][n][0] if every else CANNOT_ALLOCATE
            dra["filter"].append({"node": n, "plugin": "DynamicResources", "reasons": [why]})
    if named:
        dra["cycleOrders"] = [{"fits": sorted(f), "errs": {m: list(w) for m, w in e.items()}} for f, e in recorded]
    judged = 0
    loaded = load_document({"version": 1, "semantics": "kubernetes",
                            "nodes": [{"name": n, "capacity": {"cpu": "4", "pods": "10"}} for n in nodes],
                            "podTypes": [{"name": "default/job", "namespace": "default", "requests": {"cpu": "1"}, "dra": dra}]})
    for k in range(1, len(nodes) + 1):
        for passing in map(set, itertools.combinations(nodes, k)):   # the others fail NodeUnschedulable first
            out = [m for m, node in enumerate(nodes) if node not in passing]
            inst = replace(loaded, static_block=(tuple(reasons.NODE_UNSCHEDULABLE if m in out else why
                                                       for m, why in enumerate(loaded.static_block[0])),),
                           volume_failures=FrozenDict({p: v for p, v in loaded.volume_failures.items() if p[1] not in out}))
            for n in passing:
                fits = semantics.node_failure(inst, 0, inst.node_index(n), inst.initial_config()) is None
                assert fits == _joint(table, n, passing), (recorded, n, passing, named)
            judged += 1
    return judged


def _slice(name: str, devices: dict[str, dict], node: Optional[str] = None, count: int = 1) -> dict:
    return {"spec": resource_slice("", name, devices, count, node)["spec"]}


# Two devices of any class, then one of class c2 (model t4): the shared pool's order decides where the
# search meets a device without the model (an error) before a fit; n1's fit needs its local pool.
_MARKED_SLICES = [
    _slice("shared", {"s00": {"numa": {"int": 0}, "model": {"string": "t4"}}, "s01": {"numa": {"int": 0}}}, count=2),
    _slice("shared", {"s10": {"numa": {"int": 1}}}, count=2),
    _slice("ln10", {"x0": {"model": {"string": "t4"}}}, "n1", 2),
    _slice("ln10", {"x1": {"numa": {"int": 0}, "model": {"string": "a100"}}}, "n1", 2),
    _slice("ln21", {"x0": {"numa": {"int": 1}, "model": {"string": "t4"}}}, "n2"),
    _slice("ln30", {"x0": {"model": {"string": "a100"}}}, "n3"),
    _slice("ln31", {"x1": {"numa": {"int": 0}}}, "n3")]
_MARKED_CLAIM = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [
    {"name": "r0", "exactly": {"deviceClassName": "c0", "count": 2}},
    {"name": "r1", "exactly": {"deviceClassName": "c2", "count": 1}}]}}}


def _marked_state():
    """The marked case as a cluster: three nodes, the classes, slices, claim and the pending pod."""
    from tests.test_dra_orders import CLASSES as classes

    objects: list[dict] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for n in ("n1", "n2", "n3")]
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": cls["spec"]}
                for name, cls in classes.items()]
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"s{k}"}, "spec": s["spec"]}
                for k, s in enumerate(_MARKED_SLICES)]
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "job", "namespace": "default"},
                    "spec": _MARKED_CLAIM["spec"]})
    objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job", "namespace": "default", "uid": "uid-job"},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                             "resourceClaims": [{"name": "g", "resourceClaimName": "job"}]}})
    return any_state(objects, "default/job")


DRA = "DynamicResources"
MARKED_ERROR = (DRA, ('running "DynamicResources" filter plugin: class c2: selector #0: CEL runtime error: no such key: model',))
TAINTED = ("TaintToleration", ("node(s) had untolerated taint(s)",))
# The variant's answers (measured, 40 runs each): the marked case aborts in 40 of 40 (the error on
# every node); with n2 tainted 8 of 40 fit n1 and n3 (n2 TaintToleration) and 32 abort: the slices'
# order is the informer's map order, which Go draws unevenly for two entries.
VARIANT_MARKED = MARKED_ERROR
VARIANT_TAINTED = {"n1": None, "n2": TAINTED, "n3": None}


def test_the_marked_case_aborts_every_cycle_as_the_variant_does():
    """Slice order (s0, s1): n1 and n3 fit, n2 errs; (s1, s0): n2 and n3 fit, n1 errs. Every cycle has
    an erring node that passes its earlier filters, so the scheduler aborts every cycle; the model
    reads the front end's table (v1 ``cycleOrders``) and refuses every node with the abort, naming the
    node that errs under the orders that fit it. No caveat on the verdict: it is exact. Which devices job
    takes on n3 does depend on the order (x0, x1, s00 under the first; s10 and one of x0, x1 with s00
    under the second): where only the first can land (n2 full), the second's outcomes cannot come, which
    the deploy choices do not tell: that caveat alone."""
    from symreach import semantics

    state = _marked_state()
    ours = symreach_dra(state)
    assert ours.verdicts == {n: VARIANT_MARKED for n in ("n1", "n2", "n3")}
    assert [c[:60] for c in ours.caveats if "order of a pool's slices" in c] == [
        "DRA: which devices a deployment on n3 takes depends on the o"]
    inst, _ = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    t, sigma = 0, inst.initial_config()
    named = {n: [why[0] for _, why in semantics.node_failure(inst, t, inst.node_index(n), sigma).alternatives]
             for n in ("n1", "n2", "n3")}
    abort = [reasons.CYCLE_ABORT.format(error=MARKED_ERROR[1][0], node=m) for m in ("n1", "n2")]
    assert named == {"n1": abort[1:], "n2": abort[:1], "n3": abort}
    assert semantics.cycle_abort(inst, t, sigma) is not None and not semantics.abort_chances(inst, t, sigma)


def test_with_n2_tainted_the_order_that_makes_n2_err_places_the_pod():
    """n2 fails TaintToleration before DynamicResources: under (s0, s1) its error is never met, so n1
    and n3 fit; under (s1, s0) n1 errs and aborts. Some run places the pod: it fits n1 and n3, and the
    abort is one chance of the cycle."""
    from symreach import semantics

    state = _tainted(_marked_state())
    assert symreach_dra(state).verdicts == VARIANT_TAINTED
    inst, _ = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    assert semantics.cycle_abort(inst, 0, inst.initial_config()) is None
    assert semantics.abort_chances(inst, 0, inst.initial_config())


def test_the_cycle_orders_in_format_v1():
    v1, _ = kubernetes_to_v1(copy.deepcopy(_marked_state().objects), "marked.yaml")
    dra = v1["podTypes"][0]["dra"]
    assert [(o["fits"], sorted(o["errs"])) for o in dra["cycleOrders"]] == [(["n1", "n3"], ["n2"]), (["n2", "n3"], ["n1"])]
    inst = load_text(yaml.safe_dump(v1), "<v1>")
    assert [sorted(o.fits) for o in inst.cycle_orders[0]] == [[0, 2], [1, 2]] and inst.filter_errors == {0: frozenset({0, 1})}
    for bad, match in (({"fits": ["n9"]}, "unknown node"), ({"fits": ["n1"], "errs": {"n1": [MARKED_ERROR[1][0]]}}, "both"),
                       ({"errs": {"n2": ["cannot allocate all claims"]}}, "expected errors")):
        broken = copy.deepcopy(v1)
        broken["podTypes"][0]["dra"]["cycleOrders"] = [bad, {"fits": ["n1", "n2", "n3"]}]
        with pytest.raises(InputError, match=match):
            load_text(yaml.safe_dump(broken), "<v1>")
    broken = copy.deepcopy(v1)
    broken["podTypes"][0]["dra"]["cycleOrders"] = [{"fits": ["n1"]}]
    with pytest.raises(InputError, match="fits under no order"):
        load_text(yaml.safe_dump(broken), "<v1>")


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_the_variant_aborts_every_cycle_of_the_marked_case():
    seen = [kso_dra_verdicts(_marked_state(), VARIANT) for _ in range(6)]
    assert len(seen) == 6 and all(got == {n: VARIANT_MARKED for n in ("n1", "n2", "n3")} for got in seen)


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_the_variant_places_the_tainted_case_in_some_runs_and_aborts_in_the_others():
    """Runs until one places the pod (its order is the Go map's second, 1 in 8 for two entries: all
    200 miss it with chance 3e-12), each run one of the two outcomes."""
    seen = Counter()
    while seen["fit"] == 0 and sum(seen.values()) < 200:
        try:
            got = kso_verdicts_single(_tainted(_marked_state()), VARIANT)
        except RuntimeError as exc:
            assert MARKED_ERROR[1][0] in str(exc)
            got = "abort"
        seen["fit" if got == VARIANT_TAINTED else got] += 1
    assert set(seen) <= {"fit", "abort"} and seen["fit"] == 1 and sum(seen.values()) >= 1


def _tainted(state):
    for o in state.objects:
        if o["kind"] == "Node" and o["metadata"]["name"] == "n2":
            o["spec"] = {"taints": [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}]}
    return state


def test_nodes_a_cycle_order_names_are_never_interchangeable():
    """n1, n2 and n3 are alike but for their parts in the slice orders (n3 never errs): the explicit
    engine's orbit reduction keeps each apart."""
    from symreach.encodings.symmetry import node_classes

    inst, _ = load_kubernetes_documents(copy.deepcopy(_marked_state().objects), "<state>")
    assert inst.cycle_orders and node_classes(inst) == [(0,), (1,), (2,)]
    assert len(node_classes(replace(inst, cycle_orders=FrozenDict()))) == 1


def _with_other(allocated_on_n3: bool) -> list[dict]:
    """The marked case and a pod ``other`` whose claim takes one device of any class: pending, or
    running on n3 holding n3's x0 (the first device its allocator meets there)."""
    objects = copy.deepcopy(_marked_state().objects)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "other", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c0", "count": 1}}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other", "namespace": "default", "uid": "uid-other"},
           "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": [{"name": "g", "resourceClaimName": "other"}]}}
    if allocated_on_n3:
        claim["status"] = {"allocation": {"devices": {"results": [{"request": "r", "driver": "d", "pool": "ln30", "device": "x0"}]},
                                          "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                              {"key": "metadata.name", "operator": "In", "values": ["n3"]}]}]}},
                           "reservedFor": [{"resource": "pods", "name": "other", "uid": "uid-other"}]}
        pod["spec"]["nodeName"] = "n3"
    return objects + [claim, pod]


def test_an_allocation_state_a_witness_reaches_has_its_own_cycle_orders():
    """Deploying ``other`` on n3 (it takes n3's x0) moves the devices to a state where job's slice
    orders are (n1 fits; n2, n3 err) and (n2, n3 fit; n1 err): job aborts on every node there. The
    v1 state entry carries them, and job's verdicts after that step are those of the cluster given
    with ``other`` already running there (its own input state)."""
    from symreach import semantics
    from symreach.result import DEPLOY, Step

    v1, report = kubernetes_to_v1(_with_other(False), "other.yaml")
    job = next(p for p in v1["podTypes"] if p["name"] == "default/job")
    # other may take n3's x0 or x1 (the order of n3's pools): job's orders are recorded in both states
    assert [s["held"] for s in job["dra"]["allocations"]["states"] if s.get("cycleOrders")] == [
        [None, "n3: d/ln30/x0"], [None, "n3: d/ln31/x1"]]
    assert not [c for c in report.caveats.get("default/job", []) if "order of a pool's slices" in c
                and "which devices" not in c]
    inst = load_text(yaml.safe_dump(v1), "<v1>")
    sigma = semantics.replay(inst, [Step(DEPLOY, "default/other", "n3")])
    t = inst.type_index("default/job")
    after = {n: semantics.node_failure(inst, t, inst.node_index(n), sigma) for n in ("n1", "n2", "n3")}
    given, _ = load_kubernetes_documents(_with_other(True), "<state>")
    u = given.type_index("default/job")
    alone = {n: semantics.node_failure(given, u, given.node_index(n), given.initial_config()) for n in ("n1", "n2", "n3")}
    assert after == alone and all(f is not None and f.plugin == DRA and "aborts" in f.reason for f in after.values())


def _split_cycle(a_nodes: int, b_nodes: int) -> str:
    """A v1 instance: nodes a* fit only under slice order 0, b* only under order 1, e errs under both
    (one zone, so the early stop is exact): above 101 nodes whether a run stops before e depends on
    how many fit under the cycle's one order, not on how many fit under some order."""
    names = [f"a{i}" for i in range(a_nodes)] + [f"b{i}" for i in range(b_nodes)] + ["e"]
    error = 'running "DynamicResources" filter plugin: boom'
    nodes = ", ".join(f"{{name: {n}, capacity: {{cpu: 2, pods: 10}}}}" for n in names)
    a = ", ".join(names[:a_nodes])
    b = ", ".join(names[a_nodes:-1])
    return f"""version: 1
semantics: kubernetes
nodes: [{nodes}]
podTypes:
- name: p
  requests: {{cpu: 1}}
  dra:
    filter: [{{node: e, plugin: DynamicResources, reasons: ['{error}']}}]
    cycleOrders:
    - {{fits: [{a}], errs: {{e: ['{error}']}}}}
    - {{fits: [{b}], errs: {{e: ['{error}']}}}}
"""


@pytest.mark.parametrize("a_nodes,lands", [(60, False), (100, False), (101, True)])
def test_above_101_nodes_the_early_stop_counts_the_nodes_fitting_under_the_cycles_order(a_nodes, lands):
    """121-161 nodes, k = 100: per node, the 120+ a and b nodes fit (under some order), more than k,
    so a run could stop before e. Under one order only the a (or b) nodes fit: with at most k of them
    every node is filtered and e's error aborts every cycle; with k + 1 a nodes the run starting at
    their head stops before e under order 0 (the b nodes, 60, never do)."""
    from symreach import semantics
    from symreach.loader import load_text
    from symreach.model import num_feasible_nodes_to_find

    inst = load_text(_split_cycle(a_nodes, 60), "<v1>")
    t, sigma = 0, inst.initial_config()
    assert num_feasible_nodes_to_find(len(inst.nodes)) == 100
    per_node = [m for m in range(len(inst.nodes)) if semantics.filter_failure(inst, t, m, sigma) is None]
    assert len(per_node) == a_nodes + 60 > 100
    a0, b0 = inst.node_index("a0"), inst.node_index("b0")
    assert (semantics.node_failure(inst, t, a0, sigma) is None) is lands
    assert semantics.node_failure(inst, t, b0, sigma) is not None   # 60 b nodes: every cycle under order 1 aborts
    assert (semantics.cycle_abort(inst, t, sigma) is None) is lands
