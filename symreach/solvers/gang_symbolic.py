"""The gang question answered by the symbolic engines (issue 28, SPEC 5.1).

Each engine searches the one gang system of ``encodings/gang_system.py``:
``bdd`` by its fixpoint (``BddEngine.decide_system``), ``bmc`` by a plain
unrolling of single actions, every guard read (shortest witnesses in
actions; bounded: a group that never runs ends ``unknown``). A witness decodes into the background trace and
the gang placement; both are replayed here against the semantics and
``gangs.check_step`` (extra pods the abstraction left out are deleted
before the step if the step needs it), so an engine bug is an
AssertionError, never an answer. Not deployable from ``bdd``: the invariant
as a ``symreach-gang-bdd/1`` certificate (``certify/gang_bdd.py``).

``ic3`` runs its phases on the same system (``Ic3Engine.search_system``;
its macro step and lifting read the system's ``deletion_guard``); its
clause invariant, conjoined with the counters' consistency and bounds, is
turned into a BDD and certified in the same ``symreach-gang-bdd/1`` format.
``lazy`` declines with one line: its fragment is single-pod targets.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from symreach import gangs, semantics
from symreach.encodings.gang_system import GangSystem, compile_gang, decode
from symreach.encodings.realize import realize_trace
from symreach.errors import LimitReached
from symreach.model import Instance
from symreach.result import DELETE, DEPLOY, Result, Step, Verdict
from symreach.run import RunContext
from symreach.solvers.gang_explicit import GangAnswer, start_answer

SYMBOLIC = ("bdd", "bmc", "ic3")
DECLINED = {
    "lazy": "engine lazy does not answer group targets: its fragment is single-pod targets; "
            "the bdd, bmc, ic3 and explicit engines do",
}


def answer(inst: Instance, name: str, engine: str, timeout_s: Optional[float] = None,
           max_depth: Optional[int] = None) -> GangAnswer:
    """The gang answer of ``engine`` (one of ``SYMBOLIC``), with the scheduler's cycle beside it
    and ``placement_now`` (a gang step from sigma0, searched by ``gangs.gang_step``) for the
    report, as the explicit answer has them."""
    start = time.monotonic()
    run = RunContext.within(timeout_s)
    deadline = None if timeout_s is None else start + timeout_s
    gang, out = start_answer(inst, name, engine)
    refused = gangs.rejection(gang)
    sigma0 = inst.initial_config()
    try:
        if refused is not None:
            out.result = Result(Verdict.NOT_DEPLOYABLE, engine, reason=f"the scheduler rejects the group: {refused}")
        else:
            out.cycle = gangs.scheduler_cycle(inst, gang, sigma0, deadline)
            out.placement_now = gangs.gang_step(inst, gang, sigma0, deadline)
            gs = compile_gang(inst, gang, run)
            if engine == "bdd":
                out.result = _bdd(inst, gs, run, out)
            elif engine == "ic3":
                out.result = _ic3(inst, gs, run, out)
            else:
                out.result = _bmc(inst, gs, run, max_depth, out)
    except (gangs.GangLimit, LimitReached):
        out.result = Result(Verdict.UNKNOWN, engine, reason=run.timeout_reason())
    out.result.engine = engine
    out.result.time_s = time.monotonic() - start
    out.result.fragment = "gang"
    return out


# ---- witnesses ----------------------------------------------------------------------------------

def witness(inst: Instance, gs: GangSystem, moves: list[tuple[str, int, int]], run: RunContext,
            out: GangAnswer) -> tuple[Step, ...]:
    """The replayed trace to sigma for a witness's moves (op, t, n); ``out.placement`` gets the step."""
    steps, placement = decode(gs, moves)
    trace = realize_trace(gs.shadow.instance, gs.pre.abstract_initial, steps, None, run)
    if trace is None:
        raise AssertionError("gang witness: the background trace does not replay: an encoding bug")
    end = semantics.replay(inst, trace)
    try:
        gangs.check_step(inst, gs.gang, end, placement)
    except gangs.GangStepError:
        trace += _extras(inst, gs, steps, end)
        end = semantics.replay(inst, trace)
        try:
            gangs.check_step(inst, gs.gang, end, placement)
        except gangs.GangStepError as exc:
            raise AssertionError(f"gang witness: the gang step does not replay ({exc}): an encoding bug") from None
    out.placement = placement
    return trace


