"""Option parsing shared by the commands: targets, node selectors, co-occurrence pairs.

Every command that asks a reachability question builds its ``Query`` here,
so ``check``, ``export`` and ``bench`` read ``--pod``/``--node``/
``--node-selector``/``--domain``/``--with``/``--count``/``--more`` identically.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

import click

from symreach.errors import InputError
from symreach.loader.query import MAX_COUNT
from symreach.model import Instance, Query

if TYPE_CHECKING:
    from symreach.search_budget import Budget
    from symreach.cli.names import Targets

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
                       node_selector: Optional[str], with_items: tuple[str, ...],
                       targets: Optional["Targets"] = None) -> Query:
    """The command line's target, or the file's own query when no ``--pod`` is given.

    ``--count``, ``--more`` and ``--domain`` are read from the click context
    (``target_options`` puts them there), so commands keep their signatures.
    ``--pod`` takes the names operators use (``symreach.cli.names``), within
    ``-n NAMESPACE``; unknown nodes and label keys get a did-you-mean.
    """
    from symreach.cli.names import check_label, check_node, resolve_pod
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
    if targets is None:
        targets = _loaded_targets(instance)
    namespace = current_namespace()
    selector = parse_node_selector(node_selector)
    with naming_the_file(instance.source), naming_options():
        with_pairs = [(resolve_pod(targets, p, namespace), n) for p, n in parse_with(with_items)]
        for n in [node] + [n for _, n in with_pairs]:
            if n is not None:
                check_node(targets, n, "--node" if n == node else "--with")
        for key, value in (selector or {}).items():
            check_label(targets, instance, key, None, "--node-selector")
        if domain is not None and "=" not in domain:  # a key alone: say which values it has
            check_label(targets, instance, domain.strip(), "", "--domain")
        domain_pair = parse_domain(domain)
        if domain_pair is not None:
            check_label(targets, instance, domain_pair[0], domain_pair[1], "--domain")
        return parse_query(instance, resolve_pod(targets, pod, namespace), node=node,
                           node_selector=selector, with_pairs=with_pairs,
                           count=count, more=more, domain=domain_pair)


def _loaded_targets(instance: Instance) -> "Targets":
    """The names of the inputs the command loaded (workloads, running pods), else of the instance alone."""
    from symreach.cli.names import targets_of

    ctx = click.get_current_context(silent=True)
    seen = ctx.meta.get(_TARGETS) if ctx is not None else None
    if seen is not None and seen[0] is instance:
        return seen[1]
    return targets_of(instance)


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


_NAMESPACE = "symreach.namespace"
_BUDGET = "symreach.search_budget"
SEARCH_BUDGET = "--search-budget"
_TARGETS = "symreach.targets"   # (instance, Targets) of the inputs the command loaded


def current_namespace() -> Optional[str]:
    """``-n NAMESPACE`` of the running command, or None."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_NAMESPACE) if ctx is not None else None


def current_budget() -> "Budget":
    """``--search-budget FACTOR`` of the running command as a ``search_budget.Budget`` (the default without it)."""
    from symreach.search_budget import DEFAULT, Budget

    ctx = click.get_current_context(silent=True)
    factor = ctx.meta.get(_BUDGET) if ctx is not None else None
    return DEFAULT if factor is None else Budget(factor)


