"""Read any certificate file and hand it to the checker of its kind.

JSON certificates carry their kind in ``format``; the IC3 clause invariant
is a text file whose first line names its format. ``check_any`` returns the
checker's verdict; a file that is no certificate at all raises ValueError
(the CLI reports it as bad input, exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from symreach.certify import (
    bdd_invariant,
    clause_invariant,
    counter_invariant,
    explicit_states,
    gang_states,
    lazy_closure,
    may_fixpoint,
    static_filter,
    theorem5,
)
from symreach.model import CountTarget, Instance, Query

JSON_CHECKERS: dict[str, Callable[[Instance, dict], tuple[bool, str]]] = {
    may_fixpoint.FORMAT: may_fixpoint.check_certificate,
    theorem5.FORMAT: theorem5.check_certificate,
    static_filter.FORMAT: static_filter.check_certificate,
    explicit_states.FORMAT: explicit_states.check_certificate,
    counter_invariant.FORMAT: counter_invariant.check_certificate,
    lazy_closure.FORMAT: lazy_closure.check_certificate,
    gang_states.FORMAT: gang_states.check_certificate,
}
KINDS = {
    may_fixpoint.FORMAT: "may-be-present fixpoint",
    theorem5.FORMAT: "Theorem 5",
    static_filter.FORMAT: "static filter",
    explicit_states.FORMAT: "explicit reachable set",
    counter_invariant.FORMAT: "counter invariant (interchangeable nodes)",
    lazy_closure.FORMAT: "downward-closed lazy-deletion states",
    bdd_invariant.FORMAT: "BDD inductive invariant",
    clause_invariant.FORMAT: "IC3 clause invariant",
    gang_states.FORMAT: "gang: reachable set without a gang step",
}


@dataclass
class Loaded:
    """A parsed certificate: its format and its content (dict, or the clause object)."""

    format: str
    content: Any

    @property
    def kind(self) -> str:
        return KINDS[self.format]

    @property
    def target(self) -> str:
        """The certified target as ``pod@node`` alternatives, for messages."""
        if self.format == gang_states.FORMAT:
            return f"group {self.content.get('group', '?')}"
        raw = self.content.query if self.format == clause_invariant.FORMAT else self.content.get("query")
        counts = self.content.counts if self.format == clause_invariant.FORMAT else self.content.get("counts", [])
        try:
            text = " or ".join(" & ".join(f"{p}@{n}" for p, n in alt) for alt in raw if alt)
            sums = [f"{ct['atLeast']} pods on " + " + ".join(f"{p}@{n}" for p, n in ct["pairs"]) for ct in counts]
            return " & ".join(([f"({text})"] if text and sums else [text] if text else []) + sums) or "?"
        except (TypeError, ValueError, KeyError):
            return "?"


def parse(text: str) -> Loaded:
    """Parse a certificate file's text; ValueError names what is wrong."""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("a JSON certificate must be an object")
        fmt = data.get("format")
        if fmt not in JSON_CHECKERS and fmt != bdd_invariant.FORMAT:
            known = ", ".join(sorted(k for k in KINDS if k != clause_invariant.FORMAT))
            raise ValueError(f"unknown certificate format {fmt!r} (known: {known})")
        return Loaded(fmt, data)
    return Loaded(clause_invariant.FORMAT, clause_invariant.InvariantCertificate.loads(text))


def check_loaded(inst: Instance, cert: Loaded) -> tuple[bool, str]:
    """Run the independent checker of the certificate's kind."""
    if cert.format == clause_invariant.FORMAT:
        return clause_invariant.check_certificate(inst, cert.content)
    if cert.format == bdd_invariant.FORMAT:
        return _check_bdd(inst, cert.content)
    return JSON_CHECKERS[cert.format](inst, cert.content)


def check_text(inst: Instance, text: str) -> tuple[bool, str]:
    return check_loaded(inst, parse(text))


def _check_bdd(inst: Instance, data: dict) -> tuple[bool, str]:
    try:
        alternatives = tuple(frozenset((inst.type_index(t), inst.node_index(n)) for t, n in alt)
                             for alt in data["query"])
        counts = tuple(CountTarget(frozenset((inst.type_index(t), inst.node_index(n)) for t, n in ct["pairs"]),
                                   int(ct["atLeast"])) for ct in data.get("counts", ()))
    except (KeyError, TypeError, ValueError) as exc:
        return False, f"the certificate's query names something unknown: {exc}"
    return bdd_invariant.check_certificate(inst, Query(alternatives, "certificate query", counts), data)
