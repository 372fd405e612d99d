"""The object every task of a Dask map reads (the instance), on every worker.

Scattering it (``client.scatter(broadcast=True)``) makes it a piece of data
the scheduler tracks: when a worker dies while it is being copied, the
scheduler may declare it lost and every task that needs it fails. Here it is
the payload of a worker plugin instead: the scheduler keeps the plugin and
runs ``setup`` on every worker, including each one that joins later, so a
task that the scheduler retries on another worker finds it there, and a
worker started after the loss of all the others gets it too.

The payload is bytes and a module-level ``build`` that makes the object of
them (``pickle.loads``, or for ``matrix`` the input files' text parsed by
the worker itself, ``dask_source``). ``setup`` starts the build on a thread
and returns (the scheduler waits for every worker's ``setup``), so workers
build while the client goes on (loading the same input for its own output);
a task waits for the build on its worker. Imported only with
``dask.distributed`` (an optional dependency), on the client and the workers
alike.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any, Callable, Optional

from distributed import WorkerPlugin

Build = Callable[[bytes], Any]


class _Built:
    """``build(payload)`` computed on a thread; ``get`` waits for it (or raises its error)."""

    def __init__(self, build: Build, payload: bytes) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None
        threading.Thread(target=self._run, args=(build, payload), daemon=True,
                         name="symreach-shared-build").start()

    def _run(self, build: Build, payload: bytes) -> None:
        try:
            self.value = build(payload)
        except BaseException as exc:  # re-raised in every task that needs it
            self.error = exc
        finally:
            self.done.set()

    def get(self) -> Any:
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value


_BUILT: dict[str, _Built] = {}


class SharedPayload(WorkerPlugin):
    """``build(payload)`` stored under ``key`` on the worker."""

    def __init__(self, key: str, payload: bytes, build: Build = pickle.loads) -> None:
        self.key = key
        self.payload = payload
        self.build = build

    def setup(self, worker: Any) -> None:
        _BUILT[self.key] = _Built(self.build, self.payload)

    def teardown(self, worker: Any) -> None:
        _BUILT.pop(self.key, None)


def shared(key: str) -> Any:
    """The shared object ``key`` on this worker (waits while it is being built)."""
    return _BUILT[key].get()


def call_keyed(fn: Callable[..., Any], key: str, item: Any, options: dict[str, Any]) -> Any:
    """One task: ``fn(shared object, item, **options)``."""
    return fn(shared(key), item, **options)
