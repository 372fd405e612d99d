"""The bit helpers of ``lazy_moves`` against their one-bit-at-a-time definitions."""

from __future__ import annotations

import random

from symreach.solvers.lazy_moves import Move, bit_indices, classes, from_bits, set_bits


def _naive_classes(moves, goals):
    """The partition by per-move signatures, as first written (one entry per mask use)."""
    signature: dict[int, list] = {}
    for i, move in enumerate(moves):
        for q in bit_indices(move.blockers):
            signature.setdefault(q, []).append(("b", i))
        for j, need in enumerate(move.needs):
            for q in bit_indices(need):
                signature.setdefault(q, []).append(("n", i, j))
    for k, goal in enumerate(goals):
        for q in bit_indices(goal):
            signature.setdefault(q, []).append(("g", k, q))
    first: dict[tuple, int] = {}
    return {q: first.setdefault(tuple(sig), q) for q, sig in sorted(signature.items())}


def test_from_bits_and_set_bits_round_trip_short_and_long_ints():
    rng = random.Random(7)
    for size in (0, 1, 5, 63, 64, 65, 300, 3000):
        bits = sorted(rng.sample(range(4 * size + 1), size))
        x = from_bits(bits)
        assert x == sum(1 << b for b in bits)
        assert set_bits(x) == bits == list(bit_indices(x))


def test_classes_equal_the_per_move_signature_partition():
    """Reading each distinct mask once gives the same classes and representatives,
    also when masks repeat across moves and across blockers and needs."""
    rng = random.Random(11)
    for _ in range(50):
        width = rng.choice((8, 40, 400))
        pool = [from_bits(rng.sample(range(width), rng.randint(1, width // 2))) for _ in range(6)]
        moves = [Move((i, 0), 1 << rng.randrange(width), rng.choice(pool + [0]),
                      tuple(rng.choice(pool) for _ in range(rng.randint(0, 2)))) for i in range(12)]
        goals = [from_bits(rng.sample(range(width), 2))]
        assert classes(moves, goals) == _naive_classes(moves, goals)
