"""The matrix's task plan (``solvers.chunks``) and the forked-process executor."""

from __future__ import annotations

import math
import random

from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.solvers.chunks import FACTOR, matrix_chunks, plan_chunks
from symreach.solvers.executor import LocalExecutor, ProcessExecutor
from symreach.solvers.matrix import matrix_table, render_text, unknown_matrix


def test_every_item_once_most_expensive_first_and_shrinking_chunks():
    rng = random.Random(3)
    costs = [rng.choice([1.0, 1.0, 1.0, 5.0, 40.0]) for _ in range(1000)]
    chunks = plan_chunks(costs, slots=2)
    flat = [i for c in chunks for i in c]
    assert sorted(flat) == list(range(1000))
    assert [costs[i] for i in flat] == sorted(costs, reverse=True)
    # guided self-scheduling: about FACTOR * slots * ln(n) tasks, not one per item
    assert len(chunks) <= 2 * FACTOR * 2 * math.log(1000)
    sums = [sum(costs[i] for i in c) for c in chunks]
    assert sums[0] <= sum(costs) / (FACTOR * 2)
    assert sums[0] > sums[-1]


def test_one_slot_means_one_type_per_task_in_order():
    inst = load_document(generate_cluster(12, 7, seed=4, pools=3))
    assert matrix_chunks(inst, 1) == [(t,) for t in range(7)]
    two = matrix_chunks(inst, 2)
    assert sorted(t for c in two for t in c) == list(range(7))


def test_forked_processes_give_the_local_matrix():
    inst = load_document(generate_cluster(40, 12, seed=2, pools=4))
    local = matrix_table(inst, executor=LocalExecutor())
    seen = []
    forked = matrix_table(inst, executor=ProcessExecutor(2), progress=lambda d, t: seen.append(d))
    assert dict(forked.cells) == dict(local.cells) and dict(forked.how) == dict(local.how)
    assert forked.stats["complete"] and seen[-1] == 12
    assert 1 <= forked.stats["tasks"] <= 12


def _boom(shared, item):
    if item == 1:
        raise ValueError("no")
    return item + shared


def test_a_failing_forked_task_becomes_its_error():
    got = list(ProcessExecutor(2).map(_boom, 10, [0, 1, 2], {}, on_error=lambda i, m: (i, m)))
    assert sorted(g for g in got if isinstance(g, int)) == [10, 12]
    assert [g for g in got if isinstance(g, tuple)] == [(1, "ValueError: no")]


def test_the_unknown_matrix_marks_initial_pods_only():
    inst = load_document(generate_cluster(10, 6, seed=1))
    m = unknown_matrix(inst, "timeout")
    for t in range(6):
        for n in range(10):
            initial = inst.initial.get((t, n), 0) > 0
            assert m.cells[(t, n)] == ("deployable" if initial else "unknown")
            assert m.how[(t, n)] == ("initial" if initial else "limit")
    text = render_text(m)
    assert text.endswith("incomplete: timeout") and "?" in text
