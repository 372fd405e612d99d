"""The run's time split into load / decide / minimise, in every command that decides.

One ``Clock`` per command invocation, kept in the click context: the input
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
PHASES = ("load_s", "decide_s", "minimise_s")


class Clock:
    """Wall time of a run's phases (``times`` in the output)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.mark = self.start
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = self.laps.get(name, 0.0) + now - self.mark
        self.mark = now

    def split(self, minimise_s: float = 0.0) -> None:
        """End the decide phase; what minimising the witness took of it is its own phase."""
        self.lap("decide_s")
        self.laps["decide_s"] = max(0.0, self.laps["decide_s"] - minimise_s)
        self.laps["minimise_s"] = minimise_s

    def times(self) -> dict[str, float]:
        """``load_s``, ``decide_s``, ``minimise_s`` and ``total_s``; the phase running now
        (a limit stopped the run in it) counts up to now, a phase not reached is 0."""
        now = time.perf_counter()
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
        clock = root.meta[_META] = Clock()
    return clock


def minimise_seconds(stats: Optional[dict]) -> float:
    """What the engines report minimising took (``stats["minimise_s"]``), else 0."""
    value = (stats or {}).get("minimise_s", 0.0)
    return float(value) if isinstance(value, (int, float)) else 0.0


def times_text(times: dict[str, float]) -> str:
    """``1.234 s (load 0.100, decide 1.134, minimise 0.000)``: the text outputs' time."""
    parts = ", ".join(f"{k[:-2]} {v:.3f}" for k, v in times.items() if k != "total_s")
    return f"{times.get('total_s', 0.0):.3f} s ({parts})"
