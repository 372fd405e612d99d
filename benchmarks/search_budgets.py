"""What each guard of the search budget costs at its default, on an input just past it.

    python -m benchmarks.search_budgets [--only GUARD ...] [--factor F]

Per guard of ``symreach.search_budget``: a pathological input that passes the default
guard, the CPU time until the guard stops the search (what the default lets a load
spend on that search), whether the answer carries the caveat, and with ``--factor``
(e.g. 4) the same under that budget. Prints the load with every figure.
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from typing import Callable

import yaml

from symreach import search_budget
from symreach.search_budget import Budget
from symreach.frontends import dra_orders, dra_slice_orders
from symreach.frontends.dra_allocator import allocate_in_order, gather_pools
from symreach.frontends.kubernetes import load_kubernetes_documents

D = "d"
MODEL = 'device.attributes["d"].model == "%s"'


def _pools(devices_of: list[list[dict]]) -> list:
    slices = [{"spec": {"driver": D, "allNodes": True, "devices": devices,
                        "pool": {"name": f"p{k}", "generation": 1, "resourceSliceCount": 1}}}
              for k, devices in enumerate(devices_of)]
    return gather_pools(slices, {"name": "n"}, lambda spec, node: True)


def allocator_steps_input(a: int = 12, count: int = 5) -> Callable[[], tuple[bool, object]]:
    """A request of ``count`` of ``a`` numa-0 devices and one of two numa-1 devices under one
    matchAttribute numa: no fit, found only after every ordered choice of the first request."""
    devices = [{"name": f"a{k}", "attributes": {"model": {"string": "m0"}, "numa": {"int": 0}}} for k in range(a)]
    devices += [{"name": f"b{k}", "attributes": {"model": {"string": "m1"}, "numa": {"int": 1}}} for k in range(2)]
    pools = _pools([devices])
    classes = {m: {"spec": {"selectors": [{"cel": {"expression": MODEL % m}}]}} for m in ("m0", "m1")}
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "m0", "count": count}},
                     {"name": "s", "exactly": {"deviceClassName": "m1", "count": 1}}],
        "constraints": [{"matchAttribute": f"{D}/numa"}]}}}

    def run() -> tuple[bool, object]:
        found = allocate_in_order([claim], pools, classes, set())
        return bool(found.caveats), found.reason
    return run


def orders_input(pools: int = 8, count: int = 2) -> Callable[[], tuple[bool, object]]:
    """``pools`` pools of one device each a constraint tells apart, the first erring (no numa),
    ``count`` devices requested: every order meets the error only where the search reaches it
    (``tests/test_dra_orders.py``'s case, larger)."""
    devices = [[{"name": "x", "attributes": {"numa": {"int": 1}, "model": {"string": f"m{k}"}} if k else {}}]
               for k in range(pools)]
    found_pools = _pools(devices)
    classes = {"c0": {"spec": {}}}
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "c0", "count": count, "selectors": [
            {"cel": {"expression": f'device.attributes["{D}"].numa >= 0'}}]}}],
        "constraints": [{"matchAttribute": f"{D}/model"}]}}}

    def run() -> tuple[bool, object]:
        found = dra_orders.allocate([claim], found_pools, classes, set())
        return bool(found.caveats), (found.reason, found.outcomes)
    return run


def cycle_input(models: int, nodes: int) -> Callable[[], tuple[bool, object]]:
    """One pool of one slice per model reaching every node, a claim whose constraint tells the
    slices apart (``tests/test_dra_slice_orders.py``'s case): ``models``! cycle orders."""
    slices = [{"spec": {"driver": D, "allNodes": True, "devices": [{"name": f"x{k}", "attributes": {
        "model": {"string": f"m{k}"}}}], "pool": {"name": "p", "generation": 1, "resourceSliceCount": models}}}
        for k in range(models)]
    pools_of = {f"n{i}": gather_pools(slices, {"name": f"n{i}"}, lambda spec, node: True) for i in range(nodes)}
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}], "constraints": [{"matchAttribute": "d/model"}]}}}

    def run() -> tuple[bool, object]:
        table = dra_slice_orders.cycle_table([claim], pools_of, {"c": {"spec": {}}}, set())
        return table is None, None if table is None else len(table)
    return run


