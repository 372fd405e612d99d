"""A seeded sample of the certificate fuzzer (``tests/cert_fuzz.py``; the long runs
are outside CI): mutations and forgeries of every kind, none accepted falsely,
none ending in exit 4."""

from __future__ import annotations

import pytest

from symreach.certify.dispatch import KINDS
from tests import cert_fuzz


@pytest.fixture(scope="module")
def pool():
    return cert_fuzz.seeds(8)


def test_seeded_sample_accepts_nothing_false_and_never_crashes(pool):
    stats = cert_fuzz.run(400, seed=26, pool=pool)
    assert stats.cases == 400
    assert not stats.false_accepts, stats.false_accepts[:2]
    assert stats.exits.get(4, 0) == 0, stats.crashes[:2]
    assert set(stats.by_kind) == set(KINDS), stats.by_kind     # all eight kinds were mutated
    assert stats.valid_judged >= 20 and stats.exits.get(1, 0) >= 100 and stats.exits.get(2, 0) >= 10


def test_the_judge_catches_an_accepted_lie(pool):
    """The oracle itself: a genuine certificate is judged true, and the same
    certificate judged on a target the explicit engine deploys is caught."""
    judge = cert_fuzz.Judge()
    seed = next(s for s in pool if s.fmt == "symreach-explicit-states/1")
    code, _, loaded = cert_fuzz.certify_exit(seed.inst, seed.text, seed.query)
    assert code == 0 and judge.false_acceptance(seed.inst, loaded, seed.query) is None
    from symreach.model import Query

    anything = Query((frozenset(),), "the empty alternative: always covered")
    assert "deployable" in judge.false_acceptance(seed.inst, loaded, anything)
