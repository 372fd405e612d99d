"""Narrate a witness trace: each deployment with the pods that made it legal.

"deploy web on wk-2 as shop/web-1: affinity witness cache on wk-2" tells an
engineer which earlier step each deployment depended on; deletions say what
they unblock only implicitly (the next deployment's witnesses no longer
include them). Each step names the pod it creates or deletes with the names
``check`` prints (``export.traces.step_names``, passed in by the caller).
"""

from __future__ import annotations

from typing import Sequence

from symreach import semantics
from symreach.model import KUBERNETES, Instance
from symreach.result import DEPLOY, Step


def affinity_witnesses(inst: Instance, t: int, n: int, sigma: Sequence[int]) -> list[str]:
    """One running pod per affinity term that satisfies it in sigma, as text.

    In the kubernetes profile a witness must match all of t's terms (SPEC 2.1).
    """
    terms = inst.pod_types[t].affinity
    if not terms:
        return []
    out = []
    kube = inst.profile == KUBERNETES
    allowed = frozenset.intersection(*(term.selects for term in terms)) if kube else None
    for term in terms:
        selects = allowed if kube else term.selects
        found = next(((u, m) for u in sorted(selects) for m in sorted(term.topology.domain_nodes(n))
                      if sigma[inst.pair(u, m)] > 0), None)
        if found is None:
            out.append("self-affinity bootstrap (no matching pod anywhere yet)")
        else:
            u, m = found
            where = "" if term.topology.key == "kubernetes.io/hostname" else f" ({term.topology.key} "\
                f"{term.topology.values[term.topology.domain_of[n]]})"
            out.append(f"affinity witness {inst.pod_types[u].name} on {inst.nodes[m].name}{where}")
    return list(dict.fromkeys(out))


def narrate(inst: Instance, trace: Sequence[Step], pod_names: Sequence[str] = ()) -> list[str]:
    """One line per step, replaying the trace as it goes; ``pod_names``: the pod each step
    creates or deletes (``namespace/name``), one per step, else the steps name pod types only."""
    named = len(pod_names) == len(trace)
    sigma = inst.initial_config()
    lines = []
    for i, step in enumerate(trace):
        t, n = inst.type_index(step.pod), inst.node_index(step.node)
        if step.op == DEPLOY:
            because = affinity_witnesses(inst, t, n, sigma)
            made = f" as {pod_names[i]}" if named else ""
            lines.append(f"deploy {step.pod} on {step.node}{made}" + (": " + "; ".join(because) if because else ""))
            sigma = semantics.deploy_step(inst, sigma, step)
        else:
            gone = f"{pod_names[i]} ({step.pod})" if named else step.pod
            held = f" holding {step.holding}" if step.holding else ""
            lines.append(f"delete {gone} on {step.node}{held}")
            sigma = semantics.delete(inst, sigma, t, n, step.holding)
    return lines
