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
    # small clusters: IC3 without BMC's trial; large ones keep their plan
    assert solo_engines(84, engines, 50, "paper")[0][0] == "bmc"
    assert solo_engines(84, engines, 50, "paper", regression_full=True) == [("ic3", 1.5)]
    assert solo_engines(300, engines, 100, "paper", regression_full=True) == [("abc-pdr", 4.0)]


def _full_node_doc() -> dict:
    """A chain a <- b on node n1, which four unrelated ``filler`` pods fill: b fits
    only once some of them are gone (any pod may be deleted under paper moves)."""
    doc = encode_pebbling(["a", "b"], [["a", "b"]], "b", 3)
    doc["podTypes"].append({"name": "filler", "labels": {"app": "filler"}, "requests": {"pebbles": 1}})
    doc["initial"] = [{"pod": "filler", "node": doc["nodes"][0]["name"], "count": 3}]
    return doc


def test_it_deletes_pods_the_plan_does_not_read_to_make_room():
    doc = _full_node_doc()
    a, b = (t["name"] for t in doc["podTypes"][:2])
    inst = load_document(doc)
    trace = plan_witness(inst, inst.query)
    assert trace is not None
    semantics.replay(inst, trace, inst.query)
    pods = [(s.op, s.pod) for s in trace]
    # two fillers make room for a and b (two pebbles at once); a itself, which b reads,
    # is deleted only after b stands (the plan removes its own witnesses)
    assert pods.count(("delete", "filler")) == 2 and pods.count(("delete", a)) == 1
    assert pods.index(("delete", a)) > pods.index(("deploy", b))


def test_it_never_deletes_a_witness_the_target_reads():
    """The node is full of pods of the target's own witness type: deleting one would
    only have to be undone, so the attempt gives up (capacity) instead."""
    doc = encode_pebbling(["a", "b"], [["a", "b"]], "b", 2)
    doc["initial"] = [{"pod": doc["podTypes"][0]["name"], "node": doc["nodes"][0]["name"], "count": 2}]
    inst = load_document(doc)
    assert attempt(inst, inst.query).gave_up == CAPACITY


def test_a_plan_that_needs_more_pods_at_once_than_fit_gives_up_before_any_step():
    """Not-deployable pebblings: the peak (h + 2 pebbles) exceeds k = h + 1, which the
    attempt used to find only at the last of its 2^h steps (or never, past its cap)."""
    checked = 0
    for h in (6, 12, 14):  # 14: issue 31's largest, which the BDDs now get first (240 s)
        inst = _pebbling(pyramid(h), h + 1)
        assert attempt(inst, inst.query, max_steps=1).gave_up == CAPACITY
        assert solo_engines(len(inst.pod_types), ["bdd", "ic3"], 1, "paper",
                            regression_full=True) == [("bdd", 240.0)]
        checked += 1
    assert checked == 3


def test_the_witness_is_chosen_by_the_chain_that_ends_at_running_pods():
    """The Kubernetes-profile hard clusters: the query node is full of batch pods, and
    of the services' two possible data-layer parents only the StatefulSet already
    running in the node's zone can be reached (the other one's first replica is
    elsewhere): goal regression finds each witness (IC3 needs 0.01-2.5 s of CPU)."""
    from symreach.generators.hard_clusters import generate_hard_cluster

    found = 0
    for nodes, workloads, seed in ((20, 10, 0), (20, 10, 1), (50, 30, 0), (50, 30, 1)):
        inst = load_document(generate_hard_cluster(nodes, workloads, seed, "kubernetes"))
        trace = plan_witness(inst, inst.query)
        assert trace is not None
        semantics.replay(inst, trace, inst.query)
        assert any(s.op == "delete" and s.pod.startswith("batch") for s in trace)
        found += 1
    assert found == 4


