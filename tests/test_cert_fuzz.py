"""A seeded sample of the certificate fuzzer (``tests/cert_fuzz.py``; the long runs
are outside CI): mutations and forgeries of every kind, none accepted falsely,
none ending in exit 4."""

from __future__ import annotations

import json

import pytest

from tests.cert_corpus import EIGHT_KINDS
from tests import cert_fuzz


@pytest.fixture(scope="module")
def pool():
    return cert_fuzz.seeds((6, 57, 171, 0, 1))  # every kind (tests/test_why_every_kind.py SEEDS) and a few more


@pytest.mark.skipif(not cert_fuzz.BOUND, reason="needs certify's target binding and vacuous-target refusals "
                    "(issue 26 item 1, the contract branch): without them the sample finds those forgeries")
def test_seeded_sample_accepts_nothing_false_and_never_crashes(pool):
    stats = cert_fuzz.run(400, seed=26, pool=pool)
    assert stats.cases == 400
    assert not stats.false_accepts, stats.false_accepts[:2]
    assert stats.exits.get(4, 0) == 0 and stats.exits.get(cert_fuzz.HANG, 0) == 0, stats.crashes[:2]
    assert set(stats.by_kind) == set(EIGHT_KINDS), stats.by_kind     # all eight kinds were mutated
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


@pytest.mark.parametrize("fmt", ["symreach-sat-invariant/1", "symreach-bdd-invariant/1"])
@pytest.mark.parametrize("bits", [40, 10**6, 2**63, -1])
def test_a_forged_counter_width_is_refused_at_once(pool, fmt, bits):
    """Found by the fuzzer: ``bits: 40`` made the IC3 checker enumerate 2**40 values
    (a hang), ``2**63`` exhausted memory in both checkers (exit 4)."""
    seed = next(s for s in pool if s.fmt == fmt and ('"bits": 1' in s.text or '"bits": 2' in s.text))
    width = '"bits": 2' if '"bits": 2' in seed.text else '"bits": 1'
    forged = seed.text.replace(width, f'"bits": {json.dumps(bits)}', 1)
    code, message, _ = cert_fuzz.certify_exit(seed.inst, forged, seed.query)
    assert code == 1 and "bits" in message, message


@pytest.mark.parametrize("fmt", [[], {}, None, 7])
def test_a_format_that_is_no_string_is_unreadable(pool, fmt):
    """Found by the fuzzer: ``"format": {}`` raised TypeError (unhashable) in parse: exit 4."""
    seed = next(s for s in pool if s.text.startswith("{"))
    forged = json.dumps({**json.loads(seed.text), "format": fmt})
    code, message, _ = cert_fuzz.certify_exit(seed.inst, forged, seed.query)
    assert code == 2 and "unknown certificate format" in message, message


@pytest.mark.parametrize("bits", [40, 2**63, -1])
def test_a_forged_counter_width_renders_without_enumerating_it(pool, bits):
    """Found by the fuzzer (seeds 301 and 313 stalled, outside the checker's alarm):
    re-writing a clause certificate (``dumps``, as re-binding and ``--explain`` do) with
    ``bits: 40`` rendered its clauses by enumerating 2**40 counter values."""
    from symreach.certify.dispatch import parse

    seed = next(s for s in pool if s.fmt == "symreach-sat-invariant/1" and "# pairs: []" in s.text)
    pairs = json.dumps([{"pod": "t1", "node": "n1", "bits": bits, "bound": 1}])
    forged = seed.text.replace("# pairs: []", f"# pairs: {pairs}") + "-count[t1@n1#0] -count[t1@n1#1]\n"
    cert = parse(forged)
    text = cert.bind(seed.inst).dumps()   # returns: no 2**bits enumeration
    assert "wider than any engine writes" in text
    assert cert_fuzz.rebind(forged, seed.inst) == text


def test_every_phase_of_a_case_is_bounded(pool, monkeypatch):
    """A case stalling outside the checker (the mutation, the re-binding) is a hang, and a
    judge past its state cap is "judge unknown", never a true acceptance."""
    monkeypatch.setattr(cert_fuzz, "HANG_S", 0.05)

    def stall(*_):
        while True:
            pass
    monkeypatch.setattr(cert_fuzz, "make_case", stall)
    stats = cert_fuzz.run(2, seed=1, pool=pool)
    assert stats.cases == 2 and stats.exits[cert_fuzz.HANG] == 2
    assert stats.crashes[0]["message"].startswith("making the case: still running")

    monkeypatch.undo()
    monkeypatch.setattr(cert_fuzz, "JUDGE_STATES", 1)
    seed = next(s for s in pool if s.fmt == "symreach-explicit-states/1")
    code, _, loaded = cert_fuzz.certify_exit(seed.inst, seed.text, seed.query)
    assert code == 0
    with pytest.raises(cert_fuzz.JudgeUnknown):
        cert_fuzz.Judge().false_acceptance(seed.inst, loaded, seed.query)
