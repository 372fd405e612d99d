"""The object every task of a Dask map reads (the instance), on every worker.

Scattering it (``client.scatter(broadcast=True)``) makes it a piece of data
the scheduler tracks: when a worker dies while it is being copied, the
scheduler may declare it lost and every task that needs it fails. Here it is
the payload of a worker plugin instead: the scheduler keeps the plugin and
runs ``setup`` on every worker, including each one that joins later, so a
task that the scheduler retries on another worker finds it there, and a
worker started after the loss of all the others gets it too. Imported only
with ``dask.distributed`` (an optional dependency), on the client and the
workers alike.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable

from distributed import WorkerPlugin

_STORE: dict[str, bytes] = {}
_LOADED: dict[str, Any] = {}


class SharedPayload(WorkerPlugin):
    """``payload`` (pickled bytes) stored under ``key`` on the worker."""

    def __init__(self, key: str, payload: bytes) -> None:
        self.key = key
        self.payload = payload

    def setup(self, worker: Any) -> None:
        _STORE[self.key] = self.payload

    def teardown(self, worker: Any) -> None:
        _STORE.pop(self.key, None)
        _LOADED.pop(self.key, None)


def shared(key: str) -> Any:
    """The shared object ``key`` on this worker, unpickled once."""
    obj = _LOADED.get(key)
    if obj is None:
        obj = _LOADED[key] = pickle.loads(_STORE[key])
    return obj


def call_keyed(fn: Callable[..., Any], key: str, item: Any, options: dict[str, Any]) -> Any:
    """One task: ``fn(shared object, item, **options)``."""
    return fn(shared(key), item, **options)
