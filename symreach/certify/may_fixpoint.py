"""May-be-present certificates: a set of pairs that every reachable support stays in.

Format ``symreach-may-fixpoint/1`` (JSON): ``profile``, ``query``, ``cone`` (pod
type names) and ``pairs`` (``[pod, node]`` of cone types). The claim: in every
reachable configuration, every pod of a cone type runs on a listed pair; no
target alternative lies inside the listed pairs, so none is ever covered.

The checker re-derives that from the model and the executable semantics,
without ``encodings.preprocess``:

1. every target type is in the cone, and the cone is closed under affinity
   witnesses (kubernetes: the types matching *all* of a type's terms, the
   only pods its affinity reads; paper: the types of each term);
2. every initially present pair of a cone type is listed;
3. *closure*: for every unlisted pair ``(t, n)`` of a cone type, no
   configuration whose cone support is listed enables its deployment.
   The semantics is asked on two configurations: the empty one, most
   permissive for every check except positive affinity (capacity, ports,
   anti-affinity both ways and ``maxPerNode`` only get worse with pods; a
   spread skew is at least its ``self`` term), and ``full``, one pod on every
   listed pair, most permissive for positive affinity (a witness present in
   some allowed configuration is present in ``full``). The deployment is
   possible only if it fails on the empty configuration for no reason but
   affinity and affinity can hold: kubernetes, ``affinity_ok(full)`` or the
   bootstrap waiver on the empty configuration; paper, each term separately
   has a listed witness in its domain or may use its own waiver. Where that
   holds, the check is repeated on ``full`` without the listed witness pods
   that alone already fail a check of ``Hard(t, n, .)`` that only gets worse
   with more pods (host ports, capacity, anti-affinity both ways): such a
   pod is never present when ``t`` is deployed on ``n``, so it cannot be the
   witness (``beside``);
4. every target alternative has a pair outside the list, or (field
   ``counts``, optional) some count target has none of its pairs in the list:
   reaching K >= 1 pods there needs one of them present.

By induction over runs, (2) and (3) keep every reachable cone support inside
the list, and (4) concludes.
"""

from __future__ import annotations

from typing import Optional

from symreach import semantics
from symreach.reasons import MAX_VOLUME_COUNT
from symreach.certify.names import (
    CertificateError,
    check_profile,
    counts_of,
    named_pairs,
    pair_text,
    query_json,
    query_of,
    with_counts,
)
from symreach.model import KUBERNETES, Config, Instance, Pair, Query

FORMAT = "symreach-may-fixpoint/1"


def make_certificate(inst: Instance, query: Query, cone, pairs) -> dict:
    """Serialise a cone (type indices) and a may-be-present set (index pairs)."""
    return with_counts(inst, query, {
        "format": FORMAT, "profile": inst.profile, "query": query_json(inst, query),
        "cone": sorted(inst.pod_types[t].name for t in cone),
        "pairs": sorted([inst.pod_types[t].name, inst.nodes[n].name] for t, n in pairs)})


def blocking_reason(inst: Instance, t: int, n: int, full: Config) -> Optional[str]:
    """Why no configuration with support inside ``full`` enables deploying (t, n); None if one may."""
    empty = (0,) * inst.num_pairs
    reason = semantics.deploy_failure(inst, t, n, empty)
    if reason is None:
        return None
    if reason == MAX_VOLUME_COUNT and semantics.attach_shared(inst, t):
        return None   # a pod sharing t's volume makes it no new attachment (semantics.volume_limit_ok)
    if reason != semantics.REASON_AFFINITY:
        return reason
    if not _affinity_possible(inst, t, n, full):
        return reason
    return None if _affinity_possible(inst, t, n, beside(inst, t, n, full)) else reason


def _affinity_possible(inst: Instance, t: int, n: int, sigma) -> bool:
    """Whether the affinity of (t, n) may hold in some configuration inside ``sigma``."""
    if inst.profile == KUBERNETES:
        return semantics.affinity_ok(inst, t, n, sigma)
    for term in inst.pod_types[t].affinity:
        witnessed = semantics.present_on(inst, sigma, term.selects, term.topology.domain_nodes(n))
        if not witnessed and t not in term.selects:
            return False
    return True


class _Sparse(dict):
    """A configuration given by its non-zero entries (indexed like a ``Config``)."""

    def __missing__(self, key: int) -> int:
        return 0


