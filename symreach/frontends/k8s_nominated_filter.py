"""A Filter verdict with nominated pods, as ``RunFilterPluginsWithNominatedPods`` gives it.

For a pod p on node N the scheduler adds every pod nominated to N whose priority
is at least p's (and that is not p itself) to N and to the cycle state, runs the
Filter plugins, and, when some pod was added and they pass, runs them again
without: p fits only if both pass, and the first failing run's reason is the
one reported. In symreach's terms: ``semantics.node_failure`` in the
configuration with one more pod of each such nominated pod's type on N, then in
the configuration itself. Nominated pods hold no DRA devices and bind no
claims (the scheduler adds them to the NodeInfo only), so only the pod counts
change. PreFilter ran on the configuration without them: where it told
InterPodAffinity to skip (the pod has no required terms and no running pod's
anti-affinity matches it), the nominated pods' anti-affinity is not looked at;
where it told VolumeRestrictions to skip (no in-tree disk, none of the pod's
ReadWriteOncePod claims in use), a nominated pod sharing such a claim conflicts
with nothing (``semantics.restrictions_skip``).

This is exact for one step from a given configuration in which the
nominations hold (``tests/test_nominated_kso.py``, against the kso variant of
``benchmarks/kso_nominated``). For reachability: a not-deployable answer
stands (nominations only take deployments away), and a deployable one stands
when its witness holds with the nominations, each lasting until its pod is
scheduled (``trace_holds``); ``unchanged_by_nominations`` says which, and
the front end's caveat is dropped from those answers (``report.caveats``).
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

from symreach import semantics
from symreach.frontends.k8s_nominated import Nomination, NominationIndex
from symreach import model
from symreach.model import Config, Instance
from symreach.result import DEPLOY, Result, Step, Verdict


def in_model(inst: Instance, nominations: Iterable[Nomination]) -> tuple[model.Nomination, ...]:
    """The nominations to nodes of the instance, as ``semantics.nominated_run`` reads them (one to a node
    not in the input filters nothing)."""
    nodes = {node.name: n for n, node in enumerate(inst.nodes)}
    return tuple(model.Nomination(nom.pod, inst.type_index(nom.type_name), nodes[nom.node], nom.priority)
                 for nom in nominations if nom.node in nodes)


def nominated_run(inst: Instance, index: NominationIndex, type_name: str, node: str, sigma: Config,
                  pod: Optional[str] = None, nominations: Optional[Sequence[Nomination]] = None
                  ) -> tuple[Optional[semantics.Failure], Config, tuple[model.Nomination, ...]]:
    """``nominated_failure``, with the configuration of the run that decided it and the nominated pods
    that run added (none: the run without them): ``semantics.nominated_run``."""
    nominations = index.nominations if nominations is None else nominations
    priority = index.pod_priority.get(pod) if pod is not None else index.type_priority.get(type_name)
    return semantics.nominated_run(inst, inst.type_index(type_name), inst.node_index(node), sigma,
                                   in_model(inst, nominations), priority, pod)


def nominated_failure(inst: Instance, index: NominationIndex, type_name: str, node: str, sigma: Config,
                      pod: Optional[str] = None, nominations: Optional[Sequence[Nomination]] = None
                      ) -> Optional[semantics.Failure]:
    """The Filter verdict (first failing plugin, or None) of a pod of ``type_name`` on ``node`` in
    ``sigma`` with ``nominations`` (default: the index's, all in force): the pending pod ``pod``
    ("ns/name", its own priority) or, when None, a new pod of the type (the type's priority).
    ``ValueError`` where it is not decided: an unknown priority, or a type whose cycle another
    node's DynamicResources error may abort (a nomination there may make that node fail earlier,
    which ``semantics.cycle_abort`` does not know)."""
    return nominated_run(inst, index, type_name, node, sigma, pod, nominations)[0]


def trace_holds(inst: Instance, index: NominationIndex, trace: Sequence[Step]) -> bool:
    """Whether a witness (which ``semantics.replay`` accepts) is also one with the nominations in force:
    each nomination lasts until its pod is scheduled, and a deployment of a nominated pod's type may be
    that pod (its nomination ends there and is not added for it) or a new pod of the type. Searched
    over those choices; a choice whose verdict is not decided (``nominated_failure``) is not taken, as
    ``solvers.nominated_search`` takes no such move: False where only such choices remain."""
    configs = [inst.initial_config()] + [semantics.replay(inst, trace[:i + 1]) for i in range(len(trace))]
    failed: set[tuple[int, frozenset[Nomination]]] = set()

    def holds(i: int, active: frozenset[Nomination]) -> bool:
        if i == len(trace):
            return True
        if (i, active) in failed:
            return False
        step = trace[i]
        ok = False
        if step.op != DEPLOY:
            ok = holds(i + 1, active)
        else:
            for nom in [None] + sorted((q for q in active if q.type_name == step.pod), key=lambda q: q.pod):
                rest = active if nom is None else active - {nom}
                try:
                    fits = nominated_failure(inst, index, step.pod, step.node, configs[i],
                                             pod=None if nom is None else nom.pod,
                                             nominations=sorted(active, key=lambda q: q.pod)) is None
                except ValueError:   # not decided: this choice is not taken (as the search does), another may be
                    continue
                if fits and holds(i + 1, rest):
                    ok = True
                    break
        if not ok:
            failed.add((i, active))
        return ok

    return holds(0, frozenset(index.nominations))


def unchanged_by_nominations(inst: Instance, index: NominationIndex, result: Result) -> bool:
    """Whether the nominations cannot change this answer. They only add Filter runs a deployment must
    also pass (and deletions ignore them), so a configuration reachable with them is reachable
    without: a not-deployable answer stands, except where a DynamicResources error may abort a
    cycle (a nomination can make the erring node fail earlier). A deployable one stands when its
    witness holds with them (``trace_holds``)."""
    if not index.nominations:
        return True
    if result.verdict is Verdict.NOT_DEPLOYABLE:
        return not inst.filter_errors
    if result.verdict is Verdict.DEPLOYABLE and result.trace is not None:
        return trace_holds(inst, index, result.trace)
    return False


def filter_now(inst: Instance, report: object
               ) -> Optional[Callable[[int, int, Config], tuple[Optional[semantics.Failure], Config, str]]]:
    """The Filter verdict with the report's nominations in force, for ``explain``'s verdicts now (with the
    configuration its refusing run saw and a note naming the nominated pods it added); None
    without nominations. A pod type named like one of the pending pods it was made from is that pod
    (its own nomination is not added); another type is a new pod of it. Where the verdict is not
    decided (``nominated_failure``'s ValueError) the plain one, and the caveat stays."""
    index = getattr(report, "nominated", None)
    if index is None or not index.nominations:
        return None
    pending = getattr(report, "pending", {}) or {}

    def verdict(t: int, n: int, sigma: Config) -> tuple[Optional[semantics.Failure], Config, str]:
        name = inst.pod_types[t].name
        try:
            failure, seen, added = nominated_run(inst, index, name, inst.nodes[n].name, sigma,
                                                 pod=name if pending.get(name) == name else None)
        except ValueError:
            return semantics.node_failure(inst, t, n, sigma), sigma, ""
        note = "" if not added else "counting the pending pod(s) nominated to this node: " + \
            ", ".join(f"{nom.pod} (priority {nom.priority})" for nom in added)
        return failure, seen, note

    return verdict


def decided_now(inst: Instance, report: object, types: Iterable[int]) -> bool:
    """Whether ``filter_now`` decides every verdict now of these types exactly (every priority it reads
    known, no cycle abort with nominations), so that those verdicts need no nomination caveat."""
    index = getattr(report, "nominated", None)
    if index is None or not index.nominations:
        return True
    if any(nom.priority is None for nom in index.nominations):
        return False
    pending = getattr(report, "pending", {}) or {}
    for t in types:
        name = inst.pod_types[t].name
        own = index.pod_priority.get(name) if pending.get(name) == name else index.type_priority.get(name, 0)
        if t in inst.filter_errors or own is None:
            return False
    return True
