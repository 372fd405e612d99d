"""``ReplayState`` (incremental sums) agrees with the plain semantics, reason for reason."""

from __future__ import annotations

import random

import pytest

from symreach import semantics
from symreach.encodings.replay_state import ReplayState, replay
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.model import Instance, Query
from symreach.result import DELETE, DEPLOY
from tests.random_instances import random_doc


def _walk(inst: Instance, rng: random.Random, steps: int) -> int:
    """A random run; at every configuration, every (t, n) is compared. Returns checks made."""
    sigma = inst.initial_config()
    state = ReplayState(inst)
    checked = 0
    for _ in range(steps):
        enabled = []
        for t in range(len(inst.pod_types)):
            for n in range(len(inst.nodes)):
                want = semantics.deploy_failure(inst, t, n, sigma)
                assert state.deploy_failure(t, n) == want, (t, n)
                checked += 1
                if want is None:
                    enabled.append((DEPLOY, t, n))
        enabled += [(DELETE, *inst.unpair(p)) for p, c in enumerate(sigma) if c > 0]
        if not enabled:
            break
        op, t, n = rng.choice(enabled)
        if op == DEPLOY:
            sigma = semantics.deploy(inst, sigma, t, n)
            state.deploy(t, n)
        else:
            sigma = semantics.delete(inst, sigma, t, n)
            state.delete(t, n)
        assert {p: c for p, c in state.counts.items()} == \
            {inst.unpair(p): c for p, c in enumerate(sigma) if c}
    return checked


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_guards_agree_with_the_semantics_on_random_runs(profile):
    checked = 0
    for seed in range(120):
        inst = load_document(random_doc(seed + 31000, profile))
        checked += _walk(inst, random.Random(seed), 12)
    assert checked > 3000


def test_guards_agree_on_generated_clusters_with_spread_and_zones():
    checked = 0
    for seed in range(3):
        inst = load_document(generate_cluster(9, 10, seed=seed, pools=3))
        checked += _walk(inst, random.Random(seed), 15)
    assert checked > 1000


def test_replay_raises_where_the_semantics_does():
    inst = load_document(generate_cluster(6, 9, seed=5, pools=2))
    rng = random.Random(1)
    agreed = 0
    for _ in range(60):
        steps = [semantics.step_of(inst, rng.choice([DEPLOY, DEPLOY, DELETE]),
                                   rng.randrange(len(inst.pod_types)), rng.randrange(len(inst.nodes)))
                 for _ in range(rng.randint(1, 6))]
        target = Query((frozenset({(rng.randrange(len(inst.pod_types)), 0)}),))
        try:
            semantics.replay(inst, steps, target)
            want = None
        except semantics.ReplayError as exc:
            want = str(exc)
        try:
            replay(inst, steps, target)
            got = None
        except semantics.ReplayError as exc:
            got = str(exc)
        assert got == want
        agreed += 1
    assert agreed == 60


def test_guards_agree_on_random_kubernetes_states_with_volumes():
    import copy

    from symreach.frontends.kubernetes import load_kubernetes_documents
    from symreach.generators.k8s_states import random_states

    checked, with_volumes = 0, 0
    for i, state in enumerate(random_states(40, seed=11)):
        inst, _ = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
        if inst.bindings:   # claim bindings are state only the explicit engine keeps; ReplayState never sees them
            continue
        with_volumes += bool(inst.volume_failures) or any(term.plugin for pod in inst.pod_types
                                                          for term in pod.anti_affinity)
        checked += _walk(inst, random.Random(i), 6)
    assert checked > 1000 and with_volumes > 5
