"""Theorem 5 certificates: an affinity-free target that fails on the empty cluster.

Format ``symreach-theorem5/1`` (JSON), like ``static_filter``'s: ``profile``,
``query`` and one ``{pod, node, reason}`` per alternative. The checker
re-evaluates the premises from the model: the pod type has no required
affinity term, the pair is not initially present, and the executable
semantics refuses the deployment on the empty configuration for the stated
reason.

Why that suffices (paper, Theorem 5): without affinity, every check of
``Hard(t, n, sigma)`` is anti-monotone in sigma (static filters and
creatability do not read sigma; capacity, host ports, anti-affinity both
ways and ``maxPerNode`` only get worse with more pods; NodeVolumeLimits too,
unless another type shares one of t's CSI volumes) except topology
spread, whose skew ``count(v_n) + self - gmin`` is at least ``self`` in every
configuration because ``count(v_n) >= gmin``; on the empty configuration
spread fails only for a missing key, an ineligible node or ``self >
maxSkew``, which hold everywhere. So a failure on the empty configuration is
a failure in every configuration.
"""

from __future__ import annotations

from typing import Optional

from symreach import semantics
from symreach.certify.never_deployable import blocked_pair_certificate, verdict
from symreach.reasons import MAX_VOLUME_COUNT
from symreach.model import Instance, Query

FORMAT = "symreach-theorem5/1"


def affinity_free_premise(inst: Instance, t: int, n: int, reason: str) -> Optional[str]:
    if inst.pod_types[t].affinity:
        return "the pod type has required pod affinity, so Theorem 5 does not apply"
    if reason == MAX_VOLUME_COUNT and semantics.attach_shared(inst, t):
        return ("another pod type shares a CSI volume with it, and its pod makes that volume no new "
                "attachment, so Theorem 5 does not apply")
    return None


def make_certificate(inst: Instance, query: Query) -> Optional[dict]:
    return blocked_pair_certificate(FORMAT, inst, query, affinity_free_premise)


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    return verdict(inst, cert, affinity_free_premise, "certificate accepted (Theorem 5): ",
                   "{pod} is affinity-free and fails on {node} even on the empty cluster: {reason}")
