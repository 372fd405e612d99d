"""The not-deployable verdict of the BDD engine on a counter system, with its evidence.

The forward reached set of the counter system (``symreach.encodings.counters``)
is listed state by state as a ``symreach.certify.counter_invariant``
certificate and re-checked by that module before it is returned (the checker
evaluates guards with ``semantics`` and shares nothing with the compiler).
When the set has more than ``MAX_LISTED_STATES`` states the verdict carries
no certificate and says so in ``stats["certificate"]``; ``solvers.evidence``
then asks IC3 for one on the concrete encoding, like for any engine without
evidence.
"""

from __future__ import annotations

from typing import Any

from symreach.certify import counter_invariant
from symreach.result import Result, Verdict

MAX_LISTED_STATES = 5_000


def reached_states(system, sym, reached) -> list[dict[int, dict[tuple[str, ...], int]]]:
    """Every state of ``reached`` as ``group -> {local state (type names): count}``."""
    bdd = sym.bdd
    care = {sym.names[v] for v in system.state_vars}
    out = []
    for assignment in bdd.pick_iter(reached, care_vars=care):
        state: dict[int, dict[tuple[str, ...], int]] = {}
        for gi, g in enumerate(system.groups):
            counts: dict[tuple[str, ...], int] = {}
            for k, pv in enumerate(g.counters):
                if pv is None:
                    value = len(g.nodes)
                elif pv.counted:
                    value = sum(1 << j for j, b in enumerate(pv.count_bits) if assignment[sym.names[b]])
                else:
                    value = int(bool(assignment[sym.names[pv.present]]))
                if value:
                    counts[tuple(sorted(system.type_names[u] for u in g.states[k]))] = value
            state[gi] = counts
        out.append(state)
    return out


def counter_verdict(instance, query, system, sym, reached, stats: dict[str, Any], engine: str,
                    fragment: str) -> Result:
    """``not-deployable`` with the checked counter invariant (or no certificate, labelled)."""
    reason = ("the reachable states of the counter abstraction of interchangeable nodes "
              "(exact: a bisimulation) miss the target")
    count = int(sym.bdd.count(reached, nvars=len(system.state_vars)))
    stats["counter_invariant_states"] = count
    if count > MAX_LISTED_STATES:
        stats["certificate"] = (f"none from the counter abstraction: {count} reachable counter states "
                                f"> {MAX_LISTED_STATES} listable")
        return Result(Verdict.NOT_DEPLOYABLE, engine, fragment=fragment, stats=stats, reason=reason)
    groups = [[system.node_names[n] for n in g.nodes] for g in system.groups]
    cert = counter_invariant.make_certificate(instance, query, system.cone, groups,
                                              reached_states(system, sym, reached))
    ok, why = counter_invariant.check_certificate(instance, cert)
    if not ok:
        raise AssertionError(f"counter invariant rejected by its checker: {why}")
    stats["certificate_checked"] = why
    return Result(Verdict.NOT_DEPLOYABLE, engine, fragment=fragment, stats=stats, reason=reason,
                  certificate=cert)
