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

A client whose output needs only the names (``matrix -o csv``) need not parse
at all: ``outline`` waits for the plan, which also carries the pod types' and
nodes' names, the DaemonSets' rows and the loader's summary (its warnings),
or the worker's ``InputError`` (raised here: the user's mistake, exit 2).
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from symreach.errors import InputError
from symreach.model import Instance, daemonset_groups
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


@dataclass(frozen=True)
class Shipped:
    """What a worker made of the shipped input: the instance and the loader's ``summary``
    (what the client prints of it), or the ``error`` that refused it."""

    instance: Optional[Instance]
    summary: Any = None
    error: Optional[Exception] = None


@dataclass(frozen=True)
class Outline:
    """The plan of the workers' instance, with all the client's output needs of it."""

    fingerprint: str
    chunks: list[tuple[int, ...]]
    types: tuple[str, ...]
    nodes: tuple[str, ...]
    groups: dict[str, dict[int, int]]   # model.daemonset_groups
    summary: Any


def plan_on_worker(shipped: Shipped, slots: int) -> Union[Outline, Exception]:
    """A task: the outline of the worker's instance, chunked for ``slots`` workers (or its error)."""
    inst = shipped.instance
    if inst is None:
        return shipped.error or RuntimeError("the shipped input was not loaded")
    return Outline(fingerprint(inst), matrix_chunks(inst, slots), tuple(t.name for t in inst.pod_types),
                   tuple(n.name for n in inst.nodes), daemonset_groups(inst), shipped.summary)


def on_instance(fn: Task, shipped: Shipped, item: Any, **options: Any) -> Any:
    """A task of ``fn`` on the worker's instance."""
    if shipped.instance is None:
        raise shipped.error or RuntimeError("the shipped input was not loaded")
    return fn(shipped.instance, item, **options)


class WorkerLoaded:
    """A ``DaskExecutor`` whose workers load the input themselves (``ship_sources``).

    ``plan(instance)`` gives the matrix's chunks (the workers' plan once its
    fingerprint matches ``instance``); ``map`` then runs tasks on the workers'
    own instance, or ships ``shared`` itself when they have none.
    """

    name = "dask"

    def __init__(self, executor: DaskExecutor, load: Callable[[bytes], Shipped],
                 namespace: str = "default") -> None:
        self.executor = executor
        self.load = load             # on a worker: pickled (sources, namespace) -> Shipped
        self.namespace = namespace   # of Kubernetes objects that name none (the loader's)
        self.slots = executor.slots
        self.on: Optional[OnWorkers] = None
        self.plan_future: Any = None
        self.fault: Optional[str] = None      # the cluster was lost: every task reports it
        self.remote = False                   # the workers' instance is the client's
        self.planned: Any = None              # the plan task's outcome: Outline, error, or fault message

    def ship_sources(self, sources: list) -> None:
        """The loader's ``on_sources``: ship the text, have one worker plan."""
        try:
            self.on = self.executor.share(pickle.dumps((sources, self.namespace), pickle.HIGHEST_PROTOCOL),
                                          self.load)
            self.plan_future = self.executor.submit(plan_on_worker, self.on, self.slots, {})
        except Exception as exc:  # the scheduler went away since the executor connected
            self.fault = f"the Dask scheduler was lost ({type(exc).__name__})"

    def outline(self) -> Optional[Outline]:
        """The workers' outline, for a client that does not load the input itself: their
        plan is then taken as it is. Raises the workers' ``InputError``; None when the
        cluster failed to give one (the client loads the input and plans itself)."""
        outcome = self._planned()
        if isinstance(outcome, Outline):
            self.remote = True
            return outcome
        if isinstance(outcome, InputError):
            raise outcome
        return None

    def plan(self, instance: Optional[Instance]) -> list[tuple[int, ...]]:
        outcome = self._planned()
        if isinstance(outcome, Outline) and (self.remote or outcome.fingerprint == fingerprint(instance)):
            self.remote = True
            return outcome.chunks
        return matrix_chunks(instance, self.slots)

    def _planned(self) -> Any:
        """The plan task's outcome (waited for once): ``Outline``, the workers' error, or
        the cluster's fault (``fault`` set)."""
        if self.planned is None and self.plan_future is not None and self.fault is None:
            for self.planned in self.executor.results({self.plan_future: "plan"},
                                                      on_error=lambda _, message: message):
                pass
            if isinstance(self.planned, str) and cluster_fault(self.planned):
                self.fault = self.planned
        return self.planned

    def map(self, fn: Task, shared: Any, items: Iterable[Any], options: dict[str, Any],
            on_error: Optional[OnError] = None) -> Iterator[Any]:
        if self.fault is not None:
            for item in items:
                if on_error is None:
                    raise RuntimeError(f"task {item!r} failed on the cluster: {self.fault}")
                yield on_error(item, self.fault)
            return
        if self.remote:
            yield from self.executor.map(partial(on_instance, fn), self.on, items, options, on_error)
        else:
            yield from self.executor.map(fn, shared, items, options, on_error)

    def close(self) -> None:
        """The shipped input leaves the workers (the executor itself is closed by its owner)."""
        if self.on is not None:
            self.executor.unshare(self.on)
            self.on = None
