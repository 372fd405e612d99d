"""Counter abstraction of interchangeable nodes (symreach.encodings.counters).

Differential: on random instances whose nodes come in pools of 3-12 copies
(both profiles), the BDD engine on the counter system agrees with the BDD
engine on the concrete system and with the explicit engine, every witness
replays, and every counter invariant passes its independent checker.
"""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from tests.random_instances import random_doc
from symreach import semantics
from symreach.certify import counter_invariant
from symreach.cli import cli
from symreach.encodings.counters import (
    AUTO_SWEEPS,
    MIN_POOL,
    build_system,
    compile_counters,
    decrement_cubes,
    increment_cubes,
    move_cubes,
)
from symreach.encodings.preprocess import preprocess
from symreach.encodings.system import PairVars
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.run import RunContext
from symreach.solvers.base import Limits
from symreach.solvers.bdd import BddEngine
from symreach.solvers.explicit import ExplicitEngine

FEATURES = {"capacity", "taints", "selector", "affinity", "anti", "ports", "creatable", "initial",
            "namespaces"}


def _value(pv: PairVars, state: dict[int, bool]) -> int:
    return sum(1 << j for j, b in enumerate(pv.count_bits) if state[b])


def _counter(base: int, size: int) -> PairVars:
    width = size.bit_length()
    return PairVars(base, tuple(range(base + 1, base + 1 + width)), size)


def _state(pv: PairVars, value: int) -> dict[int, bool]:
    out = {pv.present: value > 0}
    out.update({b: bool(value >> j & 1) for j, b in enumerate(pv.count_bits)})
    return out


@pytest.mark.parametrize("size", [2, 3, 4, 5, 7, 8, 12, 33])
def test_carry_cubes_move_exactly_one_node(size):
    src, dst = _counter(0, size), _counter(100, size)
    for a in range(size + 1):
        for b in range(size + 1 - a):
            state = {**_state(src, a), **_state(dst, b)}
            hits = [m for m in move_cubes(src, dst) if all(state[v] == x for v, x in m.pre)]
            if a == 0:
                assert hits == []
                continue
            assert len(hits) == 1, (a, b)
            m = hits[0]
            assert sorted(v for v, _ in m.pre) == sorted(v for v, _ in m.post)
            state.update(m.post)
            assert (_value(src, state), _value(dst, state)) == (a - 1, b + 1)
            assert state[src.present] == (a > 1) and state[dst.present]


def test_one_node_counters_are_single_bits():
    one = PairVars(7)
    assert decrement_cubes(one) == [(((7, True),), ((7, False),))]
    assert increment_cubes(one) == [(((7, False),), ((7, True),))]


def _pool_doc(profile: str, pool: int) -> dict:
    """b needs a in its zone; a's anti-affinity repels b (kubernetes: from the running a)."""
    nodes = [{"name": "q", "labels": {"zone": "z"}, "capacity": {"cpu": "2"}}]
    nodes += [{"name": f"p{i}", "labels": {"zone": "z", "pool": "p"}, "capacity": {"cpu": "2"}}
              for i in range(pool)]
    return {"version": 1, "semantics": profile, "nodes": nodes,
            "podTypes": [
                {"name": "a", "labels": {"app": "a"}, "requests": {"cpu": "1"},
                 "nodeSelector": {"pool": "p"},
                 "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": "zone"}]}}},
                {"name": "b", "labels": {"app": "b"}, "requests": {"cpu": "1"},
                 "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}]}}}],
            "query": {"pod": "b", "node": "q"}}


@pytest.mark.parametrize("profile,want", [("paper", Verdict.DEPLOYABLE),
                                          ("kubernetes", Verdict.NOT_DEPLOYABLE)])
