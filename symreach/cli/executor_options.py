"""``--executor local|dask`` and ``--scheduler ADDRESS``, shared by ``matrix`` and ``bench``.

The options only choose where independent tasks run
(``symreach.solvers.executor``); the commands' output does not depend on it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import click

from symreach.report.progress import make_progress
from symreach.errors import InputError

if TYPE_CHECKING:
    from symreach.solvers.executor import Executor


def executor_options(fn: Callable) -> Callable:
    options = [
        click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
                     show_default=True,
                     help="Where the independent tasks run: here, or on a Dask cluster."),
        click.option("--scheduler", metavar="ADDRESS", default=None,
                     help="Dask scheduler address (tcp://host:8786) for --executor dask; "
                          "without it a LocalCluster is started here."),
        click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
                     help="Worker processes of the LocalCluster (--executor dask, no --scheduler)."),
        click.option("--worker-memory", metavar="SIZE", default=None,
                     help="Memory limit per LocalCluster worker, e.g. 2GB (a task over it fails)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@contextlib.contextmanager
def executor_from_options(name: str, scheduler: Optional[str], workers: int,
                          worker_memory: Optional[str]) -> Iterator[Executor]:
    # imported on use: ``check`` takes these options but runs locally unless told otherwise (start-up)
    from symreach.solvers.executor import DaskUnavailable, SchedulerUnreachable, make_executor

    if scheduler is not None and name != "dask":
        raise click.UsageError("--scheduler needs --executor dask")
    try:
        executor = make_executor(name, scheduler, workers, worker_memory)
    except DaskUnavailable as exc:
        raise click.UsageError(f"--executor dask: {exc}") from None
    try:
        if scheduler is not None:
            # Connect now: an unreachable or malformed address is the user's
            # to fix (exit 2, one line), within --timeout or CONNECT_S.
            executor.client()
        yield executor
    except SchedulerUnreachable as exc:
        raise InputError(str(exc), field_path="--scheduler") from None
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()


def workers_loading(name: str, scheduler: Optional[str], workers: int, worker_memory: Optional[str],
                    namespace: Optional[str]):
    """``--executor dask`` for the matrix: the executor opened now, closed with the command, so
    that the workers parse the input while this process does (``dask_source.WorkerLoaded``;
    its ``ship_sources`` is the loader's ``on_sources``). None for the local executor."""
    if name != "dask":
        return None
    from functools import partial

    from symreach.cli.options import current_budget
    from symreach.frontends import zoneinfo_db
    from symreach.solvers.dask_source import WorkerLoaded

    ctx = click.get_current_context()
    loaded = WorkerLoaded(ctx.with_resource(executor_from_options(name, scheduler, workers, worker_memory)),
                          partial(load_shipped_sources, zoneinfo_db.current(), budget=current_budget()),
                          namespace or "default")
    ctx.call_on_close(loaded.close)   # before the executor's own close (last in, first out)
    return loaded


def outline_from_workers(inputs, max_input_mb: int, opened):
    """``--executor dask`` when the output needs only names: the inputs read and shipped, the
    workers load, check and plan them (``WorkerLoaded.outline``), this process parses nothing.
    Raises their ``InputError``; None when the cluster gave no outline (load here then)."""
    from symreach.cli.options import MIB, loading_context
    from symreach.frontends.dispatch import read_sources
    from symreach.loader.yaml_source import InputTooLarge
    from symreach.report.progress import loading

    try:
        with loading(", ".join(inputs)):
            opened.ship_sources(read_sources(list(inputs), max_bytes=max_input_mb * MIB, run=loading_context()))
            # What the tasks and the output need, imported while the workers parse (after
            # the outline it would hold back the first task: the BDD engine's modules, tenths of a second).
            import symreach.solvers.matrix_stream  # noqa: F401
            return opened.outline()
    except InputTooLarge as err:
        raise InputError(f"{err.problem}; raise it with --max-input-mb", err.filename) from None


def load_shipped_sources(zoneinfo, payload: bytes, budget=None):
    """On a Dask worker: the pickled ``(sources, namespace)`` loaded as here, with what the
    client prints of it (``InputSummary``), or the ``InputError`` that refused it. ``zoneinfo``:
    the client's tz database (``zoneinfo_db.Database``), read at the same path on the worker;
    ``budget``: the command's ``--search-budget``."""
    import pickle

    from symreach.cli.options import with_option_names
    from symreach.frontends import zoneinfo_db
    from symreach.frontends.dispatch import load_sources

    zoneinfo_db.use(zoneinfo)
    from symreach.report.caveats import type_caveats
    from symreach.report.warnings import warning_groups
    from symreach.solvers.dask_source import Shipped

    sources, namespace = pickle.loads(payload)
    try:
        loaded = load_sources(sources, namespace, budget=budget)
    except InputError as exc:
        return Shipped(None, error=exc)
    with_option_names(loaded.report)
    return Shipped(loaded.instance, InputSummary(warning_groups(loaded.report),
                                                 type_caveats(loaded.report, loaded.instance)))


@dataclass(frozen=True)
class InputSummary:
    """What ``matrix`` prints of its input beyond names, made by the worker that loaded it."""

    warnings: list          # report.warnings.WarningGroup
    caveats: dict           # pod type index -> its caveats (report.caveats.type_caveats)


def task_progress(command: str, unit: str) -> Optional[Callable[[int, int], None]]:
    """``progress(done, total)`` on stderr when it is a terminal, else None."""
    line = make_progress(quiet=False)
    if line is None:
        return None

    def report(done: int, total: int) -> None:
        line(command, **{unit.replace(" ", "_"): f"{done}/{total}"})
        if done == total:
            line.close()

    return report
