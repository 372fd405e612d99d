"""Option parsing shared by the commands: targets, node selectors, co-occurrence pairs.

Every command that asks a reachability question builds its ``Query`` here,
so ``check``, ``export`` and ``bench`` read ``--pod``/``--node``/
``--node-selector``/``--domain``/``--with``/``--count``/``--more`` identically.
"""

from __future__ import annotations

import contextlib
import functools
import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import click

from symreach.errors import InputError
from symreach.loader.query import MAX_COUNT
from symreach.model import Instance, Query

# The query's fields as the command line names them: below cli/ an error names
# the field (``pod``, ``with #2``), a command's error names the option.
QUERY_OPTIONS = {"pod": "--pod", "node": "--node", "nodeSelector": "--node-selector", "domain": "--domain",
                 "count": "--count", "more": "--more", "with": "--with"}


def parse_node_selector(text: Optional[str]) -> Optional[dict[str, str]]:
    """``K=V[,K=V...]`` as a dict; None when the option was not given."""
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


def parse_with(items: tuple[str, ...]) -> list[tuple[str, str]]:
    """``POD@NODE`` items of ``--with`` as (pod, node) pairs."""
    pairs = []
    for item in items:
        pod, sep, node = item.rpartition("@")
        if not sep or not pod or not node:
            raise click.BadParameter(f"expected POD@NODE, got {item!r}", param_hint="--with")
        pairs.append((pod, node))
    return pairs


def query_from_options(instance: Instance, pod: Optional[str], node: Optional[str],
                       node_selector: Optional[str], with_items: tuple[str, ...]) -> Query:
    """The command line's target, or the file's own query when no ``--pod`` is given.

    ``--count``, ``--more`` and ``--domain`` are read from the click context
    (``target_options`` puts them there), so commands keep their signatures.
    """
    from symreach.loader import parse_query

    count, more, domain = _count_options()
    if pod is None:
        if node or node_selector or with_items or domain or count is not None or more:
            raise click.UsageError("--node, --node-selector, --domain, --with, --count and --more need --pod")
        if instance.query is None:
            raise click.UsageError(f"{instance.source}: the file has no query: give --pod "
                                   "(and --node or --node-selector)")
        return instance.query
    if sum(x is not None for x in (node, node_selector, domain)) > 1:
        raise click.UsageError("give one of --node, --node-selector and --domain")
    if count is not None and more:
        raise click.UsageError("give --count or --more, not both")
    with_pairs = [(full_pod_name(instance, p), n) for p, n in parse_with(with_items)]
    with naming_the_file(instance.source), naming_options():
        return parse_query(instance, full_pod_name(instance, pod), node=node,
                           node_selector=parse_node_selector(node_selector), with_pairs=with_pairs,
                           count=count, more=more, domain=parse_domain(domain))


def full_pod_name(instance: Instance, name: str) -> str:
    """A pod type or DaemonSet as named on the command line: its exact name, or a
    name without its ``namespace/`` when exactly one namespace has it (so
    ``--pod payments-api`` finds ``payments/payments-api``). Anything else is
    returned unchanged, for the query parser to report."""
    from symreach.model import daemonset_groups

    known = [t.name for t in instance.pod_types]
    if name in known or "/" in name:
        return name
    candidates = {k for k in known + list(daemonset_groups(instance)) if "@" not in k}
    matches = [k for k in candidates if k.split("/", 1)[-1] == name]
    return matches[0] if len(matches) == 1 else name


def parse_domain(text: Optional[str]) -> Optional[tuple[str, str]]:
    """``KEY=VALUE`` of ``--domain``: one topology key and its value."""
    if text is None:
        return None
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or "," in text:
        raise click.BadParameter(f"expected KEY=VALUE (one topology key), got {text!r}", param_hint="--domain")
    return key.strip(), value.strip()


_META = "symreach.count_options"


def _count_options() -> tuple[Optional[int], bool, Optional[str]]:
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta.get(_META, {}) if ctx is not None else {}
    return meta.get("count"), bool(meta.get("more")), meta.get("domain")


@contextlib.contextmanager
def naming_options() -> Iterator[None]:
    """An error about a query field names the option that gave it (``pod`` -> ``--pod``)."""
    try:
        yield
    except InputError as exc:
        field, sep, rest = exc.field_path.partition(" ")
        if field not in QUERY_OPTIONS:
            raise
        raise InputError(exc.problem, exc.filename, exc.line, QUERY_OPTIONS[field] + sep + rest) from None


@contextlib.contextmanager
def naming_the_file(source: Optional[str]) -> Iterator[None]:
    """An option that names something the file lacks: the error names the file too."""
    try:
        yield
    except InputError as exc:
        if exc.filename or not source or source == "<memory>":
            raise
        raise InputError(exc.problem, source, exc.line, exc.field_path) from None


