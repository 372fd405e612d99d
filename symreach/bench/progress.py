"""Progress of a benchmark run: a bar on a terminal, plain lines elsewhere.

A run of forty jobs used to be silent for minutes. On a terminal one line is
redrawn in place: jobs done of all, running, failed, elapsed, and an estimate
of the time left (the mean wall time per finished job so far, times the jobs
left, over the jobs run at a time). Elsewhere (a log, CI) one plain line per
finished job, which a file keeps readably.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Callable, Optional, TextIO

from symreach.bench.runner import Job, JobResult
from symreach.bench.tables import cell


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else \
        f"{seconds // 60}m{seconds % 60:02d}s"


class BenchProgress:
    """``on_start``/``on_result`` for ``runner.run_jobs``; ``close`` ends the bar."""

    def __init__(self, total: int, parallel: int, stream: Optional[TextIO] = None,
                 tty: Optional[bool] = None, clock: Callable[[], float] = time.perf_counter) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.total, self.parallel = total, max(1, parallel)
        self.done = self.running = self.failed = 0
        self.clock = clock
        self.start = clock()
        self._lock = threading.Lock()
        self._drawn = False

    def eta_s(self) -> Optional[float]:
        """Seconds left, from the mean time per finished job; None before the first."""
        if self.done == 0:
            return None
        elapsed = self.clock() - self.start
        return elapsed / self.done * (self.total - self.done)

    def line(self) -> str:
        eta = self.eta_s()
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        return (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} done, "
                f"{self.running} running" + (f", {self.failed} unsolved" if self.failed else "")
                + f", {_clock(self.clock() - self.start)} elapsed"
                + (f", ETA {_clock(eta)}" if eta is not None else ""))

    def on_start(self, job: Job) -> None:
        with self._lock:
            self.running += 1
            self._draw()

    def on_result(self, result: JobResult) -> None:
        with self._lock:
            if result.status != "skipped":
                self.running = max(0, self.running - 1)
            self.done += 1
            self.failed += not result.solved
            if self.tty:
                self._draw()
            else:
                self.stream.write(f"[{self.done:>{len(str(self.total))}}/{self.total} "
                                  f"{_clock(self.clock() - self.start)}] {result.engine:<10} "
                                  f"{cell(result):<10} {result.instance}\n")
                self.stream.flush()

    def _draw(self) -> None:
        if not self.tty:
            return
        text = self.line()[:max(20, shutil.get_terminal_size((100, 20)).columns - 1)]
        self.stream.write("\r\033[K" + text)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        with self._lock:
            if self.tty and self._drawn:
                self.stream.write("\r\033[K" + self.line() + "\n")
                self.stream.flush()
                self._drawn = False
