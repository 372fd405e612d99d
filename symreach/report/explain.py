"""Why a pod cannot be placed now, in the kube-scheduler's own words.

For each node: the first failing plugin reason in the initial configuration,
and whether the obstacle is static (no sequence of deployments and deletions
can change it) or dynamic (it depends on which pods run).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

from symreach import semantics
from symreach.model import Instance


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    reason: Optional[str]  # None: the pod fits there now
    static: bool  # True: no deploy/delete sequence can lift the obstacle
    reasons: tuple[str, ...] = ()  # all of the failing plugin's reasons (NodeResourcesFit lists several)


@dataclass(frozen=True)
class Explanation:
    pod: str
    nodes: tuple[NodeVerdict, ...]

    @property
    def feasible_now(self) -> tuple[str, ...]:
        return tuple(v.node for v in self.nodes if v.reason is None)

    def failed_scheduling(self) -> str:
        """The FailedScheduling message: counts per reason, sorted like kube-scheduler's FitError."""
        reasons = Counter(r for v in self.nodes if v.reason is not None for r in (v.reasons or (v.reason,)))
        parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
        total = len(self.nodes)
        available = len(self.feasible_now)
        if not parts:
            return f"{available}/{total} nodes are available."
        return f"{available}/{total} nodes are available: {', '.join(parts)}."

    def to_json(self) -> dict:
        return {
            "pod": self.pod,
            "summary": self.failed_scheduling(),
            "nodes": [{"node": v.node, "fits_now": v.reason is None, "reason": v.reason,
                       "reasons": list(v.reasons or ([v.reason] if v.reason else [])),
                       "static": v.static} for v in self.nodes],
        }


def explain(inst: Instance, t: int) -> Explanation:
    sigma0 = inst.initial_config()
    empty = (0,) * inst.num_pairs
    verdicts = []
    for n, node in enumerate(inst.nodes):
        reason = semantics.deploy_failure(inst, t, n, sigma0)
        failure = semantics.node_failure(inst, t, n, sigma0) if reason is not None else None
        reasons = failure.reasons if failure is not None and failure.reason == reason else ()
        verdicts.append(NodeVerdict(node.name, reason, reason is not None and _static(inst, t, n, empty), reasons))
    return Explanation(inst.pod_types[t].name, tuple(verdicts))


def _static(inst: Instance, t: int, n: int, empty) -> bool:
    """Static when it fails even on an empty cluster for a reason that pods cannot lift.

    On the empty configuration only static filters, capacity of the pod alone,
    spread eligibility, and affinity without bootstrap can fail. Affinity is
    dynamic (a witness may be deployed later), so only the others count.
    """
    if not inst.pod_types[t].creatable or inst.static_block[t][n] is not None:
        return True
    if semantics.capacity_failure(inst, t, n, empty) is not None:
        return True
    for h in inst.pod_types[t].spread:
        if h.topology.domain_of[n] is None or n not in h.eligible:
            return True
    return False


def explanation_text(expl: Explanation) -> str:
    lines = [f"pod {expl.pod}: {expl.failed_scheduling()}"]
    width = max((len(v.node) for v in expl.nodes), default=4)
    for v in expl.nodes:
        if v.reason is None:
            lines.append(f"  {v.node:<{width}}  fits now")
        else:
            kind = "static: no sequence of steps can change this" if v.static else "dynamic: depends on the pods running"
            lines.append(f"  {v.node:<{width}}  {v.reason}  [{kind}]")
    return "\n".join(lines)
