"""Preprocessing steps against the explicit engine, and oracle tests of the encoding."""

from __future__ import annotations

import itertools
import random

import pytest

from symreach import semantics
from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import (AFFINITY_FREE, MONOTONE, PSPACE_HARD, affinity_cone,
                                           identity, preprocess)
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.bdd import BddEngine
from symreach.solvers.bdd_images import SymbolicSystem
from symreach.solvers.explicit import ExplicitEngine
from tests.engine_suite import aff, chain, doc, term
from tests.random_instances import random_doc


def explicit(inst):
    return ExplicitEngine().check(inst).verdict


# ---- cone of influence ----------------------------------------------------------

def noisy_chain(profile, capacity, blocker_initial=True):
    """The section 2.6 chain plus a type outside the cone: 'noise' with
    anti-affinity against b and one cpu, initially on the node."""
    d = chain(profile, capacity)
    d["podTypes"].append({"name": "noise", "labels": {"app": "noise"}, "requests": {"cpu": "1"},
                          "affinity": aff(term({"app": "b"}), kind="podAntiAffinity")})
    if blocker_initial:
        d["initial"] = [{"pod": "noise", "node": "n", "count": 2}]
    return d


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
@pytest.mark.parametrize("capacity", [1, 2, 3])
def test_cone_drops_unrelated_types_and_deletes_them_when_they_block(profile, capacity):
    inst = load_document(noisy_chain(profile, capacity))
    cone = affinity_cone(inst, inst.query)
    assert inst.type_index("noise") not in cone and len(cone) == 3
    result = BddEngine(fast_paths=False).check(inst)
    assert result.verdict is explicit(inst)
    assert result.stats["cone_types"] == 3
    if result.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, result.trace, inst.query)
        # the noise pods hold capacity (and, in kubernetes, block b): they must go
        assert sum(1 for s in result.trace if s.pod == "noise" and s.op == "delete") == 2


def test_cone_keeps_spread_counted_and_kubernetes_witness_types():
    d = chain("kubernetes", 3)
    d["podTypes"][2]["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "x"}}}]
    d["podTypes"].append({"name": "x", "labels": {"app": "x"}, "requests": {"cpu": "1"}, "maxPerNode": 3})
    d["podTypes"].append({"name": "y", "labels": {"app": "y"}})
    inst = load_document(d)
    cone = affinity_cone(inst, inst.query)
    names = {inst.pod_types[t].name for t in cone}
    assert names == {"a", "b", "c", "x"}


# ---- static pruning and the may-be-present fixpoint ----------------------------------

@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_may_fixpoint_proves_unreachable(profile):
    """c needs b, b needs a, a never fits: the fixpoint is empty and decides at once."""
    d = chain(profile, 2)
    d["podTypes"][0]["requests"] = {"cpu": "3"}
    inst = load_document(d)
    pre = preprocess(inst, inst.query)
    assert pre.decided is not None and pre.decided.verdict is Verdict.NOT_DEPLOYABLE
    assert pre.stats["decided_by"] == "may-fixpoint"
    assert explicit(inst) is Verdict.NOT_DEPLOYABLE


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_may_fixpoint_prunes_variables(profile):
    """Two nodes; b cannot run on n2 (selector), so nothing depending on it there exists."""
    d = chain(profile, 1)
    d["nodes"] = [{"name": "n", "labels": {"ok": "1"}, "capacity": {"cpu": "1"}},
                  {"name": "n2", "capacity": {"cpu": "5"}}]
    d["podTypes"][1]["nodeSelector"] = {"ok": "1"}
    inst = load_document(d)
    pre = preprocess(inst, inst.query, try_greedy=False)
    assert pre.stats["pairs_may"] < pre.stats["pairs_cone"]
    system = compile_system(inst, inst.query, pre)
    assert len(system.state_vars) == pre.stats["pairs_may"]
    assert BddEngine(fast_paths=False).check(inst).verdict is explicit(inst)


# ---- fragments ---------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
@pytest.mark.parametrize("cpu", [1, 3])
def test_theorem_5_affinity_free(profile, cpu):
    """An affinity-free target behind anti-affinity and a full node: decided in one check."""
    d = doc(profile, [{"name": "n", "capacity": {"cpu": "2"}}], [
        {"name": "t", "labels": {"app": "t"}, "requests": {"cpu": str(cpu)},
         "affinity": aff(term({"app": "o"}), kind="podAntiAffinity")},
        {"name": "o", "labels": {"app": "o"}, "requests": {"cpu": "2"}, "creatable": False}],
        initial=[{"pod": "o", "node": "n", "count": 1}], query={"pod": "t", "node": "n"})
    inst = load_document(d)
    pre = preprocess(inst, inst.query)
    assert pre.fragment == AFFINITY_FREE
    assert pre.stats["decided_by"] == "theorem-5"
    assert pre.decided.verdict is explicit(inst)
    if pre.decided.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, pre.decided.trace, inst.query)


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_monotone_fragment_is_exact(profile):
    inst = load_document(chain(profile, 5))
    pre = preprocess(inst, inst.query)
    assert pre.fragment == MONOTONE
    assert pre.decided.verdict is Verdict.DEPLOYABLE is explicit(inst)
    semantics.replay(inst, pre.decided.trace, inst.query)
    binding = load_document(chain(profile, 2))
    assert preprocess(binding, binding.query).fragment == PSPACE_HARD


