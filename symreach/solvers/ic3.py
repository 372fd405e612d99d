"""IC3 / PDR (Bradley, VMCAI 2011; Eén, Mishchenko, Brayton, FMCAD 2011).

Named as in the literature and in IC3ref's ``IC3.cpp``:

- **frames** ``F_0 .. F_k``: ``F_0`` is the initial state; lemmas (blocked
  cubes) are stored *delta-encoded* at the highest level they are known to
  hold, ``frames[i]``, so ``F_i`` is the initial-state-free conjunction of the
  negations of the cubes in ``frames[i:]``. All frames live in ONE
  incremental solver (MiniSat 2.2 by default, ENGINEERING.md), each level
  guarded by an activation literal ``("frame", i)``;
- the transition relation ``T`` is the **macro step**
  ``CnfLowering.macro_step(0, MID, 1)``: any set of deletions, then at most
  one deploy whose guard is read after them. It contains every single deploy
  and every single delete, so an invariant inductive for it is inductive for
  the actions the certificate checker re-checks; a frame now counts deploys,
  not actions, so the frames of a pebbling proof stay few;
- **consecution** (relative induction): ``c`` is inductive relative to ``F_i``
  when ``F_i & -c & T & c'`` is unsatisfiable; the temporary clause ``-c`` has
  its own activation literal, killed after the query;
- **proof obligations** ``(cube, level)`` in a priority queue, lowest level
  first; a satisfiable consecution yields a predecessor (a CTI), obtained by
  **lifting** with the structure of the system instead of a SAT call
  (``symreach.solvers.ic3_lift``: the deploy's move, a justification of its
  guard, the untouched cube literals, and only the *positive* literals of
  saturated pairs, since deletions reach the negative ones). Every state of
  that cube takes the recorded hop into the cube, so a chain of lifted
  obligations from a cube that contains the initial state *is* a
  counterexample. An obligation blocked at level ``j`` is re-queued at
  ``j + 1`` with its parent (as ABC's ``pdr`` does), so a chain may grow far
  longer than the number of frames: the 248-action witness of the binary
  tree h = 6 (127 deploys, so at least 127 macro steps) is found with 8-10
  frames. Which obligation of a level goes first is
  ``symreach.solvers.ic3_queue`` (shallow, deep, or alternating; ``Ic3Engine``
  runs a shallow phase with a query budget, then an alternating one);
- **monotonicity of deletions**: deletions are always enabled, so if ``s`` is
  reachable so is every ``s' <= s`` (fewer pods, pointwise): the reachable
  set is *downward* closed and its complement *upward* closed. An
  unreachable cube therefore stays unreachable when pods are *added*, i.e.
  when its negative literals on saturated presence bits are dropped (its
  upward closure). The converse direction (dropping positive literals) is
  not monotone: a required affinity may need the pod. Per frame the closure
  is one level off (a state ``<= s`` with ``s`` reachable in ``i`` macro
  steps is reachable in ``i + 1``: the last deploy may need a deleted pod),
  so ``mic`` *tries* the upward closure first with one relative-induction
  query instead of assuming it; lifting produces positive cubes already;
- **generalization**: the unsat core over the primed cube, then ``mic`` with
  counterexamples to generalization (``down`` with CTGs; Hassan, Bradley,
  Somenzi, FMCAD 2013): a CTG that is itself inductive relative to the frame
  below is blocked (and pushed as far as it goes) instead of weakening the
  cube, otherwise the cube is joined with the CTG. CTGs and joins are used
  only for obligations near the bad state; on a long chain (a witness in the
  making) ``mic`` just drops literals (``Ic3Engine``, ``ctg_chain_limit``);
- **propagate**: lemmas move to the next level when they are inductive
  relative to their frame; a lemma subsumed by a new one is dropped; an empty
  level means ``F_i == F_{i+1}``: the lemmas at levels above ``i`` form an
  inductive invariant;
- the solver is **recycled** (rebuilt from ``T``, ``F_0`` and the live
  lemmas) after ``recycle_every`` temporary activation literals.

Result: a counterexample (the actions of the obligation chain, replayed on
the system, realised against the real sigma0 and replayed with
``semantics.replay``), or an invariant returned as an
``symreach.certify.clause_invariant.InvariantCertificate`` over named state variables.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

from pysat.solvers import Solver

from symreach.certify.clause_invariant import InvariantCertificate
from symreach.encodings.cnf import CnfLowering
from symreach.encodings.compile import compile_system
from symreach.encodings.realize import realize_trace
from symreach.encodings.system import TransitionSystem
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.solvers.fast_paths import PreprocessingEngine
from symreach.solvers.ic3_frames import Frames
from symreach.solvers.ic3_lift import Hop, Lifter
from symreach.solvers.ic3_queue import ObligationQueue

Cube = tuple[int, ...]  # sorted signed SAT ids of current-state variables
MID = ("mid", 1)  # the step between the deletions and the deploy of T


class _Timeout(Exception):
    pass


class _Budget(Exception):
    """The first phase spent its queries (``Ic3Engine.first_phase_queries``)."""


@dataclass(frozen=True)
class Search:
    """How one IC3 run orders obligations and where it uses CTGs (``Ic3Engine``)."""

    order: str
    chain_limit: int
    budget: Optional[int] = None  # SAT queries before giving way to the next phase


CLASSIC = Search("shallow", 1 << 30)  # IC3ref's choices: CTGs everywhere, nearest obligation first


@dataclass
class Obligation:
    cube: Cube
    level: int
    parent: Optional["Obligation"] = None
    hop: Optional[Hop] = None  # the macro step taking this cube into parent's cube
    depth: int = 0


class Ic3Engine(PreprocessingEngine):
    """IC3 with CTG generalization and structural lifting.

    ``mic_attempts``: consecutive failed literal drops before ``mic`` stops
    (IC3ref's default is 3). One measured best over the macro step, on
    pebbling and on the nets. ``recycle_every``: temporary activation
    literals per solver; their ids are reused by the rebuilt solver (ids that
    grow without bound leave the solver deciding thousands of dead variables
    on every satisfiable query). Figures:
    benchmarks/results/design_measurements.md.

    Deep witnesses. A witness much longer than the frame count is a long chain
    of re-queued obligations (module docstring), and two things decide its
    cost, both measured in SAT queries on the binary tree h = 6, k = 8
    (248 actions; undecided within run_all's limit before):

    - ``order`` (``symreach.solvers.ic3_queue``): ``deep`` keeps a re-queued
      chain going, ``shallow`` lets its ancestors look for other
      predecessors first. Pebbling witnesses need deep (tree h = 5, k = 7:
      8,786 queries against 19,561), the token ring's shallow (ring n = 6:
      13,125 against 39,148); ``alternate`` switches every ``order_period``
      pops and pays at most about twice the better one.
    - CTGs: each blocked CTG is a true lemma, and on pebbling they make the
      frames exact too early: once ``F_k`` excludes every state that needs
      more than ``k`` deploys, the chain cannot pass the frames until there
      are 127 of them. Without CTGs the tree h = 6 witness took 4,913
      queries instead of 23,511, and the h = 6, k = 7 proof 742 instead of
      7,429; but net proofs need them (ring n = 3 violation: 115,854
      queries without, 41,509 with). ``ctg_chain_limit``: CTGs and joins only
      for obligations at most that many hops below the bad state (and never
      while the deep heap is served); deeper ones drop literals plainly.
    ``max_joins``: joins per ``down`` call where CTGs are on (None:
    unbounded, as in Hassan et al.).

    Two phases. Neither search dominates: a hard cluster witness
    (hard/paper/s1/100x60, 51 actions) takes 8,509 queries with CTGs
    everywhere and more than 32,000 with the witness search, the tree h = 6
    witness the other way round. So ``check`` first runs the classic search
    (shallow order, CTGs everywhere: IC3 as it was) for
    ``first_phase_queries`` SAT queries, then, if undecided, a fresh IC3
    (new solver, no lemmas: the first phase's CTG lemmas are what slows the
    deep chain) with ``order`` and ``ctg_chain_limit``. Whatever the old
    search decided within the budget is decided exactly as before; beyond
    it the budget is the price (ring n = 6: 33,742 queries instead of
    13,125; tree h = 6: 16,218 instead of more than 36,000). 0 skips the
    first phase. ``stats``: ``phase`` (1 or 2), ``first_phase_spent``, and
    ``queries`` over both."""

    name = "ic3"

    def __init__(self, solver: str = "minisat22", max_ctgs: int = 3, max_ctg_depth: int = 1,
                 mic_attempts: int = 1, recycle_every: int = 300, fast_paths: bool = True,
                 order: str = "alternate", order_period: int = 64, ctg_chain_limit: int = 8,
                 max_joins: Optional[int] = None, first_phase_queries: int = 10_000) -> None:
        self.solver_name = solver
        self.first_phase_queries = first_phase_queries
        self.max_ctgs, self.max_ctg_depth, self.mic_attempts = max_ctgs, max_ctg_depth, mic_attempts
        self.recycle_every = recycle_every
        self.fast_paths = fast_paths
        self.order, self.order_period = order, order_period
        self.ctg_chain_limit = ctg_chain_limit
        self.max_joins = max_joins

    def decide(self, instance: Instance, query: Query, pre, run: RunContext) -> Result:
        start = time.perf_counter()
        system = compile_system(instance, query, pre)
        outcome, stats, frame = self.search_system(system, run)
        stats["time_s"] = time.perf_counter() - start
        if outcome is None:
            return Result(Verdict.UNKNOWN, self.name, fragment=pre.fragment, stats=stats,
                          reason=run.timeout_reason(f"at frame {frame}"))
        kind, payload = outcome
        if kind == "cex":
            steps = payload
            trace = realize_trace(instance, pre.abstract_initial, steps, query, run)
            if trace is None:
                raise AssertionError("IC3 counterexample does not replay: an encoding bug")
            stats["cex_length"] = len(payload)
            return Result(Verdict.DEPLOYABLE, self.name, fragment=pre.fragment, trace=trace, stats=stats,
                          reason=f"IC3 counterexample of {len(payload)} actions (frame {frame}; macro "
                                 "steps: deletions, then one deploy)")
        cert = InvariantCertificate.from_system(instance, query, system, payload)
        stats["invariant_clauses"] = len(payload)
        return Result(Verdict.NOT_DEPLOYABLE, self.name, fragment=pre.fragment, stats=stats,
                      certificate=cert,
                      reason=f"IC3 inductive invariant of {len(payload)} clauses (frame {frame})")

    def search_system(self, system: TransitionSystem, run: RunContext) -> tuple[Optional[tuple], dict, int]:
        """IC3's phases on a compiled system (also the gang system, ``solvers/gang_symbolic.py``):
        (("cex", abstract steps) | ("proof", clauses) | None when stopped, stats, last frame)."""
        stats: dict[str, Any] = dict(system.stats)
        phases = [Search(self.order, self.ctg_chain_limit)]
        if self.first_phase_queries > 0:
            phases.insert(0, Search(CLASSIC.order, CLASSIC.chain_limit, self.first_phase_queries))
        spent = 0
        for phase, search in enumerate(phases, 1):
            ic3 = Ic3(system, self, run, search)
            try:
                outcome = ic3.run()
            except (_Timeout, _Budget) as stop:
                outcome = None
                if isinstance(stop, _Budget):
                    spent += ic3.stats["queries"]
                    continue
            finally:
                ic3.close()
            break
        stats.update(ic3.stats)
        stats["phase"], stats["first_phase_spent"] = phase, spent
        stats["queries"] += spent
        return outcome, stats, ic3.k


class Ic3:
    """One IC3 run on a ``TransitionSystem``; ``run()`` returns ("cex", actions),
    ("proof", lemmas as lists of (state var id, value) literals) or raises _Timeout."""

    def __init__(self, system: TransitionSystem, opts: Ic3Engine, run: RunContext,
                 search: Search = CLASSIC) -> None:
        self.system = system
        self.opts = opts
        self.search = search
        self.run_context = run
        self.low = CnfLowering(system)
        low = self.low
        self.cur = [low.var(v, 0) for v in system.state_vars]
        self.nxt = [low.var(v, 1) for v in system.state_vars]
        self.prime = {c: n for c, n in zip(self.cur, self.nxt)}
        self.unprime = {n: c for c, n in zip(self.cur, self.nxt)}
        self.var_of = {c: v for c, v in zip(self.cur, system.state_vars)}
        self.lit_of_var = {v: c for c, v in zip(self.cur, system.state_vars)}
        self.mid = [low.var(v, MID) for v in system.state_vars]
        self.init = {low.var(v, 0) if b else -low.var(v, 0) for v, b in system.initial.items()}
        sel_of = low.macro_step(0, MID, 1)
        self.sel = [(i, s) for i, s in sel_of.items()]
        self.lifter = Lifter(system)
        self.counted_lits = {low.var(v, 0) for pv in system.pairs.values() if pv.counted
                             for v in (pv.present,) + pv.count_bits}
        self.bad = low.lit(system.target, 0)
        self.T = low.flush()
        self.frames = Frames()  # levels 1..k; F_0 is the initial state
        self.k = 1
        self.activity: dict[int, float] = {}
        self.stats: dict[str, Any] = {"queries": 0, "ctis": 0, "ctgs": 0, "mic_calls": 0, "frames": 1,
                                      "lemmas": 0, "obligations": 0, "recycles": 0, "joins": 0,
                                      "solver": opts.solver_name, "sat_s": 0.0, "upward": 0}
        self.solver: Optional[Solver] = None
        self.max_ctgs, self.max_joins = 0, 0  # per obligation: _generalise_for
        self._generalise_for(witness=False)
        self._dead = 0
        self._build_solver()

    # ---- solver ---------------------------------------------------------------
    def _act(self, i: int) -> int:
        return self.low.pool.id(("frame", i))

    def _build_solver(self) -> None:
        if self.solver is not None:
            self.solver.delete()
            self.stats["recycles"] += 1
        s = Solver(name=self.opts.solver_name, bootstrap_with=self.T)
        a0 = self._act(0)
        for lit in self.init:
            s.add_clause([-a0, lit])
        for i, c in self.frames.items():
            s.add_clause([-self._act(i)] + [-x for x in c])
        self.solver = s
        self._dead = 0

    def close(self) -> None:
        if self.solver is not None:
            self.solver.delete()
            self.solver = None

    def _frame_assumptions(self, i: int) -> list[int]:
        acts = [self._act(j) for j in range(max(i, 1), self.k + 1)]
        if i == 0:
            acts.append(self._act(0))
        return acts

    def _solve(self, assumptions: list[int]) -> bool:
        if self.run_context.past():
            raise _Timeout()
        if self.search.budget is not None and self.stats["queries"] >= self.search.budget:
            raise _Budget()
        self.stats["queries"] += 1
        if self.stats["queries"] % 64 == 0:
            self.run_context.report("ic3", frame=self.k, lemmas=len(self.frames),
                        queries=self.stats["queries"])
        t0 = time.perf_counter()
        res = self.solver.solve(assumptions=assumptions)
        self.stats["sat_s"] += time.perf_counter() - t0
        return res

    def _model_state(self):
        model = self.solver.get_model()
        return {v: model[c - 1] > 0 for c, v in zip(self.cur, self.system.state_vars)}, model

    def _predecessor(self, cube: Cube):
        """(model state, hop, lifted predecessor cube) of a satisfiable consecution."""
        state, model = self._model_state()
        mid = {v: model[c - 1] > 0 for c, v in zip(self.mid, self.system.state_vars)}
        act = next((a for a, s in self.sel if model[s - 1] > 0), None)
        succ = {self.var_of[abs(x)]: x > 0 for x in cube}
        pred, hop = self.lifter.lift(state, mid, act, succ)
        return state, hop, self._cube(pred)

    def consecution(self, cube: Cube, i: int, want_core: bool = False, want_pred: bool = False):
        """Is ``cube`` inductive relative to F_i? Returns (True, core cube or None) or
        (False, (model state, hop, lifted predecessor) or None)."""
        tmp = self.low.pool.id(("tmp", self._dead))  # ids reused after a recycle
        self.solver.add_clause([-tmp] + [-x for x in cube])
        primed = [self.prime[x] if x > 0 else -self.prime[-x] for x in cube]
        ok = self._solve(primed + self._frame_assumptions(i) + [tmp])
        if ok:
            out = None
            if want_pred:
                out = self._predecessor(cube)
            self._kill(tmp)
            return False, out
        core = None
        if want_core:
            got = set(self.solver.get_core() or ())
            core = tuple(x for x, p in zip(cube, primed) if p in got)
            if self._has_init(core):  # put back a literal that excludes the initial state
                for x in cube:
                    if x not in self.init and x not in core:
                        core = tuple(sorted(core + (x,), key=abs))
                        break
        self._kill(tmp)
        return True, core

    def _kill(self, tmp: int) -> None:
        self.solver.add_clause([-tmp])
        self._dead += 1
        if self._dead >= self.opts.recycle_every:
            self._build_solver()

    def _cube(self, lits: dict[int, bool]) -> Cube:
        return tuple(sorted((self.lit_of_var[v] if b else -self.lit_of_var[v] for v, b in lits.items()), key=abs))

    def _has_init(self, cube) -> bool:
        return all(x in self.init for x in cube)

    # ---- generalization ---------------------------------------------------------------
    def _generalise_for(self, witness: bool) -> None:
        """CTGs and joins in ``down`` for proofs; neither on the witness side (see
        ``Ic3Engine``): plain literal dropping, one query per failed drop."""
        if witness:
            self.max_ctgs, self.max_joins = 0, 0
        else:
            self.max_ctgs = self.opts.max_ctgs
            self.max_joins = self.opts.max_joins if self.opts.max_joins is not None else 1 << 30

    def _order(self, cube: Cube) -> list[int]:
        act = self.activity
        return sorted(cube, key=lambda x: (act.get(abs(x), 0.0), abs(x)))

    def mic(self, cube: Cube, level: int, depth: int = 0) -> Cube:
        """A minimal inductive sub-cube (relative to F_level) of an inductive cube."""
        self.stats["mic_calls"] += 1
        up = tuple(x for x in cube if x > 0 or -x in self.counted_lits)
        if len(up) < len(cube) and up and not self._has_init(up):
            ok, core = self.consecution(up, level, want_core=True)  # the upward closure first
            if ok:
                self.stats["upward"] += 1
                cube = core or up
        lits = self._order(cube)
        attempts = self.opts.mic_attempts
        i = 0
        while i < len(lits):
            cand = lits[:i] + lits[i + 1:]
            got = self.down(tuple(sorted(cand, key=abs)), level, depth)
            if got is not None:
                keep = set(got)
                lits = [x for x in lits if x in keep]
                attempts = self.opts.mic_attempts
            else:
                attempts -= 1
                if attempts <= 0:
                    break
                i += 1
        return tuple(sorted(lits, key=abs))

    def down(self, cube: Cube, level: int, depth: int) -> Optional[Cube]:
        """``ctgDown``: weaken ``cube`` until it is inductive relative to F_level, blocking
        counterexamples to generalization on the way; None when it fails."""
        ctgs = joins = 0
        while True:
            if not cube or self._has_init(cube):
                return None
            if depth > self.opts.max_ctg_depth:
                ok, core = self.consecution(cube, level, want_core=True)
                return (core or cube) if ok else None
            ok, out = self.consecution(cube, level, want_core=True, want_pred=True)
            if ok:
                return out or cube
            state, _, ctg = out
            if (ctgs < self.max_ctgs and level > 0 and not self._has_init(ctg)
                    and self.consecution(ctg, level - 1)[0]):
                ctgs += 1
                self.stats["ctgs"] += 1
                j = level
                while j < self.k and self.consecution(ctg, j)[0]:
                    j += 1
                g = self.mic(ctg, j - 1, depth + 1)
                self.add_lemma(g, j)
            else:
                if joins >= self.max_joins:
                    return None
                joins += 1
                ctgs = 0
                self.stats["joins"] += 1
                joined = tuple(x for x in cube if state[self.var_of[abs(x)]] == (x > 0))
                if joined == cube:  # pragma: no cover - the CTG lies outside the cube
                    return None
                cube = joined

    def add_lemma(self, cube: Cube, level: int, subsume: bool = True) -> None:
        """Block ``cube`` in F_1..F_level, dropping subsumed lemmas (unless ``subsume``
        is off: a propagated lemma subsumes nothing its old level did not)."""
        if subsume:
            for d in self.frames.supersets(cube, level):
                self.frames.remove(d)
        self.frames.add(cube, level)
        self.solver.add_clause([-self._act(level)] + [-x for x in cube])
        self.stats["lemmas"] += 1
        for x in cube:
            self.activity[abs(x)] = self.activity.get(abs(x), 0.0) + 1.0

    def _blocked(self, cube: Cube, level: int) -> bool:
        return self.frames.blocked(cube, level)

    # ---- the main loop -------------------------------------------------------------
    def run(self):
        if self._solve([self.bad] + self._frame_assumptions(0)):
            return ("cex", [])
        while True:
            while True:
                if not self._solve([self.bad] + self._frame_assumptions(self.k)):
                    break
                state, _ = self._model_state()
                bad = self._cube(self.lifter.justify(self.system.target, state))
                self.stats["ctis"] += 1
                cex = self.block(Obligation(bad, self.k))
                if cex is not None:
                    return ("cex", cex)
            self.k += 1
            self.frames.extend()
            self.stats["frames"] = self.k
            inv = self.propagate()
            if inv is not None:
                return ("proof", inv)

    def block(self, top: Obligation) -> Optional[list[tuple[str, int, int]]]:
        """Discharge obligations until ``top`` is blocked; a counterexample's actions if not."""
        queue: ObligationQueue[Obligation] = ObligationQueue(self.search.order, self.opts.order_period)
        queue.push(top.level, top.depth, top)
        while True:
            ob = queue.pop()
            if ob is None:
                return None
            self._generalise_for(witness=queue.deep or ob.depth > self.search.chain_limit)
            self.stats["obligations"] += 1
            if self._blocked(ob.cube, ob.level):
                if ob.level < self.k:
                    queue.push(ob.level + 1, ob.depth, Obligation(ob.cube, ob.level + 1, ob.parent, ob.hop, ob.depth))
                continue
            ok, out = self.consecution(ob.cube, ob.level - 1, want_core=True, want_pred=True)
            if ok:
                g = self.mic(out or ob.cube, ob.level - 1)
                j = ob.level
                while j < self.k and self.consecution(g, j)[0]:
                    j += 1
                self.add_lemma(g, j)
                if j < self.k:
                    queue.push(j + 1, ob.depth, Obligation(ob.cube, j + 1, ob.parent, ob.hop, ob.depth))
                continue
            _, hop, pred = out
            self.stats["ctis"] += 1
            child = Obligation(pred, ob.level - 1, ob, hop, ob.depth + 1)
            if self._has_init(pred) or ob.level - 1 == 0:
                return self._counterexample(child)
            queue.push(child.level, child.depth, child)
            queue.push(ob.level, ob.depth, ob)

    def _counterexample(self, ob: Obligation) -> list[tuple[str, int, int]]:
        hops = []
        while ob.parent is not None:
            hops.append(ob.hop)
            ob = ob.parent
        # the chain is exact by lifting; replay_hops executes it on the system
        return self.lifter.replay_hops(hops)

    def propagate(self) -> Optional[list[list[tuple[int, bool]]]]:
        for i in range(1, self.k):
            for c in sorted(self.frames.level(i)):
                if c not in self.frames.level(i):
                    continue
                if self.consecution(c, i)[0]:
                    self.add_lemma(c, i + 1, subsume=False)
                    self.stats["lemmas"] -= 1
            if not self.frames.level(i):
                lemmas = [c for j in range(i + 1, self.k + 1) for c in self.frames.level(j)]
                self.stats["invariant_level"] = i
                return [[(self.var_of[abs(x)], x < 0) for x in sorted(c, key=abs)] for c in sorted(lemmas)]
        return None
