"""The circuit language: simplification rules and the BDD lowering of PB nodes (oracle)."""

from __future__ import annotations

import itertools
import random

import pytest

from symreach.encodings.circuit import AND, PB, Circuit
from symreach.encodings.system import TransitionSystem
from symreach.solvers.bdd_images import SymbolicSystem


def test_hash_consing_and_folding():
    c = Circuit()
    x, y = c.var("x"), c.var("y")
    assert c.var("x") == x
    assert c.and_(x, y) == c.and_(y, x, Circuit.TRUE)
    assert c.and_(x, c.not_(x)) == Circuit.FALSE
    assert c.or_(x, c.not_(x)) == Circuit.TRUE
    assert c.not_(c.not_(x)) == x
    assert c.and_(c.and_(x, y), x) == c.and_(x, y)
    assert c.kind(c.and_(x, y)) == AND


def test_pb_normalisation():
    c = Circuit()
    x, y, z = (c.var(n) for n in "xyz")
    assert c.pb_le([(1, x), (1, y)], 2) == Circuit.TRUE
    assert c.pb_le([(1, x), (1, y)], -1) == Circuit.FALSE
    assert c.pb_le([(3, x)], 1) == c.not_(x)
    assert c.pb_le([(-3, x)], -1) == x
    assert c.pb_le([(1, x), (-1, x), (2, y)], 1) == c.not_(y)  # x cancels
    assert c.pb_le([(5, x), (6, y)], 4) == c.and_(c.not_(x), c.not_(y))
    node = c.node(c.pb_le([(1, x), (1, y), (1, z)], 1))
    assert node.kind == PB and node.bound == 1 and len(node.children) == 3
    with pytest.raises(ValueError):
        c.pb_le([(1, c.and_(x, y))], 0)


@pytest.mark.parametrize("seed", range(40))
def test_pb_lowering_oracle(seed):
    """Random signed PB constraints: circuit evaluation, BDD and brute force agree."""
    rng = random.Random(seed)
    c = Circuit()
    xs = [c.var(("x", i)) for i in range(rng.randint(2, 6))]
    terms = [(rng.choice([-4, -2, -1, 1, 2, 3, 5]), rng.choice(xs)) for _ in range(rng.randint(2, 7))]
    bound = rng.randint(-5, 6)
    root = c.and_(c.pb_le(terms, bound), c.or_(xs[0], c.not_(xs[-1])))
    system = TransitionSystem(c, tuple(xs), {}, {x: False for x in xs}, (), root, (), ())
    sym = SymbolicSystem(system)
    for values in itertools.product([False, True], repeat=len(xs)):
        env = dict(zip(xs, values))
        want = sum(w for w, x in terms if env[x]) <= bound and (env[xs[0]] or not env[xs[-1]])
        assert c.evaluate(root, env) == want
        got = sym.bdd.let({sym.names[x]: v for x, v in env.items()}, sym.target) == sym.bdd.true
        assert got == want
