"""Certificates of every kind behind one type, and the one table of their checkers.

A ``Certificate`` is a format name and its content: the JSON object of the
JSON kinds, or the ``clause_invariant.InvariantCertificate`` of IC3's text
format. Whatever an engine returns (a dict, an object with ``to_json``, the
clause object, text) becomes one through ``as_certificate``, once, in the
registry's wrapper; it pickles unchanged, so a forked worker's certificate
arrives with the same type.

``Certificate.check(instance, target)`` is the one way in to the checkers.
Before the checker of its kind runs, it refuses (exit 1 in ``certify``):
a malformed target, a vacuous one (no alternative, an empty alternative
beside no count target, a count target over no pair or below 1), a
certificate bound to another instance (its ``digest``, ``digest.py``), and
one for another target than ``target``, and, where a DynamicResources error can abort a pod's
cycle (``Instance.filter_errors``), every kind but the explicit reachable set (the others assume
guards that pods only make stricter). A checker that meets a malformed
certificate (a missing key, an index out of range) reports it as invalid,
never as a crash. ``parse`` raises ValueError for a file that is no
certificate at all (the command line: exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from symreach.certify import (
    bdd_invariant,
    clause_invariant,
    counter_invariant,
    explicit_states,
    gang_bdd,
    gang_states,
    lazy_closure,
    may_fixpoint,
    static_filter,
    theorem5,
)
from symreach.certify.digest import instance_digest
from symreach.certify.names import CertificateError, check_profile, vacuous
from symreach.model import CountTarget, Instance, Query

# what a malformed certificate makes a checker raise; reported as invalid
MALFORMED = (CertificateError, KeyError, IndexError, TypeError, ValueError, AttributeError,
             OverflowError, RecursionError)

NamedTarget = tuple[frozenset[frozenset[tuple[str, str]]], frozenset[tuple[frozenset[tuple[str, str]], int]]]


def _check_bdd(inst: Instance, data: dict) -> tuple[bool, str]:
    check_profile(inst, data)
    alternatives = tuple(frozenset((inst.type_index(t), inst.node_index(n)) for t, n in alt)
                         for alt in data["query"])
    counts = tuple(CountTarget(frozenset((inst.type_index(t), inst.node_index(n)) for t, n in ct["pairs"]),
                               int(ct["atLeast"])) for ct in data.get("counts", ()))
    return bdd_invariant.check_certificate(inst, Query(alternatives, "certificate query", counts), data)


@dataclass(frozen=True)
class Kind:
    """One kind of certificate: what it is called and its independent checker
    (which checks the certificate against the target the certificate names)."""

    description: str
    check: Callable[[Instance, Any], tuple[bool, str]]


KINDS: dict[str, Kind] = {
    may_fixpoint.FORMAT: Kind("may-be-present fixpoint", may_fixpoint.check_certificate),
    theorem5.FORMAT: Kind("Theorem 5", theorem5.check_certificate),
    static_filter.FORMAT: Kind("static filter", static_filter.check_certificate),
    explicit_states.FORMAT: Kind("explicit reachable set", explicit_states.check_certificate),
    counter_invariant.FORMAT: Kind("counter invariant (interchangeable nodes)", counter_invariant.check_certificate),
    lazy_closure.FORMAT: Kind("downward-closed lazy-deletion states", lazy_closure.check_certificate),
    bdd_invariant.FORMAT: Kind("BDD inductive invariant", _check_bdd),
    clause_invariant.FORMAT: Kind("IC3 clause invariant", clause_invariant.check_certificate),
    gang_states.FORMAT: Kind("gang: reachable set without a gang step", gang_states.check_certificate),
    gang_bdd.FORMAT: Kind("gang: BDD inductive invariant of the background and the gang step",
                          gang_bdd.check_certificate),
}
GROUP_FORMATS = (gang_states.FORMAT, gang_bdd.FORMAT)  # their target is a group, named in the certificate
TEXT_FORMATS = (clause_invariant.FORMAT,)  # the others are JSON objects


class Certificate:
    """A not-deployable certificate of any kind (module docstring)."""

    def __init__(self, format: str, content: Any) -> None:
        if format not in KINDS:
            raise ValueError(f"unknown certificate format {format!r}")
        self.format = format
        self.content = content

    def __repr__(self) -> str:
        return f"Certificate({self.format!r})"

    @property
    def kind(self) -> str:
        return KINDS[self.format].description

    @property
    def is_text(self) -> bool:
        return self.format in TEXT_FORMATS

    # ---- the fields every kind has --------------------------------------------------
    def _field(self, name: str, default: Any = None) -> Any:
        if self.is_text:
            return getattr(self.content, name, default)
        return self.content.get(name, default) if isinstance(self.content, dict) else default

    @property
    def digest(self) -> Optional[str]:
        """The instance digest the certificate is bound to (None: unbound)."""
        return self._field("digest") or None

    def bind(self, instance: Instance) -> "Certificate":
        """A copy that records ``instance``'s digest (``certify`` refuses it for any other)."""
        digest = instance_digest(instance)
        if self.is_text:
            return Certificate(self.format, replace(self.content, digest=digest))
        return Certificate(self.format, dict(self.content, digest=digest))

    def named_target(self) -> NamedTarget:
        """The target the certificate names, as sets of (pod, node) names;
        ``CertificateError`` when it is malformed."""
        return _named(self._field("query"), self._field("counts") or [])

    @property
    def target(self) -> str:
        """The certified target as ``pod@node`` alternatives, for messages."""
        if self.format in GROUP_FORMATS:
            return f"group {self._field('group', '?')}"
        try:
            return target_text(self.named_target())
        except MALFORMED:
            return "?"

    # ---- text ----------------------------------------------------------------------
    def dumps(self) -> str:
        if self.is_text:
            return self.content.dumps()
        return json.dumps(self.content, default=str, indent=1)

    @classmethod
    def loads(cls, text: str) -> "Certificate":
        return parse(text)

    # ---- the check -----------------------------------------------------------------
    def check(self, instance: Instance, target: Optional[Query] = None) -> tuple[bool, str]:
        """(accepted, message): the refusals of the module docstring, then the checker."""
        if self.format in GROUP_FORMATS:
            if self.digest is not None and self.digest != instance_digest(instance):
                return False, "refused: the certificate is for another instance (its digest differs)"
            try:
                return KINDS[self.format].check(instance, self.content)
            except MALFORMED as exc:
                return False, f"malformed certificate: {type(exc).__name__}: {exc}"
        try:
            named = self.named_target()
            problem = vacuous(*named)
            if problem:
                return False, f"refused: the certificate's target is vacuous ({problem})"
            if self.digest is not None and self.digest != instance_digest(instance):
                return False, "refused: the certificate is for another instance (its digest differs)"
            if target is not None:
                asked = query_names(instance, target)
                if asked != named:
                    return False, (f"refused: the certificate is for {target_text(named)}, "
                                   f"not {target_text(asked)}")
            if instance.filter_errors and self.format != explicit_states.FORMAT:
                return False, ("refused: a DynamicResources error can abort a pod's scheduling cycle here "
                               "(semantics.cycle_abort), so a pod's presence can enable a deployment; only the "
                               "explicit reachable set is checked on such an instance")
            return KINDS[self.format].check(instance, self.content)
        except MALFORMED as exc:
            return False, f"malformed certificate: {type(exc).__name__}: {exc}"


