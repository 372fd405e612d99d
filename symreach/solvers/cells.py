"""The matrix one pod type at a time: one answer per class of interchangeable nodes.

``solve_type(instance, t)`` answers every ``(t, n)``:

1. restrict the instance to ``t``'s affinity cone ``C`` (``restrict_types``;
   sound by ``preprocess`` step 1), so that configurations have ``|C|``
   columns of types instead of all of them;
2. split the nodes into classes interchangeable for ``C``
   (``symmetry.node_classes``: initial pods of types outside ``C`` do not
   separate nodes); with ``symmetry=False`` every node is its own class;
3. run static pruning and the may-be-present fixpoint once for the cone
   (its part on ``C`` equals the fixpoint a single query would compute);
4. decide the representative of each class: initially present; outside the
   fixpoint (``pruned``); Theorem 5 for an affinity-free ``t``; the
   fixpoint's justified deployment order; on a large cone, the engine on a
   few nodes (``reduced_witness``: a witness proposed there, realised and
   replayed on the cone); else the BDD engine (with its own fast paths and
   certificate checks) under a per-cell time limit and memory bounds
   (``CELL_BDD_BYTES`` for CUDD, ``CELL_PYTHON_BYTES`` for the compiled system,
   estimated before it is built: a cell that does not fit is ``unknown``, the
   matrix goes on);
5. the answer holds for every node of the class (``symmetry`` theorem).

Witnesses are kept for representatives as traces of the restricted instance
(each replayed by ``realize_trace`` or the engine there).
``TypeAnswer.witness(instance, n)`` renames one onto node ``n``, lifts it to
the full instance with ``realize_trace`` and replays it with
``semantics.replay`` before returning it.

Every function here is a plain picklable call so that a distributed executor
can ship ``solve_type`` to a worker.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from symreach import semantics
from symreach.encodings.preprocess import affinity_cone, fits_alone, greedy_witness, justification_closure, \
    may_fixpoint
from symreach.encodings.realize import realize_trace
from symreach.encodings.restrict import restrict_types
from symreach.encodings.restrict_nodes import restrict_nodes
from symreach.encodings.symmetry import NodeClass, node_classes, rename_trace
from symreach.model import Instance, Pair, Query
from symreach.result import DELETE, DEPLOY, Step, Verdict
from symreach.run import RunContext
from symreach.solvers.base import Limits
from symreach.encodings import system_size
from symreach.solvers.cudd_memory import CUDD_SHARE, address_space_left, ceiling

DEPLOYABLE, NOT_DEPLOYABLE, UNKNOWN = "deployable", "not-deployable", "unknown"

# A cell's BDD run may use at most this much CUDD memory (besides the
# address-space cap of ``cudd_memory``): past it the cell is ``unknown``.
CELL_BDD_BYTES = 1024 * 1024 * 1024
# The cell's compiled system (Python objects, beyond CUDD's reach) may be estimated at most
# this much (``encodings/system_size``), and at most the Python share of the address space
# left under ``--memory``: past it the cell is ``unknown`` before anything is built.
CELL_PYTHON_BYTES = 1024 * 1024 * 1024
# ``reduced_witness`` is tried on cones with more nodes than this, keeping
# this many nodes of every class of interchangeable nodes.
REDUCE_ABOVE = 200
REPRESENTATIVES = 2
# What an engine's unknown answer names in the cell's ``how``.
UNKNOWN_TAGS = ("timeout", "memory limit", "state limit")


@dataclass
class ClassAnswer:
    """The verdict for every node of ``nodes``, decided on ``nodes[0]``."""

    nodes: NodeClass
    verdict: str
    how: str
    trace: tuple[Step, ...] = ()   # restricted-instance witness for nodes[0]
    # True when ``trace`` runs from the empty configuration (Theorem 5): every
    # initial pod is then an extra that ``realize_trace`` may delete.
    from_empty: bool = False


@dataclass
class TypeAnswer:
    t: int
    cone: tuple[int, ...]
    classes: list[ClassAnswer]
    stats: dict[str, Any] = field(default_factory=dict)

    def witness(self, inst: Instance, n: int) -> Optional[tuple[Step, ...]]:
        """A replayed full-instance witness that ``(t, n)`` is coverable, or None."""
        for cls in self.classes:
            if n in cls.nodes:
                if cls.verdict != DEPLOYABLE:
                    return None
                steps = rename_trace(inst, cls.trace, cls.nodes[0], n)
                return lift_trace(inst, () if cls.from_empty else self.cone, self.t, n, steps)
        raise KeyError(n)


def lift_trace(inst: Instance, cone: tuple[int, ...], t: int, n: int,
               steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """A restricted-instance trace made a real one (extra pods deleted lazily), replayed."""
    query = Query((frozenset({(t, n)}),))
    cone_set = frozenset(cone)
    abstract = {p: c for p, c in inst.initial.items() if p[0] in cone_set}
    raw = [(s.op, inst.type_index(s.pod), inst.node_index(s.node)) for s in steps]
    trace = realize_trace(inst, abstract, raw, query)
    if trace is None:
        raise semantics.ReplayError(f"witness for ({inst.pod_types[t].name}, "
                                    f"{inst.nodes[n].name}) does not lift to the instance")
    return trace


def solve_type(inst: Instance, t: int, symmetry: bool = True, cell_timeout: Optional[float] = None,
               engine: str = "bdd", deadline_at: Optional[float] = None) -> TypeAnswer:
    """Answer ``(t, n)`` for every node ``n``. ``deadline_at`` ends the whole
    matrix: cells not started by then are ``unknown``. It is the matrix's
    ``RunContext.wall_deadline()`` (``time.time()`` seconds: the only form that
    means the same on every machine of a cluster), polled here as a context again."""
    run = RunContext.until_wall(deadline_at)
    start = time.perf_counter()
    if run.past():  # not even the cone: the matrix is over
        return TypeAnswer(t, (), [ClassAnswer(tuple(range(len(inst.nodes))), UNKNOWN, "deadline")],
                          {"cone_types": 0, "classes": 0, "by": {"deadline": 1}, "pid": os.getpid(), "time_s": 0.0})
    if inst.bindings or inst.filter_errors:   # the cone and fixpoint assume guards pods only make stricter
        return _solve_bound(inst, t, cell_timeout, run, start)
    cone, sub, tt, classes, added, why = cone_fixpoint(inst, t, symmetry)
    answers = []
    counts: dict[str, int] = {}
    for cls in classes:
        if run.past():
            ans = ClassAnswer(cls, UNKNOWN, "deadline")
        else:
            limit = cell_timeout
            if run.deadline is not None:
                left = max(0.1, run.remaining() or 0.0)
                limit = left if limit is None else min(limit, left)
            ans = _decide(sub, tt, cls, added, why, limit, engine, classes)
        answers.append(ans)
        counts[ans.how] = counts.get(ans.how, 0) + 1
    stats = {"cone_types": len(cone), "classes": len(classes), "by": counts, "pid": os.getpid(),
             "time_s": time.perf_counter() - start}
    return TypeAnswer(t, cone, answers, stats)


class ConeFixpoint(NamedTuple):
    """What ``solve_type`` computes once per type: ``t``'s cone ``cone`` (old indices),
    the instance restricted to it ``sub`` with ``t`` at index ``tt``, its node
    ``classes``, and the may-be-present fixpoint there (``added``: round of each pair,
    ``why``: the pairs that justify it)."""

    cone: tuple[int, ...]
    sub: Instance
    tt: int
    classes: list[NodeClass]
    added: dict[Pair, int]
    why: dict[Pair, tuple[Pair, ...]]


def cone_fixpoint(inst: Instance, t: int, symmetry: bool = True) -> ConeFixpoint:
    """``t``'s cone, its node classes and the fixpoint there (see ``ConeFixpoint``)."""
    cone = tuple(sorted(affinity_cone(inst, Query((frozenset({(t, 0)}),)))))
    sub, old = restrict_types(inst, cone)
    if symmetry:
        classes = node_classes(sub)
    else:
        classes = [(n,) for n in range(len(inst.nodes))]
    # fits_alone reads only what the signature fixes, so one call per class suffices.
    candidates = {(u, n) for u in range(len(old)) if sub.pod_types[u].creatable
                  for cls in classes if fits_alone(sub, u, cls[0]) for n in cls}
    added, why = may_fixpoint(sub, frozenset(range(len(old))), candidates, frozenset(sub.initial))
    return ConeFixpoint(cone, sub, old.index(t), classes, added, why)


