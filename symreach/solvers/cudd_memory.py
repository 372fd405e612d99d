"""CUDD under a memory limit: fail cleanly instead of limping.

Under ``RLIMIT_AS`` alone, a failing ``malloc`` inside CUDD is answered by
garbage collection and retries, so a BDD run that does not fit slows to a
crawl and ends at its timeout with no answer
(benchmarks/results/design_measurements.md). CUDD has its own hard cap (``max_memory``): past it, an
operation returns NULL at once, which ``dd`` raises as an exception. Capping
CUDD below the address-space limit turns "does not fit" into an immediate
``MemoryError``, which every command reports as ``unknown`` with reason
``memory limit``.

``ceiling(bytes)`` bounds every manager made inside it further, with or
without an address-space limit: the matrix gives each cell's BDD run such a
bound, so that one cell that does not fit is ``unknown`` and the others go on.
"""

from __future__ import annotations

import os
import resource
from contextlib import contextmanager
from typing import Iterator, Optional

# Part of the address space left under the limit that CUDD may use: the rest
# is for Python objects (the circuit, the system, the trace) and the SAT side.
CUDD_SHARE = 0.7
MIN_CAP_BYTES = 32 * 1024 * 1024
_CEILING: list[int] = []   # the bounds of the ``ceiling`` blocks we are in


def address_space_left() -> Optional[int]:
    """Bytes this process may still map under ``RLIMIT_AS`` (None: no limit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm") as fh:
            used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        used = 0
    return max(0, soft - used)


def cap_manager(bdd) -> Optional[int]:
    """Give a ``dd.cudd`` manager a hard cap under the address-space limit; the cap, or None."""
    left = address_space_left()
    cap = None if left is None else max(MIN_CAP_BYTES, int(left * CUDD_SHARE))
    if _CEILING:
        cap = min(_CEILING) if cap is None else min(cap, *_CEILING)
    if cap is None or not hasattr(bdd, "configure"):
        return None
    try:
        bdd.configure(max_memory=cap)
    except (TypeError, ValueError, KeyError):  # a backend without the setting
        return None
    return cap


@contextmanager
def ceiling(nbytes: int) -> Iterator[None]:
    """Managers made inside the block get at most ``nbytes`` (never below ``MIN_CAP_BYTES``)."""
    _CEILING.append(max(MIN_CAP_BYTES, nbytes))
    try:
        yield
    finally:
        _CEILING.pop()


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``dd`` raised this because CUDD returned NULL (its cap, or ``malloc`` failing)."""
    text = str(err)
    if isinstance(err, ValueError):  # dd wrapping a NULL result
        return "NULL" in text and "DdNode" in text
    # dd's ``add_var`` says 'failed to add var "x"' when CUDD returns NULL for a new variable:
    # its tables grow with every variable, so under the cap that is memory too.
    return isinstance(err, RuntimeError) and ("run out of memory" in text or text.endswith(" failed")
                                              or text.startswith("failed to add var"))
