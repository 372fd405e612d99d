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
from symreach.solvers.bdd import WALK, BddEngine, ReachConfig, Reachability, _Found
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


def _image_pass(sym, r, idx, forward: bool):
    """The closure pass by images: each closure action once, bottom-first."""
    image = sym.post if forward else sym.pre
    for i in closure_order(sym, idx):
        r |= image(i, r)
    return r


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_closure_walk_equals_the_image_pass(direction):
    """``close_set`` (one walk of the DAG) gives the set the image pass
    gives, on random systems' start sets, the sets after one and two
    plain sweeps and their complements (negated edges); the walk's set is
    closed under every closure action. Sets that the pass grows occur."""
    from symreach.solvers.bdd_closure import close_set

    forward = direction == "forward"
    checked = grown = 0
    for seed, system, sym in _random_systems(range(0, 120, 3)):
        idx = closure_actions(system)
        if not idx:
            continue
        names = {sym.names[system.actions[i].writes[0]] for i in idx}
        image = sym.post if forward else sym.pre
        r = sym.initial if forward else sym.target
        for _ in range(3):
            for s in (r, ~r):
                walked = close_set(sym.bdd, s, names, upward=not forward)
                assert walked == _image_pass(sym, s, idx, forward), seed
                assert all(image(i, walked) & ~walked == sym.bdd.false for i in idx), seed
                checked += 1
                grown += walked != s
            for i in range(len(system.actions)):
                r |= image(i, r)
    assert checked > grown > 10


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_runs_with_the_walk_reach_the_plain_fixpoint(direction):
    """Random systems: a ring-free run whose closure pass is the walk ends
    at the plain chaining fixpoint; with the goal on and the ring limit at
    0 (the side drops its rings and walks), it hits exactly when the plain
    run does. The walk runs on some of them."""
    walked = hits = compared = 0
    for seed, system, sym in _random_systems(range(1, 120, 2)):
        if not closure_actions(system):
            continue
        _, plain = _run(sym, direction, False, goal=False)
        run = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                            to_fixpoint=True))
        run.run()
        assert run.R == plain.R, seed
        walked += "closure_walk_s" in run.stats
        hit_plain, _ = _run(sym, direction, False)
        limited = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                                keep_images=True, ring_limit=0))
        try:
            limited.run()
            hit = False
        except _Found:
            hit = True
        assert hit is hit_plain, seed
        hits += hit
        compared += 1
    assert walked > 5 and compared > hits > 3


@pytest.mark.parametrize("ring_limit", [None, 0])
def test_engine_with_the_walk_agrees_with_explicit(monkeypatch, ring_limit):
    """The engine (the closure pass is the walk) gives the explicit engine's
    verdicts on random instances in every direction; witnesses replay (also
    those found after a walk, whose ring ``witness`` traces back through
    deletes), certificates re-check. ``RING_LIMIT`` 0: every side drops its
    rings past its first sweep and a late hit reruns it."""
    from symreach import semantics
    from symreach.certify.bdd_invariant import check_certificate
    from symreach.solvers import bdd as bdd_module
    from symreach.solvers.explicit import ExplicitEngine

    if ring_limit is not None:
        monkeypatch.setattr(bdd_module, "RING_LIMIT", ring_limit)
    seen = {Verdict.DEPLOYABLE: 0, Verdict.NOT_DEPLOYABLE: 0}
    walked = 0
    for seed in range(0, 160, 4):
        inst = load_document(random_doc(seed))
        expected = ExplicitEngine().check(inst).verdict
        for direction in ("bidirectional", "backward", "forward"):
            res = BddEngine(fast_paths=False, direction=direction).check(inst)
            assert res.verdict is expected, (seed, direction)
            stats = res.stats or {}
            walked += stats.get("closure_walks", 0) > 0
            if res.verdict is Verdict.DEPLOYABLE:
                semantics.replay(inst, res.trace, inst.query)
            elif res.certificate is not None:
                ok, why = check_certificate(inst, inst.query, res.certificate)
                assert ok, (seed, why)
        seen[expected] += 1
    assert min(seen.values()) > 8 and walked > 3, (seen, walked)


def test_witness_through_a_walk_ring():
    """Hits found after a closure walk (backward sweeps in the forward order,
    so the goal needs many sweeps; forward runs hit pyramids in their first
    sweep): the witness, traced back through the walk's ring by deletes,
    leads from the initial state to the target image by image."""
    direction = "backward"
    through = 0
    for h, k in ((3, 5), (4, 6), (5, 7)):
        inst = _pyramid(h, k)
        system = compile_system(inst, inst.query, type_order="reverse-level")
        sym = SymbolicSystem(system)
        run = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                            keep_images=True, reverse_backward=False,
                                            deploy_order="level"))
        try:
            run.run()
        except _Found as exc:
            found = exc
        else:  # pragma: no cover - every pyramid here is deployable
            raise AssertionError((h, k))
        walk_rings = [j for j, (_, a) in enumerate(run.rings) if a == WALK]
        through += bool(walk_rings) and found.ring > walk_rings[0]
        states = sym.initial
        for a in run.witness(found.ring, found.hit):
            states = sym.post(a, states)
            assert states != sym.bdd.false, (h, k)
        assert states & sym.target != sym.bdd.false, (h, k)
    assert through == 3
