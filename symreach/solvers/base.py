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
    has passed, or the run in this thread was cancelled.

    Engines call this wherever they check their deadline, between steps. When
    the thread takes turns with other workers (``take_turns``: ``auto``'s
    resident engine runs in a thread of its process, ``workers.Gate``), this
    is also where it waits while its core belongs to another worker, and
    where it learns that another engine answered."""
    turns = getattr(_thread_state, "turns", None)
    if turns is not None and turns.pause():
        return True
    return deadline is not None and time.perf_counter() > deadline


def take_turns(turns: Optional[Any]) -> None:
    """Run the calling thread's engine under ``turns`` (an object whose
    ``pause()`` waits for the thread's turn and returns True once the run is
    cancelled: ``symreach.solvers.workers.Gate``; None: alone again)."""
    _thread_state.turns = turns


class Engine(Protocol):
    """``check`` decides whether ``query`` (default: the instance's) can be covered."""

    name: str

    def check(self, instance: Instance, query: Optional[Query] = None,
              limits: Limits = Limits()) -> Result: ...
