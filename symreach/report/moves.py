"""Which operator rule blocks a target the paper's moves reach (SPEC 5.2, issue 29).

Given a witness of the paper question, replay it under the operator rules
(``semantics.delete_failure``) and name every deletion they refuse: the
PodDisruptionBudget by name, or the protected pod type. The witness is one
paper run among many, so the text says "this witness needs", not "every".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from symreach import semantics
from symreach.model import Instance, MoveRules
from symreach.result import DELETE, DEPLOY, Step


def refused_deletions(inst: Instance, trace: Sequence[Step]) -> list[tuple[int, Step, str]]:
    """(step number from 1, step, why) for each deletion of ``trace`` the instance's moves refuse.

    The trace is replayed without stopping at a refusal, so every blocking rule is named.
    """
    sigma = inst.initial_config()
    out = []
    for i, step in enumerate(trace, 1):
        t, n = inst.type_index(step.pod), inst.node_index(step.node)
        if step.op == DELETE:
            why = semantics.delete_failure(inst, sigma, t, n)
            if why is not None:
                out.append((i, step, why))
            sigma = semantics.delete(inst, sigma, t, n, step.holding)
        elif step.op == DEPLOY:
            sigma = semantics.deploy_step(inst, sigma, step)
    return out


def blocking_note(inst: Instance, paper_trace: Sequence[Step]) -> str:
    """One sentence for a not-deployable answer under operator moves whose paper answer is deployable."""
    refused = refused_deletions(inst, paper_trace)
    if not refused:
        short = semantics.replicas_failure(inst, semantics.replay(replace(inst, moves=MoveRules()), paper_trace))
        if short is not None:
            return (f"the paper's moves reach the target in {len(paper_trace)} steps, but its witness ends short "
                    f"of a controller's replicas (controllers keep their replicas): {short}")
        return "the paper's moves reach the target"
    rules = "; ".join(f"step {i} (delete {s.pod} on {s.node}): {why}" for i, s, why in refused)
    return (f"the paper's moves reach the target in {len(paper_trace)} steps, but the operator rules "
            f"refuse deletions its witness needs: {rules}")