def _extras(inst: Instance, gs: GangSystem, steps, end) -> tuple[Step, ...]:
    """Deletions of every pod the abstract system does not model (saturated copies, types
    outside the cone): with them gone the real configuration is the abstract one."""
    abstract = dict(gs.pre.abstract_initial)
    for op, t, n in steps:
        abstract[(t, n)] = abstract.get((t, n), 0) + (1 if op == DEPLOY else -1)
    out = []
    for p, c in enumerate(end):
        t, n = inst.unpair(p)
        out += [semantics.step_of(inst, DELETE, t, n)] * max(0, c - abstract.get((t, n), 0))
    return tuple(out)


def _deployable(inst: Instance, gs: GangSystem, actions: list, run: RunContext, out: GangAnswer,
                engine: str, how: str) -> Result:
    """``actions``: action indices, or abstract moves (op, t, n) as IC3 gives them."""
    system = gs.system
    moves = [a if isinstance(a, tuple) else
             (system.actions[a].op, system.actions[a].type_index, system.actions[a].node_index) for a in actions]
    trace = witness(inst, gs, moves, run, out)
    reason = ("a gang step places the group now" if not trace else
              f"a gang step places the group after {len(trace)} other moves")
    return Result(Verdict.DEPLOYABLE, engine, trace=trace, reason=f"{reason} ({how})")


# ---- bdd --------------------------------------------------------------------------------------------

def _bdd(inst: Instance, gs: GangSystem, run: RunContext, out: GangAnswer) -> Result:
    from symreach.certify.bdd_invariant import dump_certificate
    from symreach.certify.gang_bdd import wrap
    from symreach.solvers.bdd import BddEngine

    def finish(sym, actions, inv, stats) -> Result:
        if actions is not None:
            res = _deployable(inst, gs, actions, run, out, "bdd", "BDD witness")
        else:
            body = dump_certificate(gs.shadow.instance, gs.query, gs.system, sym, inv)
            res = Result(Verdict.NOT_DEPLOYABLE, "bdd", certificate=wrap(inst, gs.gang.root.name, body),
                         reason="an inductive invariant of the gang system (background, then the gang "
                                "step) holds in sigma0 and in no state where the group's policy holds")
        res.stats.update(stats)
        return res

    try:
        return BddEngine().decide_system(gs.system, run, "gang", finish)
    except (RuntimeError, ValueError) as err:   # CUDD's memory cap, as BddEngine.decide says
        if "memory" not in str(err).lower():
            raise
        raise MemoryError("CUDD reached its memory cap") from None


# ---- the SAT engines -----------------------------------------------------------------------------

