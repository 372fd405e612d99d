"""Minimal witnesses: every trace is shrunk before anyone reads it.

Engines return *a* witness: realised abstract traces delete every pod that
might block (``encodings.realize``), BMC deletes in batches, the fast paths
clear whole nodes. A reviewer needs the few steps that matter, so every
deployable result goes through ``finish`` before it is printed, narrated or
exported:

1. **1-minimal.** Drop deletions in halves, quarters, ... while the rest
   still replays (delta debugging), then every step whose removal still
   replays and still covers the target (a deployment goes together with the later deletion of
   the same pod when that deletion would otherwise be illegal), until no
   single step can be dropped. Deletions of DaemonSet pods and static (not
   creatable) pods are tried first, so those are the ones dropped when a
   choice exists.
2. **Shorter.** A 1-minimal trace can still be longer than needed (five
   small pods deleted where three large ones would do). A bounded search
   replaces two deletions by one deletion of another pod present at that
   point, then re-minimises; it stops when no replacement helps, when its
   replay budget is spent or at the deadline.
3. **DaemonSet and static pods last.** A remaining deletion of such a pod is
   swapped for the deletion of an ordinary pod when that still replays.

Each candidate is judged by ``semantics.replay``, and the final trace is
replayed once more, so minimisation can only make a witness shorter, never
wrong. ``--shortest`` instead asks the explicit engine, whose breadth-first
search returns a trace of the fewest steps (over saturated configurations,
SPEC 2.2), which is then left as is.
"""

from __future__ import annotations

import time
from dataclasses import field
from typing import Callable, Optional, Sequence

from symreach import semantics
from symreach.model import Instance, Query, daemonset_member
from symreach.records import record
from symreach.result import DELETE, Result, Step, Verdict
from symreach.solvers.base import RunLike, as_context

Trace = tuple[Step, ...]
DEFAULT_BUDGET_S = 20.0       # minimisation stops after this long (or at --timeout)
DEFAULT_MAX_REPLAYS = 20_000  # and after this many candidate replays
MAX_REPLACEMENTS = 64         # pods tried in place of two deletions (same node first)
MAX_PAIRS = 300               # pairs of deletions tried per replacement round

# cost of deleting a pod of a kind: ordinary pods first, DaemonSet pods, then static ones
ORDINARY, DAEMON, STATIC = 0, 1, 2


def pod_kind(inst: Instance, t: int) -> int:
    """How costly deleting a pod of type t is for the operator.

    Static (mirror) pods and bare pods are not creatable: deleting one loses
    it. A DaemonSet's pod (``model.daemonset_member``) would be recreated by
    its controller.
    """
    if not inst.pod_types[t].creatable:
        return STATIC
    return ORDINARY if daemonset_member(inst, t) is None else DAEMON


@record(frozen=False)
class Budget:
    """Replays and time left; ``clock`` is injectable so tests never read the wall clock."""

    deadline: Optional[float]
    replays: int = DEFAULT_MAX_REPLAYS
    clock: Callable[[], float] = time.perf_counter
    used: int = field(default=0)

    def spend(self) -> bool:
        """Take one replay; False once the budget or the deadline is exhausted."""
        if self.used >= self.replays:
            return False
        if self.deadline is not None and self.clock() > self.deadline:
            return False
        self.used += 1
        return True


def covers(inst: Instance, trace: Sequence[Step], query: Query) -> bool:
    try:
        semantics.replay(inst, trace, query)
    except semantics.ReplayError:
        return False
    return True


def minimise(inst: Instance, trace: Sequence[Step], query: Query, budget: Budget) -> Trace:
    """A 1-minimal, shortened witness (see the module docstring); ``trace`` must replay."""
    best = drop_steps(inst, tuple(trace), query, budget)
    while True:
        shorter = replace_two_by_one(inst, best, query, budget)
        if shorter is None:
            break
        best = drop_steps(inst, shorter, query, budget)
    return prefer_ordinary(inst, best, query, budget)


def _removal_order(inst: Instance, trace: Trace) -> list[int]:
    """Indices to try dropping: costly deletions first, then other deletions, then deployments."""
    def key(i: int) -> tuple[int, int]:
        s = trace[i]
        kind = pod_kind(inst, inst.type_index(s.pod))
        return (0 if s.op == DELETE else 1, -kind if s.op == DELETE else 0) + (i,)
    return sorted(range(len(trace)), key=key)


def _partner(trace: Trace, alive: list[bool], i: int) -> Optional[int]:
    """The next live step on the same pair if it is the opposite operation (else None)."""
    s = trace[i]
    for j in range(i + 1, len(trace)):
        if alive[j] and (trace[j].pod, trace[j].node) == (s.pod, s.node):
            return j if trace[j].op != s.op else None
    return None


def drop_steps(inst: Instance, trace: Trace, query: Query, budget: Budget) -> Trace:
    """Remove steps until no single step (or deploy/delete pair of one pod) can go.

    One pass tries every step once, in ``_removal_order``; passes repeat until
    one removes nothing, so the result is 1-minimal unless the budget ran out.
    """
    alive = [True] * len(trace)

    def current(skip: frozenset[int] = frozenset()) -> Trace:
        return tuple(s for k, s in enumerate(trace) if alive[k] and k not in skip)

    order = _removal_order(inst, trace)
    _drop_deletion_chunks(inst, trace, alive, order, query, budget, current)
    changed = True
    while changed:
        changed = False
        for i in order:
            if not alive[i]:
                continue
            options = [frozenset({i})]
            j = _partner(trace, alive, i)
            if j is not None:
                options.append(frozenset({i, j}))
            for skip in options:
                if not budget.spend():
                    return current()
                if covers(inst, current(skip), query):
                    for k in skip:
                        alive[k] = False
                    changed = True
                    break
    return current()


