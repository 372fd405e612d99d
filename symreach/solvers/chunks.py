"""Pod types grouped into executor tasks by estimated cost (the matrix's task plan).

A pod type costs from a millisecond (its cells pruned or decided by the
fixpoint's order) to the cell timeout (a symbolic engine); a task on a Dask
cluster costs a round trip through the scheduler (milliseconds on an idle
cluster, tenths of a second on a loaded machine). One task per type is then
mostly overhead, and a fixed number of equal-length chunks leaves workers
idle at the end when the expensive types fall into one chunk.

So types are sorted by an estimated cost, most expensive first, and cut by
*guided self-scheduling* (Polychronopoulos and Kuck, 1987): each chunk takes
about ``remaining / (FACTOR * slots)`` of the estimated cost that is left.
Early chunks are large (few round trips), the last ones small (the workers
finish together), and there are about ``FACTOR * slots * ln(types)`` tasks
in all (fewer: no chunk is cut below ``1 / (MIN_SHARE * slots)`` of the total). The estimate only has to order types roughly: the cone's size (the
instance the type's cells run on) times a weight for what makes cells need
more than the static filters (affinity, anti-affinity, spread).
"""

from __future__ import annotations

from typing import Optional, Sequence

from symreach.encodings.preprocess import affinity_cone, attach_sharers
from symreach.model import Instance, Query

FACTOR = 2
MIN_SHARE = 16   # no chunk below 1/(MIN_SHARE * slots) of the total: bounds the tail of tiny tasks


def type_cost(inst: Instance, t: int, sharers: Optional[dict[int, set[int]]] = None) -> float:
    """A rough cost of ``solve_type(inst, t)``: only the order of magnitude matters.
    ``sharers``: ``attach_sharers(inst)`` (computed once for every type: 0.2 ms each on 2,000 nodes)."""
    pod = inst.pod_types[t]
    cone = len(affinity_cone(inst, Query((frozenset({(t, 0)}),)), sharers))
    weight = 1 + 4 * bool(pod.affinity) + 2 * bool(pod.anti_affinity) + 2 * bool(pod.spread)
    return 1.0 + weight * cone


def plan_chunks(costs: Sequence[float], slots: int) -> list[tuple[int, ...]]:
    """Item indices in tasks: most expensive first, each chunk about
    ``remaining / (FACTOR * slots)`` of the cost left, at least one item."""
    order = sorted(range(len(costs)), key=lambda i: (-costs[i], i))
    remaining = float(sum(costs))
    floor = remaining / (MIN_SHARE * max(1, slots))
    chunks: list[tuple[int, ...]] = []
    i = 0
    while i < len(order):
        target = max(floor, remaining / (FACTOR * max(1, slots)))
        chunk, cost = [], 0.0
        while i < len(order) and (not chunk or cost + costs[order[i]] <= target):
            chunk.append(order[i])
            cost += costs[order[i]]
            i += 1
        remaining -= cost
        chunks.append(tuple(chunk))
    return chunks


def matrix_chunks(inst: Instance, slots: int) -> list[tuple[int, ...]]:
    """The pod types of ``inst`` as tasks for an executor with ``slots`` parallel
    workers; one type per task when there is a single slot (no round trip to save)."""
    ntypes = len(inst.pod_types)
    if slots <= 1:
        return [(t,) for t in range(ntypes)]
    sharers = attach_sharers(inst)
    return plan_chunks([type_cost(inst, t, sharers) for t in range(ntypes)], slots)
