"""Engines taking turns on one core: threads of one process, one running at a time.

``auto`` runs two engines side by side in its own process before it forks
anything (``portfolio.AutoEngine._pilot``). Left to the interpreter lock,
the split is far from even: on pyramid h = 8, k = 9 IC3 got 4.5 CPU s and
the BDDs 1.3 s of a 5.8 s run (the BDDs alone decide it in 0.9 s), because
which waiting thread takes the lock next is up to the OS. ``Turns`` makes
the split explicit: a thread runs until it has used ``slice_s`` seconds,
then the registered thread that has used the least time so far takes over,
so over any stretch the shares differ by at most one engine step (an image,
a SAT call). Engines hand over only at their deadline checks
(``base.past``), which they reach between steps, so no engine is stopped in
the middle of a CUDD or SAT call. ``cancel`` ends every turn at once: each
waiting or running thread sees ``pause`` return True at its next check.
``hold`` parks every registered thread at such a check, so that the
caller can fork a worker while no thread is in the middle of anything.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from symreach.solvers.base import take_turns


class Turns:
    """Round robin of registered threads by least time used (module docstring)."""

    def __init__(self, parties: int, slice_s: float = 0.01,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        """The first turn starts once ``parties`` threads have entered (else the
        first thread to start could run alone for a while)."""
        self.parties = parties
        self.slice_s = slice_s
        self.clock = clock
        self._cond = threading.Condition()
        self._used: dict[int, float] = {}  # thread ident -> seconds it held the turn
        self._holder: int | None = None
        self._since = 0.0
        self._cancelled = False
        self._wanted: int | None = None  # a thread that ``hold`` parks the others for

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def enter(self) -> None:
        """Register the calling thread and wait for its first turn."""
        me = threading.get_ident()
        with self._cond:
            self._used[me] = 0.0
            self.parties -= 1
            if self.parties <= 0 and self._holder is None:
                self._hand_over()
            self._wait_for(me)

    @contextmanager
    def taking_part(self) -> Iterator[None]:
        """Run the body as one of the registered threads: ``enter``, the engines'
        checks (``base.past``) under these turns, then ``leave`` whatever happens."""
        self.enter()
        take_turns(self)
        try:
            yield
        finally:
            take_turns(None)
            self.leave()

    def leave(self) -> None:
        """Unregister the calling thread; the next one takes over."""
        me = threading.get_ident()
        with self._cond:
            if self._holder == me:
                self._charge(me)
                self._used.pop(me, None)
                self._hand_over()
            else:
                self._used.pop(me, None)
            self._cond.notify_all()

    def pause(self) -> bool:
        """Called between engine steps: hand over once this thread's slice is
        used up, and wait for the next turn. True: the run was cancelled."""
        if self._cancelled:
            return True
        me = threading.get_ident()
        if self.clock() - self._since < self.slice_s and self._wanted is None:
            return False
        with self._cond:
            if self._holder != me:  # not registered here, or cancelled meanwhile
                return self._cancelled
            self._charge(me)
            self._hand_over()
            self._wait_for(me)
        return self._cancelled

    def hold(self) -> None:
        """Take the turn from the registered threads (without registering): return
        once the current holder has reached a check and parked; ``release`` ends it."""
        me = threading.get_ident()
        with self._cond:
            self._wanted = me
            if self._holder is None:  # nobody started yet, or every thread left
                self._take(me)
            while self._holder != me and not self._cancelled:
                self._cond.wait()

    def release(self) -> None:
        """End a ``hold``: the registered thread that used the least time goes on."""
        with self._cond:
            self._wanted = None
            if self._holder == threading.get_ident():
                self._hand_over()
            self._cond.notify_all()

    def cancel(self) -> None:
        """End every turn: each thread's next ``pause`` returns True at once."""
        with self._cond:
            self._cancelled = True
            self._cond.notify_all()

    # ---- with the condition held ----------------------------------------
    def _charge(self, me: int) -> None:
        self._used[me] = self._used.get(me, 0.0) + self.clock() - self._since

    def _hand_over(self) -> None:
        """The turn goes to a holding thread, else to the registered thread that
        has used the least time."""
        if self._wanted is not None:
            self._take(self._wanted)
            self._cond.notify_all()
            return
        if not self._used:
            self._holder = None
            return
        self._take(min(self._used, key=lambda t: self._used[t]))
        self._cond.notify_all()

    def _take(self, thread: int) -> None:
        self._holder = thread
        self._since = self.clock()

    def _wait_for(self, me: int) -> None:
        while self._holder != me and not self._cancelled:
            self._cond.wait()
