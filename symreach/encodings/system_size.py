"""How much Python memory ``compile_system`` will hold, known before it builds anything.

A BDD's own nodes are bounded by CUDD (``solvers/cudd_memory``); the compiled
system (variables, actions and their moves, guard circuits) lives in Python,
where that bound does not reach: a whole-cone cell of 20,000 nodes grew past
gigabytes there. ``estimate`` counts what ``compile.py`` will build from the
preprocessed instance, item kind by item kind, and prices each at its
measured size (``ITEM_BYTES``; ``benchmarks/system_size.py`` compares the
estimate with what tracemalloc sees). Inside ``ceiling(n)``, ``compile_system``
raises ``MemoryError`` for a system estimated over ``n`` bytes instead of
building it (``refuse``): the matrix's cell is then ``unknown``, like a
cell over CUDD's bound.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

from symreach.model import KUBERNETES, PODS_RESOURCE, Instance, Pair

# Measured bytes per item (CPython 3.11, tracemalloc, the generated clusters of benchmarks/):
ITEM_BYTES = {
    "pair": 700,    # its variable and node, PairVars, the delete action, initial and order entries
    "deploy": 300,  # a deploy action and its guard's AND node
    "cube": 70,     # one counter value as a move writes it (a tuple; a move holds two)
    "literal": 64,  # one (variable, value) in such a cube
    "node": 250,    # a circuit node (AND, OR, PB): the node, its tuples, its hash-consing entry
    "child": 8,     # one child of such a node (a PB child counts twice: its weight)
    "term": 64,     # a (weight, variable) term a memo keeps (the spread counts)
}
SHARED_MIN_DOMAINS = 64   # as compile.SHARED_MIN_DOMAINS (spread through a shared minimum)
_CEILING: list[int] = []


def estimate(inst: Instance, cone: frozenset[int], may: frozenset[Pair], deployable: frozenset[Pair],
             counted: dict[Pair, int]) -> dict[str, int]:
    """How many items of each kind (``ITEM_BYTES``) compiling the cone builds; an upper
    bound where hash-consing may share them (the same PB on one node, say)."""
    bits = {p: counted[p].bit_length() if p in counted else 0 for p in may if p[0] in cone}
    weight: dict[int, int] = {}      # node -> PB terms of everything counted on it
    for (u, n), k in bits.items():
        weight[n] = weight.get(n, 0) + max(1, k)
    items = dict.fromkeys(ITEM_BYTES, 0)
    items["pair"] = len(bits)
    for p, k in bits.items():
        if k:   # a deploy and a delete move per value, each a cube before and after
            items["cube"] += 4 * counted[p]
            items["literal"] += 4 * counted[p] * (k + 1)
    kube = inst.profile == KUBERNETES
    capacity: dict[int, set] = {}    # node -> distinct capacity PBs (hash-consed)
    for t, n in deployable:
        if (t, n) not in bits:
            continue
        items["deploy"] += 1
        need = inst.pod_types[t].requests
        if kube:
            keys = {(r, v) for r, v in need.items() if r != PODS_RESOURCE and v > 0}
            if PODS_RESOURCE in inst.nodes[n].capacity:
                keys.add((PODS_RESOURCE, 1))
        else:
            keys = {(r, need.get(r, 0)) for r in set(inst.nodes[n].capacity) | set(need)}
        capacity.setdefault(n, set()).update(keys)
    for n, keys in capacity.items():
        items["node"] += len(keys)
        items["child"] += 2 * len(keys) * weight.get(n, 0)
    _spread(inst, cone, bits, counted, items)
    _selectors(inst, cone, items)
    return items


def _spread(inst: Instance, cone: frozenset[int], bits: dict[Pair, int], counted: dict[Pair, int],
            items: dict[str, int]) -> None:
    """The spread guards (``_spread_part``, ``_within_min``), once per constraint."""
    seen: set[int] = set()
    for t in cone:
        for h in inst.pod_types[t].spread:
            if id(h) in seen:
                continue
            seen.add(id(h))
            terms: dict[int, int] = {}   # domain -> its count's terms
            most: dict[int, int] = {}    # domain -> the largest value of its count
            for m in h.eligible:
                d = h.topology.domain_of[m]
                if d is None:
                    continue
                terms.setdefault(d, 0)
                most.setdefault(d, 0)
                for u in h.counts:
                    k = bits.get((u, m))
                    if k is not None:
                        terms[d] += max(1, k)
                        most[d] += (1 << k) - 1 if k else 1
            doms, total = len(terms), sum(terms.values())
            if doms >= max(h.min_domains, SHARED_MIN_DOMAINS):
                # min >= k: an AND over the domains' PBs per k; then per domain an AND over
                # k of (the domain's own PB OR min >= k + 1)
                top = min(most.values(), default=0)
                items["term"] += total
                items["node"] += 3 * doms * top
                items["child"] += 4 * doms * top + 4 * top * total
            else:
                items["node"] += doms * doms
                items["child"] += 4 * doms * total


def _selectors(inst: Instance, cone: frozenset[int], items: dict[str, int]) -> None:
    """The OR of the affinity and anti-affinity guards: each term's selected types over
    every domain of its topology, and over every node for ``no matching pod anywhere``."""
    for t in cone:
        pod = inst.pod_types[t]
        for term in pod.affinity + pod.anti_affinity:
            items["node"] += len(term.topology.members) + 1
            items["child"] += 2 * len(term.selects & cone) * len(inst.nodes)


def bytes_of(items: dict[str, int]) -> int:
    return sum(ITEM_BYTES[k] * v for k, v in items.items())


@contextmanager
def ceiling(nbytes: int) -> Iterator[None]:
    """``compile_system`` inside the block refuses a system estimated over ``nbytes``."""
    _CEILING.append(nbytes)
    try:
        yield
    finally:
        _CEILING.pop()


def current_ceiling() -> Optional[int]:
    return min(_CEILING) if _CEILING else None


def refuse(inst: Instance, cone: frozenset[int], may: frozenset[Pair], deployable: frozenset[Pair],
           counted: dict[Pair, int]) -> None:
    """``MemoryError`` when a ``ceiling`` is set and the estimate is over it."""
    cap = current_ceiling()
    if cap is None:
        return
    need = bytes_of(estimate(inst, cone, may, deployable, counted))
    if need > cap:
        raise MemoryError(f"the compiled system would hold about {need // 2**20} MB of Python objects, "
                          f"over the cell's {cap // 2**20} MB")
