"""The run's time split into start / load / decide / minimise, in every command that decides.

One ``Clock`` per command invocation, kept in the click context: ``start_s``
is the process's start-up before the command (the supervisor's start time),
the input
loader laps ``load_s`` (``options.load_inputs_from_options``), the command
laps ``decide_s`` when its answer is in, and a witness's minimisation (the
engines' ``stats["minimise_s"]``) is taken out of the decide phase. Every
command prints the same keys (docs/json.md, ``times``).
"""

from __future__ import annotations

import time
from typing import Optional

import click

_META = "symreach.clock"
PHASES = ("start_s", "load_s", "decide_s", "minimise_s")


class Clock:
    """Wall time of a run's phases (``times`` in the output)."""

    def __init__(self, start: Optional[float] = None) -> None:
        """``start``: when the run began (the process's start-up counts in ``total_s`` only);
        the phases are counted from now, the command's start."""
        self.mark = time.monotonic()
        self.start = self.mark if start is None else min(start, self.mark)
        self.laps: dict[str, float] = {"start_s": self.mark - self.start}

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps[name] = self.laps.get(name, 0.0) + now - self.mark
        self.mark = now

    def split(self, minimise_s: float = 0.0) -> None:
        """End the decide phase; what minimising the witness took of it is its own phase."""
        self.lap("decide_s")
        self.laps["decide_s"] = max(0.0, self.laps["decide_s"] - minimise_s)
        self.laps["minimise_s"] = minimise_s

    def times(self) -> dict[str, float]:
        """``start_s`` (the process's start-up before the command), ``load_s``, ``decide_s``,
        ``minimise_s`` and ``total_s``; the phase running now
        (a limit stopped the run in it) counts up to now, a phase not reached is 0."""
        now = time.monotonic()
        out: dict[str, float] = {}
        running = True
        for k in PHASES:
            if k in self.laps:
                out[k] = round(self.laps[k], 6)
            else:
                out[k] = round(now - self.mark, 6) if running else 0.0
                running = False
        out["total_s"] = round(now - self.start, 6)
        return out


def command_clock() -> Clock:
    """The running command's clock, started on first use (the command's start)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return Clock()
    root = ctx.find_root()
    clock = root.meta.get(_META)
    if clock is None:
        clock = root.meta[_META] = Clock(run_start())
    return clock


def run_start() -> Optional[float]:
    """When the supervisor started this run (``time.monotonic``), so ``total_s`` is the time the
    user waited, start-up included; None in-process."""
    import os

    from symreach.cli import process

    start = os.environ.get(process.START_ENV) if process.supervised() else None
    try:
        return float(start) if start else None
    except ValueError:
        return None


def minimise_seconds(stats: Optional[dict]) -> float:
    """What the engines report minimising took (``stats["minimise_s"]``), else 0."""
    value = (stats or {}).get("minimise_s", 0.0)
    return float(value) if isinstance(value, (int, float)) else 0.0
