"""``symreach explain FILE``: the kube-scheduler's reasons per node, and whether a
dynamic obstacle can ever be overcome (decided and narrated)."""

from __future__ import annotations

import json
from typing import Optional

import click

from symreach.cli import process
from symreach.cli.errors import ErrorReportingCommand
from symreach.cli.options import check_engine, input_options, load_inputs_from_options, memory_option, pod_hints, timeout_option
from symreach.errors import InputError


@click.command("explain", cls=ErrorReportingCommand)
@input_options
@click.option("--pod", help="Pod type to explain (default: every pod type).")
@click.option("--node", help="Only this node; a dynamic obstacle is then also decided and narrated.")
@click.option("--engine", default="auto", show_default=True, help="Engine for the reachability question.")
@timeout_option(default=60.0, help="Seconds before the reachability question is answered unknown.")
@memory_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def explain_command(inputs, strict, max_input_mb, pod, node, engine, timeout, memory, as_json) -> None:
    """Why each pod type does or does not fit each node now, in kube-scheduler words."""
    from symreach.report.explain import explain_subject, explanation_text, subjects

    check_engine(engine)
    process.begin(timeout, memory)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    instance = loaded.instance
    if not instance.pod_types:
        raise InputError("the file declares no pod types: nothing to explain", filename=", ".join(inputs))
    with pod_hints(loaded):
        about = subjects(instance, pod)
    explanations = [explain_subject(instance, s) for s in about]
    outcomes: list[Optional[dict]] = [None] * len(about)
    if node is not None:
        if node not in {n.name for n in instance.nodes}:
            raise InputError(f"unknown node {node!r}", field_path="--node")
        explanations = [type(e)(e.pod, tuple(v for v in e.nodes if v.node == node)) for e in explanations]
        n = instance.node_index(node)
        for i, (s, e) in enumerate(zip(about, explanations)):
            if not e.nodes[0].static and s.per_node[n] is not None:
                outcomes[i] = _decide_and_narrate(instance, s.per_node[n], node, engine, timeout)
    if as_json:
        data = [dict(e.to_json(), reachability=o) if o else e.to_json() for e, o in zip(explanations, outcomes)]
        click.echo(json.dumps(data, indent=1))
        return
    blocks = []
    for e, o in zip(explanations, outcomes):
        text = explanation_text(e)
        if o:
            text += f"\n  ever deployable on {node}? {o['verdict']} ({o['engine']}, {o['time_s']:.2f} s)"
            text += "".join(f"\n    {i}. {line}" for i, line in enumerate(o["narration"], 1))
            if o["reason"] and not o["narration"]:
                text += f"\n    {o['reason']}"
            more = o.get("more")
            if more:
                text += (f"\n  one more on {node} ({more['at_least']} at once)? {more['verdict']} "
                         f"({more['engine']}, {more['time_s']:.2f} s)")
                text += "".join(f"\n    {i}. {line}" for i, line in enumerate(more["narration"], 1))
                if more["reason"] and not more["narration"]:
                    text += f"\n    {more['reason']}"
        blocks.append(text)
    click.echo("\n\n".join(blocks))


def _decide_and_narrate(instance, t: int, node: str, engine: str, timeout: float) -> dict:
    from symreach.loader import parse_query
    from symreach.model import Query
    from symreach.report.narrate import narrate
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide

    n = instance.node_index(node)
    query = Query((frozenset({(t, n)}),), f"{instance.pod_types[t].name} on {node}")

    def ask(q: Query) -> dict:
        result = decide(make_engine(engine), instance, q, RunContext.for_process())
        return {"verdict": result.verdict.value, "engine": result.engine, "time_s": result.time_s,
                "reason": result.reason, "narration": narrate(instance, result.trace), "target": q.description}
    out = ask(query)
    if instance.initial.get((t, n), 0) > 0:
        # "initially present" answers the wrong question for an operator: ask for one more
        more = parse_query(instance, instance.pod_types[t].name, node, more=True)
        out["more"] = dict(ask(more), at_least=max([ct.at_least for ct in more.counts] + [1]))
    return out
