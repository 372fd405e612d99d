"""BMC and IC3 against the explicit engine on seeded random small instances.

Both profiles. IC3 runs without the preprocessing fast paths so that it
decides every instance itself; each invariant it returns is re-checked by
``certify_sat``. BMC gets a depth equal to the number of deployments of the
explicit engine's shortest trace (enough for a BMC witness) and must find
a replaying witness exactly on the deployable instances.
"""

from __future__ import annotations

import pytest

from symreach import semantics
from symreach.certify.clause_invariant import check_certificate
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import random_dag
from symreach.loader import load_document
from symreach.result import DEPLOY, Verdict
from symreach.solvers.base import Limits
from symreach.solvers.bmc import BmcEngine
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.ic3 import Ic3Engine
from tests.oracles import pebbling_price
from tests.random_instances import random_doc

SEEDS = range(150)


def _agree(inst):
    ex = ExplicitEngine().check(inst)
    ic3 = Ic3Engine(fast_paths=False).check(inst)
    assert ic3.verdict is ex.verdict, ic3.reason
    if ic3.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, ic3.trace, inst.query)
    else:
        ok, msg = check_certificate(inst, ic3.certificate.dumps())
        assert ok, msg
    deploys = sum(1 for s in ex.trace if s.op == DEPLOY)
    bmc = BmcEngine(fast_paths=False).check(inst, run=Limits(max_depth=max(deploys, 1)))
    if ex.verdict is Verdict.DEPLOYABLE:
        assert bmc.verdict is Verdict.DEPLOYABLE
        semantics.replay(inst, bmc.trace, inst.query)
        assert bmc.stats.get("depth", 0) <= deploys
    else:
        assert bmc.verdict is Verdict.UNKNOWN
    return ex.verdict


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_random_instances(profile):
    seen = []
    for seed in SEEDS:  # every seed's document loads: an InputError fails the test
        seen.append(_agree(load_document(random_doc(seed, profile))))
    assert len(seen) == len(SEEDS) and set(seen) == {Verdict.DEPLOYABLE, Verdict.NOT_DEPLOYABLE}


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_random_instances_with_anti_affinity_and_spread(profile):
    seeds = range(1000, 1060)
    seen = []
    for seed in seeds:  # every seed's document loads: an InputError fails the test
        seen.append(_agree(load_document(random_doc(seed, profile, features={"affinity", "anti", "spread",
                                                                             "capacity", "initial"}))))
    assert len(seen) == len(seeds) == 60
    assert set(seen) == {Verdict.DEPLOYABLE, Verdict.NOT_DEPLOYABLE}


def test_random_pebbling_at_and_below_the_price():
    for seed in range(12):
        dag = random_dag(7, 0.4, seed=seed, max_indegree=3)
        price = pebbling_price(dag.vertices, dag.edges, dag.target)
        for k in (price - 1, price):
            if k < 1:
                continue
            inst = load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))
            assert _agree(inst) is (Verdict.DEPLOYABLE if k >= price else Verdict.NOT_DEPLOYABLE)