def test_pool_instance_both_profiles(profile, want):
    inst = load_document(_pool_doc(profile, 20))
    on = BddEngine(fast_paths=False).check(inst, inst.query, RunContext.within(120, counters="on"))
    off = BddEngine(fast_paths=False).check(inst, inst.query, RunContext.within(120, counters="off"))
    assert on.verdict is off.verdict is want
    assert on.stats["counters"].startswith("on") and off.stats["counters"].startswith("off")
    assert on.stats["state_vars"] < off.stats["state_vars"]
    if want is Verdict.DEPLOYABLE:
        semantics.replay(inst, on.trace, inst.query)
    else:
        assert on.certificate["format"] == counter_invariant.FORMAT
        assert counter_invariant.check_certificate(inst, on.certificate)[0]


def test_tampered_counter_invariants_are_rejected():
    inst = load_document(_pool_doc("kubernetes", 10))
    cert = BddEngine(fast_paths=False).check(inst, inst.query, RunContext(counters="on")).certificate
    assert counter_invariant.check_certificate(inst, cert)[0]
    assert len(cert["states"]) >= 2
    for k in range(len(cert["states"])):  # dropping any state breaks sigma0 or closure
        bad = copy.deepcopy(cert)
        del bad["states"][k]
        assert not counter_invariant.check_certificate(inst, bad)[0], k
    bad = copy.deepcopy(cert)  # the query node joins the pool: no longer a group of one
    q = next(g for g in bad["groups"] if g == ["q"])
    bad["groups"].remove(q)
    next(g for g in bad["groups"] if len(g) > 1).append("q")
    ok, why = counter_invariant.check_certificate(inst, bad)
    assert not ok and "target" in why
    bad = copy.deepcopy(cert)  # a cone that misses the witness type
    bad["cone"] = ["b"]
    assert not counter_invariant.check_certificate(inst, bad)[0]
    bad = copy.deepcopy(cert)  # counts that do not add up
    bad["states"][0][0][2] += 1
    assert not counter_invariant.check_certificate(inst, bad)[0]


def test_non_interchangeable_group_is_rejected():
    doc = _pool_doc("kubernetes", 4)
    doc["nodes"][2]["capacity"] = {"cpu": "1"}  # p1 differs from its pool
    inst = load_document(doc)
    cert = BddEngine(fast_paths=False).check(inst, inst.query, RunContext(counters="on")).certificate
    assert counter_invariant.check_certificate(inst, cert)[0]
    bad = copy.deepcopy(cert)
    lone = next(g for g in bad["groups"] if g == ["p1"])
    bad["groups"].remove(lone)
    next(g for g in bad["groups"] if len(g) > 1).append("p1")
    ok, why = counter_invariant.check_certificate(inst, bad)
    assert not ok and "interchangeable" in why


def test_auto_uses_counters_only_on_large_pools_and_falls_back_on_spread():
    small = load_document(_pool_doc("paper", MIN_POOL - 1))
    big = load_document(_pool_doc("paper", MIN_POOL))
    assert build_system(small, small.query, preprocess(small, small.query)).stats["counters"].startswith("off")
    assert build_system(big, big.query, preprocess(big, big.query)).stats["counters"].startswith("on")
    doc = _pool_doc("kubernetes", 10)
    doc["podTypes"][1]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "b"}}}]
    doc["nodes"] = [{**n, "capacity": {"cpu": "2", "pods": 4}} for n in doc["nodes"]]
    spread = load_document(doc)
    res = BddEngine(fast_paths=False).check(spread, spread.query, RunContext(counters="on"))
    assert res.stats["counters"].startswith("fallback") and "spread" in res.stats["counters"]
    assert res.verdict is Verdict.NOT_DEPLOYABLE


def test_auto_tries_counters_for_a_few_sweeps_then_the_concrete_encoding():
    """Deterministic (sweeps, not seconds): the witness comes from the counters in one
    sweep; the proof of not-deployable would take a sweep per pool node there."""
    found = load_document(_pool_doc("paper", MIN_POOL))
    res = BddEngine(fast_paths=False).check(found, found.query, Limits())
    assert res.verdict is Verdict.DEPLOYABLE and res.stats["counters"].startswith("on")
    semantics.replay(found, res.trace, found.query)
    never = load_document(_pool_doc("kubernetes", MIN_POOL))
    res = BddEngine(fast_paths=False).check(never, never.query, Limits())
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert res.stats["counters"].startswith(f"tried: undecided after {AUTO_SWEEPS}")
    assert res.certificate["format"] == "symreach-bdd-invariant/1"


