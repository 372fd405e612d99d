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
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, TextIO

from symreach import semantics
from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import preprocess
from symreach.model import Instance, Query, daemonset_groups
from symreach.result import Step
from symreach.run import RunContext
from symreach.solvers.bdd import ReachConfig, Reachability, SearchTimeout
from symreach.solvers.bdd_images import SymbolicSystem
from symreach.solvers.cells import (DEPLOYABLE, NOT_DEPLOYABLE, UNKNOWN, TypeAnswer,
                                     solve_type, solve_types)
from symreach.solvers.chunks import matrix_chunks
from symreach.solvers.executor import Executor, LocalExecutor


class CellView(Mapping):
    """``(t, n) -> value`` over per-type rows of one-byte codes into ``names``,
    without one dict entry (or one pointer) per cell: a 5,000-node, 1,000-type
    matrix has five million cells, 5 MB here."""

    def __init__(self, rows: list[bytearray], width: int, names: list[str]) -> None:
        self._rows = rows
        self._width = width
        self._names = names
        self._codes = {name: i for i, name in enumerate(names)}

    @classmethod
    def filled(cls, types: int, width: int, value: str) -> "CellView":
        return cls([bytearray(width) for _ in range(types)], width, [value])

    def code(self, value: str) -> int:
        c = self._codes.get(value)
        if c is None:
            if len(self._names) >= 256:
                raise ValueError("more than 256 distinct cell values")
            c = self._codes[value] = len(self._names)
            self._names.append(value)
        return c

    def set(self, t: int, nodes: Iterable[int], value: str) -> None:
        """``value`` on every node of ``nodes`` in type ``t``'s row."""
        row, c = self._rows[t], self.code(value)
        for n in nodes:
            row[n] = c

    def holds(self, value: str) -> bool:
        """Whether some cell has ``value``."""
        c = self._codes.get(value)
        return c is not None and any(c in row for row in self._rows)

    def __getitem__(self, key: tuple[int, int]) -> str:
        t, n = key
        if not (0 <= t < len(self._rows) and 0 <= n < self._width):
            raise KeyError(key)
        return self._names[self._rows[t][n]]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return ((t, n) for t in range(len(self._rows)) for n in range(self._width))

    def __len__(self) -> int:
        return len(self._rows) * self._width

    def row(self, t: int) -> list[str]:
        """Every node's value for type ``t`` (a new list)."""
        names = self._names
        return [names[c] for c in self._rows[t]]

    def codes(self, t: int) -> bytes:
        """Type ``t``'s row as one code per node (``value_of`` names them)."""
        return bytes(self._rows[t])

    def value_of(self, code: int) -> str:
        return self._names[code]

    def put_row(self, t: int, codes: bytes, names: Sequence[str]) -> None:
        """Type ``t``'s whole row: node ``n`` gets ``names[codes[n]]`` (``TypeRow``)."""
        table = bytes([self.code(name) for name in names]) + bytes(256 - len(names))
        self._rows[t] = bytearray(codes.translate(table))


@dataclass
class TypeRow:
    """A pod type's cells as one byte per node: a matrix task's result. Compact on the
    wire (a class's tuple of node indices costs the client more to unpickle than its
    share of the rest of the run) and put into the matrix as one row."""

    t: int
    classes: int
    verdicts: tuple[str, ...]   # code -> verdict
    cells: bytes
    hows: tuple[str, ...]       # code -> how it was decided
    how: bytes


def type_row(answer: TypeAnswer, width: int) -> TypeRow:
    """``answer``'s classes as one row; a node no class names stays unknown, not run."""
    rows, names = (bytearray(width), bytearray(width)), ([UNKNOWN], [NOT_RUN])
    for cls in answer.classes:
        for row, table, value in zip(rows, names, (cls.verdict, cls.how)):
            if value not in table:
                table.append(value)
            code = table.index(value)
            for n in cls.nodes:
                row[n] = code
    return TypeRow(answer.t, answer.stats.get("classes", 0), tuple(names[0]), bytes(rows[0]),
                   tuple(names[1]), bytes(rows[1]))


