"""A checkable certificate for every not-deployable verdict, whichever engine gave it.

Engines return their own evidence when they have one (fast paths: static
filter, may-be-present fixpoint, Theorem 5; BDD and IC3 invariants; the
explicit engine's reachable set). BMC's recurrence-diameter argument and
ABC's verdicts carry none, and the explicit set can be too large to write.
``ensure_certificate`` then looks for the cheapest argument that applies
(static filter, Theorem 5, the may-be-present fixpoint) and, failing those,
asks IC3 for an inductive invariant within the remaining time. A second
engine that disagrees is a bug and raises; one that runs out of time leaves
the result without a certificate and says why in ``stats["certificate"]``.
"""

from __future__ import annotations

import time
from typing import Optional

from symreach.certify import may_fixpoint, static_filter, theorem5
from symreach.certify.dispatch import as_certificate
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.solvers.base import RunLike, as_context


class EvidenceError(RuntimeError):
    """Two engines disagree: always a bug."""


def ensure_certificate(instance: Instance, query: Query, result: Result,
                       run: RunLike = None) -> Result:
    """``result`` with a certificate when it is not-deployable and one can be found."""
    if result.verdict is not Verdict.NOT_DEPLOYABLE or result.certificate is not None:
        return result
    start = time.perf_counter()
    if instance.filter_errors:   # those arguments assume guards pods only make stricter (certify.dispatch)
        result.stats["certificate"] = "none: only the explicit reachable set is checked where a DRA error aborts cycles"
        return result
    cert, how = cheap_certificate(instance, query)
    if cert is None:
        cert, how = _ic3_certificate(instance, query, as_context(run))
    if cert is None:
        result.stats["certificate"] = f"none: {how}"
        return result
    result.certificate = as_certificate(cert)
    result.stats["certificate_by"] = how
    result.stats["certificate_s"] = time.perf_counter() - start
    return result


def cheap_certificate(instance: Instance, query: Query) -> tuple[Optional[dict], str]:
    """A static-filter, Theorem 5 or may-fixpoint certificate, when one proves the query."""
    from symreach.encodings.preprocess import preprocess

    cert = static_filter.make_certificate(instance, query)
    if cert is not None:
        return cert, "static-filter"
    cert = theorem5.make_certificate(instance, query)
    if cert is not None:
        return cert, "theorem-5"
    pre = preprocess(instance, query, try_greedy=False)
    if not any(alt <= pre.may for alt in query.alternatives) or any(not ct.pairs & pre.may for ct in query.counts):
        return may_fixpoint.make_certificate(instance, query, pre.cone, pre.may), "may-fixpoint"
    return None, "no polynomial argument applies"


def _ic3_certificate(instance: Instance, query: Query, run: RunContext):
    from symreach.solvers.ic3 import Ic3Engine

    again = Ic3Engine().check(instance, query, run.with_(progress=None))
    if again.verdict is Verdict.DEPLOYABLE:
        raise EvidenceError("IC3 found a witness for a target another engine proved not deployable")
    if again.verdict is Verdict.UNKNOWN or again.certificate is None:
        return None, f"IC3 found no invariant ({again.reason or 'no certificate'})"
    return again.certificate, "ic3"
