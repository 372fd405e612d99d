"""One run's context: its deadline, cancel token, progress sink, limits and caches.

Every phase that can take long (loading, preprocessing, the engines, witness
minimisation, export, the matrix's cells) receives one ``RunContext`` and polls it:
``past()`` between two steps, ``check(phase)`` where a ``LimitReached`` may
end the phase. There is one clock (``time.monotonic``) and one absolute
deadline; an engine started later in the run sees what is left of it, not a
fresh budget. A worker on another machine gets the deadline as wall-clock
time (``wall_deadline``, ``until_wall``). Phases that grow without bound
also poll the address space (``check_memory``).

The cancel token replaces any per-thread state: ``auto``'s resident engine
runs under a token that also pauses it (``solvers.workers.Gate``), a forked
worker gets a fresh one. ``errors.set_deadline`` stays only as the bridge to
the command line's supervisor (it learns the deadline from there);
``RunContext.for_process`` reads it.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import field, replace
from typing import Callable, Optional, Protocol

from symreach.errors import LimitReached, current_deadline
from symreach.model import Instance, Query
from symreach.records import record

COUNTER_MODES = ("auto", "on", "off")


class Child(Protocol):
    """An engine's external program (``solvers.child.Child``), as its token sees it."""

    def kill(self) -> None: ...

    def stop(self) -> None: ...

    def resume(self) -> None: ...

    def wait(self, timeout_s: Optional[float]) -> bool: ...


class CancelToken:
    """Tells a running phase that its run is over. ``pause`` is where a phase
    learns it (and where a subclass may hold it while its core belongs to
    another worker). An engine waits for its external program (ABC) through
    ``wait_child``, so that a cancel from another thread kills the program."""

    def __init__(self) -> None:
        self._cancelled = False
        self._child: Optional[Child] = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True
        child = self._child
        if child is not None:
            child.kill()

    def pause(self) -> bool:
        """True once the run was cancelled."""
        return self._cancelled

    def wait_child(self, child: Child, timeout_s: Optional[float]) -> bool:
        """Wait until ``child`` ended (True; it is reaped) or ``timeout_s`` passed
        (False); killed at once when the run is (or gets) cancelled."""
        self._child = child
        try:
            if self._cancelled:  # cancelled before it was known here
                child.kill()
            return child.wait(timeout_s)
        finally:
            self._child = None


class Prepared(Protocol):
    """A prologue another engine already ran (``solvers.fast_paths.Prologue``):
    ``auto`` preprocesses once and hands it to its workers."""

    def matches(self, instance: Instance, query: Query) -> bool: ...


@record
class RunContext:
    """What every phase of one run shares (module docstring).

    ``deadline`` is a ``time.monotonic()`` reading (None: no time limit);
    ``timeout_s`` the budget as the user gave it, for messages. ``counters``
    ("auto", "on", "off") lets the BDD engine use the counter abstraction.
    ``progress(engine, **counters)`` is called from the engines' main loops.
    """

    deadline: Optional[float] = None
    timeout_s: Optional[float] = None
    max_states: Optional[int] = None
    max_depth: Optional[int] = None
    memory_mb: Optional[int] = None
    counters: str = "auto"
    progress: Optional[Callable[..., None]] = field(default=None, compare=False)
    cancel: CancelToken = field(default_factory=CancelToken, compare=False, repr=False)
    prepared: Optional[Prepared] = field(default=None, compare=False, repr=False)

    @classmethod
    def within(cls, timeout_s: Optional[float] = None, **fields) -> "RunContext":
        """A context whose deadline is ``timeout_s`` seconds from now."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        return cls(deadline=deadline, timeout_s=timeout_s, **fields)

    @classmethod
    def for_process(cls, **fields) -> "RunContext":
        """The command's context: the deadline the supervisor's bridge holds
        (``errors.set_deadline``, counted from the start of the process)."""
        deadline = current_deadline()
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        return cls(deadline=deadline, timeout_s=timeout, **fields)

    @classmethod
    def until_wall(cls, deadline_at: Optional[float], **fields) -> "RunContext":
        """The context of a worker handed ``wall_deadline()`` (perhaps on another
        machine): the same instant, back on this machine's monotonic clock."""
        if deadline_at is None:
            return cls(**fields)
        return cls(deadline=time.monotonic() + (deadline_at - time.time()), **fields)

    def wall_deadline(self) -> Optional[float]:
        """The deadline as ``time.time()`` seconds, the form that crosses machines.
        A ``time.monotonic()`` reading means nothing on another machine (each
        counts from its own boot), so a Dask worker gets the absolute wall-clock
        instant instead and turns it back with ``until_wall``; the price is the
        skew between the machines' clocks (NTP keeps it far below a cell's time)."""
        return None if self.deadline is None else time.time() + (self.deadline - time.monotonic())

    def with_(self, **changes) -> "RunContext":
        return replace(self, **changes)

    def remaining(self) -> Optional[float]:
        """Seconds left (never negative), or None without a deadline."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def timed_out(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def past(self) -> bool:
        """Whether the phase must stop now: cancelled, or past the deadline.
        Called between two steps; a paused run waits here."""
        return self.cancel.pause() or self.timed_out()

    def check(self, phase: str) -> None:
        """``LimitReached`` when the run must stop (see ``past``)."""
        if self.cancel.pause():
            raise LimitReached(f"cancelled during {phase}")
        if self.timed_out():
            budget = f" of {self.timeout_s:g} s" if self.timeout_s is not None else ""
            raise LimitReached(f"timeout: the time limit{budget} was reached during {phase}")

    def check_memory(self, phase: str) -> None:
        """``LimitReached`` (reason ``memory limit (N MB)``) once the address
        space is within ``MEMORY_RESERVE`` of ``RLIMIT_AS``. Polled by phases
        that grow without bound (export's unrolling): they stop while there is
        memory left to unwind, instead of meeting ``MemoryError`` at the limit,
        where CPython 3.11 may spin forever unwinding a ``with`` block
        (python/cpython#132508: the int it pushes for the handler cannot be
        allocated, and it retries the same handler)."""
        cap, used = address_space()
        if cap is not None and used is not None and used > cap - min(MEMORY_RESERVE, cap // 4):
            raise LimitReached(f"memory limit ({cap // MB} MB)")

    def report(self, engine: str, **counters) -> None:
        if self.progress is not None:
            self.progress(engine, **counters)

    def timeout_reason(self, where: str = "") -> str:
        """"timeout after S s[ where]" or "stopped[ where]" (cancelled, or no budget)."""
        if self.timed_out() and self.timeout_s is not None:
            return f"timeout after {self.timeout_s:g} s" + (f" {where}" if where else "")
        return "stopped" + (f" {where}" if where else "")


MB = 1024 * 1024
MEMORY_RESERVE = 32 * MB  # left for unwinding and printing the verdict


def address_space() -> tuple[Optional[int], Optional[int]]:
    """(the ``RLIMIT_AS`` soft limit, the address space in use) in bytes;
    None where unknown or unlimited. One read of ``/proc/self/statm``."""
    cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    if cap == resource.RLIM_INFINITY:
        return None, None
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            pages = int(os.read(fd, 64).split()[0])
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return cap, None
    return cap, pages * os.sysconf("SC_PAGE_SIZE")
