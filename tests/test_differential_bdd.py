"""BDD engine vs the explicit reference on seeded random small instances.

Every constraint kind and both profiles appear (``tests.random_instances``).
Each instance runs the BDD engine twice: symbolic only (no fast paths; the
certificate of every not-deployable verdict is re-checked independently) and
in its default configuration (preprocessing fast paths allowed).
"""

from __future__ import annotations

import pytest

from symreach import semantics
from symreach.certify.bdd_invariant import check_certificate
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.bdd import BddEngine
from symreach.solvers.explicit import ExplicitEngine
from tests.random_instances import random_doc

SEEDS = range(520)
BATCH = 40


def _one(seed: int) -> None:
    inst = load_document(random_doc(seed))
    query = inst.query
    expected = ExplicitEngine().check(inst).verdict
    symbolic = BddEngine(fast_paths=False, direction="backward" if seed % 5 == 0 else "forward",
                         strategy=("chaining", "saturation", "bfs")[seed % 3]).check(inst)
    default = BddEngine().check(inst)
    for result in (symbolic, default):
        assert result.verdict is expected, (seed, inst.profile, result.verdict, expected, result.stats)
        if result.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, result.trace, query)
    if symbolic.verdict is Verdict.NOT_DEPLOYABLE and symbolic.certificate is not None:
        ok, why = check_certificate(inst, query, symbolic.certificate)
        assert ok, (seed, why)


@pytest.mark.parametrize("start", range(0, len(SEEDS), BATCH))
def test_bdd_agrees_with_explicit(start):
    for seed in SEEDS[start:start + BATCH]:
        _one(seed)


def test_both_verdicts_and_profiles_occur():
    seen = set()
    for seed in range(120):
        inst = load_document(random_doc(seed))
        seen.add((inst.profile, ExplicitEngine().check(inst).verdict))
    assert len(seen) == 4, seen