def solve_rows(inst: Instance, types: tuple[int, ...], **options: Any) -> list[TypeRow]:
    """A matrix task: ``solve_types`` as one ``TypeRow`` per type."""
    width = len(inst.nodes)
    return [type_row(answer, width) for answer in solve_types(inst, types, **options)]


@dataclass
class Matrix:
    types: tuple[str, ...]
    nodes: tuple[str, ...]
    cells: Mapping[tuple[int, int], str]     # (t, n) -> verdict
    how: Mapping[tuple[int, int], str]       # (t, n) -> how the cell was decided
    stats: dict[str, Any] = field(default_factory=dict)
    # DaemonSet name -> {node index: its pod type pinned there} (model.daemonset_groups)
    groups: dict[str, dict[int, int]] = field(default_factory=dict)
    # type -> what its cells depend on that is not modelled (``symreach.report.caveats``): marked ``Y*``
    caveats: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # type -> node -> the cell's own caveats where they are fewer than its type's (a cell the
    # nominated pods cannot change: ``cli/nominated_answers.MatrixSettler``)
    cell_caveats: dict[int, dict[int, tuple[str, ...]]] = field(default_factory=dict)

    def caveats_of(self, t: int, n: int) -> tuple[str, ...]:
        """The caveats cell (t, n) carries."""
        own = self.cell_caveats.get(t, {}).get(n)
        return own if own is not None else self.caveats.get(t, ())

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
                           "by": self.how[(t, n)], "caveats": list(self.caveats_of(t, n))}

    def witness(self, instance: Instance, t: int, n: int) -> Optional[tuple[Step, ...]]:
        """A replayed witness for a deployable cell (cells method only), else None.
        The type is solved again (deterministic): the matrix keeps no traces."""
        if self.stats.get("method") != "cells" or self.cells[(t, n)] != DEPLOYABLE:
            return None
        answer = solve_type(instance, t, symmetry=self.stats.get("symmetry", True),
                            cell_timeout=self.stats.get("cell_timeout"))
        return answer.witness(instance, n)


def matrix_table(instance: Optional[Instance], timeout_s: Optional[float] = None, method: str = "cells",
                 symmetry: bool = True, cell_timeout: Optional[float] = None,
                 executor: Optional[Executor] = None,
                 progress: Optional[Callable[[int, int], None]] = None,
                 into: Optional[Matrix] = None, run: Optional[RunContext] = None,
                 on_types: Optional[Callable[[list[int]], None]] = None) -> Matrix:
    """The matrix by ``method``: ``cells`` (one task per pod type, one answer per
    class of interchangeable nodes, see ``symreach.solvers.cells``) or
    ``fixpoint`` (one BDD fixpoint of the whole system). ``run`` (default: one
    of ``timeout_s`` from now) is the run's context: its deadline and cancel token."""
    if method == "fixpoint":
        assert instance is not None, "the fixpoint method needs the instance here"
        unencoded = semantics.unencoded_volume_checks(instance)
        if unencoded is None:
            return fixpoint_matrix(instance, timeout_s, run)
        # the BDD system does not encode them; the cells ask explicit (registry.DECLINED)
        m = cells_matrix(instance, timeout_s, symmetry, cell_timeout, executor, progress, into, run, on_types)
        m.stats["fixpoint"] = f"declined: the BDD fixpoint does not encode {unencoded}"
        return m
    if method != "cells":
        raise ValueError(f"unknown matrix method {method!r}")
    return cells_matrix(instance, timeout_s, symmetry, cell_timeout, executor, progress, into, run, on_types)


NOT_RUN = "limit"   # how a cell no task decided is marked


def empty_matrix(instance: Instance) -> Matrix:
    """Every cell unknown, not run: what ``cells_matrix`` fills in as types finish
    (a caller that keeps it has every decided cell if a limit stops the run)."""
    return named_matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                        daemonset_groups(instance))