def _solve_bound(inst: Instance, t: int, cell_timeout: Optional[float], run: RunContext,
                 start: float) -> TypeAnswer:
    """Claim bindings (``Instance.bindings``) are state only the explicit engine keeps, and the
    cone, node classes and fixpoint read the unbound rows: each cell asks explicit on the
    whole instance."""
    from symreach.solvers.registry import make_engine

    answers = []
    for n in range(len(inst.nodes)):
        if run.past():
            answers.append(ClassAnswer((n,), UNKNOWN, "deadline"))
            continue
        if inst.initial.get((t, n), 0) > 0:
            answers.append(ClassAnswer((n,), DEPLOYABLE, "initial", ()))
            continue
        if not inst.pod_types[t].creatable or not semantics.ever_static_ok(inst, t, n):
            answers.append(ClassAnswer((n,), NOT_DEPLOYABLE, "static"))
            continue
        alone = _from_empty(inst, t, n)
        if alone is not None:
            answers.append(ClassAnswer((n,), DEPLOYABLE, "theorem-5", alone))
            continue
        result = make_engine("explicit").check(inst, Query((frozenset({(t, n)}),)), Limits(timeout_s=cell_timeout))
        trace = result.trace if result.verdict is Verdict.DEPLOYABLE else None
        answers.append(ClassAnswer((n,), result.verdict.value, "engine/explicit", trace))
    stats = {"cone_types": len(inst.pod_types), "classes": len(inst.nodes), "by": {"engine/explicit": len(answers)},
             "pid": os.getpid(), "time_s": time.perf_counter() - start}
    return TypeAnswer(t, tuple(range(len(inst.pod_types))), answers, stats)


