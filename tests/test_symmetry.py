"""Interchangeable nodes: classes, the matrix with and without symmetry, and the
explicit engine with and without orbit canonicalisation, against unreduced engines."""

from __future__ import annotations

import pytest

from symreach.encodings.symmetry import canonical, node_classes, rename_trace
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.model import Query
from symreach.result import Verdict
from symreach import semantics
from symreach.solvers.base import Limits
from symreach.solvers.bdd import BddEngine
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.matrix import DEPLOYABLE, UNKNOWN, matrix_table
from tests.random_instances import random_doc

SEEDS = range(40)
LIMIT = Limits(max_states=20000)


def replicated(seed: int):
    return load_document(random_doc(seed + 9100, replicas=2 + seed % 2))


def test_pool_nodes_collapse_and_named_nodes_stay_alone():
    doc = generate_cluster(60, 12, seed=3, pools=4)
    doc["podTypes"][0]["nodeName"] = doc["nodes"][10]["name"]
    doc["initial"] = []
    inst = load_document(doc)
    classes = node_classes(inst)
    assert sum(len(c) for c in classes) == len(inst.nodes)
    assert (10,) in classes                       # named by nodeName: its own class
    assert len(classes) < len(inst.nodes) // 3     # pools x zones, not one per node
    for cls in classes:
        pools = {inst.nodes[n].labels["pool"] for n in cls}
        zones = {inst.nodes[n].labels["topology.kubernetes.io/zone"] for n in cls}
        assert len(pools) == 1 and len(zones) <= len(cls)


def test_initial_pods_separate_nodes_only_within_the_cone():
    doc = random_doc(5, replicas=3)
    doc["initial"] = [{"pod": doc["podTypes"][0]["name"], "node": doc["nodes"][0]["name"]}]
    inst = load_document(doc)
    everything = node_classes(inst)
    assert (0,) in everything                      # its initial pod tells it apart
    others = [u for u in range(len(inst.pod_types)) if u != 0]
    without = node_classes(inst, types=others)
    assert all(0 not in c or len(c) > 1 for c in without) or len(inst.nodes) == 1 or \
        any(inst.static_block[u][0] != inst.static_block[u][1] for u in others)


@pytest.mark.parametrize("seed", SEEDS)
def test_matrix_with_symmetry_agrees_with_without_and_with_explicit(seed):
    inst = replicated(seed)
    sym = matrix_table(inst, symmetry=True)
    plain = matrix_table(inst, symmetry=False)
    assert dict(sym.cells) == dict(plain.cells), seed
    assert sym.stats["classes"] <= plain.stats["classes"]
    for (t, n), verdict in sym.cells.items():
        want = ExplicitEngine().check(inst, Query((frozenset({(t, n)}),)), LIMIT).verdict
        if want is not Verdict.UNKNOWN and verdict != UNKNOWN:
            assert verdict == want.value, (seed, t, n)
        if verdict == DEPLOYABLE:
            trace = sym.witness(inst, t, n)                 # renamed, lifted, replayed
            semantics.replay(inst, trace, Query((frozenset({(t, n)}),)))


def test_fixpoint_method_agrees_with_cells():
    for seed in range(8):
        inst = replicated(seed)
        cells = matrix_table(inst)
        fix = matrix_table(inst, method="fixpoint")
        assert dict(cells.cells) == dict(fix.cells), seed


@pytest.mark.parametrize("seed", SEEDS)
def test_explicit_canonicalisation_agrees_with_plain_and_bdd(seed):
    inst = replicated(seed)
    plain = ExplicitEngine().check(inst, inst.query, LIMIT)
    orbits = ExplicitEngine(symmetry=True).check(inst, inst.query, LIMIT)
    bdd = BddEngine().check(inst, inst.query, Limits(timeout_s=120))
    if plain.verdict is not Verdict.UNKNOWN:
        assert orbits.verdict is plain.verdict, seed
        assert orbits.stats["states"] <= plain.stats["states"]
    if bdd.verdict is not Verdict.UNKNOWN and orbits.verdict is not Verdict.UNKNOWN:
        assert orbits.verdict is bdd.verdict, seed
    # check() replays every witness; make sure it is a real one here too
    if orbits.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, orbits.trace, inst.query)


def test_canonicalisation_shrinks_state_space_of_a_pool():
    nodes = [{"name": f"n{i}", "labels": {"pool": "p"}, "capacity": {"cpu": "1"}} for i in range(4)]
    doc = {"version": 1, "semantics": "paper", "nodes": nodes,
           "podTypes": [{"name": "a", "requests": {"cpu": "1"}},
                        {"name": "b", "requests": {"cpu": "5"}}],
           "query": {"pod": "b", "node": "n0"}}
    inst = load_document(doc)
    plain = ExplicitEngine().check(inst, inst.query, LIMIT)
    orbits = ExplicitEngine(symmetry=True).check(inst, inst.query, LIMIT)
    assert plain.verdict is orbits.verdict is Verdict.NOT_DEPLOYABLE
    # a on or off each of 4 nodes; with n0 fixed (the query's), n1..n3 count only by number
    assert (plain.stats["states"], orbits.stats["states"]) == (16, 8)


def test_canonical_form_is_an_orbit_invariant_and_rename_swaps():
    inst = load_document(random_doc(3, replicas=3, features={"capacity"}))
    classes = node_classes(inst)
    big = max(classes, key=len)
    assert len(big) >= 2
    a, b = big[0], big[1]
    sigma = [0] * inst.num_pairs
    sigma[inst.pair(0, a)] = 1
    swapped = [0] * inst.num_pairs
    swapped[inst.pair(0, b)] = 1
    assert canonical(inst, classes, tuple(sigma))[0] == canonical(inst, classes, tuple(swapped))[0]
    step = semantics.step_of(inst, "deploy", 0, a)
    assert rename_trace(inst, (step,), a, b)[0].node == inst.nodes[b].name
