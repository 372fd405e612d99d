"""``--moves``, ``--respect-pdb``, ``--protect``, ``--protect-namespace``, ``--keep-replicas`` (SPEC 5.2).

``moves_options`` keeps them off the command's signature (in the click
context, as ``target_options`` does); ``apply_moves`` puts the rules on the
instance and checks the engine answers under them: ``explicit``, and ``auto``
(from the paper's answer when sound, else explicit: ``solvers/operator_shortcut``);
any other engine is a usage error.
"""

from __future__ import annotations

import functools
from typing import Optional

import click

from symreach.model import MOVES, Instance, Query

_META = "symreach.moves"
_KEYS = ("moves", "respect_pdb", "protect", "protect_namespace", "keep_replicas")
ANSWERING_ENGINES = ("explicit", "auto")


def moves_options(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        click.get_current_context().meta[_META] = {
            key: kwargs.pop(key) for key in _KEYS}
        return func(*args, **kwargs)

    for option in reversed((
        click.option("--moves", type=click.Choice(MOVES), default=None,
                     help="paper (default): any pod may be deleted; operator: evictions respect "
                          "PodDisruptionBudgets, DaemonSet, static/mirror and kube-system pods are "
                          "protected, and controllers keep their replicas (also: the query's moves:)."),
        click.option("--respect-pdb", is_flag=True,
                     help="A deletion is an eviction: allowed only while every PodDisruptionBudget holds."),
        click.option("--protect", multiple=True, metavar="K=V[,K=V]",
                     help="Pods with these labels are never deleted (repeatable)."),
        click.option("--protect-namespace", multiple=True, metavar="NS",
                     help="Pods of this namespace are never deleted (repeatable)."),
        click.option("--keep-replicas", is_flag=True,
                     help="The witness ends with every Deployment, ReplicaSet and StatefulSet running its "
                          "replicas again (a deletion becomes a move; StatefulSet pods keep their names)."),
    )):
        wrapper = option(wrapper)
    return wrapper


def refuse_if_requested(what: str) -> None:
    """A usage error when the command line asks for operator moves for a question that has none yet."""
    opts = click.get_current_context().meta.get(_META, {})
    if opts.get("moves") == "operator" or any(opts.get(key) for key in _KEYS[1:]):
        raise click.UsageError(f"{what} are answered with the paper's moves only; drop --moves operator and its rules")


def apply_moves(instance: Instance, query: Query, engine: str) -> tuple[Instance, str]:
    """The instance under the requested move rules, and the engine to ask."""
    from symreach.loader import moves
    from symreach.cli.options import parse_node_selector

    opts = click.get_current_context().meta.get(_META, {})
    selectors = []
    for text in opts.get("protect", ()):
        selector = parse_node_selector(text)
        if not selector:
            raise click.UsageError(f"--protect {text!r}: give labels as K=V[,K=V]")
        selectors.append(selector)
    rules = moves.rules_for(instance, opts.get("moves") or query.moves, respect_pdb=opts.get("respect_pdb", False),
                            protect=selectors, protect_namespaces=opts.get("protect_namespace", ()),
                            keep_replicas=opts.get("keep_replicas", False))
    if not rules.restricted:
        return instance, engine
    if engine not in ANSWERING_ENGINES:
        raise click.UsageError(f"engine {engine} does not answer under --moves operator yet; use --engine explicit")
    return moves.with_moves(instance, rules), engine


def explain_block(instance: Instance, query: Query, result, max_states: Optional[int]) -> None:
    """Under operator moves, a not-deployable answer names what blocks where the paper's
    answer is deployable: the paper question is asked of ``explicit`` (capped at
    ``PAPER_STATES`` states and ``PAPER_SECONDS``, so it stays cheap; past them nothing
    is said) and its witness replayed under the rules."""
    from dataclasses import replace

    from symreach.model import MoveRules
    from symreach.report.moves import blocking_note
    from symreach.result import Verdict
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine

    if result.verdict is not Verdict.NOT_DEPLOYABLE or not instance.moves.restricted:
        return
    if result.stats.get("operator_shortcut") == "paper-not-deployable":  # auto asked the paper question already
        result.stats["paper_verdict"] = "not-deployable"
        return
    paper = replace(instance, moves=MoveRules())
    left = RunContext.for_process().remaining()
    run = RunContext.within(PAPER_SECONDS if left is None else min(PAPER_SECONDS, left), max_states=min(max_states or PAPER_STATES, PAPER_STATES))
    answer = make_engine("explicit").check(paper, query, run)
    if answer.verdict is Verdict.DEPLOYABLE:
        note = blocking_note(instance, answer.trace)
        result.reason = f"{result.reason}; {note}"
        result.stats["paper_verdict"] = "deployable"
        result.stats["blocked_by"] = note
    elif answer.verdict is Verdict.NOT_DEPLOYABLE:
        result.stats["paper_verdict"] = "not-deployable"


def operator_terms(instance: Instance, result, names) -> str:
    """Under operator rules, a witness in operator terms (``report.operator_steps``): sets
    ``result.stats["operator_steps"]`` (JSON) and returns the text block ("" otherwise)."""
    if not result.trace or not instance.moves.restricted:
        return ""
    from symreach.report.operator_steps import operator_steps, operator_text

    result.stats["operator_steps"] = [s.to_json() for s in operator_steps(instance, result.trace, names)]
    return "\n" + operator_text(instance, result.trace, names)


def operator_matrix(m, inst: Instance, cell_timeout: float) -> dict:
    """``matrix --moves both``: the operator verdict of every cell (``solvers/operator_cells``)."""
    from symreach.loader import moves
    from symreach.solvers.operator_cells import operator_cells

    rules_inst = moves.with_moves(inst, moves.rules_for(inst, "operator"))
    pairs = [(t, n) for _, per_node in m.row_subjects() for n, t in enumerate(per_node) if t is not None]
    from symreach.run import RunContext

    left = RunContext.for_process().remaining()
    return operator_cells(rules_inst, m.cells, pairs, cell_timeout if left is None else min(cell_timeout, left))


def with_operator_cells(m, inst: Instance, cells: list) -> list:
    """JSON cells with ``operator`` (the verdict under operator moves) and ``operator_forbids``."""
    from symreach.report.matrix_view import operator_forbidden

    forbidden = operator_forbidden(m)
    pair_of = {(name, m.nodes[n]): (t, n) for name, per_node in m.row_subjects()
               for n, t in enumerate(per_node) if t is not None}
    out = []
    for cell in cells:
        pair = pair_of[(cell["pod"], cell["node"])]
        out.append({**cell, "operator": m.operator.get(pair, cell["verdict"]), "operator_forbids": pair in forbidden})
    return out


def operator_outcome(instance: Instance, t: int, n: int, paper: dict, context: dict) -> dict:
    """``explain --moves both``: the same question under operator moves, as ``paper``'s keys
    plus ``forbidden`` (the paper's moves reach it, the operator rules do not) and the
    witness in operator terms."""
    from symreach.export.traces import step_names
    from symreach.loader import moves
    from symreach.model import Query
    from symreach.report.narrate import narrate
    from symreach.report.operator_steps import operator_steps
    from symreach.run import RunContext
    from symreach.solvers.registry import make_engine

    rules_inst = moves.with_moves(instance, moves.rules_for(instance, "operator"))
    query = Query((frozenset({(t, n)}),), paper["target"])
    result = make_engine("auto").check(rules_inst, query, RunContext.for_process())
    names = step_names(result.trace, rules_inst, context.get("initial_pod_names"),
                       context.get("initial_holdings")) if result.trace else []
    out = {"verdict": result.verdict.value, "engine": result.engine, "time_s": result.time_s,
           "reason": result.reason, "narration": narrate(rules_inst, result.trace, names),
           "steps": [s.to_json() for s in operator_steps(rules_inst, result.trace, names)],
           "forbidden": paper["verdict"] == "deployable" and result.verdict.value == "not-deployable"}
    if out["forbidden"]:
        explain_block(rules_inst, query, result, None)
        out["reason"] = result.reason
    return out


def operator_outcome_text(o: dict, node: str) -> str:
    mark = " !" if o["forbidden"] else ""
    text = f"\n  with operator moves?{mark} {o['verdict']} ({o['engine']}, {o['time_s']:.2f} s)"
    if o["forbidden"]:
        text += "\n    ! the paper's moves reach it, the operator rules forbid it"
    from symreach.report.operator_steps import OperatorStep

    for step in o["steps"]:
        replicas = step.get("replicas")
        shown = OperatorStep(step["step"], step["action"], step["pod"], step["node"], step.get("controller", ""),
                             step.get("budget", ""), step.get("replaces", ""),
                             (replicas["from"], replicas["to"]) if replicas else None)
        text += f"\n    {step['step']}. {shown.text()}"
    if o["reason"] and not o["steps"]:
        text += f"\n    {o['reason']}"
    return text


PAPER_STATES = 20_000
PAPER_SECONDS = 5.0