def target_options(func):
    """``--pod``, ``--node``, ``--node-selector``, ``--domain``, ``--with``, ``--count``, ``--more``.

    The last three are taken off the command's arguments and kept in the
    click context for ``query_from_options``: the commands' signatures stay
    ``(pod, node, node_selector, with_items, ...)``.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        meta = {key: kwargs.pop(key) for key in ("count", "more", "domain")}
        click.get_current_context().meta[_META] = meta
        return func(*args, **kwargs)

    for option in reversed((
        click.option("--pod", help="Target pod type (name, or namespace/workload for Kubernetes dumps; "
                                   "a DaemonSet's ns/name means its pod on the target node)."),
        click.option("--node", help="Target node."),
        click.option("--node-selector", metavar="K=V[,K=V]", help="Target: any node with these labels "
                                                                  "(with --count: pods summed over them)."),
        click.option("--domain", metavar="KEY=VALUE",
                     help="Target: the topology domain of nodes labelled KEY=VALUE (pods summed over it)."),
        click.option("--with", "with_items", multiple=True, metavar="POD@NODE",
                     help="Co-occurrence: this pair must be present at the same time (repeatable)."),
        click.option("--count", type=click.IntRange(min=1, max=MAX_COUNT), default=None, metavar="K",
                     help="Target: K pods of the type at once on the node / pool / domain."),
        click.option("--more", is_flag=True,
                     help="Target: one more pod than initially runs on the node / pool / domain."),
    )):
        wrapper = option(wrapper)
    return wrapper


# ---- inputs ------------------------------------------------------------------------------------

MIB = 1024 * 1024


def input_options(func):
    """``INPUTS...`` (files, directories, ``-`` for standard input), ``--strict`` and ``--max-input-mb``."""
    from symreach.loader.yaml_source import DEFAULT_MAX_INPUT_MB

    for decorator in reversed((
        click.argument("inputs", nargs=-1, required=True, metavar="INPUT...",
                       type=click.Path(path_type=str, allow_dash=True)),
        click.option("--strict", is_flag=True,
                     help="Refuse the input (exit 2) when reading it raised any warning."),
        click.option("--max-input-mb", type=click.IntRange(min=1), default=DEFAULT_MAX_INPUT_MB,
                     show_default=True, help="Refuse an input file larger than this (MiB)."),
    )):
        func = decorator(func)
    return func


def load_inputs_from_options(inputs, strict: bool, max_input_mb: int):
    """Load the inputs as one instance; print its warnings on stderr (``--strict``: refuse them).

    The returned ``Loaded`` carries the warning groups in ``context["warnings"]``.
    """
    from symreach.frontends.dispatch import load_inputs
    from symreach.loader.yaml_source import InputTooLarge
    from symreach.report.warnings import SHOWN_PER_LINE, warning_groups

    try:
        loaded = load_inputs(list(inputs), max_bytes=max_input_mb * MIB)
    except InputTooLarge as err:
        raise InputError(f"{err.problem}; raise it with --max-input-mb", err.filename) from None
    groups = warning_groups(loaded.report)
    for group in groups:
        more = " (--json lists all)" if group.count > SHOWN_PER_LINE else ""
        click.echo(f"symreach: warning: {group.line()}{more}", err=True)
    if strict and groups:
        total = sum(g.count for g in groups)
        raise InputError(f"--strict: the input raised {total} warning(s), first: {groups[0].line()}")
    loaded.context["warnings"] = groups
    return loaded


@contextmanager
def pod_hints(loaded) -> Iterator[None]:
    """An unknown ``--pod`` that only a custom resource of the input would create says so."""
    from symreach.errors import InputError
    from symreach.report.warnings import unknown_pod_hint

    try:
        with naming_options():
            yield
    except InputError as err:
        if "pod type" not in err.problem or err.field_path != "--pod" or loaded.report is None:
            raise
        name = err.problem.split("'")[1] if "'" in err.problem else ""
        hint = unknown_pod_hint(loaded.report, name)
        if hint is None:
            raise
        raise InputError(f"{err.problem}; {hint}", err.filename, err.line, err.field_path) from None


def with_warnings(json_text: str, loaded) -> str:
    """A JSON object printed by a command, with the input's ``warnings`` added."""
    import json

    data = json.loads(json_text)
    if isinstance(data, dict):
        data["warnings"] = [g.to_json() for g in loaded.context.get("warnings", [])]
        return json.dumps(data, default=str)
    return json_text


class Seconds(click.ParamType):
    """A finite, non-negative number of seconds (``nan``, ``inf`` and negatives refused)."""

    name = "seconds"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> float:
        if isinstance(value, float) and math.isfinite(value) and value >= 0:
            return value
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"expected a number of seconds, got {value!r}", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"expected a finite number of seconds >= 0, got {value!r}", param, ctx)
        return seconds


def timeout_option(default: Optional[float] = None, help: str = "Seconds before answering unknown."):
    """``--timeout S``: the whole run's budget, every phase included (``symreach.run.RunContext``)."""
    return click.option("--timeout", type=Seconds(), default=default, show_default=default is not None,
                        help=help + " Counted from the start; every phase honours it.")


def memory_option(func):
    """``--memory MB``: the address-space limit of the process doing the work."""
    return click.option("--memory", type=click.IntRange(min=64), default=None, metavar="MB",
                        help="Memory limit in MB (RLIMIT_AS of the working process; "
                             "default: half of physical memory). Reaching it answers unknown.")(func)


def check_engine(name: str) -> None:
    """Refuse an unknown ``--engine`` name before any work is done."""
    from symreach.solvers.registry import ENGINES

    if name not in ENGINES:
        raise click.BadParameter(f"unknown engine {name!r}; choose from {', '.join(ENGINES)}",
                                 param_hint="--engine")


def limit_options(func: Callable) -> Callable:
    """``--timeout`` and ``--memory`` for a command without a verdict of its
    own (generate, encode, certify): the budget starts before its body runs."""
    from symreach.cli import process

    @functools.wraps(func)
    def limited(*args: Any, timeout: Optional[float], memory: Optional[int], **kwargs: Any) -> Any:
        process.begin(timeout, memory)
        return func(*args, **kwargs)

    return timeout_option(help="Seconds before giving up (exit 3).")(memory_option(limited))