def _from_empty(inst: Instance, t: int, n: int) -> Optional[tuple[Step, ...]]:
    """Theorem 5 under paper moves: an affinity-free t that fits n alone is deployed there after
    every pod is deleted (deletions bind nothing, and sigma0 has nothing bound); replayed."""
    if inst.pod_types[t].affinity or inst.moves.restricted:
        return None
    steps = [semantics.step_of(inst, DELETE, u, m) for (u, m), c in sorted(inst.initial.items()) for _ in range(c)]
    steps.append(semantics.step_of(inst, DEPLOY, t, n))
    try:
        semantics.replay(inst, steps, Query((frozenset({(t, n)}),)))
    except semantics.ReplayError:
        return None
    return tuple(steps)


def solve_types(inst: Instance, types: tuple[int, ...], **options: Any) -> list[TypeAnswer]:
    """``solve_type`` for several types: one executor task, so that per-task
    overhead (a few tenths of a second on a loaded Dask cluster) is paid once.
    Verdicts only: the witnesses stay here (``TypeAnswer.witness`` solves the
    type again), so that a result is small on the wire and in the matrix."""
    out = []
    for t in types:
        answer = solve_type(inst, t, **options)
        answer.classes = [ClassAnswer(c.nodes, c.verdict, c.how) for c in answer.classes]
        out.append(answer)
    return out


def short_lived_witness(sub: Instance, target: Pair, added: dict[Pair, int],
                        why: dict[Pair, tuple[Pair, ...]]) -> Optional[tuple[Step, ...]]:
    """The fixpoint's justified deployment order, deleting each deployed pod as
    soon as every pair it justifies is deployed (a witness that is no longer
    needed can only block: ports, capacity, anti-affinity, spread). Replayed
    by ``realize_trace``; None when it does not replay."""
    need = justification_closure(why, (target,))
    init = {p: 1 for p in need if added[p] == 0}
    order = sorted(need - set(init), key=lambda p: (added[p], p))
    remaining: dict[Pair, int] = {}
    for p in order:
        for q in why.get(p, ()):
            remaining[q] = remaining.get(q, 0) + 1
    steps: list[tuple[str, int, int]] = []
    for p in order:
        steps.append((DEPLOY, *p))
        for q in why.get(p, ()):
            remaining[q] -= 1
            if remaining[q] == 0 and q != target and q not in init:
                steps.append((DELETE, *q))
    return realize_trace(sub, init, steps, Query((frozenset({target}),)))


