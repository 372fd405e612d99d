"""Independent checker of counter-invariant certificates (interchangeable nodes).

The BDD engine on the counter abstraction (``symreach.encodings.counters``)
proves ``not-deployable`` with the list of its reachable *counter states*:
per group of interchangeable nodes, how many nodes hold each local state (a
set of cone types, saturated). This module re-checks that claim from the
``Instance`` and ``semantics`` alone; it imports nothing from the encodings.

Format ``symreach-counter-invariant/1`` (JSON): ``profile``, ``query``,
``cone`` (type names), ``groups`` (lists of node names, a partition of the
nodes) and ``states``: each a list of ``[group index, [type names], count]``
(local states with count 0 omitted).

Checks:

1. the cone contains the target types, is closed under affinity witnesses
   (per profile, ``semantics.affinity_witness_types``) and has no spread
   constraint, so the cone theorem (``encodings.preprocess`` step 1) and
   saturation (SPEC 2.2) apply: the two premises taken on trust, as for
   every symbolic certificate;
2. every group is a set of interchangeable nodes, re-derived here: equal
   static rows for the cone types and equal capacity, and for every
   topology a cone type's (anti-)affinity term uses, the same domain, or no
   key, or each node alone in its domain. Then swapping two nodes of a
   group is an automorphism of ``Hard`` on the cone (the theorem of
   ``encodings.symmetry``), so one concrete configuration per counter state
   and one node per (group, local state) stand for all of them; the query's
   nodes are groups of one;
3. every state's counts add up to its group's size, and sigma0 on the cone
   (saturated) is one of the states;
4. for every state, with its nodes laid out in group order: no state covers
   the target; deleting any pod, and every deployment of a cone type that
   ``semantics.deploy_failure`` accepts on the representative node of a
   local state, lead to a listed state.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from symreach import semantics
from symreach.certify.names import (
    CertificateError,
    check_profile,
    checked,
    query_json,
    query_of,
    target_holds,
)
from symreach.model import Instance, Query

FORMAT = "symreach-counter-invariant/1"

CounterState = tuple[frozenset[tuple[int, frozenset[int], int]], ...]


def make_certificate(inst: Instance, query: Query, cone: Iterable[int], groups: Sequence[Sequence[str]],
                     states: Iterable[Mapping[int, Mapping[tuple[str, ...], int]]]) -> dict[str, Any]:
    """``states``: per state, group index -> {local state (type names): count}."""
    rows = [[[gi, list(local), count] for gi, counts in sorted(state.items())
             for local, count in sorted(counts.items())] for state in states]
    return {"format": FORMAT, "profile": inst.profile, "query": query_json(inst, query),
            "cone": sorted(inst.pod_types[t].name for t in cone),
            "groups": [list(g) for g in groups], "states": rows}


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    return checked(lambda: _check(inst, cert), lambda count: (
        f"certificate accepted: {count} counter states over interchangeable node groups contain "
        "sigma0, are closed under every deployment and deletion, and none covers the target"))


class _Sparse:
    """A configuration as a map pair index -> count (engines' tuples are too large here)."""

    def __init__(self, counts: dict[int, int]) -> None:
        self.counts = counts

    def __getitem__(self, i: int) -> int:
        return self.counts.get(i, 0)


def _names(inst: Instance, raw: Any, what: str, index) -> list[int]:
    if not isinstance(raw, list):
        raise CertificateError(f"field {what!r} must be a list of names")
    try:
        return [index(str(x)) for x in raw]
    except KeyError as exc:
        raise CertificateError(f"{what}: unknown name {exc}") from None


def _check_cone(inst: Instance, cone: set[int], alts) -> None:
    for alt in alts:
        for t, _ in alt:
            if t not in cone:
                raise CertificateError(f"target type {inst.pod_types[t].name} is not in the cone")
    for t in cone:
        if inst.pod_types[t].spread:
            raise CertificateError(f"cone type {inst.pod_types[t].name} has a spread constraint")
        missing = semantics.affinity_witness_types(inst, t) - cone
        if missing:
            raise CertificateError(f"the cone is not closed: {inst.pod_types[t].name} is witnessed by "
                                   f"{inst.pod_types[min(missing)].name}")


def _check_groups(inst: Instance, cone: set[int], groups: list[list[int]], alts) -> None:
    seen = sorted(n for g in groups for n in g)
    if seen != list(range(len(inst.nodes))):
        raise CertificateError("the groups are not a partition of the nodes")
    topologies = {id(term.topology): term.topology for t in cone
                  for term in inst.pod_types[t].affinity + inst.pod_types[t].anti_affinity}
    query_nodes = {n for alt in alts for _, n in alt}
    for g in groups:
        if not g:
            raise CertificateError("an empty group")
        if len(g) > 1 and query_nodes & set(g):
            raise CertificateError("a node of the target shares its group")
        rep = g[0]
        for m in g[1:]:
            name = f"nodes {inst.nodes[rep].name} and {inst.nodes[m].name}"
            if inst.nodes[m].capacity != inst.nodes[rep].capacity or \
                    any(inst.static_block[u][m] != inst.static_block[u][rep] for u in cone):
                raise CertificateError(f"{name} are not interchangeable (static filters or capacity)")
            for topo in topologies.values():
                a, b = topo.domain_of[rep], topo.domain_of[m]
                alone = a is not None and b is not None and len(topo.members[a]) == len(topo.members[b]) == 1
                if a != b and not alone:
                    raise CertificateError(f"{name} are not interchangeable (topology {topo.key})")


def _states(inst: Instance, cert: dict, cone: set[int], groups: list[list[int]]) -> set[CounterState]:
    raw = cert.get("states")
    if not isinstance(raw, list):
        raise CertificateError("field 'states' must be a list")
    out: set[CounterState] = set()
    for row in raw:
        per: list[set[tuple[int, frozenset[int], int]]] = [set() for _ in groups]
        if not isinstance(row, list):
            raise CertificateError("a state must be a list of [group, [types], count]")
        for item in row:
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], int)
                    and 0 <= item[0] < len(groups) and isinstance(item[2], int) and item[2] > 0):
                raise CertificateError(f"bad counter entry {item!r}")
            local = frozenset(_names(inst, item[1], "states.types", inst.type_index))
            if not local <= cone:
                raise CertificateError("a local state holds a type outside the cone")
            per[item[0]].add((item[0], local, item[2]))
        for gi, entries in enumerate(per):
            if sum(c for _, _, c in entries) != len(groups[gi]) or \
                    len({s for _, s, _ in entries}) != len(entries):
                raise CertificateError(f"a state's counts of group {gi} do not add up to its size")
        out.add(tuple(frozenset(e) for e in per))
    return out


