"""``symreach`` as a user runs it, with the times of the client's milestones written to a file.

    python -m benchmarks.dask_trace TRACE.jsonl matrix FILE ... (the command line's arguments)

For ``benchmarks.dask_end_to_end``'s critical-path breakdown: each process of
the command (the supervisor and the child that does the work) appends one JSON
line ``{"pid", "events": {name: time.time()}}`` when it exits. Milestones:
``start`` (before symreach is imported), ``shipped`` (the input's text sent to
the Dask workers), ``loaded`` (the instance, or with ``-o csv`` the workers'
outline, is here), ``first_rows`` / ``last_rows`` (the first and last results
put into the output), ``exit``. Wrapping costs a few function calls.
"""

from __future__ import annotations

import time

START = time.time()

import functools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402
from typing import Any, Callable  # noqa: E402

EVENTS: dict[str, float] = {"start": START}


def _after(owner: Any, name: str, event: str) -> None:
    """``event`` stamped each time ``owner.name`` returns (the last call's time is kept)."""
    real = getattr(owner, name)

    @functools.wraps(real)
    def stamped(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        EVENTS[event] = time.time()
        return out
    setattr(owner, name, stamped)


def _rows(owner: Any) -> None:
    real: Callable[..., Any] = owner.types_done

    @functools.wraps(real)
    def stamped(self: Any, types: list[int]) -> None:
        real(self, types)
        EVENTS.setdefault("first_rows", time.time())
        EVENTS["last_rows"] = time.time()
    owner.types_done = stamped


def _dump(path: str) -> None:
    EVENTS["exit"] = time.time()
    with open(path, "a") as fh:
        fh.write(json.dumps({"pid": os.getpid(), "events": EVENTS}) + "\n")


def main() -> None:
    path = sys.argv[1]
    from symreach.cli import matrix
    from symreach.solvers import dask_source, matrix_stream

    _after(dask_source.WorkerLoaded, "ship_sources", "shipped")
    _after(matrix, "outline_from_workers", "loaded")
    _after(matrix, "load_inputs_from_options", "loaded")
    _rows(matrix_stream.RowStream)
    real_exit = os._exit

    def exiting(code: int) -> None:   # the supervised child ends with os._exit
        _dump(path)
        real_exit(code)
    os._exit = exiting  # type: ignore[assignment]
    sys.argv = ["symreach"] + sys.argv[2:]
    try:
        runpy.run_module("symreach", run_name="__main__")
    finally:
        _dump(path)


if __name__ == "__main__":
    main()
