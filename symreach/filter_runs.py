"""Whether some run of kube-scheduler's parallel Filter phase misses every erring node (v1.35).

``findNodesThatPassFilters`` filters the node list from ``nextStartNodeIndex`` (any index) with
``parallelize.Until``: chunks of ``chunkSizeFor(N, 16)`` consecutive pieces, handed out in order to
min(16, chunks) workers, each running its chunk's pieces in order and checking the stop channel before
each. The k + 1st feasible node counted cancels (and is dropped); an Error from a node filtered before
the cancel aborts the cycle. The node tree lists zones round robin, zones and each zone's nodes in
any order (``model.zone_key``); a PreFilterResult's names are one zone.

So the nodes filtered before the cancel are: chunks 0..L picked, each a prefix of itself; at most
``workers`` of them unfinished, and when exactly that many, L is one (no worker is left to pick
another). With chunks <= workers that is any prefix of every chunk. A run then misses every erring
node and finds n iff the prefixes' per-zone node counts e_z leave room for the zone's erring nodes
(e_z <= feasible + others) and can hold k + 1 feasible nodes (sum of min(feasible, e_z) > k), n's zone
having a slot among them: kinds are placed freely within a zone, every chunk before n's can be
held back by its worker (chunks <= workers), and the nodes before n in its chunk are fewer than
chunk <= k. ``tests/filter_runs_brute.py`` simulates every list, start and interleaving; the test
compares the two on every small split. Above ``workers`` chunks the answer is the two constructed
runs of ``constructed_runs_past`` (sound, not complete): ``exact_domain`` says which."""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations
from math import isqrt
from typing import Optional, Sequence

PARALLELISM = 16   # kube-scheduler's default parallelism: Until's workers
MAX_WORK = 10 ** 9   # the exact search's bound on its steps (``_work``); beyond, None


def chunk_size(nodes: int, parallelism: int = PARALLELISM) -> int:
    """v1.35 ``parallelize.chunkSizeFor``: min(floor(sqrt n), n / parallelism + 1), at least 1."""
    return max(1, min(isqrt(nodes), nodes // parallelism + 1))


def exact_domain(nodes: int, zones: int, k: int, parallelism: int = PARALLELISM) -> bool:
    """Whether ``runs_past`` answers (not None) for ``nodes`` nodes in ``zones`` zones with the
    scheduler's chunks: every chunk can be held by its own worker, and the search is small enough."""
    chunk = chunk_size(nodes, parallelism)
    chunks = -(-nodes // chunk)
    return chunks <= parallelism and _work(nodes, zones, k, chunk) <= MAX_WORK


def _work(nodes: int, zones: int, k: int, chunk: int) -> int:
    """A bound on the search's steps: count vectors (the zones' free slots sum to at most
    nodes - k - 1 when it is asked at all) x zone orders x starts x chunk suffixes."""
    share = max(0, nodes - k - 1) // max(zones, 1) + 2
    orders = 1
    for i in range(2, zones + 1):
        orders *= i
    return share ** zones * orders * nodes * (nodes + chunk)


Counts = tuple[tuple[int, int, int], ...]


def runs_past(zones: Counts, own: Optional[int], k: int, chunk: int, workers: int) -> Optional[bool]:
    """Whether some run misses every erring node and finds a feasible node of zone ``own`` (None:
    any node): zones' (feasible, others, erring) counts. None when outside the exact search's reach
    (more chunks than workers, or a search beyond ``MAX_WORK``)."""
    return _runs_past(tuple(sorted(zones)) if own is None else _own_first(zones, own), own is not None,
                      k, chunk, workers)


def _own_first(zones: Counts, own: int) -> Counts:
    return (zones[own],) + tuple(sorted(z for i, z in enumerate(zones) if i != own))


@lru_cache(maxsize=4096)
def _runs_past(zones: Counts, has_own: bool, k: int, chunk: int, workers: int) -> Optional[bool]:
    nodes = sum(map(sum, zones))
    if has_own and not zones[0][0]:
        return False
    if not any(r for _, _, r in zones):
        return any(f for f, _, _ in zones)   # nothing errs: every run finds its nodes
    spare = sum(f for f, _, _ in zones) - k - 1   # feasible nodes that may stay unfiltered
    if spare < 0:
        return False   # never k + 1 feasible nodes: every node is filtered, an erring one too
    if has_own and chunk > k:
        return None   # n's chunk-mates before it could reach k (never with the scheduler's k)
    chunks = -(-nodes // chunk)
    if chunks > workers:
        return None
    if _work(nodes, len(zones), k, chunk) > MAX_WORK:
        return None
    caps = [r + o for _, o, r in zones]   # slots of a zone that may stay unfiltered for free
    orders = _orders(zones, has_own)
    for order in orders:
        listed = _round_robin(order, [sum(zones[z]) for z in range(len(zones))])
        seen = set()
        for start in range(nodes):
            rotated = listed[start:] + listed[:start]
            key = tuple(_class(zones, has_own, z) for z in rotated)
            if key in seen:
                continue
            seen.add(key)
            if _fits(rotated, zones, has_own, caps, spare, chunk):
                return True
    return False


def _class(zones: Counts, has_own: bool, z: int) -> tuple:
    return (zones[z], has_own and z == 0)


def _orders(zones: Counts, has_own: bool) -> list[tuple[int, ...]]:
    """Zone orders up to zones that are interchangeable (same counts, neither n's)."""
    out, seen = [], set()
    for order in permutations(range(len(zones))):
        key = tuple(_class(zones, has_own, z) for z in order)
        if key not in seen:
            seen.add(key)
            out.append(order)
    return out


def _round_robin(order: Sequence[int], sizes: Sequence[int]) -> tuple[int, ...]:
    depth = max(sizes)
    return tuple(z for j in range(depth) for z in order if j < sizes[z])


def _fits(rotated: tuple[int, ...], zones: Counts, has_own: bool, caps: list[int], spare: int,
          chunk: int) -> bool:
    """Some choice of each chunk's unfiltered suffix leaves every zone's erring nodes unfiltered
    and loses at most ``spare`` feasible nodes (n's zone keeping a filtered slot)."""
    width = len(zones)
    # state: per-zone unfiltered slots capped at the zone's free slots, own-zone-filtered flag -> least loss
    states: dict[tuple, int] = {(0,) * width + (False,): 0}
    for lo in range(0, len(rotated), chunk):
        piece = rotated[lo:lo + chunk]
        nxt: dict[tuple, int] = {}
        for state, loss in states.items():
            counts = list(state[:width])
            seen_own = state[width]
            extra = 0
            for t in range(len(piece) + 1):   # t: the unfiltered suffix's length
                if t:
                    z = piece[len(piece) - t]
                    if counts[z] < caps[z]:
                        counts[z] += 1
                    else:
                        extra += 1
                if loss + extra > spare:
                    break
                own_here = seen_own or (has_own and 0 in piece[:len(piece) - t])
                key = tuple(counts) + (own_here,)
                if nxt.get(key, spare + 1) > loss + extra:
                    nxt[key] = loss + extra
        states = nxt
    for state, loss in states.items():
        if all(state[z] >= zones[z][2] for z in range(width)) and (state[width] or not has_own):
            return True
    return False
