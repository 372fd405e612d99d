"""The scheduler's cycle for CompositePodGroup hierarchies (issue 28 item 3; ``gangs.composite_cycle``).

Hand-worked cases for each outcome (succeeds, may-fail, fails), the greedy
over-placement that starves a sibling, the revert of a missed child, the early
stop, and "no pods were schedulable"; then ``composite_cycle`` (memoised,
interchangeable nodes, cut) against a plain enumeration of every node choice
on random small hierarchies, every run replayed, and against the single-group
cycle on single groups. Counts are asserted so nothing passes vacuously.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from symreach import gangs, semantics
from symreach.errors import InputError
from symreach.loader import load_document, load_text
from symreach.solvers.gang_explicit import answer
from tests.random_instances import random_doc

ROOT = "{name: root, composite: true, policy: %s}"
ONE_NODE = "[{name: n1, capacity: {cpu: 2}}]"


def instance(nodes: str, pods: str, groups: str, initial: str = "[]"):
    return load_text(f"version: 1\nnodes: {nodes}\npodTypes: {pods}\ninitial: {initial}\ngroups: {groups}\n")


def cycle(inst, name: str = "root") -> gangs.Cycle:
    """The cycle from sigma0 with both of its runs replayed."""
    c = gangs.scheduler_cycle(inst, gangs.gang_of(inst, name), inst.initial_config())
    for run in (c.failing, c.succeeding):
        if run is not None:
            gangs.check_run(inst, inst.initial_config(), run)
    return c


def marks(run) -> list[tuple[str, object]]:
    return [(e.name, e.met) for e in run if isinstance(e, gangs.Mark)]


def two_leaves(root: str, a: str, count_a: int = 1, cpu_a: int = 1, cpu_b: int = 1):
    """A 2-cpu node; root (policy ``root``) over leaf a (policy ``a``, count_a members of wa) and
    leaf b (minCount 1, one member of wb)."""
    return instance(ONE_NODE, f"[{{name: wa, requests: {{cpu: {cpu_a}}}}}, {{name: wb, requests: {{cpu: {cpu_b}}}}}]",
                    "[" + ROOT % root +
                    f", {{name: a, parent: root, policy: {a}, members: [{{pod: wa, count: {count_a}}}]}}"
                    ", {name: b, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: wb}]}]")


def test_composite_succeeds_for_every_choice():
    # minGroupCount 2 over two 1-cpu leaves on a 2-cpu node: each leaf places its member, root met.
    inst = two_leaves("{gang: {minGroupCount: 2}}", "{gang: {minCount: 1}}")
    c = cycle(inst)
    assert c.outcome == gangs.SUCCEEDS and c.failing is None
    assert marks(c.succeeding)[-1] == ("root", True)


def test_composite_may_fail_on_the_first_child_node_choice():
    # a's small member on big starves b's large member (big only); on little both fit.
    inst = instance("[{name: big, labels: {size: big}, capacity: {cpu: 2}}, {name: little, capacity: {cpu: 1}}]",
                    "[{name: small, requests: {cpu: 1}}, {name: large, requests: {cpu: 2}, nodeSelector: {size: big}}]",
                    "[" + ROOT % "{gang: {minGroupCount: 2}}" +
                    ", {name: a, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: small}]}"
                    ", {name: b, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: large}]}]")
    small, large = inst.type_index("small"), inst.type_index("large")
    big, little = inst.node_index("big"), inst.node_index("little")
    c = cycle(inst)
    assert c.outcome == gangs.MAY_FAIL
    assert [e for e in c.failing if not isinstance(e, gangs.Mark)] == [(small, big), (large, None)]
    assert [e for e in c.succeeding if not isinstance(e, gangs.Mark)] == [(small, little), (large, big)]
    assert marks(c.failing) == [("root", None), ("a", None), ("a", True), ("b", None), ("b", False), ("root", False)]


def test_composite_fails_for_every_choice_by_greedy_over_placement():
    # KEP-6012 "resource stealing": basic leaf a is met after one pod but places its second too,
    # so b's member finds no cpu; a placement exists (one of a's, b's) and the gang step finds it.
    inst = two_leaves("{gang: {minGroupCount: 2}}", "{basic: {}}", count_a=2)
    c = cycle(inst)
    wa, wb = inst.type_index("wa"), inst.type_index("wb")
    assert c.outcome == gangs.FAILS and c.succeeding is None
    assert [e for e in c.failing if not isinstance(e, gangs.Mark)] == [(wa, 0), (wa, 0), (wb, None)]
    ans = answer(inst, "root")
    assert ans.result.verdict.value == "deployable" and ans.placement_now is not None
    assert sorted(t for t, _ in ans.placement_now) == [wa, wb]


def test_a_missed_child_is_reverted_and_its_sibling_fits():
    # a (minCount 2, two 2-cpu members) places one then misses: reverted, so b's 1-cpu member
    # fits on the 2-cpu node and the basic root is met. Without the revert b would not fit.
    inst = two_leaves("{basic: {}}", "{gang: {minCount: 2}}", count_a=2, cpu_a=2)
    c = cycle(inst)
    assert c.outcome == gangs.SUCCEEDS
    assert marks(c.succeeding) == [("root", None), ("a", None), ("a", False), ("b", None), ("b", True),
                                   ("root", True)]


def test_a_composite_stops_once_its_need_is_out_of_reach():
    # minGroupCount 2 of three children: after a and b miss (S 0, R 1) the root stops; c is never tried.
    inst = instance("[{name: n1, capacity: {cpu: 1}}]",
                    "[{name: wa, requests: {cpu: 2}}, {name: wb, requests: {cpu: 2}}, {name: wc, requests: {cpu: 1}}]",
                    "[" + ROOT % "{gang: {minGroupCount: 2}}" +
                    "".join(f", {{name: {x}, parent: root, policy: {{gang: {{minCount: 1}}}}, members: [{{pod: w{x}}}]}}"
                            for x in "abc") + "]")
    c = cycle(inst)
    assert c.outcome == gangs.FAILS
    assert ("c", None) not in marks(c.failing) and marks(c.failing)[-1] == ("root", False)


def test_nested_composites_and_a_refused_level():
    # mid needs 2 children but has 1: refused at once (no pod tried); the basic root is met by leaf z.
    inst = instance(ONE_NODE, "[{name: wx, requests: {cpu: 1}}, {name: wz, requests: {cpu: 1}}]",
                    "[" + ROOT % "{basic: {}}" +
                    ", {name: mid, composite: true, parent: root, policy: {gang: {minGroupCount: 2}}}"
                    ", {name: x, parent: mid, policy: {gang: {minCount: 1}}, members: [{pod: wx}]}"
                    ", {name: z, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: wz}]}]")
    c = cycle(inst)
    assert c.outcome == gangs.SUCCEEDS
    assert marks(c.succeeding)[:3] == [("root", None), ("mid", None), ("mid", False)]
    assert inst.type_index("wx") not in [e[0] for e in c.succeeding if not isinstance(e, gangs.Mark)]


def test_no_pods_were_schedulable_fails_though_the_policy_holds():
    # minCount 1 is met by the running member; the pending one fits nowhere: the scheduler says
    # "no pods were schedulable" -- for a single group and for a composite alike.
    pods = "[{name: w, requests: {cpu: 2}}]"
    running = "[{pod: w, node: n1}]"
    single = instance(ONE_NODE, pods, "[{name: g, policy: {gang: {minCount: 1}}, members: [{pod: w}]}]", running)
    assert cycle(single, "g").outcome == gangs.FAILS
    nested = instance(ONE_NODE, pods, "[" + ROOT % "{basic: {}}" +
                      ", {name: g, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: w}]}]", running)
    assert cycle(nested).outcome == gangs.FAILS


# ---- against a plain enumeration ------------------------------------------------------------------

def brute(inst, gang: gangs.Gang, sigma) -> set[bool]:
    """Every outcome over every node choice, written from the rule alone (no memo, no symmetry,
    no cut): a group's outcomes are (met, a pod assumed, configuration after)."""
    nodes = range(len(inst.nodes))

    def leaf(name, start):
        group = gang.groups[name]
        queue, need = gangs.queue_order(group), gang.need(group)
        running = sum(start[inst.pair(t, n)] for t, g in gang.leaf_of.items() if g == name for n in nodes)
        out = set()

        def go(i, config, placed):
            if i == len(queue) or running + placed + len(queue) - i < need:
                met = running + placed >= need
                out.add((met, placed > 0, config if met else start))
                return
            t = queue[i]
            fits = [n for n in nodes if semantics.node_failure(inst, t, n, config) is None]
            for n in fits:
                go(i + 1, semantics.deploy(inst, config, t, n), placed + 1)
            if not fits:
                go(i + 1, config, placed)

        go(0, start, 0)
        return out

    def group(name, start):
        if not gang.groups[name].composite:
            return leaf(name, start)
        kids, need, out = gang.children.get(name, ()), gang.need(gang.groups[name]), set()

        def go(k, config, met_kids, any_):
            if k == len(kids) or met_kids + len(kids) - k < need:
                met = met_kids >= need
                out.add((met, any_ and met, config if met else start))
                return
            for met, assumed, after in group(kids[k], config):
                go(k + 1, after, met_kids + met, any_ or (met and assumed))

        go(0, start, 0, False)
        return out

    return {met and assumed for met, assumed, _ in group(gang.root.name, sigma)}


