"""Static facts about a transition system that fix the BDD engine's sweep order.

Split from ``bdd.py``: guard supports by polarity, the earliest sweep depth
of every action, whether the witness graph is cyclic (which picks the
static variable order), and the sweep order itself (``interleaved``). Pure functions of the ``TransitionSystem``; no BDDs.
"""

from __future__ import annotations

from symreach.encodings.circuit import AND, CONST, NOT, OR, PB, VAR
from symreach.result import DEPLOY


POLL_EVERY = 1024  # graph vertices or deploys between two looks at the deadline


def poll(run, phase: str) -> None:
    """``TimeoutError`` once ``run`` (a ``RunContext`` or None) is past its
    deadline or cancelled: the order steps are linear but on 20,000 nodes still
    seconds long, and a matrix cell must end at its ``--cell-timeout``."""
    if run is not None and run.past():
        raise TimeoutError(f"deadline reached while {phase}")


def witness_cyclic(system, run=None) -> bool:
    """Whether some deploy reads (positively, outside PB nodes) a pair whose
    deploy reads it back, transitively: a cycle in the witness graph between
    modelled pairs.

    The graph is not built pair to pair: where thousands of deploys read the
    presence of one type on thousands of nodes (a spread's shared minimum) that
    is nodes^2 edges. Instead its vertices are the written pairs and the
    guards' (circuit node, polarity) keys: pair -> its deploys' guards, a node
    -> its children (NOT flips the polarity, PB nodes end), a positive variable
    -> its pair. A path between two pairs there is exactly a chain of positive
    reads, so the witness graph has a cycle iff a strongly connected component
    holds two distinct pairs (one pair alone is only a deploy reading its own
    pair, which does not count). Linear in the circuit; polls ``run``."""
    c = system.circuit
    guards: dict[int, list[int]] = {}
    for a in system.actions:
        if a.op == DEPLOY:
            guards.setdefault(a.writes[0], []).append(a.guard)

    def succ(u: tuple[int, int]) -> list[tuple[int, int]]:
        i, pol = u   # pol: 1 / 0 the polarity of circuit node i; 2: the pair of variable i
        if pol == 2:
            return [(g, 1) for g in guards[i]]
        node = c.node(i)
        if node.kind == VAR:
            return [(i, 2)] if pol and i in guards else []
        if node.kind == NOT:
            return [(node.children[0], 1 - pol)]
        if node.kind == PB:
            return []
        return [(ch, pol) for ch in node.children]

    return any(sum(1 for _, pol in comp if pol == 2) >= 2
               for comp in strong_components([(v, 2) for v in guards], succ, run))


def strong_components(roots, succ, run=None):
    """Tarjan's strongly connected components of the graph below ``roots``
    (iterative; ``succ`` gives a vertex's successors). Yields each component
    as a list; polls ``run``."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    for root in roots:
        if root in index:
            continue
        poll(run, "choosing the BDD variable order")
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(succ(root)))]
        while work:
            u, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    if len(index) % POLL_EVERY == 0:
                        poll(run, "choosing the BDD variable order")
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ(w))))
                elif w in on_stack:
                    low[u] = min(low[u], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[u])
            if low[u] == index[u]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == u:
                        break
                yield comp


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


def earliest(system, run=None) -> list[float]:
    """Per action, a lower bound on the sweep depth at which it can first
    fire, ignoring deletes and negative reads: a least fixpoint of
    ``d(deploy) = 1 + d(guard)`` with ``d`` of a variable the least ``d`` of
    its deploys (0 when initially true), AND -> max, OR -> min, and 0 for a
    negated or PB node. Deletes get 0; unreachable deploys ``inf``. Polls ``run``."""
    c = system.circuit
    INF = float("inf")
    dvar: dict[int, float] = {v: (0.0 if b else INF) for v, b in system.initial.items()}
    deploys = [(i, a) for i, a in enumerate(system.actions) if a.op == DEPLOY]
    topo = {}
    for i, a in deploys:
        poll(run, "ordering the BDD sweep")
        topo[i] = c.topological([a.guard])
    out = [0.0] * len(system.actions)
    for i, _ in deploys:
        out[i] = INF
    changed = True
    while changed:
        changed = False
        memo: dict[int, float] = {}
        for i, a in deploys:
            poll(run, "ordering the BDD sweep")
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
                reverse_backward: bool = True, run=None) -> list[int]:
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
    being useful); every step polls ``run`` (``TimeoutError``). On pebbling pyramids it needs far fewer sweeps than a
    plain order (``benchmarks/results/design_measurements.md``); on the Appendix B nets one transition firing
    (S, E, P, F, R with the deletes between) fits in one sweep."""
    # the position in the compiled (witness-level) order, not the BDD level:
    # the BDD order may be a different static order (``force_order``)
    pos = {v: k for k, v in enumerate(system.state_vars)}
    lvl = {i: pos[a.writes[0]] for i, a in enumerate(system.actions)}
    depth = earliest(system, run)
    deps = sorted((i for i, a in enumerate(system.actions) if a.op == DEPLOY),
                  key=lambda i: (depth[i], -lvl[i], i))
    if deploy_order == "postorder" or (deploy_order == "auto" and tree_like(system, deps, run)):
        deps = postorder(system, deps, run)
    dels = [i for i, a in enumerate(system.actions) if a.op != DEPLOY]
    last: dict[int, int] = {}
    last_pos: dict[int, int] = {}
    negs: dict[int, list[int]] = {}
    for j, i in enumerate(deps):
        poll(run, "ordering the BDD sweep")
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

def tree_like(system, deps: list[int], run=None) -> bool:
    """At most a third of the deployable pairs are read by two or more deploys."""
    c = system.circuit
    written = {system.actions[i].writes[0] for i in deps}
    readers: dict[int, int] = {}
    for i in deps:
        poll(run, "ordering the BDD sweep")
        for v in non_pb_support(c, system.actions[i].guard):
            if v in written and v != system.actions[i].writes[0]:
                readers[v] = readers.get(v, 0) + 1
    shared = sum(1 for n in readers.values() if n >= 2)
    return 3 * shared <= len(written)

def postorder(system, deps: list[int], run=None) -> list[int]:
    """Deploys in DFS post-order of the witness graph from the target: a
    deploy comes after the deploys of the pairs its guard reads
    positively, subtree by subtree (the recursive pebbling strategy:
    binary trees need it, level order needs many sweeps there)."""
    c = system.circuit
    by_var = {system.actions[i].writes[0]: i for i in deps}
    rank = {i: k for k, i in enumerate(deps)}.__getitem__   # deps.index was linear per call
    reads = {}
    for i in deps:
        poll(run, "ordering the BDD sweep")
        reads[i] = sorted((by_var[v] for v in non_pb_support(c, system.actions[i].guard)
                           if v in by_var and by_var[v] != i), key=rank)
    roots = sorted((by_var[v] for v in c.support(system.target) if v in by_var), key=rank)
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
