"""Copied BMC steps (``symreach.encodings.unroll``) are the encoder's own steps.

Oracle: on random systems of both profiles (with counters, PB guards, anti-
affinity), step ``k`` encoded directly by ``ParallelSteps.step`` /
``CnfLowering.bmc_step`` and step ``k`` copied from the template of step 0
are the same clauses, once the direct encoding's step-local variables are
renamed, in allocation order, to the copy's. Engine check: BMC with copied
steps finds witnesses that replay, at the depth of a direct unrolling.
"""

from __future__ import annotations

import pytest

from symreach.encodings.cnf import CnfLowering
from symreach.encodings.parallel_step import ParallelSteps
from symreach.encodings.unroll import StepTemplate
from tests.random_instances import random_systems


def _systems(profile: str, count: int = 12):
    found = 0
    for _, system in random_systems(profile):
        if not system.actions:
            continue
        yield system
        found += 1
        if found == count:
            return


def _encoder(low: CnfLowering, parallel: bool):
    return ParallelSteps(low).step if parallel else low.bmc_step


def _direct_step(system, parallel: bool, k: int):
    """Steps 0..k encoded directly; returns (clauses of step k, its new variables in
    allocation order except state k+1, the lowering)."""
    low = CnfLowering(system)
    encode = _encoder(low, parallel)
    for v in system.state_vars:
        low.var(v, 0)
    for j in range(k):
        encode(j)
    low.flush()
    top = low.pool.top
    encode(k)
    state_next = {low.var(v, k + 1) for v in system.state_vars}
    fresh = [x for x in range(top + 1, low.pool.top + 1) if x not in state_next]
    return low.flush(), fresh, low


@pytest.mark.parametrize("parallel", [True, False])
@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_copied_step_is_the_direct_step(profile, parallel):
    compared = 0
    for system in _systems(profile):
        low = CnfLowering(system)
        template = StepTemplate(low, _encoder(low, parallel))
        k = 2
        for j in range(k):
            template.step(j)
        low.flush()
        top = low.pool.top
        template.step(k)
        copied = low.flush()
        state = {low.var(v, s): (v, s) for v in system.state_vars for s in (k, k + 1)}
        fresh_copy = [x for x in range(top + 1, low.pool.top + 1) if x not in state]
        direct, fresh_direct, dlow = _direct_step(system, parallel, k)
        assert len(fresh_copy) == len(fresh_direct)
        rename = dict(zip(fresh_direct, fresh_copy))
        rename.update({dlow.var(v, s): low.var(v, s) for v in system.state_vars for s in (k, k + 1)})
        rename[dlow.true] = low.true
        renamed = [[rename[x] if x > 0 else -rename[-x] for x in cl] for cl in direct]
        assert renamed == copied
        compared += 1
    assert compared >= 5


def test_a_step_reading_another_steps_variable_is_refused():
    system = next(_systems("paper"))
    low = CnfLowering(system)
    stale = low.pool.id(("unrelated",))

    def encode(k):
        nxt = [low.var(v, k + 1) for v in system.state_vars]
        low.clause([stale, nxt[0]])
        return {}, ("mid", k + 1)

    with pytest.raises(AssertionError, match="another step"):
        StepTemplate(low, encode).step(0)
