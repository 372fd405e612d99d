"""Names <-> indices for the JSON certificates, and the error every checker raises.

A certificate names pod types and nodes, never indices, so it survives a
reordering of the input file; each checker resolves the names against the
instance it is asked about and rejects unknown ones.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterable

from symreach.model import Instance, Pair, Query


class CertificateError(Exception):
    """The certificate does not prove what it claims (or is malformed)."""


def vacuous(alts: Collection[frozenset], counts: Collection[tuple[frozenset, int]]) -> str:
    """Why a target (alternatives of pairs; count targets as (pairs, K)) cannot be
    the question of a not-deployable verdict, "" if it can. Pairs may be names or
    indices. Every checker refuses such a target: any invariant would exclude it."""
    if not alts:
        return "no alternative: such a target never holds, so any invariant excludes it"
    if frozenset() in alts and len(alts) > 1:
        return "an empty alternative beside others"
    if frozenset() in alts and not counts:
        return "an empty alternative and no count target: such a target always holds"
    for pairs, k in counts:
        if not pairs:
            return "a count target over no pair"
        if k < 1:
            return f"a count target of at least {k}"
    return ""


def checked(check: Callable[[], int], accepted: Callable[[int], str]) -> tuple[bool, str]:
    """``(True, accepted(check()))``, or ``(False, why)`` when ``check`` raises
    ``CertificateError``: the ``check_certificate`` of a checker that counts states."""
    try:
        count = check()
    except CertificateError as exc:
        return False, str(exc)
    return True, accepted(count)


def pair_of(inst: Instance, pod: Any, node: Any) -> Pair:
    """(type index, node index) of a named pair; CertificateError when unknown."""
    try:
        return inst.type_index(str(pod)), inst.node_index(str(node))
    except KeyError as exc:
        raise CertificateError(f"unknown pod type or node {exc}") from None


def query_json(inst: Instance, query: Query) -> list[list[list[str]]]:
    """The query's alternatives as sorted ``[pod, node]`` name lists."""
    return [sorted([inst.pod_types[t].name, inst.nodes[n].name] for t, n in alt)
            for alt in query.alternatives]


def counts_json(inst: Instance, query: Query) -> list[dict[str, Any]]:
    """The query's count targets as ``{"pairs": [[pod, node], ...], "atLeast": K}``."""
    return [{"pairs": sorted([inst.pod_types[t].name, inst.nodes[n].name] for t, n in ct.pairs),
             "atLeast": ct.at_least} for ct in query.counts]


def with_counts(inst: Instance, query: Query, cert: dict) -> dict:
    """``cert`` plus the field ``counts`` when the query has count targets."""
    if query.counts:
        cert["counts"] = counts_json(inst, query)
    return cert


def counts_of(inst: Instance, cert: dict) -> list[tuple[frozenset[Pair], int]]:
    """The certificate's count targets (optional field ``counts``), resolved."""
    raw = cert.get("counts", [])
    if not isinstance(raw, list):
        raise CertificateError("field 'counts' must be a list")
    out = []
    for ct in raw:
        k = ct.get("atLeast") if isinstance(ct, dict) else None
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise CertificateError("each count target needs pairs and an integer atLeast >= 1")
        pairs = frozenset(named_pairs(inst, ct.get("pairs"), "counts.pairs"))
        if not pairs:
            raise CertificateError("a count target over no pair")
        out.append((pairs, k))
    return out


def target_holds(sigma, inst: Instance, alts: list[frozenset[Pair]],
                 counts: list[tuple[frozenset[Pair], int]]) -> bool:
    """Some alternative fully present and every count target reached (SPEC 1, counts)."""
    if not all(sum(sigma[inst.pair(t, n)] for t, n in ps) >= k for ps, k in counts):
        return False
    return any(all(sigma[inst.pair(t, n)] > 0 for t, n in alt) for alt in alts)


def query_of(inst: Instance, cert: dict) -> list[frozenset[Pair]]:
    """The certificate's target alternatives, resolved; at least one, none empty
    (except the single empty alternative of a pure count target)."""
    raw = cert.get("query")
    if not isinstance(raw, list) or not raw:
        raise CertificateError("the certificate names no target (field 'query')")
    alts = []
    for alt in raw:
        if alt == [] and cert.get("counts"):
            alts.append(frozenset())
            continue
        if not isinstance(alt, list) or not alt:
            raise CertificateError("an alternative of 'query' is empty or not a list")
        alts.append(frozenset(pair_of(inst, *_two(p)) for p in alt))
    return alts


def check_profile(inst: Instance, cert: dict) -> None:
    if cert.get("profile") != inst.profile:
        raise CertificateError(f"certificate is for profile {cert.get('profile')!r}, "
                               f"the instance is {inst.profile!r}")


def pair_text(inst: Instance, pairs: Iterable[Pair]) -> str:
    return ", ".join(f"{inst.pod_types[t].name}@{inst.nodes[n].name}" for t, n in sorted(pairs))


def _two(item: Any) -> tuple[Any, Any]:
    if not isinstance(item, (list, tuple)) or len(item) != 2:
        raise CertificateError(f"expected [pod, node], got {item!r}")
    return item[0], item[1]


def named_pairs(inst: Instance, raw: Any, field_name: str) -> set[Pair]:
    """A list of ``[pod, node]`` items as a set of index pairs."""
    if not isinstance(raw, list):
        raise CertificateError(f"field {field_name!r} must be a list of [pod, node]")
    return {pair_of(inst, *_two(p)) for p in raw}
