"""Oracle tests of the CNF lowering: for small circuits, every assignment agrees."""

from __future__ import annotations

import itertools
import random

from pysat.solvers import Solver

from symreach.encodings.circuit import Circuit
from symreach.encodings.cnf import CnfLowering, PB_FALSE, PB_TRUE, normalise_pb, pb_bdd
from symreach.encodings.compile import compile_system
from symreach.encodings.system import TransitionSystem
from tests.sat_helpers import pyramid_instance


def _eval_bdd(root, nodes, xs):
    while root not in (PB_TRUE, PB_FALSE):
        i, hi, lo = nodes[root]
        root = hi if xs[i] else lo
    return root == PB_TRUE


def test_pb_bdd_matches_closed_form():
    rng = random.Random(1)
    for _ in range(200):
        n = rng.randint(1, 6)
        ws = sorted((rng.randint(0, 9) for _ in range(n)), reverse=True)
        bound = rng.randint(-2, sum(ws) + 2)
        root, nodes = pb_bdd(ws, bound)
        for xs in itertools.product([0, 1], repeat=n):
            assert _eval_bdd(root, nodes, xs) == (sum(w * x for w, x in zip(ws, xs)) <= bound)


def _random_circuit(rng: random.Random, c: Circuit, xs: list[int], depth: int) -> int:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(xs)
    kind = rng.choice(["and", "or", "not", "pb", "pb"])
    if kind == "not":
        return c.not_(_random_circuit(rng, c, xs, depth - 1))
    if kind == "pb":
        terms = [(rng.choice([-3, -2, -1, 1, 2, 3, 5]), x) for x in rng.sample(xs, rng.randint(2, len(xs)))]
        return c.pb_le(terms, rng.randint(-3, 6))
    kids = [_random_circuit(rng, c, xs, depth - 1) for _ in range(rng.randint(2, 3))]
    return c.and_(*kids) if kind == "and" else c.or_(*kids)


def test_tseitin_agrees_with_evaluate_on_every_assignment():
    rng = random.Random(7)
    for _ in range(60):
        c = Circuit()
        xs = [c.var(("present", t, 0)) for t in range(5)]
        root = _random_circuit(rng, c, xs, 3)
        system = TransitionSystem(c, tuple(xs), {}, {x: False for x in xs}, (), root, (), ())
        low = CnfLowering(system)
        lit = low.lit(root, 0)
        with Solver(name="minisat22", bootstrap_with=low.flush()) as s:
            for vals in itertools.product([False, True], repeat=5):
                assume = [low.var(x, 0) if v else -low.var(x, 0) for x, v in zip(xs, vals)]
                want = c.evaluate(root, dict(zip(xs, vals)))
                assert s.solve(assumptions=assume + [lit]) == want
                assert s.solve(assumptions=assume + [-lit]) == (not want)


def test_normalise_pb_keeps_meaning():
    children, weights, bound = (1, 2, 3), (3, -2, 1), 1
    terms, b2 = normalise_pb(children, weights, bound)
    for vals in itertools.product([0, 1], repeat=3):
        v = dict(zip(children, vals))
        lhs = sum(w * (v[x] if pos else 1 - v[x]) for w, x, pos in terms)
        assert (lhs <= b2) == (sum(w * v[x] for w, x in zip(weights, children)) <= bound)


def _states(system):
    for bits in itertools.product([False, True], repeat=len(system.state_vars)):
        yield dict(zip(system.state_vars, bits))


def test_single_step_is_the_system_relation():
    inst = pyramid_instance(1, 2)
    system = compile_system(inst, inst.query)
    low = CnfLowering(system)
    low.single_step(0, 1, stutter=True)
    with Solver(name="minisat22", bootstrap_with=low.flush()) as s:
        for a in _states(system):
            succ = {tuple(sorted(a.items()))}
            for act in system.actions:
                nxt = system.successor(act, a)
                if nxt is not None:
                    succ.add(tuple(sorted(nxt.items())))
            for b in _states(system):
                assume = [low.var(v, 0) if a[v] else -low.var(v, 0) for v in system.state_vars]
                assume += [low.var(v, 1) if b[v] else -low.var(v, 1) for v in system.state_vars]
                assert s.solve(assumptions=assume) == (tuple(sorted(b.items())) in succ)


def test_bmc_step_is_deletions_then_one_deploy():
    inst = pyramid_instance(1, 2)
    system = compile_system(inst, inst.query)
    low = CnfLowering(system)
    low.bmc_step(0)
    deploys = system.deploys()
    with Solver(name="minisat22", bootstrap_with=low.flush()) as s:
        for a in _states(system):
            succ = set()
            for keep in _states(system):  # every subset of a's pods
                if any(keep[v] and not a[v] for v in system.state_vars):
                    continue
                succ.add(tuple(sorted(keep.items())))
                for act in deploys:
                    nxt = system.successor(act, keep)
                    if nxt is not None:
                        succ.add(tuple(sorted(nxt.items())))
            for b in _states(system):
                assume = [low.var(v, 0) if a[v] else -low.var(v, 0) for v in system.state_vars]
                assume += [low.var(v, 1) if b[v] else -low.var(v, 1) for v in system.state_vars]
                assert s.solve(assumptions=assume) == (tuple(sorted(b.items())) in succ)
