"""The exceptions every stage may raise, with user-facing messages.

Front ends raise only ``InputError`` for bad input so that the command line can
print one line and exit with status 2, whatever the cause.

``LimitReached`` means a time or memory limit stopped the run (exit 3,
``unknown``). The process's deadline is kept here only as the bridge to the
command line's supervisor (``symreach.cli.process`` sets it from
``--timeout``, counted from the start of the process, and tells the
supervisor, the backstop for code that cannot poll: a long call into CUDD or
a SAT solver). The phases poll the run's ``symreach.run.RunContext``, which
``RunContext.for_process`` builds from it.
"""

from __future__ import annotations

import time
from typing import Optional


class InputError(Exception):
    """Bad input. ``str(err)`` is ``FILE:LINE: field.path: problem``.

    Parts that are unknown are omitted (no line for JSON given as a dict, no
    file for command-line options). The parts stay available as attributes so
    that callers may re-format them.
    """

    def __init__(
        self,
        problem: str,
        filename: Optional[str] = None,
        line: Optional[int] = None,
        field_path: str = "",
    ) -> None:
        self.problem = problem
        self.filename = filename
        self.line = line
        self.field_path = field_path
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = ""
        if self.filename:
            where = self.filename
            if self.line is not None:
                where += f":{self.line}"
        parts = [p for p in (where, self.field_path) if p]
        return ": ".join(parts + [self.problem])

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        """Pickled with its parts (a Dask worker's error reaches the client as it was raised)."""
        return (type(self), (self.problem, self.filename, self.line, self.field_path))


class LimitReached(Exception):
    """A time or memory limit stopped the run; ``reason`` is user-facing."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


_state: dict[str, Optional[float]] = {"deadline": None, "timeout": None}


def set_deadline(timeout_s: Optional[float], start: Optional[float] = None) -> None:
    """Budget ``timeout_s`` seconds from ``start`` (a ``time.monotonic()``
    reading; default now). ``None`` removes the budget."""
    if timeout_s is None:
        _state["deadline"] = _state["timeout"] = None
        return
    _state["deadline"] = (time.monotonic() if start is None else start) + timeout_s
    _state["timeout"] = timeout_s


def clear_deadline() -> None:
    set_deadline(None)


def current_deadline() -> Optional[float]:
    """The absolute ``time.monotonic()`` deadline, or None."""
    return _state["deadline"]
