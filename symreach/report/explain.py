"""Why a pod cannot be placed now, in the kube-scheduler's own words.

For each node: the first failing plugin reason in the initial configuration,
and whether the obstacle is static (no sequence of deployments and deletions
can change it) or dynamic (it depends on which pods run). A DaemonSet is one
subject: on each node, its own pod for that node.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional

from symreach import semantics
from symreach.frontends.dispatch import resolve_pod
from symreach.model import Config, Instance, daemonset_groups
from symreach.reasons import reason_pattern
from symreach.report.details import details, with_details

# (t, n, configuration) -> the Filter verdict there, the configuration the refusing run saw (for the
# details) and a note on what it added, "" when nothing (``explain_subject``'s ``filter_now``)
FilterNow = Callable[[int, int, Config], tuple[Optional[semantics.Failure], Config, str]]


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    reason: Optional[str]  # None: the pod fits there now
    static: bool  # True: no deploy/delete sequence can lift the obstacle
    reasons: tuple[str, ...] = ()  # all of the failing plugin's reasons (NodeResourcesFit lists several)
    # One per reason (of ``reasons``, else of ``reason``): the object it is about -- the taint, the
    # key, the amounts, the port, the domain. The reasons themselves stay the kube-scheduler's words.
    details: tuple[str, ...] = ()
    # Where the scheduler's own random run decides which refusal it reports (the informer's order
    # of PVs): the other runs' reasons (``semantics.Failure.others``); every run refuses.
    others: tuple[tuple[str, ...], ...] = ()

    @property
    def reason_list(self) -> tuple[str, ...]:
        return self.reasons or ((self.reason,) if self.reason is not None else ())

    @property
    def by_run(self) -> list[list[str]]:
        """Every reasons list the scheduler may report here, this one first; [] when there is one."""
        return [list(self.reason_list)] + [list(o) for o in self.others] if self.others else []

    def text(self) -> str:
        """The reason, or the set of them when the scheduler's run decides which (``ONE_OF``)."""
        shown = with_details(self.reason_list, self.details)
        if not self.others:
            return shown
        return ONE_OF + "; ".join([shown] + [", ".join(o) for o in self.others])


ONE_OF = semantics.ONE_OF


@dataclass(frozen=True)
class Explanation:
    pod: str
    nodes: tuple[NodeVerdict, ...]
    aborted: Optional[str] = None   # the error that aborts the pod's cycle (``semantics.cycle_abort``)
    chances: tuple[str, ...] = ()   # errors some runs abort the cycle with, others not (``abort_chances``)

    @property
    def feasible_now(self) -> tuple[str, ...]:
        return tuple(v.node for v in self.nodes if v.reason is None)

    def failed_scheduling(self) -> str:
        """The FailedScheduling message: counts per reason, sorted like kube-scheduler's FitError; on an
        aborted cycle the scheduler reports the error alone."""
        if self.aborted is not None:
            return self.aborted
        reasons = Counter(r for v in self.nodes for r in v.reason_list)
        parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
        total = len(self.nodes)
        available = len(self.feasible_now)
        said = f"{available}/{total} nodes are available" + (f": {', '.join(parts)}" if parts else "")
        return ONE_OF + "; ".join((said,) + self.chances) if self.chances else said + "."

    def to_json(self) -> dict:
        return {
            "pod": self.pod,
            "summary": self.failed_scheduling(),
            "nodes": [{"node": v.node, "fits_now": v.reason is None, "reason": v.reason,
                       "reasons": list(v.reason_list), "patterns": [reason_pattern(r) for r in v.reason_list],
                       "by_run": v.by_run, "details": list(v.details),
                       "static": v.static} for v in self.nodes],
        }


@dataclass(frozen=True)
class Subject:
    """What is explained: a pod type, or a DaemonSet, whose pod for node n is
    its own pod type pinned to n (``per_node[n]``; None: no pod for n)."""

    name: str
    per_node: tuple[Optional[int], ...]
    daemonset: bool = False


NO_DAEMON_POD = "the DaemonSet has no pod for this node"


def subjects(inst: Instance, pod: Optional[str] = None) -> list[Subject]:
    """The subjects of ``explain``: one pod type or DaemonSet by name, or every
    pod type with the pinned types of each DaemonSet grouped into one row."""
    groups = daemonset_groups(inst)
    n_nodes = len(inst.nodes)

    def of_group(name: str) -> Subject:
        return Subject(name, tuple(groups[name].get(n) for n in range(n_nodes)), True)
    if pod is not None:
        names = [t.name for t in inst.pod_types]
        if pod not in names and pod in groups:
            return [of_group(pod)]
        t = resolve_pod(inst, pod)
        return [Subject(inst.pod_types[t].name, (t,) * n_nodes)]
    member = {t: name for name, row in groups.items() for t in row.values()}
    out, seen = [], set()
    for t, pod_type in enumerate(inst.pod_types):
        name = member.get(t)
        if name is None:
            out.append(Subject(pod_type.name, (t,) * n_nodes))
        elif name not in seen:
            seen.add(name)
            out.append(of_group(name))
    return out


def explain(inst: Instance, t: int) -> Explanation:
    return explain_subject(inst, Subject(inst.pod_types[t].name, (t,) * len(inst.nodes)))


def explain_subject(inst: Instance, subject: Subject, filter_now: Optional[FilterNow] = None) -> Explanation:
    """Per node: the first failing reason now for the subject's pod on that node. ``filter_now``: the
    Filter verdict in place of ``semantics.node_failure`` where the front end knows more of the
    scheduler's cycle (nominated pods: ``k8s_nominated_filter.filter_now``), with what it added."""
    sigma0 = inst.initial_config()
    empty = (0,) * inst.num_pairs
    verdicts = []
    for n, node in enumerate(inst.nodes):
        t = subject.per_node[n]
        if t is None:
            verdicts.append(NodeVerdict(node.name, NO_DAEMON_POD, True))
            continue
        reason = semantics.deploy_failure(inst, t, n, sigma0)
        failure = semantics.node_failure(inst, t, n, sigma0) if reason is not None else None
        seen, note = sigma0, ""
        if filter_now is not None and (reason is None or (failure is not None and failure.reason == reason)):
            failure, seen, note = filter_now(t, n, sigma0)   # Hard decides here (not creatability): its verdict
            reason = None if failure is None else failure.reason
        own = failure is not None and failure.reason == reason
        reasons = failure.reasons if own else ()
        notes = details(inst, t, n, seen, reasons or ((reason,) if reason is not None else ()))
        if note and reason is not None:
            notes = tuple(f"{d}; {note}" if d else note for d in notes)
        others = tuple(why for _, why in failure.others) if own else ()
        verdicts.append(NodeVerdict(node.name, reason, reason is not None and _static(inst, t, n, empty), reasons,
                                    notes, others))
    kinds = {t for t in subject.per_node if t is not None}
    one = next(iter(kinds)) if len(kinds) == 1 else None
    abort = semantics.abort_failure(inst, one, sigma0) if one is not None else None
    aborted = None if abort is None else ONE_OF + "; ".join(why[0] for _, why in abort.alternatives) \
        if abort.others else abort.reason
    chances = semantics.abort_chances(inst, one, sigma0) if aborted is None and one is not None else ()
    return Explanation(subject.name, tuple(verdicts), aborted, chances)


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
            lines.append(f"  {v.node:<{width}}  {v.text()}  [{kind}]")
    return "\n".join(lines)
