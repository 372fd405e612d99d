"""The gang question on the symbolic engines against the explicit engine (issue 28, item 2).

On random gangs of ``test_gang_differential.gang_doc`` (mixed members,
intra-group affinity, anti-affinity, spread, capacity) and composite
hierarchies, each engine's verdict is compared with ``gang_explicit``'s:
``bdd`` and ``ic3`` must agree exactly, ``bmc`` (a bounded search) must find a witness
within the explicit witness's length when there is one and never claim one
when there is none. Every witness is replayed here again (the engines
replay it before answering), and every certificate is re-checked by
``certify``'s checker. The CI subset runs 25 instances per profile; the
full run (``-m slow``) 300 per profile and engine.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter

import pytest

from symreach import gangs, semantics
from symreach.certify import gang_bdd
from symreach.certify.dispatch import as_certificate
from symreach.encodings.gang_shadow import shadow
from symreach.solvers import gang_symbolic
from symreach.solvers.gang_explicit import answer as explicit_answer
from symreach.solvers.gang_race import race
from tests.test_gang_differential import composite_doc, features, gang_doc, loaded

CI_CASES = 25
FULL_CASES = 300


def compare(engine: str, make, seeds, profile: str, group: str = "g") -> Counter:
    """Differential run; returns the counts of what was really checked."""
    counts: Counter = Counter()
    for seed, inst in loaded(make, seeds, profile):
        ref = explicit_answer(inst, group, max_states=2_000)
        want = ref.result.verdict.value
        if want == "unknown":
            counts["skipped: explicit unknown"] += 1
            continue
        depth = len(ref.result.trace) + len(ref.placement) if want == "deployable" else 6
        if engine == "auto":
            got = race(inst, group, timeout_s=60, max_states=2_000)
        else:
            got = gang_symbolic.answer(inst, group, engine, timeout_s=60, max_depth=depth)
        verdict = got.result.verdict.value
        if engine == "bmc" and want == "not-deployable":
            assert verdict == "unknown", (seed, profile, verdict)
        else:
            assert verdict == want, (seed, profile, engine, verdict, want)
        if verdict == "deployable":
            end = semantics.replay(inst, got.result.trace)
            gangs.check_step(inst, gangs.gang_of(inst, group), end, got.placement)
            counts["witness replayed"] += 1
        elif verdict == "not-deployable" and got.result.certificate is not None:
            ok, why = as_certificate(got.result.certificate).check(inst)
            assert ok, (seed, profile, why)
            counts["certificate re-checked"] += 1
        elif verdict == "not-deployable":
            counts["rejected by the scheduler"] += 1
        counts["agreed"] += 1
        if make is gang_doc:
            counts.update(features(inst))
    return counts


def assert_counts(engine: str, counts: Counter, cases: int) -> None:
    assert counts["agreed"] >= cases * 0.8, counts
    assert counts["witness replayed"] >= cases * 0.2, counts
    if engine != "bmc":
        assert counts["certificate re-checked"] >= cases * 0.1, counts


@pytest.mark.parametrize("engine", gang_symbolic.SYMBOLIC)
@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_symbolic_gang_answers_agree_with_explicit(engine, profile):
    counts = compare(engine, gang_doc, range(CI_CASES), profile)
    assert_counts(engine, counts, CI_CASES)


@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_auto_races_to_the_explicit_verdict(profile):
    counts = compare("auto", gang_doc, range(8), profile)
    assert_counts("auto", counts, 8)


@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_bdd_composite_answers_agree_with_explicit(profile):
    counts = compare("bdd", composite_doc, range(12), profile, "leaf0")
    assert counts["agreed"] >= 10 and counts["witness replayed"] >= 2, counts


@pytest.mark.slow
@pytest.mark.parametrize("engine", gang_symbolic.SYMBOLIC + ("auto",))
@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_symbolic_gang_answers_agree_with_explicit_full(engine, profile):
    counts = compare(engine, gang_doc, range(1000, 1000 + FULL_CASES), profile)
    assert_counts(engine, counts, FULL_CASES)
    for kind in ("mixed", "intra-group affinity", "anti-affinity", "spread", "capacity"):
        assert counts[kind] >= 20, (kind, counts)


@pytest.mark.slow
@pytest.mark.parametrize("engine", gang_symbolic.SYMBOLIC)
@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_symbolic_composite_answers_agree_with_explicit_full(engine, profile):
    counts = compare(engine, composite_doc, range(FULL_CASES), profile, "leaf0")
    assert_counts(engine, counts, FULL_CASES)


@pytest.mark.parametrize("build", ["encoder", "checker"])
def test_twin_instance_has_the_semantics_of_the_original(build):
    """Hard on the twin instance, with twin pods, equals Hard on the original with them
    counted as their member type, for the encoder's twins and the checker's own."""
    checked = 0
    for seed, inst in loaded(gang_doc, range(60), "kubernetes"):
        gang = gangs.gang_of(inst, "g")
        sh = shadow(inst, gang) if build == "encoder" else gang_bdd.twin_instance(inst, gang)
        rng = random.Random(seed)
        derived = sh.instance
        for _ in range(5):
            sigma = list(derived.initial_config())
            for t, twin in sh.twin_of.items():
                for n in range(len(inst.nodes)):
                    sigma[derived.pair(twin, n)] = rng.randint(0, 1)
            merged = [0] * inst.num_pairs
            for p, c in enumerate(sigma):
                t, n = derived.unpair(p)
                merged[inst.pair(sh.member_of.get(t, t), n)] += c
            for t in range(len(derived.pod_types)):
                orig = sh.member_of.get(t, t)
                for n in range(len(inst.nodes)):
                    assert semantics.first_failure(derived, t, n, tuple(sigma)) == \
                        semantics.first_failure(inst, orig, n, tuple(merged)), (seed, t, n)
                    checked += 1
    assert checked >= 1000, checked


def test_gang_bdd_checker_refuses_what_the_certificate_does_not_prove():
    """A certificate checked against the same cluster with an easier group (minCount 1, when
    that is deployable), or with its invariant replaced by true or false, is refused."""
    refused = Counter()
    for seed, inst in loaded(gang_doc, range(36), "kubernetes"):
        got = gang_symbolic.answer(inst, "g", "ic3" if seed % 2 else "bdd", timeout_s=60)
        if got.result.verdict.value != "not-deployable" or got.result.certificate is None:
            continue
        cert = json.loads(json.dumps(got.result.certificate))
        assert gang_bdd.check_certificate(inst, cert)[0], seed
        for root in (0, 1):   # true is an invariant only where no member can ever be placed
            forged = dict(cert, invariant=dict(cert["invariant"], root=root))
            ok = gang_bdd.check_certificate(inst, forged)[0]
            assert not (ok and root == 0), seed
            refused[f"root {root}"] += not ok
        easier = dataclasses.replace(inst, groups=tuple(dataclasses.replace(g, min_count=1) for g in inst.groups))
        if explicit_answer(easier, "g", max_states=2_000).result.verdict.value == "deployable":
            assert not gang_bdd.check_certificate(easier, cert)[0], seed
            refused["easier group"] += 1
    assert refused["root 0"] >= 10 and refused["root 1"] >= 4 and refused["easier group"] >= 4, refused


def test_check_group_with_each_engine_and_certify(tmp_path):
    """The command line: bdd, bmc and ic3 answer, lazy declines in one line (exit 2), auto
    races; the bdd and ic3 certificates written by --cert-out are accepted by certify."""
    from click.testing import CliRunner

    from symreach.cli.main import cli

    runner = CliRunner()
    never, training = "examples/gang-never.yaml", "examples/gang-training.yaml"
    for engine in ("bdd", "ic3"):
        cert = tmp_path / f"{engine}.json"
        res = runner.invoke(cli, ["check", never, "--engine", engine, "--cert-out", str(cert)])
        assert res.exit_code == 1 and "not-deployable" in res.output, res.output
        assert json.loads(cert.read_text())["format"] == gang_bdd.FORMAT
        res = runner.invoke(cli, ["certify", never, str(cert)])
        assert res.exit_code == 0, res.output
    for engine in ("bdd", "bmc", "ic3", "auto"):
        res = runner.invoke(cli, ["check", training, "--engine", engine])
        assert res.exit_code == 0 and res.output.startswith("deployable"), (engine, res.output)
    res = runner.invoke(cli, ["check", never, "--engine", "lazy"])
    assert res.exit_code == 2 and "does not answer group targets" in res.output, res.output


def test_twin_counters_ignore_max_per_node():
    """A gang step checks Hard only, so maxPerNode (2 here) does not bound the twins: three
    t1 members fit on n2 by capacity. The twin counters were once bounded by the instance's
    multiplicity bound (from maxPerNode): bdd and ic3 said never, and certify refused their
    certificates ('a counter can exceed its bound')."""
    from symreach.loader import load_document

    inst = load_document(gang_doc(1094, "kubernetes"))
    assert explicit_answer(inst, "g").result.verdict.value == "deployable"
    for engine in ("bdd", "ic3"):
        got = gang_symbolic.answer(inst, "g", engine, timeout_s=60)
        assert got.result.verdict.value == "deployable", engine
        gangs.check_step(inst, gangs.gang_of(inst, "g"), semantics.replay(inst, got.result.trace), got.placement)


def test_auto_keeps_the_bdd_never_on_large_instances_for_its_certificate(monkeypatch):
    """On a large instance an explicit "never" waits for the BDD's (its certificate is
    cheap to re-check); the threshold is lowered to 0 pairs and the grace made long, so the
    outcome does not depend on which child is faster."""
    import symreach.solvers.gang_race as gang_race
    from symreach.loader import load_instance

    monkeypatch.setattr(gang_race, "CHECKABLE_PAIRS", 0)
    monkeypatch.setattr(gang_race, "GRACE_MIN_S", 600.0)
    inst = load_instance("examples/gang-never.yaml")
    got = gang_race.race(inst, inst.groups[0].name, timeout_s=600)
    assert got.result.verdict.value == "not-deployable"
    cert = got.result.certificate
    cert = cert if isinstance(cert, dict) else json.loads(cert.dumps())
    assert cert["format"] == gang_bdd.FORMAT
    assert gang_bdd.check_certificate(inst, cert)[0]


def test_the_gang_states_checker_out_of_budget_is_a_limit_not_a_refusal():
    """A valid certificate whose plain re-check needs more configurations than its budget is
    neither accepted nor refused: LimitReached (exit 3), never "INVALID"."""
    from symreach.certify import gang_states
    from symreach.errors import LimitReached
    from symreach.loader import load_instance
    from symreach.solvers.gang_explicit import answer

    inst = load_instance("examples/gang-never.yaml")
    got = answer(inst, inst.groups[0].name, None, None)
    cert = got.result.certificate
    cert = cert if isinstance(cert, dict) else json.loads(cert.dumps())
    assert cert["format"] == gang_states.FORMAT
    assert gang_states.check_certificate(inst, cert)[0]
    with pytest.raises(LimitReached, match="neither accepted nor refused"):
        gang_states.check_certificate(inst, cert, budget=0)
