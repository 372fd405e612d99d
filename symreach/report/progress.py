"""Progress of long runs on stderr: engine, iteration or frame, size, elapsed.

Engines call ``RunContext.report(engine, **fields)`` (its ``progress``) from their main loops when
it is set; the reporter throttles, so calling it often is cheap. It stays
silent unless stderr is a terminal (or ``force`` is given), so pipes, CI logs
and ``--json`` consumers never see it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, TextIO

ProgressFn = Callable[..., None]


class StderrProgress:
    """Rewrites one status line on stderr at most every ``interval_s`` seconds."""

    def __init__(self, stream: Optional[TextIO] = None, interval_s: float = 0.5) -> None:
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self.start = time.perf_counter()
        self._last = 0.0
        self._shown = False

    def __call__(self, engine: str, **fields: Any) -> None:
        now = time.perf_counter()
        if now - self._last < self.interval_s:
            return
        self._last = now
        parts = " ".join(f"{k}={_short(v)}" for k, v in fields.items())
        self.stream.write(f"\r\x1b[K[{engine}] {parts} elapsed={now - self.start:.1f}s")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        """Clear the line, also when only a worker process (which has its own
        copy of this reporter, so ``_shown`` stays False here) drew it."""
        self.stream.write("\r\x1b[K")
        self.stream.flush()


def make_progress(quiet: bool, stream: Optional[TextIO] = None) -> Optional[StderrProgress]:
    stream = stream or sys.stderr
    if quiet or not stream.isatty():
        return None
    return StderrProgress(stream)


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
