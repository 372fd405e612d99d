"""The search with nominations (``solvers/nominated_search.py``) against a bounded brute force on random
states (``generators/k8s_nominated_states.small_states``): every sequence of at most ``DEPTH`` moves the
plain semantics allows is tried, and it is a witness with the nominations when ``trace_holds`` (the
front end's bookkeeping of which nominations hold, over every choice of which deployment is the
nominated pod) accepts it. A witness of at most ``DEPTH`` steps exists iff the search finds one of at
most ``DEPTH`` steps (breadth-first: a shortest one); and every answer is bounded by the plain one."""

from __future__ import annotations

import copy

from symreach import semantics
from symreach.frontends.k8s_nominated_filter import in_model, trace_holds
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_nominated_states import small_states
from symreach.model import Query
from symreach.result import DELETE, DEPLOY, Step, Verdict
from symreach.run import RunContext
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.nominated_search import search

DEPTH = 3


def brute_witness(inst, index, query: Query, depth: int):
    """A shortest sequence of at most ``depth`` plain moves ending in the target that holds with the
    nominations, or None."""
    found = []

    def walk(sigma, steps: tuple, left: int) -> None:
        if semantics.query_holds(inst, query, sigma):
            if trace_holds(inst, index, steps):
                found.append(steps)
            return
        if not left:
            return
        for t, pod_type in enumerate(inst.pod_types):
            for n, node in enumerate(inst.nodes):
                if semantics.deploy_failure(inst, t, n, sigma) is None:
                    walk(semantics.deploy(inst, sigma, t, n), steps + (Step(DEPLOY, pod_type.name, node.name),), left - 1)
                if sigma[inst.pair(t, n)]:
                    walk(semantics.delete(inst, sigma, t, n), steps + (Step(DELETE, pod_type.name, node.name),), left - 1)

    for bound in range(depth + 1):
        walk(inst.initial_config(), (), bound)
        if found:
            return found[0]
    return None


def test_search_agrees_with_bounded_brute_force() -> None:
    asked = blocked = 0
    for state in small_states(30, 17):
        inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
        index = report.nominated
        if not index.nominations:
            continue
        noms = in_model(inst, index.nominations)
        priority = {t: index.type_priority.get(p.name) for t, p in enumerate(inst.pod_types)}
        for name in sorted(set(report.pending.values())):
            t = inst.type_index(name)
            for n in range(len(inst.nodes)):
                query = Query((frozenset({(t, n)}),), f"{name} on {inst.nodes[n].name}")
                plain = ExplicitEngine().check(inst, query)
                ours = search(inst, query, noms, priority, RunContext())
                asked += 1
                assert ours.verdict is not Verdict.UNKNOWN, ours.reason
                if plain.verdict is Verdict.NOT_DEPLOYABLE:
                    assert ours.verdict is Verdict.NOT_DEPLOYABLE
                if ours.verdict is Verdict.DEPLOYABLE:
                    assert plain.verdict is Verdict.DEPLOYABLE and trace_holds(inst, index, ours.trace)
                    semantics.replay(inst, ours.trace, query)
                if plain.verdict is Verdict.DEPLOYABLE and not trace_holds(inst, index, plain.trace or ()):
                    blocked += 1
                brute = brute_witness(inst, index, query, DEPTH)
                short = ours.verdict is Verdict.DEPLOYABLE and len(ours.trace) <= DEPTH
                assert (brute is not None) == short, (state.objects, name, n, brute, ours.trace)
                if brute is not None:
                    assert len(ours.trace) == len(brute)
    # the random states test something: targets whose first witness a nomination blocks (here each has
    # another witness; tests/test_nominated_reach.py has one that is not deployable with the nomination)
    assert asked > 100 and blocked > 5, (asked, blocked)
