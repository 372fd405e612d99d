"""The engine interface every solver implements, and the limits it honours."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol

from symreach.model import Instance, Query
from symreach.result import Result


@dataclass(frozen=True)
class Limits:
    """Resource limits; reaching one yields an ``unknown`` verdict, never a crash.

    ``counters`` ("auto", "on", "off") lets the BDD engine use the counter
    abstraction of interchangeable nodes (``symreach.encodings.counters``).

    ``progress``, when set, is called by engines from their main loops as
    ``progress(engine_name, **counters)`` (see ``symreach.report.progress``).
    """

    timeout_s: Optional[float] = None
    max_states: Optional[int] = None
    max_depth: Optional[int] = None
    counters: str = "auto"
    progress: Optional[Callable[..., None]] = field(default=None, compare=False)
    # the prologue another engine already ran on this instance and query
    # (``fast_paths.Prepared``): ``auto`` preprocesses once, before its workers fork
    prepared: Optional[Any] = field(default=None, compare=False, repr=False)

    def report(self, engine: str, **counters) -> None:
        if self.progress is not None:
            self.progress(engine, **counters)


_thread_state = threading.local()


def past(deadline: Optional[float]) -> bool:
    """Whether an engine must stop now: its ``deadline`` (``time.perf_counter``)
    has passed, or the run in this thread was cancelled (``cancel_on``).

    Engines call this wherever they check their deadline. Cancellation is per
    thread because ``auto`` runs several engines side by side in threads of one
    process (``portfolio.AutoEngine._pilot``): once one answers, the others
    must stop at their next check instead of running on to their deadline."""
    if deadline is not None and time.perf_counter() > deadline:
        return True
    event = getattr(_thread_state, "cancel", None)
    return event is not None and event.is_set()


def cancel_on(event: Optional[threading.Event]) -> None:
    """Make ``past`` true in the calling thread once ``event`` is set (None: never)."""
    _thread_state.cancel = event


class Engine(Protocol):
    """``check`` decides whether ``query`` (default: the instance's) can be covered."""

    name: str

    def check(self, instance: Instance, query: Optional[Query] = None,
              limits: Limits = Limits()) -> Result: ...
