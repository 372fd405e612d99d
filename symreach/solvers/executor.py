"""Where independent tasks run: in this process, or on a Dask distributed cluster.

The matrix (one task per pod type) and ``symreach bench`` (one task per job)
are bags of independent calls ``fn(shared, item, **options)``. An executor
runs them and yields the results *as they complete*, so callers stream
progress and assemble the same output whatever the order.

Each executor says how many tasks run at once (``slots``); the matrix groups
its pod types into tasks by estimated cost for that many
(``symreach.solvers.chunks``), so a round trip to a worker is paid per chunk,
not per type.

``LocalExecutor`` calls them one after the other here; ``ProcessExecutor``
on forked processes of this machine (the baseline for Dask). ``DaskExecutor``
submits each call as a task of ``dask.distributed`` (an optional dependency,
``pip install 'symreach[distributed]'``): to the scheduler at ``address``
(``tcp://host:8786``, started with ``dask scheduler``; workers with
``dask worker tcp://host:8786``), or, without an address, to a
``LocalCluster`` of ``workers`` single-threaded worker processes, each with
``memory_limit`` (a Dask memory string such as ``"2GB"``; a worker over it
is restarted by its nanny, and the task fails instead of being retried).
``shared`` (the instance) reaches every worker once, as a worker plugin the
scheduler also gives to workers that join later (``dask_shared``), and
workers are long-lived processes that import the engines when the executor
connects (``warm_up``), so a task starts no process and ships no model. A
task that fails is not silently dropped: ``on_error(item, message)`` turns it
into a result (the matrix marks the type's cells ``unknown``) or, without it,
the error is raised; so do the tasks left when every worker or the scheduler
is lost (``DaskExecutor``).

Workers import ``symreach`` themselves: it must be installed (the same
version) on every worker machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Protocol

Task = Callable[..., Any]
OnError = Callable[[Any, str], Any]


class Executor(Protocol):
    name: str
    slots: int   # tasks that run at the same time (the matrix sizes its chunks by it)

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]: ...


class LocalExecutor:
    """Every task in this process, in order."""

    name = "local"
    slots = 1

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]:
        for item in items:
            yield fn(shared, item, **options)


_SHARED: Any = None


def _set_shared(shared: Any) -> None:
    global _SHARED
    _SHARED = shared


def _call_shared(fn: Task, item: Any, options: dict[str, Any]) -> Any:
    return fn(_SHARED, item, **options)


class ProcessExecutor:
    """Tasks on ``processes`` forked worker processes of this machine.

    ``shared`` reaches each worker once, by ``fork`` (nothing is pickled but
    items and results). The baseline a Dask cluster of as many workers is
    compared with (``benchmarks/symmetry_matrix.py``); not offered on the
    command line, where the supervisor owns the process tree.
    """

    name = "processes"

    def __init__(self, processes: int = 2) -> None:
        self.slots = processes

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(self.slots, mp_context=context, initializer=_set_shared,
                                 initargs=(shared,)) as pool:
            futures = {pool.submit(_call_shared, fn, item, options): item for item in items}
            for fut in as_completed(futures):
                exc = fut.exception()
                if exc is None:
                    yield fut.result()
                elif on_error is None:
                    raise RuntimeError(f"task {futures[fut]!r} failed: {exc}") from exc
                else:
                    yield on_error(futures[fut], f"{type(exc).__name__}: {exc}")


class DaskUnavailable(RuntimeError):
    """``--executor dask`` without ``dask.distributed`` installed."""


class SchedulerUnreachable(RuntimeError):
    """The scheduler address is malformed or nothing answers there in time."""


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


CONNECT_S = 5.0         # connecting to --scheduler, at most (and at most the run's time left):
                        # with the start-up, an unreachable address is reported within 10 s
WORKERLESS_S = 10.0     # no worker at all for this long: the tasks left are given up
POLL_S = 0.5            # how often the result loop looks at the cluster
FETCH_S = 10.0          # fetching one result from a worker, at most
REFETCH_S = 0.5         # a result whose worker died before it was fetched: asked again after this
REFETCHES = 20          # (the scheduler computes it again) at most this many times
DEADLINE_MARGIN_S = 0.25  # tasks still out this close to --timeout are given up

def _quiet_distributed() -> None:
    """The client side logs lost connections with tracebacks; the executor
    reports them itself, in one line (the cells' reason)."""
    import logging

    for name in ("distributed", "distributed.client", "distributed.core", "distributed.comm",
                 "distributed.batched", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


class DaskExecutor:
    """Tasks on a Dask cluster: ``address`` of a running scheduler, or a LocalCluster.

    Faults: a worker lost while a task runs on it is the scheduler's to retry
    (``distributed.scheduler.allowed-failures``; the shared object is on every
    worker, see ``symreach.solvers.dask_shared``). With no worker at all for
    ``WORKERLESS_S`` seconds, or the scheduler gone, the tasks not done are
    reported through ``on_error`` (their cells are ``unknown`` with that reason).
    """

    name = "dask"

    def __init__(self, address: Optional[str] = None, workers: int = 2,
                 memory_limit: Optional[str] = None, connect_s: Optional[float] = None,
                 workerless_s: Optional[float] = None) -> None:
        if not dask_available():
            raise DaskUnavailable("the dask executor needs dask.distributed: "
                                  "pip install 'symreach[distributed]'")
        self.address = address
        self.workers = workers
        self.memory_limit = memory_limit
        self.connect_s = CONNECT_S if connect_s is None else connect_s
        self.workerless_s = WORKERLESS_S if workerless_s is None else workerless_s
        self._client = None
        self._cluster = None

    def __enter__(self) -> "DaskExecutor":
        self.client()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def client(self):
        if self._client is None:
            import logging

            import dask
            from distributed import Client, LocalCluster

            _quiet_distributed()
            # The workers' statistical profiler (a stack sample every 10 ms)
            # only feeds the dashboard; it cost 2% of a core per idle worker.
            dask.config.set({"distributed.worker.profile.enabled": False})
            if self.address is not None:
                self._client = self._connect(Client)
            else:
                # A task that kills its worker (memory) fails at once instead of
                # being retried on the next worker.
                dask.config.set({"distributed.scheduler.allowed-failures": 0})
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                             processes=True, dashboard_address=":0", silence_logs=logging.ERROR,
                                             memory_limit=self.memory_limit or "auto")
                self._client = Client(self._cluster)
            # Import the engines on every worker now, not inside the first task:
            # a few seconds per worker process that would otherwise stall the
            # first chunk on each of them.
            try:
                self._client.run(warm_up)
            except Exception:  # a worker lost meanwhile: the others, or later ones, will do
                pass
        return self._client

    def _connect(self, client_class):
        from symreach.run import RunContext

        left = RunContext.for_process().remaining()
        timeout = self.connect_s if left is None else max(0.5, min(self.connect_s, left))
        try:
            return client_class(self.address, timeout=timeout)
        except (ValueError, TypeError) as exc:
            what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SchedulerUnreachable(f"malformed Dask scheduler address {self.address!r}: {what}") from None
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(f"no Dask scheduler answered at {self.address!r} within "
                                       f"{timeout:.1f} s ({type(exc).__name__})") from None

    @property
    def slots(self) -> int:
        """Worker threads of the cluster now (at least 1)."""
        try:
            return max(1, sum(self.client().nthreads().values()))
        except SchedulerUnreachable:
            raise
        except Exception:  # the scheduler went away: map reports it per task
            return 1

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close(timeout=2)
            except Exception:  # the scheduler is gone already
                pass
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def share(self, payload: bytes, build: Optional[Callable[[bytes], Any]] = None) -> "OnWorkers":
        """``build(payload)`` (default: unpickle) made on every worker, now and as workers
        join, until ``unshare`` (``dask_shared``)."""
        import uuid

        from symreach.solvers.dask_shared import SharedPayload

        key = f"symreach-shared-{uuid.uuid4().hex}"
        plugin = SharedPayload(key, payload) if build is None else SharedPayload(key, payload, build)
        self.client().register_plugin(plugin, name=key)
        return OnWorkers(key)

    def unshare(self, on: "OnWorkers") -> None:
        client = self.client()
        if client.status != "running":   # the scheduler is gone, and the plugin with it
            return                       # (asking would wait seconds for it)
        try:
            client.unregister_worker_plugin(on.key)
        except Exception:  # it went meanwhile
            pass

    def submit(self, fn: Task, on: "OnWorkers", item: Any, options: dict[str, Any]):
        """One task ``fn(shared object, item, **options)`` now; its future (see ``results``)."""
        from symreach.solvers.dask_shared import call_keyed

        return self.client().submit(call_keyed, fn, on.key, item, options, pure=False)

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]:
        """``shared``: the object itself (pickled once, shipped to every worker for this
        map) or ``OnWorkers`` (already there, see ``share``)."""
        import pickle

        client = self.client()
        futures: dict[Any, Any] = {}
        items = list(items)
        own = None
        try:
            if isinstance(shared, OnWorkers):
                on = shared
            else:
                on = own = self.share(pickle.dumps(shared, pickle.HIGHEST_PROTOCOL))
            for item in items:
                futures[self.submit(fn, on, item, options)] = item
        except Exception as exc:   # the scheduler is gone before every task was submitted
            message = _lost_scheduler(exc)
            done = set(futures.values())
            for item in items:
                if item not in done:
                    yield _failed(item, message, on_error)
            if not futures:
                return
        try:
            yield from self.results(futures, on_error)
        finally:
            try:   # the caller stopped early (check's race): the tasks still out are not wanted
                client.cancel([fut for fut in futures if not fut.done()])
            except Exception:
                pass
            if own is not None:
                self.unshare(own)

    def results(self, futures: dict[Any, Any], on_error: Optional[OnError]) -> Iterator[Any]:
        """Results of ``futures`` (future -> item) as tasks finish; tasks the cluster can
        no longer run, through ``on_error`` (a worker lost: retried; every worker or the
        scheduler lost, or the time limit: given up)."""
        import time

        from distributed import wait

        from symreach.run import RunContext

        client = self.client()
        pending = set(futures)
        # computed, but the fetch failed (its worker died): once the scheduler
        # has noticed, the future is pending again and the task runs again
        doubtful: dict[Any, float] = {}
        fetches: dict[Any, int] = {}
        workerless_since: Optional[float] = None
        while pending or doubtful:
            now = time.monotonic()
            for fut, since in list(doubtful.items()):
                if fut.status not in ("finished", "lost") or now - since > REFETCH_S:
                    del doubtful[fut]
                    pending.add(fut)
            remaining = RunContext.for_process().remaining()
            poll = POLL_S if remaining is None else max(0.05, min(POLL_S, remaining - DEADLINE_MARGIN_S))
            try:
                if pending:
                    done, pending = wait(pending, timeout=poll, return_when="FIRST_COMPLETED")
                else:
                    done = set()
                    time.sleep(poll)
            except TimeoutError:
                done = set()
            except Exception as exc:   # the client lost the scheduler
                yield from _give_up(futures, pending | set(doubtful), _lost_scheduler(exc), on_error)
                return
            for fut in done:
                item = futures[fut]
                if fut.status == "finished":
                    try:
                        result = fut.result(timeout=FETCH_S)
                    except Exception as exc:
                        fetches[fut] = fetches.get(fut, 0) + 1
                        if fetches[fut] <= REFETCHES and client.status == "running":
                            doubtful[fut] = time.monotonic()
                            continue
                        message = f"{type(exc).__name__}: {exc}"
                    else:
                        yield result
                        continue
                elif fut.status in ("error", "cancelled"):
                    message = _task_error(fut)
                else:   # "lost": its result went with a worker; the scheduler runs it again
                    doubtful[fut] = time.monotonic()
                    continue
                if client.status != "running":
                    message = "the Dask scheduler was lost"
                yield _failed(item, message, on_error)
            if not (pending or doubtful):
                return
            left = pending | set(doubtful)
            remaining = RunContext.for_process().remaining()
            if remaining is not None and remaining <= DEADLINE_MARGIN_S:
                # print what is done before the supervisor's backstop
                yield from _give_up(futures, left, "timeout: the time limit was reached", on_error)
                return
            if client.status != "running":
                yield from _give_up(futures, left, "the Dask scheduler was lost", on_error)
                return
            try:
                workers = len(client.nthreads())
            except Exception as exc:
                yield from _give_up(futures, left, _lost_scheduler(exc), on_error)
                return
            now = time.monotonic()
            if workers:
                workerless_since = None
            elif workerless_since is None:
                workerless_since = now
            elif now - workerless_since >= self.workerless_s:
                yield from _give_up(futures, left, f"every Dask worker was lost (none for "
                                    f"{self.workerless_s:g} s)", on_error)
                return