def search_budget_option(func):
    """``--search-budget FACTOR``: every guard of the exact searches times FACTOR (``symreach.search_budget``),
    kept in the click context (``current_budget``) so the commands' signatures stay as they are."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        click.get_current_context().meta[_BUDGET] = kwargs.pop("search_budget")
        return func(*args, **kwargs)

    return click.option(SEARCH_BUDGET, "search_budget", type=click.FloatRange(min=0, min_open=True, max=1e6),
                        default=None, metavar="FACTOR",
                        help="Multiply every guard of the Kubernetes front end's exact searches (orders of DRA "
                             "pools and slices, PV matching runs, joint bindings and allocations, the DRA "
                             "abort's Filter runs; README "
                             "'Search budgets') by FACTOR: a caveat past a guard names the factor that raises "
                             "it. Default 1.")(wrapper)


def with_option_names(report) -> None:
    """The caveats and warnings of a Kubernetes ``Report`` name ``--search-budget`` where they say
    which search budget raises a guard (below cli/ they name the budget, not the option)."""
    from symreach.search_budget import naming_option

    if report is None:
        return
    report.caveats = {name: [naming_option(c, SEARCH_BUDGET) for c in notes] for name, notes in report.caveats.items()}
    report.warnings = [naming_option(w, SEARCH_BUDGET) for w in report.warnings]
    report.notes = [(category, naming_option(w, SEARCH_BUDGET)) for category, w in report.notes]


_ZONEINFO_DB = "symreach.frontends.zoneinfo_db"


def input_options(func):
    """``INPUT...`` and ``-f/--filename`` (files, directories, ``-`` for standard input; together
    they are the inputs), ``-n/--namespace``, ``--strict``, ``--max-input-mb``, ``--zoneinfo``
    (the scheduler's tz database, set for the run: ``zoneinfo_db``) and ``--search-budget``.

    ``-n`` is the namespace of namespaced objects that name none (manifests
    applied with ``kubectl apply -n NS``) and filters the targets; it is kept
    in the click context (``current_namespace``), so the commands' signatures
    stay ``(inputs, strict, max_input_mb, ...)``.
    """
    from symreach.cli.timing import command_clock
    from symreach.loader.yaml_source import DEFAULT_MAX_INPUT_MB

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        files = tuple(kwargs.pop("filenames") or ())
        click.get_current_context().meta[_NAMESPACE] = kwargs.pop("namespace")
        use_zoneinfo(kwargs.pop("zoneinfo"))
        kwargs["inputs"] = tuple(kwargs["inputs"]) + files
        command_clock()   # the load / decide / minimise split starts here
        if not kwargs["inputs"]:
            raise click.UsageError("give an input: FILE, -f FILE, a directory, or - for standard input")
        return func(*args, **kwargs)

    for decorator in reversed((
        click.argument("inputs", nargs=-1, required=False, metavar="[INPUT]...",
                       type=click.Path(path_type=str, allow_dash=True)),
        click.option("-f", "--filename", "filenames", multiple=True, metavar="FILE",
                     type=click.Path(path_type=str, allow_dash=True),
                     help="An input, as kubectl takes it (repeatable; - is standard input); same as INPUT."),
        click.option("-n", "--namespace", default=None, metavar="NS",
                     help="Namespace of objects that name none (as kubectl apply -n), and only "
                          "targets in it."),
        click.option("--strict", is_flag=True,
                     help="Refuse the input (exit 2) when reading it raised any warning."),
        click.option("--max-input-mb", type=click.IntRange(min=1), default=DEFAULT_MAX_INPUT_MB,
                     show_default=True, help="Refuse an input file larger than this (MiB)."),
        zoneinfo_option(),
        search_budget_option,
    )):
        wrapper = decorator(wrapper)
    return wrapper


def zoneinfo_option():
    """``--zoneinfo PATH`` (``input_options`` has it; the command calls ``use_zoneinfo``)."""
    return click.option("--zoneinfo", default=None, metavar="PATH",
                        help="The scheduler's tz database, for the time zones of DRA selectors: point it at the "
                             "zoneinfo of the scheduler's image (for the official image: its distroless tzdata), "
                             "a directory or a Go zoneinfo.zip. Default: Go's lookup on this machine "
                             "($ZONEINFO, then /usr/share/zoneinfo, ...).")


def use_zoneinfo(path: Optional[str]) -> None:
    """The run's tz database: ``--zoneinfo``, else Go's default lookup on this machine (a small
    check does not import ``zoneinfo_db``; one imported by an earlier run in this process is reset)."""
    if path is None:
        loaded = sys.modules.get(_ZONEINFO_DB)
        if loaded is not None:
            loaded.use(None)
        return
    from symreach.frontends import zoneinfo_db

    problem = zoneinfo_db.check_given(path)
    if problem is not None:
        raise InputError(f"--zoneinfo {path}: {problem}")
    zoneinfo_db.use(zoneinfo_db.Database.of(path))


def zoneinfo_read() -> Optional[str]:
    """The tz database this run's DRA selectors looked time zones up in, or None (none did)."""
    loaded = sys.modules.get(_ZONEINFO_DB)
    read = loaded.used() if loaded is not None else []
    given = " (--zoneinfo)" if read and loaded.current().image else ""
    return "; ".join(read) + given if read else None


def load_inputs_from_options(inputs, strict: bool, max_input_mb: int, on_sources=None):
    """Load the inputs as one instance; print its warnings on stderr (``--strict``: refuse them).
    ``on_sources``: see ``dispatch.load_inputs``.

    The returned ``Loaded`` carries the warning groups in ``context["warnings"]``
    and every name ``--pod`` accepts in ``context["targets"]``.
    """
    from symreach.cli.names import targets_of
    from symreach.cli.timing import command_clock
    from symreach.frontends.dispatch import load_inputs
    from symreach.loader.yaml_source import InputTooLarge
    from symreach.report.progress import loading
    from symreach.report.warnings import warning_groups

    namespace = current_namespace()
    clock = command_clock()
    try:
        with loading(", ".join(inputs)):
            loaded = load_inputs(list(inputs), max_bytes=max_input_mb * MIB, run=loading_context(),
                                 on_sources=on_sources, budget=current_budget(),
                                 **({"namespace": namespace} if namespace else {}))
    except InputTooLarge as err:
        raise InputError(f"{err.problem}; raise it with --max-input-mb", err.filename) from None
    with_option_names(loaded.report)
    groups = warning_groups(loaded.report)
    announce_warnings(groups, strict)
    loaded.context["warnings"] = groups
    loaded.context["targets"] = targets_of(loaded.instance, loaded.report)
    clock.lap("load_s")
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_TARGETS] = (loaded.instance, loaded.context["targets"])
    return loaded


