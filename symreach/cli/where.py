"""``symreach where FILE --pod X``: which pools and nodes can ever host X, in one run.

One row of the matrix (``symreach.solvers.cells``: X's affinity cone, one
answer per class of interchangeable nodes), grouped by node pool, with the
kube-scheduler's reason where a node can never host X for a static reason.
"""

from __future__ import annotations

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import (current_budget, current_namespace, format_options, input_options,
                                  list_targets_if_asked, list_targets_option, load_inputs_from_options,
                                  memory_option, pod_hints, timeout_option, warnings_json)
from symreach.cli.output import emit_verdict
from symreach.cli.timing import command_clock
from symreach.report.verdict import times_text


NOMINATED_NEVER = ("the pending pods nominated to it (status.nominatedNodeName) keep it out: with them in force, "
                   "no sequence of deployments and deletions gets it there")


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
    from symreach.cli.nominated_answers import NOMINATED_HOW, MatrixSettler
    from symreach.report.caveats import type_caveats
    from symreach.solvers.cells import solve_type
    from symreach.solvers.matrix import empty_matrix, type_row

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
    types = sorted({t for t in per_node if t is not None})
    m = empty_matrix(inst)   # the row's types filled in, the rest left unknown (never shown)
    for t in types:
        deadline = RunContext.for_process().wall_deadline()
        answer = type_row(solve_type(inst, t, cell_timeout=cell_timeout, deadline_at=deadline), len(inst.nodes))
        m.cells.put_row(t, answer.cells, answer.verdicts)
        m.how.put_row(t, answer.how, answer.hows)
    # each cell's caveats and, with nominated pods, its verdict settled with them: as matrix's cells
    report = loaded.context.get("report")
    m.caveats = type_caveats(report, inst)
    MatrixSettler(m, inst, report, current_budget(), True, cell_timeout).types_done(types)
    (subject,) = subjects(inst, name)
    explained = explain_subject(inst, subject)
    static = {inst.node_index(v.node): v.text() if v.others else v.reason
              for v in explained.nodes if v.static and v.reason}
    for n, t in enumerate(per_node):   # turned not deployable by the search around the nominations
        if t is not None and n not in static and m.how[(t, n)] == NOMINATED_HOW:
            static[n] = NOMINATED_NEVER
    data = where_data(m, inst, row, static)
    clock = command_clock()
    clock.split()
    data["times"] = clock.times()
    unknown = any(node for p in data["pools"] for node in p["nodes"][UNKNOWN])
    code = 0 if data["can"] else (3 if unknown else 1)
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
