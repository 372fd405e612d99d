"""Differential tests of the gang step and the scheduler's cycle (issue 28, item 6).

``gangs.gang_step`` (memoised, interchangeable nodes, policy bound) against the
certificate checker's plain breadth-first ``step_exists``, and
``gangs.scheduler_cycle`` (memoised, interchangeable nodes, early stop)
against a plain enumeration of every choice sequence, on random small gangs
of both profiles; every witness is replayed, and the explicit answer's
certificates are re-checked. The counts asserted keep the tests from passing
vacuously.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from symreach import gangs, semantics
from symreach.certify import gang_states
from symreach.errors import InputError
from symreach.loader import load_document
from symreach.solvers.gang_explicit import answer
from tests.random_instances import random_doc

CASES = 1000


def gang_doc(seed: int, profile: str) -> dict:
    """A random tiny instance whose first 1-2 types form a gang (the rest is background)."""
    rng = random.Random(seed * 7919 + 1)
    doc = random_doc(seed, profile)
    doc.pop("query")
    types = doc["podTypes"]
    members = [{"pod": t["name"], "count": rng.randint(1, 3)} for t in types[:rng.randint(1, 2)]]
    if len(members) == 2 and rng.random() < 0.5:   # intra-group affinity: the second needs the first
        types[1]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": types[0]["labels"]["app"]}},
             "topologyKey": rng.choice(["zone", "kubernetes.io/hostname"])}]}}
    if rng.random() < 0.4:   # a picky member last in the queue: earlier node choices may starve it
        ssd = doc["nodes"][rng.randrange(len(doc["nodes"]))]
        ssd["labels"]["disk"] = "ssd"
        types.append({"name": "picky", "labels": {"app": "p"}, "requests": {"cpu": ssd["capacity"].get("cpu", "1")},
                      "nodeSelector": {"disk": "ssd"}})
        for t in types[:1]:
            t.pop("affinity", None)
        members.append({"pod": "picky", "count": 1})
    names = {m["pod"] for m in members}
    if rng.random() < 0.8:   # mostly no member running yet (running members count toward minCount)
        doc["initial"] = [e for e in doc["initial"] if e["pod"] not in names]
    total = sum(m["count"] for m in members)
    policy = {"basic": {}} if rng.random() < 0.1 else {"gang": {"minCount": rng.randint(1, total)}}
    doc["groups"] = [{"name": "g", "policy": policy, "members": members}]
    return doc


def brute_cycle(inst, gang: gangs.Gang, sigma) -> set[bool]:
    """Every outcome of the cycle over every choice sequence (no memo, no symmetry); success
    needs one member assumed besides the policy ("no pods were schedulable")."""
    queue = gangs.queue_order(gang.root)
    need = max(1, gang.need(gang.root) - gang.running(inst, sigma)[gang.root.name])
    outcomes: set[bool] = set()

    def go(i: int, config, placed: int) -> None:
        if placed >= need:
            outcomes.add(True)
            return
        if i == len(queue):
            outcomes.add(False)
            return
        nodes = [n for n in range(len(inst.nodes)) if semantics.node_failure(inst, queue[i], n, config) is None]
        if not nodes:
            go(i + 1, config, placed)
        for n in nodes:
            go(i + 1, semantics.deploy(inst, config, queue[i], n), placed + 1)

    go(0, sigma, 0)
    return outcomes


def features(inst) -> set[str]:
    out = set()
    gang = gangs.gang_of(inst, "g")
    members = [inst.pod_types[t] for t in gang.pending]
    if len(members) > 1:
        out.add("mixed")
    if any(p.affinity for p in members):
        out.add("affinity")
        if any(set(gang.pending) & term.selects for p in members for term in p.affinity):
            out.add("intra-group affinity")
    if any(p.anti_affinity for p in members):
        out.add("anti-affinity")
    if any(p.spread for p in members):
        out.add("spread")
    if any(v > 0 for p in members for v in p.requests.values()):
        out.add("capacity")
    return out


def loaded(make, seeds, profile):
    """(seed, instance) for every seed whose random document loads."""
    for seed in seeds:
        try:
            yield seed, load_document(make(seed, profile))
        except InputError:
            continue


def agreed_step(inst, name: str, root: str, seed: int):
    """The gang step, checked against the plain BFS and replayed; None when there is none."""
    gang = gangs.gang_of(inst, name)
    sigma = inst.initial_config()
    placement = gangs.gang_step(inst, gang, sigma)
    assert (placement is not None) == gang_states.step_exists(inst, root, sigma), seed
    if placement is not None:
        gangs.check_step(inst, gang, sigma, placement)
    return placement


@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_gang_step_and_cycle_agree_with_brute_force(profile):
    checked, seen, verdicts, cycles = 0, Counter(), Counter(), Counter()
    for seed, inst in loaded(gang_doc, range(CASES), profile):
        placement = agreed_step(inst, "g", "g", seed)
        gang, sigma = gangs.gang_of(inst, "g"), inst.initial_config()
        cycle = gangs.scheduler_cycle(inst, gang, sigma)
        expected = {frozenset({True}): gangs.SUCCEEDS, frozenset({False}): gangs.FAILS,
                    frozenset({True, False}): gangs.MAY_FAIL}[frozenset(brute_cycle(inst, gang, sigma))]
        assert cycle.outcome == expected, seed
        if cycle.outcome != gangs.FAILS:   # the scheduler's success is a gang step
            assert placement is not None, seed
        checked += 1
        seen.update(features(inst))
        verdicts["witness" if placement else "none" if placement is None else "already met"] += 1
        cycles[cycle.outcome] += 1
    assert checked >= 900
    assert verdicts["witness"] >= 300 and verdicts["none"] >= 300, verdicts   # replayed / no step
    assert cycles[gangs.MAY_FAIL] >= 5 and cycles[gangs.FAILS] >= 30, cycles
    for kind in ("mixed", "intra-group affinity", "anti-affinity", "spread", "capacity"):
        assert seen[kind] >= 20, (kind, seen)


@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_explicit_answers_replay_and_certificates_recheck(profile):
    counts = Counter()
    for seed, inst in loaded(gang_doc, range(0, CASES, 5), profile):
        ans = answer(inst, "g", max_states=2_000)
        verdict = ans.result.verdict.value
        if verdict == "deployable":
            end = semantics.replay(inst, ans.result.trace)
            gangs.check_step(inst, gangs.gang_of(inst, "g"), end, ans.placement)
        elif verdict == "not-deployable":
            ok, why = gang_states.check_certificate(inst, ans.result.certificate.to_json())
            assert ok, (seed, why)
        counts[verdict] += 1
    assert counts["deployable"] >= 20 and counts["not-deployable"] >= 10, counts


def composite_doc(seed: int, profile: str) -> dict:
    """Two leaves under one composite (minGroupCount 1 or 2), each leaf one member type."""
    rng = random.Random(seed * 104729 + 3)
    doc = random_doc(seed, profile)
    doc.pop("query")
    names = [t["name"] for t in doc["podTypes"][:2]]
    doc["initial"] = [e for e in doc["initial"] if e["pod"] not in names]
    leaves = []
    for i, name in enumerate(names):
        count = rng.randint(1, 3)
        leaves.append({"name": f"leaf{i}", "parent": "root", "policy": {"gang": {"minCount": rng.randint(1, count)}},
                       "members": [{"pod": name, "count": count}]})
    root = {"name": "root", "composite": True, "policy": {"gang": {"minGroupCount": rng.randint(1, 2)}}}
    doc["groups"] = [root] + leaves
    return doc


@pytest.mark.parametrize("profile", ["kubernetes", "paper"])
def test_composite_gang_step_agrees_with_brute_force(profile):
    outcomes = Counter()
    for seed, inst in loaded(composite_doc, range(200), profile):
        placement = agreed_step(inst, "leaf0", "root", seed)
        outcomes[placement is not None] += 1
    assert outcomes[True] >= 40 and outcomes[False] >= 40, outcomes
