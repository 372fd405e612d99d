"""--keep-replicas (issue 29): the explicit engine with every operator guard at once --
PodDisruptionBudgets, protected types and controllers' replica floors (StatefulSet
members pinned to nodes) -- against a brute-force BFS written plainly here.

The brute force keeps every count exact up to a bound above every cap the engine
uses (no saturation), re-derives the floors from the raw document (min of
``replicas`` and the pods running at the start) and decides the StatefulSet
identity condition by trying every assignment of members to running pods, so
the loader, ``semantics.replicas_failure`` (a matching) and the engine's caps are
all under test. Witnesses are replayed step by step with the guards checked
(``semantics.replay``), certificates re-checked by ``certify``'s checker; the
orbit-reduced search must agree. CI runs ``CI_PER_PROFILE`` instances per
profile; the ``slow`` test runs ``PER_PROFILE`` (the issue's >= 300).
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace

import pytest

from symreach import semantics
from symreach.certify.explicit_states import check_certificate
from symreach.loader.moves import rules_for
from symreach.result import Verdict
from symreach.solvers.registry import make_engine
from tests.random_instances import APPS
from tests.test_moves_differential import brute_force, pdb_doc, plain_rules, seeded_instances

PER_PROFILE = 300
CI_PER_PROFILE = 150
STATE_LIMIT = 4000


def replica_doc(seed: int, profile: str) -> dict:
    """A random PDB document with 1-2 controllers over disjoint types that run at the start."""
    rng = random.Random(20_000 + seed)
    doc = pdb_doc(seed, profile)
    goal = (doc["query"]["pod"], doc["query"]["node"])  # not there at the start: the witness must work
    doc["initial"] = [i for i in doc["initial"] if (i["pod"], i["node"]) != goal] or doc["initial"]
    running = sorted({i["pod"] for i in doc["initial"]})
    rng.shuffle(running)
    target_node = doc["query"]["node"]  # controllers of the pods in the target's way first
    running.sort(key=lambda pod: not any(i["pod"] == pod and i["node"] == target_node for i in doc["initial"]))
    controllers = []
    for k, pod in enumerate(running[:rng.randint(1, 3)]):
        kind = rng.choice(["Deployment", "ReplicaSet", "StatefulSet"])
        entry = {"kind": kind, "name": f"c{k}", "replicas": rng.choice([0, 1, 2, 3, 3]), "podTypes": [pod]}
        if rng.random() < 0.4:  # an older revision: its pods are not created again, the template's are
            older = next(t for t in doc["podTypes"] if t["name"] == pod)
            older["creatable"] = False
            free = [t["name"] for t in doc["podTypes"] if t["name"] not in running]
            if free:
                entry["podTypes"].append(rng.choice(free))
        if kind == "StatefulSet" and rng.random() < 0.8:
            here = [i for i in doc["initial"] if i["pod"] == pod]
            names = [f"c{k}-{j}" for j in range(sum(i["count"] for i in here))]
            pods = []
            for j, name in enumerate(names):
                item = {"name": name}
                if rng.random() < 0.6:  # pinned: a node subset (may exclude where it runs now)
                    item["nodes"] = rng.sample([n["name"] for n in doc["nodes"]],
                                               rng.randint(1, len(doc["nodes"])))
                pods.append(item)
            entry["pods"] = pods[:rng.randint(1, len(pods))] if pods else []
        controllers.append(entry)
    doc["controllers"] = controllers
    if controllers and rng.random() < 0.5:  # the target's node full with a controller's pod: it must move
        kept = next(t for t in doc["podTypes"] if t["name"] == controllers[0]["podTypes"][0])
        wanted = next(t for t in doc["podTypes"] if t["name"] == goal[0])
        if kept is not wanted and any(i["pod"] == kept["name"] and i["node"] == goal[1] for i in doc["initial"]):
            kept["requests"], wanted["requests"] = {"cpu": "1"}, {"cpu": "2"}
            next(n for n in doc["nodes"] if n["name"] == goal[1])["capacity"]["cpu"] = "2"
    return doc


def plain_floors(inst, doc: dict) -> list[tuple[set[int], int, list[set[int]]]]:
    """(types, floor, members' allowed node sets) per controller, from the raw document."""
    out = []
    every = set(range(len(inst.nodes)))
    for c in doc["controllers"]:
        types = {inst.type_index(p) for p in c["podTypes"]}
        running = sum(i["count"] for i in doc["initial"] if inst.type_index(i["pod"]) in types)
        floor = min(c.get("replicas", 1), running)
        listed = [({inst.node_index(n) for n in p["nodes"]} if "nodes" in p else every)
                  for p in c.get("pods", [])][:floor]
        members = listed + [every] * (floor - len(listed)) if listed else []
        out.append((types, floor, members))
    return out


def plain_kept(inst, sigma, floors) -> bool:
    nodes = len(inst.nodes)
    for types, floor, members in floors:
        slots = [m for t in types for m in range(nodes) for _ in range(sigma[t * nodes + m])]
        if len(slots) < floor:
            return False
        if members and not any(all(slots[j] in allowed for j, allowed in zip(pick, members))
                               for pick in itertools.permutations(range(len(slots)), len(members))):
            return False
    return True


def run_differential(profile: str, wanted: int) -> dict:
    engine = make_engine("explicit")
    orbits = make_engine("explicit", symmetry=True)
    counts = dict(checked=0, deployable=0, certified=0, replicas_bite=0, pinned=0, too_big=0)
    for seed, doc, inst, rng in seeded_instances(replica_doc, profile, 4 * wanted + 50):
        if counts["checked"] == wanted:
            break
        protect = [{"app": rng.choice(APPS)}] if rng.random() < 0.5 else []
        keep = rng.random() < 0.8
        rules = rules_for(inst, "operator" if keep and rng.random() < 0.5 else None,
                          respect_pdb=rng.random() < 0.7, protect=protect, keep_replicas=keep)
        inst = replace(inst, moves=rules)
        respect = rules.respect_pdb
        budgets = plain_rules(inst, doc, rules.protected) if respect else []
        floors = plain_floors(inst, doc)
        assert [(r.types, r.replicas) for r in inst.replica_targets] == [(frozenset(t), f) for t, f, _ in floors]
        final = (lambda sigma: plain_kept(inst, sigma, floors)) if keep else None
        expected, _ = brute_force(inst, budgets, rules.protected, final, max((f for _, f, _ in floors), default=0))
        if expected is None:
            counts["too_big"] += 1
            continue
        result = engine.check(inst)  # the registry's wrapper replays the witness with the guards
        counts["checked"] += 1
        assert orbits.check(inst).verdict is result.verdict, f"seed {seed}: symmetry"
        assert result.verdict is (Verdict.DEPLOYABLE if expected else Verdict.NOT_DEPLOYABLE), f"seed {seed}"
        counts["pinned"] += any(r.members for r in inst.replica_targets)
        if expected:
            counts["deployable"] += 1
            semantics.replay(inst, result.trace, inst.query)  # every deletion's guard, the final floors
        else:
            without = make_engine("explicit").check(replace(inst, moves=replace(rules, keep_replicas=False)))
            counts["replicas_bite"] += keep and without.verdict is Verdict.DEPLOYABLE
            ok, why = check_certificate(inst, json.loads(result.certificate.dumps()))
            assert ok, f"seed {seed}: {why}"
            counts["certified"] += 1
    return counts


def _assert_counts(counts: dict, wanted: int) -> None:
    assert counts["checked"] == wanted and counts["too_big"] < wanted // 5 + 5, counts
    # not vacuous: both answers occur, the floors change answers, pinned StatefulSets occur
    low = max(2, wanted // 20)
    assert counts["deployable"] > low and counts["certified"] > low, counts
    # the floors change the answer in about 1 of 20 instances (half of them made to need a move)
    assert counts["replicas_bite"] >= max(1, wanted // 50) and counts["pinned"] > low, counts


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_keep_replicas_agrees_with_brute_force_ci(profile):
    counts = run_differential(profile, CI_PER_PROFILE)
    print(profile, counts)
    _assert_counts(counts, CI_PER_PROFILE)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_keep_replicas_agrees_with_brute_force_full(profile):
    counts = run_differential(profile, PER_PROFILE)
    print(profile, counts)
    _assert_counts(counts, PER_PROFILE)
