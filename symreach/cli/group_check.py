"""``symreach check FILE --group NS/NAME``: the gang question (issue 28).

``explicit``, ``bdd``, ``bmc`` and ``ic3`` answer group targets
(``solvers/gang_explicit.py``, ``solvers/gang_symbolic.py``); ``auto`` races
explicit against bdd (``solvers/gang_race.py``); ``lazy`` declines with one
line, and any other engine is refused with exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from symreach.cli.moves_options import refuse_if_requested

from symreach.cli.output import PendingOutput, emit_verdict
from symreach.cli.timing import command_clock, minimise_seconds
from symreach.report.verdict import times_text
from symreach.errors import InputError
from symreach.run import RunContext

GROUP_ENGINES = ("explicit", "bdd", "bmc", "ic3", "auto")
_META = "symreach.group"


def group_option(func):
    """``--group NS/NAME``, kept in the click context so the command's signature is unchanged."""
    def keep(ctx: click.Context, _param: click.Parameter, value: Optional[str]) -> None:
        ctx.meta[_META] = value

    return click.option("--group", metavar="NS/NAME", expose_value=False, callback=keep,
                        help="Target: can this PodGroup (gang) ever run? (--engine explicit, bdd, bmc, ic3 or auto)")(func)


def _wants_json(params: dict) -> bool:
    """``--json`` or ``-o json``, whichever the command has."""
    return bool(params.get("as_json")) or "json" in (params.get("fmt"), params.get("output"))


def answer_if_asked(loaded) -> None:
    """Answer the gang question and exit when ``--group`` (or the file's group query) asks it.

    Reads the command's options from the click context, so ``check`` calls it with one line."""
    ctx = click.get_current_context()
    params = ctx.params
    group, pod = ctx.meta.get(_META), params.get("pod")
    instance = loaded.instance
    if group is not None and pod is not None:
        raise click.UsageError("give --pod or --group, not both")
    if group is None and pod is None and instance.query is None and instance.groups and not instance.group_target:
        names = ", ".join(sorted(g.name for g in instance.groups)[:5])
        raise click.UsageError(f"{instance.source}: the input has no query: give --group ({names}) or --pod")
    if group is not None or (pod is None and instance.query is None and instance.group_target):
        refuse_if_requested("group targets")
        run(loaded, group, params.get("engine", "auto"), params.get("max_states"), _wants_json(params),
            params.get("trace_out"), params.get("cert_out"), bool(params.get("why")), params.get("max_depth"))


