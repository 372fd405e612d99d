"""The gang question answered by explicit search (SPEC 5.1; issue 28).

Breadth-first search over the configurations the *background* reaches --
every deletion, and deployments of creatable types that belong to no
gang-policy group and not to the hierarchy asked about, saturated as in
``solvers/explicit.py`` (SPEC 2.2: a gang step is no harder from min(sigma, 1)
on uncounted pairs, since its checks read presence and capacity only there)
-- testing the gang step (``symreach.gangs``) at each configuration, sigma0
first. Pods of other gangs stay as they are: placing another gang in the
background is not modelled. Deployable: the trace to sigma and the gang
step, both replayed. Not deployable: the explored set as a
``symreach-gang-states/1`` certificate (``certify/gang_states.py``).
Beside it, the scheduler's own cycle from sigma0 (``gangs.scheduler_cycle``).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from symreach import gangs, semantics
from symreach.certify import gang_states
from symreach.model import GANG, Config, Instance
from symreach.result import Result, Step, Verdict
from symreach.solvers.explicit import successors, trace_back

ENGINE = "explicit"


@dataclass
class GangAnswer:
    """The gang verdict with its evidence and the scheduler's own cycle."""

    result: Result
    root: str
    min_count: int
    members: int
    placement: gangs.Placement = ()                  # the gang step at the trace's end
    placement_now: Optional[gangs.Placement] = None  # a gang step from sigma0, if any
    cycle: Optional[gangs.Cycle] = None
    notes: list[str] = field(default_factory=list)


def start_answer(inst: Instance, name: str, engine: str) -> tuple[gangs.Gang, GangAnswer]:
    """The hierarchy of group ``name`` and an undecided answer about its root (every engine's start)."""
    gang = gangs.gang_of(inst, name)
    root = gang.root
    out = GangAnswer(Result(Verdict.UNKNOWN, engine), root.name, root.min_count, sum(gang.pending.values()))
    if root.name != name:
        out.notes.append(f"group {name} is scheduled as part of {root.name}; the answer is about {root.name}")
    return gang, out


def answer(inst: Instance, name: str, timeout_s: Optional[float] = None, max_states: Optional[int] = None) -> GangAnswer:
    start = time.monotonic()
    deadline = None if timeout_s is None else start + timeout_s
    gang, out = start_answer(inst, name, ENGINE)
    stats: dict = {"states": 0}
    sigma0 = inst.initial_config()
    refused = gangs.rejection(gang)
    try:
        if refused is None:
            out.cycle = _cycle(inst, gang, sigma0, deadline, out)
        out.result = _search(inst, gang, refused, stats, deadline, max_states, out)
    except gangs.GangLimit:
        out.result = Result(Verdict.UNKNOWN, ENGINE, reason=f"timeout after {timeout_s:g} s", stats=stats)
    out.result.time_s = time.monotonic() - start
    out.result.fragment = "gang"
    return out


def _cycle(inst: Instance, gang: gangs.Gang, sigma0: Config, deadline: Optional[float],
           out: GangAnswer) -> Optional[gangs.Cycle]:
    """The scheduler's cycle within half the time left, so that a cycle too costly to simulate
    (a large hierarchy whose node choices matter) leaves the gang question its answer."""
    budget = None if deadline is None else time.monotonic() + (deadline - time.monotonic()) / 2
    try:
        return gangs.scheduler_cycle(inst, gang, sigma0, budget)
    except gangs.GangLimit:
        out.notes.append("the scheduler's cycle was not simulated within half the time limit")
        return None


def _search(inst: Instance, gang: gangs.Gang, refused: Optional[str], stats: dict, deadline: Optional[float],
            max_states: Optional[int], out: GangAnswer) -> Result:
    sigma0 = inst.initial_config()
    if refused is not None:
        return Result(Verdict.NOT_DEPLOYABLE, ENGINE, reason=f"the scheduler rejects the group: {refused}",
                      stats=stats)
    movable = _background(inst, gang)
    parent: dict[Config, tuple[Optional[Config], Optional[Step]]] = {sigma0: (None, None)}
    frontier: deque[Config] = deque([sigma0])
    while frontier:
        sigma = frontier.popleft()
        stats["states"] += 1
        placement = gangs.gang_step(inst, gang, sigma, deadline, stats)
        if sigma == sigma0:
            out.placement_now = placement
        if placement is not None:
            trace = trace_back(parent, sigma)
            end = semantics.replay(inst, trace)
            gangs.check_step(inst, gang, end, placement)
            out.placement = placement
            reason = ("a gang step places the group now" if not trace else
                      f"a gang step places the group after {len(trace)} other moves")
            return Result(Verdict.DEPLOYABLE, ENGINE, trace=trace, reason=reason, stats=stats)
        if deadline is not None and time.monotonic() > deadline:
            raise gangs.GangLimit()
        for succ, step in successors(inst, sigma, movable):
            if succ not in parent:
                parent[succ] = (sigma, step)
                frontier.append(succ)
                if max_states is not None and len(parent) > max_states:
                    return Result(Verdict.UNKNOWN, ENGINE, reason=f"state limit {max_states} reached", stats=stats)
    cert = None
    if len(parent) <= gang_states.MAX_STATES:
        cert = gang_states.GangStatesCertificate(inst, gang.root.name, list(parent))
    else:
        stats["certificate"] = f"none: {len(parent)} states exceed the gang certificate's limit"
    pending = sum(gang.pending.values())
    return Result(Verdict.NOT_DEPLOYABLE, ENGINE, stats=stats, certificate=cert,
                  reason=f"all {len(parent)} reachable configurations explored; from none can the "
                         f"{pending} pending members meet the group's policy in one gang step")


def _background(inst: Instance, gang: gangs.Gang) -> list[tuple[int, int, int, int]]:
    """(t, n, pair, cap) the background may deploy: not the hierarchy's, not another gang's."""
    reserved = set(gang.leaf_of)
    reserved |= {t for g in inst.groups if g.policy == GANG for t, _ in g.members}
    out = []
    for t, pod in enumerate(inst.pod_types):
        if not pod.creatable or t in reserved:
            continue
        for n in range(len(inst.nodes)):
            if inst.static_block[t][n] is None:
                out.append((t, n, inst.pair(t, n), inst.multiplicity_bound.get((t, n), 1)))
    return out
