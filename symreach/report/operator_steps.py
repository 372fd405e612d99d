"""A witness in operator terms (SPEC 5.2, issue 29 item 2): evictions, replacements, scale changes.

Each step of a trace becomes one ``OperatorStep``: a deletion is an
``evict`` (the Eviction API, when budgets are respected) or a ``delete``;
a deployment of a controller's pod type is a ``replace`` while that
controller has an evicted pod not yet recreated (a StatefulSet's replacement
keeps the evicted pod's name, preferring one whose claims allow the node),
and a ``scale`` otherwise (the controller's count goes up by one, as
``kubectl scale`` would do); a deletion of a controller's pod while the
operator has scaled it above its starting count is a ``scale`` back down
(which pod goes: ``controller.kubernetes.io/pod-deletion-cost``), never an
eviction the controller would undo -- except for a StatefulSet, whose scale-down
takes the highest ordinal: its deletions are evictions (``solvers/replica_order``
puts them before their replacements); any other deployment is a ``create``. The
fields (``to_json``) are what the kubectl export needs: the pod's name, the
controller, the budget an eviction goes through, the replica counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from symreach import semantics
from symreach.model import Instance, ReplicaTarget
from symreach.result import DELETE, Step


@dataclass(frozen=True)
class OperatorStep:
    index: int                  # 1-based step number
    action: str                 # evict | delete | replace | scale | create
    pod: str                    # namespace/name of the pod the step creates or removes
    node: str
    controller: str = ""        # "Kind ns/name" owning the pod
    budget: str = ""            # the PodDisruptionBudget an eviction is checked against
    replaces: str = ""          # replace: the evicted pod it stands for
    replicas: Optional[tuple[int, int]] = None  # scale: controller count before, after

    def to_json(self) -> dict:
        out: dict = {"step": self.index, "action": self.action, "pod": self.pod, "node": self.node}
        for key in ("controller", "budget", "replaces"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.replicas is not None:
            out["replicas"] = {"from": self.replicas[0], "to": self.replicas[1]}
        return out

    def text(self) -> str:
        owner = f" ({self.controller})" if self.controller else ""
        if self.action == "evict":
            via = f", checked against PodDisruptionBudget {self.budget}" if self.budget else ""
            return f"evict {self.pod} from {self.node}{owner}{via}"
        if self.action == "delete":
            return f"delete {self.pod} from {self.node}{owner}"
        if self.action == "replace":
            return f"the controller recreates {self.replaces} as {self.pod} on {self.node}{owner}"
        if self.action == "scale" and self.replicas is not None and self.replicas[1] > self.replicas[0]:
            return (f"scale {self.controller} from {self.replicas[0]} to {self.replicas[1]} replicas; "
                    f"the new pod {self.pod} runs on {self.node}")
        if self.action == "scale" and self.replicas is not None:
            return (f"scale {self.controller} back from {self.replicas[0]} to {self.replicas[1]} replicas, "
                    f"removing {self.pod} on {self.node} (pod-deletion-cost)")
        return f"create {self.pod} on {self.node}"


def operator_steps(inst: Instance, trace: Sequence[Step], names: Sequence[str]) -> list[OperatorStep]:
    """The trace in operator terms; ``names``: the pod each step creates or deletes
    (``export.traces.step_names``), by step."""
    owner = {t: r for r in inst.replica_targets for t in r.types}
    running = {r.name: semantics.budget_present(inst, inst.initial_config(), r.types) for r in inst.replica_targets}
    initial = dict(running)
    spec = dict(running)  # the controller's count as the operator has scaled it
    pending: dict[str, list[str]] = {r.name: [] for r in inst.replica_targets}  # evicted, not recreated
    evict = inst.moves.respect_pdb
    out = []
    for i, step in enumerate(trace, 1):
        t, n = inst.type_index(step.pod), inst.node_index(step.node)
        name = names[i - 1] if len(names) == len(trace) else step.pod
        target: Optional[ReplicaTarget] = owner.get(t)
        controller = target.name if target else ""
        if step.op == DELETE:
            if target and not target.members and spec[target.name] > initial[target.name]:  # undo a scale-up
                spec[target.name] -= 1
                running[target.name] -= 1
                now = spec[target.name]
                out.append(OperatorStep(i, "scale", name, step.node, controller, replicas=(now + 1, now)))
                continue
            budget = next((b.name for b in inst.budgets if t in b.counts), "") if evict else ""
            out.append(OperatorStep(i, "evict" if evict else "delete", name, step.node, controller, budget))
            if target:
                running[target.name] -= 1
                pending[target.name].append(name)
            continue
        if target is None:
            out.append(OperatorStep(i, "create", name, step.node))
            continue
        running[target.name] += 1
        if pending[target.name]:
            gone = _replaced(target, pending[target.name], n)
            shown = gone if target.members else name
            out.append(OperatorStep(i, "replace", shown, step.node, controller, replaces=gone))
        else:
            spec[target.name] += 1
            now = spec[target.name]
            out.append(OperatorStep(i, "scale", name, step.node, controller, replicas=(now - 1, now)))
    return out


def _replaced(target: ReplicaTarget, pending: list[str], n: int) -> str:
    """The evicted pod a new pod of ``target`` on node ``n`` stands for (removed from ``pending``):
    a StatefulSet member whose claims allow ``n`` first, else the earliest evicted."""
    allowed = {f"/{pod}" for pod, nodes in target.members if n in nodes}
    pick = next((p for p in pending if any(p.endswith(a) for a in allowed)), pending[0])
    pending.remove(pick)
    return pick


def operator_text(inst: Instance, trace: Sequence[Step], names: Sequence[str]) -> str:
    """The text block ``check`` prints under a witness when operator rules are on."""
    steps = operator_steps(inst, trace, names)
    width = len(str(len(steps)))
    return "\n".join(["  in operator terms:"] + [f"    {s.index:>{width}}. {s.text()}" for s in steps])