def named_matrix(types: tuple[str, ...], nodes: tuple[str, ...], groups: dict[str, dict[int, int]]) -> Matrix:
    """``empty_matrix`` of an instance known by its names and DaemonSet rows alone."""
    return Matrix(types, nodes, CellView.filled(len(types), len(nodes), UNKNOWN),
                  CellView.filled(len(types), len(nodes), NOT_RUN), {"method": "cells", "complete": False},
                  groups=groups)


def stop_matrix(m: Matrix, reason: str) -> Matrix:
    """``m`` as it stands when a limit stopped the run: decided cells kept, the rest unknown."""
    m.stats["complete"] = False
    m.stats["reason"] = reason
    return m


def cells_matrix(instance: Optional[Instance], timeout_s: Optional[float] = None, symmetry: bool = True,
                 cell_timeout: Optional[float] = None, executor: Optional[Executor] = None,
                 progress: Optional[Callable[[int, int], None]] = None,
                 into: Optional[Matrix] = None, run: Optional[RunContext] = None,
                 on_types: Optional[Callable[[list[int]], None]] = None) -> Matrix:
    """Every pod type is an independent task; results arrive in any order and are
    written into ``into`` (default: a new ``empty_matrix``) as they arrive;
    ``on_types`` is told the types of each batch once their cells are in (``--stream``).
    ``instance`` None: only the workers have it (``into`` is a ``named_matrix``, ``executor``
    a ``dask_source.WorkerLoaded`` that gave its outline). The tasks get ``run``'s deadline as ``wall_deadline()`` (they may run on
    other machines); a cancelled ``run`` stops taking results (the rest unknown)."""
    run = run if run is not None else RunContext.within(timeout_s)
    start = time.perf_counter()
    executor = executor or LocalExecutor()
    m = into if into is not None else empty_matrix(instance)
    width, ntypes = len(m.nodes), len(m.types)
    cells, hows = m.cells, m.how
    assert isinstance(cells, CellView) and isinstance(hows, CellView)
    done: set[int] = set()
    classes = 0
    options = {"symmetry": symmetry, "cell_timeout": cell_timeout, "deadline_at": run.wall_deadline()}
    errors: dict[str, str] = {}
    m.stats.update({"method": "cells", "symmetry": symmetry, "cell_timeout": cell_timeout,
                    "executor": executor.name, "cells": ntypes * width})

    def failed(chunk: tuple[int, ...], message: str) -> list[TypeRow]:
        for t in chunk:
            errors[m.types[t]] = message
        return [TypeRow(t, 0, (UNKNOWN,), bytes(width), ("task-failed",), bytes(width)) for t in chunk]

    plan = getattr(executor, "plan", None)   # workers that loaded the input plan the chunks (dask_source)
    chunks = plan(instance) if plan is not None else matrix_chunks(instance, executor.slots)
    m.stats["tasks"] = len(chunks)
    batches = () if run.cancel.cancelled else executor.map(solve_rows, instance, chunks, options, on_error=failed)
    for batch in batches:
        for answer in batch:
            done.add(answer.t)
            classes += answer.classes
            cells.put_row(answer.t, answer.cells, answer.verdicts)
            hows.put_row(answer.t, answer.how, answer.hows)
        if on_types is not None:
            on_types([answer.t for answer in batch])
        m.stats["classes"] = m.stats["cells_solved"] = classes
        if progress is not None:
            progress(len(done), ntypes)
        if run.cancel.cancelled:  # keep what arrived, take no more
            break
    complete = len(done) == ntypes and not cells.holds(UNKNOWN)
    m.stats.update({"classes": classes, "cells_solved": classes,
                    "time_s": time.perf_counter() - start, "complete": complete})
    if errors:
        m.stats["task_errors"] = errors
    if not complete:
        m.stats["reason"] = _incomplete_reason(run, cell_timeout, errors)
    return m


