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
    from symreach.report.explain import explain as explain_pod
    from symreach.report.explain import explanation_text
    from symreach.frontends.dispatch import resolve_pod

    check_engine(engine)
    process.begin(timeout, memory)
    loaded = load_inputs_from_options(inputs, strict, max_input_mb)
    instance = loaded.instance
    if not instance.pod_types:
        raise InputError("the file declares no pod types: nothing to explain", filename=", ".join(inputs))
    with pod_hints(loaded):
        types = [resolve_pod(instance, pod)] if pod else list(range(len(instance.pod_types)))
    explanations = [explain_pod(instance, t) for t in types]
    outcomes: list[Optional[dict]] = [None] * len(types)
    if node is not None:
        if node not in {n.name for n in instance.nodes}:
            raise InputError(f"unknown node {node!r}", field_path="--node")
        explanations = [type(e)(e.pod, tuple(v for v in e.nodes if v.node == node)) for e in explanations]
        for i, (t, e) in enumerate(zip(types, explanations)):
            if not e.nodes[0].static:
                outcomes[i] = _decide_and_narrate(instance, t, node, engine, timeout)
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
        blocks.append(text)
    click.echo("\n\n".join(blocks))


def _decide_and_narrate(instance, t: int, node: str, engine: str, timeout: float) -> dict:
    from symreach.errors import time_remaining
    from symreach.model import Query
    from symreach.report.narrate import narrate
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide

    n = instance.node_index(node)
    query = Query((frozenset({(t, n)}),), f"{instance.pod_types[t].name} on {node}")
    result = decide(make_engine(engine), instance, query, Limits(timeout_s=time_remaining()))
    return {"verdict": result.verdict.value, "engine": result.engine, "time_s": result.time_s,
            "reason": result.reason, "narration": narrate(instance, result.trace)}
