"""One run context (issue 25, item 1): one deadline on one clock, one cancel token,
and engines that keep nothing of a call on themselves. No wall-clock thresholds:
deadlines here are already spent (0 s) or absent."""

from __future__ import annotations

import pytest

from symreach.errors import LimitReached, clear_deadline, set_deadline
from symreach.result import Verdict
from symreach.run import CancelToken, RunContext
from symreach.solvers.base import Limits, as_context
from symreach.solvers.bdd import BddEngine
from symreach.solvers.registry import make_engine
from tests.sat_helpers import pyramid_instance


def test_a_spent_deadline_or_a_cancelled_token_stops_every_phase():
    spent = RunContext.within(0.0)
    assert spent.past() and spent.remaining() == 0.0
    with pytest.raises(LimitReached, match="time limit of 0 s was reached during preprocessing"):
        spent.check("preprocessing")
    token = CancelToken()
    run = RunContext(cancel=token)
    assert not run.past() and run.remaining() is None
    token.cancel()
    assert run.past()
    with pytest.raises(LimitReached, match="cancelled during export"):
        run.check("export")


def test_limits_are_a_plain_value_and_the_process_deadline_only_a_bridge():
    assert as_context(Limits(timeout_s=None, max_states=7)).max_states == 7
    assert as_context(None).deadline is None
    set_deadline(0.0)
    try:
        assert RunContext.for_process().past()
    finally:
        clear_deadline()
    assert RunContext.for_process().deadline is None


@pytest.mark.parametrize("engine", ["explicit", "lazy", "bdd", "bmc", "ic3", "auto"])
def test_every_engine_answers_unknown_on_a_spent_or_cancelled_run(engine):
    inst = pyramid_instance(4, 6)
    token = CancelToken()
    token.cancel()
    for run in (RunContext.within(0.0), RunContext(cancel=token)):
        assert make_engine(engine).check(inst, inst.query, run).verdict is Verdict.UNKNOWN


def test_the_bdd_engine_keeps_no_per_call_state():
    engine = BddEngine()
    before = dict(vars(engine))
    inst = pyramid_instance(3, 4)
    engine.check(inst, inst.query, RunContext(counters="on"))
    engine.check(inst, inst.query, RunContext(counters="off"))
    assert vars(engine) == before
