"""The prologue every symbolic engine shares: preprocess, and stop early if decided.

Preprocessing (SPEC 2.2: static pruning, may-fixpoint, Theorem 5, the
fixpoint's deployment order) is sound and cheap, so each engine runs it
before compiling. ``fast_paths=False`` keeps only the trivial "initially
present" answer, so that benchmarks and tests can exercise the engine itself.
"""

from __future__ import annotations

import time
from typing import Optional

from symreach import semantics
from symreach.errors import LimitReached
from symreach.encodings.preprocess import Preprocessed, preprocess
from symreach.model import Instance, Query
from symreach.records import record
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.solvers.base import RunLike, as_context, resolve_query


@record(frozen=False)
class CheckStart:
    """What every engine's ``check`` knows after the prologue."""

    start: float
    query: Query
    pre: Preprocessed
    decided: Optional[Result]


@record
class Prologue:
    """A prologue that decided nothing, handed to engines through ``RunContext.prepared``
    so that they skip preprocessing (``auto`` runs it once before forking its
    workers; each used to run it again, which on the large nets cost more than
    many engines' whole run)."""

    instance: Instance
    query: Query
    pre: Preprocessed

    def matches(self, instance: Instance, query: Query) -> bool:
        return self.instance is instance and self.query == query


def begin_check(instance: Instance, query: Optional[Query], run: RunContext, engine: str,
                fast_paths: bool) -> CheckStart:
    """Start the clock, resolve the query, preprocess; ``decided`` is a fast-path answer.

    With ``run.prepared`` for this instance and query, its preprocessing is
    reused: it decided nothing with the fast paths on, so it decides nothing
    with them off either (they only add answers)."""
    start = time.perf_counter()
    query = resolve_query(instance, query)
    prepared = run.prepared
    if isinstance(prepared, Prologue) and prepared.matches(instance, query):
        return CheckStart(start, query, prepared.pre, None)
    pre, decided = preprocess_or_decide(instance, query, engine, fast_paths, start, run)
    return CheckStart(start, query, pre, decided)


class PreprocessingEngine:
    """The common start of ``check`` for the engines that preprocess (bdd, bmc,
    ic3, lazy): resolve the query, preprocess (or reuse ``run.prepared``),
    answer on a fast path; else ``decide`` on what preprocessing left.
    ``fast_paths=False`` keeps only the trivial "initially present" answer."""

    name: str = ""
    fast_paths: bool = True

    def check(self, instance: Instance, query: Optional[Query] = None, run: RunLike = None) -> Result:
        ctx = as_context(run)
        try:
            begun = begin_check(instance, query, ctx, self.name, self.fast_paths)
        except LimitReached as stop:  # the run ended during preprocessing
            return Result(Verdict.UNKNOWN, self.name, reason=stop.reason)
        if begun.decided is not None:
            return begun.decided
        return self.decide(instance, begun.query, begun.pre, ctx)

    def decide(self, instance: Instance, query: Query, pre: Preprocessed,
               run: RunContext) -> Result:  # pragma: no cover - every engine overrides it
        raise NotImplementedError


def preprocess_or_decide(instance: Instance, query: Query, engine: str, fast_paths: bool,
                         start: float, run: Optional[RunContext] = None) -> tuple[Preprocessed, Optional[Result]]:
    """The preprocessed instance, and the fast-path result when one applies.

    A returned deployable result has been replayed against the semantics.
    """
    pre = preprocess(instance, query, engine=engine, try_greedy=fast_paths, run=run)
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