def _load(docs: list[str]) -> Callable[[], tuple[bool, object]]:
    objects = [yaml.safe_load(d) for d in docs]

    def run() -> tuple[bool, object]:
        inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<state>")
        caveats = [c for cs in report.caveats.values() for c in cs if "search budget" in c]
        return bool(caveats), [len(g.states) for g in inst.binding_groups]
    return run


def volume_search_input(tiers: int = 12, per_tier: int = 3) -> Callable[[], tuple[bool, object]]:
    """A pod with ``tiers + 1`` claims of one class, claim k refusing PVs of tier k (``NotIn``), and
    ``per_tier`` equal PVs per tier: every claim may take a PV of every other tier."""
    from tests.test_kso_classes import C, node, pod
    from tests.test_kso_classes_27 import SC_WFFC, pv, pvc, uses

    docs = [node("n1"), SC_WFFC]
    docs += [pv(f"pv-{t}-{k}", ", storageClassName: local, local: {path: /x}", f", labels: {{tier: t{t}}}")
             for t in range(tiers) for k in range(per_tier)]
    claims = [f"c{k}" for k in range(tiers + 1)]
    docs += [pvc(c, f", storageClassName: local, selector: {{matchExpressions: [{{key: tier, operator: NotIn, "
                    f"values: [t{k}]}}]}}") for k, c in enumerate(claims)]
    docs.append(pod("incoming", C + uses(*claims)))
    return _load(docs)


def volume_bindings_input(claims: int = 9) -> Callable[[], tuple[bool, object]]:
    """``claims`` bare pods with a claim each and as many interchangeable local PVs on n1: 2^claims
    joint bindings (``tests/test_volume_runs.py``'s case of five)."""
    from tests.test_kso_classes import C, node, pod
    from tests.test_kso_classes_27 import SC_WFFC, pv, pvc, uses

    local = (", storageClassName: local, local: {path: /x}, nodeAffinity: {required: {nodeSelectorTerms: "
             "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]}}")
    docs = [node("n1"), SC_WFFC] + [pv(f"pv-{k}", local) for k in range(claims)] + [pvc(f"c{k}") for k in range(claims)]
    docs += [pod(f"p{k}", C + uses(f"c{k}")) for k in range(claims)]
    return _load(docs)


def dra_states_input(nodes: int = 3, gpus: int = 4, claims: int = 3) -> Callable[[], tuple[bool, object]]:
    """``tests/test_dra.py``'s gpu cluster: a Deployment taking a gpu per pod and bare pods with a
    one-gpu claim each (joint allocations grow with nodes, gpus and claims)."""
    from tests.test_dra import _gpu_cluster

    objects = _gpu_cluster(nodes, gpus, claims)

    def run() -> tuple[bool, object]:
        inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<state>")
        caveats = [c for cs in report.caveats.values() for c in cs if "search budget" in c]
        return bool(caveats), [len(g.states) for g in inst.binding_groups if g.holders]
    return run


def pool_orders_input(pools: int = 8, asked: int = 4) -> Callable[[], tuple[bool, object]]:
    """``dra_states_input``'s cluster on one node whose gpus are ``pools`` pools of one device each, no
    Deployment, and a bare pod whose claim asks ``asked`` of them: every choice of pools is an outcome of its deployment,
    met by sum_i pools!/(pools-i)! runs (i up to ``asked``)."""
    from tests.test_dra import _gpu_cluster

    objects = [o for o in _gpu_cluster(1, 0, 1) if o["kind"] not in ("ResourceSlice", "Deployment")] + [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"g{k}"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n0", "devices": [{"name": "x"}],
                  "pool": {"name": f"g{k}", "generation": 1, "resourceSliceCount": 1}}} for k in range(pools)]
    next(o for o in objects if o["kind"] == "ResourceClaim")["spec"]["devices"]["requests"][0]["exactly"]["count"] = asked

    def run() -> tuple[bool, object]:
        inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<state>")
        caveats = [c for cs in report.caveats.values() for c in cs if "search budget" in c]
        return bool(caveats), [len(g.states) for g in inst.binding_groups if g.holders]
    return run


