"""IC3 engine: the shared engine suite, pyramids (Appendix C), limits, counters."""

from __future__ import annotations

from symreach import semantics
from symreach.certify.clause_invariant import check_certificate
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.errors import InputError
from symreach.result import DEPLOY
from symreach.solvers.ic3 import Ic3Engine
from symreach.solvers.ic3_lift import Lifter
from tests.engine_suite import EngineSuite
from tests.sat_helpers import pyramid_instance

class TestIc3SuiteNoFastPaths(EngineSuite):
    """The shared suite on IC3 itself (tests/test_engine_suite.py runs the registry's ``ic3``)."""

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
    res = Ic3Engine().check(inst, run=Limits(timeout_s=60))
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert check_certificate(inst, res.certificate)[0]


def test_timeout_gives_unknown():
    inst = pyramid_instance(6, 7)
    res = Ic3Engine().check(inst, run=Limits(timeout_s=0.0))  # spent budget: unknown on any machine
    assert res.verdict is Verdict.UNKNOWN
    assert "timeout" in res.reason


def test_solvers_and_options_agree():
    inst = pyramid_instance(3, 4)
    for eng in (Ic3Engine(solver="glucose4"), Ic3Engine(max_ctgs=0), Ic3Engine(recycle_every=50)):
        res = eng.check(inst)
        assert res.verdict is Verdict.NOT_DEPLOYABLE
        assert check_certificate(inst, res.certificate)[0]


def _all_states(system):
    """Every assignment of the state variables that is a real configuration
    (a counted pair's presence bit agrees with its counter, within its bound)."""
    import itertools
    svars = system.state_vars
    for bits in itertools.product([False, True], repeat=len(svars)):
        state = dict(zip(svars, bits))
        if all(state[pv.present] == any(state[b] for b in pv.count_bits) and Lifter.count(pv, state) <= pv.bound
               for pv in system.pairs.values() if pv.counted):
            yield state


def _macro_successors(system, lifter, state):
    """(mid state, deploy index or None, successor) for every macro step from ``state``:
    every way to delete some pods, then every enabled deploy (or none)."""
    import itertools

    from symreach.solvers.ic3_lift import Hop
    pairs = sorted(system.pairs.items())
    ranges = [range(Lifter.count(pv, state) + 1) if pv.counted else range(int(state[pv.present]) + 1)
              for _, pv in pairs]
    for target in itertools.product(*ranges):
        lower = tuple((p, c) for (p, pv), c in zip(pairs, target) if pv.counted)
        clear = tuple(pv.present for (p, pv), c in zip(pairs, target) if not pv.counted and not c)
        mid = lifter.run_hop(state, Hop(clear, lower, None), [])
        yield mid, None, mid
        for i, a in enumerate(system.actions):
            if a.op == DEPLOY:
                nxt = system.successor(a, mid)
                if nxt is not None:
                    yield mid, i, nxt


def _check_lifting(inst, max_checks=4000):
    """A lifted predecessor cube: every state in it takes the hop into the successor cube."""

    from symreach.encodings.compile import compile_system
    system = compile_system(inst, inst.query)
    lifter = Lifter(system)
    states = list(_all_states(system))
    svars = system.state_vars
    checks = 0
    for state in states:
        for mid, act, nxt in _macro_successors(system, lifter, state):
            for keep in (svars[:2], svars[-2:], system.actions[act].writes if act is not None else ()):
                succ = {v: nxt[v] for v in keep}
                pred, hop = lifter.lift(state, mid, act, succ)
                assert all(state[v] == b for v, b in pred.items())
                for s2 in states:
                    if any(s2[v] != b for v, b in pred.items()):
                        continue
                    t2 = lifter.run_hop(s2, hop, [])
                    assert t2 is not None
                    assert all(t2[v] == b for v, b in succ.items())
                    checks += 1
                    if checks >= max_checks:
                        return checks
    return checks


def test_lifting_is_exact_on_a_pyramid():
    assert _check_lifting(pyramid_instance(2, 4)) > 1000


def test_lifting_is_exact_with_counters():
    """Spread constraints make counted pairs; their lifting keeps exact counts."""
    from symreach.encodings.compile import compile_system
    from symreach.loader import load_document
    from tests.random_instances import random_doc
    tried = 0
    for seed in range(2000, 2200):
        try:
            inst = load_document(random_doc(seed, "kubernetes", features={"affinity", "spread", "initial"}))
        except InputError:
            continue
        system = compile_system(inst, inst.query)
        if not any(pv.counted for pv in system.pairs.values()) or len(system.state_vars) > 9:
            continue
        assert _check_lifting(inst, max_checks=800) > 0
        tried += 1
        if tried >= 3:
            break
    assert tried >= 1


def test_recycling_reuses_activation_ids_soundly():
    """Recycling every 3 temporary literals reuses their SAT ids in the fresh
    solver: verdicts, traces and certificates must not change."""
    from symreach.loader import load_document
    from symreach.solvers.explicit import ExplicitEngine
    from tests.random_instances import random_doc
    eng = Ic3Engine(recycle_every=3, fast_paths=False)
    for inst in (pyramid_instance(3, 4), pyramid_instance(3, 5)):
        res = eng.check(inst)
        assert res.stats["recycles"] > 3
        assert res.verdict is ExplicitEngine().check(inst).verdict
    checked = 0
    for seed in range(40):  # every seed's document loads: an InputError fails the test
        inst = load_document(random_doc(seed, features={"affinity", "anti", "spread", "capacity", "initial"}))
        checked += 1
        res = eng.check(inst)
        assert res.verdict is ExplicitEngine().check(inst).verdict
        if res.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, res.trace, inst.query)
        else:
            assert check_certificate(inst, res.certificate)[0]
    assert checked == 40
