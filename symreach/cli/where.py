"""``symreach where FILE --pod X``: which pools and nodes can ever host X, in one run.

One row of the matrix (``symreach.solvers.cells``: X's affinity cone, one
answer per class of interchangeable nodes), grouped by node pool, with the
kube-scheduler's reason where a node can never host X for a static reason.
"""

from __future__ import annotations

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import (current_namespace, format_options, input_options, list_targets_if_asked,
                                  list_targets_option, load_inputs_from_options, memory_option, pod_hints,
                                  timeout_option, warnings_json)
from symreach.cli.output import emit_verdict
from symreach.cli.timing import command_clock
from symreach.report.verdict import times_text


@click.command("where", cls=ErrorReportingCommand)
@input_options
@click.option("--pod", required=False, help="The pod: ns/name, deploy/NAME, sts/NAME, ds/NAME, ... or a "
                                            "running pod's name (within -n).")
@list_targets_option
@format_options(("text", "wide", "json", "yaml", "csv"))
@click.option("--cell-timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True, metavar="SECONDS",
              help="Seconds for the engine on one class of nodes; then unknown.")
@timeout_option(help="Seconds before the remaining nodes are unknown.")
@memory_option
def where_command(inputs, strict, max_input_mb, pod, fmt, cell_timeout, timeout, memory) -> None:
    """Which node pools and nodes can ever host the pod (exit 0: some can, 1: none, 3: unknown left)."""
    from symreach.cli.names import resolve_pod

    process.begin(timeout, memory)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    from symreach.model import daemonset_groups   # imported after loading: the decide phase's own cost
    from symreach.report.explain import explain_subject, subjects
    from symreach.report.matrix_view import UNKNOWN, Row, where_data
    from symreach.run import RunContext
    from symreach.solvers.cells import solve_type

    list_targets_if_asked(loaded, fmt)
    if pod is None:
        raise click.UsageError("give --pod (or --list-targets)")
    inst = loaded.instance
    with pod_hints(loaded):
        name = resolve_pod(loaded.context["targets"], pod, current_namespace())
    groups = daemonset_groups(inst)
    if name in groups:
        per_node = tuple(groups[name].get(n) for n in range(len(inst.nodes)))
    else:
        per_node = (inst.type_index(name),) * len(inst.nodes)
    row = Row(name, per_node)
    cells: dict[tuple[int, int], str] = {}
    for t in sorted({t for t in per_node if t is not None}):
        deadline = RunContext.for_process().wall_deadline()
        for cls in solve_type(inst, t, cell_timeout=cell_timeout, deadline_at=deadline).classes:
            for n in cls.nodes:
                if per_node[n] == t:
                    cells[(t, n)] = cls.verdict
    (subject,) = subjects(inst, name)
    explained = explain_subject(inst, subject)
    static = {inst.node_index(v.node): v.text() if v.others else v.reason
              for v in explained.nodes if v.static and v.reason}

    class _Cells:  # the one row, as the matrix renderers read it
        def __init__(self) -> None:
            self.cells = cells

    data = where_data(_Cells(), inst, row, static)
    clock = command_clock()
    clock.split()
    data["times"] = clock.times()
    verdicts = set(cells.values())
    code = 0 if data["can"] else (3 if UNKNOWN in verdicts else 1)
    emit_verdict(render_where(data, fmt, warnings_json(loaded)), code)


def render_where(data: dict, fmt: str, warnings: list) -> str:
    from symreach.report.matrix_view import where_text

    if fmt in ("json", "yaml"):
        from symreach.report.schema import render_document

        return render_document("where", dict(data, warnings=warnings), fmt, indent=1)
    if fmt == "csv":
        import csv
        import io

        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["pod", "pool", "node", "verdict", "running", "reason"])
        for p in data["pools"]:
            for verdict, names in p["nodes"].items():
                for node in names:
                    writer.writerow([data["pod"], p["pool"], node, verdict, node in p["running"],
                                     p["reasons"].get(node, "")])
        return out.getvalue().rstrip("\n")
    return where_text(data) + f"\ntime: {times_text(data['times'])}"
