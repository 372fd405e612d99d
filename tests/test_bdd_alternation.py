"""The BDD engine's forward/backward alternation and chaining termination:
deterministic (node counts, never time), and the closing sweep stops after
one full cycle of images that add nothing."""

import pytest

from symreach.encodings.compile import compile_system
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import pyramid
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.bdd import BddEngine, ReachConfig, Reachability, pick_side
from symreach.solvers.bdd_images import SymbolicSystem


def _pyramid(h: int, k: int):
    dag = pyramid(h)
    return load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))


def test_pick_side_least_work_then_first():
    assert pick_side(["forward", "backward"], {"forward": 5, "backward": 3}) == "backward"
    assert pick_side(["forward", "backward"], {"forward": 3, "backward": 5}) == "forward"
    assert pick_side(["forward", "backward"], {"forward": 4, "backward": 4}) == "forward"
    assert pick_side(["backward"], {"backward": 10}) == "backward"


@pytest.mark.parametrize("k", [7, 8])
def test_alternation_is_deterministic(k):
    """Two runs take the same steps: the same images per side, the same work,
    the same deciding side (a time-based choice would differ run to run)."""
    inst = _pyramid(6, k)
    runs = [BddEngine(fast_paths=False).check(inst) for _ in range(2)]
    keys = ("side_images", "work", "decided_direction", "image_calls", "iterations")
    first, second = ({key: r.stats[key] for key in keys} for r in runs)
    assert first == second
    assert runs[0].verdict is (Verdict.DEPLOYABLE if k == 8 else Verdict.NOT_DEPLOYABLE)
    # both sides were stepped, and the work is counted in nodes
    assert all(n > 0 for n in first["side_images"].values())
    assert all(w > 0 for w in first["work"].values())


def test_closing_sweep_stops_after_one_idle_cycle():
    """A backward chaining run to the fixpoint applies fewer images than whole
    sweeps would: the actions after the last growing image of the last
    growing sweep are not re-applied (plain cyclic chaining: the closure
    pass, on by default, is pinned in test_bdd_closure.py)."""
    inst = _pyramid(6, 7)
    res = BddEngine(fast_paths=False).check(inst)
    system = compile_system(inst, inst.query, type_order="reverse-level")
    sym = SymbolicSystem(system)
    r = Reachability(sym, ReachConfig(direction="backward", dynamic_reorder=False, record_rings=False,
                                      keep_images=True, closure_pass=False))
    r.run()
    n = len(system.actions)
    sweeps = r.stats["iterations"]
    assert sweeps >= 2
    assert r.stats["image_calls"] < sweeps * n
    # the last n images added nothing, and R is closed under every action
    for i in range(n):
        assert (sym.pre(i, r.R) & ~r.R) == sym.bdd.false
    assert res.verdict is Verdict.NOT_DEPLOYABLE


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_new_states_agree_with_the_image(direction):
    """``new_states`` (the image minus R from ``R|src & ~R|dst``, with and
    without the and-exists emptiness test) equals building the image and
    subtracting R, on random systems and on reached sets at several stages."""
    from tests.random_instances import random_doc

    forward = direction == "forward"
    checked = grown = 0
    for seed in range(0, 90, 3):
        inst = load_document(random_doc(seed))
        system = compile_system(inst, inst.query, type_order="reverse-level")
        sym = SymbolicSystem(system)
        r = Reachability(sym, ReachConfig(direction=direction, dynamic_reorder=False, record_rings=False,
                                          keep_images=False))
        image = sym.post if forward else sym.pre
        for _ in range(3):
            for i in range(len(system.actions)):
                expected = image(i, r.R) & ~r.R
                for test in (True, False):
                    assert sym.new_states(i, r.R, forward, test=test) == expected, (seed, i)
                assert sym.meets(image(i, r.R), ~r.R) is (expected != sym.bdd.false)
                checked += 1
                grown += expected != sym.bdd.false
                r.R |= expected
    # both outcomes of the emptiness test occur
    assert checked > grown > 5


def test_image_modes_take_the_same_steps():
    """All three image modes reach the same sets image by image: the same
    verdict, images and reached set."""
    inst = _pyramid(5, 6)
    system = compile_system(inst, inst.query, type_order="reverse-level")
    sym = SymbolicSystem(system)
    seen = []
    for mode in ("whole", "diff", "diff-test"):
        r = Reachability(sym, ReachConfig(direction="backward", dynamic_reorder=False, record_rings=False,
                                          keep_images=True, image_mode=mode))
        r.run()
        seen.append((r.stats["image_calls"], r.stats["rings"], r.R))
    assert seen[0] == seen[1] == seen[2]


def test_dropped_rings_rerun_to_the_same_witness(monkeypatch):
    """A side that dropped its rings (``ring_limit``) and then hits the goal
    is rerun with rings; the witness replays, and the decision and the
    images of the search are those of a run that kept its rings."""
    from symreach import semantics
    from symreach.solvers import bdd
    from tests.random_instances import random_doc

    # a random instance whose deciding side hits the goal after its first sweep and
    # its closure walk (198 before the walk: its hit now comes in the walk's ring)
    inst = load_document(random_doc(259))
    keep = BddEngine(fast_paths=False).check(inst)
    monkeypatch.setattr(bdd, "RING_LIMIT", 0)
    drop = BddEngine(fast_paths=False).check(inst)
    assert keep.verdict is drop.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, drop.trace, inst.query)
    assert drop.stats["side_images"] == keep.stats["side_images"]
    assert drop.stats["witness_rerun_images"] > 0
    assert "witness_rerun_images" not in keep.stats
