"""``auto``'s policy for Python's cyclic garbage collector during one check.

Measured on the large encoded nets (benchmarks/results/auto_targets/nets.md),
full collections were 40-60 % of ``auto``'s CPU there: preprocessing keeps
every structure it builds (the may-fixpoint, the replay state of its
deployment order), so each collection rescans a heap that only grows, and
``auto``'s heap is larger than a single engine's by the engine modules it
imports before it forks (CUDD, python-sat). So the collector is off while
``auto`` preprocesses (as while loading, ``loader.collector``), and
what exists once preprocessing is done (modules, instance, its
preprocessing) is frozen out of later collections: the engines' own
collections scan only what they build, and a forked worker does not touch
(and so copy) its parent's pages when it collects. The freeze ends with the
check (the last one, when checks run in threads of one process), so a
long-lived caller's objects are collected again afterwards (unless the heap
was frozen already: the command line freezes its start-up, and undoing that
would undo its freeze too).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from types import TracebackType
from typing import Iterator, Optional

# checks inside a ``CheckHeap`` now (threads of one process share the heap), and whether
# the last of them to end unfreezes it (it was not frozen when the first began)
_LOCK = threading.Lock()
_open = 0
_thaw = False


class CheckHeap:
    """``with CheckHeap() as heap``: the collector is paused inside until ``settle``,
    which freezes the heap and resumes it; on exit the freeze ends and the collector's
    state is what it was on entry."""

    def __init__(self) -> None:
        self._was_enabled = False
        self._frozen = False

    def __enter__(self) -> "CheckHeap":
        global _open, _thaw
        with _LOCK:
            if _open == 0:
                _thaw = gc.get_freeze_count() == 0
            _open += 1
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def settle(self) -> None:
        """Long-lived objects built: freeze them, resume collecting (once)."""
        if self._frozen:
            return
        gc.freeze()
        self._frozen = True
        if self._was_enabled:
            gc.enable()

    def __exit__(self, kind: Optional[type], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> None:
        global _open
        with _LOCK:
            _open -= 1
            if _open == 0 and _thaw:  # the last check to end: what every one froze
                gc.unfreeze()
        if self._was_enabled:
            gc.enable()


@contextmanager
def collector_off() -> Iterator[None]:
    """The collector paused inside, as it was on exit: for the lazy search while it runs
    alone in ``auto``'s process. It builds no reference cycles (its states are ints in
    dicts, its moves tuples), so a collection frees nothing and only rescans them: 5-10 %
    of its CPU on the philosophers' violations (benchmarks/results/auto_targets/lazy_bmc.md)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
