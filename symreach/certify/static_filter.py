"""Static-filter certificates: the target is stopped by a filter no pod can change.

Format ``symreach-static-filter/1`` (JSON): ``profile``, ``query`` (the target
alternatives as ``[pod, node]`` lists) and ``blocked``: one
``{pod, node, reason}`` per alternative. The reason must be what the
executable semantics reports on the empty configuration, and it must be one
that does not read the configuration at all: a type that is not creatable,
or one of the node filters (NodeUnschedulable, NodeName, TaintToleration,
NodeAffinity). The loader folded those into ``Instance.static_block``; the
checker re-evaluates the named one from the pod spec and the node with
``node_filters``, which shares no code with the loader. Such a pair is disabled in every configuration, so an
alternative containing it, with the pair not initially present, never holds.
"""

from __future__ import annotations

from typing import Optional

from symreach import reasons, semantics
from symreach.certify.node_filters import static_failure
from symreach.certify.never_deployable import blocked_pair_certificate, verdict
from symreach.model import KUBERNETES, Instance, Query

FORMAT = "symreach-static-filter/1"


def static_premise(inst: Instance, t: int, n: int, reason: str) -> Optional[str]:
    """None when ``reason`` is a filter that does not read the configuration and, for
    the four node filters, ``node_filters`` re-evaluates it from the pod spec to the
    same first failure."""
    pod = inst.pod_types[t]
    if reason == semantics.REASON_NOT_CREATABLE and not pod.creatable:
        return None
    if reason not in reasons.STATIC_REASONS or reason != inst.static_block[t][n]:
        return f"{reason!r} is not a static filter (it depends on the pods running)"
    if pod.manifest is None:
        return None  # built in memory: the model's filter is all there is to evaluate
    again = static_failure(pod.manifest, inst.nodes[n], kube=inst.profile == KUBERNETES)
    if again != reason:
        return f"re-evaluated from the pod spec and the node, the first failing static filter is {again!r}"
    return None


def make_certificate(inst: Instance, query: Query) -> Optional[dict]:
    """The certificate when every alternative has a statically blocked pair, else None."""
    return blocked_pair_certificate(FORMAT, inst, query, static_premise)


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    return verdict(inst, cert, static_premise, "certificate accepted: ",
                   "{pod} on {node} is stopped by a static filter: {reason}")
