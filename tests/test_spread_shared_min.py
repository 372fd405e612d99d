"""The shared-minimum spread guard (``compile.SHARED_MIN_DOMAINS``) decides as the pairwise one.

Large clusters use it (a hostname spread over thousands of nodes); here the
threshold is lowered to 0 so that every spread of a small random instance is
compiled that way, and IC3 on that encoding must agree with the explicit
engine, its witnesses replayed and its invariants re-checked.
"""

from __future__ import annotations

import pytest

from symreach import semantics
from symreach.certify.clause_invariant import check_certificate
from symreach.encodings import compile as compile_module
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.ic3 import Ic3Engine
from tests.random_instances import random_doc

SEEDS = range(80)


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_shared_minimum_agrees_with_explicit(profile, monkeypatch):
    monkeypatch.setattr(compile_module, "SHARED_MIN_DOMAINS", 0)
    used = 0
    real = compile_module._Compiler._within_min

    def counted(self, *args):
        nonlocal used
        used += 1
        return real(self, *args)

    monkeypatch.setattr(compile_module._Compiler, "_within_min", counted)
    checked = 0
    for seed in SEEDS:
        inst = load_document(random_doc(seed, profile, features={"capacity", "affinity", "anti", "spread"}))
        if not any(pod.spread for pod in inst.pod_types):
            continue
        ex = ExplicitEngine().check(inst)
        ic3 = Ic3Engine(fast_paths=False).check(inst)
        assert ic3.verdict is ex.verdict, (seed, ic3.reason)
        if ic3.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, ic3.trace, inst.query)
        else:
            ok, msg = check_certificate(inst, ic3.certificate.dumps())
            assert ok, msg
        checked += 1
    assert checked >= 15, checked
    assert used >= 15, used

