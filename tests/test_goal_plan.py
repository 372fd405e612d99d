"""Goal regression (``solvers/goal_plan.py``): ``auto``'s witness attempt before any engine.

Its traces are witnesses (replayed here again, beside the replay inside);
``None`` proves nothing, so the not-deployable cases only check it gives up."""

from __future__ import annotations

import multiprocessing as mp

from symreach import semantics
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import binary_tree, pyramid
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.solvers.goal_plan import CAPACITY, OTHER, attempt, plan_witness
from symreach.solvers.portfolio import AutoEngine
from symreach.solvers.schedule import solo_engines


def _pebbling(dag, k: int):
    return load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))


def test_pebbles_trees_and_pyramids_at_their_price_and_gives_up_below():
    checked = 0
    for make in (binary_tree, pyramid):
        for h in range(1, 6):
            inst = _pebbling(make(h), h + 2)  # the price (generators/dags.py)
            trace = plan_witness(inst, inst.query)
            assert trace is not None
            semantics.replay(inst, trace, inst.query)
            below = _pebbling(make(h), h + 1)
            assert attempt(below, below.query).gave_up == CAPACITY  # the schedule's feature
            checked += 1
    assert checked == 10


def test_a_step_cap_makes_it_give_up():
    inst = _pebbling(binary_tree(4), 6)
    assert len(plan_witness(inst, inst.query)) == 61
    assert attempt(inst, inst.query, max_steps=60).gave_up == OTHER


def test_refused_for_another_reason_than_affinity_it_gives_up():
    """A chain whose target requests more than the node holds: its witness is placed,
    then the target is refused and the attempt ends (no backtracking)."""
    doc = encode_pebbling(["a", "b"], [["a", "b"]], "b", 2)
    doc["podTypes"][1]["requests"] = {"pebbles": 3}
    inst = load_document(doc)
    assert plan_witness(inst, inst.query) is None


def test_auto_answers_a_deployable_tree_by_goal_regression_without_a_race():
    inst = _pebbling(binary_tree(5), 7)
    res = AutoEngine().check(inst, run=Limits(timeout_s=60))
    assert res.verdict is Verdict.DEPLOYABLE and res.engine == "auto/goal-plan"
    assert res.stats["portfolio"]["answered_by"] == "goal-plan"
    semantics.replay(inst, res.trace, inst.query)
    assert not mp.active_children()


def test_without_a_plan_the_bdds_go_first_on_small_one_node_systems():
    engines = ["bdd", "ic3", "bmc", "abc-pdr"]
    assert solo_engines(45, engines, 1, "paper")[0][0] == "ic3"
    assert solo_engines(45, engines, 1, "paper", regression_full=True) == [("bdd", 240.0)]
    # clusters keep their plan
    assert solo_engines(45, engines, 20, "paper", regression_full=True)[0][0] == "bmc"
