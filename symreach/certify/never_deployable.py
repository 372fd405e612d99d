"""What the one-pair certificates (static filter, Theorem 5) share: a blocked pair per alternative.

Both claim, for every target alternative, one pair ``(t, n)`` of it that is
not initially present and whose deployment is disabled in *every*
configuration, for a stated reason that the checker re-evaluates with the
executable semantics on the empty configuration. Why "fails on the empty
configuration" implies "fails everywhere" differs, so each kind supplies
its own premise check (``static_filter``, ``theorem5``).
"""

from __future__ import annotations

from typing import Callable, Optional

from symreach import semantics
from symreach.certify.names import CertificateError, check_profile, pair_of, query_json, query_of
from symreach.model import Instance, Pair, Query

# premise(inst, t, n, reason) -> None when the kind's argument applies, else why not
Premise = Callable[[Instance, int, int, str], Optional[str]]


def blocked_pair_certificate(fmt: str, inst: Instance, query: Query,
                             premise: Premise) -> Optional[dict]:
    """A certificate of kind ``fmt`` for ``query``, or None when some alternative has no
    pair that the kind's argument blocks."""
    empty = (0,) * inst.num_pairs
    sigma0 = inst.initial_config()
    blocked = []
    for alt in query.alternatives:
        found = None
        for t, n in sorted(alt):
            reason = semantics.deploy_failure(inst, t, n, empty)
            if reason is not None and not sigma0[inst.pair(t, n)] and premise(inst, t, n, reason) is None:
                found = {"pod": inst.pod_types[t].name, "node": inst.nodes[n].name, "reason": reason}
                break
        if found is None:
            return None
        blocked.append(found)
    return {"format": fmt, "profile": inst.profile, "query": query_json(inst, query), "blocked": blocked}


def verdict(inst: Instance, cert: dict, premise: Premise, accepted: str, each: str) -> tuple[bool, str]:
    """(accepted, message) for a checker: ``each`` is formatted per blocked pair with
    ``{pod}``, ``{node}`` and ``{reason}``."""
    try:
        found = check_blocked_pairs(inst, cert, premise)
    except CertificateError as exc:
        return False, str(exc)
    return True, accepted + "; ".join(
        each.format(pod=inst.pod_types[t].name, node=inst.nodes[n].name, reason=r) for (t, n), r in found)


def check_blocked_pairs(inst: Instance, cert: dict, premise: Premise) -> list[tuple[Pair, str]]:
    """Re-check every claim; returns the (pair, reason) per alternative or raises CertificateError."""
    check_profile(inst, cert)
    alts = query_of(inst, cert)
    entries = cert.get("blocked")
    if not isinstance(entries, list):
        raise CertificateError("field 'blocked' must be a list")
    claims: dict[Pair, str] = {}
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("reason"), str):
            raise CertificateError("each 'blocked' entry needs pod, node and reason")
        claims[pair_of(inst, e.get("pod"), e.get("node"))] = e["reason"]
    empty = (0,) * inst.num_pairs
    sigma0 = inst.initial_config()
    out = []
    for alt in alts:
        mine = [p for p in sorted(alt) if p in claims]
        if not mine:
            raise CertificateError("no blocked pair is given for the alternative "
                                   + " & ".join(f"{inst.pod_types[t].name}@{inst.nodes[n].name}"
                                                for t, n in sorted(alt)))
        t, n = mine[0]
        where = f"{inst.pod_types[t].name} on {inst.nodes[n].name}"
        if sigma0[inst.pair(t, n)]:
            raise CertificateError(f"{where} is initially present")
        actual = semantics.deploy_failure(inst, t, n, empty)
        if actual is None:
            raise CertificateError(f"{where} can be deployed on the empty cluster")
        if actual != claims[(t, n)]:
            raise CertificateError(f"{where} fails for {actual!r}, not for the stated {claims[(t, n)]!r}")
        why_not = premise(inst, t, n, actual)
        if why_not is not None:
            raise CertificateError(f"{where}: {why_not}")
        out.append(((t, n), actual))
    return out
