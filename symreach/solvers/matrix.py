"""The deployability matrix: every (type, node) pair, by cells or by one fixpoint.

The default method, ``cells``, is one task per pod type (``symreach.solvers.cells``):
the type's affinity cone, one answer per class of interchangeable nodes
(``symreach.encodings.symmetry``), instantiated on every node of the class.
Types are independent, so they are grouped into tasks by estimated cost
(``symreach.solvers.chunks``) and an ``Executor`` runs them in this process,
on forked processes or on a Dask cluster (``symreach.solvers.executor``); the
matrix is the same.

``method="fixpoint"`` runs the preprocessing (may-be-present fixpoint,
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
from typing import Any, Callable, Iterator, Mapping, Optional

from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import preprocess
from symreach.model import Instance, Query, daemonset_groups
from symreach.result import Step
from symreach.run import RunContext
from symreach.solvers.bdd import ReachConfig, Reachability, SearchTimeout
from symreach.solvers.bdd_images import SymbolicSystem
from symreach.solvers.cells import (DEPLOYABLE, NOT_DEPLOYABLE, UNKNOWN, ClassAnswer, TypeAnswer,
                                     solve_types)
from symreach.solvers.chunks import matrix_chunks
from symreach.solvers.executor import Executor, LocalExecutor


class CellView(Mapping):
    """``(t, n) -> value`` over per-type rows, without one dict entry per cell
    (a 5,000-node, 1,000-type matrix has five million cells)."""

    def __init__(self, rows: list[list[str]], width: int) -> None:
        self._rows = rows
        self._width = width

    def __getitem__(self, key: tuple[int, int]) -> str:
        t, n = key
        if not (0 <= t < len(self._rows) and 0 <= n < self._width):
            raise KeyError(key)
        return self._rows[t][n]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return ((t, n) for t in range(len(self._rows)) for n in range(self._width))

    def __len__(self) -> int:
        return len(self._rows) * self._width

    def row(self, t: int) -> list[str]:
        """Every node's value for type ``t`` (read-only)."""
        return self._rows[t]


@dataclass
class Matrix:
    types: tuple[str, ...]
    nodes: tuple[str, ...]
    cells: Mapping[tuple[int, int], str]     # (t, n) -> verdict
    how: Mapping[tuple[int, int], str]       # (t, n) -> how the cell was decided
    stats: dict[str, Any] = field(default_factory=dict)
    # DaemonSet name -> {node index: its pod type pinned there} (model.daemonset_groups)
    groups: dict[str, dict[int, int]] = field(default_factory=dict)
    answers: dict[int, TypeAnswer] = field(default_factory=dict)  # per type (cells method)

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

    def rows(self) -> Iterator[dict[str, str]]:
        """One row per cell, generated (a large matrix has millions of cells)."""
        for name, per_node in self.row_subjects():
            for n, t in enumerate(per_node):
                if t is not None:
                    yield {"pod": name, "node": self.nodes[n], "verdict": self.cells[(t, n)],
                           "by": self.how[(t, n)]}

    def witness(self, instance: Instance, t: int, n: int) -> Optional[tuple[Step, ...]]:
        """A replayed witness for a deployable cell (cells method only), else None."""
        answer = self.answers.get(t)
        return None if answer is None else answer.witness(instance, n)


def matrix_table(instance: Instance, timeout_s: Optional[float] = None, method: str = "cells",
                 symmetry: bool = True, cell_timeout: Optional[float] = None,
                 executor: Optional[Executor] = None,
                 progress: Optional[Callable[[int, int], None]] = None) -> Matrix:
    """The matrix by ``method``: ``cells`` (one task per pod type, one answer per
    class of interchangeable nodes, see ``symreach.solvers.cells``) or
    ``fixpoint`` (one BDD fixpoint of the whole system)."""
    if method == "fixpoint":
        return fixpoint_matrix(instance, timeout_s)
    if method != "cells":
        raise ValueError(f"unknown matrix method {method!r}")
    return cells_matrix(instance, timeout_s, symmetry, cell_timeout, executor, progress)