def composite_doc(seed: int, profile: str) -> dict:
    """A random small hierarchy: 2-3 children under a root, a child a leaf or a composite of 1-2
    leaves; each leaf one member type of 1-2 pods, maybe a picky one last; random policies."""
    rng = random.Random(seed * 104729 + 3)
    doc = random_doc(seed, profile)
    doc.pop("query")
    types = [t["name"] for t in doc["podTypes"]]
    rng.shuffle(types)
    groups = [{"name": "root", "composite": True, "policy": _policy(rng, "minGroupCount", 3)}]
    leaves = []
    for k in range(rng.randint(2, 3)):
        if rng.random() < 0.3:
            groups.append({"name": f"c{k}", "composite": True, "parent": "root",
                           "policy": _policy(rng, "minGroupCount", 2)})
            leaves += [(f"c{k}l{j}", f"c{k}") for j in range(rng.randint(1, 2))]
        else:
            leaves.append((f"l{k}", "root"))
    for name, parent in leaves:
        mine, types = types[:1], types[1:]
        members = [{"pod": t, "count": rng.randint(1, 2)} for t in mine]
        groups.append({"name": name, "parent": parent, "policy": _policy(rng, "minCount", 2),
                       **({"members": members} if members else {})})
    if rng.random() < 0.6:   # a picky member in the last leaf: earlier node choices may starve it
        for t in doc["podTypes"]:
            t.pop("affinity", None)
            t["requests"]["cpu"] = str(max(1, int(t["requests"].get("cpu", "0"))))
        node = doc["nodes"][rng.randrange(len(doc["nodes"]))]
        node["labels"]["pick"] = "me"
        doc["nodes"].append({"name": "spare", "labels": {"zone": "z9"}, "capacity": dict(node["capacity"])})
        doc["podTypes"].append({"name": "picky", "labels": {"app": "p"}, "nodeSelector": {"pick": "me"},
                                "requests": {"cpu": node["capacity"].get("cpu", "1")}})
        groups[-1].setdefault("members", []).append({"pod": "picky", "count": 1})
    names = {m["pod"] for g in groups for m in g.get("members", [])}
    if rng.random() < 0.8:
        doc["initial"] = [e for e in doc["initial"] if e["pod"] not in names]
    doc["groups"] = groups
    return doc


