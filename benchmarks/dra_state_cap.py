"""How many allocation-walk inputs exceed the DRA state cap, and what loading them costs.

    python -m benchmarks.dra_state_cap --seeds 1,2 --inputs 150

``frontends.k8s_dra_state`` explores the joint device allocations reachable from
an input's (the search budget's ``dra-states`` and ``dra-state-work`` guards,
``symreach.search_budget``: states, states x users x nodes); above
that the input keeps the old caveat ("devices that earlier steps of a witness
allocate ... are not modelled"). For the inputs of ``benchmarks.kso_dra_walks``
(``walk_input``), prints how many are over the cap, the states explored, and the
CPU time of loading them (front end and v1 loader), total and largest, with the
load, and the deployments with several outcomes (deploy choices). ``--states N --work N`` try other guards on the same inputs.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import time

from benchmarks.kso_dra_walks import walk_input
from symreach import search_budget
from symreach.frontends.kubernetes import load_kubernetes_documents

OVER = "joint device allocations"


def measure(seeds: list[int], inputs: int, budget: search_budget.Budget = search_budget.DEFAULT
            ) -> tuple[int, int, float, float, int]:
    """(inputs over the cap, states explored, load CPU seconds in total, the largest, deployments
    with several outcomes: (state, type, node) where the scheduler's order of pools and slices
    decides the devices, ``BindingGroup.choices``)."""
    over = states = choices = 0
    total = largest = 0.0
    for seed in seeds:
        rng = random.Random(seed)
        for i in range(inputs):
            objects, _ = walk_input(rng, i)
            t0 = time.process_time()
            inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<walk>", budget=budget)
            spent = time.process_time() - t0
            total, largest = total + spent, max(largest, spent)
            over += any(OVER in c for cs in report.caveats.values() for c in cs)
            states += sum(len(g.states) for g in inst.binding_groups if g.holders)
            choices += sum(1 for g in inst.binding_groups if g.holders for per in g.choices
                           for row in per.values() for c in row if c)
    return over, states, total, largest, choices


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1", help="comma-separated seeds of walk_input")
    ap.add_argument("--inputs", type=int, default=150, help="inputs per seed")
    ap.add_argument("--states", type=int, default=search_budget.BY_NAME[search_budget.DRA_STATES].default,
                    help="the dra-states guard to try")
    ap.add_argument("--work", type=int, default=search_budget.BY_NAME[search_budget.DRA_STATE_WORK].default,
                    help="the dra-state-work guard to try")
    args = ap.parse_args()
    budget = search_budget.Budget(limits={search_budget.DRA_STATES: args.states, search_budget.DRA_STATE_WORK: args.work})
    seeds = [int(s) for s in args.seeds.split(",")]
    load = os.getloadavg()[0]
    over, states, total, largest, choices = measure(seeds, args.inputs, budget)
    print(f"seeds {seeds} x {args.inputs} inputs, dra-states {args.states}, dra-state-work {args.work}: "
          f"{over} over the cap; {states} states explored, {choices} deployments with several outcomes; "
          f"load CPU {total:.1f} s in total, {largest:.2f} s the "
          f"largest; load {load:.1f} at start")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
