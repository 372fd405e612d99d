"""Big cells: the engine on a few nodes of the cone (``cells.reduced_witness`` on
``restrict_nodes``), and the per-cell memory bound (a cell out of memory is
``unknown``, the rest of the type and the matrix go on)."""

from __future__ import annotations

import random

import pytest

from symreach import semantics
from symreach.encodings.restrict_nodes import restrict_nodes
from symreach.loader import load_document
from symreach.model import Query
from symreach.result import Verdict
from symreach.solvers import cells
from symreach.solvers.base import Limits
from symreach.solvers.cudd_memory import MIN_CAP_BYTES, ceiling
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.matrix import matrix_table
from tests.random_instances import random_doc


def _spread_domains_met(inst, keep) -> bool:
    """Every domain of every spread topology keeps a node (else the minimum differs)."""
    for pod in inst.pod_types:
        for h in pod.spread:
            if any(not (members & keep) for members in h.topology.members):
                return False
    return True


def test_restrict_nodes_keeps_every_guard_on_the_kept_nodes():
    """With no pod on a dropped node and every spread domain met, every guard on a
    kept node reads the same in the cut instance as in the whole one."""
    compared = 0
    for seed in range(80):
        inst = load_document(random_doc(seed + 500, replicas=3))
        rng = random.Random(seed)
        keep = frozenset(n for n in range(len(inst.nodes)) if rng.random() < 0.6) or frozenset({0})
        if not _spread_domains_met(inst, keep):
            continue
        small = restrict_nodes(inst, keep)
        assert small is not None and [n.name for n in small.nodes] == [inst.nodes[n].name for n in sorted(keep)]
        new_of = {o: i for i, o in enumerate(sorted(keep))}
        for _ in range(4):
            sigma = [0] * inst.num_pairs
            tiny = [0] * small.num_pairs
            for t in range(len(inst.pod_types)):
                for n in keep:
                    c = rng.choice((0, 0, 1))
                    sigma[inst.pair(t, n)] = c
                    tiny[small.pair(t, new_of[n])] = c
            for t in range(len(inst.pod_types)):
                for n in keep:
                    whole = semantics.deploy_failure(inst, t, n, tuple(sigma))
                    cut = semantics.deploy_failure(small, t, new_of[n], tuple(tiny))
                    assert (whole is None) == (cut is None), (seed, t, n, whole, cut)
                    compared += 1
    assert compared > 300


def test_reduced_witnesses_replay_and_agree_with_explicit(monkeypatch):
    """One node per class (so that nodes are really dropped): every witness the cut
    instance proposes replays on the cone and, lifted, on the instance; explicit on the
    whole instance never says not-deployable there."""
    monkeypatch.setattr(cells, "REPRESENTATIVES", 1)
    found = asked = 0
    for seed in range(60):
        inst = load_document(random_doc(seed + 700, replicas=3))
        for t in range(len(inst.pod_types)):
            fx = cells.cone_fixpoint(inst, t)
            for cls in fx.classes:
                r = cls[0]
                if (fx.tt, r) not in fx.added or fx.sub.initial.get((fx.tt, r), 0) > 0:
                    continue
                asked += 1
                trace = cells.reduced_witness(fx.sub, (fx.tt, r), fx.classes, fx.why, 30, "bdd")
                if trace is None:
                    continue
                found += 1
                semantics.replay(fx.sub, trace, Query((frozenset({(fx.tt, r)}),)))
                lifted = cells.lift_trace(inst, fx.cone, t, r, trace)   # replayed there
                semantics.replay(inst, lifted, Query((frozenset({(t, r)}),)))
                want = ExplicitEngine().check(inst, Query((frozenset({(t, r)}),)), Limits(max_states=20000))
                assert want.verdict is not Verdict.NOT_DEPLOYABLE, (seed, t, r)
    assert asked > 80 and found > 60, (asked, found)


def _force_engine(monkeypatch, check):
    """Cells skip the fixpoint's orders and meet an engine whose ``check`` is ``check``."""
    from symreach.solvers import registry

    class Engine:
        def check(self, instance, query, run=None):
            return check(instance, query)

    monkeypatch.setattr(cells, "greedy_witness", lambda *a: None)
    monkeypatch.setattr(cells, "short_lived_witness", lambda *a: None)
    monkeypatch.setattr(registry, "make_engine", lambda name: Engine())


def test_a_cell_out_of_memory_is_unknown_and_the_matrix_goes_on(monkeypatch):
    calls = []

    def out_of_memory(instance, query):
        calls.append(query)
        raise MemoryError("CUDD reached its memory cap")

    _force_engine(monkeypatch, out_of_memory)
    for seed in range(50):   # the first instance where a cell gets that far
        inst = load_document(random_doc(seed + 900, replicas=3))
        m = matrix_table(inst)
        if calls:
            break
    assert calls, "no cell reached the engine"
    hows = {m.how[t, n] for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))}
    assert "engine/bdd: memory limit of the cell" in hows
    assert "limit" not in hows                     # every type's cells were computed
    assert {"deployable", "not-deployable"} & set(m.cells.values())
    for t in range(len(inst.pod_types)):
        for n in range(len(inst.nodes)):
            if m.how[t, n] == "engine/bdd: memory limit of the cell":
                assert m.cells[t, n] == "unknown"


def test_an_engine_unknown_names_its_limit_in_the_cell(monkeypatch):
    from symreach.result import Result

    _force_engine(monkeypatch, lambda instance, query: Result(
        Verdict.UNKNOWN, "bdd", reason="timeout while building the guard BDDs"))
    for seed in range(50):
        inst = load_document(random_doc(seed + 900, replicas=3))
        m = matrix_table(inst)
        hows = {m.how[t, n] for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))}
        if "engine/bdd: timeout" in hows:
            break
    assert "engine/bdd: timeout" in hows


def test_ceiling_caps_every_manager_made_inside_it():
    from symreach.solvers.bdd_images import BACKEND, new_manager

    if BACKEND != "cudd":
        pytest.skip("dd.cudd not installed")
    with ceiling(3 * MIN_CAP_BYTES):
        assert new_manager().configure()["max_memory"] <= 3 * MIN_CAP_BYTES
        with ceiling(2 * MIN_CAP_BYTES):
            assert new_manager().configure()["max_memory"] <= 2 * MIN_CAP_BYTES
        assert 2 * MIN_CAP_BYTES < new_manager().configure()["max_memory"] <= 3 * MIN_CAP_BYTES


def test_a_variable_past_the_ceiling_is_out_of_memory():
    """dd's 'failed to add var' under the cap is memory: the BDD engine turns it into
    MemoryError (a whole-cone cell of 20,000 nodes met it while declaring variables)."""
    from symreach.solvers.bdd_images import BACKEND, new_manager
    from symreach.solvers.cudd_memory import is_out_of_memory

    if BACKEND != "cudd":
        pytest.skip("dd.cudd not installed")
    with ceiling(MIN_CAP_BYTES):
        bdd = new_manager()
        with pytest.raises(RuntimeError) as caught:
            for i in range(1_000_000):
                bdd.declare(f"x{i}")
    assert is_out_of_memory(caught.value), caught.value
