"""DIMACS CNF of one BMC unrolling: the target is reachable within ``depth``
steps iff the formula is satisfiable.

The unrolling is ``CnfLowering`` with the BMC step of ``BmcEngine`` (any set
of deletions, then at most one deploy), the initial state as unit clauses at
step 0 and the target at step ``depth`` as a unit clause. Comment lines
``c var <id> <name>`` name the state variables and action selectors, so an
external solver's model can be read back.

Both the unrolling and the text poll the run's context (time, cancel, and
the address space: an unrolling deep enough to fill memory ends as a
memory limit while there is still room to print it).
"""

from __future__ import annotations

from typing import Optional

from symreach.encodings.cnf import CnfLowering
from symreach.encodings.system import TransitionSystem
from symreach.run import RunContext

PHASE = "export"
POLL_LINES = 4096  # clauses rendered between two polls


def poll(run: RunContext) -> None:
    run.check(PHASE)
    run.check_memory(PHASE)


def bmc_cnf(system: TransitionSystem, depth: int,
            run: Optional[RunContext] = None) -> tuple[list[list[int]], CnfLowering]:
    run = run if run is not None else RunContext()
    low = CnfLowering(system)
    for u in low.initial_units(0):
        low.clause([u])
    for k in range(depth):
        poll(run)
        low.bmc_step(k)
    low.clause([low.lit(system.target, depth)])
    return low.flush(), low


def dimacs_text(system: TransitionSystem, depth: int, comment: str = "",
                run: Optional[RunContext] = None) -> str:
    if depth < 0:
        raise ValueError("depth must be >= 0")
    run = run if run is not None else RunContext()
    clauses, low = bmc_cnf(system, depth, run)
    nvars = max([abs(x) for cl in clauses for x in cl] + [low.pool.top])
    tn, nn = system.type_names, system.node_names
    lines = [f"c symreach BMC unrolling, depth {depth}: SAT iff the target is reachable"]
    if comment:
        lines += [f"c {ln}" for ln in comment.splitlines()]
    for obj, vid in sorted(low.pool.obj2id.items(), key=lambda kv: kv[1]):
        if obj[0] in ("present", "count"):
            extra = f"#{obj[3]}" if obj[0] == "count" else ""
            lines.append(f"c var {vid} {obj[0]}[{tn[obj[1]]}@{nn[obj[2]]}{extra}] step {obj[-1]}")
        elif obj[0] == "act":
            a = system.actions[obj[1]]
            lines.append(f"c var {vid} act {a.op} {tn[a.type_index]}@{nn[a.node_index]} step {obj[2]}")
    lines.append(f"p cnf {nvars} {len(clauses)}")
    for i, cl in enumerate(clauses):
        if i % POLL_LINES == 0:
            poll(run)
        lines.append(" ".join(map(str, cl)) + " 0")
    return "\n".join(lines) + "\n"
