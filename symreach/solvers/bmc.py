"""Bounded model checking on the compiled transition system.

One incremental solver holds the unrolling ``s_0 -> s_1 -> ... -> s_k``; the
target at depth ``k`` is asked through an assumption, so every depth reuses
everything learnt before. A BMC step deletes any set of pods and then
deploys, with the deploys' guards read *after* the deletions:

- ``parallel=True`` (the default): a set of deploys that cannot disable one
  another in a fixed order (``symreach.encodings.parallel_step``, which
  proves that every such step linearises into single actions that replay).
  A Petri-net firing that produces three places costs one step, not three,
  and independent deployments on different nodes share a step.
- ``parallel=False``: at most one deploy (``CnfLowering.bmc_step``); a
  witness of depth ``k`` then has at most ``k`` deployments.

On the shallow goals of the shared nets parallel steps decide more goals,
at smaller depths, than single steps. Appendix B serialises a firing
through its start/execute/end/ready pods, so a firing costs 5 steps either
way and parallel steps save only the extra produced places; where nothing
can share a step (IBM703) the larger step encoding makes them slower.
(Figures: benchmarks/results/design_measurements.md.)

Unrolling. Step 0 is lowered once and every later step is a renamed copy
of its clauses (``symreach.encodings.unroll``): on these nets the SAT calls
are cheap and lowering every step again in Python was the whole cost.

The decoded trace lists each step's deletions, then its deploys in the fixed
order, so it is a sequence of real transitions. Stuttering is allowed, hence
"target reachable within ``k`` steps" is "target at step ``k``".

``complete=True`` adds loop-free constraints (all states of the path pairwise
distinct) and asks, at each depth, whether a loop-free path of that length
exists at all: if not, the recurrence diameter is reached and, since no
shorter path hit the target, the target is unreachable (Biere et al. 1999).
This makes BMC decide small instances; it has no inductive certificate, so
the verdict's reason says what was proved.

The witness is decoded from the model, realised against the real sigma0
(``realize_trace``); the registry's wrapper replays it before anyone reads it.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

from pysat.solvers import Solver

from symreach.encodings.cnf import CnfLowering
from symreach.encodings.compile import compile_system
from symreach.encodings.parallel_step import ParallelSteps
from symreach.encodings.realize import realize_trace
from symreach.encodings.unroll import StepTemplate, gc_paused
from symreach.model import Instance, Query
from symreach.result import DELETE, DEPLOY, Result, Verdict
from symreach.run import RunContext
from symreach.solvers.fast_paths import PreprocessingEngine


def solve_with_deadline(solver: Solver, assumptions: list[int], run: RunContext) -> Optional[bool]:
    """``solver.solve`` that returns None when the run's deadline passes
    (or, before the call, when the run was cancelled: ``RunContext.past``)."""
    if run.past():
        return None
    left = run.remaining()
    if left is None:
        return solver.solve(assumptions=assumptions)
    if not supports_interrupt(solver):
        res = solver.solve(assumptions=assumptions)
        return None if run.timed_out() and not res else res
    timer = threading.Timer(left, solver.interrupt)
    timer.start()
    try:
        res = solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
    finally:
        timer.cancel()
    solver.clear_interrupt()
    return res


def supports_interrupt(solver: Solver) -> bool:
    """python-sat's CaDiCaL cannot be interrupted; a deadline is then only
    honoured between calls."""
    return "cadical" not in type(solver.solver).__name__.lower()


class BmcEngine(PreprocessingEngine):
    """Incremental BMC; ``solver`` is a python-sat solver name. The default is
    Glucose 4 because it can be interrupted at the deadline; CaDiCaL (often
    faster on hard unrollings, ENGINEERING.md) cannot be, through python-sat,
    so with it a timeout is only honoured between depths."""

    name = "bmc"

    def __init__(self, solver: str = "glucose4", complete: bool = False,
                 fast_paths: bool = True, default_max_depth: Optional[int] = None,
                 parallel: bool = True) -> None:
        self.solver_name = solver
        self.parallel = parallel
        self.complete = complete
        self.fast_paths = fast_paths
        self.default_max_depth = default_max_depth

    def decide(self, instance: Instance, query: Query, pre, run: RunContext) -> Result:
        system = compile_system(instance, query, pre)
        max_depth = run.max_depth if run.max_depth is not None else self.default_max_depth
        res = _Bmc(system, self.solver_name, self.complete, run, max_depth, self.parallel).run()
        res.engine = self.name
        res.fragment = pre.fragment
        res.stats.update({k: v for k, v in system.stats.items() if k not in res.stats})
        if res.verdict is Verdict.DEPLOYABLE:
            trace = realize_trace(instance, pre.abstract_initial, res.stats.pop("_steps"), query, run)
            if trace is None:
                raise AssertionError("BMC witness does not replay: an encoding bug")
            res.trace = trace
            res.stats["trace_ops"] = len(trace)
        return res


class _Bmc:
    def __init__(self, system, solver_name: str, complete: bool, run: RunContext,
                 max_depth: Optional[int], parallel: bool = True) -> None:
        self.system = system
        self.low = CnfLowering(system)
        self.parallel = ParallelSteps(self.low) if parallel else None
        self.solver = Solver(name=solver_name)
        self.complete = complete
        self.run_context = run
        self.max_depth = max_depth
        self.stats: dict[str, Any] = {"solver": solver_name, "queries": 0, "depth": 0,
                                      "steps": "parallel" if parallel else "single"}
        if self.parallel is not None:
            self.stats["step_chains"] = len(self.parallel.chains)
        encode = self.parallel.step if self.parallel is not None else self.low.bmc_step
        self.template = StepTemplate(self.low, encode)
        self.selectors: list[dict[int, int]] = []
        self.mids: list[dict[int, int]] = []  # per step: state variable -> literal after the deletions

    def _flush(self) -> None:
        for cl in self.low.flush():
            self.solver.add_clause(cl)

    def _distinct(self, k: int) -> None:
        """State k differs from every earlier state (loop-free paths)."""
        low, pool = self.low, self.low.pool
        for j in range(k):
            diffs = []
            for v in self.system.state_vars:
                a, b = low.var(v, j), low.var(v, k)
                d = pool.id(("diff", v, j, k))
                low.clause([-d, a, b])
                low.clause([-d, -a, -b])
                diffs.append(d)
            low.clause(diffs)

    def run(self) -> Result:
        low, system, stats = self.low, self.system, self.stats
        t0 = time.perf_counter()
        for u in low.initial_units(0):
            low.clause([u])
        k = 0
        try:
            while True:
                if k > 0:
                    with gc_paused():
                        sels, mid = self.template.step(k - 1)
                    self.selectors.append(sels)
                    self.mids.append(mid)
                    if self.complete:
                        self._distinct(k)
                target = low.lit(system.target, k)
                with gc_paused():
                    self._flush()
                stats["depth"] = k
                self.run_context.report("bmc", depth=k, clauses=self.solver.nof_clauses())
                stats["clauses"] = self.solver.nof_clauses()
                stats["variables"] = self.solver.nof_vars()
                if self.complete and k > 0:
                    stats["queries"] += 1
                    ok = solve_with_deadline(self.solver, [], self.run_context)
                    if ok is None:
                        return self._unknown(f"timeout at depth {k}", t0)
                    if not ok:
                        stats["solve_s"] = time.perf_counter() - t0
                        return Result(Verdict.NOT_DEPLOYABLE, "bmc", stats=stats,
                                      reason=f"no loop-free path of length {k} exists (recurrence "
                                             f"diameter) and no path of length < {k} reaches the target")
                stats["queries"] += 1
                ok = solve_with_deadline(self.solver, [target], self.run_context)
                if ok is None:
                    return self._unknown(f"timeout at depth {k}", t0)
                if ok:
                    stats["solve_s"] = time.perf_counter() - t0
                    stats["_steps"] = self._decode(k)
                    return Result(Verdict.DEPLOYABLE, "bmc", stats=stats,
                                  reason=f"BMC witness of depth {k} (each step: deletions, then "
                                         f"{'a set of non-interfering deploys' if self.parallel else 'one deploy'})")
                if self.max_depth is not None and k >= self.max_depth:
                    return self._unknown(f"no witness up to depth {k} (depth limit)", t0)
                k += 1
        finally:
            self.solver.delete()

    def _unknown(self, reason: str, t0: float) -> Result:
        self.stats["solve_s"] = time.perf_counter() - t0
        return Result(Verdict.UNKNOWN, "bmc", stats=self.stats, reason=reason)

    def _decode(self, k: int) -> list[tuple[str, int, int]]:
        model = self.solver.get_model()
        true = set(x for x in model if x > 0)
        low, system = self.low, self.system
        steps: list[tuple[str, int, int]] = []
        prev = system.decode(low.state_of(true, 0))
        for j in range(1, k + 1):
            mid = system.decode({v: lit in true for v, lit in self.mids[j - 1].items()})
            for (t, n), c in sorted(prev.items()):
                for _ in range(c - mid.get((t, n), 0)):
                    steps.append((DELETE, t, n))
            chosen = [i for i, sel in self.selectors[j - 1].items() if sel in true]
            if self.parallel is not None:
                chosen = self.parallel.linearise(set(chosen))
            for i in chosen:
                a = system.actions[i]
                steps.append((DEPLOY, a.type_index, a.node_index))
            prev = system.decode(low.state_of(true, j))
        return steps