def _policy(rng: random.Random, key: str, top: int) -> dict:
    return {"basic": {}} if rng.random() < 0.4 else {"gang": {key: rng.randint(1, top)}}


@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_composite_cycle_agrees_with_plain_enumeration(profile):
    checked, outcomes = 0, Counter()
    for seed in range(250):
        try:
            inst = load_document(composite_doc(seed, profile))
        except InputError:
            continue
        gang, sigma = gangs.gang_of(inst, "root"), inst.initial_config()
        c = gangs.scheduler_cycle(inst, gang, sigma)
        expected = {frozenset({True}): gangs.SUCCEEDS, frozenset({False}): gangs.FAILS,
                    frozenset({True, False}): gangs.MAY_FAIL}[frozenset(brute(inst, gang, sigma))]
        assert c.outcome == expected, seed
        for run in (c.failing, c.succeeding):
            if run is not None:
                gangs.check_run(inst, sigma, run)
                assert marks(run)[-1][0] == "root", seed   # a failing run may end met with no pod assumed
        assert c.succeeding is None or marks(c.succeeding)[-1] == ("root", True), seed
        if c.succeeding is not None:   # the scheduler's success is a gang step
            assert gangs.gang_step(inst, gang, sigma) is not None, seed
        checked += 1
        outcomes[c.outcome] += 1
    assert checked >= 200, checked
    assert min(outcomes[o] for o in (gangs.SUCCEEDS, gangs.MAY_FAIL, gangs.FAILS)) >= 3, outcomes


def test_composite_machine_agrees_with_the_single_group_cycle():
    # composite_cycle run on a single group must say what the dedicated single-group code says
    from tests.test_gang_differential import gang_doc

    checked = Counter()
    for seed in range(150):
        try:
            inst = load_document(gang_doc(seed, "kubernetes"))
        except InputError:
            continue
        gang, sigma = gangs.gang_of(inst, "g"), inst.initial_config()
        leaf = gangs.scheduler_cycle(inst, gang, sigma)
        assert gangs.composite_cycle(inst, gang, sigma).outcome == leaf.outcome, seed
        checked[leaf.outcome] += 1
    assert sum(checked.values()) >= 120 and checked[gangs.FAILS] >= 10, checked


# ---- explain --group and check --group --why name the blocking member --------------------------------

