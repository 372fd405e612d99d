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
    deadline = start + timeout_s if timeout_s is not None else None
    complete = True
    reach = None
    try:
        sym = SymbolicSystem(system, deadline=deadline)
        reach = Reachability(sym, "forward", "chaining", deadline, dynamic_reorder=False, record_rings=False)
        reach.goal = sym.bdd.false
        reach.run()
    except (SearchTimeout, TimeoutError):
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
            elif reach is None:
                cells[p], how[p] = UNKNOWN, "fixpoint"
            else:
                hit = reach.R & sym.bdd.var(sym.names[system.pairs[p].present]) != sym.bdd.false
                if hit:
                    cells[p], how[p] = DEPLOYABLE, "fixpoint"
                else:
                    cells[p], how[p] = (NOT_DEPLOYABLE if complete else UNKNOWN), "fixpoint"
    stats = dict(system.stats)
    stats.update(reach.stats if reach is not None else {})
    stats["time_s"] = time.perf_counter() - start
    stats["complete"] = complete
    if not complete:
        stats["reason"] = f"timeout: the time limit of {timeout_s:g} s was reached"
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  cells, how, stats)


_MARK = {DEPLOYABLE: "Y", NOT_DEPLOYABLE: ".", UNKNOWN: "?"}


def unknown_matrix(instance: Instance, reason: str) -> Matrix:
    """What is known without any fixpoint (initial pairs), every other cell
    unknown: the answer when a limit stops the run before the fixpoint."""
    cells: dict[tuple[int, int], str] = {}
    how: dict[tuple[int, int], str] = {}
    for t in range(len(instance.pod_types)):
        for n in range(len(instance.nodes)):
            initial = instance.initial.get((t, n), 0) > 0
            cells[(t, n)] = DEPLOYABLE if initial else UNKNOWN
            how[(t, n)] = "initial" if initial else "limit"
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  cells, how, {"complete": False, "reason": reason})


def render_text(m: Matrix) -> str:
    """One column per node, as wide as its name, headed by the name on one line."""
    width = max([len(t) for t in m.types] + [4])
    widths = [max(1, len(node)) for node in m.nodes]
    lines = ["Y deployable, . not deployable, ? unknown (limit reached)",
             " " * width + "".join(f" {node:<{w}}" for node, w in zip(m.nodes, widths)).rstrip()]
    for t, name in enumerate(m.types):
        marks = "".join(f" {_MARK[m.cells[(t, n)]]:<{w}}" for n, w in enumerate(widths))
        lines.append(f"{name:<{width}}{marks}".rstrip())
    if m.stats.get("reason"):
        lines.append(f"incomplete: {m.stats['reason']}")
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
