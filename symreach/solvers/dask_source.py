"""The matrix on a Dask cluster whose workers read the input and plan the tasks themselves.

Shipping the loaded instance costs the client what the workers could do in
parallel with it: pickling it (about a second for 2,000 x 1,000), after
loading it, before any worker starts. Here the client ships the inputs' text
as soon as it is read (``ship_sources``, the loader's ``on_sources`` hook;
the workers load it with the command line's loader, ``load``):
every worker parses it (a worker plugin: workers that join later, or replace
lost ones, get it too, ``dask_shared``) while the client parses its own copy
for the output, and one worker plans the chunks (``chunks.matrix_chunks``)
meanwhile. The client checks that the workers loaded the same instance (a
fingerprint of names and initial pods) before it trusts their plan; when they
did not, or the plan failed, it plans and ships the instance itself as
before. When the cluster was lost meanwhile (scheduler, every worker, the
time limit) every task reports that reason.
"""

from __future__ import annotations

import hashlib
import pickle
from typing import Any, Callable, Iterable, Iterator, Optional

from symreach.model import Instance
from symreach.solvers.chunks import matrix_chunks
from symreach.solvers.executor import DaskExecutor, OnError, OnWorkers, Task, cluster_fault


def fingerprint(inst: Instance) -> str:
    """What a worker's instance must share with the client's (names, initial pods, profile)."""
    h = hashlib.sha256()
    for part in ([t.name for t in inst.pod_types], [n.name for n in inst.nodes], sorted(inst.initial.items()),
                 inst.profile, len(inst.bindings), len(inst.groups)):
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def plan_on_worker(inst: Instance, slots: int) -> tuple[str, list[tuple[int, ...]]]:
    """A task: the worker's instance's fingerprint and its chunks for ``slots`` workers."""
    return fingerprint(inst), matrix_chunks(inst, slots)


class WorkerLoaded:
    """A ``DaskExecutor`` whose workers load the input themselves (``ship_sources``).

    ``plan(instance)`` gives the matrix's chunks (the workers' plan once its
    fingerprint matches ``instance``); ``map`` then runs tasks on the workers'
    own instance, or ships ``shared`` itself when they have none.
    """

    name = "dask"

    def __init__(self, executor: DaskExecutor, load: Callable[[bytes], Instance],
                 namespace: str = "default") -> None:
        self.executor = executor
        self.load = load             # on a worker: pickled (sources, namespace) -> the instance
        self.namespace = namespace   # of Kubernetes objects that name none (the loader's)
        self.slots = executor.slots
        self.on: Optional[OnWorkers] = None
        self.plan_future: Any = None
        self.fault: Optional[str] = None      # the cluster was lost: every task reports it
        self.remote = False                   # the workers' instance is the client's

    def ship_sources(self, sources: list) -> None:
        """The loader's ``on_sources``: ship the text, have one worker plan."""
        try:
            self.on = self.executor.share(pickle.dumps((sources, self.namespace), pickle.HIGHEST_PROTOCOL),
                                          self.load)
            self.plan_future = self.executor.submit(plan_on_worker, self.on, self.slots, {})
        except Exception as exc:  # the scheduler went away since the executor connected
            self.fault = f"the Dask scheduler was lost ({type(exc).__name__})"

    def plan(self, instance: Instance) -> list[tuple[int, ...]]:
        if self.plan_future is None or self.fault is not None:
            return matrix_chunks(instance, self.slots)
        outcome: Any = None
        for outcome in self.executor.results({self.plan_future: "plan"}, on_error=lambda _, message: message):
            pass
        if isinstance(outcome, str):
            if cluster_fault(outcome):
                self.fault = outcome
            return matrix_chunks(instance, self.slots)
        mark, chunks = outcome
        self.remote = mark == fingerprint(instance)
        return chunks if self.remote else matrix_chunks(instance, self.slots)

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]:
        if self.fault is not None:
            for item in items:
                if on_error is None:
                    raise RuntimeError(f"task {item!r} failed on the cluster: {self.fault}")
                yield on_error(item, self.fault)
            return
        yield from self.executor.map(fn, self.on if self.remote else shared, items, options, on_error)

    def close(self) -> None:
        """The shipped input leaves the workers (the executor itself is closed by its owner)."""
        if self.on is not None:
            self.executor.unshare(self.on)
            self.on = None
