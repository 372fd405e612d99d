"""``witness_cyclic`` on its compressed graph, and the BDD engine's order steps under a deadline.

The reference is the witness graph built pair to pair (every deploy -> every
pair its guard reads positively) and ``graphlib``: the compressed graph must
give the same answer. The deadline test uses a cancelled context (no wall clock): every order step
raises ``TimeoutError``, which the BDD engine turns into ``unknown``.
"""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

import pytest

from symreach.encodings.compile import compile_system
from symreach.frontends.reduction_petri import encode_petri
from symreach.generators.nets import mutex, philosophers, token_ring
from symreach.loader import load_document
from symreach.result import DEPLOY
from symreach.run import RunContext
from symreach.solvers.bdd_images import force_order
from symreach.solvers.bdd_sweep_order import interleaved, polar_support, witness_cyclic
from tests.random_instances import random_doc


def reference_cyclic(system) -> bool:
    """The witness graph pair to pair (nodes^2 edges on a large cluster)."""
    writer = {a.writes[0] for a in system.actions if a.op == DEPLOY}
    readers: dict[int, set[int]] = {v: set() for v in writer}
    for a in system.actions:
        if a.op == DEPLOY:
            me = a.writes[0]
            readers[me] |= {v for v, pos in polar_support(system.circuit, a.guard)
                            if pos and v in writer and v != me}
    try:
        TopologicalSorter(readers).prepare()
    except CycleError:
        return True
    return False


def net_instances():
    for make in (token_ring, mutex, philosophers):
        for n in (2, 3, 5):
            family = make(n)
            yield load_document(encode_petri(family.net, family.never_marked))


def test_compressed_graph_agrees_with_the_pair_graph():
    seen = {True: 0, False: 0}
    instances = [load_document(random_doc(seed, profile)) for seed in range(60)
                 for profile in ("paper", "kubernetes")]
    for inst in [*instances, *net_instances()]:
        system = compile_system(inst)
        cyclic = witness_cyclic(system)
        assert cyclic == reference_cyclic(system)
        seen[cyclic] += 1
    assert seen[True] >= 5 and seen[False] >= 50, seen


def test_order_steps_stop_on_a_cancelled_context():
    system = compile_system(next(net_instances()))
    cancelled = RunContext()
    cancelled.cancel.cancel()
    for step in (lambda: witness_cyclic(system, cancelled), lambda: force_order(system, run=cancelled),
                 lambda: interleaved(system, True, run=cancelled)):
        with pytest.raises(TimeoutError):
            step()