def _drop_deletion_chunks(inst: Instance, trace: Trace, alive: list[bool], order: list[int], query: Query,
                          budget: Budget, current) -> None:
    """Delta debugging over the deletions: drop halves, quarters, ... while the rest replays.

    Realised traces often clear a whole node where a few deletions suffice;
    removing them in chunks takes O(k log n) replays instead of one pass of n.
    """
    deletions = [i for i in order if trace[i].op == DELETE]
    size = len(deletions) // 2
    while size >= 2:
        live = [i for i in deletions if alive[i]]
        for start in range(0, len(live), size):
            chunk = frozenset(live[start:start + size])
            if not budget.spend():
                return
            if covers(inst, current(chunk), query):
                for k in chunk:
                    alive[k] = False
        size //= 2


def _present_before(inst: Instance, trace: Trace, i: int) -> list[tuple[int, int, Step]]:
    """(type, node, its deletion) for each pod right before step i, one per distinct holding
    (``semantics.deletions``: pods of a type on a node may hold different DRA devices or PVs)."""
    sigma = semantics.replay(inst, trace[:i])
    return [(t, n, semantics.step_of(inst, DELETE, t, n, holding=holding))
            for t, n in (inst.unpair(p) for p, c in enumerate(sigma[:inst.num_pairs]) if c)
            for holding, _ in semantics.deletions(inst, sigma, t, n)]


def replace_two_by_one(inst: Instance, trace: Trace, query: Query, budget: Budget) -> Optional[Trace]:
    """A shorter trace with two deletions replaced by one other, or None."""
    deletions = [i for i, s in enumerate(trace) if s.op == DELETE]
    pairs = [(deletions[a], deletions[b]) for a in range(len(deletions)) for b in range(a + 1, len(deletions))]
    for i, j in pairs[:MAX_PAIRS]:
        rest = trace[:i] + trace[i + 1:j] + trace[j + 1:]
        removed = {(trace[i].pod, trace[i].node), (trace[j].pod, trace[j].node)}
        nodes = {trace[i].node, trace[j].node}
        pool = _present_before(inst, rest, i)
        pool.sort(key=lambda p: (inst.nodes[p[1]].name not in nodes, pod_kind(inst, p[0]), p[:2]))
        for t, n, step in pool[:MAX_REPLACEMENTS]:
            if (step.pod, step.node) in removed:
                continue
            if not budget.spend():
                return None
            candidate = rest[:i] + (step,) + rest[i:]
            if covers(inst, candidate, query):
                return candidate
    return None


def prefer_ordinary(inst: Instance, trace: Trace, query: Query, budget: Budget) -> Trace:
    """Swap each deletion of a DaemonSet or static pod for an ordinary pod's, when possible."""
    for i, s in enumerate(trace):
        if s.op != DELETE or pod_kind(inst, inst.type_index(s.pod)) == ORDINARY:
            continue
        deleted = {(x.pod, x.node) for x in trace if x.op == DELETE}
        for t, n, step in sorted(_present_before(inst, trace, i), key=lambda p: (inst.nodes[p[1]].name != s.node, p[:2])):
            if pod_kind(inst, t) != ORDINARY or (step.pod, step.node) in deleted:
                continue
            if not budget.spend():
                return trace
            candidate = trace[:i] + (step,) + trace[i + 1:]
            if covers(inst, candidate, query):
                trace = candidate
                break
    return trace


def finish(inst: Instance, query: Query, result: Result, run: RunLike = None,
           clock: Callable[[], float] = time.perf_counter) -> Result:
    """Minimise a deployable result's trace in place (unless it is already shortest)."""
    if result.verdict is not Verdict.DEPLOYABLE or not result.trace or result.stats.get("shortest"):
        return result
    start = clock()
    budget_s = DEFAULT_BUDGET_S
    context = as_context(run)
    left = context.remaining()
    if left is not None:
        budget_s = min(budget_s, left)
    budget = Budget(start + budget_s, clock=clock)
    before = len(result.trace)
    context.report("minimise", steps=before)  # a progress line while the trace is minimised
    trace = minimise(inst, result.trace, query, budget)
    semantics.replay(inst, trace, query)
    result.trace = trace
    result.stats["trace_minimised"] = f"{before} -> {len(trace)}"
    result.stats["minimise_replays"] = budget.used
    result.stats["minimise_s"] = clock() - start
    if budget.used >= budget.replays or (budget.deadline is not None and clock() > budget.deadline):
        result.stats["minimise_stopped"] = "budget spent: the trace is shorter but maybe not 1-minimal"
    return result


def decide(solver, inst: Instance, query: Query, run: RunLike, shortest: bool = False) -> Result:
    """Run ``solver`` and return its result with a minimised (or shortest) witness.

    The one place where results leave the engines for the command line, so
    ``check``, ``explain``'s narration and every trace export show the same
    minimal trace.
    """
    run = as_context(run)  # one deadline for the engine and the minimisation
    result = solver.check(inst, query, run)
    if shortest and result.verdict is Verdict.DEPLOYABLE and getattr(solver, "name", "") == "explicit":
        result.stats["shortest"] = "yes: breadth-first search, fewest steps (saturated configurations)"
        return result
    return finish(inst, query, result, run)


def shortest_engine(engine: str) -> str:
    """The engine that can prove a witness shortest; ValueError for the others."""
    if engine in ("explicit", "auto"):
        return "explicit"
    raise ValueError(f"a shortest witness needs breadth-first search (engine explicit or auto); {engine!r} cannot "
                     "prove a witness shortest (BMC's depth bounds deployments, not steps)")
