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
``shared`` (the instance) is scattered to every worker once, and workers
are long-lived processes that import the engines when the executor connects
(``warm_up``), so a task starts no process and ships no model. A task that
fails is not silently dropped: ``on_error(item, message)`` turns it into a
result (the matrix marks the type's cells ``unknown``) or, without it, the
error is raised.

Workers import ``symreach`` themselves: it must be installed (the same
version) on every worker machine.
"""

from __future__ import annotations

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


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


class DaskExecutor:
    """Tasks on a Dask cluster: ``address`` of a running scheduler, or a LocalCluster."""

    name = "dask"

    def __init__(self, address: Optional[str] = None, workers: int = 2,
                 memory_limit: Optional[str] = None) -> None:
        if not dask_available():
            raise DaskUnavailable("the dask executor needs dask.distributed: "
                                  "pip install 'symreach[distributed]'")
        self.address = address
        self.workers = workers
        self.memory_limit = memory_limit
        self._client = None
        self._cluster = None

    def __enter__(self) -> "DaskExecutor":
        self.client()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def client(self):
        if self._client is None:
            import dask
            from distributed import Client, LocalCluster

            if self.address is not None:
                self._client = Client(self.address)
            else:
                # A task that kills its worker (memory) fails at once instead of
                # being retried on the next worker.
                dask.config.set({"distributed.scheduler.allowed-failures": 0})
                # The workers' statistical profiler (a stack sample every 10 ms)
                # only feeds the dashboard; it cost 2% of a core per idle worker.
                dask.config.set({"distributed.worker.profile.enabled": False})
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                             processes=True, dashboard_address=":0",
                                             memory_limit=self.memory_limit or "auto")
                self._client = Client(self._cluster)
            # Import the engines on every worker now, not inside the first task:
            # a few seconds per worker process that would otherwise stall the
            # first chunk on each of them.
            self._client.run(warm_up)
        return self._client

    @property
    def slots(self) -> int:
        """Worker threads of the cluster now (at least 1)."""
        return max(1, sum(self.client().nthreads().values()))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]:
        from distributed import as_completed

        client = self.client()
        # hash=False: a fresh key per call. With content hashing, a second map
        # over equal data can reuse a key the scheduler is just releasing, and
        # its tasks then wait forever for the lost dependency.
        shared_future = client.scatter(shared, broadcast=True, hash=False)
        futures = {}
        for item in items:
            fut = client.submit(fn, shared_future, item, pure=False, **options)
            futures[fut] = item
        for fut in as_completed(list(futures)):
            item = futures.pop(fut)
            if fut.status == "finished":
                yield fut.result()
                continue
            try:
                exc = fut.exception()
                message = f"{type(exc).__name__}: {exc}"
            except Exception as err:  # the future itself could not report
                message = f"{type(err).__name__}: {err}"
            if on_error is None:
                raise RuntimeError(f"task {item!r} failed on the cluster: {message}")
            yield on_error(item, message)


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
