"""IC3 engine: the shared engine suite, pyramids (Appendix C), limits, counters."""

from __future__ import annotations

from symreach import semantics
from symreach.certify.clause_invariant import check_certificate
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.solvers.ic3 import Ic3Engine
from tests.sat_helpers import engine_suite_base, pyramid_instance

_Suite = engine_suite_base()

if _Suite is not None:
    class TestIc3Suite(_Suite):
        def make_engine(self):
            return Ic3Engine()

    class TestIc3SuiteNoFastPaths(_Suite):
        def make_engine(self):
            return Ic3Engine(fast_paths=False)


def test_pyramid_3_with_4_pebbles_is_proved_and_certified():
    inst = pyramid_instance(3, 4)
    res = Ic3Engine().check(inst)
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    text = res.certificate.dumps()
    assert text.startswith("# symreach-sat-invariant/1")
    ok, msg = check_certificate(inst, text)
    assert ok, msg
    assert "never: P-v3_0 on n" in res.certificate.render()
    for key in ("queries", "ctis", "ctgs", "mic_calls", "frames", "lemmas", "time_s"):
        assert key in res.stats


def test_pyramid_3_with_5_pebbles_gives_a_replaying_trace():
    inst = pyramid_instance(3, 5)
    res = Ic3Engine(fast_paths=False).check(inst)
    assert res.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, res.trace, inst.query)


def test_pyramid_4_with_5_pebbles():
    inst = pyramid_instance(4, 5)
    res = Ic3Engine().check(inst, limits=Limits(timeout_s=60))
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert check_certificate(inst, res.certificate)[0]


def test_timeout_gives_unknown():
    inst = pyramid_instance(6, 7)
    res = Ic3Engine().check(inst, limits=Limits(timeout_s=0.0))  # spent budget: unknown on any machine
    assert res.verdict is Verdict.UNKNOWN
    assert "timeout" in res.reason


def test_solvers_and_options_agree():
    inst = pyramid_instance(3, 4)
    for eng in (Ic3Engine(solver="glucose4"), Ic3Engine(max_ctgs=0), Ic3Engine(recycle_every=50)):
        res = eng.check(inst)
        assert res.verdict is Verdict.NOT_DEPLOYABLE
        assert check_certificate(inst, res.certificate)[0]


def test_lifting_justifies_guards():
    """A lifted predecessor cube: every state in it takes the action into the cube."""
    import itertools

    from symreach.encodings.compile import compile_system
    from symreach.solvers.ic3 import Ic3

    inst = pyramid_instance(2, 4)
    system = compile_system(inst, inst.query)
    ic3 = Ic3(system, Ic3Engine(), None)
    try:
        svars = system.state_vars
        for bits in itertools.product([False, True], repeat=len(svars)):
            state = dict(zip(svars, bits))
            for i, a in enumerate(system.actions):
                nxt = system.successor(a, state)
                if nxt is None:
                    continue
                succ = tuple(sorted((ic3.lit_of_var[v] if b else -ic3.lit_of_var[v]
                                     for v, b in nxt.items() if v in (svars[0], svars[3], a.writes[0])), key=abs))
                cube = ic3.lift(state, i, succ)
                fixed = {ic3.var_of[abs(x)]: x > 0 for x in cube}
                free = [v for v in svars if v not in fixed]
                for vals in itertools.product([False, True], repeat=len(free)):
                    s2 = {**fixed, **dict(zip(free, vals))}
                    n2 = system.successor(a, s2)
                    assert n2 is not None
                    assert all(n2[ic3.var_of[abs(x)]] == (x > 0) for x in succ)
    finally:
        ic3.close()
