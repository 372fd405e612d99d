"""BMC unrolling by copying one encoded step instead of lowering every step again.

Every BMC step ``k -> k+1`` is the same CNF up to a renaming of variables:
the state variables of ``k`` and ``k+1`` and a block of step-local variables
(the mid state after the deletions, Tseitin gates of the guards read there,
selectors, chain and counter auxiliaries). Lowering the step again at every
depth walks the whole circuit in Python, which took most of a deep BMC
search on the large encoded nets, more than the SAT calls
(benchmarks/results/design_measurements.md). ``StepTemplate`` lowers step
``0 -> 1`` once, records its clauses, and instantiates step ``k -> k+1`` by
renaming: state-0 variables to state ``k``, state-1 to state ``k+1``, every
other variable the step allocated to a fresh variable of its own, and the
constant ``true`` to itself.

Why the copy is the same formula. The step encoders (``ParallelSteps.step``,
``CnfLowering.bmc_step``) allocate variables keyed by the step (``var(v, k)``,
``("gate", node, ("mid", k+1))``, ``("act", i, k+1)``, ...) and never read a
variable of another step except the two state vectors: ``build`` checks this
on the recorded clauses (a clause naming a variable allocated before the
step that is neither a state-0 variable nor ``true`` is an error, not a
silent wrong copy). The renaming is a bijection on the variables of the
step, so the copy is the formula the encoder would have produced for step
``k`` up to the names of its local variables; ``tests/test_unroll.py``
compares both, clause for clause, after renaming.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Callable, Hashable, Iterator

import numpy as np

from symreach.encodings.cnf import CnfLowering

Step = Hashable


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a step's clauses are built and
    handed to the solver: tens of thousands of small lists per step trigger
    full collections over the whole heap, which made every other copy several
    times slower (benchmarks/results/design_measurements.md). Clauses hold no
    cycles, so nothing leaks."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class StepTemplate:
    """Step ``0 -> 1`` of ``encode`` recorded once, copied for every later step.

    ``encode(k)`` must add the clauses of step ``k -> k+1`` to ``low`` and
    return ``(selectors, mid)``: action index -> selector literal, and the
    name of the step's mid state (decoded through ``mid_lit``).
    """

    def __init__(self, low: CnfLowering, encode: Callable[[int], tuple[dict[int, int], Step]]) -> None:
        self.low = low
        self._encode = encode
        self._flat = np.zeros(0, dtype=np.int64)  # the recorded clauses' literals, concatenated
        self._bounds: list[tuple[int, int]] = []   # each clause's slice of ``_flat``
        self._kinds = np.zeros(0, dtype=np.int64)  # variable -> local index+1, or 0
        self._state0: dict[int, int] = {}
        self._state1: dict[int, int] = {}
        self._locals = 0
        self._selectors: dict[int, int] = {}
        self._mid: Step = None
        self._built = False

    def step(self, k: int) -> tuple[dict[int, int], dict[int, int]]:
        """Add step ``k -> k+1`` to ``low``'s pending clauses. Returns
        (action index -> selector, state variable -> its literal in the mid state)."""
        if not self._built:
            if k != 0:
                raise ValueError("the template is recorded at step 0")
            return self._build()
        return self._copy(k)

    # ---- recording --------------------------------------------------------------
    def _build(self) -> tuple[dict[int, int], dict[int, int]]:
        low = self.low
        mark = len(low.clauses)  # clauses queued before the step are not part of it
        before = low.pool.top
        for v in low.system.state_vars:  # the state-0 vector exists before the step
            low.var(v, 0)
        before = max(before, low.pool.top)
        sels, mid = self._encode(0)
        clauses = low.clauses[mark:]
        top = low.pool.top
        state0 = {low.var(v, 0): v for v in low.system.state_vars}
        state1 = {low.var(v, 1): v for v in low.system.state_vars}
        if low.pool.top != top:
            raise AssertionError("step 0 did not allocate every state-1 variable")
        kinds = np.zeros(top + 1, dtype=np.int64)
        n = 0
        for x in range(before + 1, top + 1):
            if x not in state1:
                n += 1
                kinds[x] = n
        known = set(state0) | set(state1) | {low.true}
        for cl in clauses:
            for lit in cl:
                if kinds[abs(lit)] == 0 and abs(lit) not in known:
                    raise AssertionError(f"step 0 reads variable {abs(lit)} of another step; "
                                         "it cannot be copied")
        ends = np.cumsum([len(cl) for cl in clauses]).tolist()
        self._bounds = list(zip([0] + ends[:-1], ends))
        self._flat = np.array([lit for cl in clauses for lit in cl], dtype=np.int64)
        self._kinds, self._state0, self._state1, self._locals = kinds, state0, state1, n
        self._selectors, self._mid = dict(sels), mid
        self._built = True
        return dict(sels), {v: low.var(v, mid) for v in low.system.state_vars}

    # ---- copying ----------------------------------------------------------------
    def _copy(self, k: int) -> tuple[dict[int, int], dict[int, int]]:
        low, pool = self.low, self.low.pool
        base = pool.top
        for j in range(self._locals):  # named by meaning, so a model stays decodable
            pool.id(("step-local", k, j))
        if pool.top != base + self._locals:
            raise AssertionError("fresh variables are not contiguous")
        table = np.where(self._kinds > 0, self._kinds + base, 0)
        table[low.true] = low.true
        for x, v in self._state0.items():
            table[x] = low.var(v, k)
        for x, v in self._state1.items():
            table[x] = low.var(v, k + 1)
        flat = self._flat
        lits = (np.sign(flat) * table[np.abs(flat)]).tolist()
        low.clauses.extend(lits[a:b] for a, b in self._bounds)
        sels = {i: int(table[s]) for i, s in self._selectors.items()}
        mid = {v: int(table[low.var(v, self._mid)]) for v in low.system.state_vars}
        return sels, mid
