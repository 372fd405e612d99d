"""The shared engine suite on configurations of the BDD engine beyond the registry's
(tests/test_engine_suite.py runs it on ``bdd`` with each fixpoint strategy): the
fixpoint alone (no fast paths), and backward."""

import pytest

from symreach.solvers.bdd import BddEngine
from tests.engine_suite import EngineSuite


class TestBddSymbolicOnly(EngineSuite):
    """Fast paths off: every case goes through the BDD fixpoint."""

    def make_engine(self):
        return BddEngine(fast_paths=False)


class TestBddBackward(EngineSuite):
    def make_engine(self):
        return BddEngine(fast_paths=False, direction="backward")


def test_timeout_gives_unknown():
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid
    from symreach.loader import load_document
    from symreach.result import Verdict
    from symreach.solvers.base import Limits

    dag = pyramid(11)
    inst = load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, 12))
    result = BddEngine().check(inst, run=Limits(timeout_s=0.0))  # spent budget: unknown on any machine
    assert result.verdict is Verdict.UNKNOWN and "timeout" in result.reason


def test_directions_agree_on_pebbling():
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid
    from symreach.loader import load_document

    dag = pyramid(4)
    for k in (5, 6):
        inst = load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))
        verdicts = {BddEngine(direction=d, fast_paths=False).check(inst).verdict
                    for d in ("forward", "backward", "bidirectional")}
        assert len(verdicts) == 1


@pytest.mark.parametrize("direction", ["forward", "backward", "bidirectional"])
def test_witness_from_kept_images(direction):
    """The ring-free passes keep their growing images as rings: a hit yields a
    replayable witness from those rings, in every direction."""
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid
    from symreach.loader import load_document
    from symreach.result import Verdict
    from symreach.semantics import replay

    dag = pyramid(4)
    inst = load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, 6))
    result = BddEngine(direction=direction, fast_paths=False).check(inst)
    assert result.verdict is Verdict.DEPLOYABLE
    replay(inst, result.trace)  # raises if the trace does not replay
    assert result.stats["decided_direction"] in ("forward", "backward")


def test_limit_during_trace_realisation_is_unknown_not_a_crash(monkeypatch):
    """run_all (issue 31) saw LimitReached escape the BDD engine when the limit fell
    while its witness was realised: that is an ``unknown`` answer with the limit's reason."""
    import symreach.solvers.bdd as bdd_module
    from symreach.errors import LimitReached
    from symreach.result import Verdict as V
    from symreach.solvers.registry import make_engine
    from tests.sat_helpers import pyramid_instance

    def late(*args, **kwargs):
        raise LimitReached("timeout: the time limit of 10 s was reached during trace realisation")

    monkeypatch.setattr(bdd_module, "realize_trace", late)
    inst = pyramid_instance(3, 5)  # deployable: the witness must be realised
    res = make_engine("bdd").check(inst, inst.query)
    assert res.verdict is V.UNKNOWN and "trace realisation" in res.reason
