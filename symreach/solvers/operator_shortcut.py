"""``auto`` under operator moves (SPEC 5.2): answer from the paper's question when that is sound.

Operator moves are a subset of the paper's moves (a guard only removes
deletions) and ``--keep-replicas`` only adds a final condition, so:

(a) the paper's "not deployable" is the operator's too, and the paper's
    certificate proves it: ``certify`` checks it against the paper question
    (no ``moves`` recorded), whose every run includes every operator run;
(b) a paper witness that replays under the rules (every deletion allowed by
    ``semantics.delete_failure``, the end meeting ``replicas_failure``:
    ``semantics.replay`` on the operator instance) is an operator witness.

Only when neither applies is the explicit operator search asked, with the
time that is left. The symbolic engines never see the operator rules.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from symreach import semantics
from symreach.model import Instance, MoveRules, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.solvers.replica_order import identity_order

PAPER_NOT_DEPLOYABLE = "paper-not-deployable"
PAPER_WITNESS = "paper-witness-replays"
EXPLICIT = "explicit"


def shortcut(paper_engine, instance: Instance, query: Query, run: RunContext,
             finish_result: Callable[[Instance, Query, Result], Result]) -> Result:
    """The operator answer via the paper's (``paper_engine``: the unwrapped ``auto``;
    ``finish_result``: the registry's replay of a witness)."""
    from symreach.solvers.explicit import ExplicitEngine

    paper = replace(instance, moves=MoveRules())
    start = time.perf_counter()
    answer = paper_engine.check(paper, query, run)
    answer.time_s = time.perf_counter() - start
    answer = finish_result(paper, query, answer)  # the paper witness replays under the paper's moves
    answer.stats["paper_s"] = round(answer.time_s, 4)
    if answer.verdict is Verdict.NOT_DEPLOYABLE:
        answer.reason = (f"{answer.reason}; not deployable even with the paper's moves, which include every "
                         "operator move (the certificate is the paper question's and implies this one)")
        answer.stats["operator_shortcut"] = PAPER_NOT_DEPLOYABLE
        return answer
    if answer.verdict is Verdict.DEPLOYABLE:
        try:
            answer.trace = identity_order(instance, answer.trace, query)
            semantics.replay(instance, answer.trace, query)
        except semantics.ReplayError as exc:
            why = str(exc)
        else:
            answer.reason = f"{answer.reason}; the paper's witness keeps the operator rules at every step"
            answer.stats["operator_shortcut"] = PAPER_WITNESS
            return answer
    else:
        why = f"the paper question is {answer.verdict.value}"
    if run.past():
        return Result(Verdict.UNKNOWN, answer.engine, reason=f"{why}; no time left for the operator search",
                      stats={"operator_shortcut": EXPLICIT, "paper_s": answer.stats["paper_s"]})
    result = ExplicitEngine().check(instance, query, run)
    result.engine = f"auto/{result.engine}"
    result.stats["operator_shortcut"] = EXPLICIT
    result.stats["paper_s"] = answer.stats["paper_s"]
    result.stats["paper_witness_refused"] = why
    return result
