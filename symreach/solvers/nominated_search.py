"""Reachability with nominated pods in force: breadth-first search over (configuration, live nominations).

A pending pod nominated to a node (``model.Nomination``) is added there by
``RunFilterPluginsWithNominatedPods`` for every pod of lower or equal priority
(``semantics.nominated_run``) until it is scheduled, anywhere. So the state is
the configuration and the set of nominations that still hold, and a deployment
of a nominated pod's type is either a new pod of the type (the type's priority)
or that pending pod (its own priority, its own nomination not added; its
nomination ends). Deletions read no nomination. Nominations only add Filter
runs a deployment must also pass, so every state here is reachable without
them: this search is needed only for a deployable answer whose witness a
nomination blocks, and it is exact: a witness found holds with the
nominations; an exhausted search with every verdict decided is not
deployable with them.

Saturation is the explicit engine's (``explicit.deploy_candidates``): a pair at
its cap is deployed again only when that deployment ends a nomination (the
one thing besides capacity it can change), at most once per nomination on a
path. A Filter verdict the nominations leave undecided (an unknown priority, a
cycle a DynamicResources error may abort: ``semantics.nominated_run``'s
ValueError) is not taken; if the search then finds no witness it answers unknown, and so it does
when a nominated pod's type is not creatable (an older revision's: symreach never deploys it, so
its nomination would never end).
"""

from __future__ import annotations

from collections import deque
from typing import Iterator, Mapping, Optional, Sequence

from symreach import semantics
from symreach.model import Config, Instance, Nomination, Query
from symreach.result import DELETE, DEPLOY, Result, Step, Verdict
from symreach.run import RunContext
from symreach.solvers.explicit import deploy_candidates, trace_back

State = tuple[Config, int]   # configuration, bit i set while nomination i holds
NAME = "explicit/nominations"


class Undecided:
    """Whether some move's Filter verdict was not decided (the search is then not exhaustive)."""

    def __init__(self) -> None:
        self.why: Optional[str] = None


def successors(inst: Instance, state: State, candidates, nominations: Sequence[Nomination],
               priority: Mapping[int, Optional[int]], undecided: Undecided) -> Iterator[tuple[State, Step, Optional[str]]]:
    """(next state, step, the nominated pod the step schedules or None) of every move."""
    sigma, live = state
    active = [nom for i, nom in enumerate(nominations) if live >> i & 1]
    for t, n, p, cap in candidates:
        if semantics.deploy_failure(inst, t, n, sigma) is not None:
            continue   # fails without the nominations: fails with them
        saturated = sigma[p] >= cap and not (inst.bindings and semantics.binding_choices(inst, sigma, t, n))
        choices = [] if saturated else [(None, priority.get(t), live)]
        choices += [(nom.pod, nom.priority, live & ~(1 << i)) for i, nom in enumerate(nominations)
                    if live >> i & 1 and nom.t == t]
        for own, own_priority, after in choices:
            try:
                if semantics.nominated_failure(inst, t, n, sigma, active, own_priority, own) is not None:
                    continue
            except ValueError as exc:
                undecided.why = str(exc)
                continue
            for choice, succ in (semantics.deploys(inst, sigma, t, n) if inst.bindings else
                                 ((None, semantics.deploy(inst, sigma, t, n)),)):
                text = None if choice is None else semantics.choice_text(inst, sigma, t, n, choice)
                yield (succ, after), semantics.step_of(inst, DEPLOY, t, n, binds=text), own
    guarded = inst.moves.restricted
    for p, c in enumerate(sigma[:inst.num_pairs]):
        if c:
            t, n = inst.unpair(p)
            if guarded and semantics.delete_failure(inst, sigma, t, n) is not None:
                continue
            for holding, after in semantics.deletions(inst, sigma, t, n):
                yield (after, live), semantics.step_of(inst, DELETE, t, n, holding=holding), None


def search(inst: Instance, query: Query, nominations: Sequence[Nomination], priority: Mapping[int, Optional[int]],
           run: RunContext) -> Result:
    """The answer with ``nominations`` in force; ``priority``: each pod type's priority (a new pod's).
    A deployable answer's ``stats["nominated_steps"]`` lists, per step scheduling a nominated pod,
    (step index, pod)."""
    start: State = (inst.initial_config(), (1 << len(nominations)) - 1)
    stats: dict = {"states": 1, "transitions": 0, "nominations": len(nominations)}
    if semantics.query_holds(inst, query, start[0]):
        return Result(Verdict.DEPLOYABLE, NAME, trace=(), reason="the target is initially present", stats=stats)
    candidates = deploy_candidates(inst, query, 1)
    parent: dict[State, tuple[Optional[State], Optional[tuple[Step, Optional[str]]]]] = {start: (None, None)}
    frontier: deque[State] = deque([start])
    undecided = Undecided()
    while frontier:
        state = frontier.popleft()
        if run.past():
            return Result(Verdict.UNKNOWN, NAME, reason=run.timeout_reason(), stats=stats)
        for succ, step, own in successors(inst, state, candidates, nominations, priority, undecided):
            stats["transitions"] += 1
            if succ in parent:
                continue
            parent[succ] = (state, (step, own))
            stats["states"] += 1
            if semantics.query_holds(inst, query, succ[0]):
                moves = trace_back(parent, succ)
                stats["nominated_steps"] = [(i, own) for i, (_, own) in enumerate(moves) if own is not None]
                return Result(Verdict.DEPLOYABLE, NAME, trace=tuple(step for step, _ in moves), stats=stats,
                              reason="witness found by breadth-first search with the nominations in force")
            if run.max_states is not None and stats["states"] >= run.max_states:
                return Result(Verdict.UNKNOWN, NAME, reason=f"state limit {run.max_states} reached", stats=stats)
            frontier.append(succ)
    stuck = sorted(nom.pod for nom in nominations if not inst.pod_types[nom.t].creatable)
    if stuck:   # such a pending pod is never deployed here, so its nomination never ends here
        undecided.why = f"pending pod {stuck[0]}'s type is not creatable: its scheduling is not modelled"
    if undecided.why is not None:
        return Result(Verdict.UNKNOWN, NAME, stats=stats,
                      reason=f"no witness among the moves whose verdict with the nominations is decided ({undecided.why})")
    stats["certificate"] = "none: the explicit states certificate checks moves without nominations"
    return Result(Verdict.NOT_DEPLOYABLE, NAME, stats=stats,
                  reason=f"all {stats['states']} reachable states with the nominations in force explored (each "
                         "lasting until its pending pod is scheduled); none covers the target")