def _incomplete_reason(run: RunContext, cell_timeout: Optional[float], errors: dict[str, str]) -> str:
    """Why some cells are unknown, in the words the fixpoint method uses."""
    if run.cancel.cancelled:
        return "cancelled"
    if run.timed_out():
        budget = f" of {run.timeout_s:g} s" if run.timeout_s is not None else ""
        return f"timeout: the time limit{budget} was reached"
    if errors:
        causes = set(errors.values())
        cause = causes.pop() if len(causes) == 1 else "see task_errors"
        return f"{len(errors)} pod type(s) failed: {cause}"
    if cell_timeout is not None:
        return f"cell timeout: an engine left cells open after {cell_timeout:g} s"
    return "an engine left cells open (a state or memory limit)"


def fixpoint_matrix(instance: Instance, timeout_s: Optional[float] = None,
                    run: Optional[RunContext] = None) -> Matrix:
    start = time.perf_counter()
    run = run if run is not None else RunContext.within(timeout_s)
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
        stats["reason"] = (f"timeout: the time limit of {run.timeout_s:g} s was reached"
                           if run.timeout_s is not None else "stopped")
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  cells, how, stats, daemonset_groups(instance))


_MARK = {DEPLOYABLE: "Y", NOT_DEPLOYABLE: ".", UNKNOWN: "?"}


def unknown_matrix(instance: Instance, reason: str) -> Matrix:
    """What is known without any fixpoint (initial pairs), every other cell
    unknown: the answer when a limit stops the run before the fixpoint.
    Types without initial pods share one row (a large matrix has millions of cells)."""
    width = len(instance.nodes)
    blank = bytearray(width)
    cells = [blank] * len(instance.pod_types)
    how = [blank] * len(instance.pod_types)
    for (t, n), c in instance.initial.items():
        if c > 0:
            if cells[t] is blank:
                cells[t], how[t] = bytearray(width), bytearray(width)
            cells[t][n] = how[t][n] = 1
    return Matrix(tuple(t.name for t in instance.pod_types), tuple(n.name for n in instance.nodes),
                  CellView(cells, width, [UNKNOWN, DEPLOYABLE]), CellView(how, width, [NOT_RUN, "initial"]),
                  {"complete": False, "reason": reason}, daemonset_groups(instance))


def render_text(m: Matrix) -> str:
    return "\n".join(text_lines(m))


def text_lines(m: Matrix) -> Iterator[str]:
    """One column per node, as wide as its name, headed by the name on one line;
    one row per pod type, a DaemonSet's pinned types as one row. Generated line
    by line (``write_matrix`` streams them)."""
    subjects = m.row_subjects()
    width = max([len(name) for name, _ in subjects] + [4])
    widths = [max(2 if m.caveats else 1, len(node)) for node in m.nodes]
    marked = set(m.cell_caveats) | set(m.caveats)
    yield ("Y deployable, . not deployable, ? unknown (limit reached)"
           + (", - no pod of the DaemonSet for the node" if m.groups else "")
           + (", * depends on what is not modelled (caveats below)" if m.caveats else ""))
    yield " " * width + "".join(f" {node:<{w}}" for node, w in zip(m.nodes, widths)).rstrip()
    pads = [" " * (w - 1) for w in widths]
    for name, per_node in subjects:
        t0 = per_node[0] if per_node else None
        if any(t in marked for t in per_node if t is not None):
            marks = "".join(f" {'-' if t is None else _MARK[m.cells[(t, n)]] + ('*' if m.caveats_of(t, n) else ''):<{w}}"
                            for n, (t, w) in enumerate(zip(per_node, widths)))
        elif isinstance(m.cells, CellView) and t0 is not None and all(t == t0 for t in per_node):
            # One pod type's row: read it as a list (millions of cells on large clusters).
            marks = "".join([f" {_MARK[v]}{pad}" for v, pad in zip(m.cells.row(t0), pads)])
        else:
            marks = "".join(f" {'-' if t is None else _MARK[m.cells[(t, n)]]:<{w}}"
                            for n, (t, w) in enumerate(zip(per_node, widths)))
        yield f"{name:<{width}}{marks}".rstrip()
    if m.stats.get("reason"):
        yield f"incomplete: {m.stats['reason']}"
    for t in sorted(m.caveats):
        for c in m.caveats[t]:
            yield f"* {m.types[t]}: {c}"


