"""BMC engine: the shared engine suite (deployable cases and, with the
loop-free completeness check, the others), short witnesses, limits."""

from __future__ import annotations

from symreach import semantics
from symreach.loader import load_document
from symreach.result import DEPLOY, Verdict
from symreach.solvers.base import Limits
from symreach.solvers.bmc import BmcEngine
from symreach.solvers.explicit import ExplicitEngine
from tests.engine_suite import EngineConfig, EngineSuite
from tests.sat_helpers import blockers_instance, pyramid_instance

class TestSingleStepBmcSuite(EngineSuite):
    """The shared suite with one deploy per step (``parallel=False``); the registry's
    ``bmc`` runs it in tests/test_engine_suite.py. On the not-deployable cases BMC
    (depth 12) may say unknown, never deployable."""

    config = EngineConfig("bmc-single-step", "bmc", witness_only=True, limits=Limits(max_depth=12))

    def make_engine(self):
        return BmcEngine(parallel=False)


def test_bmc_witness_is_few_steps_and_replays():
    inst = load_document(blockers_instance(5))
    ex = ExplicitEngine().check(inst)
    res = BmcEngine(fast_paths=False).check(inst)
    assert res.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, res.trace, inst.query)
    assert res.stats["depth"] == 2
    assert len(ex.trace) == 7  # five deletions, two deployments, one at a time
    # the deletions of a step come before its deployment
    ops = [s.op for s in res.trace]
    assert ops[-1] == DEPLOY and ops.count(DEPLOY) == 2


def test_bmc_pyramid_depth_is_the_number_of_deployments():
    inst = pyramid_instance(3, 5)
    ex = ExplicitEngine().check(inst)
    res = BmcEngine(fast_paths=False).check(inst)
    assert res.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, res.trace, inst.query)
    assert res.stats["depth"] == 10 < len(ex.trace) == 15


def test_bmc_depth_limit_gives_unknown():
    inst = pyramid_instance(3, 4)
    res = BmcEngine(fast_paths=False).check(inst, run=Limits(max_depth=6))
    assert res.verdict is Verdict.UNKNOWN
    assert "depth" in res.reason


def test_bmc_timeout_gives_unknown():
    inst = pyramid_instance(5, 6)
    res = BmcEngine(fast_paths=False).check(inst, run=Limits(timeout_s=0.0))  # spent budget: unknown on any machine
    assert res.verdict is Verdict.UNKNOWN


def test_bmc_complete_proves_small_unreachable():
    inst = pyramid_instance(1, 2)
    res = BmcEngine(fast_paths=False, complete=True, solver="cadical153").check(inst)
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert "loop-free" in res.reason


def test_bmc_solvers_agree():
    inst = pyramid_instance(2, 4)
    for name in ("cadical153", "glucose4", "minisat22"):
        res = BmcEngine(solver=name, fast_paths=False).check(inst)
        assert res.verdict is Verdict.DEPLOYABLE and res.stats["depth"] == 6
