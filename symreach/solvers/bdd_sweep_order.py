"""Static facts about a transition system that fix the BDD engine's sweep order.

Split from ``bdd.py``: guard supports by polarity, the earliest sweep depth
of every action, whether the witness graph is cyclic (which picks the
static variable order), and the sweep order itself (``interleaved``). Pure functions of the ``TransitionSystem``; no BDDs.
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
    memo: dict[tuple[int, bool], frozenset[tuple[int, bool]]] = {}
    for a in system.actions:
        if a.op != DEPLOY:
            continue
        me = a.writes[0]
        readers[me] |= {v for v, positive in shared_polar_support(c, a.guard, memo)
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


def shared_polar_support(c, root: int, memo: dict) -> frozenset[tuple[int, bool]]:
    """``polar_support`` with each (node, polarity)'s answer kept in ``memo`` across
    guards: guards share large subcircuits (a spread's minimum over every domain),
    and walking them again for every deploy was quadratic in nodes."""
    stack = [((root, True), False)]
    while stack:
        key, expanded = stack.pop()
        if key in memo:
            continue
        i, pol = key
        node = c.node(i)
        if node.kind == VAR:
            memo[key] = frozenset((key,))
            continue
        if node.kind == PB:
            memo[key] = frozenset()
            continue
        kids = [(node.children[0], not pol)] if node.kind == NOT else [(ch, pol) for ch in node.children]
        if expanded:
            out: set[tuple[int, bool]] = set()
            for k in kids:
                out |= memo[k]
            memo[key] = frozenset(out)
        else:
            stack.append((key, True))
            stack.extend((k, False) for k in kids if k not in memo)
    return memo[(root, True)]


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


def interleaved(system, forward: bool, deploy_order: str = "auto",
                reverse_backward: bool = True) -> list[int]:
    """Deploys in forward (witness) order, each delete placed where it
    helps most; backward runs use the reverse order.

    Deploys are sorted by their *earliest depth* (``bdd_sweep_order.earliest``: an
    AND/OR shortest-path fixpoint over the guards, so witness cycles such
    as the control loop of the Appendix B nets get a meaningful order),
    ties by the compiled witness-level order (target first, so sources
    first here). On acyclic single-witness guards (pebbling) the depth is
    the witness level and the order is the level order as before.

    The delete of a pair goes right before the first deploy that reads
    it *negatively* (an anti-affinity that the delete unblocks) after the
    last deploy that reads it positively (a witness still needed), else
    right after the last deploy that reads it (the moment a pebble stops
    being useful). On pebbling pyramids it needs far fewer sweeps than a
    plain order (``benchmarks/results/design_measurements.md``); on the Appendix B nets one transition firing
    (S, E, P, F, R with the deletes between) fits in one sweep."""
    # the position in the compiled (witness-level) order, not the BDD level:
    # the BDD order may be a different static order (``force_order``)
    pos = {v: k for k, v in enumerate(system.state_vars)}
    lvl = {i: pos[a.writes[0]] for i, a in enumerate(system.actions)}
    depth = earliest(system)
    deps = sorted((i for i, a in enumerate(system.actions) if a.op == DEPLOY),
                  key=lambda i: (depth[i], -lvl[i], i))
    if deploy_order == "postorder" or (deploy_order == "auto" and tree_like(system, deps)):
        deps = postorder(system, deps)
    dels = [i for i, a in enumerate(system.actions) if a.op != DEPLOY]
    last: dict[int, int] = {}
    last_pos: dict[int, int] = {}
    negs: dict[int, list[int]] = {}
    for j, i in enumerate(deps):
        for v, positive in polar_support(system.circuit, system.actions[i].guard):
            last[v] = j
            if positive:
                last_pos[v] = j
            else:
                negs.setdefault(v, []).append(j)
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    first: list[int] = []
    for d in dels:
        v = system.actions[d].writes[0]
        lp = last_pos.get(v, -1)
        fn = next((j for j in negs.get(v, ()) if j > lp), None)
        if fn is not None:
            before.setdefault(fn, []).append(d)
        elif v in last:
            after.setdefault(last[v], []).append(d)
        else:
            first.append(d)
    order = list(first)
    for j, i in enumerate(deps):
        order.extend(before.get(j, ()))
        order.append(i)
        order.extend(after.get(j, ()))
    if not forward and reverse_backward:
        order.reverse()
    return order

def tree_like(system, deps: list[int]) -> bool:
    """At most a third of the deployable pairs are read by two or more deploys."""
    c = system.circuit
    written = {system.actions[i].writes[0] for i in deps}
    readers: dict[int, int] = {}
    for i in deps:
        for v in non_pb_support(c, system.actions[i].guard):
            if v in written and v != system.actions[i].writes[0]:
                readers[v] = readers.get(v, 0) + 1
    shared = sum(1 for n in readers.values() if n >= 2)
    return 3 * shared <= len(written)

def postorder(system, deps: list[int]) -> list[int]:
    """Deploys in DFS post-order of the witness graph from the target: a
    deploy comes after the deploys of the pairs its guard reads
    positively, subtree by subtree (the recursive pebbling strategy:
    binary trees need it, level order needs many sweeps there)."""
    c = system.circuit
    by_var = {system.actions[i].writes[0]: i for i in deps}
    reads = {i: sorted((by_var[v] for v in non_pb_support(c, system.actions[i].guard)
                        if v in by_var and by_var[v] != i), key=deps.index)
             for i in deps}
    roots = sorted((by_var[v] for v in c.support(system.target) if v in by_var), key=deps.index)
    seen: set[int] = set()
    post: list[int] = []
    for r in roots:
        stack = [(r, iter(reads[r]))]
        seen.add(r)
        while stack:
            i, it = stack[-1]
            nxt = next((j for j in it if j not in seen), None)
            if nxt is None:
                stack.pop()
                post.append(i)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(reads[nxt])))
    rest = [i for i in deps if i not in seen]
    return rest + post