def group_name(instance, name: Optional[str]) -> str:
    """The group asked about (``--group`` or the file's ``query: {group: ...}``), checked."""
    name = name or instance.group_target
    known = [g.name for g in instance.groups]
    if name in known:
        return name
    matches = [k for k in known if k.split("/", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    slices = [k for k in known if k.startswith(f"{name}#")]
    if slices:
        raise InputError(f"group '{name}' is split by podGroupReplicaKey into {', '.join(sorted(slices))}: "
                         "ask about one of them", instance.source, field_path="--group")
    shown = ", ".join(sorted(known)[:10]) or "none"
    raise InputError(f"unknown group '{name}' (known: {shown})", instance.source, field_path="--group")


def group_answer(instance, group: str, engine: str, timeout_s: Optional[float], max_states: Optional[int],
                 max_depth: Optional[int] = None):
    """The gang answer of ``engine``; a one-line usage error for an engine that does not answer."""
    from symreach.solvers import gang_symbolic

    if engine in gang_symbolic.DECLINED:
        raise click.UsageError(gang_symbolic.DECLINED[engine])
    if engine not in GROUP_ENGINES:
        raise click.UsageError(f"engine {engine} does not answer group targets; "
                               f"use --engine {', '.join(GROUP_ENGINES)}")
    if engine == "explicit":
        from symreach.solvers.gang_explicit import answer

        return answer(instance, group, timeout_s, max_states)
    if engine == "auto":
        from symreach.solvers.gang_race import race

        return race(instance, group, timeout_s, max_states)
    return gang_symbolic.answer(instance, group, engine, timeout_s, max_depth)


def run(loaded, name: Optional[str], engine: str, max_states: Optional[int],
        as_json: bool, trace_out: Optional[Path], cert_out: Optional[Path], why: bool = False,
        max_depth: Optional[int] = None) -> None:
    from symreach.report.gang import explain_group_text, gang_json, gang_text
    from symreach.cli.options import with_warnings

    instance = loaded.instance
    if instance.bindings or instance.filter_errors:   # the gang step does not carry claim bindings, nor the abort
        raise click.UsageError("group targets with WaitForFirstConsumer claims that a deployment binds, or DRA "
                               "devices it allocates or whose allocator errs (the cycle's abort), are not answered "
                               "yet (ask about single pods: check --pod)")
    group = group_name(instance, name)
    result = group_answer(instance, group, engine, RunContext.for_process().remaining(), max_states, max_depth)
    clock = command_clock()
    clock.split(minimise_seconds(result.result.stats))
    target = f"group {result.root}"
    times = clock.times()
    text = gang_json(instance, result, target, times) if as_json else gang_text(instance, result, target, times)
    if as_json:
        text = with_warnings(text, loaded)
    elif why and result.result.verdict.value == "not-deployable":
        text += "\n" + _why(instance, result)
    elif why:   # deployable or unknown: the scheduler's own cycle, member by member
        text += "\nwhy (the scheduler's cycle from the current state):\n" + explain_group_text(instance, result)
    outputs: list[PendingOutput] = []
    if trace_out is not None and result.result.verdict.value != "deployable":
        click.echo(f"symreach: note: no witness ({result.result.verdict.value}); {trace_out} not written", err=True)
    elif trace_out is not None:
        from symreach.export.traces import export_trace
        from symreach.result import DEPLOY, Step

        steps = result.result.trace + tuple(Step(DEPLOY, instance.pod_types[t].name, instance.nodes[n].name)
                                            for t, n in result.placement)
        outputs.append((trace_out, lambda: export_trace(steps, instance, "json")))
    if cert_out is not None and result.result.certificate is not None:
        from symreach.certify.dispatch import as_certificate

        bound = as_certificate(result.result.certificate).bind(instance)   # certify refuses unbound ones
        outputs.append((cert_out, bound.dumps))
    elif cert_out is not None:
        click.echo(f"symreach: note: no certificate ({result.result.verdict.value}); {cert_out} not written",
                   err=True)
    emit_verdict(text, result.result.verdict.exit_code, outputs)


def explain_if_asked(loaded) -> None:
    """``explain --group``: the scheduler's cycle member by member, then the gang answer; exits."""
    ctx = click.get_current_context()
    name = ctx.meta.get(_META)
    as_json = _wants_json(ctx.params)
    if name is None:
        return
    from symreach.report.gang import explain_group_text, gang_json
    from symreach.solvers.gang_explicit import answer

    instance = loaded.instance
    result = answer(instance, group_name(instance, name), RunContext.for_process().remaining())
    clock = command_clock()
    clock.split(minimise_seconds(result.result.stats))
    if as_json:
        click.echo(gang_json(instance, result, f"group {result.root}", clock.times()))
    else:
        click.echo(explain_group_text(instance, result) + f"\ntime: {times_text(clock.times())}")
    ctx.exit(0)


def _why(instance, result) -> str:
    """``--why`` of a gang answer: the certificate's lemmas (every reachable configuration, as
    ``certify --explain`` prints them), then the scheduler's cycle from the current state."""
    from symreach.report.gang import explain_group_text

    walk = explain_group_text(instance, result)
    if result.result.certificate is None:
        return "why (from the current state; no certificate):\n" + walk
    from symreach.certify.lemmas import result_lemmas_text

    return result_lemmas_text(instance, result.result.certificate) + "\n" + walk


def explain_certified_group(instance, certificate) -> str:
    """``certify --explain`` of a gang certificate: its lemmas, then the scheduler's cycle
    from the current state member by member, as ``check --why`` prints them."""
    from symreach.certify.lemmas import lemmas_text
    from symreach.report.gang import explain_group_text
    from symreach.solvers.gang_explicit import answer

    walk = explain_group_text(instance, answer(instance, str(certificate.content.get("group"))))
    return lemmas_text(instance, certificate) + "\n" + walk


def is_group_certificate(certificate) -> bool:
    """Whether a parsed certificate answers a gang question (``certify`` then needs no target)."""
    from symreach.certify.dispatch import GROUP_FORMATS

    return certificate.format in GROUP_FORMATS
