"""Facts of SPEC 2.2 as property tests over seeded random instances."""

from __future__ import annotations

import pytest

from symreach import semantics
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.solvers.explicit import ExplicitEngine
from tests.random_instances import ALL_FEATURES, random_doc

LIMITS = Limits(max_states=200_000)


@pytest.mark.parametrize("seed", range(120))
def test_theorem_5_affinity_free_fragment(seed):
    """No affinity anywhere: deployable iff initially present or (creatable and Hard(t*, n*, 0))."""
    inst = load_document(random_doc(seed, features=ALL_FEATURES - {"affinity"}))
    (alt,) = inst.query.alternatives
    ((t, n),) = alt
    zero = (0,) * inst.num_pairs
    expected = (inst.initial_config()[inst.pair(t, n)] > 0
                or (inst.pod_types[t].creatable and semantics.hard(inst, t, n, zero)))
    result = ExplicitEngine().check(inst, run=LIMITS)
    assert result.verdict is (Verdict.DEPLOYABLE if expected else Verdict.NOT_DEPLOYABLE)


@pytest.mark.parametrize("seed", range(80))
def test_saturation_preserves_verdicts(seed):
    """Allowing two pods per uncounted pair never changes a verdict."""
    inst = load_document(random_doc(1000 + seed))
    saturated = ExplicitEngine().check(inst, run=LIMITS)
    relaxed = ExplicitEngine(uncounted_cap=2).check(inst, run=LIMITS)
    assert Verdict.UNKNOWN not in (saturated.verdict, relaxed.verdict)
    assert saturated.verdict is relaxed.verdict
    assert len(saturated.trace) <= len(relaxed.trace) or relaxed.verdict is Verdict.NOT_DEPLOYABLE


@pytest.mark.parametrize("seed", range(60))
def test_every_trace_replays(seed):
    inst = load_document(random_doc(5000 + seed))
    result = ExplicitEngine().check(inst, run=LIMITS)
    if result.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, result.trace, inst.query)


def test_state_cap_gives_unknown():
    from tests.test_semantics import paper_26

    inst = load_document(paper_26(2))
    result = ExplicitEngine().check(inst, run=Limits(max_states=2))
    assert result.verdict is Verdict.UNKNOWN
    assert "state limit" in result.reason