def _decide(sub: Instance, t: int, cls: NodeClass, added, why, cell_timeout: Optional[float],
            engine: str, classes: Optional[list[NodeClass]] = None) -> ClassAnswer:
    r = cls[0]
    query = Query((frozenset({(t, r)}),))
    if sub.initial.get((t, r), 0) > 0:
        return ClassAnswer(cls, DEPLOYABLE, "initial")
    if (t, r) not in added:
        return ClassAnswer(cls, NOT_DEPLOYABLE, "pruned")
    if not sub.pod_types[t].affinity and semantics.volume_limit_ok(sub, t, r, (0,) * sub.num_pairs):
        # Theorem 5: in the fixpoint and not initial, so creatable and Hard(t, r, 0) (the
        # fixpoint does not read the attach count, so that is asked here);
        # the witness (delete what blocks, deploy) is built when asked for.
        return ClassAnswer(cls, DEPLOYABLE, "theorem-5", (semantics.step_of(sub, DEPLOY, t, r),),
                           from_empty=True)
    trace = greedy_witness(sub, query, added, why)
    if trace is not None:
        return ClassAnswer(cls, DEPLOYABLE, "fixpoint-order", trace)
    trace = short_lived_witness(sub, (t, r), added, why)
    if trace is not None:
        return ClassAnswer(cls, DEPLOYABLE, "fixpoint-order+delete", trace)
    from symreach.solvers.registry import make_engine

    if semantics.unencoded_volume_checks(sub) is not None:
        engine = "explicit"   # the only engine evaluating them (registry.DECLINED)
    if classes is not None and len(sub.nodes) > REDUCE_ABOVE and engine != "explicit":
        found = reduced_witness(sub, (t, r), classes, why, cell_timeout, engine)
        if found is not None:
            return ClassAnswer(cls, DEPLOYABLE, f"reduced/{engine}", found)
    try:
        with ceiling(CELL_BDD_BYTES), system_size.ceiling(cell_python_bytes()):
            result = make_engine(engine).check(sub, query, Limits(timeout_s=cell_timeout))
    except MemoryError:
        return ClassAnswer(cls, UNKNOWN, f"engine/{engine}: memory limit of the cell")
    how = f"engine/{result.engine}"
    if result.verdict is Verdict.DEPLOYABLE:
        return ClassAnswer(cls, DEPLOYABLE, how, result.trace)
    if result.verdict is Verdict.UNKNOWN:
        # the kind of limit only: a matrix holds at most 256 distinct ``how`` values
        tag = next((k for k in UNKNOWN_TAGS if k in (result.reason or "")), None)
        how = how if tag is None else f"{how}: {tag}"
    return ClassAnswer(cls, result.verdict.value, how)


def cell_python_bytes() -> int:
    """The bound of one cell's compiled system: ``CELL_PYTHON_BYTES``, or less when the
    address space left under ``RLIMIT_AS`` (``--memory``) leaves Python less than that."""
    left = address_space_left()
    return CELL_PYTHON_BYTES if left is None else min(CELL_PYTHON_BYTES, int(left * (1 - CUDD_SHARE)))


def reduced_witness(sub: Instance, target: Pair, classes: list[NodeClass],
                    why: dict[Pair, tuple[Pair, ...]], timeout: Optional[float],
                    engine: str) -> Optional[tuple[Step, ...]]:
    """A witness for ``target`` on the cone ``sub`` found by ``engine`` on a few of its
    nodes: the target's node, the nodes of the fixpoint's justification of the target,
    and ``REPRESENTATIVES`` nodes of every class. Pooled nodes are interchangeable, so a
    run rarely needs more of a pool than a few nodes. The cut instance only proposes:
    its trace (node names are the cone's) is realised on ``sub`` by ``realize_trace``
    (pods on the dropped nodes are extras, deleted where they block) and replayed
    there; None when the engine finds none, runs out of its limits, or the trace does
    not replay. Half the cell's time limit and memory bound."""
    from symreach.solvers.registry import make_engine

    keep = {m for _, m in justification_closure(why, (target,))}
    for cls in classes:
        keep.update(cls[:REPRESENTATIVES])
    if len(keep) >= len(sub.nodes):   # nothing to cut (every node its own class)
        return None
    small = restrict_nodes(sub, keep)
    if small is None:
        return None
    t, n = target
    query = Query((frozenset({(t, small.node_index(sub.nodes[n].name))}),))
    try:
        with ceiling(CELL_BDD_BYTES // 2), system_size.ceiling(cell_python_bytes() // 2):
            result = make_engine(engine).check(small, query, Limits(timeout_s=None if timeout is None else timeout / 2))
    except MemoryError:
        return None
    if result.verdict is not Verdict.DEPLOYABLE or result.trace is None:
        return None
    abstract = {(u, m): c for (u, m), c in sub.initial.items() if small.node_ids.get(sub.nodes[m].name) is not None}
    raw = [(s.op, sub.type_index(s.pod), sub.node_index(s.node)) for s in result.trace]
    return realize_trace(sub, abstract, raw, Query((frozenset({target}),)))