def _pair(item: Any) -> tuple[str, str]:
    if not isinstance(item, (list, tuple)) or len(item) != 2 or not all(isinstance(x, str) for x in item):
        raise CertificateError(f"a target pair must be [pod, node], got {item!r}")
    return item[0], item[1]


def _named(query: Any, counts: Any) -> NamedTarget:
    if not isinstance(query, list):
        raise CertificateError("the certificate names no target (field 'query')")
    if not isinstance(counts, list):
        raise CertificateError("field 'counts' must be a list")
    alts = []
    for alt in query:
        if not isinstance(alt, (list, tuple)):
            raise CertificateError("an alternative of 'query' is not a list")
        alts.append(frozenset(_pair(p) for p in alt))
    sums = []
    for ct in counts:
        if not isinstance(ct, dict) or not isinstance(ct.get("pairs"), list):
            raise CertificateError("a count target needs a list of pairs")
        k = ct.get("atLeast")
        if not isinstance(k, int) or isinstance(k, bool):
            raise CertificateError("a count target needs an integer atLeast")
        sums.append((frozenset(_pair(p) for p in ct["pairs"]), k))
    return frozenset(alts), frozenset(sums)


def query_names(inst: Instance, query: Query) -> NamedTarget:
    """A query of ``inst`` as sets of (pod, node) names, comparable with ``named_target``."""
    def names(pairs) -> frozenset[tuple[str, str]]:
        return frozenset((inst.pod_types[t].name, inst.nodes[n].name) for t, n in pairs)
    return (frozenset(names(alt) for alt in query.alternatives),
            frozenset((names(ct.pairs), ct.at_least) for ct in query.counts))


def target_text(target: NamedTarget) -> str:
    alts, counts = target
    text = " or ".join(" & ".join(f"{p}@{n}" for p, n in sorted(alt)) for alt in sorted(alts, key=sorted) if alt)
    sums = [f"{k} pods on " + " + ".join(f"{p}@{n}" for p, n in sorted(pairs))
            for pairs, k in sorted(counts, key=lambda c: (sorted(c[0]), c[1]))]
    return " & ".join(([f"({text})"] if text and sums else [text] if text else []) + sums) or "?"


def as_certificate(raw: Any) -> Certificate:
    """Whatever an engine returned as evidence, as a ``Certificate``."""
    if isinstance(raw, Certificate):
        return raw
    if isinstance(raw, clause_invariant.InvariantCertificate):
        return Certificate(clause_invariant.FORMAT, raw)
    if isinstance(raw, str):
        return parse(raw)
    if hasattr(raw, "to_json"):
        raw = raw.to_json()
    if isinstance(raw, dict):
        return Certificate(raw.get("format", ""), raw)
    raise TypeError(f"not a certificate: {type(raw).__name__}")


def parse(text: str) -> Certificate:
    """Parse a certificate file's text; ValueError names what is wrong."""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("a JSON certificate must be an object")
        fmt = data.get("format")
        if not isinstance(fmt, str) or fmt not in KINDS or fmt in TEXT_FORMATS:  # a list or object: TypeError
            known = ", ".join(sorted(k for k in KINDS if k not in TEXT_FORMATS))
            raise ValueError(f"unknown certificate format {fmt!r} (known: {known})")
        return Certificate(fmt, data)
    try:
        return Certificate(clause_invariant.FORMAT, clause_invariant.InvariantCertificate.loads(text))
    except MALFORMED as exc:
        if isinstance(exc, ValueError):
            raise
        raise ValueError(f"{type(exc).__name__}: {exc}") from None


# the names other modules used before ``Certificate``
Loaded = Certificate


def check_loaded(inst: Instance, cert: Certificate, target: Optional[Query] = None) -> tuple[bool, str]:
    return cert.check(inst, target)


def check_text(inst: Instance, text: str) -> tuple[bool, str]:
    return parse(text).check(inst)