def test_the_paper_hard_clusters_that_need_more_pods_on_the_node_than_fit():
    """The feature behind ``SOLOS_NO_PLAN`` on clusters: the gateway's pyramid of
    hostname-bound services needs h + 2 pods at once on the query node, which holds
    h + 1 on one seed (not deployable: IC3 first) and h + 2 on the other (deployable:
    goal regression goes on, here only to its step cap). Only the terms that the node
    alone can meet count (the data layer's are met in the zone)."""
    from symreach.generators.hard_clusters import generate_hard_cluster

    outcomes = {}
    for seed in (0, 1):
        inst = load_document(generate_hard_cluster(50, 30, seed, "paper"))
        outcomes[seed] = attempt(inst, inst.query, max_steps=1).gave_up
    assert outcomes == {0: CAPACITY, 1: OTHER}


def test_when_the_plan_runs_out_of_room_the_lazy_search_is_not_started(monkeypatch):
    """Capacity binds there, which the lazy search declines (after its start)."""
    from symreach.solvers import workers

    started: list[str] = []
    original = workers.ResidentWorker.__init__

    def record(self, name, *args, **kwargs):
        started.append(name)
        original(self, name, *args, **kwargs)

    monkeypatch.setattr(workers.ResidentWorker, "__init__", record)
    inst = _pebbling(pyramid(4), 5)
    assert attempt(inst, inst.query).gave_up == CAPACITY
    res = AutoEngine().check(inst, run=Limits(timeout_s=60))
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert started and "lazy" not in started
    started.clear()  # without goal regression's answer the lazy search starts (and declines)
    AutoEngine(goal_plan=False).check(inst, run=Limits(timeout_s=60))
    assert "lazy" in started
    assert not mp.active_children()


def test_paper_hard_clusters_move_a_self_affine_statefulset_into_the_zone_beside_the_node():
    """The paper profile's deployable hard clusters (ABC's pdr about 1 CPU s at 100 x 60):
    a level-1 service on the query node needs a replica of StatefulSets ``db-i`` in its zone
    whose only replica runs in another zone. Goal regression deletes that replica (the
    self-affinity waiver then holds) and deploys one on another node of the zone, not on
    the query node, whose room the hostname pyramid needs; before, it gave up there."""
    from symreach.generators.hard_clusters import generate_hard_cluster

    found = 0
    for nodes, workloads in ((20, 10), (50, 30)):
        inst = load_document(generate_hard_cluster(nodes, workloads, 1, "paper"))
        (goal_type, goal_node), = next(iter(inst.query.alternatives))
        goal, zone = inst.nodes[goal_node].name, inst.nodes[goal_node].labels["topology.kubernetes.io/zone"]
        trace = plan_witness(inst, inst.query)
        assert trace is not None
        semantics.replay(inst, trace, inst.query)
        moved = [s.pod for s in trace if s.op == "delete" and s.pod.startswith("db-")
                 and inst.nodes[inst.node_index(s.node)].labels["topology.kubernetes.io/zone"] != zone]
        assert moved
        for db in moved:
            site = next(s.node for s in trace if s.op == "deploy" and s.pod == db)
            assert site != goal and inst.nodes[inst.node_index(site)].labels[
                "topology.kubernetes.io/zone"] == zone
        found += 1
    assert found == 2
    res = AutoEngine(tiny_pairs=0).check(inst, run=Limits(timeout_s=60))
    assert res.verdict is Verdict.DEPLOYABLE and res.stats["portfolio"]["answered_by"] == "goal-plan"
    semantics.replay(inst, res.trace, inst.query)
    assert not mp.active_children()


def test_a_witness_that_fails_beside_the_node_is_taken_back_and_placed_on_it():
    """Random clusters where the witness of a zone term, placed on another node of the
    zone, cannot be completed there (its own hostname term needs a type that node's
    taint repels): its steps are taken back and it goes on the node itself, as before
    ``_beside`` existed, which finds the witness."""
    from symreach.generators.clusters import generate_cluster

    found = 0
    for nodes, types, seed in ((30, 20, 13), (60, 40, 12)):
        inst = load_document(generate_cluster(nodes=nodes, pod_types=types, seed=seed))
        trace = plan_witness(inst, inst.query)
        assert trace is not None
        semantics.replay(inst, trace, inst.query)
        found += 1
    assert found == 2
