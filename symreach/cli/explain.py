"""``symreach explain FILE``: the kube-scheduler's reasons per node, and whether a
dynamic obstacle can ever be overcome (decided and narrated)."""

from __future__ import annotations

from typing import Optional

import click

from symreach.cli import group_check, process
from symreach.cli.group_check import group_option
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import (check_engine, current_namespace, engine_option, format_options, input_options,
                                  list_targets_if_asked, list_targets_option, load_inputs_from_options,
                                  memory_option, pod_hints, timeout_option, warnings_json,
                                  zoneinfo_read)
from symreach.cli.timing import command_clock, minimise_seconds
from symreach.report.verdict import times_text
from symreach.errors import InputError


@click.command("explain", cls=ErrorReportingCommand)
@input_options
@click.option("--pod", help="Pod type to explain (default: every pod type, within -n): ns/name, "
                             "deploy/NAME, sts/NAME, ds/NAME, ... or a running pod's name.")
@click.option("--node", help="Only this node; a dynamic obstacle is then also decided and narrated.")
@list_targets_option
@engine_option(help="Engine for the reachability question.")
@click.option("--moves", "moves", type=click.Choice(["paper", "both"]), default="paper", show_default=True,
              help="both (with --node): also ask under operator moves, and mark with ! an answer the "
                   "paper's moves reach but the operator rules forbid.")
@timeout_option(default=60.0, help="Seconds before the reachability question is answered unknown.")
@memory_option
@format_options(("text", "wide", "json", "yaml", "csv"))
@group_option
def explain_command(inputs, strict, max_input_mb, pod, node, engine, moves, timeout, memory, fmt) -> None:
    """Why each pod type does or does not fit each node now, in kube-scheduler words."""
    from symreach.report.explain import explain_subject, explanation_text, subjects

    check_engine(engine)
    process.begin(timeout, memory)
    from symreach.cli.names import check_node, resolve_pod

    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    list_targets_if_asked(loaded, fmt)
    group_check.explain_if_asked(loaded)
    instance, targets = loaded.instance, loaded.context["targets"]
    if not instance.pod_types:
        raise InputError("the file declares no pod types: nothing to explain", filename=", ".join(inputs))
    namespace = current_namespace()
    with pod_hints(loaded):
        about = subjects(instance, None if pod is None else resolve_pod(targets, pod, namespace))
    if pod is None and namespace is not None:
        about = [s for s in about if any(t is not None and instance.pod_types[t].namespace == namespace
                                         for t in s.per_node)]
    from symreach.frontends.k8s_nominated_filter import decided_now, filter_now

    report = loaded.context.get("report")
    explanations = [explain_subject(instance, s, filter_now(instance, report)) for s in about]
    outcomes: list[Optional[dict]] = [None] * len(about)
    unsettled: list[list[bool]] = [[] for _ in about]   # per reachability answer: whether a nomination may change it
    minimised: list[float] = []
    if node is not None:
        check_node(targets, node)
        explanations = [type(e)(e.pod, tuple(v for v in e.nodes if v.node == node)) for e in explanations]
        n = instance.node_index(node)
        for i, (s, e) in enumerate(zip(about, explanations)):
            if not e.nodes[0].static and s.per_node[n] is not None:
                outcomes[i] = _decide_and_narrate(instance, s.per_node[n], node, engine, timeout,
                                                  loaded.context, minimised, unsettled[i])
                if moves == "both":
                    from symreach.cli.moves_options import operator_outcome

                    outcomes[i]["operator"] = operator_outcome(instance, s.per_node[n], n, outcomes[i], loaded.context)
    clock = command_clock()
    clock.split(sum(minimised))
    if fmt in ("json", "yaml"):
        from symreach.report.schema import render_document

        data = [dict(e.to_json(), reachability=o) for e, o in zip(explanations, outcomes)]
        click.echo(render_document("explain", {"pods": data, "times": clock.times(), "warnings": warnings_json(loaded),
                                               "zoneinfo": zoneinfo_read()}, fmt, indent=1))
        return
    if fmt == "csv":
        click.echo(_explain_csv(explanations), nl=False)
        return
    blocks = []
    from symreach.frontends.k8s_nominated import NOMINATED_CAVEAT
    from symreach.report.caveats import type_caveats, with_caveats

    per_type = type_caveats(loaded.context.get("report"), instance)
    for s, e, o, open_ in zip(about, explanations, outcomes, unsettled):
        text = explanation_text(e)
        if o:
            text += f"\n  ever deployable on {node}? {o['verdict']} ({o['engine']}, {o['time_s']:.2f} s)"
            text += "".join(f"\n    {i}. {line}" for i, line in enumerate(o["narration"], 1))
            if o["reason"] and not o["narration"]:
                text += f"\n    {o['reason']}"
            if o.get("proved"):
                text += f"\n    proved: {o['proved']}"
            if o.get("operator"):
                from symreach.cli.moves_options import operator_outcome_text

                text += operator_outcome_text(o["operator"], node)
            more = o.get("more")
            if more:
                text += (f"\n  one more on {node} ({more['at_least']} at once)? {more['verdict']} "
                         f"({more['engine']}, {more['time_s']:.2f} s)")
                text += "".join(f"\n    {i}. {line}" for i, line in enumerate(more["narration"], 1))
                if more["reason"] and not more["narration"]:
                    text += f"\n    {more['reason']}"
        types = sorted({t for t in s.per_node if t is not None} & set(per_type))
        # verdicts now apply the nominations; an answer is exact with them unless one is unsettled
        exact = decided_now(instance, report, types) and not any(open_)
        blocks.append(with_caveats(text, [f"{instance.pod_types[t].name}: {m}" for t in types for m in per_type[t]
                                          if not (exact and NOMINATED_CAVEAT in m)]))
    zones = zoneinfo_read()
    click.echo("\n\n".join(blocks) + (f"\nzoneinfo: time zones read from {zones}" if zones else "")
               + f"\ntime: {times_text(clock.times())}")


