"""How many deploy choices and allocation states the allocation walks' inputs load with.

    PYTHONPATH=<tree> python benchmarks/dra_deploy_choices.py --seed 51 --inputs 100   # from this tree

Loads ``benchmarks.kso_dra_walks.walk_input``'s random inputs and prints, for the tree on
PYTHONPATH: the inputs whose devices are state, their joint states, the (state, type, node)
deployments with several outcomes (``k8s_dra_state``: the scheduler's order of pools and slices
decides the devices), the inputs with a caveat on that order or past a search-budget guard, and
the CPU time of the loads. Run it on two trees one after the other to compare them side by side.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import time

from benchmarks.kso_dra_walks import walk_input
from symreach.frontends.kubernetes import load_kubernetes_documents


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--inputs", type=int, default=100)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    inputs = [walk_input(rng, i)[0] for i in range(args.inputs)]
    states = modelled = past = order = choices = 0
    t0 = time.process_time()
    for objects in inputs:
        inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<walk>")
        caveats = [c for cs in report.caveats.values() for c in cs]
        past += any("search budget" in c for c in caveats)
        order += any("several pools" in c or "which devices a deployment" in c for c in caveats)
        for group in (g for g in inst.binding_groups if g.holders):
            modelled += 1
            states += len(group.states)
            choices += sum(1 for per in group.choices for row in per.values() for c in row if c)
    print(f"{args.inputs} inputs (seed {args.seed}): {modelled} with devices as state, {states} joint states, "
          f"{choices} deployments with several outcomes, {order} with a caveat on the pools' order, {past} past "
          f"a search-budget guard; {time.process_time() - t0:.1f} s CPU (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