def announce_warnings(groups: list, strict: bool) -> None:
    """The input's warning groups on stderr, one line each (``--strict``: refused, exit 2)."""
    from symreach.report.warnings import SHOWN_PER_LINE

    for group in groups:
        more = " (-o json lists all)" if group.count > SHOWN_PER_LINE else ""
        click.echo(f"symreach: warning: {group.line()}{more}", err=True)
    if strict and groups:
        total = sum(g.count for g in groups)
        raise InputError(f"--strict: the input raised {total} warning(s), first: {groups[0].line()}")


def loading_context():
    """The run's context for loading: the command's deadline plus the supervisor's
    grace. The ``unknown`` verdict of a limit needs the loaded instance, so loading
    stops (one line, exit 3) only where the supervisor would kill the work anyway,
    cooperatively; ``--timeout 0`` still reads and validates a small input."""
    from symreach.cli import process
    from symreach.run import RunContext

    run = RunContext.for_process()
    return run if run.deadline is None else run.with_(deadline=run.deadline + process.GRACE_S)


def list_targets_option(func):
    """``--list-targets``: print every name ``--pod``/``--node`` accept (within ``-n``) and exit 0."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        click.get_current_context().meta[_LIST] = kwargs.pop("list_targets")
        return func(*args, **kwargs)

    return click.option("--list-targets", is_flag=True,
                        help="List every pod type (with the workload and pod names that mean it), "
                             "node and label key, then exit.")(wrapper)


_LIST = "symreach.list_targets"


def listing_targets() -> bool:
    """Whether ``--list-targets`` was given (the command's other requirements then do not apply)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(_LIST))


def list_targets_if_asked(loaded, fmt: str = "text") -> None:
    """With ``--list-targets``: print the listing and exit 0."""
    import sys

    from symreach.cli.names import listing_text, targets_listing

    if not listing_targets():
        return
    listing = targets_listing(loaded.context["targets"].namespaces_of(current_namespace()))
    if fmt in ("json", "yaml"):
        from symreach.report.schema import render_document

        click.echo(render_document("targets", listing, fmt))
    else:
        click.echo(listing_text(listing))
    sys.exit(0)


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


def warnings_json(loaded) -> list:
    """The input's warning groups as the JSON contract's ``warnings``."""
    return [g.to_json() for g in loaded.context.get("warnings", [])]


class EngineName(click.ParamType):
    """An engine of ``solvers.registry``, read when the option is used or shown, so an
    engine registered later (a plugin, a test) is taken and listed too."""

    name = "engine"

    def get_metavar(self, param: click.Parameter, ctx: Optional[click.Context] = None) -> str:
        from symreach.solvers.registry import ENGINES

        return "[" + "|".join(ENGINES) + "]"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> str:
        from symreach.solvers.registry import ENGINES

        if value not in ENGINES:
            self.fail(f"unknown engine {value!r}; choose from {', '.join(ENGINES)}", param, ctx)
        return value


def engine_option(help: str = "The engine (every engine of the registry is listed).", **kwargs):
    """``--engine NAME``: an engine of ``solvers.registry``; ``--help`` lists them all."""
    return click.option("--engine", type=EngineName(), default="auto", show_default=True, help=help, **kwargs)


def jobs_option(default: int = 2, help: str = "Processes working at once."):
    """``--jobs N``: how many processes work at once, in every command that has it."""
    return click.option("--jobs", type=click.IntRange(min=1), default=default, show_default=True, metavar="N",
                        help=help)


def with_warnings(json_text: str, loaded, command: str = "check") -> str:
    """A JSON object printed by a command, with the input's ``warnings`` and the
    contract's ``schema_version`` and ``command`` (docs/json.md)."""
    import json

    from symreach.report.schema import document

    data = json.loads(json_text)
    if isinstance(data, dict):
        data["warnings"] = warnings_json(loaded)
        return json.dumps(document(command, data), default=str)
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
    """``--memory MB``: the address-space limit of the process doing the work
    (``--memory-mb`` is a hidden alias, the spelling ``bench`` used)."""
    func = click.option("--memory-mb", "memory", type=click.IntRange(min=64), default=None, hidden=True,
                        help="Same as --memory.")(func)
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


# ---- output formats ----------------------------------------------------------------------------

FORMATS = ("text", "wide", "json", "yaml", "csv")
FORMAT_META = "symreach.format"


def current_format() -> str:
    """The ``-o`` of the running command (``text`` before it is parsed)."""
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if FORMAT_META in ctx.meta:
            return ctx.meta[FORMAT_META]
        ctx = ctx.parent
    return "text"


def format_options(formats: tuple[str, ...] = FORMATS, legacy_format: bool = False, json_alias: bool = True):
    """``-o/--output FORMAT`` (kubectl's), with the former ``--json`` flag (and
    ``matrix``'s ``--format``) kept as hidden aliases; the command gets ``fmt``.
    ``json_alias=False``: the command's former ``--json`` named a file (bench)."""
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            fmt = kwargs.pop("output")
            legacy = kwargs.pop("legacy_format", None)
            if kwargs.pop("as_json", False):
                fmt = fmt or "json"
            fmt = fmt or legacy or "text"
            click.get_current_context().meta[FORMAT_META] = fmt
            kwargs["fmt"] = fmt
            return func(*args, **kwargs)

        options = [click.option("-o", "--output", type=click.Choice(formats), default=None,
                                help=f"Output format (default text): {', '.join(formats)}.")]
        if json_alias:
            options.append(click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as -o json."))
        if legacy_format:
            options.append(click.option("--format", "legacy_format", type=click.Choice(formats),
                                        default=None, hidden=True, help="Same as -o."))
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper
    return decorate
