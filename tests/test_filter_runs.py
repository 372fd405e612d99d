"""``filter_runs.runs_past`` (the exact search over the parallel Filter phase's runs) against
``tests/filter_runs_brute.py`` (every node list, start and interleaving simulated) on every small
split, with fewer workers than chunks (a worker takes several chunks in turn) and chunks longer than
k (n's chunk-mates before it can fill k), and against ``semantics.zone_runs_past``'s two constructed
runs (sound, not complete: the exact search finds more); on seeded draws of up to 5 zones of any
sizes with k at the node count's edge; and ``filter_runs.segments_cover`` (the necessary condition
that answers at any size) never refuses a run the brute force finds. The brute force itself, with one
worker, equals a plain sequential scan (``test_one_worker_is_the_sequential_scan``)."""

from __future__ import annotations

from itertools import combinations_with_replacement, permutations, product
from random import Random
from typing import Iterable, Optional

import pytest

from symreach import semantics
from symreach.filter_runs import narrowed_runs_past, runs_past, segments_cover, windows_cover
from tests.filter_runs_brute import brute_runs_past


def _differential(max_nodes: int, splits: Iterable[tuple[int, int, int]], max_zones: int,
                  chunks: tuple[int, ...]) -> tuple[int, int, int]:
    """Every split of up to ``max_nodes`` nodes over 1..``max_zones`` zones with an erring node (n's
    zone first), every k, the chunk sizes given, workers 1, 2, 3 and one per chunk, n in zone a or any
    node; (compared, more chunks than workers among them, found where zone_runs_past finds none)."""
    compared = fewer = beyond = 0
    splits = list(splits)
    for count in range(1, max_zones + 1):
        for combo in combinations_with_replacement(splits, count):
            for first in set(combo):
                rest = list(combo)
                rest.remove(first)
                zones = dict(zip("abc", [first] + rest))
                nodes = sum(map(sum, zones.values()))
                if nodes > max_nodes or not any(r for _, _, r in zones.values()):
                    continue
                for k, chunk, own in product(range(1, nodes), chunks, ("a", None)):
                    pieces = -(-nodes // chunk)
                    for workers in sorted({1, 2, 3, pieces} & set(range(1, pieces + 1))):
                        ours = runs_past(tuple(zones.values()), 0 if own else None, k, chunk, workers)
                        assert ours == brute_runs_past(zones, own, k, chunk, workers), (zones, own, k, chunk, workers)
                        compared += 1
                        fewer += workers < pieces
                        old = (own is None or zones[own][0] > 0) and semantics.zone_runs_past(zones, own, k)
                        assert ours or not old, (zones, own, k, chunk, workers)   # the fallback is sound
                        beyond += bool(ours) and not old
    return compared, fewer, beyond


def test_the_exact_runs_equal_the_brute_force():
    """Every split of up to 4 nodes over up to three zones, chunks of 1 to 3: equal, not only sound."""
    splits = [s for s in product(range(4), range(3), range(3)) if 0 < sum(s) <= 4]
    assert _differential(4, splits, 3, (1, 2, 3)) == COMPARED_FAST


COMPARED_FAST = (7672, 4648, 12)   # (compared, with more chunks than workers, beyond zone_runs_past)


@pytest.mark.slow
def test_the_exact_runs_equal_the_brute_force_on_more_splits():
    """Up to 5 nodes over up to three zones, chunks of 1 to 4."""
    splits = [s for s in product(range(4), range(3), range(3)) if 0 < sum(s) <= 5]
    assert _differential(5, splits, 3, (1, 2, 3, 4)) == COMPARED_SLOW


COMPARED_SLOW = (40624, 24976, 141)


def _sequential(zones: dict[str, tuple[int, int, int]], own: Optional[str], k: int) -> bool:
    """One worker filtering the list alone, over every node-tree list and start: k + 1 feasible nodes
    (n among the first k; own None: any node) before an erring node. Written apart from both searches."""
    kinds = {z: "F" * (f - (z == own)) + "N" * (z == own) + "O" * o + "R" * r for z, (f, o, r) in zones.items()}
    for zone_order in permutations(zones):
        for per_zone in product(*(sorted(set(permutations(kinds[z]))) for z in zone_order)):
            listed = [seq[j] for j in range(max(map(len, per_zone), default=0)) for seq in per_zone if j < len(seq)]
            for start in range(len(listed)):
                found = []
                for kind in listed[start:] + listed[:start]:
                    if kind == "R":
                        break
                    if kind in "FN":
                        found.append(kind)
                    if len(found) > k:
                        if own is None or "N" in found[:k]:
                            return True
                        break
    return False


def test_one_worker_is_the_sequential_scan():
    """The brute force with one worker (it takes every chunk in turn, whatever their size) equals a
    plain sequential scan: its model of a worker taking several chunks is the scheduler's."""
    checked = 0
    splits = [s for s in product(range(3), range(2), range(3)) if 0 < sum(s) <= 3]
    for a, b in product(splits, [None] + splits):
        zones = {"a": a} if b is None else {"a": a, "b": b}
        nodes = sum(map(sum, zones.values()))
        if nodes > 5 or not any(r for _, _, r in zones.values()) or not a[0]:
            continue
        for k, chunk, own in product(range(1, nodes), (1, 2, 3), ("a", None)):
            assert brute_runs_past(zones, own, k, chunk, 1) == _sequential(zones, own, k), (zones, own, k, chunk)
            checked += 1
    assert checked == CHECKED_SEQUENTIAL


CHECKED_SEQUENTIAL = 1338


def _sampled(seed: int, cases: int, max_nodes: int, zone_counts: tuple[int, ...]
             ) -> tuple[int, int, int]:
    """``cases`` seeded draws: 2 to 5 zones of unequal (or equal) sizes, kinds spread at random, k
    mostly at the node count's edge (k = nodes - 1 or - 2: every feasible node but one or two must be
    counted), chunks of 1 to 3 (a short last chunk where they do not divide the nodes) and 1, 2 or
    one worker a chunk; n in zone a or any node. (compared, true, with more chunks than workers)."""
    rng = Random(seed)
    compared = true = fewer = 0
    while compared < cases:
        count = rng.choice(zone_counts)
        nodes = rng.randint(count + 1, max_nodes)
        cuts = sorted(rng.sample(range(1, nodes), count - 1))
        zones = {}
        for name, size in zip("abcde", [b - a for a, b in zip([0, *cuts], [*cuts, nodes])]):
            f = rng.randint(0, size)
            r = rng.randint(0, size - f)
            zones[name] = (f, size - f - r, r)
        if not any(r for _, _, r in zones.values()) or sum(f for f, _, _ in zones.values()) < 2:
            continue
        k = rng.choice([nodes - 1, nodes - 2, rng.randint(1, nodes - 1)])
        chunk = rng.randint(1, 3)
        pieces = -(-nodes // chunk)
        workers = rng.choice(sorted({1, 2, pieces} & set(range(1, pieces + 1))))
        own = rng.choice(["a", None])
        if k < 1 or (own and not zones["a"][0]):
            continue
        ours = runs_past(tuple(zones.values()), 0 if own else None, k, chunk, workers)
        assert ours == brute_runs_past(zones, own, k, chunk, workers), (zones, own, k, chunk, workers)
        compared += 1
        true += bool(ours)
        fewer += workers < pieces
    return compared, true, fewer


def test_many_unequal_zones_and_k_at_the_edge_equal_the_brute_force():
    """Up to 7 nodes in 2 to 5 zones of any sizes, k mostly nodes - 1 or - 2: equal to the brute force."""
    assert _sampled(15, 400, 7, (2, 3, 4, 5)) == SAMPLED_FAST


SAMPLED_FAST = (400, 84, 259)


@pytest.mark.slow
def test_many_unequal_zones_and_k_at_the_edge_equal_the_brute_force_on_more_nodes():
    """Up to 8 nodes in 3 to 5 zones."""
    assert _sampled(16, 600, 8, (3, 4, 5)) == SAMPLED_SLOW


SAMPLED_SLOW = (600, 106, 388)


def test_segments_cover_is_necessary():
    """``segments_cover`` and ``windows_cover`` never refuse a split where the brute force finds a run (any node), and it
    refuses some where every run meets an erring node (there the exact search answers at any size):
    zones a and b of up to 6 nodes each, 7 in all, in either order of sizes (the larger zone's
    erring nodes bound the smaller's by the size difference more), up to 3 zones of up to 6 nodes and
    4 zones of 2 nodes (equal sizes: where the stretches end counts too);
    chunks 1 to 3, one to three workers (as many unfiltered stretches at most), every k."""
    refused = 0
    splits = [s for s in product(range(5), range(3), range(5)) if 0 < sum(s) <= 6]
    combos = [c for c in product(splits, repeat=2) if sum(map(sum, c)) <= 7]
    combos += [c for c in combinations_with_replacement([s for s in splits if sum(s) <= 2], 3) if sum(map(sum, c)) <= 6]
    combos += list(combinations_with_replacement([s for s in splits if sum(s) == 2], 4))   # equal: windows_cover
    for combo in combos:
        zones = dict(zip("abc", combo))
        nodes = sum(map(sum, combo))
        if not any(r for _, _, r in combo):
            continue
        for k, chunk, workers in product(range(1, nodes), (1, 2, 3), (1, 2, 3)):
            spare = sum(f for f, _, _ in combo) - k - 1
            segments = min(workers, -(-nodes // chunk))
            if spare >= 0 and not (segments_cover(combo, spare, segments) and windows_cover(combo, spare, chunk, segments)):
                assert not brute_runs_past(zones, None, k, chunk, workers), (zones, k, chunk, workers)
                refused += 1
    assert refused == REFUSED


REFUSED = 301


def test_the_narrowed_search_is_sound():
    """``narrowed_runs_past`` (the exact search's questions on a few lists, a few states kept a chunk,
    tried first at any size) finds only runs the brute force finds, here narrowed to 2 lists and 2
    states a chunk so that it misses some: every split of up to 5 nodes over 2 or 3 zones with an
    erring node, chunks 1 to 3, workers 1, 2 and one a chunk, every k, n in zone a or any node.
    (found, missed)."""
    found = missed = 0
    splits = [s for s in product(range(4), range(3), range(3)) if 0 < sum(s) <= 5]
    for count in (2, 3):
        for combo in combinations_with_replacement(splits, count):
            zones = dict(zip("abc", combo))
            nodes = sum(map(sum, combo))
            if nodes > 5 or not any(r for _, _, r in combo) or not combo[0][0]:
                continue
            for k, chunk, workers, own in product(range(1, nodes), (1, 2, 3), (1, 2, 5), ("a", None)):
                ours = narrowed_runs_past(combo, 0 if own else None, k, chunk, workers, lists=2, states=2)
                truth = brute_runs_past(zones, own, k, chunk, workers)
                assert truth or not ours, (zones, own, k, chunk, workers)
                found += ours
                missed += truth and not ours
    assert (found, missed) == NARROWED, (found, missed)


NARROWED = (978, 12)