def nominated_matrix_input(nodes: int = 6, types: int = 4) -> Callable[[], tuple[bool, object]]:
    """``nodes`` nodes of 4 CPUs, ``types`` pending 1-CPU pods and a 4-CPU pod nominated to n0 that fits no
    node (its nomination never ends): each type's cell on n0 is deployable without the nomination, and
    the search around it explores every configuration before it answers not deployable."""
    from symreach.cli.nominated_answers import settle_matrix
    from symreach.report.caveats import type_caveats
    from symreach.solvers.matrix import matrix_table
    from tests.nominated_cases import node, pod

    objects = [node(f"n{i}", cpu="4") for i in range(nodes)] + [pod(f"p{k}") for k in range(types)]
    objects.append(pod("q", cpu="4", priority=100, nominated="n0", nodeSelector={"disk": "ssd"}))

    def run() -> tuple[bool, object]:
        inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<state>")
        m = matrix_table(inst)
        m.caveats = type_caveats(report, inst)
        stats = settle_matrix(m, inst, report, search_budget.active()).stats()
        return stats["left marked"] > 0, stats
    return run


CASES: dict[str, tuple[str, Callable[[], Callable[[], tuple[bool, object]]]]] = {
    search_budget.DRA_ALLOCATOR_STEPS: ("12 + 2 devices, 5 + 1 requested, one matchAttribute", allocator_steps_input),
    search_budget.DRA_ORDERS: ("8 pools a constraint tells apart, the first erring, 2 devices asked", orders_input),
    search_budget.DRA_CYCLE_ORDERS: ("8 slices a constraint tells apart, 2 nodes", lambda: cycle_input(8, 2)),
    search_budget.DRA_CYCLE_SEARCHES: ("7 slices a constraint tells apart, 4 nodes", lambda: cycle_input(7, 4)),
    search_budget.VOLUME_SEARCH: ("13 claims, 12 tiers x 3 PVs, claim k refusing tier k", volume_search_input),
    search_budget.VOLUME_BINDINGS: ("9 pods binding 9 interchangeable PVs", volume_bindings_input),
    search_budget.DRA_STATES: ("3 nodes x 4 gpus, a Deployment and 3 bare claims", dra_states_input),
    search_budget.DRA_POOL_ORDERS: ("8 one-gpu pools on a node, 4 asked (2,081 runs, 70 outcomes)", pool_orders_input),
    search_budget.DRA_STATE_WORK: ("6 nodes x 2 gpus, a Deployment and 5 bare claims", lambda: dra_states_input(6, 2, 5)),
    search_budget.NOMINATED_SEARCH: ("matrix: 6 nodes of 4 CPUs, 4 pending 1-CPU types, a nomination that never "
                                     "ends", nominated_matrix_input),
}


def measure(name: str, budget: Budget) -> tuple[float, bool, object]:
    run = CASES[name][1]()
    with search_budget.using(budget):
        t0 = time.process_time()
        caveat, answer = run()
        return time.process_time() - t0, caveat, answer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(CASES), help="guards to measure")
    ap.add_argument("--factor", type=float, default=None, help="also measure under this budget factor")
    args = ap.parse_args()
    for name in args.only:
        load = os.getloadavg()[0]
        spent, caveat, answer = measure(name, search_budget.DEFAULT)
        line = (f"{name} ({search_budget.BY_NAME[name].default:,}): {CASES[name][0]}: {spent:.2f} s CPU, "
                f"caveat {caveat}, {answer}")
        if args.factor is not None:
            raised, caveat_r, answer_r = measure(name, Budget(args.factor))
            line += f"; x{args.factor:g}: {raised:.2f} s, caveat {caveat_r}, {answer_r}"
        print(f"{line} (load {load:.1f})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