def test_preprocessing_never_contradicts_explicit():
    decided = 0
    for seed in range(300):
        inst = load_document(random_doc(seed + 1000))
        pre = preprocess(inst, inst.query)
        if pre.decided is None:
            continue
        decided += 1
        assert pre.decided.verdict is explicit(inst), (seed, pre.stats)
        if pre.decided.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, pre.decided.trace, inst.query)
    assert decided > 50


# ---- oracle: compiled guards == semantics.hard on every configuration -------------------

def _configs(inst, system, limit, rng):
    ranges = []
    pairs = sorted(system.pairs)
    for p in pairs:
        pv = system.pairs[p]
        ranges.append(range(pv.bound + 1) if pv.counted else range(2))
    total = 1
    for r in ranges:
        total *= len(r)
    if total <= limit:
        combos = itertools.product(*ranges)
    else:
        combos = (tuple(rng.choice(r) for r in ranges) for _ in range(limit))
    for combo in combos:
        sigma = [0] * inst.num_pairs
        state = {}
        for p, c in zip(pairs, combo):
            sigma[inst.pair(*p)] = c
            pv = system.pairs[p]
            state[pv.present] = c > 0
            for j, b in enumerate(pv.count_bits):
                state[b] = bool(c >> j & 1)
        yield tuple(sigma), state


@pytest.mark.parametrize("seed", range(60))
def test_guard_oracle(seed):
    rng = random.Random(seed)
    inst = load_document(random_doc(seed + 5000))
    system = compile_system(inst, inst.query, identity(inst, inst.query))
    sym = SymbolicSystem(system)
    deploys = {a.pair: a for a in system.deploys()}
    for sigma, state in _configs(inst, system, 300, rng):
        names = {sym.names[v]: b for v, b in state.items()}
        for t in range(len(inst.pod_types)):
            for n in range(len(inst.nodes)):
                # Guards encode Hard and creatability; the maxPerNode cap lives in the
                # counter moves (pre cube count < bound), not in the guard.
                want = inst.pod_types[t].creatable and semantics.hard(inst, t, n, sigma)
                a = deploys.get((t, n))
                got_circuit = a is not None and system.circuit.evaluate(a.guard, state)
                got_bdd = a is not None and sym.bdd.let(names, sym.guards[system.actions.index(a)]) == sym.bdd.true
                assert got_circuit == want == got_bdd, (seed, t, n, sigma)
