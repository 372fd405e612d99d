"""``--moves both`` (issue 29 item 3): every paper-deployable cell asked again under operator moves.

Operator moves are a subset of the paper's and ``--keep-replicas`` only adds
an end condition, so a cell the paper's moves never reach is not reachable
with the operator's either: only the paper's deployable cells are asked
again, each of ``auto`` (``operator_shortcut``: the paper witness when it
keeps the rules, else the explicit operator search) within ``cell_timeout``
seconds. The answer per cell is ``deployable``, ``not-deployable`` (the paper
allows it, the operator rules forbid it: the cells ``matrix`` and ``explain``
mark) or ``unknown``.
"""

from __future__ import annotations

from typing import Iterable, Optional

from symreach.model import Instance, Query
from symreach.result import Verdict
from symreach.run import RunContext

DEPLOYABLE = Verdict.DEPLOYABLE.value


def operator_verdict(rules_inst: Instance, t: int, n: int, seconds: Optional[float]) -> str:
    """One cell under the instance's operator rules (``rules_inst.moves``)."""
    from symreach.solvers.registry import make_engine

    query = Query((frozenset({(t, n)}),), f"{rules_inst.pod_types[t].name} on {rules_inst.nodes[n].name}")
    run = RunContext.within(seconds)
    return make_engine("auto").check(rules_inst, query, run).verdict.value


def operator_cells(rules_inst: Instance, paper_cells, pairs: Iterable[tuple[int, int]],
                   cell_timeout: Optional[float]) -> dict[tuple[int, int], str]:
    """The operator verdict of every pair in ``pairs``; a pair the paper does not find
    deployable keeps the paper's verdict (``paper_cells[(t, n)]``)."""
    return {(t, n): (operator_verdict(rules_inst, t, n, cell_timeout) if paper_cells[(t, n)] == DEPLOYABLE
                     else paper_cells[(t, n)])
            for t, n in pairs}