class _Without:
    """``full`` with some pods removed, indexed like a ``Config``."""

    def __init__(self, full: Config, dropped: set[int]) -> None:
        self.full, self.dropped = full, dropped

    def __getitem__(self, i: int) -> int:
        return 0 if i in self.dropped else self.full[i]


def never_beside(inst: Instance, t: int, n: int, u: int, m: int) -> bool:
    """A pod of u on m alone fails a check of Hard(t, n, .) that more pods never fix."""
    alone = _Sparse({inst.pair(u, m): 1})
    kube = inst.profile == KUBERNETES
    if kube and not semantics.ports_ok(inst, t, n, alone):
        return True
    if semantics.capacity_failures(inst, t, n, alone):
        return True
    if not semantics.anti_affinity_ok(inst, t, n, alone):
        return True
    return kube and not semantics.existing_anti_affinity_ok(inst, t, n, alone)


def beside(inst: Instance, t: int, n: int, full: Config):
    """``full`` without the affinity witnesses of (t, n) that can never run beside it."""
    witnesses = semantics.affinity_witness_types(inst, t)
    nodes: set[int] = set()
    for term in inst.pod_types[t].affinity:
        nodes |= term.topology.domain_nodes(n)
    dropped = {inst.pair(u, m) for u in witnesses for m in nodes
               if full[inst.pair(u, m)] and never_beside(inst, t, n, u, m)}
    return _Without(full, dropped)


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    try:
        listed, cone, alts = _parse(inst, cert)
        _check(inst, listed, cone, alts)
    except CertificateError as exc:
        return False, str(exc)
    return True, (f"certificate accepted: the {len(listed)} listed pairs over {len(cone)} cone types "
                  "hold every reachable pod of the cone and miss every target alternative")


def _parse(inst: Instance, cert: dict) -> tuple[set[Pair], set[int], list[frozenset[Pair]]]:
    check_profile(inst, cert)
    alts = query_of(inst, cert)
    counts = counts_of(inst, cert)
    raw_cone = cert.get("cone")
    if not isinstance(raw_cone, list):
        raise CertificateError("field 'cone' must be a list of pod type names")
    try:
        cone = {inst.type_index(str(c)) for c in raw_cone}
    except KeyError as exc:
        raise CertificateError(f"unknown pod type {exc} in cone") from None
    listed = named_pairs(inst, cert.get("pairs"), "pairs")
    dead = [ps for ps, _ in counts if ps and not ps & listed]
    if dead:
        # A count target (K >= 1) none of whose pairs is listed is never reached, so
        # neither is any alternative: it stands for them all (its pairs must be of
        # cone types, and it lies outside the listed pairs).
        alts = dead[:1]
    return listed, cone, alts


def _check(inst: Instance, listed: set[Pair], cone: set[int], alts: list[frozenset[Pair]]) -> None:
    for alt in alts:
        for t, _ in alt:
            if t not in cone:
                raise CertificateError(f"target type {inst.pod_types[t].name} is not in the cone")
    for t in sorted(cone):
        missing = semantics.affinity_witness_types(inst, t) - cone
        if missing:
            raise CertificateError(f"cone not closed: the affinity of {inst.pod_types[t].name} reads "
                                   f"{', '.join(sorted(inst.pod_types[u].name for u in missing))}")
    outside = [p for p in listed if p[0] not in cone]
    if outside:
        raise CertificateError(f"listed pairs of types outside the cone: {pair_text(inst, outside)}")
    missing0 = [p for p, c in inst.initial.items() if c > 0 and p[0] in cone and p not in listed]
    if missing0:
        raise CertificateError(f"initially present but not listed: {pair_text(inst, missing0)}")
    full = [0] * inst.num_pairs
    for t, n in listed:
        full[inst.pair(t, n)] = 1
    full_config = tuple(full)
    for t in sorted(cone):
        for n in range(len(inst.nodes)):
            if (t, n) not in listed and blocking_reason(inst, t, n, full_config) is None:
                raise CertificateError(f"not closed: {inst.pod_types[t].name} may be deployed on "
                                       f"{inst.nodes[n].name} from the listed pairs")
    for alt in alts:
        if alt <= listed:
            raise CertificateError(f"the target alternative {pair_text(inst, alt)} lies inside the listed pairs")
