"""``symreach explain FILE``: the kube-scheduler's reasons per node, and whether a
dynamic obstacle can ever be overcome (decided and narrated)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from symreach.cli.errors import ErrorReportingCommand
from symreach.errors import InputError


@click.command("explain", cls=ErrorReportingCommand)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--pod", help="Pod type to explain (default: every pod type).")
@click.option("--node", help="Only this node; a dynamic obstacle is then also decided and narrated.")
@click.option("--engine", default="auto", show_default=True, help="Engine for the reachability question.")
@click.option("--timeout", type=click.FloatRange(min=0), default=60.0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def explain_command(file: Path, pod, node, engine, timeout, as_json) -> None:
    """Why each pod type does or does not fit each node now, in kube-scheduler words."""
    from symreach.report.explain import explain as explain_pod
    from symreach.report.explain import explanation_text
    from symreach.frontends.dispatch import load_any, resolve_pod

    instance = load_any(file)
    types = [resolve_pod(instance, pod)] if pod else list(range(len(instance.pod_types)))
    explanations = [explain_pod(instance, t) for t in types]
    outcomes: list[Optional[dict]] = [None] * len(types)
    if node is not None:
        if node not in {n.name for n in instance.nodes}:
            raise InputError(f"unknown node {node!r}", filename=str(file), field_path="--node")
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
    from symreach.model import Query
    from symreach.report.narrate import narrate
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import make_engine
    from symreach.solvers.witness import decide

    n = instance.node_index(node)
    query = Query((frozenset({(t, n)}),), f"{instance.pod_types[t].name} on {node}")
    result = decide(make_engine(engine), instance, query, Limits(timeout_s=timeout))
    return {"verdict": result.verdict.value, "engine": result.engine, "time_s": result.time_s,
            "reason": result.reason, "narration": narrate(instance, result.trace)}
