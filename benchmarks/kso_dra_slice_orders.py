"""Shared pools whose slice order decides an allocator error, judged against the kso variant's runs.

v1.35 lists the ResourceSlices once per cycle, so one slice order holds for every node
(``frontends.dra_slice_orders``). The random DRA states rarely hold a pool of several slices
reaching several nodes with an erring device, so ``contested`` builds such states: 2 or 3 nodes,
one pool of 2 or 3 slices (all nodes, or a label selector), each device matching the class, not
matching, or lacking the attribute its CEL reads (a runtime error), and sometimes a node-local
pool. Each state is asked of the variant ``RUNS`` times; per node, symreach's fit must be one
some run gives (a run's outcome for the pod; an error aborts every node), and a node symreach
refuses must be refused in every run with a reason some run gives. Unmarked fits are counted
apart (the per-node model exact there); fits symreach marks are only checked to be possible.

    python -m benchmarks.kso_dra_slice_orders --states 40 --seed 1
    python -m benchmarks.kso_dra_slice_orders --states 100 --seed 3 --slices 6   # orders past the old cap of 120
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
from benchmarks.kso_harness import any_state
from symreach.generators.k8s_states import State

RUNS = 12
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
DRIVER = "gpu.example.com"
ATTRIBUTES = ({"numa": {"int": 0}}, {"numa": {"int": 1}}, {"model": {"string": "t4"}})   # fits, no match, error


def contested(rng: random.Random, most: int = 3) -> list[dict]:
    """One state: nodes, the numa0 class, a pool shared by the nodes (2 to ``most`` slices), the pending
    pod and its claim."""
    names = [f"n{i}" for i in range(1, rng.choice((2, 3)) + 1)]
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"rack": rng.choice("ab")}},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for n in names]
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "numa0"},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}},
                                           {"cel": {"expression": f'device.attributes["{DRIVER}"].numa == 0'}}]}})
    count = rng.choice((2, 3)) if most == 3 else rng.randint(2, most)   # the first form keeps the old seeds' states
    for k in range(count):
        spec: dict = {"driver": DRIVER, "pool": {"name": "shared", "generation": 1, "resourceSliceCount": count},
                      "devices": [{"name": f"s{k}", "attributes": copy.deepcopy(rng.choice(ATTRIBUTES))}]}
        if rng.random() < 0.6:
            spec["allNodes"] = True
        else:
            spec["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "rack", "operator": "In", "values": [rng.choice("ab")]}]}]}
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"shared-{k}"},
                        "spec": spec})
    for n in names:
        if rng.random() < 0.3:
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-own"},
                            "spec": {"driver": DRIVER, "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                                     "devices": [{"name": "g", "attributes": copy.deepcopy(rng.choice(ATTRIBUTES))}]}})
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "job", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "numa0"}}]}}})
    objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job", "namespace": "default", "uid": "uid-job"},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                             "resourceClaims": [{"name": "g", "resourceClaimName": "job"}]}})
    return objects


def judge_state(state: State, kso: Path, runs: int = RUNS) -> tuple[int, int, int, int, list[str]]:
    """(node verdicts, unmarked fits, marked fits, verdicts with several outcomes over the orders,
    disagreements) for one state."""
    ours = symreach_dra(state)
    contested_n = sum(len(p) > 1 for p in ours.possible.values())
    marked = next((c for c in ours.caveats if "once per cycle" in c), "")
    seen = [kso_dra_verdicts(state, kso) for _ in range(runs)]
    wrong, exact, loose = [], 0, 0
    for node, verdict in ours.verdicts.items():
        theirs = {run[node] for run in seen}
        if verdict is None:
            exact += node not in marked
            loose += node in marked
            if None not in theirs:
                wrong.append(f"{node}: symreach fits, kso never did: {sorted(map(str, theirs))}")
        elif None in theirs or verdict not in theirs:
            wrong.append(f"{node}: symreach {verdict}, kso {sorted(map(str, theirs))}")
    return len(ours.verdicts), exact, loose, contested_n, wrong


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kso", type=Path, default=VARIANT)
    ap.add_argument("--slices", type=int, default=3, help="most slices of the shared pool (6: up to 720 orders)")
    ap.add_argument("--runs", type=int, default=RUNS, help="variant runs per state (more slices want more)")
    args = ap.parse_args(argv)
    load, t0 = os.getloadavg()[0], time.perf_counter()
    rng = random.Random(args.seed)
    verdicts = exact = loose = several = 0
    wrong: list[str] = []
    for i in range(args.states):
        v, e, lo, c, w = judge_state(any_state(contested(rng, args.slices), "default/job"), args.kso, args.runs)
        verdicts, exact, loose, several = verdicts + v, exact + e, loose + lo, several + c
        wrong += [f"state {i} {x}" for x in w]
    print(f"states {args.states} (seed {args.seed}), node verdicts {verdicts}, each against {args.runs} variant runs: "
          f"{verdicts - len(wrong)} agree ({several} with several outcomes over the orders); fits unmarked "
          f"{exact}, marked {loose}")
    return finish(wrong, load, t0)


def finish(wrong: list[str], load: float, t0: float) -> int:
    """Print the first disagreements, the time and the load at start; the exit status."""
    for line in wrong[:10]:
        print("  " + line)
    print(f"time {time.perf_counter() - t0:.1f} s wall, load {load:.1f} at start")
    return 0 if not wrong else 1


if __name__ == "__main__":
    raise SystemExit(main())
