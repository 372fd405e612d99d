"""Static-filter certificates: the target is stopped by a filter no pod can change.

Format ``symreach-static-filter/1`` (JSON): ``profile``, ``query`` (the target
alternatives as ``[pod, node]`` lists) and ``blocked``: one
``{pod, node, reason}`` per alternative. The reason must be what the
executable semantics reports on the empty configuration, and it must be one
that does not read the configuration at all: a static filter of the model
(NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, as the loader
folded them into ``Instance.static_block``), a type that is not creatable, or
a ``maxPerNode`` of 0. Such a pair is disabled in every configuration, so an
alternative containing it, with the pair not initially present, never holds.
"""

from __future__ import annotations

from typing import Optional

from symreach import semantics
from symreach.certify.names import CertificateError
from symreach.certify.never_deployable import blocked_pair_certificate, check_blocked_pairs
from symreach.model import Instance, Query

FORMAT = "symreach-static-filter/1"


def static_premise(inst: Instance, t: int, n: int, reason: str) -> Optional[str]:
    """None when ``reason`` is independent of the configuration."""
    pod = inst.pod_types[t]
    if reason == inst.static_block[t][n]:
        return None
    if reason == semantics.REASON_NOT_CREATABLE and not pod.creatable:
        return None
    if reason == semantics.REASON_MAX_PER_NODE and pod.max_per_node == 0:
        return None
    return f"{reason!r} is not a static filter (it depends on the pods running)"


def make_certificate(inst: Instance, query: Query) -> Optional[dict]:
    """The certificate when every alternative has a statically blocked pair, else None."""
    return blocked_pair_certificate(FORMAT, inst, query, static_premise)


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    try:
        found = check_blocked_pairs(inst, cert, static_premise)
    except CertificateError as exc:
        return False, str(exc)
    return True, "certificate accepted: " + "; ".join(
        f"{inst.pod_types[t].name} on {inst.nodes[n].name} is stopped by a static filter: {r}"
        for (t, n), r in found)