def cells_matrix(instance: Instance, timeout_s: Optional[float] = None, symmetry: bool = True,
                 cell_timeout: Optional[float] = None, executor: Optional[Executor] = None,
                 progress: Optional[Callable[[int, int], None]] = None) -> Matrix:
    """Every pod type is an independent task; results arrive in any order."""
    start = time.perf_counter()
    executor = executor or LocalExecutor()
    width, ntypes = len(instance.nodes), len(instance.pod_types)
    verdicts: list[list[str]] = [[UNKNOWN] * width for _ in range(ntypes)]
    hows: list[list[str]] = [["deadline"] * width for _ in range(ntypes)]
    answers: dict[int, TypeAnswer] = {}
    deadline_at = time.time() + timeout_s if timeout_s is not None else None
    options = {"symmetry": symmetry, "cell_timeout": cell_timeout, "deadline_at": deadline_at}
    errors: dict[str, str] = {}

    def failed(chunk: tuple[int, ...], message: str) -> list[TypeAnswer]:
        for t in chunk:
            errors[instance.pod_types[t].name] = message
        return [TypeAnswer(t, (), [ClassAnswer(tuple(range(width)), UNKNOWN, "task-failed")],
                           {"classes": 0}) for t in chunk]

    chunks = matrix_chunks(instance, executor.slots)
    for batch in executor.map(solve_types, instance, chunks, options, on_error=failed):
        for answer in batch:
            answers[answer.t] = answer
            for cls in answer.classes:
                for n in cls.nodes:
                    verdicts[answer.t][n] = cls.verdict
                    hows[answer.t][n] = cls.how
        if progress is not None:
            progress(len(answers), ntypes)
    classes = sum(a.stats["classes"] for a in answers.values())
    complete = len(answers) == ntypes and all(v != UNKNOWN for row in verdicts for v in row)
    stats = {"method": "cells", "symmetry": symmetry, "executor": executor.name, "tasks": len(chunks),
             "cells": ntypes * width, "classes": classes, "cells_solved": classes,
             "time_s": time.perf_counter() - start, "complete": complete}
    if errors:
        stats["task_errors"] = errors
    if not complete:
        stats["reason"] = _incomplete_reason(timeout_s, deadline_at, cell_timeout, errors)
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  CellView(verdicts, width), CellView(hows, width), stats,
                  groups=daemonset_groups(instance), answers=answers)


def _incomplete_reason(timeout_s: Optional[float], deadline_at: Optional[float],
                       cell_timeout: Optional[float], errors: dict[str, str]) -> str:
    """Why some cells are unknown, in the words the fixpoint method uses."""
    if deadline_at is not None and time.time() >= deadline_at:
        return f"timeout: the time limit of {timeout_s:g} s was reached"
    if errors:
        return f"{len(errors)} pod type(s) failed: see task_errors"
    if cell_timeout is not None:
        return f"cell timeout: an engine left cells open after {cell_timeout:g} s"
    return "an engine left cells open (a state or memory limit)"


def fixpoint_matrix(instance: Instance, timeout_s: Optional[float] = None) -> Matrix:
    start = time.perf_counter()
    run = RunContext.within(timeout_s)
    every = Query(tuple(frozenset({(t, n)}) for t in range(len(instance.pod_types))
                        for n in range(len(instance.nodes))), "every pair")
    pre = preprocess(instance, every, try_greedy=False)
    pre.decided = None
    system = compile_system(instance, every, pre)
    complete = True
    reach = None
    try:
        sym = SymbolicSystem(system, run=run)
        reach = Reachability(sym, ReachConfig(dynamic_reorder=False, record_rings=False, to_fixpoint=True), run)
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
    unknown: the answer when a limit stops the run before the fixpoint.
    Types without initial pods share one row (a large matrix has millions of cells)."""
    width = len(instance.nodes)
    blank, limit = [UNKNOWN] * width, ["limit"] * width
    cells = [blank] * len(instance.pod_types)
    how = [limit] * len(instance.pod_types)
    for (t, n), c in instance.initial.items():
        if c > 0:
            if cells[t] is blank:
                cells[t], how[t] = list(blank), list(limit)
            cells[t][n], how[t][n] = DEPLOYABLE, "initial"
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  CellView(cells, width), CellView(how, width), {"complete": False, "reason": reason},
                  daemonset_groups(instance))


def render_text(m: Matrix) -> str:
    """One column per node, as wide as its name, headed by the name on one line;
    one row per pod type, a DaemonSet's pinned types as one row."""
    subjects = m.row_subjects()
    width = max([len(name) for name, _ in subjects] + [4])
    widths = [max(1, len(node)) for node in m.nodes]
    lines = ["Y deployable, . not deployable, ? unknown (limit reached)"
             + (", - no pod of the DaemonSet for the node" if m.groups else ""),
             " " * width + "".join(f" {node:<{w}}" for node, w in zip(m.nodes, widths)).rstrip()]
    pads = [" " * (w - 1) for w in widths]
    for name, per_node in subjects:
        t0 = per_node[0] if per_node else None
        if isinstance(m.cells, CellView) and t0 is not None and all(t == t0 for t in per_node):
            # One pod type's row: read it as a list (millions of cells on large clusters).
            marks = "".join([f" {_MARK[v]}{pad}" for v, pad in zip(m.cells.row(t0), pads)])
        else:
            marks = "".join(f" {'-' if t is None else _MARK[m.cells[(t, n)]]:<{w}}"
                            for n, (t, w) in enumerate(zip(per_node, widths)))
        lines.append(f"{name:<{width}}{marks}".rstrip())
    if m.stats.get("reason"):
        lines.append(f"incomplete: {m.stats['reason']}")
    return "\n".join(lines)


def render_json(m: Matrix) -> str:
    return json.dumps({"pods": list(m.types), "nodes": list(m.nodes), "cells": list(m.rows()),
                       "stats": m.stats}, indent=2, default=str)


def render_csv(m: Matrix) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=["pod", "node", "verdict", "by"])
    w.writeheader()
    for row in m.rows():
        w.writerow(row)
    return out.getvalue()
