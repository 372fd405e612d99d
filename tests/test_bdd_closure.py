"""The closure pass of chaining runs (``symreach.solvers.bdd_closure``):
which deletes it takes, and that sweeps with closure passes (and the
images they skip) reach the same fixpoint and verdicts as plain cyclic
chaining, in both directions, deterministically."""

import pytest

from symreach.encodings.circuit import Circuit
from symreach.encodings.compile import compile_system
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import pyramid
from symreach.loader import load_document
from symreach.result import DEPLOY, Verdict
from symreach.solvers.bdd import BddEngine, ReachConfig, Reachability, _Found
from symreach.solvers.bdd_closure import closure_actions, closure_order
from symreach.solvers.bdd_images import SymbolicSystem
from tests.random_instances import random_doc


def _pyramid(h: int, k: int):
    dag = pyramid(h)
    return load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))


def _random_systems(seeds):
    """(seed, system, SymbolicSystem) of the random instances ``seeds``."""
    for seed in seeds:
        inst = load_document(random_doc(seed))
        system = compile_system(inst, inst.query, type_order="reverse-level")
        yield seed, system, SymbolicSystem(system)


def _run(sym, direction: str, closure: bool, goal: bool = True):
    """A chaining run to its fixpoint or first hit: (hit?, the run)."""
    r = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                      keep_images=True, closure_pass=closure, to_fixpoint=not goal))
    try:
        r.run()
    except _Found:
        return True, r
    return False, r


def test_closure_actions_are_the_unguarded_bit_deletes():
    inst = _pyramid(4, 5)
    system = compile_system(inst, inst.query, type_order="reverse-level")
    sym = SymbolicSystem(system)
    idx = closure_actions(system)
    deletes = [i for i, a in enumerate(system.actions) if a.op != DEPLOY]
    assert sorted(idx) == deletes
    assert all(system.actions[i].guard == Circuit.TRUE for i in idx)
    # bottom-first: BDD levels never increase along the pass
    levels = [sym.bdd.level_of_var(sym.names[system.actions[i].writes[0]]) for i in closure_order(sym, idx)]
    assert levels == sorted(levels, reverse=True)


def test_counted_deletes_are_not_closure_actions():
    """Counter deletes decrement a counter (several moves): never closed in bulk."""
    from symreach.encodings.counters import CounterSystem, build_system
    from symreach.encodings.preprocess import preprocess
    from tests.test_counters import _pool_doc

    inst = load_document(_pool_doc("paper", 20))
    system = build_system(inst, inst.query, preprocess(inst, inst.query), "on")
    assert isinstance(system, CounterSystem)
    assert any(a.op != DEPLOY and len(a.moves) > 1 for a in system.actions)
    assert all(len(system.actions[i].moves) == 1 for i in closure_actions(system))


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_closure_pass_reaches_the_plain_fixpoint(direction):
    """On random systems, with the goal switched off, a run with closure
    passes ends at the same reached set as plain cyclic chaining, and that
    set is closed under every action; with the goal on, both runs agree on
    whether it is hit. Both branches occur, and the pass skips images."""
    fixpoints = hits = skipped = 0
    for seed, system, sym in _random_systems(range(0, 120, 2)):
        if not closure_actions(system):
            continue
        _, plain = _run(sym, direction, False, goal=False)
        _, closed = _run(sym, direction, True, goal=False)
        assert closed.R == plain.R, seed
        image = sym.post if direction == "forward" else sym.pre
        for i in range(len(system.actions)):
            assert image(i, closed.R) & ~closed.R == sym.bdd.false, (seed, i)
        skipped += closed.stats.get("closure_skipped", 0)
        hit_plain, _ = _run(sym, direction, False)
        hit_closed, _ = _run(sym, direction, True)
        assert hit_plain is hit_closed, seed
        hits += hit_closed
        fixpoints += 1
    assert fixpoints > hits > 3
    assert skipped > 0


@pytest.mark.parametrize("k", [6, 7])
def test_pyramid_closure_run_is_shorter_and_deterministic(k):
    """Pyramid h = 5 backward: the closure run decides as the plain run does,
    in fewer images (its closing sweep applies only the deploys), and two
    runs take the same steps."""
    inst = _pyramid(5, k)
    system = compile_system(inst, inst.query, type_order="reverse-level")
    sym = SymbolicSystem(system)
    hit_plain, plain = _run(sym, "backward", False)
    runs = [_run(sym, "backward", True) for _ in range(2)]
    keys = ("image_calls", "iterations", "closure_passes", "closure_skipped")
    first, second = ({key: r.stats.get(key) for key in keys} for _, r in runs)
    assert first == second
    assert runs[0][0] is hit_plain is (k >= 7)
    if not hit_plain:
        assert runs[0][1].R == plain.R
        assert first["image_calls"] < plain.stats["image_calls"]
        assert first["closure_passes"] >= 1 and first["closure_skipped"] > 0


@pytest.mark.parametrize("k", [7, 8])
def test_engine_verdicts_and_certificates_with_closure(k):
    """The engine (bidirectional, closure on) decides pyramid h = 6 both ways;
    the not-deployable certificate re-checks, the witness replays."""
    from symreach import semantics
    from symreach.certify.bdd_invariant import check_certificate

    inst = _pyramid(6, k)
    res = BddEngine(fast_paths=False).check(inst)
    if k == 8:
        assert res.verdict is Verdict.DEPLOYABLE
        semantics.replay(inst, res.trace, inst.query)
    else:
        assert res.verdict is Verdict.NOT_DEPLOYABLE
        ok, why = check_certificate(inst, inst.query, res.certificate)
        assert ok, why


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_read_domain_images_equal_the_plain_images(direction):
    """Every deploy image of ``R & Q`` (``ReadDomain``) equals its image of
    ``R``, on random systems and on reached sets at several stages; and a
    run with the restricted images ("always") reaches the plain fixpoint."""
    from symreach.solvers.bdd_closure import ReadDomain

    forward = direction == "forward"
    checked = nonempty = 0
    for seed, system, sym in _random_systems(range(1, 80, 3)):
        dom = ReadDomain(sym, forward)
        image = sym.post if forward else sym.pre
        r = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                          keep_images=False))
        for _ in range(3):
            for i in sorted(dom.members):
                plain = image(i, r.R)
                assert image(i, dom.of(r.R)) == plain, (seed, i)
                checked += 1
                nonempty += plain != sym.bdd.false
            for i in range(len(system.actions)):
                r.R |= image(i, r.R)
        _, off = _run(sym, direction, True, goal=False)
        run = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                            keep_images=True, read_domain="always", to_fixpoint=True))
        run.run()
        assert run.R == off.R, seed
    assert checked > nonempty > 10