def render_json(m: Matrix, extra: Optional[dict[str, Any]] = None) -> str:
    out = io.StringIO()
    write_json(m, out, extra)
    return out.getvalue()


NO_CAVEATS = ', "caveats": []'   # every cell has the key (docs/json.md)


def write_json(m: Matrix, out: TextIO, extra: Optional[dict[str, Any]] = None,
               head: Optional[dict[str, Any]] = None) -> None:
    """``{**head, "pods", "nodes", "cells", "stats", **extra}`` as ``json.dumps``
    would write it, one cell at a time (a dict per cell held in memory costs
    about 1.3 KiB: gigabytes on large matrices)."""
    out.write(json_opening(m, head))
    cell_objects = json_cell_writer(m)
    first = True
    for name, per_node in m.row_subjects():
        text = cell_objects(name, per_node)
        if text:
            out.write(text if first else ", " + text)
            first = False
    out.write(json_closing(m, extra))


def json_opening(m: Matrix, head: Optional[dict[str, Any]] = None) -> str:
    """The JSON document up to its first cell (``write_json``)."""
    return ("{" + "".join(f"{json.dumps(k)}: {json.dumps(v, default=str)}, " for k, v in (head or {}).items())
            + '"pods": ' + json.dumps(list(m.types)) + ', "nodes": ' + json.dumps(list(m.nodes))
            + ', "cells": [')


def json_closing(m: Matrix, extra: Optional[dict[str, Any]] = None) -> str:
    """The JSON document after its last cell (``write_json``): stats, caveats, ``extra``."""
    return ('], "stats": ' + json.dumps(m.stats, default=str)
            + ', "caveats": ' + json.dumps({m.types[t]: list(c) for t, c in sorted(m.caveats.items())})
            + "".join(f", {json.dumps(key)}: {json.dumps(value, default=str)}" for key, value in (extra or {}).items())
            + "}")


def json_cell_writer(m: Matrix) -> Callable[[str, tuple[Optional[int], ...]], str]:
    """``(row name, per-node types) -> its JSON cell objects`` (docs/json.md), joined
    by ``", "`` ("" for none), each distinct value quoted once."""
    nodes = [json.dumps(node) for node in m.nodes]
    quoted: dict[str, str] = {}

    def q(value: str) -> str:
        hit = quoted.get(value)
        if hit is None:
            hit = quoted[value] = json.dumps(value)
        return hit

    marks: dict[tuple[str, ...], str] = {(): NO_CAVEATS}

    def mark(t: int, n: int) -> str:   # read when the cell is written: --stream settles rows as they come
        c = m.caveats_of(t, n)
        hit = marks.get(c)
        if hit is None:
            hit = marks[c] = ', "caveats": ' + json.dumps(list(c))
        return hit

    rows = isinstance(m.cells, CellView) and isinstance(m.how, CellView)
    tails: dict[tuple[int, int, str], list[str]] = {}   # codes, caveats -> every node's cell after its pod

    def tail(c: int, h: int, mark: str) -> list[str]:
        hit = tails.get((c, h, mark))
        if hit is None:
            value, how = q(m.cells.value_of(c)), q(m.how.value_of(h))   # type: ignore[attr-defined]
            hit = tails[(c, h, mark)] = [f', "node": {node}, "verdict": {value}, "by": {how}{mark}}}, '
                                         for node in nodes]
        return hit

    def cells(name: str, per_node: tuple[Optional[int], ...]) -> str:
        pod = '{"pod": ' + q(name)
        t = per_node[0] if per_node else None
        if rows and t is not None and per_node.count(t) == len(per_node) and t not in m.cell_caveats:
            # One pod type's row, one mark: cells by runs of equal codes, the pod put before each.
            codes, how, one = m.cells.codes(t), m.how.codes(t), mark(t, 0)   # type: ignore[attr-defined]
            parts: list[str] = []
            for start, end in code_runs(codes, how):
                parts += tail(codes[start], how[start], one)[start:end]
            return (pod + pod.join(parts))[:-2] if parts else ""
        return ", ".join([f'{pod}, "node": {nodes[n]}, "verdict": {q(m.cells[(t, n)])}, '
                          f'"by": {q(m.how[(t, n)])}{mark(t, n)}}}'
                          for n, t in enumerate(per_node) if t is not None])
    return cells