def test_counter_system_is_much_smaller_on_a_large_pool():
    inst = load_document(_pool_doc("kubernetes", 200))
    pre = preprocess(inst, inst.query, try_greedy=False)
    cs = compile_counters(inst, inst.query, pre)
    assert cs.stats["largest_group"] == 200
    # 200 nodes x 2 types of presence bits become a few 8-bit counters
    assert len(cs.state_vars) < 40


def differential(seed: int, profile: str, replicas: int, explicit: bool = True) -> tuple[bool, bool]:
    """(counters used, explicit compared); asserts agreement and evidence."""
    doc = random_doc(seed, profile, features=FEATURES, replicas=replicas)
    inst = load_document(doc, f"seed{seed}")
    limits = RunContext.within(120, counters="on")
    on = BddEngine(fast_paths=False).check(inst, inst.query, limits)
    off = BddEngine(fast_paths=False).check(inst, inst.query, RunContext.within(120, counters="off"))
    assert on.verdict is off.verdict, (seed, profile, on.stats.get("counters"))
    assert on.verdict is not Verdict.UNKNOWN
    used = str(on.stats.get("counters", "")).startswith("on")
    if on.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, on.trace, inst.query)
    elif used and on.certificate is None:  # too many states to list: labelled, never silent
        assert on.stats["certificate"].startswith("none from the counter abstraction")
    elif used:
        assert on.certificate["format"] == counter_invariant.FORMAT
        assert counter_invariant.check_certificate(inst, on.certificate)[0]
    if not explicit:
        return used, False
    ex = ExplicitEngine(symmetry=True).check(inst, inst.query, Limits(timeout_s=60, max_states=3_000))
    if ex.verdict is not Verdict.UNKNOWN:
        assert ex.verdict is on.verdict, (seed, profile)
    return used, ex.verdict is not Verdict.UNKNOWN


@pytest.mark.parametrize("seed", range(8))
def test_differential_random_pools(seed):
    used = [differential(seed, profile, 3 + (seed * 5 + k) % 10)[0]
            for k, profile in enumerate(("paper", "kubernetes"))]
    assert isinstance(used[0], bool)


def test_differential_random_pools_use_counters_often():
    """Guards the differential test against comparing the concrete system with itself."""
    used = [differential(seed, "kubernetes", 4, explicit=False)[0] for seed in range(100, 106)]
    assert sum(used) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("block", range(10))
def test_differential_random_pools_many(block):
    for seed in range(1000 + 20 * block, 1020 + 20 * block):
        for k, profile in enumerate(("paper", "kubernetes")):
            differential(seed, profile, 3 + (seed + k) % 10)


def test_cli_counters_option_and_certificate(tmp_path):
    """Every a of the zone repels b from it, so no a can ever witness b: the
    may-be-present fixpoint (``encodings.coexist``) decides this instance before
    any engine, whatever ``--counters`` says; the engine-level runs are in
    ``test_pool_instance_both_profiles`` (fast paths off)."""
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(_pool_doc("kubernetes", 12)))
    cert = tmp_path / "cert.json"
    runner = CliRunner()
    for counters in ("on", "off"):
        res = runner.invoke(cli, ["check", str(path), "--engine", "bdd", "--counters", counters,
                                  "--json", "--cert-out", str(cert)])
        assert res.exit_code == 1, res.output
        assert json.loads(res.output)["verdict"] == "not-deployable"
        res = runner.invoke(cli, ["certify", str(path), str(cert)])
        assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["check", str(path), "--engine", "bdd", "--counters", "on", "--why"])
    assert res.exit_code == 1 and "can run there beside it" in res.output
