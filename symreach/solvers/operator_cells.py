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
    deployable keeps the paper's verdict (``paper_cells[(t, n)]``).

    One question per pod type and class of interchangeable nodes: budgets, protection
    and replica floors name types, and the nodes a StatefulSet member's claims allow
    are fixed, so a permutation within a class maps operator runs to operator runs
    (the argument of the explicit engine's orbits); a class's nodes share a verdict.
    """
    from symreach.encodings.symmetry import node_classes

    pinned = {n for r in rules_inst.replica_targets for _, nodes in r.members
              if len(nodes) < len(rules_inst.nodes) for n in nodes}
    rep = {n: c[0] for c in node_classes(rules_inst, fixed=pinned) for n in c}
    asked: dict[tuple[int, int], str] = {}
    out = {}
    for t, n in pairs:
        if paper_cells[(t, n)] != DEPLOYABLE:
            out[(t, n)] = paper_cells[(t, n)]
            continue
        key = (t, rep[n])
        if key not in asked:
            asked[key] = operator_verdict(rules_inst, t, n, cell_timeout)
        out[(t, n)] = asked[key]
    return out