COMPOSITE = """version: 1
nodes:
  - {name: big, labels: {size: big}, capacity: {cpu: 2}}
  - {name: little, capacity: {cpu: 1}}
podTypes:
  - {name: small, requests: {cpu: 1}}
  - {name: large, requests: {cpu: 2}, nodeSelector: {size: big}}
groups:
  - {name: root, composite: true, policy: {gang: {minGroupCount: 2}}}
  - {name: a, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: small}]}
  - {name: b, parent: root, policy: {gang: {minCount: %d}}, members: [{pod: large, count: %d}]}
"""


def _cli(*args):
    from click.testing import CliRunner

    from symreach.cli import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [("explain",), ("check", "--why")])
def test_composite_explain_and_why_name_the_blocked_member_and_the_missed_policy(tmp_path, command):
    deployable, never = tmp_path / "ok.yaml", tmp_path / "never.yaml"
    deployable.write_text(COMPOSITE % (1, 1))
    never.write_text(COMPOSITE % (2, 2))     # two 2-cpu members, one big node: b can never be met
    out = _cli(command[0], str(deployable), "--group", "root", *command[1:]).output
    assert "large: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector." in out
    assert "group b: minCount (1) cannot be satisfied: 0 scheduled, 0 remaining" in out
    assert "group root: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining; its 1 assumed pods are reverted" in out
    out = _cli(command[0], str(never), "--group", "root", *command[1:]).output
    assert "no placement exists in any reachable configuration" in out
    # a's member takes big first; b's first member fits nowhere and b stops (0 + 1 left < 2)
    assert "group b: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining" in out


def test_leaf_why_of_a_deployable_group_walks_the_scheduler_cycle():
    from pathlib import Path

    training = str(Path(__file__).resolve().parent.parent / "examples" / "gang-training.yaml")
    out = _cli("check", training, "--group", "ml/train", "--why").output
    assert out.startswith("deployable") and "why (the scheduler's cycle from the current state)" in out
    assert "1. worker: 0/4 nodes are available:" in out
    assert "group ml/train: minCount (5) cannot be satisfied: 1 scheduled, 0 remaining" in out
    never = str(Path(__file__).resolve().parent.parent / "examples" / "gang-never.yaml")
    out = _cli("explain", never, "--group", "db/replicas").output
    assert "4. replica: 0/4 nodes are available:" in out
    assert "group db/replicas: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining; its 3 assumed pods" in out


def test_interchangeable_members_take_the_first_choices_and_agree_with_enumeration():
    # every member invisible to Hard but by capacity, one request vector: composite_cycle follows
    # the first choices only (gangs.interchangeable); the plain enumeration tries every choice
    checked, outcomes = 0, Counter()
    for seed in range(60):
        rng = random.Random(seed)
        nodes = ", ".join(f"{{name: n{i}, capacity: {{cpu: {rng.randint(1, 4)}}}}}" for i in range(rng.randint(2, 4)))
        leaves = rng.randint(2, 3)
        pods = ", ".join(f"{{name: w{k}, labels: {{part: p{k}}}, requests: {{cpu: 1}}}}" for k in range(leaves))
        groups = [ROOT % f"{{gang: {{minGroupCount: {rng.randint(1, leaves)}}}}}"] + [
            f"{{name: l{k}, parent: root, policy: {{gang: {{minCount: {rng.randint(1, 3)}}}}}, "
            f"members: [{{pod: w{k}, count: {rng.randint(1, 3)}}}]}}" for k in range(leaves)]
        inst = instance(f"[{nodes}]", f"[{pods}]", "[" + ", ".join(groups) + "]")
        gang, sigma = gangs.gang_of(inst, "root"), inst.initial_config()
        assert gangs.interchangeable(inst, set(gang.pending))
        c = cycle(inst)
        assert {c.outcome} == {gangs.SUCCEEDS if brute(inst, gang, sigma) == {True} else gangs.FAILS}, seed
        checked += 1
        outcomes[c.outcome] += 1
    assert checked == 60 and outcomes[gangs.SUCCEEDS] >= 10 and outcomes[gangs.FAILS] >= 10, outcomes


def test_shipped_composite_example_fails_for_every_choice_though_a_placement_exists():
    from pathlib import Path

    path = str(Path(__file__).resolve().parent.parent / "examples" / "gang-composite.yaml")
    out = _cli("check", path, "--group", "ml/serve", "--why").output
    assert out.startswith("deployable")
    assert "The scheduler's cycle fails for every node choice, but this order places 4 of the 5 pending now" in out
    assert "group ml/prefill: policy met (3 scheduled)" in out    # basic, met by one, greedy to three
    assert "5. ml/decode/decode: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu." in out
    assert "group ml/decode: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining" in out
