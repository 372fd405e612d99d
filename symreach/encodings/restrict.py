"""The instance restricted to a set of pod types closed under the affinity cone.

``preprocess`` step 1 proves that a target of types in a cone ``C`` is
coverable from ``sigma0`` iff it is coverable in the system restricted to
``C`` started from ``sigma0`` restricted to ``C``. Building that system as an
``Instance`` of its own lets the per-cell matrix run the usual engines on a
model with ``|C|`` types instead of all of them (configurations shrink from
``types x nodes`` to ``|C| x nodes``). Nodes and topologies are shared; type
sets inside terms and spread constraints are intersected with ``C`` and
renumbered (pods of other types never exist in the restricted system, so
selecting them changes nothing). A trace of the restricted instance is made
a real one by ``realize_trace`` with ``sigma0`` on ``C`` as the abstract
initial configuration.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Collection

from symreach.model import AffinityTerm, FrozenDict, Instance, Pair


# Least recently used last: the full instance of a matrix is read for every pod
# type, between restricted instances that are read once each.
_INDEX: "OrderedDict[int, tuple[Instance, dict[str, dict[int, list[tuple[Pair, int]]]]]]" = OrderedDict()
_INDEX_SIZE = 8


def pairs_by_type(inst: Instance, which: str) -> dict[int, list[tuple[Pair, int]]]:
    """``inst.initial`` or ``inst.multiplicity_bound`` grouped by type, computed once
    per instance object (the per-type matrix tasks read them thousands of times)."""
    hit = _INDEX.get(id(inst))
    if hit is not None and hit[0] is inst:
        _INDEX.move_to_end(id(inst))
    else:
        index: dict[str, dict[int, list[tuple[Pair, int]]]] = {}
        for name in ("initial", "multiplicity_bound"):
            grouped: dict[int, list[tuple[Pair, int]]] = {}
            for p, c in getattr(inst, name).items():
                grouped.setdefault(p[0], []).append((p, c))
            index[name] = grouped
        hit = _INDEX[id(inst)] = (inst, index)
        _INDEX.move_to_end(id(inst))
        while len(_INDEX) > _INDEX_SIZE:
            _INDEX.popitem(last=False)
    return hit[1][which]


def restrict_types(inst: Instance, types: Collection[int]) -> tuple[Instance, tuple[int, ...]]:
    """The restricted instance (no query) and, per new type index, the old one."""
    old = tuple(sorted(types))
    new_of = {u: i for i, u in enumerate(old)}

    def remap(sel: frozenset[int]) -> frozenset[int]:
        return frozenset(new_of[u] for u in sel if u in new_of)

    def terms(ts: tuple[AffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
        return tuple(AffinityTerm(remap(term.selects), term.topology) for term in ts)

    pod_types = []
    for u in old:
        pod = inst.pod_types[u]
        spread = tuple(replace(h, counts=remap(h.counts)) for h in pod.spread)
        pod_types.append(replace(pod, affinity=terms(pod.affinity),
                                 anti_affinity=terms(pod.anti_affinity),
                                 spread=spread))

    def pairs(which: str) -> FrozenDict[Pair, int]:
        grouped = pairs_by_type(inst, which)
        return FrozenDict({(new_of[u], n): c for u in old for (_, n), c in grouped.get(u, ())})

    sub = replace(inst, pod_types=tuple(pod_types),
                  static_block=tuple(inst.static_block[u] for u in old),
                  initial=pairs("initial"), multiplicity_bound=pairs("multiplicity_bound"),
                  query=None)
    return sub, old

