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
anti-affinity matches it), the nominated pods' anti-affinity is not looked at.

This is exact for one step from a given configuration in which the
nominations hold (``tests/test_nominated_kso.py``, against the kso variant of
``benchmarks/kso_nominated``); reachability over nominations that end is not
modelled (the front end's caveat stays on those answers).
"""

from __future__ import annotations

from typing import Iterable, Optional

from symreach import semantics
from symreach.frontends.k8s_nominated import Nomination, NominationIndex
from symreach.model import Config, Instance
from symreach.reasons import INTER_POD_AFFINITY_PLUGIN


def outranks(nominated: Optional[int], pod: Optional[int]) -> Optional[bool]:
    """Whether a nominated pod of priority ``nominated`` is added for a pod of priority ``pod``;
    None when a priority is unknown."""
    if nominated is None or pod is None:
        return None
    return nominated >= pod


def added_nominations(index: NominationIndex, node: str, priority: Optional[int],
                      pod: Optional[str] = None) -> list[Nomination]:
    """The nominations the scheduler adds to ``node`` for a pod of ``priority`` (``pod``: the pending
    pod's "ns/name", whose own nomination is never added; None for a new pod of a type).
    An unknown priority raises ``ValueError``: the verdict is not decided."""
    out = []
    for nom in index.nominations:
        if nom.node != node or nom.pod == pod:
            continue
        added = outranks(nom.priority, priority)
        if added is None:
            raise ValueError(f"priority of {nom.pod if nom.priority is None else pod or 'the pod'} unknown")
        if added:
            out.append(nom)
    return out


def with_pods(inst: Instance, sigma: Config, n: int, types: Iterable[str]) -> Config:
    """``sigma`` with one more pod of each named type on node ``n``."""
    out = list(sigma)
    for name in types:
        out[inst.pair(inst.type_index(name), n)] += 1
    return tuple(out)


def affinity_skipped(inst: Instance, t: int, sigma: Config) -> bool:
    """InterPodAffinity's PreFilter Skip in ``sigma``: t has no required (anti-)affinity term of its own
    and no running pod has an anti-affinity term matching t on a node carrying the term's key."""
    own = inst.pod_types[t]
    if own.affinity or any(not term.plugin for term in own.anti_affinity):
        return False
    for u, other in enumerate(inst.pod_types):
        for term in other.anti_affinity:
            if term.plugin or t not in term.blocks:
                continue
            if any(sigma[inst.pair(u, m)] for m, domain in enumerate(term.topology.domain_of) if domain is not None):
                return False
    return True


def nominated_failure(inst: Instance, index: NominationIndex, type_name: str, node: str, sigma: Config,
                      pod: Optional[str] = None) -> Optional[semantics.Failure]:
    """The Filter verdict (first failing plugin, or None) of a pod of ``type_name`` on ``node`` in
    ``sigma`` with the index's nominations in force: the pending pod ``pod`` ("ns/name", its own
    priority) or, when None, a new pod of the type (the type's priority)."""
    priority = index.pod_priority.get(pod) if pod is not None else index.type_priority.get(type_name)
    t, n = inst.type_index(type_name), inst.node_index(node)
    added = added_nominations(index, node, priority, pod)
    if added:
        failure = semantics.node_failure(inst, t, n, with_pods(inst, sigma, n, (nom.type_name for nom in added)))
        if failure is not None and not (failure.plugin == INTER_POD_AFFINITY_PLUGIN and affinity_skipped(inst, t, sigma)):
            return failure
    return semantics.node_failure(inst, t, n, sigma)
