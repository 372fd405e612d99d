"""Independent oracles for the reductions (deliberately naive; not in the package).

- ``coverable_places(net)``: breadth-first search over the markings of a safe
  net; returns every place marked in some reachable marking.
- ``pebbling_price(vertices, edges, target)``: the least k such that the
  target can be black-pebbled with at most k pebbles, by breadth-first search
  over pebble sets for k = 1, 2, ...
"""

from __future__ import annotations

from collections import deque
from typing import Hashable, Iterable, Optional, Sequence


def reachable_markings(net, max_markings: Optional[int] = None) -> set[frozenset[str]]:
    """All markings reachable from net.initial (sets of places; the net is safe)."""
    start = frozenset(net.initial)
    seen = {start}
    queue = deque([start])
    while queue:
        m = queue.popleft()
        for t in net.transitions:
            if t.pre <= m:
                m2 = (m - t.pre) | t.post
                if m2 not in seen:
                    seen.add(m2)
                    if max_markings is not None and len(seen) > max_markings:
                        raise RuntimeError("too many markings")
                    queue.append(m2)
    return seen


def coverable_places(net, max_markings: Optional[int] = None) -> set[str]:
    out: set[str] = set()
    for m in reachable_markings(net, max_markings):
        out |= m
    return out


def _can_pebble(pred: dict[Hashable, frozenset], target: Hashable, k: int) -> bool:
    start: frozenset = frozenset()
    seen = {start}
    queue = deque([start])
    while queue:
        x = queue.popleft()
        if target in x:
            return True
        moves = [x - {v} for v in x]
        if len(x) < k:
            moves += [x | {v} for v in pred if v not in x and pred[v] <= x]
        for y in moves:
            if y not in seen:
                seen.add(y)
                queue.append(y)
    return False


def pebbling_price(vertices: Sequence[Hashable], edges: Iterable[Sequence[Hashable]],
                   target: Hashable) -> int:
    pred: dict[Hashable, set] = {v: set() for v in vertices}
    for u, v in edges:
        pred[v].add(u)
    frozen = {v: frozenset(p) for v, p in pred.items()}
    for k in range(1, len(frozen) + 1):
        if _can_pebble(frozen, target, k):
            return k
    raise ValueError("target cannot be pebbled (cycle?)")