def _explain_csv(explanations) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["pod", "node", "fits_now", "static", "reason"])
    for e in explanations:
        for v in e.nodes:
            writer.writerow([e.pod, v.node, v.reason is None, v.static, v.reason or ""])
    return out.getvalue()


def _decide_and_narrate(instance, t: int, node: str, engine: str, timeout: float, context: dict,
                        minimised: list[float], unsettled: list[bool]) -> dict:
    from symreach.cli.check import trace_pod_names
    from symreach.cli.nominated_answers import with_nominations
    from symreach.frontends.k8s_nominated_filter import unchanged_by_nominations
    from symreach.loader import parse_query
    from symreach.model import Query
    from symreach.report.narrate import narrate
    from symreach.report.verdict import what_was_proved
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide

    n = instance.node_index(node)
    query = Query((frozenset({(t, n)}),), f"{instance.pod_types[t].name} on {node}")

    def ask(q: Query) -> dict:
        result = decide(make_engine(engine), instance, q, RunContext.for_process())
        report = context.get("report")
        result = with_nominations(instance, q, result, report, RunContext.for_process())
        index = getattr(report, "nominated", None)
        unsettled.append(index is not None and not unchanged_by_nominations(instance, index, result))
        minimised.append(minimise_seconds(result.stats))
        return {"verdict": result.verdict.value, "engine": result.engine, "time_s": result.time_s,
                "reason": result.reason,
                "narration": narrate(instance, result.trace, trace_pod_names(result, instance, context)),
                "target": q.description, "proved": what_was_proved(result) or None}
    out = ask(query)
    if instance.initial.get((t, n), 0) > 0:
        # "initially present" answers the wrong question for an operator: ask for one more
        more = parse_query(instance, instance.pod_types[t].name, node, more=True)
        out["more"] = dict(ask(more), at_least=max([ct.at_least for ct in more.counts] + [1]))
    return out
