"""Static facts about a transition system that fix the BDD engine's sweep order.

Split from ``bdd.py``: guard supports by polarity, the earliest sweep depth
of every action, and whether the witness graph is cyclic (which picks the
static variable order). Pure functions of the ``TransitionSystem``; no BDDs.
"""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

from symreach.encodings.circuit import AND, CONST, NOT, OR, PB, VAR
from symreach.result import DEPLOY


def witness_cyclic(system) -> bool:
    """Whether some deploy reads (positively, outside PB nodes) a pair whose
    deploy reads it back, transitively: a cycle in the witness graph between
    modelled pairs (``graphlib`` finds it)."""
    c = system.circuit
    writer = {a.writes[0] for a in system.actions if a.op == DEPLOY}
    readers: dict[int, set[int]] = {v: set() for v in writer}  # deploy -> the pairs its guard reads
    for a in system.actions:
        if a.op != DEPLOY:
            continue
        me = a.writes[0]
        readers[me] |= {v for v, positive in polar_support(c, a.guard)
                        if positive and v in writer and v != me}
    try:
        TopologicalSorter(readers).prepare()
    except CycleError:
        return True
    return False


def polar_support(c, root: int) -> set[tuple[int, bool]]:
    """(variable, polarity) pairs a guard reads outside its PB nodes; True
    when the variable occurs under an even number of negations."""
    out: set[tuple[int, bool]] = set()
    seen: set[tuple[int, bool]] = set()
    stack = [(root, True)]
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        i, pol = key
        node = c.node(i)
        if node.kind == VAR:
            out.add(key)
        elif node.kind == NOT:
            stack.append((node.children[0], not pol))
        elif node.kind != PB:
            stack.extend((ch, pol) for ch in node.children)
    return out


def earliest(system) -> list[float]:
    """Per action, a lower bound on the sweep depth at which it can first
    fire, ignoring deletes and negative reads: a least fixpoint of
    ``d(deploy) = 1 + d(guard)`` with ``d`` of a variable the least ``d`` of
    its deploys (0 when initially true), AND -> max, OR -> min, and 0 for a
    negated or PB node. Deletes get 0; unreachable deploys ``inf``."""
    c = system.circuit
    INF = float("inf")
    dvar: dict[int, float] = {v: (0.0 if b else INF) for v, b in system.initial.items()}
    deploys = [(i, a) for i, a in enumerate(system.actions) if a.op == DEPLOY]
    topo = {i: c.topological([a.guard]) for i, a in deploys}
    out = [0.0] * len(system.actions)
    for i, _ in deploys:
        out[i] = INF
    changed = True
    while changed:
        changed = False
        memo: dict[int, float] = {}
        for i, a in deploys:
            for n in topo[i]:
                if n in memo:
                    continue
                node = c.node(n)
                k = node.kind
                if k == VAR:
                    memo[n] = dvar.get(n, INF)
                elif k == AND:
                    memo[n] = max(memo[ch] for ch in node.children)
                elif k == OR:
                    memo[n] = min(memo[ch] for ch in node.children)
                elif k == CONST:
                    memo[n] = 0.0 if n else INF
                else:  # NOT, PB
                    memo[n] = 0.0
            d = memo[a.guard] + 1
            if d < out[i]:
                out[i] = d
                changed = True
                for v in a.writes[:1]:
                    if d < dvar.get(v, INF):
                        dvar[v] = d
    return out


def non_pb_support(c, root: int) -> set[int]:
    """Variables a guard reads outside its PB (capacity/spread) nodes."""
    return {v for v, _ in polar_support(c, root)}
