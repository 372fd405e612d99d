"""Progress of long runs on stderr: engine, iteration or frame, size, elapsed.

Engines call ``RunContext.report(engine, **fields)`` (its ``progress``) from their main loops when
it is set; the reporter throttles, so calling it often is cheap. It stays
silent unless stderr is a terminal (or ``force`` is given), so pipes, CI logs
and ``--json`` consumers never see it.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, TextIO

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


@contextmanager
def loading(what: str, quiet: bool = False, stream: Optional[TextIO] = None) -> Iterator[None]:
    """A ``[loading] FILE`` line on a terminal while the inputs are read, cleared after."""
    line = make_progress(quiet, stream)
    if line is not None:
        line.interval_s = 0.0
        line("loading", inputs=what if len(what) <= 60 else what[:57] + "...")
    try:
        yield
    finally:
        if line is not None:
            line.close()


PHASES = frozenset({"loading", "minimise"})  # progress of a phase, not an engine's counters


class Recorder:
    """Engines' progress reports kept (the last fields per engine), and passed on
    to a terminal line when there is one: an ``unknown`` that a limit forced
    still says how far the engines got."""

    def __init__(self, line: Optional[StderrProgress] = None,
                 on_report: Optional[Callable[[], None]] = None) -> None:
        self.line = line
        self.fields: dict[str, dict[str, Any]] = {}
        self.last_engine: Optional[str] = None
        self.on_report = on_report  # called after every report (the caller throttles)

    def __call__(self, engine: str, **fields: Any) -> None:
        if engine not in PHASES:
            self.fields.setdefault(engine, {}).update(fields)
            self.last_engine = engine
        if self.line is not None:
            self.line(engine, **fields)
        if self.on_report is not None:
            self.on_report()

    def last_stats(self, engine: str = "") -> dict[str, Any]:
        """The last reported fields: flat when only ``engine`` reported, else per
        engine under ``unknown_engines``."""
        if list(self.fields) == [engine]:
            return dict(self.fields[engine])
        return {"unknown_engines": {k: dict(v) for k, v in self.fields.items()}} if self.fields else {}

    def close(self) -> None:
        if self.line is not None:
            self.line.close()
