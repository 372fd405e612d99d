"""Operator moves (issue 29): the explicit engine with the deletion guards against a
brute-force BFS written plainly here, on seeded random instances with
PodDisruptionBudgets and protected pod types, in both profiles.

The brute force keeps every count exact up to a bound above every cap the
engine uses (no saturation) and re-derives each budget's desiredHealthy and
the eviction rule from the raw document, so the loader's rounding, the
semantics' guard and the engine's caps are all under test. Every witness is
replayed with the guards; every not-deployable certificate is re-checked.
"""

from __future__ import annotations

import json
import math
import random
from collections import deque
from dataclasses import replace

import pytest

from symreach import semantics
from symreach.certify.explicit_states import check_certificate
from symreach.errors import InputError
from symreach.loader import load_document
from symreach.loader.moves import rules_for
from symreach.model import MoveRules
from symreach.result import Verdict
from symreach.solvers.registry import make_engine
from tests.random_instances import APPS, random_doc

PER_PROFILE = 300
STATE_LIMIT = 4000


def pdb_doc(seed: int, profile: str) -> dict:
    rng = random.Random(10_000 + seed)
    doc = random_doc(seed, profile, features={"capacity", "affinity", "anti", "creatable", "initial", "selector"})
    for item in doc["initial"]:
        item["count"] = rng.choice([1, 1, 2])
    if not doc["initial"]:  # budgets bite only on running pods
        t = rng.choice(doc["podTypes"])
        doc["initial"].append({"pod": t["name"], "node": rng.choice(doc["nodes"])["name"], "count": 1})
    budgets = []
    for i in range(rng.randint(1, 2)):
        budget = {"name": f"b{i}", "selector": {"matchLabels": {"app": rng.choice(APPS[:3])}}}
        kind = rng.choice(["minAvailable", "maxUnavailable", None])
        if kind is not None:
            budget[kind] = rng.choice([0, 1, 2, "50%", "100%", "34%"] if kind == "minAvailable" else [0, 1, "50%", "34%"])
        budgets.append(budget)
    doc["pdbs"] = budgets
    return doc


def plain_desired(budget: dict, expected: int) -> int:
    def scaled(v):
        return v if isinstance(v, int) else math.ceil(int(v[:-1]) * expected / 100)
    if "maxUnavailable" in budget:
        return max(0, expected - scaled(budget["maxUnavailable"]))
    if "minAvailable" in budget:
        return scaled(budget["minAvailable"])
    return 0


def plain_rules(inst, doc: dict, protected: frozenset[int]):
    """(types, desired) per budget, from the raw document (default namespace, matchLabels app)."""
    out = []
    for budget in doc["pdbs"]:
        app = budget["selector"]["matchLabels"]["app"]
        types = {t for t, pod in enumerate(inst.pod_types)
                 if pod.namespace == "default" and pod.labels.get("app") == app}
        expected = sum(i["count"] for i in doc["initial"] if inst.type_index(i["pod"]) in types)
        out.append((types, plain_desired(budget, expected)))
    return out


def brute_force(inst, budgets, protected, final=None, at_least: int = 0) -> tuple[bool, int]:
    """(reachable?, states): BFS without saturation, counts up to ``bound`` per pair
    (above ``at_least`` too); ``final(sigma)``: an extra end condition (replica floors)."""
    bound = max([3, at_least + 1] + [d + 2 for _, d in budgets] + list(inst.initial.values()))
    nodes = len(inst.nodes)
    plain = replace(inst, moves=MoveRules())
    start = inst.initial_config()
    seen = {start}
    queue = deque([start])
    while queue:
        sigma = queue.popleft()
        if semantics.query_holds(plain, inst.query, sigma) and (final is None or final(sigma)):
            return True, len(seen)
        if len(seen) > STATE_LIMIT:
            return None, len(seen)
        succs = []
        for t in range(len(inst.pod_types)):
            for n in range(nodes):
                p = t * nodes + n
                if sigma[p] < bound and semantics.deploy_failure(inst, t, n, sigma) is None:
                    succs.append(sigma[:p] + (sigma[p] + 1,) + sigma[p + 1:])
                if sigma[p] and t not in protected:
                    mine = [(types, d) for types, d in budgets if t in types]
                    present = [sum(sigma[u * nodes + m] for u in types for m in range(nodes)) for types, _ in mine]
                    if len(mine) <= 1 and all(c - 1 >= d for c, (_, d) in zip(present, mine)):
                        succs.append(sigma[:p] + (sigma[p] - 1,) + sigma[p + 1:])
        for succ in succs:
            if succ not in seen:
                seen.add(succ)
                queue.append(succ)
    return False, len(seen)


def seeded_instances(make_doc, profile: str, seeds: int = 4 * PER_PROFILE):
    """(seed, raw document, instance, seeded rng) for every seed whose document loads."""
    for seed in range(1, seeds):
        doc = make_doc(seed, profile)
        try:
            inst = load_document(doc)
        except InputError:
            continue
        yield seed, doc, inst, random.Random(seed)


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_explicit_with_guards_agrees_with_brute_force(profile):
    engine = make_engine("explicit")
    orbits = make_engine("explicit", symmetry=True)  # budgets and protection name types, never nodes
    checked = deployable = blocked = certified = too_big = 0
    for seed, doc, inst, rng in seeded_instances(pdb_doc, profile):
        if checked == PER_PROFILE:
            break
        protect = [{"app": rng.choice(APPS)}] if rng.random() < 0.5 else []
        rules = rules_for(inst, "operator" if rng.random() < 0.5 else None, respect_pdb=True, protect=protect)
        inst = replace(inst, moves=rules)
        budgets = plain_rules(inst, doc, rules.protected)
        assert [(b.counts, b.desired_healthy) for b in inst.budgets] == [(frozenset(t), d) for t, d in budgets]
        expected, _ = brute_force(inst, budgets, rules.protected)
        if expected is None:
            too_big += 1
            continue
        result = engine.check(inst)  # the registry's wrapper replays the witness with the guards
        checked += 1
        assert orbits.check(inst).verdict is result.verdict, f"seed {seed}: symmetry"
        assert result.verdict is (Verdict.DEPLOYABLE if expected else Verdict.NOT_DEPLOYABLE), f"seed {seed}"
        if expected:
            deployable += 1
            semantics.replay(inst, result.trace, inst.query)
        else:
            paper = make_engine("explicit").check(replace(inst, moves=MoveRules()))
            blocked += paper.verdict is Verdict.DEPLOYABLE
            ok, why = check_certificate(inst, json.loads(result.certificate.dumps()))
            assert ok, f"seed {seed}: {why}"
            certified += 1
    print(f"{profile}: {checked} checked, {deployable} deployable, {certified} certified, "
          f"{blocked} blocked by the guards only, {too_big} over the state limit")
    assert checked == PER_PROFILE and too_big < PER_PROFILE // 10, too_big
    # not vacuous: both answers occur, and the guards change some answers
    assert deployable > 20 and certified > 20 and blocked > 5, (deployable, certified, blocked)
