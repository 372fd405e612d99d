"""The hard realistic cluster family: deterministic, valid in both profiles,
not decided by preprocessing, and the SAT engines agree on it."""

from __future__ import annotations

import pytest

from symreach import semantics
from symreach.generators.hard_clusters import generate_hard_cluster, pyramid_height
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.bmc import BmcEngine
from symreach.solvers.ic3 import Ic3Engine
from symreach.certify.clause_invariant import check_certificate


def test_deterministic_and_sized():
    a = generate_hard_cluster(50, 30, 1, "kubernetes")
    assert a == generate_hard_cluster(50, 30, 1, "kubernetes")
    assert a != generate_hard_cluster(50, 30, 2, "kubernetes")
    assert len(a["nodes"]) == 50 and len(a["podTypes"]) >= 30
    assert pyramid_height(10) == 2 and pyramid_height(200) == 8


def test_bad_arguments():
    with pytest.raises(ValueError):
        generate_hard_cluster(3, 30, 0)
    with pytest.raises(ValueError):
        generate_hard_cluster(20, 30, 0, "nosuch")


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
@pytest.mark.parametrize("seed", [0, 1])
def test_engines_decide_and_agree(profile, seed):
    inst = load_document(generate_hard_cluster(20, 10, seed, profile))
    ic3 = Ic3Engine().check(inst)
    assert ic3.verdict is not Verdict.UNKNOWN
    assert ic3.stats.get("decided_by") is None, "preprocessing decided a hard instance"
    if ic3.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, ic3.trace, inst.query)
        bmc = BmcEngine().check(inst)
        assert bmc.verdict is Verdict.DEPLOYABLE
        semantics.replay(inst, bmc.trace, inst.query)
        assert len(ic3.trace) >= 4  # deletions and a chain of deployments, not one step
    else:
        assert check_certificate(inst, ic3.certificate)[0]