def _layout(inst: Instance, groups: list[list[int]], state: CounterState
            ) -> tuple[_Sparse, dict[tuple[int, frozenset[int]], int]]:
    """The concrete configuration of ``state`` (nodes in group order) and a node per local state."""
    counts: dict[int, int] = {}
    rep: dict[tuple[int, frozenset[int]], int] = {}
    for gi, entries in enumerate(state):
        nodes = iter(groups[gi])
        for _, local, c in sorted(entries, key=lambda e: (sorted(e[1]), e[2])):
            for k in range(c):
                n = next(nodes)
                if k == 0:
                    rep[(gi, local)] = n
                for u in local:
                    counts[inst.pair(u, n)] = 1
    return _Sparse(counts), rep


def _moved(state: CounterState, gi: int, src: frozenset[int], dst: frozenset[int]) -> CounterState:
    counts = {s: c for _, s, c in state[gi]}
    counts[src] -= 1
    counts[dst] = counts.get(dst, 0) + 1
    entry = frozenset((gi, s, c) for s, c in counts.items() if c)
    return state[:gi] + (entry,) + state[gi + 1:]


def _check(inst: Instance, cert: dict) -> int:
    check_profile(inst, cert)
    if cert.get("counts"):
        raise CertificateError("count targets are not supported by counter invariants")
    alts = query_of(inst, cert)
    cone = set(_names(inst, cert.get("cone"), "cone", inst.type_index))
    _check_cone(inst, cone, alts)
    raw_groups = cert.get("groups")
    if not isinstance(raw_groups, list):
        raise CertificateError("field 'groups' must be a list")
    groups = [_names(inst, g, "groups", inst.node_index) for g in raw_groups]
    _check_groups(inst, cone, groups, alts)
    states = _states(inst, cert, cone, groups)
    initial = []
    for gi, g in enumerate(groups):
        per: dict[frozenset[int], int] = {}
        for n in g:
            s = frozenset(u for u in cone if inst.initial.get((u, n), 0) > 0)
            per[s] = per.get(s, 0) + 1
        initial.append(frozenset((gi, s, c) for s, c in per.items()))
    if tuple(initial) not in states:
        raise CertificateError("the initial configuration (on the cone, saturated) is not listed")
    for state in states:
        sigma, reps = _layout(inst, groups, state)
        if target_holds(sigma, inst, alts, []):
            raise CertificateError("a listed state covers the target")
        for (gi, local), n in reps.items():
            for t in sorted(cone):
                if t in local:
                    nxt = _moved(state, gi, local, local - {t})
                    what = "deleting"
                elif semantics.deploy_failure(inst, t, n, sigma) is None:  # type: ignore[arg-type]
                    nxt = _moved(state, gi, local, local | {t})
                    what = "deploying"
                else:
                    continue
                if nxt not in states:
                    raise CertificateError(f"not closed under {what} {inst.pod_types[t].name} "
                                           f"on {inst.nodes[n].name}")
    return len(states)


def lemmas(cert: dict) -> list[str]:
    """The conclusion, then per target node the local states it ever holds (and,
    per other group, how many local states its nodes take): true of every
    reachable configuration, since the listed states are closed."""
    groups = cert["groups"]
    target_nodes = sorted({n for alt in cert["query"] for _, n in alt})
    out = ["never " + " or ".join(" and ".join(f"{p} on {n}" for p, n in alt) for alt in cert["query"])]
    index = {g[0]: gi for gi, g in enumerate(groups) if len(g) == 1}
    for node in target_nodes:
        held = sorted({tuple(local) for row in cert["states"] for gi, local, _ in row if gi == index.get(node)})
        text = "; ".join("{" + ", ".join(h) + "}" if h else "nothing" for h in held)
        out.append(f"{node} only ever holds: {text}")
    pools = sum(1 for g in groups if len(g) > 1)
    out.append(f"over {_plural(len(cert['states']), 'reachable counter state')} of "
               f"{_plural(len(groups), 'group')} of nodes ({_plural(pools, 'pool')} of interchangeable nodes)")
    return out


def _plural(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")
