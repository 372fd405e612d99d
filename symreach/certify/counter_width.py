"""How wide a certificate's counter may be: both invariant checkers ask before building it.

A counted pair is ``bits`` Boolean variables holding a count up to ``bound``.
The engines write ``bits = bound.bit_length()``; the checkers enumerate the
values above the bound (``count <= bound``) and shift by ``bits``, so a
forged width (``bits: 40``, ``2**63``) would stall or exhaust ``certify``.
No node holds 2**20 pods, so wider counters are refused as malformed.
"""

from __future__ import annotations

from typing import Any, Optional

MAX_BITS = 20


def width_problem(bits: Any, bound: Any) -> Optional[str]:
    """None when ``bits``/``bound`` describe a counter an engine writes, else why not."""
    if not isinstance(bits, int) or isinstance(bits, bool) or not isinstance(bound, int) or isinstance(bound, bool):
        return f"a counter's bits and bound must be integers, got {bits!r} and {bound!r}"
    if bits == 0:
        return None
    if not 0 < bits <= MAX_BITS or bits != bound.bit_length():
        return f"a counter of {bits} bits with bound {bound} (bits must be the bound's width, at most {MAX_BITS})"
    return None
