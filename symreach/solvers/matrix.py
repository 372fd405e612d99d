"""The deployability matrix: one fixpoint answers every (type, node) pair.

``matrix_table(instance)`` runs the preprocessing (may-be-present fixpoint,
static pruning) and a single forward BDD fixpoint of the whole system, with
no target and no early stop, then reads each pair off the reached set: (t, n)
is deployable iff some reachable state has ``present(t, n)``. Pairs outside
the fixpoint are ``not-deployable`` without any symbolic work. Renderers for
text, JSON and CSV live here too; engines are not involved in printing. A
DaemonSet's pinned pod types (one per node) are printed as one row named by
the DaemonSet, with its own pod's verdict on each node.
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
from symreach.model import Instance, Query, daemonset_groups
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
    # DaemonSet name -> {node index: its pod type pinned there} (model.daemonset_groups)
    groups: dict[str, dict[int, int]] = field(default_factory=dict)

    def row_subjects(self) -> list[tuple[str, tuple[Optional[int], ...]]]:
        """One row per pod type, except that a DaemonSet's pinned types form one
        row (its own pod on each node; None where it has none)."""
        member = {t: name for name, row in self.groups.items() for t in row.values()}
        out, seen = [], set()
        for t, name in enumerate(self.types):
            group = member.get(t)
            if group is None:
                out.append((name, (t,) * len(self.nodes)))
            elif group not in seen:
                seen.add(group)
                out.append((group, tuple(self.groups[group].get(n) for n in range(len(self.nodes)))))
        return out

    def rows(self) -> list[dict[str, str]]:
        return [{"pod": name, "node": self.nodes[n], "verdict": self.cells[(t, n)], "by": self.how[(t, n)]}
                for name, per_node in self.row_subjects()
                for n, t in enumerate(per_node) if t is not None]


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
                  cells, how, stats, daemonset_groups(instance))


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
                  cells, how, {"complete": False, "reason": reason}, daemonset_groups(instance))


def render_text(m: Matrix) -> str:
    """One column per node, as wide as its name, headed by the name on one line;
    one row per pod type, a DaemonSet's pinned types as one row."""
    subjects = m.row_subjects()
    width = max([len(name) for name, _ in subjects] + [4])
    widths = [max(1, len(node)) for node in m.nodes]
    lines = ["Y deployable, . not deployable, ? unknown (limit reached)"
             + (", - no pod of the DaemonSet for the node" if m.groups else ""),
             " " * width + "".join(f" {node:<{w}}" for node, w in zip(m.nodes, widths)).rstrip()]
    for name, per_node in subjects:
        marks = "".join(f" {'-' if t is None else _MARK[m.cells[(t, n)]]:<{w}}"
                        for n, (t, w) in enumerate(zip(per_node, widths)))
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
