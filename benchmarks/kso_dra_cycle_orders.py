"""States where one slice order per cycle decides a DRA fit, judged against the kso variant's runs.

``frontends.dra_slice_orders`` records, where the per-node model could differ from one order of
the ResourceSlices for the whole cycle, each order's fitting and erring nodes (v1
``dra.cycleOrders``). The random DRA states never hold such a case, so ``candidate`` builds states
around the one a search found (``tests/test_dra_slice_orders.py``): 3 nodes, a pool of 2 or 3
slices on every node and node-local pools, devices with or without the attributes the classes'
CEL reads, the claim asking 2 devices of any class and 1 model t4; a node is sometimes tainted (it
fails TaintToleration before DynamicResources). Only states whose table is recorded are asked of
the variant, ``RUNS`` times each, judged per node as ``judge_state`` says (the slice order is
the informer's Go map order, uneven for few slices: a rare order may not be drawn, counted apart;
with a fixed insertion order a map of a few entries gives only its rotations, where the
scheduler's creation history may give any order, so some orders are never drawn by kso).
Measured: ``benchmarks/results/kso_dra_cycle_orders.md``.

    python -m benchmarks.kso_dra_cycle_orders --candidates 1500 --seed 1
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import time
from pathlib import Path
from typing import Optional

from benchmarks.kso_dra_agreement import kso_dra_verdicts, symreach_dra
from benchmarks.kso_dra_slice_orders import finish
from benchmarks.kso_harness import any_state
from symreach.frontends.kubernetes import kubernetes_to_v1
from symreach.generators.k8s_states import State
from symreach.reasons import is_filter_error

RUNS = 12
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
NODES = ("n1", "n2", "n3")
DRIVER = "d"
CLASSES = {"c0": {}, "c2": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "t4"'}}]}}


def attributes(rng: random.Random) -> dict:
    """A device's attributes: numa and model, each there or not (the classes' CEL errs without them)."""
    out = {}
    if rng.random() < 0.7:
        out["numa"] = {"int": rng.choice([0, 1])}
    if rng.random() < 0.6:
        out["model"] = {"string": rng.choice(["t4", "a100"])}
    return out


def resource_slice(name: str, pool: str, devices: dict[str, dict], count: int, node: Optional[str] = None) -> dict:
    """A ResourceSlice of driver ``d``: on node, or on every node."""
    spec = {"driver": DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
            "devices": [{"name": d, "attributes": a} for d, a in devices.items()]}
    spec.update({"nodeName": node} if node else {"allNodes": True})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def candidate(rng: random.Random) -> list[dict]:
    """One state: the nodes (one tainted at times), the classes, the slices, the claim and the pod."""
    tainted = rng.choice((None, None) + NODES)
    objects: list[dict] = []
    for n in NODES:
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
        if n == tainted:
            node["spec"] = {"taints": [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}]}
        objects.append(node)
    objects += [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": c}, "spec": copy.deepcopy(s)}
                for c, s in CLASSES.items()]
    shared = rng.choice((2, 3))
    objects += [resource_slice(f"shared-{k}", "shared", {f"s{k}{j}": attributes(rng) for j in range(rng.choice((1, 2)))}, shared)
                for k in range(shared)]
    for n in NODES:
        count = rng.choice((0, 1, 2))
        objects += [resource_slice(f"{n}-{k}", f"l{n}", {f"x{k}": attributes(rng)}, count, n) for k in range(count)]
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "job", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "c0", "count": 2}},
                                                      {"name": "r1", "exactly": {"deviceClassName": "c2", "count": 1}}]}}})
    objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job", "namespace": "default", "uid": "uid-job"},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                             "resourceClaims": [{"name": "g", "resourceClaimName": "job"}]}})
    return objects


def recorded(objects: list[dict]) -> bool:
    """Whether the front end records the pod's slice orders of the cycle (v1 ``dra.cycleOrders``)."""
    v1, _ = kubernetes_to_v1(copy.deepcopy(objects), "<state>")
    return any("cycleOrders" in (p.get("dra") or {}) for p in v1["podTypes"])


def judge_state(state: State, kso: Path, runs: int = RUNS) -> tuple[int, int, int, list[str]]:
    """(node verdicts, fits, fits or refusals no run showed, disagreements) for one state: a node
    symreach refuses must never fit; an abort it gives must be met by some run; a fit or a refusal
    it gives, by some run not aborted when one is drawn (else "not seen": kso's order is the Go map's,
    1 in 8 for the second of two slices)."""
    ours = symreach_dra(state)
    seen = [kso_dra_verdicts(state, kso) for _ in range(runs)]
    wrong, unseen = [], 0
    for node, verdict in ours.verdicts.items():
        theirs = [run[node] for run in seen]
        placed = [v for v in theirs if v is None or not is_filter_error(v[1][0])]   # the runs not aborted
        if verdict is None or not is_filter_error(verdict[1][0]):
            unseen += verdict not in placed   # the order giving it was not drawn (all aborted, or rare)
        if verdict is not None and None in theirs:
            wrong.append(f"{node}: symreach {verdict}, kso fits in some run")
        elif verdict is not None and is_filter_error(verdict[1][0]) and len(placed) == len(theirs):
            wrong.append(f"{node}: symreach aborts, kso never: {sorted(map(str, set(theirs)))}")
        elif verdict is not None and placed and verdict not in placed:
            wrong.append(f"{node}: symreach {verdict}, kso {sorted(map(str, set(theirs)))}")
    return len(ours.verdicts), sum(v is None for v in ours.verdicts.values()), unseen, wrong


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kso", type=Path, default=VARIANT)
    ap.add_argument("--runs", type=int, default=RUNS)
    args = ap.parse_args(argv)
    load, t0 = os.getloadavg()[0], time.perf_counter()
    rng = random.Random(args.seed)
    states = verdicts = fits = unseen = 0
    wrong: list[str] = []
    for i in range(args.candidates):
        objects = candidate(rng)
        if not recorded(objects):
            continue
        states += 1
        v, f, u, w = judge_state(any_state(objects, "default/job"), args.kso, args.runs)
        verdicts, fits, unseen = verdicts + v, fits + f, unseen + u
        wrong += [f"candidate {i} {x}" for x in w]
    print(f"candidates {args.candidates} (seed {args.seed}): {states} with slice orders of the cycle recorded, "
          f"node verdicts {verdicts}, each against {args.runs} variant runs: {verdicts - len(wrong)} agree; "
          f"fits {fits}; {unseen} fits or refusals in no run (their order not drawn)")
    return finish(wrong, load, t0)


if __name__ == "__main__":
    raise SystemExit(main())
