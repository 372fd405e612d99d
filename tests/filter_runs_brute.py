"""A brute-force reference for ``symreach.filter_runs``: kube-scheduler's Filter phase simulated step by step.

Deliberately naive and independent of the package. Every node list the snapshot's node tree can give
(zones in any order, each zone's nodes in any order, read round robin as ``nodeTree.list``), every
``nextStartNodeIndex``, and every interleaving of the workers of ``parallelize.Until`` (workqueue
``ParallelizeUntil``: chunk indices handed out in order, a worker runs its chunk's pieces in order and
checks the stop channel before each, any worker may stall at any point) are explored. A node's kind:
``F`` feasible, ``O`` refused (no error), ``R`` DynamicResources errs (the cycle aborts when it is filtered
before the cancel), ``N`` the node n asked about (feasible). The cancel comes when the k + 1st feasible
node is counted (``length > numNodesToFind``); that node is dropped. A node in flight at the cancel
is the same as one its worker had not started (an erring one then answers Unschedulable).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations, product
from typing import Mapping, Optional, Sequence


def node_lists(zones: Mapping[str, Sequence[int]], own: Optional[str]) -> set[tuple[str, ...]]:
    """Every kind sequence ``nodeTree.list`` can give: zone -> (feasible, others, erring) counts; one
    feasible node of ``own`` is n (``N``)."""
    seqs = {}
    for z, (f, o, r) in zones.items():
        kinds = ("N",) * (z == own) + ("F",) * (f - (z == own)) + ("O",) * o + ("R",) * r
        seqs[z] = sorted(set(permutations(kinds)))
    out = set()
    for order in permutations(zones):
        for combo in product(*(seqs[z] for z in order)):
            depth = max(map(len, combo), default=0)
            out.add(tuple(seq[j] for j in range(depth) for seq in combo if j < len(seq)))
    return out


def some_run_finds(listed: tuple[str, ...], k: int, chunk: int, workers: int, any_node: bool) -> bool:
    """Whether some run over ``listed`` from every start index ends with n (any_node: some node) among
    the feasible nodes returned and no error."""
    return any(_runs(listed[s:] + listed[:s], k, chunk, workers, any_node) for s in range(len(listed)))


def _runs(pieces: tuple[str, ...], k: int, chunk: int, workers: int, any_node: bool) -> bool:
    n = len(pieces)
    chunks = -(-n // chunk)
    workers = min(workers, chunks)

    @lru_cache(maxsize=None)
    def go(next_chunk: int, busy: tuple[tuple[int, int], ...], count: int, found: bool) -> bool:
        if next_chunk == chunks and not busy:   # every node filtered, no error, no cancel
            return found or (any_node and count > 0)
        if len(busy) < workers and next_chunk < chunks:   # an idle worker takes the next chunk
            if go(next_chunk + 1, tuple(sorted(busy + ((next_chunk, next_chunk * chunk),))), count, found):
                return True
        for i, (c, p) in enumerate(busy):   # a worker filters its next piece
            kind = pieces[p]
            if kind == "R":
                continue   # the error aborts the cycle
            rest = busy[:i] + busy[i + 1:]
            if kind in "FN":
                if count + 1 > k:   # the cancel; this node is dropped
                    if found or any_node:
                        return True
                    continue
            after = rest if p + 1 == min((c + 1) * chunk, n) else tuple(sorted(rest + ((c, p + 1),)))
            if go(next_chunk, after, count + (kind in "FN"), found or kind == "N"):
                return True
        return False

    return go(0, (), 0, False)


def brute_runs_past(zones: Mapping[str, Sequence[int]], own: Optional[str], k: int, chunk: int,
                    workers: int) -> bool:
    """Some run of the Filter phase finds n, a feasible node of zone ``own`` (None: any node), without
    an error: over every node list, start index and interleaving."""
    if own is not None and not zones[own][0]:
        return False
    return any(some_run_finds(listed, k, chunk, workers, own is None) for listed in node_lists(zones, own))
