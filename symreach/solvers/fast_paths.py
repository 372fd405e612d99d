"""The prologue every symbolic engine shares: preprocess, and stop early if decided.

Preprocessing (SPEC 2.2: static pruning, may-fixpoint, Theorem 5, the
fixpoint's deployment order) is sound and cheap, so each engine runs it
before compiling. ``fast_paths=False`` keeps only the trivial "initially
present" answer, so that benchmarks and tests can exercise the engine itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

from symreach import semantics
from symreach.encodings.preprocess import Preprocessed, preprocess
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.solvers.base import Limits


@dataclass
class CheckStart:
    """What every engine's ``check`` knows after the prologue."""

    start: float
    deadline: Optional[float]
    query: Query
    pre: Preprocessed
    decided: Optional[Result]


@dataclass(frozen=True)
class Prepared:
    """A prologue that decided nothing, handed to engines through ``Limits.prepared``
    so that they skip preprocessing (``auto`` runs it once before forking its
    workers; each used to run it again, ~0.5-1.5 s on IBM703)."""

    instance: Instance
    query: Query
    pre: Preprocessed

    def matches(self, instance: Instance, query: Query) -> bool:
        return self.instance is instance and self.query == query


def begin_check(instance: Instance, query: Optional[Query], limits: Limits, engine: str,
                fast_paths: bool) -> CheckStart:
    """Start the clock, resolve the query, preprocess; ``decided`` is a fast-path answer.

    With ``limits.prepared`` for this instance and query, its preprocessing is
    reused: it decided nothing with the fast paths on, so it decides nothing
    with them off either (they only add answers)."""
    start = time.perf_counter()
    query = resolve_query(instance, query)
    deadline = start + limits.timeout_s if limits.timeout_s is not None else None
    prepared = limits.prepared
    if isinstance(prepared, Prepared) and prepared.matches(instance, query):
        return CheckStart(start, deadline, query, prepared.pre, None)
    pre, decided = preprocess_or_decide(instance, query, engine, fast_paths, start)
    return CheckStart(start, deadline, query, pre, decided)


def resolve_query(instance: Instance, query: Optional[Query]) -> Query:
    query = query or instance.query
    if query is None:
        raise ValueError("no query given")
    return query


def preprocess_or_decide(instance: Instance, query: Query, engine: str, fast_paths: bool,
                         start: float) -> tuple[Preprocessed, Optional[Result]]:
    """The preprocessed instance, and the fast-path result when one applies.

    A returned deployable result has been replayed against the semantics.
    """
    pre = preprocess(instance, query, engine=engine, try_greedy=fast_paths)
    decided = pre.decided
    if decided is not None and (fast_paths or decided.stats.get("decided_by") == "initial"):
        decided.stats["preprocess_s"] = time.perf_counter() - start
        decided.time_s = time.perf_counter() - start
        if decided.verdict is Verdict.DEPLOYABLE:
            semantics.replay(instance, decided.trace, query)
        return pre, decided
    pre.decided = None
    pre.stats.pop("decided_by", None)
    return pre, None
