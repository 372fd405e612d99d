"""Operator witnesses (issue 29) replayed through the real kube-scheduler (kso), step by step.

Every deployment of an operator witness is asked of kso in the state before it
(deletions applied after the operator guards accept them); kso must find the
step's node feasible. The witnesses: every one of ``examples/pdb-longer.yaml``
and ``examples/pdb-blocks.yaml`` (the latter has none under operator moves:
its answer is a certificate) and a few random dumps with PodDisruptionBudgets
(``benchmarks/operator_kso.py``; its one-off larger run is in
``benchmarks/results/operator_kso.md``). Skipped where kso is absent.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.kso_harness import find_kso
from benchmarks.operator_kso import GuardError, deploy_states, example_witnesses, random_witnesses, replay, summary
from symreach.result import DELETE, Step

KSO = find_kso()


def test_replay_refuses_an_eviction_the_budget_forbids():
    # pdb-longer: web-pdb keeps one web pod; evicting the only one first is refused by the guard
    (longer,) = [w for w in example_witnesses(("examples/pdb-longer.yaml",)) if len(w.trace) == 3]
    assert [s.op for s in longer.trace] == ["deploy", DELETE, "deploy"]
    assert len(deploy_states(longer)) == 2
    forged = replace(longer, trace=(Step(DELETE, "web", "n1"),) + longer.trace[2:])
    with pytest.raises(GuardError, match="web-pdb"):
        deploy_states(forged)


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
def test_operator_witnesses_replay_on_kso_step_by_step():
    examples = example_witnesses()
    found, _ = random_witnesses(5, seed=29)
    witnesses = examples + found
    counts = summary(witnesses, replay(witnesses, KSO))
    assert counts["refused by kso"] == 0, counts
    assert len(examples) == 2 and len(found) == 5, counts
    assert counts["deploy steps"] >= 12 and counts["evictions"] >= 4, counts
