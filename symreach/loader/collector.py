"""Pausing Python's cyclic garbage collector while a big input is read and converted.

Loading allocates millions of small objects that all stay alive (parsed
documents, specs, index sets), and every few thousand allocations the
collector rescans the growing heap: a large share of the loading time of a
big dump (benchmarks/results/design_measurements.md). Nothing built while
loading forms garbage cycles worth collecting early.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside; reentrant: only the outermost pause re-enables the collector,
    and only if it was enabled before."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
