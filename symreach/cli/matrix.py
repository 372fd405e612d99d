"""``symreach matrix FILE``: the deployability of every (type, node) pair, by node pool."""

from __future__ import annotations

import io
import sys
from typing import Optional

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.executor_options import (executor_from_options, executor_options, outline_from_workers,
                                          task_progress, workers_loading)
from symreach.cli.nominated_answers import MatrixSettler, nominated_types, settle_matrix
from symreach.cli.options import (announce_warnings, current_budget, current_namespace, format_options, input_options,
                                  list_targets_if_asked, list_targets_option, listing_targets,
                                  load_inputs_from_options, memory_option, timeout_option, warnings_json,
                                  zoneinfo_read)
from symreach.cli.timing import command_clock
from symreach.report.verdict import times_text


def computation_options(func):
    """How the cells are computed: shared by ``matrix`` and ``where``."""
    for option in reversed((
        click.option("--method", type=click.Choice(["cells", "fixpoint"]), default="cells", show_default=True,
                     help="cells: one task per pod type, one answer per class of interchangeable "
                          "nodes; fixpoint: one BDD fixpoint of the whole system."),
        click.option("--symmetry/--no-symmetry", default=True, show_default=True,
                     help="Answer once per class of interchangeable nodes (cells method)."),
        click.option("--cell-timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
                     metavar="SECONDS",
                     help="Seconds for the engine on one cell (cells method); then unknown."),
        click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Processes working at once (the LocalCluster's workers with --executor dask; "
                          "same as --workers)."),
        executor_options,
    )):
        func = option(func)
    return func


def compute_matrix(inst, method: str, symmetry: bool, cell_timeout: float, executor: str, scheduler,
                   workers: int, worker_memory, jobs, memory, into=None, on_types=None, opened=None):
    """The matrix of ``inst`` as the options say (``--memory`` also bounds Dask's local workers);
    ``into``/``on_types``: see ``cells_matrix`` (``--stream``); ``opened``: the executor, already
    open (``executor_options.workers_loading``)."""
    import contextlib

    from symreach.errors import LimitReached
    from symreach.run import RunContext
    from symreach.solvers.matrix import empty_matrix, matrix_table, stop_matrix

    if method == "fixpoint":
        return matrix_table(inst, method="fixpoint", run=RunContext.for_process())
    workers = jobs or workers
    worker_memory = worker_memory or (f"{memory}MB" if memory else None)
    # Filled as pod types finish: a memory limit keeps every cell decided before it.
    m = into if into is not None else empty_matrix(inst)
    stopped = None
    try:
        with (contextlib.nullcontext(opened) if opened is not None else
              executor_from_options(executor, scheduler, workers, worker_memory)) as ex:
            matrix_table(inst, symmetry=symmetry, cell_timeout=cell_timeout, executor=ex,
                         progress=task_progress("matrix", "pod types"), into=m, run=RunContext.for_process(),
                         on_types=on_types)
    except MemoryError:
        stopped = process.memory_reason()
    except LimitReached as exc:
        stopped = exc.reason
    if stopped is not None:   # outside the handler: its frames (what filled memory) are gone
        stop_matrix(m, stopped)
    if m.stats.get("task_errors"):   # a lost cluster, a failed task: said once, whatever the format
        click.echo(f"symreach: warning: {m.stats['reason']}", err=True)
    return m


@click.command("matrix", cls=ErrorReportingCommand)
@input_options
@format_options(legacy_format=True)
@click.option("--transpose", is_flag=True, help="Pools (or nodes, -o wide) as rows, pod types as columns.")
@click.option("--pods", "pod_filter", metavar="SELECTOR",
              help="Only these pod types: a label selector (app=web,tier!=db) or a name pattern (payments/*).")
@click.option("--nodes", "node_filter", metavar="SELECTOR",
              help="Only these nodes: a label selector (pool=gpu) or a name pattern (gpu-*).")
@click.option("--moves", "moves", type=click.Choice(["paper", "both"]), default="paper", show_default=True,
              help="both: also ask every cell the paper's moves reach under operator moves, and mark "
                   "with ! those the operator rules forbid.")
@click.option("--stream", is_flag=True,
              help="-o csv|json: write each pod type's row as soon as its cells are decided (json: JSON "
                   "Lines, docs/json.md), in the order types finish. Other formats, filters and --moves "
                   "both need every row: written at the end.")
