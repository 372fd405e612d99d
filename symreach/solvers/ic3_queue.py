"""IC3's proof-obligation queue: lowest frame first, two ways to break ties.

Obligations are discharged lowest level first (every IC3). Among obligations
of one level the order decides which counterexamples IC3 finds cheaply:

- **shallow** (closest to the bad state first): an obligation that was blocked
  and re-queued one level up waits behind its ancestors, which then look for
  *other* predecessors. Breadth-like; the net families (token rings) need it:
  ring n = 6, coverable goal, 13,125 SAT queries shallow against more than
  39,000 deep.
- **deep** (farthest from the bad state first): a re-queued obligation keeps
  its chain going. Depth-first-like; a pebbling witness needs every node of
  the tree pebbled (binary tree h = 6: 127 deploys, 248 actions) while IC3
  holds ~10 frames, so the chain must be pushed far past the frame count:
  tree h = 5, k = 7 took 8,786 queries deep against 19,561 shallow.

``alternate`` serves both: every obligation sits in both heaps (lazily
deleted by its sequence number) and the queue switches heaps every
``period`` pops, so either search advances at half speed at worst. Levels
order both heaps alike, so IC3's invariants (an obligation is examined only
after every lower one) do not depend on the mode.
"""

from __future__ import annotations

import heapq
from typing import Generic, Optional, TypeVar

T = TypeVar("T")
MODES = ("shallow", "deep", "alternate")


class ObligationQueue(Generic[T]):
    """A priority queue of (level, depth, item); see the module docstring."""

    def __init__(self, mode: str = "alternate", period: int = 64) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown obligation order {mode!r}; known: {', '.join(MODES)}")
        self.mode, self.period = mode, max(1, period)
        self._heaps: tuple[list, list] = ([], [])  # shallow, deep
        self._live: set[int] = set()
        self._seq = 0
        self._pops = 0
        self._side = 1 if mode == "deep" else 0

    @property
    def deep(self) -> bool:
        """Is the deep heap the one being served?"""
        return self._side == 1

    def __len__(self) -> int:
        return len(self._live)

    def push(self, level: int, depth: int, item: T) -> None:
        self._seq += 1
        seq = self._seq
        self._live.add(seq)
        if self.mode != "deep":
            heapq.heappush(self._heaps[0], (level, depth, seq, item))
        if self.mode != "shallow":
            heapq.heappush(self._heaps[1], (level, -depth, seq, item))

    def pop(self) -> Optional[T]:
        """The next item, or None when the queue is empty."""
        if self.mode == "alternate":
            self._pops += 1
            if self._pops % self.period == 0:
                self._side ^= 1
        heap = self._heaps[self._side]
        while heap:
            _, _, seq, item = heapq.heappop(heap)
            if seq in self._live:
                self._live.discard(seq)
                return item
        return None