@contextmanager
def deep_pb(system) -> Iterator[None]:
    """Room for ``cnf.pb_bdd``'s recursion, one level per term: the gang target sums every
    member and twin counter bit (1,000 terms on 500 nodes). Python 3.11 calls between Python
    functions use no C stack, so only the interpreter's limit needs raising."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, 4 * len(system.state_vars) + 2_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


# ---- ic3 --------------------------------------------------------------------------------------------

def _ic3(inst: Instance, gs: GangSystem, run: RunContext, out: GangAnswer) -> Result:
    from symreach.certify.bdd_invariant import dump_certificate
    from symreach.certify.gang_bdd import wrap
    from symreach.solvers.ic3 import Ic3Engine

    with deep_pb(gs.system):
        outcome, stats, frame = Ic3Engine().search_system(gs.system, run)
    if outcome is None:
        return Result(Verdict.UNKNOWN, "ic3", stats=stats, reason=run.timeout_reason(f"at frame {frame}"))
    kind, payload = outcome
    if kind == "cex":
        res = _deployable(inst, gs, payload, run, out, "ic3", f"IC3 counterexample, frame {frame}")
    else:
        sym, inv = clauses_bdd(gs.system, payload)
        body = dump_certificate(gs.shadow.instance, gs.query, gs.system, sym, inv)
        res = Result(Verdict.NOT_DEPLOYABLE, "ic3", certificate=wrap(inst, gs.gang.root.name, body),
                     reason=f"an IC3 inductive invariant of {len(payload)} clauses (frame {frame}) of the gang "
                            "system holds in sigma0 and in no state where the group's policy holds")
        stats["invariant_clauses"] = len(payload)
    res.stats.update(stats)
    return res


@dataclass
class ClauseBdd:
    """What ``bdd_invariant.dump_certificate`` reads of a symbolic system: the manager, names."""

    bdd: Any
    names: dict[int, str]


def clauses_bdd(system, clauses) -> tuple[ClauseBdd, Any]:
    """IC3's clauses as one BDD, conjoined with what every reachable state satisfies (each
    counter consistent with its presence bit and within its bound): still inductive, and
    in the form the BDD certificate checker reads."""
    try:
        import dd.cudd as backend
    except ImportError:  # pragma: no cover
        import dd.autoref as backend
    bdd = backend.BDD()
    names = {v: f"x{i}" for i, v in enumerate(system.state_vars)}
    bdd.declare(*names.values())
    inv = bdd.true
    for clause in clauses:
        inv &= _any(bdd, names, clause)   # an empty clause is false
    for pv in system.pairs.values():
        if not pv.counted:
            continue
        bits = [bdd.var(names[b]) for b in pv.count_bits]
        values = bdd.false
        for value in range(1, pv.bound + 1):
            cube = bdd.true
            for j, x in enumerate(bits):
                cube &= x if value >> j & 1 else ~x
            values |= cube
        zero = bdd.true
        for x in bits:
            zero &= ~x
        present = bdd.var(names[pv.present])
        inv &= (present & values) | (~present & zero)
    return ClauseBdd(bdd, names), inv


def _any(bdd, names: dict[int, str], clause) -> Any:
    out = bdd.false
    for v, b in clause:
        x = bdd.var(names[v])
        out |= x if b else ~x
    return out


# ---- bmc --------------------------------------------------------------------------------------------

def fewest_assumed(inst: Instance, gang: gangs.Gang) -> int:
    """A lower bound on the members any gang step must assume, hence on a witness's length:
    the policy needs some leaf met (minCount and minGroupCount are at least 1), and members
    are never deployed in the background, so a leaf has at most its sigma0 members running."""
    running = gang.running(inst, inst.initial_config())
    return min(max(0, gang.need(leaf) - running[leaf.name]) for leaf in gang.leaves)


def _bmc(inst: Instance, gs: GangSystem, run: RunContext, max_depth: Optional[int], out: GangAnswer) -> Result:
    """Unroll single actions (every guard read) until the target is satisfiable at depth k."""
    with deep_pb(gs.system):
        return _unroll(inst, gs, run, max_depth, out)


def _unroll(inst: Instance, gs: GangSystem, run: RunContext, max_depth: Optional[int], out: GangAnswer) -> Result:
    from pysat.solvers import Solver

    from symreach.encodings.cnf import CnfLowering
    from symreach.solvers.bmc import solve_with_deadline

    low = CnfLowering(gs.system)
    solver = Solver(name="glucose4")
    selectors: list[dict[int, int]] = []
    try:
        solver.append_formula([[u] for u in low.initial_units(0)])
        k, first = 0, fewest_assumed(inst, gs.gang)
        while True:
            run.check("gang BMC")
            if k < first and (max_depth is None or k < max_depth):   # no witness this short
                selectors.append(low.single_step(k, k + 1, stutter=False))
                k += 1
                continue
            target = low.lit(gs.system.target, k)
            for clause in low.flush():
                solver.add_clause(clause)
            found = solve_with_deadline(solver, [target], run) if k >= first else False
            if found is None:
                return Result(Verdict.UNKNOWN, "bmc", stats={"depth": k},
                              reason=run.timeout_reason(f"at depth {k}"))
            if found:
                model = set(x for x in solver.get_model() if x > 0)
                actions = [next(i for i, sel in sels.items() if sel in model) for sels in selectors]
                res = _deployable(inst, gs, actions, run, out, "bmc", f"BMC witness of {k} actions")
                res.stats.update(depth=k)
                return res
            if max_depth is not None and k >= max_depth:
                return Result(Verdict.UNKNOWN, "bmc", stats={"depth": k},
                              reason=f"no witness up to depth {k} (depth limit; none is shorter than "
                                     f"{first} members)")
            selectors.append(low.single_step(k, k + 1, stutter=False))
            k += 1
    finally:
        solver.delete()
