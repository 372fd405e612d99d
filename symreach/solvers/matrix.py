"""The deployability matrix: one fixpoint answers every (type, node) pair.

``matrix_table(instance)`` runs the preprocessing (may-be-present fixpoint,
static pruning) and a single forward BDD fixpoint of the whole system, with
no target and no early stop, then reads each pair off the reached set: (t, n)
is deployable iff some reachable state has ``present(t, n)``. Pairs outside
the fixpoint are ``not-deployable`` without any symbolic work. Renderers for
text, JSON and CSV live here too; engines are not involved in printing.
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import preprocess
from symreach.model import Instance, Query
from symreach.solvers.bdd import Reachability, SearchTimeout
from symreach.solvers.bdd_images import SymbolicSystem

DEPLOYABLE, NOT_DEPLOYABLE, UNKNOWN = "deployable", "not-deployable", "unknown"


@dataclass
class Matrix:
    types: tuple[str, ...]
    nodes: tuple[str, ...]
    cells: dict[tuple[int, int], str]        # (t, n) -> verdict
    how: dict[tuple[int, int], str]          # (t, n) -> "initial" | "pruned" | "fixpoint"
    stats: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> list[dict[str, str]]:
        return [{"pod": self.types[t], "node": self.nodes[n], "verdict": self.cells[(t, n)],
                 "by": self.how[(t, n)]}
                for t in range(len(self.types)) for n in range(len(self.nodes))]


def matrix_table(instance: Instance, timeout_s: Optional[float] = None) -> Matrix:
    start = time.perf_counter()
    every = Query(tuple(frozenset({(t, n)}) for t in range(len(instance.pod_types))
                        for n in range(len(instance.nodes))), "every pair")
    pre = preprocess(instance, every, try_greedy=False)
    pre.decided = None
    system = compile_system(instance, every, pre)
    sym = SymbolicSystem(system)
    deadline = start + timeout_s if timeout_s is not None else None
    reach = Reachability(sym, "forward", "chaining", deadline, dynamic_reorder=False, record_rings=False)
    reach.goal = sym.bdd.false
    complete = True
    try:
        reach.run()
    except SearchTimeout:
        complete = False
    cells: dict[tuple[int, int], str] = {}
    how: dict[tuple[int, int], str] = {}
    for t in range(len(instance.pod_types)):
        for n in range(len(instance.nodes)):
            p = (t, n)
            if instance.initial.get(p, 0) > 0:
                cells[p], how[p] = DEPLOYABLE, "initial"
            elif p not in system.pairs:
                cells[p], how[p] = NOT_DEPLOYABLE, "pruned"
            else:
                hit = reach.R & sym.bdd.var(sym.names[system.pairs[p].present]) != sym.bdd.false
                if hit:
                    cells[p], how[p] = DEPLOYABLE, "fixpoint"
                else:
                    cells[p], how[p] = (NOT_DEPLOYABLE if complete else UNKNOWN), "fixpoint"
    stats = dict(system.stats)
    stats.update(reach.stats)
    stats["time_s"] = time.perf_counter() - start
    stats["complete"] = complete
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  cells, how, stats)


_MARK = {DEPLOYABLE: "Y", NOT_DEPLOYABLE: ".", UNKNOWN: "?"}


def render_text(m: Matrix) -> str:
    width = max([len(t) for t in m.types] + [4])
    lines = ["Y deployable, . not deployable, ? unknown (limit reached)"]
    for j, node in enumerate(m.nodes):
        lines.append(" " * (width + 1) + "  " * j + node)
    for t, name in enumerate(m.types):
        marks = " ".join(_MARK[m.cells[(t, n)]] for n in range(len(m.nodes)))
        lines.append(f"{name:<{width}} {marks}")
    return "\n".join(lines)


def render_json(m: Matrix) -> str:
    return json.dumps({"pods": list(m.types), "nodes": list(m.nodes), "cells": m.rows(),
                       "stats": m.stats}, indent=2, default=str)


def render_csv(m: Matrix) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=["pod", "node", "verdict", "by"])
    w.writeheader()
    for row in m.rows():
        w.writerow(row)
    return out.getvalue()
