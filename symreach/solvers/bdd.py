"""BDD engine: symbolic reachability over the compiled transition system.

Pipeline: ``preprocess`` (cone, pruning, may-fixpoint, fast paths) ->
``compile_system`` -> ``SymbolicSystem`` (``bdd_images``: per-action images by
cofactors, no primed variables) -> a fixpoint. Strategies:

- ``chaining`` (default): sweeps apply every action, one after another, to
  the *whole* reached set (on pebbling its BDD is far smaller than any
  frontier). Sweep order (``bdd_sweep_order.interleaved``): deploys in witness
  (topological) order, the delete of a pair right after the last deploy that
  reads it; backward runs use the reverse order. Pyramid h = 9 backward: 3
  sweeps instead of 25. After the first sweep, one *closure pass* closes R
  under the unguarded bit deletes (``bdd_closure``: the backward set is
  upward closed in their variables, the forward set downward closed), as
  one walk of R's DAG (``close_set``; its states form one ring that
  ``witness`` traces back by deletes), and they are skipped while R stays
  closed: several times faster backward on large pyramids.
- ``saturation``: the set-level form of Ciardo et al. (TACAS 2001): actions
  grouped by top variable, closed bottom-up. Measured worse here: capacity
  guards read every pair of a node, so all deploys share one top variable.
- ``bfs`` and ``chaining-frontier``: classical frontier iterations (kept for
  comparison and tests).

Directions: ``forward`` from sigma0, ``backward`` from the target, and
``bidirectional`` (default): the sides alternate image by image, the next
image going to the side with less work so far (``pick_side``: work in BDD
nodes, |R| measured after every image); forward finds witnesses in one
sweep, backward fixpoints stay tiny on unreachable targets (pyramid h = 8:
581 nodes vs > 100k forward). Decisions are deterministic. A chaining run
stops after one full cycle of images that add nothing (``_chaining_full``).

Every image application that produces new states may record a *ring*
(tagged with the action); a ring's states have a predecessor by that action
in the earlier rings, so ``witness`` walks back choosing the earliest ring.
Ring-free passes keep each growing image itself as a ring (no extra BDD
operation): its states have a predecessor in the union of the earlier
rings, so a hit needs no rerun, unless the side dropped its rings: past its
first sweep a bidirectional side whose R exceeds ``RING_LIMIT`` nodes stops
keeping them (on not-deployable pyramids they held most of the live nodes),
and a later hit reruns that side alone with rings. For ``not-deployable`` the forward reached set, or the
complement of the backward set (restricted to consistent counters), is an
inductive invariant, returned as the certificate (``symreach.certify.bdd_invariant``).
CUDD's dynamic reordering is off by default (measured slower on the
pebbling benchmarks); ``dynamic_reorder=True`` reorders explicitly between
images when the manager doubles.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Optional

from symreach.encodings.compile import compile_system
from symreach.encodings.counters import AUTO_SWEEPS, CounterSystem, build_system
from symreach.encodings.realize import realize_trace
from symreach.errors import LimitReached
from symreach.model import Instance, Query
from symreach.result import DEPLOY, Result, Verdict
from symreach.run import RunContext
from symreach.solvers.fast_paths import PreprocessingEngine
from symreach.solvers.bdd_closure import ReadDomain, close_set, closure_actions, closure_order
from symreach.solvers.bdd_images import BACKEND, SymbolicSystem, force_order, manager_nodes, reorder
from symreach.solvers.counter_evidence import counter_verdict
from symreach.solvers.bdd_sweep_order import interleaved, witness_cyclic
from symreach.solvers.cudd_memory import is_out_of_memory

STRATEGIES = ("chaining", "saturation", "chaining-frontier", "bfs")
# "compiled": the order of ``TransitionSystem.state_vars`` (types by witness
# level, target first); "force": ``bdd_images.force_order`` over the guard
# reads hypergraph; "auto": "compiled" when the witness graph is acyclic (its
# levels are then meaningful: faster than FORCE on pebbling pyramids), else
# "force" (witness cycles collapse the levels: faster on Railroad); figures in
# benchmarks/results/design_measurements.md
VAR_ORDERS = ("auto", "force", "compiled")


# ``Reachability.ring_limit`` of bidirectional runs, in BDD nodes: pyramids
# from h = 11 exceed it in their second sweep; a side past it that then hits
# the goal pays a rerun for its witness
RING_LIMIT = 50_000
# the action tag of the ring a closure walk adds (``Reachability._closure_walk``)
WALK = -1


class SearchTimeout(Exception):
    pass


class _OutOfSweeps(Exception):
    """The sweep budget of a trial run (``--counters auto``) is spent."""


class _Found(Exception):
    def __init__(self, ring: int, hit) -> None:
        self.ring, self.hit = ring, hit


@dataclass(frozen=True)
class ReachConfig:
    """How one fixpoint run works; every choice is fixed at construction.

    ``record_rings``: frontier strategies need the exact new states; ring-free
    runs only suit the whole-set strategies. ``keep_images``: a ring-free run
    may still keep every growing image as a ring (an image's states have a
    predecessor in the union of the earlier rings, which is all ``witness``
    needs, at no extra BDD operation). ``reverse_backward``: backward images
    propagate from the target down, the reverse of the forward interleaved
    order (pyramid h = 9: 3 sweeps instead of 25). ``deploy_order``: "level" |
    "postorder" | "auto" (post-order when the witness graph is tree-like:
    binary trees 1 sweep instead of a timeout; level order when pairs are
    widely shared: faster backward on pyramids). ``image_mode``: "whole"
    builds image(R) and ORs it in; "diff" builds only image(R) & ~R
    (``SymbolicSystem.new_states``); "diff-test" first tests that set for
    emptiness (measured: "whole" is fastest on pyramids,
    benchmarks/results/bdd_alternation.md). ``fine_steps``: chaining yields
    after every image (with its work, |R|^2 as in the per-sweep measure of
    ``BddEngine._search``) instead of once per sweep, so bidirectional search
    switches sides within a sweep and one exploding sweep of one side cannot
    starve the other (Angiogenesis-PT-01: per-sweep alternation timed out
    where forward alone decides at once). ``ring_limit``:
    ``keep_images`` runs drop their rings once |R| exceeds this many nodes
    after their first sweep (a hit after that reruns the side with rings).
    ``closure_pass``: one pass of the unguarded bit deletes after the first
    sweep (``bdd_closure``; several times faster backward on large
    pyramids). ``read_domain``: deploy images of R & Q
    (``bdd_closure.ReadDomain``) "closed" while R is unchanged since the
    closure pass, "always", or "off". ``to_fixpoint``: no goal; run until
    nothing grows (the matrix's fixpoint, tests)."""

    direction: str = "forward"
    strategy: str = "chaining"
    dynamic_reorder: bool = True
    record_rings: bool = True
    keep_images: bool = False
    reverse_backward: bool = True
    deploy_order: str = "auto"
    image_mode: str = "whole"
    fine_steps: bool = False
    ring_limit: Optional[int] = None
    closure_pass: bool = True
    read_domain: str = "closed"
    to_fixpoint: bool = False
    closure_walk: bool = True


class Reachability:
    """One fixpoint run; ``rings`` hold (states, action index or None)."""

    def __init__(self, sym: SymbolicSystem, config: ReachConfig = ReachConfig(),
                 run: Optional[RunContext] = None) -> None:
        self.sym, self.bdd = sym, sym.bdd
        self.config = config
        self.run_context = run if run is not None else RunContext()
        self.forward = config.direction == "forward"
        self.strategy = config.strategy
        self.record_rings = config.record_rings or config.strategy in ("bfs", "chaining-frontier")
        self.keep_images = config.keep_images and not self.record_rings
        self.image = sym.post if self.forward else sym.pre
        start, self.goal = ((sym.initial, sym.target) if self.forward
                            else (sym.target & sym.consistent, sym.initial))
        if config.to_fixpoint:
            self.goal = self.bdd.false
        self.R = start
        self.rings: list[tuple[Any, Optional[int]]] = [(start, None)]
        self.stats: dict[str, Any] = {"iterations": 0, "image_calls": 0, "rings": 1,
                                      "time_deploy_images_s": 0.0, "time_delete_images_s": 0.0,
                                      "reorderings": 0, "closure_passes": 0, "closure_skipped": 0}
        self._last_reorder_size = max(manager_nodes(self.bdd), 1000)
        # |R| in BDD nodes, re-measured every 32 images of a fine-step run
        self.size = 1
        self.rings_dropped = False
        # sweeps completed (a closure pass counts as past its sweep)
        self._sweeps_done = 0
        self._is_deploy = [a.op == DEPLOY for a in sym.system.actions]
        self._closure = closure_order(sym, closure_actions(sym.system))
        self._domain: Optional[ReadDomain] = None  # built on first use
        self._domain_on = False
        # closed by the pass and grown by nothing since: at most one more cycle
        # of idle images, unless one grows (``BddEngine._alternate``)
        self.settling = False

    @property
    def sweeps_done(self) -> int:
        """Complete chaining sweeps: R holds every state within this many steps of the start."""
        return self._sweeps_done if self.strategy == "chaining" else 0

    # ---- bookkeeping --------------------------------------------------------
    def _apply(self, i: int, s):
        """Image of s under action i minus R; records a ring. Returns the new states."""
        t0 = time.perf_counter()
        if s is self.R and self.config.image_mode != "whole":
            new = self.sym.new_states(i, s, self.forward, test=self.config.image_mode == "diff-test")
            grown = new != self.bdd.false
            if grown:
                self.R |= new
        elif self.record_rings:
            img = self.image(i, s)
            new = img & ~self.R if img != self.bdd.false else img
            grown = new != self.bdd.false
            if grown:
                self.R |= new
        else:
            arg = s
            if s is self.R and self._domain_on:
                if self._domain is None:
                    self._domain = ReadDomain(self.sym, self.forward)
                if i in self._domain.members:
                    arg = self._domain.of(s)
            img = self.image(i, arg)
            new = img
            merged = self.R | img
            grown = merged != self.R
            self.R = merged
        now = time.perf_counter()
        dt = now - t0
        if self.run_context.past():
            raise SearchTimeout()
        self.stats["image_calls"] += 1
        if self.stats["image_calls"] % 32 == 0:
            self.run_context.report("bdd", direction="forward" if self.forward else "backward", sweeps=self.stats["iterations"],
                        images=self.stats["image_calls"], reached_nodes=self.size,
                        complete_sweeps=self.sweeps_done)
        key = "time_deploy_images_s" if self._is_deploy[i] else "time_delete_images_s"
        self.stats[key] += dt
        if not grown:
            return self.bdd.false
        self._ring(new, i)
        if self.config.dynamic_reorder and len(self.rings) % 16 == 0:
            size = manager_nodes(self.bdd)
            if size > 2 * self._last_reorder_size:
                reorder(self.bdd)
                self.stats["reorderings"] += 1
                self._last_reorder_size = max(manager_nodes(self.bdd), 1000)
        return new

    # ---- strategies ---------------------------------------------------------
    def run(self) -> None:
        """Run to the fixpoint (returns) or raise _Found / SearchTimeout."""
        for _ in self.sweeps():
            pass

    def sweeps(self):
        """Generator: one step per sweep (chaining) or one step in all (other
        strategies); returns at the fixpoint, raises _Found / SearchTimeout."""
        n = len(self.sym.system.actions)
        if self.R & self.goal != self.bdd.false:
            raise _Found(0, self.R & self.goal)
        if self.strategy == "bfs":
            self._bfs(range(n))
        elif self.strategy == "chaining-frontier":
            self._chaining(self._interleaved())
        elif self.strategy == "chaining":
            yield from self._chaining_full(self._interleaved())
        else:
            groups = self._groups()
            self.stats["groups"] = len(groups)
            if groups:
                self._saturate(len(groups) - 1, groups)

    def _ordered(self, idx):
        # bottom of the order first (largest top level), deletes before deploys
        return sorted(idx, key=lambda i: (-self.sym.top_level[i], self._is_deploy[i], i))

    def _interleaved(self) -> list[int]:
        """The sweep order (``bdd_sweep_order.interleaved``)."""
        try:
            return interleaved(self.sym.system, self.forward, self.config.deploy_order,
                               self.config.reverse_backward, self.run_context)
        except TimeoutError:
            raise SearchTimeout() from None

    def _groups(self, max_groups: int = 48) -> list[list[int]]:
        levels = sorted({self.sym.top_level[i] for i in range(len(self.sym.system.actions))}, reverse=True)
        if not levels:
            return []
        per = max(1, -(-len(levels) // max_groups))
        bucket = {lv: k // per for k, lv in enumerate(levels)}
        groups: list[list[int]] = [[] for _ in range(max(bucket.values()) + 1)]
        for i in self._ordered(range(len(self.sym.system.actions))):
            groups[bucket[self.sym.top_level[i]]].append(i)
        return groups

    def _bfs(self, idx) -> None:
        frontier = self.R
        while frontier != self.bdd.false:
            self.stats["iterations"] += 1
            new = self.bdd.false
            for i in idx:
                new |= self._apply(i, frontier)
            frontier = new

    def _chaining(self, order) -> None:
        frontier = self.R
        while frontier != self.bdd.false:
            self.stats["iterations"] += 1
            seen = frontier
            added = self.bdd.false
            for i in order:
                new = self._apply(i, seen)
                if new != self.bdd.false:
                    seen |= new
                    added |= new
            frontier = added

    def _chaining_full(self, order) -> None:
        """Chaining on the whole reached set (no frontier): for this system the
        reached set is often far smaller as a BDD than any frontier.

        The order is applied cyclically and the run stops after ``len(order)``
        images in a row that add nothing: each action has then been applied
        to the final R. The actions after the last growing image of a sweep
        are not re-applied in the next one (pyramid h = 10 backward: the
        last 40 of 132 images of the closing sweep).

        With ``closure_pass`` and closure actions (``bdd_closure``), the
        first sweep is followed by one pass of them; after it they are
        skipped, and count as idle, until some image grows R. One pass
        only: on pyramids plain chaining's second sweep is that closure in
        a worse order; on the Appendix B nets a pass after every sweep cost
        up to twice the time (Railroad; design_measurements.md)."""
        n = len(order)
        if n == 0:
            return
        closing = set(self._closure) if self.config.closure_pass else set()
        closed = self.settling = False
        idle = 0
        while True:
            self.stats["iterations"] += 1
            for i in order:
                if closed and i in closing:
                    self.stats["closure_skipped"] += 1
                    idle += 1
                else:
                    self._domain_on = self.config.read_domain == "always" or (
                        closed and self.config.read_domain == "closed")
                    grew = self._apply(i, self.R) != self.bdd.false
                    if grew:
                        idle, closed = 0, False
                        self.settling = False
                    else:
                        idle += 1
                    if self.config.fine_steps:
                        yield self._step_work(grew)
                if idle >= n:
                    return
            self._sweeps_done += 1
            if not self.config.fine_steps:
                yield None
            if closing and self.stats["closure_passes"] == 0 and self._closure_walk():
                idle = 0
                if self.config.fine_steps:
                    yield self._step_work(True)
                self.stats["closure_passes"] += 1
                closed = self.settling = True
            elif closing and self.stats["closure_passes"] == 0:
                for i in self._closure:
                    grew = self._apply(i, self.R) != self.bdd.false
                    if grew:
                        idle = 0
                    if self.config.fine_steps:
                        yield self._step_work(grew)
                self.stats["closure_passes"] += 1
                closed = self.settling = True

    def _closure_walk(self) -> bool:
        """The closure pass as one walk of R's DAG (``bdd_closure.close_set``)
        instead of one delete image per variable (pyramid h = 13 backward:
        figures in benchmarks/results/bdd_pyramids.md). The states it adds
        form one ring tagged ``WALK``: each lies within closure-variable
        deletes of a state of R (``witness`` finds which). False (nothing
        done) when ``closure_walk`` is off."""
        if not self.config.closure_walk:
            return False
        t0 = time.perf_counter()
        before = self.R
        self.R = close_set(self.bdd, self.R, set(self._closure_names), upward=not self.forward)
        self.stats["closure_walk_s"] = time.perf_counter() - t0
        self.stats["closure_walks"] = self.stats.get("closure_walks", 0) + 1
        if self.R == before:
            return True
        self._ring(self.R & ~before, WALK)
        return True

    def _ring(self, new, tag: int) -> None:
        """Record states that grew R as a ring tagged ``tag`` (kept when the
        run keeps rings); raise _Found when they meet the goal."""
        if self.record_rings or self.keep_images:
            self.rings.append((new, tag))
        self.stats["rings"] += 1
        hit = new & self.goal
        if hit != self.bdd.false:
            raise _Found(len(self.rings) - 1, hit)

    @property
    def _closure_names(self) -> dict[str, int]:
        """BDD name of each closure variable -> its delete's action index."""
        names = getattr(self, "_closure_names_cache", None)
        if names is None:
            names = self._closure_names_cache = {
                self.sym.names[self.sym.system.actions[i].writes[0]]: i for i in self._closure}
        return names

    def _walk_back(self, state: dict[int, bool], ring: int):
        """A state of ``state``'s ``WALK`` ring traced back to an earlier ring:
        (the earliest ring j < ``ring`` holding a state t that differs from
        ``state`` only in closure variables, in the closed direction (t below
        it backward, above it forward), t as a BDD, the deletes between them)."""
        sym, bdd = self.sym, self.bdd
        closure = self._closure_names
        fixed = {}
        for v, b in state.items():
            name = sym.names[v]
            if name not in closure:
                fixed[name] = b
            elif b == self.forward:  # forward: t keeps s's pebbles; backward: t adds none
                fixed[name] = b
        around = bdd.cube(fixed)
        for j in range(ring):
            u = around & self.rings[j][0]
            if u != bdd.false:
                other = sym.state_of(u)
                deletes = [closure[sym.names[v]] for v in sym.system.state_vars if other[v] != state[v]]
                return j, u, deletes
        raise AssertionError("no state below the walk's in earlier rings")  # pragma: no cover

    def _step_work(self, grew: bool) -> int:
        """The work of an image, |R|^2, from |R| measured after every image
        that grew R: a DAG walk, far cheaper than the image, and an exploding
        side is seen at once (measured every 32 images, the forward side of
        pyramid h = 11 ran 9 images of its exploding second sweep on a stale
        size)."""
        if grew:
            self.size = max(1, self.R.dag_size)
            self._maybe_drop_rings()
        return self.size * self.size

    def _maybe_drop_rings(self) -> None:
        """Past its first sweep, a side whose R exceeds ``ring_limit`` stops
        keeping its images: on a not-deployable pyramid they are never read,
        and they hold most of the live nodes (figures:
        benchmarks/results/design_measurements.md)."""
        limit = self.config.ring_limit
        if self.keep_images and limit is not None and self._sweeps_done >= 1 and self.size > limit:
            self.keep_images = False
            self.rings_dropped = True
            del self.rings[1:]

    def _saturate(self, k: int, groups) -> None:
        """Close R under groups 0..k: after each batch of group k, re-saturate
        the lower groups (images on the whole reached set)."""
        while True:
            if k > 0:
                self._saturate(k - 1, groups)
            self.stats["iterations"] += 1
            changed = False
            for i in groups[k]:
                if self._apply(i, self.R) != self.bdd.false:
                    changed = True
            if not changed:
                return

    # ---- witness ------------------------------------------------------------
    def witness(self, ring: int, hit) -> list[int]:
        """Action indices from the start state set to a goal state (forward order
        of the real system in both directions)."""
        sym, bdd = self.sym, self.bdd
        state = sym.state_of(hit)
        cube = sym.cube_of(state)
        actions: list[int] = []
        back = sym.pre if self.forward else sym.post
        while ring > 0:
            _, a = self.rings[ring]
            if a == WALK:
                ring, u, deletes = self._walk_back(state, ring)
                actions.extend(deletes)
                state = sym.state_of(u)
                cube = sym.cube_of(state)
                continue
            prev = back(a, cube)
            for j in range(ring):
                u = prev & self.rings[j][0]
                if u != bdd.false:
                    break
            else:  # pragma: no cover - the ring invariant makes this impossible
                raise AssertionError("no predecessor in earlier rings")
            actions.append(a)
            state = sym.state_of(u)
            cube = sym.cube_of(state)
            ring = j
        return actions[::-1] if self.forward else actions


class BddEngine(PreprocessingEngine):
    """Symbolic reachability with CUDD (``dd.cudd``; ``dd.autoref`` if missing).
    Keeps no per-call state: everything a call needs travels in its ``RunContext``."""

    name = "bdd"

    def __init__(self, strategy: str = "chaining", direction: str = "bidirectional",
                 dynamic_reorder: bool = False, type_order: str = "reverse-level",
                 fast_paths: bool = True, var_order: str = "auto") -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        if var_order not in VAR_ORDERS:
            raise ValueError(f"unknown variable order {var_order!r}")
        self.var_order = var_order
        self.strategy, self.direction = strategy, direction
        self.dynamic_reorder, self.type_order = dynamic_reorder, type_order
        self.fast_paths = fast_paths

    def decide(self, instance: Instance, query: Query, pre, run: RunContext) -> Result:
        try:
            return self._symbolic(instance, query, pre, run)
        except (RuntimeError, ValueError) as err:
            if not is_out_of_memory(err):
                raise
            raise MemoryError("CUDD reached its memory cap") from None

    def _symbolic(self, instance, query, pre, run: RunContext) -> Result:
        """``--counters auto``: a pool large enough gets ``AUTO_SWEEPS`` forward sweeps on
        the counter system (witnesses are found early there); undecided, the concrete
        encoding decides, and ``stats["counters"]`` says so."""
        mode = run.counters
        system = build_system(instance, query, pre, mode, self.type_order)
        if isinstance(system, CounterSystem) and mode == "auto":
            res = self._decide(instance, query, pre, system, run, AUTO_SWEEPS)
            if res is not None:
                return res
            system = compile_system(instance, query, pre, type_order=self.type_order)
            system.stats["counters"] = (f"tried: undecided after {AUTO_SWEEPS} forward sweeps on the "
                                        "counter system; the concrete encoding decided")
        res = self._decide(instance, query, pre, system, run, None)
        assert res is not None
        return res

    def decide_system(self, system, run: RunContext, fragment: str, finish) -> Result:
        """Search a system compiled for another question than a pod target (the gang
        system, ``solvers/gang_symbolic.py``): ``finish(sym, witness actions or None,
        invariant BDD or None, stats)`` turns the outcome into the Result."""
        res = self._decide(None, None, _Fragment(fragment), system, run, None, finish)
        assert res is not None
        return res

    def _decide(self, instance, query, pre, system, run: RunContext, budget: Optional[int],
                finish=None) -> Optional[Result]:
        """Search ``system``; None when ``budget`` sweeps did not decide."""
        t0 = time.perf_counter()
        stats: dict[str, Any] = dict(system.stats)
        # counters: backward images from the target range over counter values that
        # no group can hold (sums != the group's size); forward only (measured faster)
        direction = "forward" if isinstance(system, CounterSystem) else self.direction
        stats.update(backend=BACKEND, strategy=self.strategy, direction=direction,
                     compile_s=time.perf_counter() - t0)
        if BACKEND != "cudd":
            stats["note"] = "dd.cudd unavailable: pure-Python dd.autoref fallback"
        fragment = pre.fragment
        t0 = time.perf_counter()
        try:
            t1 = time.perf_counter()
            use_force = self.var_order == "force" or (self.var_order == "auto" and witness_cyclic(system, run))
            stats["var_order"] = "force" if use_force else "compiled"
            order = force_order(system, run=run) if use_force else None
            stats["order_s"] = time.perf_counter() - t1
        except TimeoutError:
            return Result(Verdict.UNKNOWN, self.name, fragment=fragment, stats=stats,
                          reason="timeout while choosing the BDD variable order")
        try:
            sym = SymbolicSystem(system, run=run, order=order)
        except TimeoutError:
            return Result(Verdict.UNKNOWN, self.name, fragment=fragment, stats=stats,
                          reason="timeout while building the guard BDDs")
        stats["lower_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            reach, found = self._search(sym, run, stats, direction, budget)
        except _OutOfSweeps:
            return None
        except SearchTimeout:
            stats["fixpoint_s"] = time.perf_counter() - t0
            _finish_stats(stats, sym, None)
            return Result(Verdict.UNKNOWN, self.name, fragment=fragment, stats=stats,
                          reason="timeout during BDD fixpoint")
        stats["fixpoint_s"] = time.perf_counter() - t0
        stats.update({f"{k}": v for k, v in reach.stats.items()})
        _finish_stats(stats, sym, reach)
        if finish is not None:
            if found is not None:
                return finish(sym, reach.witness(found.ring, found.hit), None, stats)
            forward = stats["decided_direction"] == "forward"
            return finish(sym, None, reach.R if forward else ~reach.R & sym.consistent, stats)
        if found is not None:
            actions = reach.witness(found.ring, found.hit)
            if isinstance(system, CounterSystem):
                trace = system.concretize(instance, query, actions)
            else:
                steps = [(system.actions[i].op, system.actions[i].type_index, system.actions[i].node_index)
                         for i in actions]
                try:
                    trace = realize_trace(instance, pre.abstract_initial, steps, query, run)
                except LimitReached as stop:  # the limit fell while the witness was realised
                    return Result(Verdict.UNKNOWN, self.name, fragment=fragment, stats=stats,
                                  reason=stop.reason)
            if trace is None:
                raise AssertionError("BDD witness does not replay: an encoding bug")
            return Result(Verdict.DEPLOYABLE, self.name, fragment=fragment, trace=trace,
                          reason=f"witness found by BDD {self.strategy} ({stats['decided_direction']})",
                          stats=stats)
        forward = stats["decided_direction"] == "forward"
        if isinstance(system, CounterSystem):  # searched forward: R is the reachable set
            return counter_verdict(instance, query, system, sym, reach.R, stats, self.name, fragment)
        inv = reach.R if forward else ~reach.R & sym.consistent
        from symreach.certify.bdd_invariant import dump_certificate

        cert = dump_certificate(instance, query, system, sym, inv)
        return Result(Verdict.NOT_DEPLOYABLE, self.name, fragment=fragment,
                      reason=("the reachable set is an inductive invariant disjoint from the target"
                              if forward else
                              "the states that cannot reach the target form an inductive invariant "
                              "containing the initial state"),
                      stats=stats, certificate=cert)

    def _search(self, sym, run: RunContext, stats, direction: str, budget: Optional[int] = None):
        """Run the fixpoint(s). Returns (the deciding Reachability, _Found or None).

        ``bidirectional`` alternates forward and backward chaining image by
        image, giving the next image to the side whose work so far (the sum
        of its squared reached-set sizes over its images, each measured
        after its image: deterministic, and it grows with the set faster
        than linearly, as the images' cost does) is smaller: forward
        chaining finds witnesses in few sweeps, backward fixpoints are far
        smaller for unreachable targets (pyramid h = 8: 581 vs > 100k nodes).
        The runs keep their growing images as rings (``keep_images``), so a
        hit yields its witness without running the deciding side again (that
        rerun repeated the deciding side's work up to the hit: half the time
        of a deployable pyramid decided backward).
        """
        directions = ["forward", "backward"] if direction == "bidirectional" else [direction]
        config = ReachConfig(strategy=self.strategy if len(directions) == 1 else "chaining",
                             dynamic_reorder=self.dynamic_reorder, record_rings=False, keep_images=True,
                             fine_steps=len(directions) > 1, ring_limit=RING_LIMIT)
        runs = {d: Reachability(sym, replace(config, direction=d), run) for d in directions}
        gens = {d: runs[d].sweeps() for d in directions}
        try:
            side, found = self._alternate(stats, directions, runs, gens, budget)
        except SearchTimeout:
            record_progress(stats, runs)
            raise
        finally:
            for g in gens.values():
                g.close()
        if found is not None and side.rings_dropped:
            side, found = self._rerun_with_rings(sym, run, stats, side)
        return side, found

    def _rerun_with_rings(self, sym, run: RunContext, stats, dropped: "Reachability"):
        """The deciding side dropped its rings: run it again alone, keeping
        every growing image, up to the same hit (the same images in the
        same order: the run is deterministic)."""
        again = Reachability(sym, replace(dropped.config, strategy="chaining", ring_limit=None, fine_steps=False), run)
        try:
            again.run()
        except _Found as exc:
            stats["witness_rerun_images"] = again.stats["image_calls"]
            return again, _Found(exc.ring, exc.hit)
        raise AssertionError("the rerun with rings did not reach the hit")  # pragma: no cover

    @staticmethod
    def _alternate(stats, directions, runs, gens, budget: Optional[int] = None):
        """Step the side ``pick_side`` names until one decides (or ``budget`` steps pass).
        A *settling* side (closed by its pass, nothing grown since) goes first: it
        ends within one cycle of images on its current R unless one grows, while the
        other side's remaining work is unbounded (pyramid h = 14: the forward side
        took a third of the CPU beside the backward side's closing sweep;
        benchmarks/results/bdd_pyramids.md)."""
        work = {d: 0 for d in directions}
        side_s = {d: 0.0 for d in directions}
        stats["side_time_s"] = side_s
        stats["work"] = work
        steps = 0
        while True:
            if budget is not None and steps >= budget:
                raise _OutOfSweeps()
            steps += 1
            settling = [x for x in directions if runs[x].settling]
            d = settling[0] if settling else pick_side(directions, work)
            t0 = time.perf_counter()
            try:
                work[d] += next(gens[d]) or 0
            except StopIteration:
                found = None
            except _Found as exc:
                found = _Found(exc.ring, exc.hit)  # a fresh object: no traceback/frame cycle
            else:
                side_s[d] += time.perf_counter() - t0
                continue
            side_s[d] += time.perf_counter() - t0
            stats["decided_direction"] = d
            stats["side_images"] = {x: runs[x].stats["image_calls"] for x in directions}
            stats["side_nodes"] = {x: runs[x].size for x in directions}
            return runs[d], found


@dataclass(frozen=True)
class _Fragment:
    """What ``_decide`` reads of a ``Preprocessed`` when ``decide_system`` has none."""

    fragment: str


def record_progress(stats: dict, runs: dict[str, "Reachability"]) -> None:
    """What a run stopped by its deadline still proved, per side: ``side_sweeps``
    (complete chaining sweeps; after k of them R holds every state within k
    steps of its start, and every image was checked against the goal, so no
    witness has k steps or fewer) and ``side_nodes`` (|R| in BDD nodes)."""
    stats["side_sweeps"] = {d: r.sweeps_done for d, r in runs.items()}
    stats["side_images"] = {d: r.stats["image_calls"] for d, r in runs.items()}
    stats["side_nodes"] = {d: r.R.dag_size for d, r in runs.items()}
    try:
        nvars = len(next(iter(runs.values())).sym.system.state_vars)
        stats["side_states"] = {d: int(r.bdd.count(r.R, nvars=nvars)) for d, r in runs.items()}
    except (RuntimeError, ValueError, TypeError, AssertionError, StopIteration):
        pass  # a backend without model counting: the node counts say enough


def pick_side(directions: list[str], work: dict[str, int]) -> str:
    """The side to step next: the one with the least work so far (ties: the
    first). Work is counted in BDD nodes (``_chaining_full``: |R|^2 per
    image, |R| measured after every image), never in time, so a run is
    deterministic; an even split costs at most twice the deciding side.
    Measured and rejected: letting the side with the smaller reached set do
    8 times the other's work (no faster on pyramids: the forward set of a
    pyramid is small in its cheap first sweep, so the preference flips to
    the wrong side)."""
    return min(directions, key=lambda x: (work[x], directions.index(x)))


def _finish_stats(stats: dict, sym: SymbolicSystem, reach: Optional[Reachability]) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = sym.bdd.statistics()
    stats["peak_nodes"] = st["peak_nodes"]
    stats["cache_lookups"] = st.get("cache_lookups")
    stats["peak_live_nodes"] = st.get("peak_live_nodes")
    if reach is not None:
        stats["reached_nodes"] = reach.R.dag_size
    stats["bdd_vars"] = len(sym.system.state_vars)
    stats["build_bdd_s"] = sym.build_time_s
    stats["reordering_time_s"] = st.get("reordering_time")
    stats["dynamic_reorderings"] = st.get("n_reorderings")
