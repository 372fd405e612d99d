"""The ``symreach`` command line. Exit codes (SPEC 4): 0 deployable, 1 not
deployable, 2 usage or input error, 3 unknown."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import click

from symreach.errors import InputError
from symreach.result import Result

EXIT_INPUT_ERROR = 2


class _Group(click.Group):
    """Turns every InputError into one line on stderr and exit 2, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"symreach: error: {exc}", err=True)
            sys.exit(EXIT_INPUT_ERROR)
        except RecursionError:
            click.echo("symreach: error: input nested too deeply", err=True)
            sys.exit(EXIT_INPUT_ERROR)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symreach")
def cli() -> None:
    """Can a pod type ever reach a node? Decide it, with evidence."""


def parse_node_selector(text: Optional[str]) -> Optional[dict[str, str]]:
    if text is None:
        return None
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE[,KEY=VALUE...], got {text!r}",
                                     param_hint="--node-selector")
        out[key.strip()] = value.strip()
    return out


def _parse_with(items: tuple[str, ...]) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        pod, sep, node = item.rpartition("@")
        if not sep or not pod or not node:
            raise click.BadParameter(f"expected POD@NODE, got {item!r}", param_hint="--with")
        pairs.append((pod, node))
    return pairs


def _query_from_options(instance, pod, node, node_selector, with_items):
    from symreach.loader import parse_query

    if pod is None:
        if node or node_selector or with_items:
            raise click.UsageError("--node, --node-selector and --with need --pod")
        if instance.query is None:
            raise click.UsageError("the file has no query: give --pod (and --node or --node-selector)")
        return instance.query
    if node and node_selector:
        raise click.UsageError("give --node or --node-selector, not both")
    return parse_query(instance, pod, node=node, node_selector=parse_node_selector(node_selector),
                       with_pairs=_parse_with(with_items))


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--pod", help="Target pod type (name, or namespace/workload for Kubernetes dumps).")
@click.option("--node", help="Target node.")
@click.option("--node-selector", metavar="K=V[,K=V]", help="Target: any node with these labels.")
@click.option("--with", "with_items", multiple=True, metavar="POD@NODE",
              help="Co-occurrence: this pair must be present at the same time (repeatable).")
@click.option("--engine", default="auto", show_default=True,
              help="explicit, bdd, bmc, ic3, abc-pdr, abc-bmc, abc-reach or auto.")
@click.option("--timeout", type=click.FloatRange(min=0), default=None, help="Seconds before answering unknown.")
@click.option("--max-states", type=click.IntRange(min=1), default=None, help="State cap of the explicit engine.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Engines raced in parallel by --engine auto.")
@click.option("--quiet", is_flag=True, help="No progress line on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--trace-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the witness trace here.")
@click.option("--trace-format", type=click.Choice(["json", "yaml", "kubectl", "text"]), default=None,
              help="Default: from the --trace-out suffix (.json, .yaml/.yml, .sh, .txt), else json.")
@click.option("--cert-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the not-deployable certificate here.")
def check(file: Path, pod, node, node_selector, with_items, engine, timeout, max_states, jobs, quiet,
          as_json, trace_out, trace_format, cert_out) -> None:
    """Decide whether the target can ever be covered from the initial configuration."""
    from symreach.inputs import load_with_context
    from symreach.progress import make_progress
    from symreach.report import result_json, result_text
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import ENGINES, make_engine

    if engine not in ENGINES:
        raise click.BadParameter(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}",
                                 param_hint="--engine")
    instance, context = load_with_context(file)
    query = _query_from_options(instance, pod, node, node_selector, with_items)
    try:
        solver = make_engine(engine, jobs=jobs) if engine == "auto" else make_engine(engine)
    except ImportError as exc:
        raise click.UsageError(f"engine {engine!r} is not available here: {exc}")
    progress = make_progress(quiet or as_json)
    try:
        result: Result = solver.check(instance, query, Limits(timeout_s=timeout, max_states=max_states,
                                                              progress=progress))
    finally:
        if progress is not None:
            progress.close()
    if trace_out is not None and result.trace:
        from symreach.export.traces import export_trace

        fmt = trace_format or _TRACE_SUFFIXES.get(trace_out.suffix.lower(), "json")
        trace_out.write_text(export_trace(result.trace, instance, fmt,
                                          initial_pod_names=context.get("initial_pod_names")))
    if cert_out is not None and result.certificate is not None:
        _write_certificate(cert_out, result)
    click.echo(result_json(result, query.description) if as_json else result_text(result, query.description))
    sys.exit(result.verdict.exit_code)


_TRACE_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".sh": "kubectl", ".txt": "text"}


def _write_certificate(path: Path, result: Result) -> None:
    cert = result.certificate
    if isinstance(cert, str):  # already serialised (by the portfolio's worker process)
        path.write_text(cert)
    elif hasattr(cert, "dumps"):
        path.write_text(cert.dumps())
    else:
        path.write_text(json.dumps(cert, default=str, indent=1))


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--pod", help="Pod type to explain (default: every pod type).")
@click.option("--node", help="Only this node; a dynamic obstacle is then also decided and narrated.")
@click.option("--engine", default="auto", show_default=True, help="Engine for the reachability question.")
@click.option("--timeout", type=click.FloatRange(min=0), default=60.0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def explain(file: Path, pod, node, engine, timeout, as_json) -> None:
    """Why each pod type does or does not fit each node now, in kube-scheduler words."""
    from symreach.explain import explain as explain_pod
    from symreach.explain import explanation_text
    from symreach.inputs import load_any, resolve_pod

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
    from symreach.narrate import narrate
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import make_engine

    n = instance.node_index(node)
    query = Query((frozenset({(t, n)}),), f"{instance.pod_types[t].name} on {node}")
    result = make_engine(engine).check(instance, query, Limits(timeout_s=timeout))
    return {"verdict": result.verdict.value, "engine": result.engine, "time_s": result.time_s,
            "reason": result.reason, "narration": narrate(instance, result.trace)}


def _register_commands() -> None:
    """Commands that live in their own modules."""
    from symreach.cli_bench import bench_command
    from symreach.cli_encode import encode_group, generate_group
    from symreach.cli_matrix import matrix_command
    from symreach.cli_sat import certify_command, export_command

    for command in (encode_group, generate_group, matrix_command, certify_command, export_command,
                    bench_command):
        cli.add_command(command)


_register_commands()


def main() -> None:
    cli(prog_name="symreach")
