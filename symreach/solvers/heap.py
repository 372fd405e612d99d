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
check, so a long-lived caller's objects are collected again afterwards
(unless the heap was frozen already: the command line freezes its start-up,
and undoing that would undo its freeze too).
"""

from __future__ import annotations

import gc
from types import TracebackType
from typing import Optional


class CheckHeap:
    """``with CheckHeap() as heap``: the collector is paused inside until ``settle``,
    which freezes the heap and resumes it; on exit the freeze ends and the collector's
    state is what it was on entry."""

    def __init__(self) -> None:
        self._was_enabled = False
        self._frozen = False
        self._thaw = False  # the heap was not frozen on entry: unfreeze on exit

    def __enter__(self) -> "CheckHeap":
        self._was_enabled = gc.isenabled()
        self._thaw = gc.get_freeze_count() == 0
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
        if self._frozen and self._thaw:
            gc.unfreeze()
        if self._was_enabled:
            gc.enable()
