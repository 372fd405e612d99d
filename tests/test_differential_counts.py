"""Count targets ("K pods of T on N / in a pool / in a zone at once") in every engine.

The oracle is the explicit engine with saturation switched off up to K + 1
pods per pair, so the count analogue of saturation (``Query.count_cap``) is
itself under test: the default explicit engine, BDD, IC3, BMC, ABC and the
``auto`` portfolio must all agree with it on seeded random instances, every
witness replays, and every invariant certificate is re-checked by the
independent checkers (which rebuild the count target from the model).
"""

from __future__ import annotations

import json

import pytest

from symreach import semantics
from symreach.certify.bdd_invariant import check_certificate as check_bdd
from symreach.certify.clause_invariant import check_certificate as check_clauses
from symreach.certify.dispatch import check_text
from symreach.errors import InputError
from symreach.loader import load_document
from symreach.result import DEPLOY, Verdict
from symreach.solvers.base import Limits
from symreach.solvers.bdd import BddEngine
from symreach.solvers.bmc import BmcEngine
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.ic3 import Ic3Engine
from tests.count_instances import count_doc

SEEDS = range(120)
BATCH = 40


def instances(seeds):
    for seed in seeds:
        try:
            yield seed, load_document(count_doc(seed))
        except InputError:
            continue


def oracle(inst):
    k = max([ct.at_least for ct in inst.query.counts] + [1])
    return ExplicitEngine(uncounted_cap=k + 1).check(inst)


def _agree(seed, inst):
    query = inst.query
    expected = oracle(inst)
    results = {
        "explicit": ExplicitEngine().check(inst),
        "bdd-symbolic": BddEngine(fast_paths=False, strategy=("chaining", "saturation", "bfs")[seed % 3],
                                  direction="backward" if seed % 4 == 0 else "forward").check(inst),
        "bdd": BddEngine().check(inst),
        "ic3-symbolic": Ic3Engine(fast_paths=False).check(inst),
        "ic3": Ic3Engine().check(inst),
    }
    for name, result in results.items():
        assert result.verdict is expected.verdict, (seed, name, result.verdict, expected.verdict, result.reason)
        if result.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, result.trace, query)
    if expected.verdict is Verdict.NOT_DEPLOYABLE:
        ok, why = check_bdd(inst, query, results["bdd-symbolic"].certificate)
        assert ok, (seed, why)
        ok, why = check_clauses(inst, results["ic3-symbolic"].certificate.dumps(), query)
        assert ok, (seed, why)
        for name in ("explicit", "bdd", "ic3"):  # whatever kind each returned (fast path, reachable set, ...)
            cert = results[name].certificate
            if cert is not None:
                text = cert if isinstance(cert, str) else json.dumps(cert) if isinstance(cert, dict) else cert.dumps()
                ok, why = check_text(inst, text)
                assert ok, (seed, name, why)
    deploys = sum(1 for s in expected.trace if s.op == DEPLOY)
    bmc = BmcEngine(fast_paths=False).check(inst, run=Limits(max_depth=max(deploys, 1)))
    if expected.verdict is Verdict.DEPLOYABLE:
        assert bmc.verdict is Verdict.DEPLOYABLE, (seed, bmc.reason)
        semantics.replay(inst, bmc.trace, query)
    else:
        assert bmc.verdict is Verdict.UNKNOWN
    return expected.verdict


@pytest.mark.parametrize("start", range(0, len(SEEDS), BATCH))
def test_count_targets_agree_with_unsaturated_explicit(start):
    for seed, inst in instances(SEEDS[start:start + BATCH]):
        _agree(seed, inst)


@pytest.mark.slow
def test_count_targets_agree_more_seeds():
    for seed, inst in instances(range(120, 600)):
        _agree(seed, inst)


def test_both_verdicts_and_count_targets_occur():
    seen = set()
    for seed, inst in instances(range(120)):
        seen.add((bool(inst.query.counts), oracle(inst).verdict))
    assert (True, Verdict.DEPLOYABLE) in seen and (True, Verdict.NOT_DEPLOYABLE) in seen, seen


@pytest.mark.parametrize("engine", ["abc-pdr", "abc-reach", "auto"])
def test_external_and_portfolio_engines_on_count_targets(engine):
    from symreach.solvers.registry import make_engine

    pytest.importorskip("pysat")
    if engine.startswith("abc"):
        import shutil
        if shutil.which("berkeley-abc") is None:
            pytest.skip("berkeley-abc not installed")
    checked = 0
    for seed, inst in instances(range(0, 240, 8)):
        if not inst.query.counts:
            continue
        expected = oracle(inst).verdict
        result = make_engine(engine).check(inst, inst.query, Limits(timeout_s=300))
        assert result.verdict is expected, (seed, engine, result.verdict, expected, result.reason)
        if result.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, result.trace, inst.query)
        checked += 1
    assert checked >= 10
