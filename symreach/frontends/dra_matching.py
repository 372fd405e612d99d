"""Whether distinct devices exist for DRA requests: a bipartite matching, over every choice of subrequests.

The allocator's search (``dra_allocator``) is exhaustive, so without
constraints, admin access and errors its fit or failure is whether such an
assignment exists. ``dra_allocator`` asks this first (a failure found here
needs no search) and falls back on it when the search is too long.
"""

from __future__ import annotations

from itertools import product
from typing import Hashable, Optional, Sequence

# One alternative of a request: the devices an ``All`` request takes (None for ``ExactCount``),
# the count, and the devices that may fill each of its slots.
Alternative = tuple[Optional[Sequence[Hashable]], int, Sequence[Hashable]]


def assignable(requests: Sequence[Sequence[Alternative]]) -> bool:
    """Some choice of one alternative per request gets distinct devices for every slot."""
    return any(_assignable(choice) for choice in product(*requests))


def _assignable(choice: Sequence[Alternative]) -> bool:
    taken: set = set()
    slots: list[Sequence[Hashable]] = []
    for everything, count, candidates in choice:
        if everything is not None:
            if not everything or taken.intersection(everything) or any(d not in candidates for d in everything):
                return False
            taken.update(everything)
        else:
            slots += [candidates] * count
    owner: dict = {}

    def place(slot: int, seen: set) -> bool:
        for d in slots[slot]:
            if d not in taken and d not in seen:
                seen.add(d)
                if d not in owner or place(owner[d], seen):
                    owner[d] = slot
                    return True
        return False
    return all(place(i, set()) for i in range(len(slots)))
