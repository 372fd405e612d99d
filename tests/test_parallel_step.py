"""Parallel BMC steps (``symreach.encodings.parallel_step``).

Oracle test of the encoding: on small random systems (both profiles), from
every reachable state, every model of one parallel step is enumerated; its
deletions and its deploys in the fixed order must replay as single
transitions of the system and end in the step's successor state; and every
single-action step (deletions, then at most one deploy) must be a parallel
step too. Engine tests: parallel BMC witnesses replay and are never deeper
than single-step ones, and strictly shallower where deploys are independent.
"""

from __future__ import annotations

from collections import deque

import pytest
from pysat.solvers import Solver

from symreach import semantics
from symreach.encodings.circuit import Circuit
from symreach.encodings.cnf import CnfLowering
from symreach.encodings.parallel_step import Monotonicity, ParallelSteps
from symreach.frontends.petri_net import net_from_json
from symreach.frontends.reduction_petri import encode_petri
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.solvers.bmc import BmcEngine
from tests.random_instances import random_doc, random_systems
from tests.sat_helpers import blockers_instance, pyramid_instance


def _key(state):
    return tuple(sorted(state.items()))


def _reachable(system, cap: int = 12):
    start = dict(system.initial)
    seen = {_key(start): start}
    queue = deque([start])
    while queue and len(seen) < cap:
        s = queue.popleft()
        for act in system.actions:
            nxt = system.successor(act, s)
            if nxt is not None and _key(nxt) not in seen:
                seen[_key(nxt)] = nxt
                queue.append(nxt)
    return list(seen.values())


def _check_system(system) -> int:
    """Enumerate every parallel step from every reachable state; returns how many
    steps had two or more deploys."""
    multi = 0
    for state in _reachable(system):
        low = CnfLowering(system)
        par = ParallelSteps(low)
        sel_of, mid = par.step(0)
        for v, b in state.items():
            low.clause([low.var(v, 0) if b else -low.var(v, 0)])
        proj = [low.var(v, mid) for v in system.state_vars] + list(sel_of.values())
        successors = set()
        with Solver(name="minisat22", bootstrap_with=low.flush()) as s:
            while s.solve():
                true = {x for x in s.get_model() if x > 0}
                m = low.state_of(true, mid)
                after = low.state_of(true, 1)
                # deletions: m is state with some pods removed
                assert all(state[pv.present] or not m[pv.present] for pv in system.pairs.values())
                chosen = par.linearise({i for i, x in sel_of.items() if x in true})
                multi += len(chosen) >= 2
                cur = m
                for i in chosen:
                    nxt = system.successor(system.actions[i], cur)
                    assert nxt is not None, f"deploy {system.step(system.actions[i])} disabled after linearisation"
                    cur = nxt
                assert cur == after
                successors.add(_key(after))
                s.add_clause([-x if x in true else x for x in proj])
        # every single step (any deletions, then at most one deploy) is a parallel step
        single = CnfLowering(system)
        single.bmc_step(0)
        for v, b in state.items():
            single.clause([single.var(v, 0) if b else -single.var(v, 0)])
        with Solver(name="minisat22", bootstrap_with=single.flush()) as s:
            proj1 = [single.var(v, 1) for v in system.state_vars]
            while s.solve():
                true = {x for x in s.get_model() if x > 0}
                after = single.state_of(true, 1)
                assert _key(after) in successors
                s.add_clause([-x if x in true else x for x in proj1])
    return multi


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_every_parallel_step_linearises(profile):
    checked = multi = 0
    for _, system in random_systems(profile, range(120)):
        if len(system.state_vars) > 6:
            continue
        multi += _check_system(system)
        checked += 1
    assert checked >= 10
    assert multi > 0  # the test saw real parallelism


def test_monotonicity_sets():
    c = Circuit()
    x, y, z = (c.var(("present", i, 0)) for i in range(3))
    mono = Monotonicity(c)
    g = c.and_(x, c.not_(y), c.pb_le([(2, x), (-1, z)], 1))
    down, up = mono.sets(g)
    assert down == {x, y}      # y under NOT; x with positive weight in <=
    assert up == {x, z}        # z with negative weight


def _depth(inst, parallel: bool):
    res = BmcEngine(parallel=parallel, fast_paths=False).check(inst, run=Limits(max_depth=40))
    assert res.verdict is Verdict.DEPLOYABLE, res.reason
    semantics.replay(inst, res.trace, inst.query)
    return res.stats["depth"]


def _needs_two_instance(profile: str) -> dict:
    """t needs a pod of a and a pod of b on its node: single steps 3, parallel 2."""
    def aff(app):
        return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    types = [{"name": x, "labels": {"app": x}, "requests": {"cpu": "0"}} for x in ("a", "b")]
    types.append({"name": "t", "labels": {"app": "t"}, "requests": {"cpu": "0"},
                  "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                               [aff("a"), aff("b")]}}})
    return {"version": 1, "semantics": profile, "nodes": [{"name": "n0", "capacity": {"cpu": "4"}}],
            "podTypes": types, "query": {"pod": "t", "node": "n0"}}


def test_independent_deploys_share_a_step():
    # (per-term witnesses: the kubernetes profile would need one pod matching both terms)
    inst = load_document(_needs_two_instance("paper"))
    assert (_depth(inst, False), _depth(inst, True)) == (3, 2)


def test_capacity_keeps_deploys_apart():
    # the pebble bound is a capacity: two pebbles in one step could exceed it, so
    # the step conflicts (the guard would not stay true in every order)
    inst = pyramid_instance(2, 4)
    assert _depth(inst, True) == _depth(inst, False)


def test_blockers_deleted_and_redeployed():
    inst = load_document(blockers_instance(4))
    assert _depth(inst, True) <= _depth(inst, False)


def test_fork_transition_produces_in_one_step():
    # t0: a -> b, c, d; goal needs a firing of t1: b, c, d -> g
    net = net_from_json({"places": ["a", "b", "c", "d", "g"], "initial": ["a"],
                         "transitions": [{"name": "t0", "pre": ["a"], "post": ["b", "c", "d"]},
                                         {"name": "t1", "pre": ["b", "c", "d"], "post": ["g"]}]})
    inst = load_document(encode_petri(net, "g"))
    single, par = _depth(inst, False), _depth(inst, True)
    assert par <= single - 2   # the three produced places share one step


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_parallel_never_deeper_than_single(profile):
    checked = 0
    for seed in range(100, 160):  # every seed's document loads: an InputError fails the test
        inst = load_document(random_doc(seed, profile))
        checked += 1
        single = BmcEngine(parallel=False, fast_paths=False).check(inst, run=Limits(max_depth=8))
        par = BmcEngine(parallel=True, fast_paths=False).check(inst, run=Limits(max_depth=8))
        assert par.verdict is single.verdict
        if par.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, par.trace, inst.query)
            assert par.stats.get("depth", 0) <= single.stats.get("depth", 0)
    assert checked == 60
