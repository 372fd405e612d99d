"""StatefulSet witnesses in an order an operator can follow (SPEC 5.2, ``--keep-replicas``).

A StatefulSet's replica comes back under its own name (web-1 evicted, web-1
recreated), so it cannot be created before the pod it replaces is gone, and
its scale-down always removes the highest ordinal, never a chosen pod. A
breadth-first witness may deploy the replacement first (deployments come
first in its successor order). ``identity_order`` moves each such deletion to
just before the deployment it pairs with when the reordered trace still
replays under every rule (``semantics.replay``: the guards at each step, the
target and the replica floors at the end); otherwise the step stays where it
is. The result is a witness of the same length, so nothing about the answer
changes.
"""

from __future__ import annotations

from typing import Sequence

from symreach import semantics
from symreach.model import Instance, Query
from symreach.result import DELETE, DEPLOY, Step


def identity_order(inst: Instance, trace: Sequence[Step], query: Query) -> tuple[Step, ...]:
    sets = [r for r in inst.replica_targets if r.members]
    out = tuple(trace)
    if not (inst.moves.keep_replicas and sets):
        return out
    owner = {inst.pod_types[t].name: r.name for r in sets for t in r.types}
    moved = True
    while moved:
        moved = False
        for i, step in enumerate(out):
            if step.op != DEPLOY or step.pod not in owner:
                continue
            j = next((j for j in range(i + 1, len(out)) if out[j].op == DELETE
                      and owner.get(out[j].pod) == owner[step.pod]), None)
            if j is None:
                continue
            candidate = out[:i] + (out[j],) + out[i:j] + out[j + 1:]
            try:
                semantics.replay(inst, candidate, query)
            except semantics.ReplayError:
                continue
            out, moved = candidate, True
            break
    return out