def render_csv(m: Matrix) -> str:
    out = io.StringIO()
    write_csv(m, out)
    return out.getvalue()


CSV_HEADER = "pod,node,verdict,by\r\n"


def write_csv(m: Matrix, out: TextIO) -> None:
    """What ``csv.DictWriter`` writes, a row per cell."""
    out.write(CSV_HEADER)
    lines = csv_line_writer(m)
    for name, per_node in m.row_subjects():
        out.write(lines(name, per_node))


def csv_line_writer(m: Matrix) -> Callable[[str, tuple[Optional[int], ...]], str]:
    """``(row name, per-node types) -> its CSV lines``, with each distinct value
    quoted once (a writer call per cell was most of the time on large matrices)."""
    quoted: dict[str, str] = {}

    def q(value: str) -> str:
        hit = quoted.get(value)
        if hit is None:
            buf = io.StringIO()
            csv.writer(buf).writerow([value, ""])   # two fields: "" alone would be quoted
            hit = quoted[value] = buf.getvalue()[:-3]
        return hit

    nodes = [q(node) for node in m.nodes]
    rows = isinstance(m.cells, CellView) and isinstance(m.how, CellView)
    tails: dict[tuple[int, int], list[str]] = {}   # codes -> every node's line without the pod

    def tail(c: int, h: int) -> list[str]:
        hit = tails.get((c, h))
        if hit is None:
            value, how = q(m.cells.value_of(c)), q(m.how.value_of(h))   # type: ignore[attr-defined]
            hit = tails[(c, h)] = [f",{node},{value},{how}\r\n" for node in nodes]
        return hit

    def lines(name: str, per_node: tuple[Optional[int], ...]) -> str:
        pod = q(name)
        t = per_node[0] if per_node else None
        if rows and t is not None and per_node.count(t) == len(per_node):
            # One pod type's row: node lines by runs of equal codes, the pod put before each.
            codes, how = m.cells.codes(t), m.how.codes(t)   # type: ignore[attr-defined]
            parts: list[str] = []
            for start, end in code_runs(codes, how):
                parts += tail(codes[start], how[start])[start:end]
            return pod + pod.join(parts) if parts else ""
        return "".join([f"{pod},{nodes[n]},{q(m.cells[(t, n)])},{q(m.how[(t, n)])}\r\n"
                        for n, t in enumerate(per_node) if t is not None])
    return lines


_RUN = re.compile(rb"(.)\1*", re.DOTALL)


def code_runs(*rows: bytes) -> list[tuple[int, int]]:
    """``[start, end)`` of the longest stretches where every row of ``rows`` keeps one code."""
    cuts = sorted({match.end() for row in rows for match in _RUN.finditer(row)})
    return list(zip([0] + cuts[:-1], cuts))


def write_matrix(m: Matrix, fmt: str, out: TextIO, extra: Optional[dict[str, Any]] = None,
                 head: Optional[dict[str, Any]] = None) -> None:
    """``m`` in ``fmt`` (text, json, csv) on ``out``, streamed; ends with a newline."""
    if fmt == "json":
        write_json(m, out, extra, head)
        out.write("\n")
    elif fmt == "csv":
        write_csv(m, out)
        out.write("\n")
    else:
        for line in text_lines(m):
            out.write(line + "\n")