@list_targets_option
@timeout_option(help="Seconds before the remaining cells are unknown.")
@memory_option
@computation_options
def matrix_command(inputs, strict, max_input_mb, fmt: str, transpose: bool, pod_filter, node_filter, moves: str,
                   stream: bool, timeout, memory, method: str, symmetry: bool, cell_timeout: float, jobs, executor: str, scheduler,
                   workers: int, worker_memory) -> None:
    """Decide which pod types can ever run on which nodes, by node pool.

    Text groups the nodes into pools (nodes equal up to their name), named by
    the labels that tell them apart; -o wide has one column per node; -o
    json|yaml|csv have every cell.
    """
    process.begin(timeout, memory)
    namespace = current_namespace()
    # --executor dask: the workers parse the input (as this process does, unless it needs only names)
    opened = workers_loading(executor, scheduler, jobs or workers,
                             worker_memory or (f"{memory}MB" if memory else None), namespace) \
        if method == "cells" else None
    how = (method, symmetry, cell_timeout, executor, scheduler, workers, worker_memory, jobs, memory)
    # rows written as they are decided (matrix_stream): in input order (the plain output), or as types finish
    as_decided = method == "cells" and fmt in ("json", "csv") and not (pod_filter or node_filter or namespace
                                                                        or moves == "both")
    shipped = False
    if opened is not None and as_decided and fmt == "csv" and not listing_targets():
        # CSV needs names alone: the workers load and check the input, this process parses none of it
        outline = outline_from_workers(inputs, max_input_mb, opened)
        shipped = True
        # nominated pods: the cells are re-decided here (nominated_answers), which needs the input
        if outline is not None and not nominated_types(outline.summary.caveats):
            from symreach.solvers.matrix import named_matrix

            announce_warnings(outline.summary.warnings, strict)
            command_clock().lap("load_s")
            m = named_matrix(outline.types, outline.nodes, outline.groups)
            m.caveats = outline.summary.caveats
            _streamed(None, m, fmt, command_clock(), how, opened, ordered=not stream)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb,
                                      opened.ship_sources if opened and not shipped else None)
    list_targets_if_asked(loaded, fmt)
    inst = loaded.instance

    clock = command_clock()

    def render(m) -> str:
        return render_matrix(m, inst, fmt, transpose, pod_filter, node_filter, namespace, warnings_json(loaded),
                             clock.times())

    from symreach.report.caveats import type_caveats
    from symreach.solvers.matrix import empty_matrix, write_matrix

    def trailer_keys(m) -> dict:
        """The keys of the JSON/YAML document after its stats and caveats."""
        from symreach.report.matrix_view import view, view_json

        return {**view_json(m, inst, view(m, inst, True, None, None, None)),
                "times": clock.times(), "warnings": list(warnings_json(loaded)), "zoneinfo": zoneinfo_read()}

    def write(m, out) -> None:
        """JSON, YAML and CSV of every cell, streamed (millions of cells); the rest rendered."""
        if fmt in ("json", "yaml", "csv") and not (pod_filter or node_filter or namespace or moves == "both"):
            extra = head = None
            if fmt in ("json", "yaml"):
                from symreach.report.schema import document

                head = document("matrix", {})
                extra = trailer_keys(m)
            if fmt == "yaml":
                from symreach.solvers.matrix_yaml import write_yaml

                write_yaml(m, out, extra, head)
            else:
                write_matrix(m, fmt, out, extra, head)
        else:
            out.write(render(m) + "\n")

    report = loaded.context.get("report")
    if as_decided:
        m = empty_matrix(inst)
        m.caveats = type_caveats(report, inst)
        _streamed(inst, m, fmt, clock, how, opened, ordered=not stream, trailer=lambda: trailer_keys(m),
                  settler=_settler(m, inst, report, symmetry, cell_timeout))
    process.set_fallback(lambda reason: _fallback_text(inst, reason, write))
    m = compute_matrix(inst, method, symmetry, cell_timeout, executor, scheduler, workers, worker_memory, jobs,
                       memory, opened=opened)
    m.caveats = type_caveats(report, inst)
    if moves == "both":   # the operator verdicts are not searched around the nominations: every cell stays marked
        from symreach.cli.moves_options import operator_matrix

        m.operator = operator_matrix(m, inst, cell_timeout)
    else:
        settle_matrix(m, inst, report, current_budget(), symmetry, cell_timeout)
    clock.split()
    code = 0 if m.stats.get("complete") else 3
    process.printing(code)
    try:
        write(m, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:   # the reader stopped early (| head): not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(code)


def _settler(m, inst, report, symmetry: bool, cell_timeout: float) -> Optional[MatrixSettler]:
    """What re-decides ``m``'s rows with the nominated pods in force as they come (None: no nomination)."""
    settler = MatrixSettler(m, inst, report, current_budget(), symmetry, cell_timeout)
    return settler if settler.active else None


def _streamed(inst, m, fmt: str, clock, how: tuple, opened=None, ordered: bool = False,
              trailer=None, settler: Optional[MatrixSettler] = None) -> None:
    """``m`` (an empty matrix of ``inst``; None: only the workers have it) computed, its rows
    written as they are decided (``matrix_stream``): ``ordered``, the plain output; else
    ``--stream``'s, as types finish, the undecided ones (``?``) last. ``trailer()``: the JSON
    trailer's own keys. ``settler``: re-decides each row with the nominated pods in force before
    it is written. Exits."""
    from symreach.report.schema import document
    from symreach.solvers.matrix_stream import RowStream

    rows = RowStream(m, fmt, sys.stdout, document("matrix", {}), ordered=ordered)
    # A limit this process sees prints the rows not written yet, as they stand; the supervisor's
    # copy (printed if it has to kill the run) is made now, so it lists no rows: by then some are
    # written, and every row as ? is the whole matrix again (seconds and hundreds of MB at scale).
    process.set_fallback(lambda reason: _rest_text(rows, reason),
                         lambda reason: _rest_text(rows, reason, listed=False))
    def done(types: list[int]) -> None:
        if settler is not None:
            settler.types_done(types)
            m.stats["nominations"] = settler.stats()
        rows.types_done(types)

    try:
        compute_matrix(inst, *how, into=m, on_types=done, opened=opened)
        clock.split()
        code = 0 if m.stats.get("complete") else 3
        process.printing(code)
        rows.finish(trailer() if trailer is not None and fmt == "json" else None)
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


def _rest_text(rows, reason: str, listed: bool = True) -> str:
    """What ``rows`` has not written, as the run stands, ``reason`` in the JSON trailer;
    ``listed=False``: the trailer alone (the rows not written are not printed)."""
    from symreach.solvers.matrix import stop_matrix

    stats = dict(rows.m.stats)
    try:
        if not listed:
            reason = f"{reason} (rows not written by then are not listed: the run was stopped)"
        stop_matrix(rows.m, reason)
        return rows.remainder(listed=listed).rstrip("\n")
    finally:
        rows.m.stats = stats


# Past this many cells the supervisor's copy of the fallback (printed only if the
# run has to be killed) lists no cells: a pre-rendered JSON matrix of five million
# unknown cells is 400 MB. A run that stops by itself prints its cells either way.
FALLBACK_CELLS = 1_000_000


def _fallback_text(inst, reason: str, write) -> str:
    from symreach.solvers.matrix import Matrix, unknown_matrix

    m = unknown_matrix(inst, reason)
    if len(m.cells) > FALLBACK_CELLS:
        m = Matrix((), m.nodes, {}, {}, {"complete": False,
                                          "reason": f"{reason} (cells not listed: the run was stopped)"})
    out = io.StringIO()
    write(m, out)
    return out.getvalue().rstrip("\n")


CELL_KEYS = ("pod", "node", "verdict", "by")  # docs/json.md (and "caveats", a list, in JSON)


def render_matrix(m, inst, fmt: str, transpose: bool = False, pod_filter=None, node_filter=None,
                  namespace=None, warnings=(), times=None) -> str:
    """The matrix in the format of ``-o``; filters apply to every format; ``times``: the run's
    load / decide / minimise split (text: the last line; JSON: ``times``)."""
    from symreach.report.matrix_view import render_view, view, view_json

    grouped = view(m, inst, True, pod_filter, node_filter, namespace)
    if fmt in ("text", "wide"):
        text = render_view(m, inst, grouped if fmt == "text" else view(m, inst, False, pod_filter, node_filter,
                                                                        namespace), transpose)
        if not times:
            return text
        zones = zoneinfo_read()
        timeline = (f"zoneinfo: time zones read from {zones}\n" if zones else "") + f"time: {times_text(times)}"
        body, sep, last = text.rpartition("\n")   # the time line before "incomplete: ...", which stays last
        if sep and last.startswith("incomplete: "):
            return f"{body}\n{timeline}\n{last}"
        return f"{text}\n{timeline}"
    keep_rows = {r.name for r in grouped.rows}
    keep_nodes = {inst.nodes[n].name for c in grouped.columns for n in c.nodes}
    cells = [{**{k: c[k] for k in CELL_KEYS}, "caveats": c.get("caveats", [])} for c in m.rows()
             if c["pod"] in keep_rows and c["node"] in keep_nodes]
    operator = getattr(m, "operator", None)
    if operator is not None:  # --moves both: docs/json.md
        from symreach.cli.moves_options import with_operator_cells

        cells = with_operator_cells(m, inst, cells)
    if fmt == "csv":
        import csv
        import io

        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(CELL_KEYS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(cells)
        return out.getvalue().rstrip("\n")
    from symreach.report.schema import render_document

    data = {"pods": [r.name for r in grouped.rows], "nodes": [n.name for n in inst.nodes if n.name in keep_nodes],
            "cells": cells, **view_json(m, inst, grouped), "stats": m.stats, "times": times,
            "warnings": list(warnings), "zoneinfo": zoneinfo_read(),
            "caveats": {m.types[t]: list(c) for t, c in sorted((getattr(m, "caveats", None) or {}).items())}}
    return render_document("matrix", data, fmt, indent=2)