@dataclass(frozen=True)
class OnWorkers:
    """An object already on every worker of a ``DaskExecutor`` (``share``), by its plugin's key."""

    key: str


FAULTS = ("the Dask scheduler was lost", "every Dask worker was lost", "timeout: ")


def cluster_fault(message: str) -> bool:
    """Whether ``message`` (an ``on_error`` reason) is the cluster's loss or the time limit,
    not an error of the task itself."""
    return message.startswith(FAULTS)


def _lost_scheduler(exc: BaseException) -> str:
    return f"the Dask scheduler was lost ({type(exc).__name__})"


def _task_error(fut) -> str:
    try:
        exc = fut.exception(timeout=1)
        return f"{type(exc).__name__}: {exc}"
    except Exception as err:  # the future itself could not report
        return f"{type(err).__name__}: {err}"


def _failed(item: Any, message: str, on_error: Optional[OnError]) -> Any:
    if on_error is None:
        raise RuntimeError(f"task {item!r} failed on the cluster: {message}")
    return on_error(item, message)


def _give_up(futures: dict[Any, Any], pending: set, message: str,
             on_error: Optional[OnError]) -> Iterator[Any]:
    """Every task not done becomes ``on_error(item, message)``; the futures are cancelled."""
    for fut in pending:
        try:
            fut.cancel()
        except Exception:
            pass
    for fut in sorted(pending, key=lambda f: str(f.key)):
        yield _failed(futures[fut], message, on_error)


def warm_up() -> None:
    """Load what a matrix or bench task imports (run once on every worker)."""
    import symreach.solvers.bdd  # noqa: F401
    import symreach.solvers.cells  # noqa: F401
    import symreach.solvers.registry  # noqa: F401


def make_executor(name: str, address: Optional[str] = None, workers: int = 2,
                  memory_limit: Optional[str] = None) -> Executor:
    """``local`` or ``dask``; ``address`` only makes sense with ``dask``."""
    if name == "local":
        if address is not None:
            raise ValueError("a scheduler address needs the dask executor")
        return LocalExecutor()
    if name == "dask":
        return DaskExecutor(address, workers, memory_limit)
    raise ValueError(f"unknown executor {name!r}; choose local or dask")
